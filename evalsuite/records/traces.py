"""Per-request records from trace spans (OpenTelemetry with the OpenInference semantic conventions):
one record per trace, or per span of a chosen name, with its stages, failure and tokens.

The files are parsed by :mod:`evalsuite.io.traces` into :class:`Span` objects; this module builds
the records (docs/records.md, "Records from traces"):

- ``question`` / ``answer``: the root's ``input.value`` / ``output.value`` (the first RETRIEVER's
  input / the last LLM's output when the root has none);
- ``contexts``, ``context_ids`` and the extra ``context_scores``: the documents of the last
  RERANKER (``reranker.output_documents``) when there is one, else of the RETRIEVER spans in
  start order;
- ``latency_ms``: the root's duration; ``latency_<stage>_ms``: per span kind (RETRIEVER ->
  retrieval, RERANKER -> rerank, EMBEDDING -> embedding, LLM -> llm, TOOL -> tool, GUARDRAIL ->
  guardrail), the time during which at least one span of that kind ran (nested or parallel spans
  are not counted twice);
- ``success`` false and ``failed_span_kind`` when the root span is in error (or, for a trace
  without a root, any span): the span where the first error began (of the spans in error with no
  descendant in error, the first to end); :func:`evalsuite.with_attributed_failures` turns the
  kind into the stage (rule "span in error"); ``error``: that span's kind, name and status message
  or exception. An error below a root that ended without one was handled (the request went on):
  ``success`` stays true and ``error`` says "handled";
- ``prompt_tokens``, ``completion_tokens``, ``total_tokens``: summed over LLM spans; ``cost``
  when a price table is given;
- Phoenix evaluations of the root (``eval.<name>.score``) as given scores
  (:func:`evaluation_field`);
- the root's ``metadata`` (OpenInference: a JSON object) keys that name record fields
  (``query_id``, ``reference``, ``relevant_ids`` ...) as those fields.

Broken traces never stop the reader: orphan spans (parent not in the file), parent cycles,
traces without a root span, repeated span ids, spans that end before they start and children
outside their parent's time (clock skew) are counted in the records' warnings and in each
affected record's ``trace_problems``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import EvalSuiteError
from ..metrics.operational import FAILURE_STAGES
from ..metrics.registry import EXPORT_NAMES
from .schema import _alias, field_kind
from .table import Records, records_from_rows

__all__ = ["Span", "records_from_spans", "evaluation_field", "STAGE_OF_KIND", "SPAN_KINDS"]

# OpenInference span kinds (openinference-semantic-conventions, OpenInferenceSpanKindValues).
SPAN_KINDS = ("CHAIN", "RETRIEVER", "RERANKER", "EMBEDDING", "LLM", "TOOL", "AGENT", "GUARDRAIL", "EVALUATOR",
              "PROMPT", "DECISION", "UNKNOWN")
# Span kind -> the latency_<stage>_ms field its spans' time goes to. CHAIN and AGENT wrap the
# other stages (the root usually is one), so they have none.
STAGE_OF_KIND = {"RETRIEVER": "retrieval", "RERANKER": "rerank", "EMBEDDING": "embedding", "LLM": "llm",
                 "TOOL": "tool", "GUARDRAIL": "guardrail"}

# Phoenix evaluation names (snake case) -> the record field of their score: the metric registry's
# Phoenix export names, the same map the Phoenix evals reader uses (records.vendors). Names not
# there are kept under their own snake-case name as given scores.
_EVALUATION_FIELDS = EXPORT_NAMES["phoenix"]


def evaluation_field(name: str) -> str:
    """The record field a Phoenix evaluation's score is kept under.

    >>> evaluation_field("Hallucination"), evaluation_field("Document Relevance"), evaluation_field("QA Correctness")
    ('hallucination', 'context_relevance', 'qa_correctness')
    """
    key = re.sub(r"[^0-9a-z]+", "_", str(name).lower()).strip("_") or "evaluation"
    return _EVALUATION_FIELDS.get(key, key)


@dataclass
class Span:
    """One span as read from a file (ids as lower-case hex, times in ns since the epoch).

    ``kind`` is the OpenInference span kind in upper case ("" when not given); ``status`` is
    "ERROR", "OK" or "UNSET"; ``attributes`` are flat (``retrieval.documents.0.document.id``);
    ``events`` are ``(name, attributes)`` pairs; ``resource`` the resource's attributes;
    ``where`` the line (or row) of the file it came from.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str = "UNSET"
    status_message: str = ""
    attributes: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    resource: dict = field(default_factory=dict)
    where: int | None = None


