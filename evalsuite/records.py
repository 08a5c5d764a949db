"""Per-request records (docs/records.md): reading and validation (evaluation: ``_records_eval``).

A record is one request a system answered. Files are JSONL, JSON (a list of objects, or
RAGChecker's ``{"results": [...]}``), CSV/TSV (list fields as JSON strings) or Parquet. Column
names of RAGAS (old and new), DeepEval and RAGChecker exports are mapped to the canonical ones
(:data:`ALIASES`); unknown columns are kept. Every value is validated on reading, and a problem
raises :class:`EvalSuiteError` naming the file, line (row for Parquet), field and value.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .errors import EvalSuiteError, reading_errors
from ._lines import nonblank_lines
from ._reading import (
    check_input, PathOrBuffer, _load, _shown_name, json_load, jsonl_rows, jsonl_table, open_parquet,
    read_parquet_table, repeated_name, unique_keys,
)
from .errors import not_unicode_error
from .limits import ReadLimits, check_columns, check_limits, check_rows
from .metrics.operational import FAILURE_STAGES
from .metrics.judgement_lists import CRITIQUE_PREFIX, RAGAS_FIELDS

__all__ = ["Records", "read_records", "concat_records", "detect_records_format", "ALIASES", "FIELDS", "deepeval_rows"]

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
# Judgement fields of the rest of the RAGAS family (evalsuite/ragas.py; critique_<name> columns too).
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
# Phoenix evaluator names (phoenix.evals metrics) -> field of their score.
PHOENIX_METRICS = {"faithfulness": "faithfulness", "hallucination": "hallucination"}
# DeepEval metric names (``BaseMetric.__name__``) -> field of their score.
DEEPEVAL_METRICS = {
    "Faithfulness": "faithfulness",
    "Answer Relevancy": "answer_relevancy",
    "Contextual Precision": "context_precision",
    "Contextual Recall": "context_recall",
    "Contextual Relevancy": "context_relevance",
    "Hallucination": "hallucination",
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
    # The rest of the RAGAS family (evalsuite/ragas.py).
    "answer_relevancy": ("question_similarities",),
    "context_entity_recall": ("reference_entities_in_contexts", "reference_entities"),
    "context_utilization": ("context_useful_for_answer",),
    "context_relevancy": ("context_sentences_relevant",),
}
# Judgement lists that have one entry per retrieved chunk, so must match ``contexts`` in length.
_PER_CHUNK = ("context_ids", "context_useful", "context_relevant", "context_useful_for_answer")

_ARROW_TYPES = {
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


def _kind(name: str) -> str | None:
    if name in FIELDS:
        return FIELDS[name]
    if _LATENCY_FIELD.match(name):
        return "latency"
    if name.startswith(CRITIQUE_PREFIX) and len(name) > len(CRITIQUE_PREFIX):
        return "labels"
    return None


class _RowError(Exception):
    """A bad value at ``row`` of the input (converted to EvalSuiteError with the line)."""

    def __init__(self, row: int, field_name: str, value: Any, reason: str) -> None:
        super().__init__(reason)
        self.row, self.field_name, self.value, self.reason = row, field_name, value, reason


# ----------------------------------------------------------------------------------------------
# Per-value validation (the exact path: Python values, one by one).


def _as_label(value, row: int, name: str, graded: bool):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return float(value) if graded else bool(value)
    if graded and isinstance(value, (int, float)):
        if not 0.0 <= float(value) <= 1.0:
            raise _RowError(row, name, value, "a grade must lie in 0..1")
        return float(value)
    kind = "true, false, null or a grade in 0..1" if graded else "true, false or null"
    raise _RowError(row, name, value, f"each judgement must be {kind}")


def _convert_value(value, kind: str, row: int, name: str):
    """One field value, validated and in canonical form (None stays None)."""
    try:
        return _convert_value_unchecked(value, kind, row, name)
    except OverflowError:  # a JSON integer past float range where a number is expected
        raise _RowError(row, name, value, "a number too large to hold as a float (64-bit)") from None


def _convert_value_unchecked(value, kind: str, row: int, name: str):
    if value is None:
        return None
    if kind == "id":
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise _RowError(row, name, value, "must be a string (or a whole number)")
        text = str(value)
        if not text:
            raise _RowError(row, name, value, "must not be empty")
        return text
    if kind == "text":
        if not isinstance(value, str):
            raise _RowError(row, name, value, "must be a string")
        return value
    if kind == "texts":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _RowError(row, name, value, "must be a list of strings")
        return value
    if kind in ("labels", "grades"):
        if not isinstance(value, list):
            raise _RowError(row, name, value, "must be a list of judgements")
        return [_as_label(v, row, name, kind == "grades") for v in value]
    if kind == "unit":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
            raise _RowError(row, name, value, "must be a number in 0..1")
        return float(value)
    if kind == "score":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _RowError(row, name, value, "a given metric value must be a number in 0..1 (or null)")
        if math.isnan(float(value)):
            return None  # undefined for this request (RAGAS writes NaN)
        if not 0.0 <= float(value) <= 1.0:
            raise _RowError(row, name, value, "a given metric value must lie in 0..1")
        return float(value)
    if kind == "flag":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise _RowError(row, name, value, "must be true or false")
    if kind == "latency":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _RowError(row, name, value, "a latency must be a number")
        if not math.isfinite(float(value)) or float(value) < 0:
            raise _RowError(row, name, value, "a latency must be a finite number >= 0")
        return float(value)
    if kind == "relevant":
        if isinstance(value, list):
            if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
                raise _RowError(row, name, value, "must be a list of ids or a mapping id -> grade")
            ids = [str(v) for v in value]
            if len(set(ids)) != len(ids):
                raise _RowError(row, name, value, "lists an id twice")
            return dict.fromkeys(ids, 1.0)
        if isinstance(value, dict):
            out = {}
            for key, grade in value.items():
                if grade is None:
                    continue  # not judged (also what Arrow fills in for keys another row has)
                if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not math.isfinite(grade):
                    raise _RowError(row, name, value, f"the grade of {key!r} must be a finite number")
                out[str(key)] = float(grade)
            return out
        raise _RowError(row, name, value, "must be a list of ids or a mapping id -> grade")
    raise AssertionError(kind)


def _column_from_values(values: list, kind: str, name: str) -> pa.Array:
    converted = [_convert_value(v, kind, i, name) for i, v in enumerate(values)]
    if kind == "relevant":
        ids = pa.array([None if v is None else list(v) for v in converted], pa.list_(pa.string()))
        return ids, pa.array([None if v is None else list(v.values()) for v in converted], pa.list_(pa.float64()))
    return pa.array(converted, _ARROW_TYPES[kind])


# ----------------------------------------------------------------------------------------------
# Column-wise validation (the fast path: Arrow columns of the expected types, checked at once).


def _first_row(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _fast_column(column: pa.ChunkedArray | pa.Array, kind: str, name: str):
    """Validate an Arrow column of the expected type at once; None if the type needs the slow path."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    typ = column.type
    if pa.types.is_null(typ):
        return pa.nulls(len(column), _ARROW_TYPES.get(kind, pa.string())) if kind != "relevant" else None
    if kind in ("id", "text"):
        if pa.types.is_large_string(typ):
            column = column.cast(pa.string())
        elif kind == "id" and pa.types.is_integer(typ):
            column = column.cast(pa.string())
        elif not pa.types.is_string(typ):
            return None
        if kind == "id" and len(column):
            empty = pc.equal(pc.binary_length(column), 0).fill_null(False).to_numpy(zero_copy_only=False)
            if empty.any():
                raise _RowError(_first_row(empty), name, "", "must not be empty")
        return column
    if kind == "texts":
        if pa.types.is_list(typ) and (pa.types.is_string(typ.value_type) or pa.types.is_large_string(typ.value_type)):
            return column.cast(pa.list_(pa.string()))
        return None
    if kind in ("labels", "grades"):
        if not pa.types.is_list(typ):
            return None
        value_type = typ.value_type
        flat = pc.list_flatten(column)
        if pa.types.is_boolean(value_type):
            return column.cast(_ARROW_TYPES[kind])
        if pa.types.is_integer(value_type) or (kind == "grades" and pa.types.is_floating(value_type)):
            if len(flat):
                lo, hi = pc.min(flat).as_py(), pc.max(flat).as_py()
                if lo is not None and (lo < 0 or hi > 1 or (kind == "labels" and pc.any(pc.not_equal(pc.floor(flat.cast(pa.float64())), flat.cast(pa.float64()))).as_py())):
                    return None  # the slow path names the offending value
            return column.cast(pa.list_(pa.bool_() if kind == "labels" else pa.float64()))
        if pa.types.is_null(value_type):
            return column.cast(_ARROW_TYPES[kind])
        return None
    if kind in ("unit", "latency", "score"):
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)) or pa.types.is_boolean(typ):
            return None
        values = column.cast(pa.float64())
        if kind == "score":  # NaN means undefined for that request: store it as null
            values = pc.if_else(pc.is_nan(values), pa.scalar(None, pa.float64()), values)
        data = values.fill_null(0.0).to_numpy(zero_copy_only=False)
        bad = ~np.isfinite(data) | (data < 0) if kind == "latency" else ~((data >= 0) & (data <= 1))
        if bad.any():
            return None
        return values
    if kind == "flag":
        if pa.types.is_boolean(typ):
            return column
        return None
    return None


