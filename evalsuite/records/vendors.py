"""Other tools' exports mapped to record fields: RAGChecker rows (ids and texts nested in one
field), DeepEval test runs, TruLens records and feedbacks, Phoenix (Arize) span frames with
their evaluations. Plain column renames (RAGAS, DeepEval test cases) are :data:`~evalsuite.records.schema.ALIASES`;
the metric names of DeepEval's and Phoenix's exports are the registry's
(:data:`evalsuite.metrics.registry.EXPORT_NAMES`).
"""

from __future__ import annotations

import json
import re


from ..errors import EvalSuiteError
from ..metrics.registry import EXPORT_NAMES

__all__ = ["python_list_literal", "deepeval_rows", "deepeval_score_keys"]

# Phoenix evaluator names (phoenix.evals metrics) and DeepEval metric names (``BaseMetric.__name__``)
# -> the field of their score.
_PHOENIX = EXPORT_NAMES["phoenix"]
_DEEPEVAL = EXPORT_NAMES["deepeval"]

_RAGCHECKER_LABELS = ("Entailment", "Neutral", "Contradiction")


def _labels(value, name: str, depth: int) -> list:
    """A RAGChecker label list (depth 1) or list of label lists (depth 2), checked."""
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list")
    for item in value:
        if depth == 2:
            _labels(item, name, 1)
        elif item not in _RAGCHECKER_LABELS:
            raise ValueError(f"{name} holds {item!r}; RAGChecker labels are {', '.join(_RAGCHECKER_LABELS)}")
    if depth == 2 and value and len({len(item) for item in value}) > 1:
        raise ValueError(f"{name} must have one label per retrieved chunk for every claim (rows of equal length)")
    return value


def _ragchecker_row(row: dict) -> dict:
    """Map RAGChecker's retrieved_context and claim-level entailment lists to canonical fields.

    ``X2Y`` in RAGChecker holds the claims of Y checked against X: ``answer2response[i]`` is
    response claim i against the ground-truth answer, ``retrieved2response[i][c]`` response
    claim i against chunk c (RAGChecker ``evaluator.py``). Only "Entailment" counts as True.
    Raises ValueError (with the field) on a shape or label RAGChecker does not produce.
    """
    out = dict(row)
    chunks = row.get("retrieved_context")
    if chunks is not None:
        if not isinstance(chunks, list) or not all(isinstance(c, dict) for c in chunks):
            raise ValueError("retrieved_context must be a list of {doc_id, text} objects")
        out.pop("retrieved_context")
        out.setdefault("contexts", [c.get("text") for c in chunks])
        if any("doc_id" in c for c in chunks):
            ids = [c.get("doc_id") for c in chunks]
            if not all(isinstance(i, str) or (isinstance(i, int) and not isinstance(i, bool)) for i in ids):
                raise ValueError(f"retrieved_context doc_id must be a string or whole number, got {ids!r}")
            out.setdefault("context_ids", [str(i) for i in ids])

    def entailed(label) -> bool:
        return label == "Entailment"

    if "retrieved2response" in row:
        claims = _labels(row["retrieved2response"], "retrieved2response", 2)
        out.setdefault("answer_claims_supported", [any(map(entailed, per_chunk)) for per_chunk in claims])
    if "retrieved2answer" in row:
        claims = _labels(row["retrieved2answer"], "retrieved2answer", 2)
        out.setdefault("reference_claims_supported", [any(map(entailed, per_chunk)) for per_chunk in claims])
        if claims:
            out.setdefault("context_useful", [any(entailed(claim[c]) for claim in claims) for c in range(len(claims[0]))])
    if "answer2response" in row:
        out.setdefault("answer_claims_in_reference", [entailed(x) for x in _labels(row["answer2response"], "answer2response", 1)])
    if "response2answer" in row:
        out.setdefault("reference_claims_in_answer", [entailed(x) for x in _labels(row["response2answer"], "response2answer", 1)])
    return out


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_") or "metric"