def _text(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _from_json_value(text, mime, keys: Sequence[str]):
    """``input.value`` / ``output.value``: the text, or from a JSON object (mime type
    application/json) the first of ``keys`` that holds a string."""
    if not isinstance(text, str):
        return _text(text)
    if mime == "application/json" or (text[:1] == "{" and text.rstrip()[-1:] == "}"):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            return text
        if isinstance(document, dict):
            for key in keys:
                if isinstance(document.get(key), str):
                    return document[key]
    return text


def _documents(attributes: dict, prefix: str) -> list[dict]:
    """``<prefix>.<i>.document.{id,content,score}`` as a list in index order."""
    found: dict[int, dict] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        index, _, rest = key[len(start):].partition(".")
        if index.isdigit() and rest.startswith("document."):
            found.setdefault(int(index), {})[rest[len("document."):]] = value
    return [found[i] for i in sorted(found)]


def _union_ms(intervals: list[tuple[int, int]]) -> float:
    """Length of the union of [start, end) intervals (ns), in ms."""
    total, end_so_far = 0, None
    for start, end in sorted(intervals):
        if end_so_far is None or start > end_so_far:
            total += end - start
            end_so_far = end
        elif end > end_so_far:
            total += end - end_so_far
            end_so_far = end
    return total / 1e6


def _error_text(span: Span) -> str:
    for name, attributes in span.events:
        if name == "exception":
            kind, message = attributes.get("exception.type"), attributes.get("exception.message")
            if kind or message:
                return ": ".join(str(p) for p in (kind, message) if p)
    return span.status_message or "status ERROR"


def _metadata(value) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            return None
    value = float(value)
    return value if math.isfinite(value) else None


def _system_of(resource: dict) -> str | None:
    for key in ("openinference.project.name", "service.name"):
        value = resource.get(key)
        if isinstance(value, str) and value.strip() and not value.startswith("unknown_service"):
            return value.strip()
    return None


class _Trace:
    """The spans of one trace with its tree checked; ``problems`` in plain words."""

    def __init__(self, trace_id: str, spans: list[Span]) -> None:
        self.trace_id = trace_id
        self.by_id: dict[str, Span] = {}
        self.problems: list[str] = []
        repeated = 0
        for span in spans:
            if span.span_id in self.by_id:
                repeated += 1
                continue
            self.by_id[span.span_id] = span
        if repeated:
            self.problems.append(f"{repeated} span(s) with a span id given twice (the first kept)")
        self.standin = False
        self.children: dict[str, list[Span]] = {}
        self.roots, self.orphans = [], []
        for span in self.by_id.values():
            if not span.parent_id:
                self.roots.append(span)
            elif span.parent_id not in self.by_id:
                self.orphans.append(span)
            else:
                self.children.setdefault(span.parent_id, []).append(span)
        if self.orphans:
            self.problems.append(f"{len(self.orphans)} orphan span(s) whose parent is not in the file (first: "
                                 f"{self.orphans[0].span_id}, parent {self.orphans[0].parent_id})")
        reachable = set()
        for top in self.roots + self.orphans:
            reachable.update(s.span_id for s in self.subtree(top))
        cyclic = [s for s in self.by_id.values() if s.span_id not in reachable]
        if cyclic:
            self.problems.append(f"{len(cyclic)} span(s) in a parent cycle (first: {cyclic[0].span_id}), left out")
        backwards = [s for s in self.by_id.values() if s.end_ns < s.start_ns]
        if backwards:
            self.problems.append(f"{len(backwards)} span(s) end before they start (first: {backwards[0].span_id}); "
                                 "their durations are left out")
        skewed = 0
        for span in self.by_id.values():
            parent = self.by_id.get(span.parent_id) if span.parent_id else None
            if parent is not None and (span.start_ns < parent.start_ns or span.end_ns > parent.end_ns):
                skewed += 1
        if skewed:
            self.problems.append(f"{skewed} span(s) start before or end after their parent (clock skew between "
                                 "processes, or work left running)")

    def subtree(self, top: Span) -> list[Span]:
        out, seen, stack = [], {top.span_id}, [top]
        while stack:
            span = stack.pop()
            out.append(span)
            for child in self.children.get(span.span_id, ()):
                if child.span_id not in seen:
                    seen.add(child.span_id)
                    stack.append(child)
        return out

    def record_roots(self, root_name: str | None) -> list[Span]:
        if root_name is not None:
            return sorted((s for s in self.by_id.values() if s.name == root_name), key=lambda s: s.start_ns)
        if self.roots:
            return sorted(self.roots, key=lambda s: s.start_ns)
        if self.orphans:
            first = min(self.orphans, key=lambda s: s.start_ns)
            self.problems.append(f"no root span (not exported, or the file is cut): span {first.span_id} "
                                 f"({first.name!r}) stands in for it")
            self.standin = True
            return [first]
        return []


def _first_failure(trace: _Trace, spans: list[Span]) -> Span | None:
    """The span where the request's first error began: of the spans in error none of whose
    descendants is in error (a parent that fails because its child failed is not where it
    began), the first to end (then to start)."""
    in_error = [s for s in spans if s.status == "ERROR"]
    if not in_error:
        return None
    above = set()
    for span in in_error:
        parent, steps = span.parent_id, 0
        while parent and parent in trace.by_id and parent not in above and steps < len(trace.by_id):
            above.add(parent)
            parent, steps = trace.by_id[parent].parent_id, steps + 1
    origins = [s for s in in_error if s.span_id not in above] or in_error
    return min(origins, key=lambda s: (s.end_ns, s.start_ns))


def _duration_ms(span: Span) -> float | None:
    return (span.end_ns - span.start_ns) / 1e6 if span.end_ns >= span.start_ns else None


def _record(trace: _Trace, root: Span, several: bool, prices: Mapping | None) -> tuple[dict, list[str]]:
    spans = trace.subtree(root)
    if trace.standin:
        # No root span: the trace's other orphans belong to this request too.
        for orphan in trace.orphans:
            if orphan is not root:
                spans.extend(trace.subtree(orphan))
    spans.sort(key=lambda s: (s.start_ns, s.end_ns))
    attributes = root.attributes
    row: dict = {}
    meta = _metadata(attributes.get("metadata"))
    row["query_id"] = str(meta["query_id"]) if isinstance(meta.get("query_id"), (str, int)) and not isinstance(
        meta.get("query_id"), bool) else (root.span_id if several else trace.trace_id)
    notes: list[str] = []
    system = _system_of(root.resource)
    if system is not None:
        row["system"] = system
    retrievers = [s for s in spans if s.kind == "RETRIEVER"]
    llms = [s for s in spans if s.kind == "LLM"]
    question = _from_json_value(attributes.get("input.value"), attributes.get("input.mime_type"),
                                ("question", "query", "input", "user_input", "text", "message"))
    if question is None and retrievers:
        question = _text(retrievers[0].attributes.get("input.value"))
    answer = _from_json_value(attributes.get("output.value"), attributes.get("output.mime_type"),
                              ("answer", "output", "response", "text", "content"))
    if answer is None and llms and llms[-1].status != "ERROR":
        answer = _text(llms[-1].attributes.get("output.value"))
    if question is not None:
        row["question"] = question
    if answer is not None:
        row["answer"] = answer
    rerankers = [s for s in spans if s.kind == "RERANKER"]
    if rerankers:
        documents = _documents(rerankers[-1].attributes, "reranker.output_documents")
    else:
        documents = [d for s in retrievers for d in _documents(s.attributes, "retrieval.documents")]
    if documents:
        seen, kept = set(), []
        for document in documents:
            key = document.get("id")
            if key is not None and str(key) in seen:
                continue
            if key is not None:
                seen.add(str(key))
            kept.append(document)
        if len(kept) < len(documents):
            notes.append(f"{len(documents) - len(kept)} document(s) retrieved twice, kept once")
        row["contexts"] = [_text(d.get("content")) or "" for d in kept]
        if all(d.get("id") is not None for d in kept):
            row["context_ids"] = [str(d["id"]) for d in kept]
        scores = [_number(d.get("score")) for d in kept]
        if any(s is not None for s in scores):
            row["context_scores"] = scores
    duration = _duration_ms(root)
    if duration is not None:
        row["latency_ms"] = duration
    intervals: dict[str, list] = {}
    for span in spans:
        stage = STAGE_OF_KIND.get(span.kind)
        if stage and span is not root and span.end_ns >= span.start_ns:
            intervals.setdefault(stage, []).append((span.start_ns, span.end_ns))
    for stage, parts in intervals.items():
        row[f"latency_{stage}_ms"] = _union_ms(parts)
    failed = _first_failure(trace, spans)
    if failed is not None and root.status != "ERROR" and not trace.standin:
        # The request's own span ended without error: the error below it was handled (a fallback, a
        # retry) and the request succeeded, as Phoenix's trace status (its root span's) says.
        row["success"] = True
        row["error"] = f"handled, the request went on: {failed.kind or 'span'} span {failed.name!r} in error: " \
                       f"{_error_text(failed)}"
    else:
        row["success"] = failed is None
        if failed is not None:
            row["failed_span_kind"] = failed.kind or "UNKNOWN"
            row["failed_span_id"] = failed.span_id
            row["error"] = f"{failed.kind or 'span'} span {failed.name!r} in error: {_error_text(failed)}"
    tokens = {"prompt_tokens": "llm.token_count.prompt", "completion_tokens": "llm.token_count.completion",
              "total_tokens": "llm.token_count.total"}
    for column, key in tokens.items():
        values = [_number(s.attributes.get(key)) for s in llms]
        if any(v is not None for v in values):
            row[column] = sum(v for v in values if v is not None)
    if "total_tokens" not in row and "prompt_tokens" in row and "completion_tokens" in row:
        row["total_tokens"] = row["prompt_tokens"] + row["completion_tokens"]
    if prices is not None and llms:
        cost, unpriced = 0.0, set()
        for span in llms:
            model = span.attributes.get("llm.model_name")
            price = prices.get(model) if isinstance(model, str) else None
            if price is None:
                unpriced.add(str(model))
                continue
            prompt = _number(span.attributes.get("llm.token_count.prompt")) or 0.0
            completion = _number(span.attributes.get("llm.token_count.completion")) or 0.0
            cost += (prompt * price[0] + completion * price[1]) / 1e6
        if unpriced:
            notes.append(f"no price for model(s) {', '.join(sorted(unpriced))}: cost left out")
        else:
            row["cost"] = cost
    for key, value in attributes.items():
        if key.startswith("eval.") and key.endswith(".score"):
            name = key[len("eval."):-len(".score")]
            row[evaluation_field(name)] = _number(value)
            label = attributes.get(f"eval.{name}.label")
            if label is not None:
                row[f"{evaluation_field(name)}_label"] = _text(label)
    for key, value in meta.items():
        canonical = key if field_kind(key) else _alias(key)
        if canonical and canonical not in ("query_id", "system") and canonical not in row and value is not None:
            row[canonical] = value
    row["trace_id"] = trace.trace_id
    row["root_span_id"] = root.span_id
    return row, notes


def records_from_spans(spans: Sequence[Span], *, source: str, line_label: str = "line", system: str | None = None,
                       root_name: str | None = None, prices: Mapping[str, Sequence[float]] | None = None,
                       failure_stages: Sequence[str] = FAILURE_STAGES) -> Records:
    """Per-request records from spans (see the module's description).

    Parameters
    ----------
    spans : sequence of Span
        As :mod:`evalsuite.io.traces` reads them, in file order.
    source : str
        File name for messages.
    line_label : str
        "line" or "row" (what ``Span.where`` counts).
    system : str, optional
        System of records whose resource names none (``openinference.project.name`` or
        ``service.name``); default the file name's stem.
    root_name : str, optional
        One record per span of this name (and what runs under it) instead of one per trace.
    prices : mapping of model name -> (price per million prompt tokens, per million completion tokens)
        Gives ``cost`` per request from its LLM spans' ``llm.model_name`` and token counts.
    failure_stages : sequence of str
        As :func:`evalsuite.read_records`.

    Returns
    -------
    Records
        With ``trace_id``, ``root_span_id``, ``context_scores``, ``failed_span_kind``,
        ``failed_span_id``, token and ``trace_problems`` columns where they apply; Phoenix
        evaluations not mapped to a field in ``score_columns``.

    Raises
    ------
    EvalSuiteError
        No span; ``root_name`` matches no span (the message lists the names seen); two records
        of one system with the same query id (from ``metadata``); a price that is not two
        numbers; what :func:`evalsuite.Records.from_rows` raises for a bad field value.

    Examples
    --------
    >>> ms = 1_000_000
    >>> spans = [Span("t1", "a", None, "rag", "CHAIN", 0, 900 * ms, status="ERROR", attributes={"input.value": "Why?"}),
    ...          Span("t1", "b", "a", "search", "RETRIEVER", 10 * ms, 130 * ms, attributes={
    ...              "retrieval.documents.0.document.id": "d7", "retrieval.documents.0.document.content": "So."}),
    ...          Span("t1", "c", "a", "generate", "LLM", 130 * ms, 880 * ms, status="ERROR", status_message="HTTP 500")]
    >>> row = records_from_spans(spans, source="t.jsonl").table.to_pylist()[0]
    >>> row["question"], row["context_ids"], row["latency_retrieval_ms"], row["latency_llm_ms"], row["success"]
    ('Why?', ['d7'], 120.0, 750.0, False)
    >>> row["error"]  # the root failed with it: where the error began
    "LLM span 'generate' in error: HTTP 500"
    >>> spans[0] = Span("t1", "a", None, "rag", "CHAIN", 0, 900 * ms)  # the root ended OK: handled
    >>> row = records_from_spans(spans, source="t.jsonl").table.to_pylist()[0]
    >>> row["success"], row["error"]
    (True, "handled, the request went on: LLM span 'generate' in error: HTTP 500")
    """
    if prices is not None:
        if not isinstance(prices, Mapping):
            raise EvalSuiteError("prices must map a model name to (prompt, completion) prices per million tokens",
                                 field="prices", value=type(prices).__name__)
        for model, price in prices.items():
            if (not isinstance(price, (list, tuple)) or len(price) != 2
                    or any(_number(p) is None or _number(p) < 0 for p in price)):
                raise EvalSuiteError("a price must be two numbers >= 0: per million prompt and completion tokens",
                                     field=f"prices[{model!r}]", value=price)
    if not spans:
        raise EvalSuiteError("no spans found", source=source, field="spans")
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    rows, lines, warnings = [], [], []
    problem_traces = 0
    for trace_id, members in by_trace.items():
        trace = _Trace(trace_id, members)
        roots = trace.record_roots(root_name)
        for root in roots:
            row, notes = _record(trace, root, len(roots) > 1 or root_name is not None, prices)
            problems = trace.problems + notes
            if problems:
                row["trace_problems"] = "; ".join(problems)
            rows.append(row)
            lines.append(root.where)
        if trace.problems:
            problem_traces += 1
            if problem_traces <= 5:
                warnings.append(f"trace {trace_id}: " + "; ".join(trace.problems))
    if root_name is not None and not rows:
        names = sorted({s.name for s in spans})
        shown = ", ".join(repr(n) for n in names[:20]) + (" ..." if len(names) > 20 else "")
        raise EvalSuiteError(f"no span is named {root_name!r}; span names in the file: {shown}", source=source,
                             field="root_name", value=root_name)
    if not rows:
        raise EvalSuiteError("no trace has a span to make a record from", source=source, field="spans")
    if problem_traces > 5:
        warnings.append(f"... and {problem_traces - 5} more traces with problems (see trace_problems)")
    default_system = system or (os.path.splitext(os.path.basename(source))[0] if source else "traces")
    records = records_from_rows(rows, source, lambda r: lines[r] if r is not None and r < len(lines) else None,
                                line_label, default_system, failure_stages)
    records.warnings[:0] = warnings
    given = {evaluation_field(k[len("eval."):-len(".score")]) for s in spans for k in s.attributes
             if k.startswith("eval.") and k.endswith(".score")}
    records.score_columns = [c for c in records.extra_columns if c in given]
    return records