# ----------------------------------------------------------------------------------------------
# The Records object.


class Records:
    """Per-request records of one or more systems, validated, in canonical fields.

    Attributes
    ----------
    table : pyarrow.Table
        One row per request: ``query_id``, ``system`` and every canonical field present, with
        Arrow types (lists as list arrays); ``relevant_ids`` is held as two list columns,
        ``relevant_ids`` and ``relevant_grades``; unknown columns kept as read.
    source : str or None
        File name(s) the records came from.
    warnings : list of str
        What the reader noticed (mapped or ignored columns ...).
    aliases : dict of str -> str
        Column names of the file that were mapped to canonical fields.
    extra_columns : list of str
        Columns that are not record fields, kept as read.
    score_columns : list of str
        Those of ``extra_columns`` that the tool that wrote the file declares as per-request
        scores (a DeepEval G-Eval metric, a TruLens feedback of the user's own): shown as given
        values when they are numbers in 0..1.

    Build one with :func:`read_records`, :meth:`from_rows` or :meth:`from_dataframe`; they
    validate every value and raise :class:`EvalSuiteError` naming the row, field and value.

    Examples
    --------
    >>> records = Records.from_rows([
    ...     {"query_id": "q1", "system": "rag", "contexts": ["c1", "c2"], "context_useful": [True, False]},
    ...     {"query_id": "q1", "system": "bm25", "latency_ms": 80}])
    >>> records  # 2 requests of 2 systems; fields with a value in any row
    Records(rows=2, systems=['rag', 'bm25'],
            fields=['query_id', 'system', 'contexts', 'context_useful', 'latency_ms'])
    >>> len(records.for_system("bm25"))
    1
    >>> ragas = Records.from_rows([{"user_input": "Why?", "response": "So.", "qid": "q7"}], system="ragas")
    >>> ragas.aliases  # RAGAS >= 0.2 column names mapped to the canonical fields
    {'user_input': 'question', 'response': 'answer', 'qid': 'query_id'}
    >>> Records.from_rows([{"query_id": "q1", "contexts": ["c1", "c2"], "context_useful": [True]}])
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: records, row 1, field 'context_useful', value [True]: has 1 entries but
    contexts has 2; one per retrieved chunk is needed
    """

    def __init__(self, table: pa.Table, *, source: str | None = None, warnings=(), aliases=None,
                 extra_columns=(), line_of=None, score_columns=()) -> None:
        self.table = table
        self.source = source
        self.warnings = list(warnings)
        self.aliases = dict(aliases or {})
        self.extra_columns = list(extra_columns)
        self.score_columns = [c for c in score_columns if c in self.extra_columns]
        self._line_of = line_of or (lambda row: None)
        self._frame: pd.DataFrame | None = None

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return f"Records(rows={len(self)}, systems={self.systems}, fields={self.fields})"

    @property
    def systems(self) -> list[str]:
        """Distinct systems, in order of first appearance."""
        return pd.unique(self.table.column("system").to_numpy(zero_copy_only=False)).tolist()

    @property
    def fields(self) -> list[str]:
        """Canonical fields with at least one non-null value (``relevant_grades`` not listed)."""
        out = []
        for name in self.table.column_names:
            if name in self.extra_columns or name == "relevant_grades":
                continue
            if self.table.column(name).null_count < self.table.num_rows:
                out.append(name)
        return out

    @property
    def frame(self) -> pd.DataFrame:
        """The records as a pandas DataFrame (list fields as Python lists); built once, on demand."""
        if self._frame is None:
            self._frame = self.table.to_pandas()
        return self._frame

    def for_system(self, system: str) -> "Records":
        """The records of one system."""
        mask = pc.equal(self.table.column("system"), system)
        return Records(self.table.filter(mask), source=self.source, warnings=self.warnings, aliases=self.aliases,
                       extra_columns=self.extra_columns, score_columns=self.score_columns)

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], *, source: str = "records", system: str | None = None,
                  failure_stages: Sequence[str] = FAILURE_STAGES) -> "Records":
        """Build records from dicts (field names canonical or aliased), validating every value."""
        try:
            return _records_from_rows(list(rows), source, lambda row: row + 1, "item", system, failure_stages)
        except UnicodeEncodeError as exc:
            raise not_unicode_error(exc, source) from None

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, *, source: str = "data frame", system: str | None = None,
                       failure_stages: Sequence[str] = FAILURE_STAGES) -> "Records":
        """Build records from a DataFrame (one row per request), validating every value."""
        rows = frame.to_dict("records")
        for row in rows:
            for key, value in row.items():
                if isinstance(value, np.ndarray):
                    row[key] = value.tolist()
                elif isinstance(value, float) and math.isnan(value):
                    row[key] = None
        return _records_from_rows(rows, source, lambda row: row + 1, "row", system, failure_stages)