def deepeval_rows(document: dict, source: str = "test run") -> list[dict]:
    """The test cases of a DeepEval test run (``TestRun.save``: ``{"testCases": [...]}``, or the
    ``.deepeval/.latest_test_run.json`` wrapper ``{"testRunData": {...}}``) as record rows.

    Each test case gives ``query_id`` (its ``name``), ``question`` (``input``), ``answer``
    (``actualOutput``), ``reference`` (``expectedOutput``), ``contexts`` (``retrievalContext``),
    ``success`` (DeepEval's pass/fail: every non-flaky metric met its threshold) and
    ``latency_ms`` (``completionTime`` seconds x 1000). Each entry of ``metricsData`` gives its
    score under the registry's name for it (``Faithfulness`` -> ``faithfulness`` ...; other
    metrics, e.g. G-Eval's ``Correctness [GEval]``, under their snake-case name, kept but not
    used), its ``reason`` as ``<field>_reason`` and an ``error`` as ``<field>_error`` (the score
    is then missing). DeepEval's ideal ``context`` is kept as ``deepeval_context``.

    Raises
    ------
    EvalSuiteError
        A test case or metric entry that is not an object.

    Examples
    --------
    >>> run = {"testCases": [{"name": "test_case_0", "input": "Why?", "actualOutput": "So.", "success": False,
    ...        "metricsData": [{"name": "Faithfulness", "score": 0.5, "threshold": 0.7, "success": False,
    ...                         "reason": "One of two claims is unsupported."}]}]}
    >>> deepeval_rows(run)
    [{'query_id': 'test_case_0', 'question': 'Why?', 'answer': 'So.', 'success': False, 'faithfulness': 0.5, 'faithfulness_reason': 'One of two claims is unsupported.'}]
    """
    if isinstance(document.get("testRunData"), dict):
        document = document["testRunData"]
    rows = []
    for i, case in enumerate(document.get("testCases") or []):
        if not isinstance(case, dict):
            raise EvalSuiteError("each DeepEval test case must be an object", source=source, line=i + 1,
                                 field="testCases", value=case, line_label="item")
        row = {"query_id": case.get("name") or f"test_case_{case.get('order', i)}"}
        for key, field_name in (("input", "question"), ("actualOutput", "answer"), ("expectedOutput", "reference"),
                                ("retrievalContext", "contexts"), ("success", "success"),
                                ("context", "deepeval_context")):
            if case.get(key) is not None:
                row[field_name] = case[key]
        if isinstance(case.get("completionTime"), (int, float)) and not isinstance(case["completionTime"], bool):
            row["latency_ms"] = float(case["completionTime"]) * 1000
        for metric in case.get("metricsData") or []:
            if not isinstance(metric, dict) or not isinstance(metric.get("name"), str):
                raise EvalSuiteError("each DeepEval metricsData entry must be an object with a name", source=source,
                                     line=i + 1, field="metricsData", value=metric, line_label="item")
            key = _DEEPEVAL.get(metric["name"]) or _snake(metric["name"])
            row[key] = None if metric.get("error") else metric.get("score")
            if metric.get("reason") is not None:
                row[f"{key}_reason"] = metric["reason"]
            if metric.get("error"):
                row[f"{key}_error"] = metric["error"]
        rows.append(row)
    return rows


def deepeval_score_keys(document: dict) -> list[str]:
    """The columns :func:`deepeval_rows` writes for metrics without a field of their own (G-Eval ...)."""
    if isinstance(document.get("testRunData"), dict):
        document = document["testRunData"]
    keys = {}
    for case in document.get("testCases") or []:
        for metric in (case.get("metricsData") or []) if isinstance(case, dict) else []:
            if isinstance(metric, dict) and isinstance(metric.get("name"), str) and metric["name"] not in _DEEPEVAL:
                keys[_snake(metric["name"])] = None
    return list(keys)


def _trulens_feedbacks(columns) -> list[str]:
    """TruLens feedback columns: each has a ``<name>_calls`` column beside it (the RAG triad's are
    mapped to fields; the others are declared scores)."""
    names = list(columns)
    return [c for c in names if f"{c}_calls" in names]


def _literal_mapping(text: str):
    """A Python dict repr of plain values (pandas writes a Phoenix Score dict so), read without
    evaluating anything: keys strings; values strings, numbers, booleans, None, or one level of
    such dicts and lists (``metadata``). None if the text is not one."""
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None

    def plain(node, depth: int) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) in _LITERAL_CONSTANTS
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
        if depth == 0:
            return False
        if isinstance(node, ast.List):
            return all(plain(e, depth - 1) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys) and all(
                plain(v, depth - 1) for v in node.values)
        return False

    if not isinstance(tree.body, ast.Dict) or not plain(tree.body, 2):
        return None
    return ast.literal_eval(tree.body)


def _phoenix_evaluations(columns) -> list[str]:
    """Evaluator names of a frame from phoenix.evals ``evaluate_dataframe``: each writes
    ``<name>_score`` (a Score) next to ``<name>_execution_details``."""
    names = set(columns)
    return [c[:-len("_score")] for c in columns
            if c.endswith("_score") and f"{c[:-len('_score')]}_execution_details" in names]


