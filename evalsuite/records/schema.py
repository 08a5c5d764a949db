"""The record schema (docs/records.md): the canonical fields and the kind of value each holds,
the column names other tools write for them (:data:`ALIASES`, and the metric names of their
exports from the registry), and the Arrow type of each kind.

The judgement columns, the per-request scores a file may carry already computed and the metric
names of other tools' exports all come from the metric registry
(:mod:`evalsuite.metrics.registry`); this module adds the fields no metric owns.
"""

from __future__ import annotations

import re

import pyarrow as pa

from ..metrics.judgement_lists import CRITIQUE_PREFIX
from ..metrics.registry import EXPORT_NAMES, GIVEN_NAMES, PER_CHUNK_INPUTS, RECORD_INPUTS

__all__ = ["FIELDS", "FIELD_NOTES", "FIELD_NOTES_AFTER", "ALIASES", "METRIC_ALIASES", "ARROW_TYPES", "field_kind"]


# Canonical field -> kind of value (docs/records.md): the fields no metric owns, then the
# columns the metrics read (the registry's inputs) and the per-request scores a file may give.
FIELDS: dict[str, str] = {
    "query_id": "id",
    "system": "id",
    "question": "text",
    "answer": "text",
    "reference": "text",
    "contexts": "texts",
    "context_ids": "texts",
    "relevant_ids": "relevant",
    "generated_questions": "texts",  # questions a judge generated from the answer (shown with answer relevancy)
    "error": "text",
    "failed_span_kind": "text",
}
FIELDS.update(RECORD_INPUTS)
FIELDS.update(dict.fromkeys((name for name in GIVEN_NAMES if name not in FIELDS), "score"))

#: docs/records.md's table for the fields no metric owns: field -> (type, meaning, what reads it),
#: before the columns the metrics read (whose rows come from the registry) and after them.
FIELD_NOTES = {
    "query_id": ("str", "request / test-case id", "joins runs and records"),
    "system": ("str", "which system produced it (several systems may share one file)", "comparison"),
    "question": ("str", "the user input (RAGAS `user_input` / `question`)", "display"),
    "answer": ("str", "the response (`response` / `answer`)", "display"),
    "reference": ("str", "the reference answer (`reference` / `ground_truth`)", ""),
    "contexts": ("list[str]", "retrieved chunks, rank 1 first (`retrieved_contexts` / `contexts`)", "display"),
    "context_ids": ("list[str]", "ids of those chunks", "the per-request ranking metrics, with `relevant_ids`"),
    "relevant_ids": ("list[str] or {id: grade}", "gold chunk / doc ids", "the per-request ranking metrics"),
}
FIELD_NOTES_AFTER = {
    "generated_questions": ("list[str]", "questions a judge generated from the answer", "display (answer_relevancy)"),
    "latency_<stage>_ms": ("float", "any stage: `retrieval`, `rerank`, `ttft`, `generation`, ...",
                           "latency_summary per stage"),
    "judge_provenance": ("JSON text", "per judged value: judge, model, prompt version, mode, request hash, status",
                         "Per-query"),
    "error": ("str", "what went wrong, if anything", "failure attribution, failure drill-down"),
    "failed_span_kind": ("str", "traces: the OpenInference kind of the span where the first error began",
                         'failure stage (rule "span in error")'),
}
_LATENCY_FIELD = re.compile(r"^latency_([a-z0-9_]+)_ms$")

# Export column names -> canonical field. RAGAS >= 0.2 (user_input, response, retrieved_contexts,
# reference), RAGAS 0.1 (question, answer, contexts, ground_truth), DeepEval LLMTestCase (input,
# actual_output, expected_output, retrieval_context), RAGChecker (query, gt_answer, response,
# retrieved_context: handled separately because it holds both ids and texts).
ALIASES: dict[str, str] = {
    "user_input": "question",
    "response": "answer",
    "retrieved_contexts": "contexts",
    "ground_truth": "reference",
    "input": "question",
    "actual_output": "answer",
    "expected_output": "reference",
    "retrieval_context": "contexts",
    "query": "question",
    "gt_answer": "reference",
    "qid": "query_id",
    "id": "query_id",
    "request_id": "query_id",
    "question_id": "query_id",
    "sample_id": "query_id",
    # TruLens records (get_records_and_feedback).
    "record_id": "query_id",
    "output": "answer",
    # Phoenix (Arize) span frames.
    "context.span_id": "query_id",
}
#: Score columns of RAGAS results and TruLens feedback frames whose metric has another name here
#: (the registry's exports: ``llm_context_precision_with_reference``, ``groundedness`` ...).
METRIC_ALIASES: dict[str, str] = {name.lower(): canonical for tool in ("ragas", "trulens")
                                  for name, canonical in EXPORT_NAMES[tool].items() if name != canonical}
# RAGAS versions that name a metric with its mode write columns such as
# ``factual_correctness(mode=f1)`` or ``noise_sensitivity(mode=irrelevant)``.
_MODE_SUFFIX = re.compile(r"^([a-z0-9_]+)\(mode=([a-z0-9_]+)\)$")


def _alias(key: str) -> str | None:
    """The canonical field of a column name that is not one itself, or None."""
    found = ALIASES.get(key) or ALIASES.get(key.lower()) or METRIC_ALIASES.get(key.strip().lower())
    if found:
        return found
    match = _MODE_SUFFIX.match(key.strip().lower())
    if match:  # a mode the registry does not name: the metric itself
        base = METRIC_ALIASES.get(match.group(1), match.group(1))
        if base in GIVEN_NAMES:
            return base
    return None

# Judgement lists that have one entry per retrieved chunk, so must match ``contexts`` in length.
_PER_CHUNK = ("context_ids", *PER_CHUNK_INPUTS)

ARROW_TYPES = {
    "id": pa.string(),
    "text": pa.string(),
    "texts": pa.list_(pa.string()),
    "labels": pa.list_(pa.bool_()),
    "grades": pa.list_(pa.float64()),
    "unit": pa.float64(),
    "score": pa.float64(),
    "flag": pa.bool_(),
    "latency": pa.float64(),
}


def field_kind(name: str) -> str | None:
    if name in FIELDS:
        return FIELDS[name]
    if _LATENCY_FIELD.match(name):
        return "latency"
    if name.startswith(CRITIQUE_PREFIX) and len(name) > len(CRITIQUE_PREFIX):
        return "labels"
    return None