def _require_record_fields(mapping: dict, columns: Sequence[str], source: str) -> None:
    """A records file must name at least one record field; a TREC run or qrels file does not."""
    if mapping:
        return
    shown = ", ".join(map(str, list(columns)[:8]))
    looks_trec = 4 <= len(columns) <= 6 and any(str(c).strip().upper() == "Q0" or str(c).strip() == "0" for c in columns)
    hint = " - this looks like a TREC run or qrels file: load it as a run or as qrels" if looks_trec else ""
    raise EvalSuiteError(
        "no column is a per-request record field (query_id, system, question, answer, contexts, "
        f"answer_claims_supported, success, failure_stage, latency_ms ...; RAGAS, DeepEval and RAGChecker names too); "
        f"columns found: {shown}{hint}", source=source, line=1, field="header", value=shown)


def _map_columns(columns: Sequence[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """Original column -> canonical field, the unknown (kept) columns, and warnings."""
    mapping: dict[str, str] = {}
    warnings: list[str] = []
    taken: dict[str, str] = {}
    for col in columns:
        key = str(col).strip()
        canonical = key if _kind(key) else _alias(key)
        if canonical is None:
            continue
        if canonical in taken:
            warnings.append(f"columns {taken[canonical]!r} and {col!r} both map to {canonical!r}; {taken[canonical]!r} is used")
            continue
        taken[canonical] = col
        mapping[col] = canonical
    extra = [c for c in columns if c not in mapping]
    return mapping, extra, warnings


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
    score under :data:`DEEPEVAL_METRICS` (``Faithfulness`` -> ``faithfulness`` ...; other
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
            key = DEEPEVAL_METRICS.get(metric["name"]) or _snake(metric["name"])
            row[key] = None if metric.get("error") else metric.get("score")
            if metric.get("reason") is not None:
                row[f"{key}_reason"] = metric["reason"]
            if metric.get("error"):
                row[f"{key}_error"] = metric["error"]
        rows.append(row)
    return rows


def _deepeval_score_keys(document: dict) -> list[str]:
    """The columns :func:`deepeval_rows` writes for metrics without a field of their own (G-Eval ...)."""
    if isinstance(document.get("testRunData"), dict):
        document = document["testRunData"]
    keys = {}
    for case in document.get("testCases") or []:
        for metric in (case.get("metricsData") or []) if isinstance(case, dict) else []:
            if isinstance(metric, dict) and isinstance(metric.get("name"), str) and metric["name"] not in DEEPEVAL_METRICS:
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
    ``score`` under the field of :data:`PHOENIX_METRICS` or ``<name>``, with ``<name>_label`` and
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
        key = PHOENIX_METRICS.get(name, name)
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


def _records_from_rows(rows: list, source: str, line_of, label: str, system: str | None,
                       failure_stages: Sequence[str]) -> Records:
    """The exact path: validate Python dicts value by value, then build the Arrow table."""
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise EvalSuiteError("each record must be an object with named fields", source=source, line=line_of(i),
                                 field=label, value=row, line_label="line" if label == "line" else "row")
    feedbacks: list[str] = []
    evaluations = _phoenix_evaluations(list(dict.fromkeys(key for row in rows[:1000] for key in row)))
    if evaluations:
        converted = []
        for i, row in enumerate(rows):
            try:
                converted.append(_phoenix_row(row, evaluations))
            except ValueError as exc:
                raise EvalSuiteError(str(exc), source=source, line=line_of(i), field=str(exc).split(" ", 1)[0],
                                     line_label="line" if label == "line" else "row") from None
        rows = converted
        feedbacks = [e for e in evaluations if e not in PHOENIX_METRICS]
    if rows and _is_trulens({key for row in rows[:1000] for key in row}):
        feedbacks = _trulens_feedbacks(dict.fromkeys(key for row in rows[:1000] for key in row))
        converted = []
        for i, row in enumerate(rows):
            try:
                converted.append(_trulens_row(row))
            except ValueError as exc:
                raise EvalSuiteError(str(exc), source=source, line=line_of(i), field="latency", value=row.get("latency"),
                                     line_label="line" if label == "line" else "row") from None
        rows = converted
    mapped = []
    for i, row in enumerate(rows):
        if not any(key in row for key in ("retrieved_context", "retrieved2response", "retrieved2answer")):
            mapped.append(row)
            continue
        try:
            mapped.append(_ragchecker_row(row))
        except ValueError as exc:
            raise EvalSuiteError(f"not a RAGChecker record RAGChecker writes: {exc}", source=source, line=line_of(i),
                                 field=str(exc).split(" ", 1)[0], line_label="line" if label == "line" else "row") from None
    rows = mapped
    columns: list[str] = []
    seen = set()
    for row in rows:
        for key in row:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    mapping, extra, warnings = _map_columns(columns)
    _require_record_fields(mapping, columns, source)
    inverse = {canonical: original for original, canonical in mapping.items()}
    arrays: dict[str, pa.Array] = {}
    try:
        for canonical, original in inverse.items():
            values = [row.get(original) for row in rows]
            if canonical == "relevant_ids":
                arrays["relevant_ids"], arrays["relevant_grades"] = _column_from_values(values, "relevant", original)
            else:
                arrays[canonical] = _column_from_values(values, _kind(canonical), original)
    except _RowError as err:
        raise EvalSuiteError(err.reason, source=source, line=line_of(err.row), field=err.field_name, value=err.value,
                             line_label="line" if label == "line" else "row") from None
    for col in extra:
        try:
            arrays[col] = pa.array([row.get(col) for row in rows])
        except (pa.ArrowException, OverflowError):  # mixed types, or integers wider than 64 bits
            arrays[col] = pa.array([None if row.get(col) is None else json.dumps(row.get(col)) for row in rows], pa.string())
    records = _finish_records(arrays, len(rows), source, line_of, warnings, mapping, extra, system, failure_stages,
                              "line" if label == "line" else "row")
    if feedbacks:
        records.score_columns = [c for c in feedbacks if c in records.extra_columns]
    return records


def _finish_records(arrays: dict, n_rows: int, source: str, line_of, warnings: list, mapping: dict, extra: list,
                    system: str | None, failure_stages: Sequence[str], line_label: str = "line") -> Records:
    """Cross-field checks shared by both paths; fills in query_id and system when absent."""
    def fail(reason: str, row: int | None, field_name: str, value=None, has_value=None):
        raise EvalSuiteError(reason, source=source, line=None if row is None else line_of(row), field=field_name,
                             value=value, has_value=has_value, line_label=line_label)

    if n_rows == 0:
        fail("no records found", None, "records")
    if "query_id" not in arrays or arrays["query_id"].null_count == n_rows:
        arrays["query_id"] = pa.array([str(i + 1) for i in range(n_rows)], pa.string())
        warnings.append(f"no query_id field: requests numbered 1..{n_rows} in file order (pairing across files needs ids)")
    elif arrays["query_id"].null_count:
        row = _first_row(arrays["query_id"].is_null().to_numpy(zero_copy_only=False))
        fail("missing query_id", row, "query_id", None, has_value=False)
    default_system = system or (os.path.splitext(os.path.basename(source))[0] if source else "system")
    if "system" not in arrays:
        arrays["system"] = pa.array([default_system] * n_rows, pa.string())
    elif arrays["system"].null_count:
        arrays["system"] = pc.fill_null(arrays["system"], default_system)
        warnings.append(f"records without a system are assigned to {default_system!r}")
    # Per-chunk lists must have one entry per retrieved chunk.
    if "contexts" in arrays:
        n_ctx = pc.list_value_length(arrays["contexts"]).to_numpy(zero_copy_only=False)
        for name in _PER_CHUNK:
            if name not in arrays:
                continue
            n_items = pc.list_value_length(arrays[name]).to_numpy(zero_copy_only=False)
            both = ~np.isnan(n_ctx.astype(float)) & ~np.isnan(n_items.astype(float))
            clash = both & (np.nan_to_num(n_ctx.astype(float)) != np.nan_to_num(n_items.astype(float)))
            if clash.any():
                row = _first_row(clash)
                fail(f"has {int(n_items[row])} entries but contexts has {int(n_ctx[row])}; one per retrieved chunk is needed",
                     row, mapping_name(mapping, name), arrays[name][row].as_py())
    for name in ("context_ids", "relevant_ids"):
        if name in arrays:
            row = _row_with_repeated_item(arrays[name])
            if row is not None:
                fail("lists the same id twice; each id may appear once per request", row, mapping_name(mapping, name),
                     arrays[name][row].as_py())
    if "failure_stage" in arrays:
        allowed = {s.lower() for s in failure_stages}
        stages = arrays["failure_stage"]
        lowered = pc.utf8_lower(stages)
        known = pc.is_in(pc.utf8_trim_whitespace(lowered), value_set=pa.array(sorted(allowed))).to_numpy(zero_copy_only=False)
        bad = stages.is_valid().to_numpy(zero_copy_only=False) & ~known
        if bad.any():
            row = _first_row(bad)
            fail(f"unknown failure stage; allowed: {', '.join(failure_stages)} (or null when the request did not fail)",
                 row, mapping_name(mapping, "failure_stage"), stages[row].as_py())
    # One record per (system, query_id).
    keys = pd.DataFrame({"s": arrays["system"].to_pandas(), "q": arrays["query_id"].to_pandas()})
    dup = keys.duplicated(keep=False).to_numpy()
    if dup.any():
        # Confirmed on the Python strings (pandas' hashing and numpy string arrays can confuse
        # ids that differ only in trailing NULs): the first key seen twice, and its two rows.
        systems, queries = keys["s"].tolist(), keys["q"].tolist()
        seen: dict = {}
        for r in map(int, np.flatnonzero(dup)):
            key = (systems[r], queries[r])
            if key in seen:
                first, second = seen[key], r
                fail(f"query_id {queries[first]!r} appears twice for system {systems[first]!r} "
                     f"({line_label}s {line_of(first)} and {line_of(second)}); each request needs its own id", second,
                     "query_id", queries[first])
            seen[key] = r
    ordered = ["query_id", "system"] + [f for f in arrays if f not in ("query_id", "system")]
    table = pa.table({name: arrays[name] for name in ordered})
    return Records(table, source=source, warnings=warnings, aliases={k: v for k, v in mapping.items() if k != v},
                   extra_columns=extra, line_of=line_of)


def _row_with_repeated_item(lists: pa.Array) -> int | None:
    """First row whose list holds the same string twice (hash keys, confirmed on the strings)."""
    from .utils.keys import group_keys, string_keys

    flat = pc.list_flatten(lists)
    if len(flat) < 2:
        return None
    parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    # Rows are grouped already, so the stable sort of (row, id) keys is nearly linear.
    packed = group_keys(parent, string_keys(flat), len(lists))
    ordered = np.sort(packed, kind="stable")
    clash = ordered[1:][ordered[1:] == ordered[:-1]]
    if clash.size == 0:
        return None
    for row in np.unique(parent[np.isin(packed, clash)]).tolist():
        items = lists[row].as_py()
        if len(set(items)) != len(items):
            return row
    return None


def mapping_name(mapping: dict, canonical: str) -> str:
    """The file's own name of a canonical field (for messages)."""
    for original, name in mapping.items():
        if name == canonical:
            return original
    return canonical


# ----------------------------------------------------------------------------------------------
# Reading files.


def _records_from_table(table: pa.Table, source: str, line_of, line_label: str, system: str | None,
                        failure_stages: Sequence[str]) -> Records:
    """The fast path for typed tables (JSONL via pyarrow, Parquet); falls back per column."""
    mapping, extra, warnings = _map_columns(table.column_names)
    _require_record_fields(mapping, table.column_names, source)
    if any(c in table.column_names for c in ("retrieved_context", "retrieved2response")) or _is_trulens(table.column_names) \
            or _phoenix_evaluations(table.column_names):
        return None  # RAGChecker nesting, TruLens's app and latency columns: the row path maps them
    arrays: dict[str, pa.Array] = {}
    for original, canonical in mapping.items():
        column = table.column(original)
        kind = _kind(canonical)
        try:
            if kind == "relevant":
                converted = None
                col = column.combine_chunks()
                if pa.types.is_list(col.type) and (pa.types.is_string(col.type.value_type) or pa.types.is_integer(col.type.value_type)):
                    converted = col.cast(pa.list_(pa.string()))
                    grades = pa.ListArray.from_arrays(
                        converted.offsets, pa.array(np.ones(len(pc.list_flatten(converted))), pa.float64()), mask=converted.is_null())
                    arrays["relevant_ids"], arrays["relevant_grades"] = converted, grades
                    continue
            else:
                converted = _fast_column(column, kind, original)
            if converted is None:
                values = column.to_pylist()
                if kind == "relevant":
                    arrays["relevant_ids"], arrays["relevant_grades"] = _column_from_values(values, kind, original)
                    continue
                converted = _column_from_values(values, kind, original)
        except _RowError as err:
            raise EvalSuiteError(err.reason, source=source, line=line_of(err.row), field=err.field_name,
                                 value=err.value, line_label=line_label) from None
        arrays[canonical] = converted
    for col in extra:
        arrays[col] = table.column(col).combine_chunks()
    return _finish_records(arrays, table.num_rows, source, line_of, warnings, mapping, extra, system, failure_stages,
                           line_label)


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


def _parse_json_cell(text, row: int, name: str):
    if text is None:
        return None
    stripped = text.strip()
    if stripped == "":
        return None
    try:
        return json.loads(stripped, object_pairs_hook=unique_keys)
    except RecursionError:
        raise _RowError(row, name, text[:80], "JSON nested too deeply to read") from None
    except ValueError:
        # pandas' to_csv (RAGAS's documented export) writes list cells as Python reprs.
        value = python_list_literal(stripped) if stripped.startswith("[") else None
        if value is not None:
            return value
        raise _RowError(row, name, text, "a list field in CSV must hold a JSON list (e.g. [\"a\", \"b\"] or [true, false]) "
                        "or a Python list of strings, numbers, True/False/None (as pandas writes it)") from None


def _csv_value(text, kind: str, row: int, name: str):
    """A CSV cell (text) to the Python value its field expects."""
    if text is None or text == "":
        return None
    if kind in ("texts", "labels", "grades", "relevant"):
        return _parse_json_cell(text, row, name)
    if kind in ("unit", "latency", "score"):
        try:
            return float(text.strip())
        except ValueError:
            raise _RowError(row, name, text, "must be a number") from None
    if kind == "id":
        return text.strip()  # as the header cells are trimmed: " q1" names query q1
    if kind == "flag":
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise _RowError(row, name, text, "must be true or false")
    return text


def _read_delimited(inp, delimiter: str, system, failure_stages, limits: ReadLimits) -> Records:
    text = inp.data.decode("utf-8") if isinstance(inp.data, bytes) else inp.data
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header:
        raise EvalSuiteError("the file is empty", source=inp.name)
    header = [h.strip() for h in header]
    check_columns(len(header), limits, inp.name, line=1)
    index_column = header[0] in ("", "Unnamed: 0") and len(header) > 1
    if index_column:  # pandas' to_csv writes the index first, under an empty name
        header[0] = "\x00pandas index"
    repeated = repeated_name(header)
    if repeated is not None:
        raise EvalSuiteError(f"the header names column {repeated!r} more than once", source=inp.name, line=1,
                             field="header", value=delimiter.join(header))
    mapping, _, _ = _map_columns(header)
    _require_record_fields(mapping, header, inp.name)
    rows, lines = [], []
    for cells in reader:
        if not cells or all(not c.strip() for c in cells):
            continue
        line = reader.line_num
        if len(cells) != len(header):
            raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(cells)}", source=inp.name,
                                 line=line, field="columns", value=delimiter.join(cells))
        row = {}
        for name, cell in zip(header, cells):
            if index_column and name == header[0]:
                continue
            canonical = mapping.get(name)
            kind = _kind(canonical) if canonical else None
            try:
                row[name] = _csv_value(cell, kind, len(rows), name) if kind else (cell if cell != "" else None)
            except _RowError as err:
                raise EvalSuiteError(err.reason, source=inp.name, line=line, field=err.field_name, value=err.value) from None
        rows.append(row)
        lines.append(line)
    records = _records_from_rows(rows, inp.name, lambda r: lines[r] if r < len(lines) else None, "line", system,
                                 failure_stages)
    if index_column:
        records.warnings.append("the first column has no name (a pandas index, as to_csv writes it): ignored")
    return records


def _read_jsonl(inp, system, failure_stages, limits: ReadLimits) -> Records:
    data = inp.data
    lines_of_rows = nonblank_lines(data)
    table = jsonl_table(data, limits, inp.name)
    # Ids that came out as floats (integers past 2**63) lost digits: the exact path reads them.
    id_columns = [c for c, canonical in _map_columns(table.column_names)[0].items() if _kind(canonical) == "id"] \
        if table is not None else []
    if table is not None and not any(pa.types.is_floating(table.schema.field(c).type) for c in id_columns):
        records = _records_from_table(table, inp.name, lines_of_rows, "line", system, failure_stages)
        if records is not None:
            return records
    rows, lines = jsonl_rows(data, limits, inp.name)
    return _records_from_rows(rows, inp.name, lambda r: lines[r] if r < len(lines) else None, "line", system, failure_stages)


def _read_json(inp, system, failure_stages, limits: ReadLimits) -> Records:
    document = json_load(inp.data.decode("utf-8"), inp.name)
    scores: list[str] = []
    if isinstance(document, dict) and isinstance(document.get("results"), list):
        document = document["results"]  # RAGChecker's input/output files
    elif isinstance(document, dict) and isinstance(document.get("test_cases"), list):
        document = document["test_cases"]  # DeepEval test-case exports
    elif isinstance(document, dict) and (isinstance(document.get("testCases"), list)
                                         or isinstance(document.get("testRunData"), dict)):
        scores = _deepeval_score_keys(document)
        document = deepeval_rows(document, inp.name)  # a DeepEval test run (TestRun.save)
    elif isinstance(document, dict):
        document = _pandas_json_rows(document, inp.name)
    if not isinstance(document, list):
        raise EvalSuiteError("expected a JSON list of records (or RAGChecker's {\"results\": [...]})", source=inp.name,
                             field="json", value=type(document).__name__)
    check_rows(len(document), limits, inp.name, "records")
    keys: set = set()
    for row in document:
        if isinstance(row, dict):
            keys.update(row)
    check_columns(len(keys), limits, inp.name)
    records = _records_from_rows(document, inp.name, lambda r: None if r is None else r + 1, "item", system,
                                 failure_stages)
    if scores:
        records.score_columns = [c for c in scores if c in records.extra_columns]
    return records


def _pandas_json_rows(document: dict, source: str):
    """The rows of a DataFrame written by pandas ``to_json`` (RAGAS's ``to_pandas()``) with
    orient "columns" (pandas' default: ``{column: {index: value}}``) or "split"
    (``{"columns": [...], "index": [...], "data": [[...]]}``); other dicts are returned as they
    are (and refused by the caller)."""
    if isinstance(document.get("columns"), list) and isinstance(document.get("data"), list):
        columns = document["columns"]
        rows = []
        for i, values in enumerate(document["data"]):
            if not isinstance(values, list) or len(values) != len(columns):
                raise EvalSuiteError(f"row {i + 1} of a pandas 'split' JSON must be a list of {len(columns)} values",
                                     source=source, field="data", value=values)
            rows.append(dict(zip(map(str, columns), values)))
        return rows
    if document and all(isinstance(v, dict) for v in document.values()):
        index = list(dict.fromkeys(k for inner in document.values() for k in inner))
        return [{column: inner.get(i) for column, inner in document.items()} for i in index]
    return document


def _read_parquet(inp, system, failure_stages, limits: ReadLimits) -> Records:
    table = read_parquet_table(open_parquet(inp.data, limits, inp.name), inp.name)
    index = [c for c in table.column_names if c.startswith("__index_level_")]
    if index:  # a pandas index pyarrow stored as a column (to_parquet of a non-default index)
        table = table.drop_columns(index)
    records = _records_from_table(table, inp.name, lambda r: r + 1, "row", system, failure_stages)
    if records is None:
        records = _records_from_rows(table.to_pylist(), inp.name, lambda r: r + 1, "row", system, failure_stages)
    return records


_RECORD_FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")


def detect_records_format(data: bytes, name: str = "") -> str:
    """The format :func:`read_records` uses for a records file when none is given.

    Parameters
    ----------
    data : bytes
        The start of the file's (decompressed) content; 64 KiB is plenty.
    name : str
        The file name without a ``.gz`` suffix; its extension decides first.

    Returns
    -------
    str
        One of "jsonl", "json", "csv", "tsv", "parquet": by extension (``.jsonl``/``.ndjson``,
        ``.json``, ``.csv``, ``.tsv``, ``.parquet``/``.pq``), else by content (Parquet magic, one
        JSON document, one JSON object per line, a tab in the first line, otherwise CSV). It
        raises nothing for bytes: every content gets a format, and the reader then says what
        is wrong with the file.

    Examples
    --------
    >>> detect_records_format(b"", "results.ndjson")  # the extension decides
    'jsonl'
    >>> detect_records_format(b'{"query_id": "q1"}\\n{"query_id": "q2"}\\n')  # one object per line
    'jsonl'
    >>> detect_records_format(b'[{"query_id": "q1"}]')  # one JSON document
    'json'
    >>> detect_records_format(b"query_id\\tanswer\\nq1\\tyes\\n")  # a tab in the first line
    'tsv'
    """
    ext = os.path.splitext(name.lower())[1]
    by_ext = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
              ".parquet": "parquet", ".pq": "parquet"}
    if ext in by_ext:
        return by_ext[ext]
    head = bytes(data[:65536])
    if head[:4] == b"PAR1":
        return "parquet"
    stripped = head.lstrip()
    if stripped[:1] == b"[" or (stripped[:1] == b"{" and b"\n{" not in stripped):
        return "json"
    if stripped[:1] == b"{":
        return "jsonl"
    first = stripped.split(b"\n", 1)[0]
    return "tsv" if b"\t" in first else "csv"