def _phoenix_row(row: dict, evaluations: list[str]) -> dict:
    """Each ``<name>_score`` Score (a dict, or its JSON or Python repr as to_csv writes it) as its
    ``score`` under the registry's field for the evaluator or ``<name>``, with ``<name>_label`` and
    ``<name>_explanation``; a one-document ``context`` string as ``contexts``."""
    out = dict(row)
    for name in evaluations:
        cell = out.pop(f"{name}_score", None)
        if isinstance(cell, str) and cell.strip():
            text = cell.strip()
            try:
                cell = json.loads(text)
            except ValueError:
                cell = _literal_mapping(text)
            if cell is None:
                raise ValueError(f"{name}_score must hold a Phoenix Score (a dict with a score), got {text[:80]!r}")
        if isinstance(cell, str) or cell is None:
            cell = {}
        if not isinstance(cell, dict):
            raise ValueError(f"{name}_score must hold a Phoenix Score (a dict with a score), got {cell!r}")
        key = _PHOENIX.get(name, name)
        out[key] = cell.get("score")
        for part in ("label", "explanation"):
            if cell.get(part) is not None:
                out[f"{name}_{part}"] = cell[part]
    if isinstance(out.get("context"), str) and "contexts" not in out:
        out["contexts"] = [out.pop("context")]
    return out


def _is_trulens(columns) -> bool:
    names = set(columns)
    return "record_id" in names and bool(names & {"app_name", "app_id"}) and bool(names & {"input", "output"})


def _trulens_row(row: dict) -> dict:
    """A row of TruLens's ``get_records_and_feedback()`` frame: ``system`` from ``app_name`` (with
    ``app_version`` unless it is "base") or ``app_id``, ``latency`` (seconds) as ``latency_ms``."""
    out = dict(row)
    if "system" not in out:
        name, version = out.get("app_name"), out.get("app_version")
        if name not in (None, ""):
            out["system"] = str(name) if version in (None, "", "base") else f"{name} {version}"
        elif out.get("app_id") not in (None, ""):
            out["system"] = str(out["app_id"])
    latency = out.pop("latency", None)
    if latency not in (None, "") and "latency_ms" not in out:
        try:
            out["latency_ms"] = float(latency) * 1000
        except (TypeError, ValueError):
            raise ValueError(f"latency must be a number of seconds, got {latency!r}") from None
    return out


def _is_llmperf(columns) -> bool:
    """LLMPerf's per-request results (``individual_responses``: one object per request)."""
    names = set(columns)
    return {"end_to_end_latency_s", "error_code"} <= names and "query_id" not in names


def _llmperf_row(row: dict, index: int) -> dict:
    """A request of LLMPerf's per-request results: ``query_id`` the request's index in the file (so
    runs of different endpoints pair request by request), ``success`` when ``error_code`` is null,
    ``error`` from ``error_msg``, ``end_to_end_latency_s`` and ``ttft_s`` as ``latency_ms`` and
    ``latency_ttft_ms``. A failed request's zero latencies are no measurement (LLMPerf writes 0
    for a refused request) and are left out; ``GEN_TEXT`` is the answer."""
    out = {key: value for key, value in row.items()
           if key not in ("end_to_end_latency_s", "ttft_s", "error_code", "error_msg", "GEN_TEXT")}
    out["query_id"] = str(index)
    code = row.get("error_code")
    out["success"] = code is None
    if code is not None:
        out["error"] = str(row.get("error_msg") or f"error_code {code} (no message)")
        out["error_code"] = code
    for key, field in (("end_to_end_latency_s", "latency_ms"), ("ttft_s", "latency_ttft_ms")):
        value = row.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key} must be a number of seconds, got {value!r}")
        if code is None or value > 0:
            out[field] = float(value) * 1000
    if row.get("GEN_TEXT") is not None:
        out["answer"] = row["GEN_TEXT"]
    return out


_LITERAL_CONSTANTS = (str, int, float, bool, type(None))


def python_list_literal(text: str):
    """A Python list repr of strings, numbers, booleans and None (as pandas writes list cells to
    CSV: ``['a', 'b']``, ``[True, None]``, ``[0.5, nan]``) read safely, or None if it is not one.

    Only a list display whose items are literals of those types (a leading minus allowed, and
    ``nan`` read as NaN) is accepted; anything else - names, calls, attributes, nested lists,
    dicts, operators - is refused before :func:`ast.literal_eval` sees it. Nothing is ever
    evaluated (no ``eval``).

    Examples
    --------
    >>> python_list_literal("['a', 'it is']")
    ['a', 'it is']
    >>> python_list_literal("[True, False, None, 1, -0.5]")
    [True, False, None, 1, -0.5]
    >>> python_list_literal("[__import__('os')]") is None  # a call: refused, never run
    True
    """
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body
    if not isinstance(body, ast.List):
        return None
    items = []
    for node in body.elts:
        if isinstance(node, ast.Name) and node.id == "nan":
            items.append(float("nan"))
            continue
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = node.operand
            if not (isinstance(operand, ast.Constant) and type(operand.value) in (int, float)):
                return None
        elif not (isinstance(node, ast.Constant) and type(node.value) in _LITERAL_CONSTANTS):
            return None
        items.append(ast.literal_eval(node))
    return items
