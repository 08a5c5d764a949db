"""Failure attribution from the judgements: which stage of a RAG pipeline each failed request
failed at, by a fixed, documented rule set (docs/records.md, "Failure stages from the
judgements").

A ``failure_stage`` given in the records always wins. Otherwise the first rule that applies
decides, in this order (:data:`ATTRIBUTION_RULES`):

1. orchestration - the request's ``error`` text names a timeout, rate limit, HTTP 429/5xx,
   connection, tool or exception: the pipeline itself broke, whatever the judgements say.
2. retrieval - no relevant context was retrieved: context recall 0 (no reference claim is
   supported by the retrieved context), no ``relevant_ids`` entry among ``context_ids``, or no
   retrieved chunk judged relevant (``context_relevant``).
3. evidence - relevant context was retrieved but it is insufficient: context recall strictly
   between 0 and 1.
4. generation - the evidence was there (or retrieval was not judged) but the answer has claims
   the retrieved context does not support, or is wrong against the reference (an answer claim
   not in the reference, or a reference claim missing from the answer).
5. other - failed (``success`` false, or an error text) with nothing above explaining it.

A request has failed when it has a given ``failure_stage``, when ``success`` is false, or - when
``success`` is unknown - when it has an ``error`` text or a judgement that shows a problem (rules
2 and 4; a partial context recall alone is no failure when the answer is right). A request with
``success`` true has not failed unless a ``failure_stage`` is given.

The stage taxonomy follows RAGChecker's diagnosis of retriever and generator errors (Ru et al.,
RAGChecker, NeurIPS 2024 D&B): claim recall of the retrieved context for the retriever, and
faithfulness / correctness of the response for the generator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from .errors import EvalSuiteError
from .rag import FAILURE_STAGES, _Lists
from .records import Records

__all__ = ["attribute_failures", "with_attributed_failures", "ATTRIBUTION_RULES", "ORCHESTRATION_ERROR"]

# Rule id -> (stage, what it means), in the order the rules are tried.
ATTRIBUTION_RULES: dict[str, tuple[str | None, str]] = {
    "given": (None, "failure_stage given in the records (always wins)"),
    "error text": ("orchestration", "the error text names a timeout, rate limit, HTTP 429/5xx, connection, tool or "
                                    "exception"),
    "context recall 0": ("retrieval", "no reference claim is supported by the retrieved context"),
    "no relevant id retrieved": ("retrieval", "none of relevant_ids is among context_ids"),
    "no relevant chunk": ("retrieval", "no retrieved chunk is judged relevant (context_relevant)"),
    "partial context recall": ("evidence", "some but not all reference claims are supported by the retrieved context"),
    "unsupported answer claims": ("generation", "answer claims the retrieved context does not support"),
    "wrong answer": ("generation", "answer claims not in the reference, or reference claims missing from the answer"),
    "unexplained": ("other", "failed (success false or an error) and no rule above applies"),
}
# Error texts of the pipeline itself rather than of retrieval or generation quality.
ORCHESTRATION_ERROR = re.compile(
    r"time[ -]?out|timed out|rate[ -]?limit|too many requests|\b429\b|\b50[0-9]\b|connection|unavailable|"
    r"\btool\b|exception|traceback|cancell?ed|max(imum)? retries|quota", re.IGNORECASE)


def _shares(table: pa.Table, name: str, n: int):
    """(share of True, judged count, True count) per row of a judgement list column; NaN/0 if absent."""
    if name not in table.column_names:
        return np.full(n, np.nan), np.zeros(n), np.zeros(n)
    lists = _Lists(table.column(name).combine_chunks())
    return lists.share(), lists.judged, lists.total


def _column(table: pa.Table, name: str, n: int) -> list:
    return table.column(name).to_pylist() if name in table.column_names else [None] * n


def attribute_failures(records: Records, *, rel_level: float = 1) -> pd.DataFrame:
    """The failure stage of every request, given or attributed by the rules of this module.

    Parameters
    ----------
    records : Records
        From :func:`evalsuite.read_records` (any fields; the rules use ``failure_stage``,
        ``success``, ``error``, ``reference_claims_supported``, ``context_ids`` with
        ``relevant_ids``, ``context_relevant``, ``answer_claims_supported``,
        ``answer_claims_in_reference`` and ``reference_claims_in_answer`` where present).
    rel_level : float, keyword-only
        Minimum ``relevant_ids`` grade counted as relevant (default 1).

    Returns
    -------
    pandas.DataFrame
        One row per record, in record order: ``system``, ``query_id``, ``failed`` (bool),
        ``stage`` (a stage of :data:`evalsuite.FAILURE_STAGES`, lower case, or None when not
        failed), ``attributed`` (True when a rule decided the stage, False when it was given
        or the request did not fail), ``rule`` (a key of :data:`ATTRIBUTION_RULES`, or None)
        and ``reason`` (the rule with this request's numbers, e.g. "context recall 0: 0 of 3
        reference claims supported by the retrieved context").

    Raises
    ------
    EvalSuiteError
        ``records`` is not a Records object.

    References
    ----------
    EvalSuite's rule set (this module's docstring, docs/records.md); stages after RAGChecker's
    retriever / generator diagnosis (Ru et al., NeurIPS 2024 D&B).

    Examples
    --------
    >>> records = Records.from_rows([
    ...     {"query_id": "q1", "success": False, "reference_claims_supported": [False, False]},
    ...     {"query_id": "q2", "success": False, "reference_claims_supported": [True, False]},
    ...     {"query_id": "q3", "success": False, "reference_claims_supported": [True],
    ...      "answer_claims_supported": [True, False]},
    ...     {"query_id": "q4", "success": False, "error": "ReadTimeout after 30 s"},
    ...     {"query_id": "q5", "success": False, "failure_stage": "retrieval"},
    ...     {"query_id": "q6", "success": True}], system="rag")
    >>> attribute_failures(records)[["query_id", "stage", "attributed", "rule"]]
      query_id          stage  attributed                       rule
    0       q1      retrieval        True           context recall 0
    1       q2       evidence        True     partial context recall
    2       q3     generation        True  unsupported answer claims
    3       q4  orchestration        True                 error text
    4       q5      retrieval       False                      given
    5       q6           None       False                       None
    """
    if not isinstance(records, Records):
        raise EvalSuiteError("expected Records (from evalsuite.read_records)", field="records", value=type(records).__name__)
    table = records.table
    n = table.num_rows
    recall, recall_judged, recall_true = _shares(table, "reference_claims_supported", n)
    faithful, faith_judged, faith_true = _shares(table, "answer_claims_supported", n)
    in_ref, in_ref_judged, in_ref_true = _shares(table, "answer_claims_in_reference", n)
    covered, covered_judged, covered_true = _shares(table, "reference_claims_in_answer", n)
    relevant_share, relevant_judged, _ = _shares(table, "context_relevant", n)
    given = _column(table, "failure_stage", n)
    success = _column(table, "success", n)
    errors = _column(table, "error", n)
    retrieved = _column(table, "context_ids", n)
    relevant_ids = _column(table, "relevant_ids", n)
    grades = _column(table, "relevant_grades", n)
    rows = []
    for i in range(n):
        reason = rule = stage = None
        error = errors[i] if isinstance(errors[i], str) and errors[i].strip() else None
        hit = None
        if retrieved[i] is not None and relevant_ids[i] is not None:
            wanted = {d for d, g in zip(relevant_ids[i], grades[i] or []) if g is not None and g >= rel_level}
            if wanted:
                hit = sum(d in wanted for d in retrieved[i])
        retrieval_judged = not np.isnan(recall[i]) or hit is not None or relevant_judged[i] > 0
        retrieval_missed = recall[i] == 0 or hit == 0 or (relevant_judged[i] > 0 and relevant_share[i] == 0)
        answer_problem = faithful[i] < 1 or in_ref[i] < 1 or covered[i] < 1  # NaN compares False
        if given[i] is not None:
            failed = True
        elif success[i] is not None:
            failed = not success[i]
        else:
            failed = bool(error) or retrieval_missed or answer_problem
        if given[i] is not None:
            stage, rule, reason = given[i].strip().lower(), "given", f"failure_stage {given[i]!r} given in the records"
        elif not failed:
            pass
        elif error and ORCHESTRATION_ERROR.search(error):
            stage, rule, reason = "orchestration", "error text", f"error text: {error[:200]}"
        elif recall[i] == 0:
            stage, rule = "retrieval", "context recall 0"
            reason = f"context recall 0: 0 of {int(recall_judged[i])} reference claims supported by the retrieved context"
        elif hit == 0:
            stage, rule = "retrieval", "no relevant id retrieved"
            reason = f"none of {len(wanted)} relevant ids among the {len(retrieved[i])} retrieved"
        elif relevant_judged[i] > 0 and relevant_share[i] == 0:
            stage, rule = "retrieval", "no relevant chunk"
            reason = f"none of {int(relevant_judged[i])} judged retrieved chunks is relevant"
        elif 0 < recall[i] < 1:
            stage, rule = "evidence", "partial context recall"
            reason = (f"context recall {recall[i]:.2f}: {int(recall_true[i])} of {int(recall_judged[i])} reference "
                      "claims supported by the retrieved context")
        elif faithful[i] < 1:
            stage, rule = "generation", "unsupported answer claims"
            reason = (f"{int(faith_judged[i] - faith_true[i])} of {int(faith_judged[i])} answer claims not supported "
                      "by the retrieved context" + (" (retrieval not judged)" if not retrieval_judged else ""))
        elif in_ref[i] < 1 or covered[i] < 1:
            stage, rule = "generation", "wrong answer"
            parts = []
            if in_ref[i] < 1:
                parts.append(f"{int(in_ref_judged[i] - in_ref_true[i])} of {int(in_ref_judged[i])} answer claims not in "
                             "the reference")
            if covered[i] < 1:
                parts.append(f"{int(covered_judged[i] - covered_true[i])} of {int(covered_judged[i])} reference claims "
                             "missing from the answer")
            reason = "; ".join(parts)
        else:
            stage, rule = "other", "unexplained"
            reason = (f"failed, error text: {error[:200]}" if error else
                      "failed (success false) and no judgement or error explains it")
        rows.append({"failed": failed, "stage": stage, "attributed": rule not in (None, "given"), "rule": rule,
                     "reason": reason})
    columns = {"system": table.column("system").to_pylist(), "query_id": table.column("query_id").to_pylist()}
    for name in ("failed", "stage", "attributed", "rule", "reason"):
        values = [row[name] for row in rows]
        columns[name] = np.array(values, dtype=bool) if name in ("failed", "attributed") else pd.Series(values, dtype=object)
    return pd.DataFrame(columns)


def with_attributed_failures(records: Records, *, rel_level: float = 1,
                             failure_stages: Sequence[str] = FAILURE_STAGES) -> Records:
    """The records with every failed request's ``failure_stage`` filled in by
    :func:`attribute_failures` (given stages unchanged), and three columns that say how:
    ``failure_attributed`` (bool), ``failure_rule`` and ``failure_reason`` (text; null for
    requests that did not fail).

    Parameters
    ----------
    records : Records
        As for :func:`attribute_failures`.
    rel_level : float, keyword-only
        As for :func:`attribute_failures`.
    failure_stages : sequence of str, keyword-only
        The taxonomy; it must hold the five stages the rules use.

    Returns
    -------
    Records
        A new Records object (the input is unchanged); :func:`evalsuite.evaluate_records` of it
        counts the attributed stages in its failure shares.

    Raises
    ------
    EvalSuiteError
        ``records`` is not a Records object; ``failure_stages`` lacks a stage the rules use.

    Examples
    --------
    >>> records = Records.from_rows([{"query_id": "q1", "success": False, "answer_claims_supported": [False]}])
    >>> filled = with_attributed_failures(records)
    >>> filled.table.column("failure_stage").to_pylist(), filled.table.column("failure_rule").to_pylist()
    (['generation'], ['unsupported answer claims'])
    """
    missing = [s for s in FAILURE_STAGES if s not in {str(x).lower() for x in failure_stages}]
    if missing:
        raise EvalSuiteError(f"the failure taxonomy lacks {', '.join(missing)}, which the attribution rules use",
                             field="failure_stages", value=list(failure_stages))
    frame = attribute_failures(records, rel_level=rel_level)
    table = records.table
    stages = pa.array(frame["stage"].tolist(), pa.string())
    if "failure_stage" in table.column_names:
        given = table.column("failure_stage").combine_chunks()
        stages = pa.array([g if g is not None else s for g, s in zip(given.to_pylist(), stages.to_pylist())], pa.string())
        table = table.set_column(table.column_names.index("failure_stage"), "failure_stage", stages)
    else:
        table = table.append_column("failure_stage", stages)
    extra = list(records.extra_columns)
    for name, values, typ in (("failure_attributed", frame["attributed"].tolist(), pa.bool_()),
                              ("failure_rule", frame["rule"].tolist(), pa.string()),
                              ("failure_reason", frame["reason"].tolist(), pa.string())):
        array = pa.array([None if v is None or (isinstance(v, float) and np.isnan(v)) else v for v in values], typ)
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, array)
        else:
            table = table.append_column(name, array)
            extra.append(name)
    return Records(table, source=records.source, warnings=records.warnings, aliases=records.aliases,
                   extra_columns=extra)