def read_records(path_or_buffer: PathOrBuffer, format: str | None = None, *, source_name: str | None = None,
                 system: str | None = None, failure_stages: Sequence[str] = FAILURE_STAGES,
                 limits: ReadLimits | None = None, isolate: bool = False) -> Records:
    """Read per-request records (docs/records.md) from JSONL, JSON, CSV/TSV or Parquet.

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file (gzip detected and decompressed).
    format : {"jsonl", "json", "csv", "tsv", "parquet"} or None
        None detects it from the extension, then the content.
    source_name : str, optional
        Name to show in messages (defaults to the file name).
    system : str, optional
        System name for records without a ``system`` field (default: the file name's stem).
    failure_stages : sequence of str
        Allowed ``failure_stage`` labels (matched case-insensitively).
    limits : ReadLimits, optional
        Bytes, lines, line length, columns and JSON nesting the file may have.
    isolate : bool
        Parse in a worker process with a time and memory cap (as the dashboard does); see
        :func:`evalsuite.isolation.read_isolated`.

    Returns
    -------
    Records
        One row per record, in canonical fields (see :class:`Records`).

    Raises
    ------
    EvalSuiteError
        Naming the file, line (row for Parquet), field and value: a judgement list whose
        length differs from ``contexts``, a grade outside 0..1, an unknown failure stage, a
        latency that is not a finite number >= 0, malformed JSON, a list field in CSV that is
        not a JSON list, a repeated (system, query_id), an empty file, a file past ``limits``;
        with ``isolate``, a parse that crashed or ran out of time or memory
        (:class:`evalsuite.ReaderStopped`).

    References
    ----------
    Column names of RAGAS exports (0.1: question, answer, contexts, ground_truth; >= 0.2:
    user_input, response, retrieved_contexts, reference), DeepEval's ``LLMTestCase`` and
    RAGChecker's input JSON are mapped to the canonical fields (:data:`ALIASES`,
    ``docs/records.md``).

    Examples
    --------
    >>> records = read_records(b'{"query_id": "q1", "system": "rag", "latency_ms": 120}\\n', format="jsonl")
    >>> records.systems, len(records)
    (['rag'], 1)
    """
    if isolate:
        from .isolation import read_isolated

        return read_isolated("records", path_or_buffer, source_name, format=format, limits=limits, system=system,
                             failure_stages=tuple(failure_stages))
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        return _read_records(path_or_buffer, format, source_name, system, failure_stages, check_limits(limits))


