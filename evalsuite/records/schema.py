"""The record schema (docs/records.md): the canonical fields and the kind of value each holds,
the column names other tools write for them (:data:`ALIASES`), the per-request scores a file may
carry already computed, and the Arrow type of each kind.
"""

from __future__ import annotations

import re

import pyarrow as pa

from ..metrics.judgement_lists import CRITIQUE_PREFIX, RAGAS_FIELDS

__all__ = ["FIELDS", "ALIASES", "ARROW_TYPES", "GIVEN_METRICS", "GIVEN_ONLY_METRICS", "LOWER_IS_BETTER", "field_kind"]


# Canonical field -> kind of value (docs/records.md).
FIELDS: dict[str, str] = {
    "query_id": "id",
    "system": "id",
    "question": "text",
    "answer": "text",
    "reference": "text",
    "contexts": "texts",
    "context_ids": "texts",
    "relevant_ids": "relevant",
    "context_useful": "labels",
    "context_relevant": "grades",
    "reference_claims_supported": "labels",
    "answer_claims_supported": "labels",
    "answer_claims_in_reference": "labels",
    "reference_claims_in_answer": "labels",
    "answer_similarity": "score",
    "statements_cited_supported": "labels",
    "citations_relevant": "labels",
    "success": "flag",
    "failure_stage": "text",
    "latency_ms": "latency",
    "error": "text",
    "failed_span_kind": "text",
}
# Per-request metric values a file may carry already computed (a RAGAS result exported with
# ``to_pandas()``, say): used as given when the judgement lists they come from are absent.
GIVEN_METRICS = ("context_precision", "context_recall", "context_relevance", "faithfulness", "answer_correctness",
                 "answer_relevancy", "citation_recall", "citation_precision",
                 "context_entity_recall", "context_utilization", "context_relevancy")
# Per-request scores other tools write that EvalSuite does not compute itself, all in 0..1: kept
# under these names and shown as given (docs/records.md lists the column names mapped to each).
# RAGAS >= 0.2 metric names (``Metric.name`` in ragas/metrics/_*.py, 0.2.15 and 0.4.3).
GIVEN_ONLY_METRICS = {
    "answer_similarity": "RAGAS SemanticSimilarity / AnswerSimilarity (also feeds answer_correctness)",
    "factual_correctness": "RAGAS FactualCorrectness (claim F1, precision or recall of the response against the reference)",
    "noise_sensitivity": "RAGAS NoiseSensitivity, mode relevant (share of incorrect claims; lower is better)",
    "noise_sensitivity_irrelevant": "RAGAS NoiseSensitivity, mode irrelevant (lower is better)",
    "non_llm_context_precision_with_reference": "RAGAS NonLLMContextPrecisionWithReference",
    "non_llm_context_recall": "RAGAS NonLLMContextRecall",
    "id_based_context_precision": "RAGAS IDBasedContextPrecision",
    "id_based_context_recall": "RAGAS IDBasedContextRecall",
    "faithfulness_with_hhem": "RAGAS FaithfulnesswithHHEM",
    "nv_context_relevance": "RAGAS ContextRelevance (NVIDIA)",
    "nv_response_groundedness": "RAGAS ResponseGroundedness (NVIDIA)",
    "nv_accuracy": "RAGAS AnswerAccuracy (NVIDIA)",
    "bleu_score": "RAGAS BleuScore (sacrebleu, scaled to 0..1)",
    "rouge_score": "RAGAS RougeScore",
    "chrf_score": "RAGAS ChrfScore",
    "exact_match": "RAGAS ExactMatch",
    "string_present": "RAGAS StringPresence",
    "non_llm_string_similarity": "RAGAS NonLLMStringSimilarity",
    "summary_score": "RAGAS SummarizationScore",
    "hallucination": "DeepEval HallucinationMetric (share of contexts the output contradicts; lower is better)",
}
# Scores where lower is better (the pages say so next to them).
LOWER_IS_BETTER = frozenset({"noise_sensitivity", "noise_sensitivity_irrelevant", "hallucination"})
FIELDS.update(dict.fromkeys(GIVEN_METRICS, "score"))
FIELDS.update(dict.fromkeys((m for m in GIVEN_ONLY_METRICS if m not in FIELDS), "score"))
# Judgement fields of the rest of the RAGAS family (evalsuite/metrics/context.py and answer.py; critique_<name>
# columns too).
FIELDS.update(RAGAS_FIELDS)
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
    # RAGAS score columns whose metric has another name here (RAGAS ``Metric.name``).
    "llm_context_precision_with_reference": "context_precision",
    "semantic_similarity": "answer_similarity",
    "response_relevancy": "answer_relevancy",
    "noise_sensitivity_relevant": "noise_sensitivity",
    "llm_context_precision_without_reference": "context_utilization",
    # TruLens records (get_records_and_feedback): the RAG triad as its quickstart names it.
    "record_id": "query_id",
    "output": "answer",
    "groundedness": "faithfulness",
    "answer relevance": "answer_relevancy",
    "context relevance": "context_relevance",
    # Phoenix (Arize) span frames.
    "context.span_id": "query_id",
}
# RAGAS versions that name a metric with its mode write columns such as
# ``factual_correctness(mode=f1)`` or ``noise_sensitivity(mode=irrelevant)``.
_MODE_SUFFIX = re.compile(r"^([a-z0-9_]+)\(mode=([a-z0-9_]+)\)$")


def _alias(key: str) -> str | None:
    """The canonical field of a column name that is not one itself, or None."""
    found = ALIASES.get(key) or ALIASES.get(key.lower())
    if found:
        return found
    match = _MODE_SUFFIX.match(key.strip().lower())
    if match:
        base, mode = match.groups()
        if base == "noise_sensitivity":
            return "noise_sensitivity_irrelevant" if mode == "irrelevant" else "noise_sensitivity"
        base = ALIASES.get(base, base)
        if base in GIVEN_ONLY_METRICS or base in GIVEN_METRICS:
            return base
    return None

# Fields whose per-request values are metrics computed from judgement lists.
_JUDGEMENT_METRICS = {
    "context_precision": ("context_useful",),
    "context_recall": ("reference_claims_supported",),
    "context_relevance": ("context_relevant",),
    "faithfulness": ("answer_claims_supported",),
    "answer_correctness": ("answer_claims_in_reference", "reference_claims_in_answer"),
    "citation_recall": ("statements_cited_supported",),
    "citation_precision": ("citations_relevant",),
    # The rest of the RAGAS family (evalsuite/metrics/context.py and answer.py).
    "answer_relevancy": ("question_similarities",),
    "context_entity_recall": ("reference_entities_in_contexts", "reference_entities"),
    "context_utilization": ("context_useful_for_answer",),
    "context_relevancy": ("context_sentences_relevant",),
}
# Judgement lists that have one entry per retrieved chunk, so must match ``contexts`` in length.
_PER_CHUNK = ("context_ids", "context_useful", "context_relevant", "context_useful_for_answer")

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
