"""Failure attribution from the judgements: which stage of a RAG pipeline each failed request
failed at, by a fixed, documented rule set (docs/records.md, "Failure stages from the
judgements").

A ``failure_stage`` given in the records always wins. Otherwise the first rule that applies
decides, in this order (:data:`ATTRIBUTION_RULES`):

1. (traces) the span where the request's first error began (``failed_span_kind``, written by
   :func:`evalsuite.read_traces`): RETRIEVER, RERANKER or EMBEDDING -> retrieval, LLM ->
   generation, TOOL, CHAIN, AGENT or any other kind -> orchestration.
2. orchestration - the request's ``error`` text names a timeout, rate limit, HTTP 429/5xx,
   connection, tool or exception: the pipeline itself broke, whatever the judgements say.
3. retrieval - no relevant context was retrieved: context recall 0 (no reference claim is
   supported by the retrieved context), no ``relevant_ids`` entry among ``context_ids``, or no
   retrieved chunk judged relevant (``context_relevant``).
4. evidence - relevant context was retrieved but it is insufficient: context recall strictly
   between 0 and 1.
5. generation - the evidence was there (or retrieval was not judged) but the answer has claims
   the retrieved context does not support, or is wrong against the reference (an answer claim
   not in the reference, or a reference claim missing from the answer).
6. other - failed (``success`` false, or an error text) with nothing above explaining it.

A request has failed when it has a given ``failure_stage`` or a span in error, when ``success``
is false, or - when ``success`` is unknown - when it has an ``error`` text or a judgement that
shows a problem (rules 3 and 5; a partial context recall alone is no failure when the answer is right). A request with
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
import pyarrow.compute as pc

from ..errors import EvalSuiteError
from ..metrics.operational import FAILURE_STAGES
from ..metrics.judgement_lists import JudgementLists
from .table import Records

__all__ = ["attribute_failures", "with_attributed_failures", "ATTRIBUTION_RULES", "ORCHESTRATION_ERROR",
           "SPAN_KIND_STAGES"]

# Rule id -> (stage, what it means), in the order the rules are tried.
ATTRIBUTION_RULES: dict[str, tuple[str | None, str]] = {
    "given": (None, "failure_stage given in the records (always wins)"),
    "span in error": (None, "traces: the span where the first error began - RETRIEVER, RERANKER or EMBEDDING -> "
                            "retrieval; LLM -> generation; TOOL, CHAIN, AGENT or another kind -> orchestration"),
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
# Traces: the kind of the span where the first error began (failed_span_kind) -> stage.
SPAN_KIND_STAGES = {"RETRIEVER": "retrieval", "RERANKER": "retrieval", "EMBEDDING": "retrieval", "LLM": "generation"}
# Error texts of the pipeline itself rather than of retrieval or generation quality.
ORCHESTRATION_ERROR = re.compile(
    r"time[ -]?out|timed out|rate[ -]?limit|too many requests|\b429\b|\b50[0-9]\b|connection|unavailable|"
    r"\btool\b|exception|traceback|cancell?ed|max(imum)? retries|quota", re.IGNORECASE)


def _shares(table: pa.Table, name: str, n: int):
    """(share of True, judged count, True count) per row of a judgement list column; NaN/0 if absent."""
    if name not in table.column_names:
        return np.full(n, np.nan), np.zeros(n), np.zeros(n)
    lists = JudgementLists(table.column(name).combine_chunks())
    return lists.share(), lists.judged, lists.total


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
    wanted, hits, n_retrieved = _relevant_hits(table, n, rel_level)
    given = _strings(table, "failure_stage", n)
    has_given = given.is_valid().to_numpy(zero_copy_only=False)
    if "success" in table.column_names:
        success_col = table.column("success").combine_chunks()
        success_known = success_col.is_valid().to_numpy(zero_copy_only=False)
        succeeded = success_col.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)
    else:
        success_known, succeeded = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    span_kinds = _strings(table, "failed_span_kind", n)
    has_span = span_kinds.is_valid().to_numpy(zero_copy_only=False)
    errors = _strings(table, "error", n)
    has_error = pc.fill_null(pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(errors)), 0), False).to_numpy(
        zero_copy_only=False)
    orchestration = has_error & pc.fill_null(pc.match_substring_regex(errors, ORCHESTRATION_ERROR.pattern,
                                                                      ignore_case=True), False).to_numpy(zero_copy_only=False)
    no_hit = (wanted > 0) & (hits == 0) & (n_retrieved >= 0)
    no_relevant_chunk = (relevant_judged > 0) & (relevant_share == 0)
    with np.errstate(invalid="ignore"):
        recall_zero = recall == 0
        recall_partial = (recall > 0) & (recall < 1)
        unsupported = faithful < 1
        wrong = (in_ref < 1) | (covered < 1)
    retrieval_judged = ~np.isnan(recall) | (wanted > 0) | (relevant_judged > 0)
    problem = recall_zero | no_hit | no_relevant_chunk | unsupported | wrong
    failed = has_given | has_span | np.where(success_known, ~succeeded, has_error | problem)
    # The rules in order: the first that applies decides (np.select takes the first true condition).
    conditions = [has_given, ~failed, has_span, orchestration, recall_zero, no_hit, no_relevant_chunk, recall_partial,
                  unsupported, wrong]
    rules = ["given", None, "span in error", "error text", "context recall 0", "no relevant id retrieved",
             "no relevant chunk", "partial context recall", "unsupported answer claims", "wrong answer"]
    choice = np.select(conditions, np.arange(len(conditions)), default=len(conditions))
    rule_names = rules + ["unexplained"]
    given_list = given.to_pylist()
    span_list = span_kinds.to_pylist() if has_span.any() else None
    error_list = None
    rule_col: list = [None] * n
    stage_col: list = [None] * n
    reason_col: list = [None] * n
    for i in np.flatnonzero(choice != 1).tolist():
        rule = rule_names[choice[i]]
        rule_col[i] = rule
        if rule == "given":
            stage_col[i] = given_list[i].strip().lower()
            reason_col[i] = f"failure_stage {given_list[i]!r} given in the records"
            continue
        if rule == "span in error":
            kind = span_list[i] if span_list is not None else None
            stage_col[i] = SPAN_KIND_STAGES.get(str(kind).strip().upper(), "orchestration")
            reason_col[i] = f"first span in error: {kind} -> {stage_col[i]}" + (
                f"; {errors[i].as_py()[:200]}" if has_error[i] else "")
            continue
        stage_col[i] = ATTRIBUTION_RULES[rule][0]
        if rule == "error text" or rule == "unexplained":
            error_list = errors.to_pylist() if error_list is None else error_list
        if rule == "error text":
            reason = f"error text: {error_list[i][:200]}"
        elif rule == "context recall 0":
            reason = f"context recall 0: 0 of {int(recall_judged[i])} reference claims supported by the retrieved context"
        elif rule == "no relevant id retrieved":
            reason = f"none of {int(wanted[i])} relevant ids among the {int(n_retrieved[i])} retrieved"
        elif rule == "no relevant chunk":
            reason = f"none of {int(relevant_judged[i])} judged retrieved chunks is relevant"
        elif rule == "partial context recall":
            reason = (f"context recall {recall[i]:.2f}: {int(recall_true[i])} of {int(recall_judged[i])} reference "
                      "claims supported by the retrieved context")
        elif rule == "unsupported answer claims":
            reason = (f"{int(faith_judged[i] - faith_true[i])} of {int(faith_judged[i])} answer claims not supported "
                      "by the retrieved context" + ("" if retrieval_judged[i] else " (retrieval not judged)"))
        elif rule == "wrong answer":
            parts = []
            if in_ref[i] < 1:
                parts.append(f"{int(in_ref_judged[i] - in_ref_true[i])} of {int(in_ref_judged[i])} answer claims not in "
                             "the reference")
            if covered[i] < 1:
                parts.append(f"{int(covered_judged[i] - covered_true[i])} of {int(covered_judged[i])} reference claims "
                             "missing from the answer")
            reason = "; ".join(parts)
        else:
            error = error_list[i] if has_error[i] else None
            reason = (f"failed, error text: {error[:200]}" if error else
                      "failed (success false) and no judgement or error explains it")
        reason_col[i] = reason
    attributed = (choice != 0) & (choice != 1)
    return pd.DataFrame({
        "system": table.column("system").to_pylist(),
        "query_id": table.column("query_id").to_pylist(),
        "failed": failed.astype(bool),
        "stage": pd.Series(stage_col, dtype=object),
        "attributed": attributed,
        "rule": pd.Series(rule_col, dtype=object),
        "reason": pd.Series(reason_col, dtype=object),
    })


def _strings(table: pa.Table, name: str, n: int) -> pa.Array:
    if name in table.column_names:
        return table.column(name).combine_chunks().cast(pa.string())
    return pa.nulls(n, pa.string())


def _relevant_hits(table: pa.Table, n: int, rel_level: float):
    """Per row: relevant ids (grade >= rel_level), how many of them are among ``context_ids``, and
    the number retrieved; (0, 0, -1) where either list is missing."""
    wanted = np.zeros(n, dtype=np.int64)
    hits = np.zeros(n, dtype=np.int64)
    n_retrieved = np.full(n, -1, dtype=np.int64)
    if "context_ids" not in table.column_names or "relevant_ids" not in table.column_names:
        return wanted, hits, n_retrieved
    retrieved = table.column("context_ids").combine_chunks()
    relevant = table.column("relevant_ids").combine_chunks()
    grades = table.column("relevant_grades").combine_chunks()
    both = retrieved.is_valid().to_numpy(zero_copy_only=False) & relevant.is_valid().to_numpy(zero_copy_only=False)
    rel_parent = pc.list_parent_indices(relevant).to_numpy(zero_copy_only=False).astype(np.int64)
    flat_grades = pc.list_flatten(grades).cast(pa.float64()).fill_null(-np.inf).to_numpy(zero_copy_only=False)
    keep = (flat_grades >= rel_level) & both[rel_parent]
    wanted = np.bincount(rel_parent[keep], minlength=n).astype(np.int64)
    n_retrieved = np.where(both, pc.list_value_length(retrieved).fill_null(0).to_numpy(zero_copy_only=False), -1)
    # Membership per row on the (row, id) pairs: a join of two small tables.
    ret = pa.table({"row": pc.list_parent_indices(retrieved), "id": pc.list_flatten(retrieved)})
    rel = pa.table({"row": pa.array(rel_parent[keep]), "id": pc.list_flatten(relevant).filter(pa.array(keep))})
    if rel.num_rows and ret.num_rows:
        ret = ret.group_by(["row", "id"]).aggregate([])  # an id listed twice counts once
        joined = ret.join(rel.group_by(["row", "id"]).aggregate([]), keys=["row", "id"], join_type="inner")
        rows = joined.column("row").to_numpy().astype(np.int64)
        hits = np.bincount(rows, minlength=n).astype(np.int64)
    return wanted, hits, n_retrieved


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