def _read_records(path_or_buffer, format, source_name, system, failure_stages, limits: ReadLimits) -> Records:
    inp = _load(path_or_buffer, source_name, limits)
    if inp.size == 0:
        raise EvalSuiteError("the file is empty", source=inp.name)
    fmt = format.lower() if isinstance(format, str) else detect_records_format(inp.head, inp.ext_name)
    if fmt not in _RECORD_FORMATS:
        raise EvalSuiteError(f"unknown records format; use one of {', '.join(_RECORD_FORMATS)}", field="format", value=format)
    try:
        check_input(inp, fmt, limits)
        if fmt == "jsonl":
            return _read_jsonl(inp, system, failure_stages, limits)
        if fmt == "json":
            return _read_json(inp, system, failure_stages, limits)
        if fmt == "parquet":
            return _read_parquet(inp, system, failure_stages, limits)
        return _read_delimited(inp, "," if fmt == "csv" else "\t", system, failure_stages, limits)
    except UnicodeEncodeError as exc:
        raise not_unicode_error(exc, inp.name) from None
    except UnicodeDecodeError as exc:
        raw = inp.data
        raise EvalSuiteError(f"bytes that are not UTF-8 text ({exc.reason}); save the file as UTF-8", source=inp.name,
                             line=raw.count(b"\n", 0, exc.start) + 1, field="bytes", value=raw[exc.start:exc.end]) from None


def concat_records(parts: Sequence[Records]) -> Records:
    """Several record sets (e.g. one uploaded file per system) as one; (system, query_id) stay unique.

    Parameters
    ----------
    parts : sequence of Records
        Record sets to stack, in order; a field missing from a part is null in its rows.

    Returns
    -------
    Records
        Every part's rows in order; ``source`` the parts' sources joined by ", "; warnings,
        aliases and extra columns of all parts.

    Raises
    ------
    EvalSuiteError
        No parts; a (system, query_id) pair in more than one part (give each file its own
        system name).

    Examples
    --------
    >>> bm25 = Records.from_rows([{"query_id": "q1", "latency_ms": 120}], source="bm25.jsonl", system="bm25")
    >>> dense = Records.from_rows([{"query_id": "q1", "latency_ms": 90}], source="dense.jsonl", system="dense")
    >>> both = concat_records([bm25, dense])
    >>> both.systems, len(both), both.source  # 1 + 1 rows
    (['bm25', 'dense'], 2, 'bm25.jsonl, dense.jsonl')
    >>> concat_records([bm25, bm25])
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: field 'query_id', value 'q1': system 'bm25' has query_id 'q1' in more than
    one file; give each file its own system name
    """
    parts = list(parts)
    if not parts:
        raise EvalSuiteError("no records to combine", field="records")
    table = pa.concat_tables([p.table for p in parts], promote_options="permissive")
    combined = Records(table, source=", ".join(str(p.source) for p in parts),
                       warnings=[w for p in parts for w in p.warnings],
                       aliases={k: v for p in parts for k, v in p.aliases.items()},
                       extra_columns=sorted({c for p in parts for c in p.extra_columns}),
                       score_columns=sorted({c for p in parts for c in p.score_columns}))
    keys = pd.DataFrame({"s": table.column("system").to_pandas(), "q": table.column("query_id").to_pandas()})
    dup = keys.duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise EvalSuiteError(f"system {keys['s'].iloc[row]!r} has query_id {keys['q'].iloc[row]!r} in more than one file; "
                             "give each file its own system name", field="query_id", value=keys["q"].iloc[row])
    return combined
