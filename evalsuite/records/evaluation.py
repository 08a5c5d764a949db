"""Evaluation of per-request records: every metric their fields allow, per request and per system.

:func:`evaluate_records` takes :class:`~evalsuite.Records` (from :func:`evalsuite.read_records`)
and computes each RAG metric of the registry from the judgement columns present, by one loop over
the registry's entries (each entry's inputs and per-request kernel), or uses the per-request
values a file carries, such as a RAGAS export's; the ranking metrics from ``context_ids`` and
``relevant_ids`` with the same kernel as :func:`evalsuite.evaluate`, task success with its
Wilson interval, failure stages (given, or attributed from the judgements as the Failures page
does) and latency percentiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EvalSuiteError
from ..metrics.functions import kernel
from ..metrics.judgement_lists import CRITIQUE_PREFIX
from ..metrics.operational import (
    FAILURE_STAGES, LATENCY_STATISTICS, failure_attribution, latency_summary, task_success_rate,
)
from ..metrics.registry import DEFAULTS, GIVEN_NAMES, LOWER_IS_BETTER, METRICS
from ..score import Score
from .attribution import attribute_failures
from .judged_by import filled_by
from .schema import _LATENCY_FIELD
from .table import Records

__all__ = ["RecordsReport", "evaluate_records", "CONVENTIONS"]


@dataclass
class RecordsReport:
    """What :func:`evaluate_records` returns: per-request values and per-system summaries.

    Attributes
    ----------
    per_query : pandas.DataFrame
        One row per record: ``system``, ``query_id``, then one float column per metric the
        fields allow (NaN = undefined for that request) and the latency columns.
    metrics : list of str
        The quality metric columns of ``per_query`` (not the latencies).
    scores : dict of system -> dict of metric -> Score
        Per system and metric the mean over that system's requests where the metric is
        defined, with ``.per_query`` (aligned with ``.query_ids``) and ``params["coverage"]``.
    task_success : dict of system -> Score
        Success rate with its Wilson interval in ``params`` (only when ``success`` exists).
    failures : dict of system -> Score
        Failure share with per-stage counts and shares in ``params["stages"]``: the stage given
        in ``failure_stage``, else the one the request's judgements show
        (:func:`evalsuite.attribute_failures`), as the Failures page shows.
    latency_table : pandas.DataFrame
        Columns system, stage, unit, n, mean, p50, p90, p95, p99 (milliseconds).
    failure_table : pandas.DataFrame
        Columns system, stage, count, share (the stages of ``failures``).
    params : dict
        k, rel_level, compat, confidence, given_metrics (values taken from the file as
        given, for at least one system), metric_sources (system -> metric -> "computed from
        the judgements", "given in the file", "computed from the records" or "none"; decided
        per system), failure_stages, n_records, systems, source.
    conventions : dict of str -> str
        The rule of each metric and of the corpus values.
    warnings : list of str
        From reading the records and from the evaluation.

    Examples
    --------
    >>> rows = [{"query_id": "q1", "system": "a", "answer_claims_supported": [True, False]},
    ...         {"query_id": "q2", "system": "a", "answer_claims_supported": [True, True]},
    ...         {"query_id": "q1", "system": "b", "answer_claims_supported": [True, True]},
    ...         {"query_id": "q2", "system": "b", "answer_claims_supported": []}]
    >>> report = evaluate_records(Records.from_rows(rows))
    >>> report.systems, report.metrics
    (['a', 'b'], ['faithfulness'])
    >>> report.per_query  # 1 of 2 claims, 2 of 2, 2 of 2, no claims (undefined)
      system query_id  faithfulness
    0      a       q1           0.5
    1      a       q2           1.0
    2      b       q1           1.0
    3      b       q2           NaN
    >>> report.summary  # a: (0.5 + 1) / 2; b: 1.0 over 1 of its 2 requests
            faithfulness  faithfulness_coverage
    system
    a               0.75                    1.0
    b               1.00                    0.5
    """

    per_query: pd.DataFrame
    metrics: list[str]
    scores: dict[str, dict[str, Score]]
    task_success: dict[str, Score]
    failures: dict[str, Score]
    latency_table: pd.DataFrame
    failure_table: pd.DataFrame
    params: dict[str, Any]
    conventions: dict[str, str]
    warnings: list[str] = field(default_factory=list)

    @property
    def systems(self) -> list[str]:
        return list(self.scores)

    @property
    def means(self) -> dict[str, dict[str, float]]:
        """System -> metric -> mean over the requests where it is defined."""
        return {s: {m: float(v) for m, v in per.items()} for s, per in self.scores.items()}

    @property
    def summary(self) -> pd.DataFrame:
        """One row per system: each metric's mean and its coverage (``<metric>_coverage``)."""
        rows = {}
        for system, per in self.scores.items():
            row = {}
            for metric, score in per.items():
                row[metric] = float(score)
                row[f"{metric}_coverage"] = score.params["coverage"]
            rows[system] = row
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("system")

    def to_dataframe(self) -> pd.DataFrame:
        """The per-request table (a copy)."""
        return self.per_query.copy()


# Rule of each RAG metric, from the registry, and of the corpus values.
CONVENTIONS = {
    **{m.name: m.convention for m in METRICS.values() if m.kind in ("context", "answer")},
    "failure stage": "given in failure_stage, else attributed from the request's judgements "
                     "(evalsuite.attribute_failures), as the Failures page shows",
    "success": "1 if the request succeeded, 0 if not",
    "not judged": "None inside a judgement list is left out and counted, never read as False",
    "corpus value": "mean over the requests where the metric is defined, with coverage = defined / total",
}


# The RAG metrics evaluate_records computes from judgement columns, in registry order. A metric
# whose one input is its own column (answer_similarity) is read as given: there is nothing to compute.
_JUDGED = tuple(m for m in METRICS.values() if m.kind in ("context", "answer") and m.inputs
                and m.columns != (m.name,))


def _per_record_metrics(table: pa.Table, compat: str | None, k: int, rel_level: float, warnings: list,
                        given: list, sources: dict | None = None) -> dict[str, np.ndarray]:
    """Every metric the fields allow, one value per record (NaN = undefined).

    One loop over the registry's RAG entries: an entry whose input columns are present runs its
    per-request kernel on them (``critique_<name>``: once per such column). Metric values the
    file carries itself (:data:`~evalsuite.metrics.registry.GIVEN_NAMES`) are used as given for
    each system whose records have none of their judgement columns; their names are appended to
    ``given`` and each system's source is put in ``sources``.
    """
    sources = {} if sources is None else sources
    names = set(table.column_names)
    n = table.num_rows
    out: dict[str, np.ndarray] = {}

    def has(name):
        return name in names and table.column(name).null_count < n

    present = {name for name in names if has(name)}
    for entry in _JUDGED:
        if entry.inputs[0].pattern:  # aspect critiques: one metric per critique_<name> column
            for name in sorted(c for c in present if c.startswith(CRITIQUE_PREFIX) and len(c) > len(CRITIQUE_PREFIX)):
                out[name] = _run_kernel(entry, {entry.inputs[0].argument: table.column(name)}, compat)
            continue
        chosen = entry.usable_inputs(present)
        if chosen is None:
            found = [i.column for i in entry.inputs if i.column in present]
            if found:
                warnings.append(f"{entry.name} needs {', '.join(i.column for i in entry.inputs if i.required)}; "
                                f"these records have only {', '.join(found)}")
            continue
        values = _run_kernel(entry, {i.argument: table.column(i.column) for i in chosen}, compat)
        if values is not None:
            out[entry.name] = _per_system_optional_inputs(entry, chosen, table, values, compat, sources)
    if has("success"):
        out["success"] = _run_kernel(METRICS["success"], {"outcomes": table.column("success")}, compat)
    if has("context_ids") and has("relevant_ids"):
        out.update(_ranking_per_record(table, k, rel_level))
    _choose_sources(table, out, warnings, given, sources)
    return out


def _per_system_optional_inputs(entry, chosen, table: pa.Table, values: np.ndarray, compat: str | None,
                                sources: dict) -> np.ndarray:
    """An entry with optional inputs (answer_correctness's similarity) uses them for a system only
    when that system's records have them: a system without them gets the metric without them (F1
    alone), not NaN because another loaded system has them. Which inputs each system's value used
    goes to ``sources[system]["inputs:" + metric]``."""
    optional = [i for i in chosen if not i.required]
    if not optional:
        return values
    systems = table.column("system").to_numpy(zero_copy_only=False)
    valid = {i.column: table.column(i.column).combine_chunks().is_valid().to_numpy(zero_copy_only=False)
             for i in optional}
    values = values.copy()
    for system in pd.unique(systems).tolist():
        rows = np.flatnonzero(systems == system)
        absent = [i for i in optional if not valid[i.column][rows].any()]
        used = [i for i in chosen if i not in absent]
        note = "; ".join([f"with {i.column}" for i in optional if i not in absent]
                         + [f"without {i.column}" for i in absent])
        sources.setdefault(system, {})["inputs:" + entry.name] = note
        if absent:
            part = table.take(pa.array(rows))
            again = _run_kernel(entry, {i.argument: part.column(i.column) for i in used}, compat)
            values[rows] = np.nan if again is None else again
    return values


def _run_kernel(entry, columns: dict, compat: str | None) -> np.ndarray | None:
    """An entry's per-request kernel on record columns (its arguments -> Arrow arrays)."""
    columns = {a: c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for a, c in columns.items()}
    values = kernel(entry)(**columns, compat=compat, **entry.kernel_arguments)
    return None if values is None else np.asarray(values, dtype=np.float64)


def _choose_sources(table: pa.Table, out: dict, warnings: list, given: list, sources: dict) -> None:
    """Per system and metric: computed from the judgement lists when that system's records have
    any, else the value its file gives (a RAGAS export's column). Decided for each system on its
    own rows, so what else is loaded never changes a system's values. Fills ``sources``
    (system -> metric -> "computed from the judgements" / "given in the file")."""
    n = table.num_rows
    names = set(table.column_names)
    systems = table.column("system").to_numpy(zero_copy_only=False)
    groups = {s: np.flatnonzero(systems == s) for s in pd.unique(systems).tolist()}
    for system in groups:
        sources.setdefault(system, {})
    critiques = [c for c in out if c.startswith(CRITIQUE_PREFIX)]
    for metric, inputs in (*((m.name, m.columns) for m in _JUDGED), *((c, (c,)) for c in critiques)):
        if metric in out:
            judged = np.zeros(n, dtype=bool)
            for name in inputs:
                if name in names:  # a metric may come from one of several inputs (entities: two ways)
                    judged |= table.column(name).combine_chunks().is_valid().to_numpy(zero_copy_only=False)
            for system, rows in groups.items():
                if judged[rows].any():
                    sources[system][metric] = "computed from the judgements"
    for metric in GIVEN_NAMES:
        if metric not in names or table.column(metric).null_count == n:
            continue
        column = table.column(metric).combine_chunks()
        values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
        has_value = column.is_valid().to_numpy(zero_copy_only=False)
        merged = out.get(metric, np.full(n, np.nan)).copy()
        used = False
        for system, rows in groups.items():
            if sources[system].get(metric) == "computed from the judgements":
                if has_value[rows].any():
                    warnings.append(f"{system}: {metric} computed from its judgement lists; the file's own {metric} "
                                    "column is not used for this system")
                continue
            if has_value[rows].any():
                merged[rows] = values[rows]
                sources[system][metric] = filled_by(table, metric, rows[has_value[rows]]) or "given in the file"
                used = True
        out[metric] = merged
        if used:
            given.append(metric)


def _declared_scores(records: Records, out: dict, warnings: list, given: list, sources: dict) -> None:
    """Scores the exporting tool declares beyond the fields (``Records.score_columns``: a DeepEval
    G-Eval metric, a TruLens feedback of the user's own), used as given when they are numbers in
    0..1 (NaN = undefined); otherwise left unused, with a warning."""
    table = records.table
    systems = table.column("system").to_numpy(zero_copy_only=False)
    for name in records.score_columns:
        if name in out or name not in table.column_names:
            continue
        column = table.column(name).combine_chunks()
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):  # CSV cells, as read
            try:
                column = pc.cast(pc.if_else(pc.equal(pc.utf8_trim_whitespace(column), ""), None, column), pa.float64())
            except pa.ArrowInvalid:
                pass
        if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_null(column.type)):
            warnings.append(f"{name}: a score column that does not hold numbers; not used")
            continue
        values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
        finite = values[~np.isnan(values)]
        if finite.size == 0:
            continue
        if finite.min() < 0 or finite.max() > 1:
            warnings.append(f"{name}: scores outside 0..1 ({finite.min():g} to {finite.max():g}); not used")
            continue
        out[name] = values
        given.append(name)
        for system in pd.unique(systems).tolist():
            if (~np.isnan(values[systems == system])).any():
                sources.setdefault(system, {})[name] = "given in the file"


def _source_of(sources: dict, system: str, metric: str) -> str:
    """Where a system's value of a metric comes from (ranking metrics and success: the records)."""
    found = sources.get(system, {}).get(metric)
    if found:
        return found
    if metric in GIVEN_NAMES:
        return "none"  # neither judgements nor a given value for this system
    return "computed from the records"


def _ranking_per_record(table: pa.Table, k: int, rel_level: float) -> dict[str, np.ndarray]:
    """Ranking metrics per record from context_ids (rank order) and relevant_ids, vectorised.

    Each record is its own query. Retrieved and relevant ids are matched within a record by a
    sort-merge on (record, hashed id) keys - both sides are grouped by record already, so the
    sort is cheap - and every match is confirmed on the strings. The metrics then come from the
    same kernel as :func:`evalsuite.evaluate`, so the conventions are identical.
    """
    from ..utils.keys import group_keys, string_keys
    from ..metrics.names import MetricSpec
    from ..utils.checks import group_positions
    from ..metrics.ranking_kernel import JudgedRanking, compute_metrics

    n = table.num_rows
    retrieved = table.column("context_ids").combine_chunks()
    relevant = table.column("relevant_ids").combine_chunks()
    grades_all = table.column("relevant_grades").combine_chunks()
    has_both = retrieved.is_valid().to_numpy(zero_copy_only=False) & relevant.is_valid().to_numpy(zero_copy_only=False)
    specs = [MetricSpec(f"{base}@{k}", base, k) for base in DEFAULTS["records"]]
    out = {spec.name: np.full(n, np.nan) for spec in specs}
    if not has_both.any():
        return out
    run_parent = pc.list_parent_indices(retrieved).to_numpy(zero_copy_only=False).astype(np.int64)
    rel_parent = pc.list_parent_indices(relevant).to_numpy(zero_copy_only=False).astype(np.int64)
    run_keep = np.flatnonzero(has_both[run_parent])
    rel_keep = np.flatnonzero(has_both[rel_parent])
    run_docs = pc.list_flatten(retrieved).take(pa.array(run_keep))
    rel_docs = pc.list_flatten(relevant).take(pa.array(rel_keep))
    run_parent, rel_parent = run_parent[run_keep], rel_parent[rel_keep]
    grades = pc.list_flatten(grades_all).take(pa.array(rel_keep)).to_numpy(zero_copy_only=False)

    run_keys = group_keys(run_parent, string_keys(run_docs), n)
    rel_keys = group_keys(rel_parent, string_keys(rel_docs), n)
    order = np.argsort(rel_keys, kind="stable")
    sorted_rel = rel_keys[order]
    row_grade = np.zeros(run_parent.size)
    row_judged = np.zeros(run_parent.size, dtype=bool)
    if sorted_rel.size:
        pos = np.minimum(np.searchsorted(sorted_rel, run_keys), sorted_rel.size - 1)
        hit = np.flatnonzero(sorted_rel[pos] == run_keys)
        match = order[pos[hit]]
        same = (rel_parent[match] == run_parent[hit]) & pc.equal(
            run_docs.take(pa.array(hit)), rel_docs.take(pa.array(match))).to_numpy(zero_copy_only=False)
        if not same.all() or (sorted_rel.size > 1 and bool(np.any(sorted_rel[1:] == sorted_rel[:-1]))):
            # A 40-bit key collision inside one record (odds about 2**-40): match those exactly.
            return _ranking_per_record_exact(table, k, rel_level, has_both, out, specs)
        row_grade[hit] = grades[match]
        row_judged[hit] = True
    rel_order = np.lexsort((-grades, rel_parent))
    judged = JudgedRanking(
        n_queries=n,
        row_query=run_parent,
        row_rank=group_positions(run_parent),
        row_grade=row_grade,
        row_judged=row_judged,
        n_retrieved=np.bincount(run_parent, minlength=n),
        judged_query=rel_parent[rel_order],
        judged_grade=grades[rel_order],
    )
    values = compute_metrics(judged, specs, rel_level)
    for spec in specs:
        out[spec.name][has_both] = values[spec.name][has_both]
    return out


def _ranking_per_record_exact(table, k, rel_level, has_both, out, specs) -> dict[str, np.ndarray]:
    """The list API on each record with both lists: the exact path after a hash collision."""
    from ..metrics.ranking_kernel import compute_metrics
    from ..metrics.ranking import judged_ranking_from_lists

    rows = np.flatnonzero(has_both)
    retrieved = table.column("context_ids").combine_chunks().take(pa.array(rows)).to_pylist()
    ids = table.column("relevant_ids").combine_chunks().take(pa.array(rows)).to_pylist()
    grades = table.column("relevant_grades").combine_chunks().take(pa.array(rows)).to_pylist()
    relevant = [dict(zip(i, g)) for i, g in zip(ids, grades)]
    values = compute_metrics(judged_ranking_from_lists(relevant, retrieved), specs, rel_level)
    for spec in specs:
        out[spec.name][rows] = values[spec.name]
    return out


def _latency_columns(table: pa.Table) -> dict[str, str]:
    """Latency column -> stage name ("end_to_end" for latency_ms)."""
    out = {}
    for name in table.column_names:
        if name == "latency_ms":
            out[name] = "end_to_end"
        else:
            match = _LATENCY_FIELD.match(name)
            if match:
                out[name] = match.group(1)
    return out


def evaluate_records(records: Records, *, k: int = 10, rel_level: float = 1, compat: str | None = None,
                     confidence: float = 0.95, failure_stages: Sequence[str] = FAILURE_STAGES) -> RecordsReport:
    """Compute every metric the records' fields allow, per request and per system.

    Parameters
    ----------
    records : Records
        From :func:`read_records`, :func:`concat_records` or ``Records.from_rows``: one row
        per request, any number of systems.
    k : int >= 1, keyword-only
        Cutoff of the per-request ranking metrics (from ``context_ids`` and ``relevant_ids``;
        default 10).
    rel_level : float > 0, keyword-only
        Minimum grade counted as relevant for those ranking metrics.
    compat : None or "ragas", keyword-only
        Reproduce RAGAS's numbers where they differ (see the metric functions).
    confidence : float in (0, 1), keyword-only
        Level of the Wilson interval of the success rate (default 0.95).
    failure_stages : sequence of str, keyword-only
        The failure taxonomy (default :data:`evalsuite.FAILURE_STAGES`); without the stages the
        attribution rules use, only given stages are counted.

    Returns
    -------
    RecordsReport
        Per-request table (one row per record, one float column per metric the fields allow,
        latencies in ms) and per-system scores, success rates, failure shares and latency
        percentiles.

    Raises
    ------
    EvalSuiteError
        Bad options (k <= 0, rel_level <= 0, unknown compat; confidence outside (0, 1) when
        the records have ``success``; a bad failure taxonomy when they have ``failure_stage``);
        not a Records object; no field that any metric or summary can use.

    References
    ----------
    Each metric as the function computing it: :func:`evalsuite.context_precision` ...
    (RAGAS, ARES, ALCE), the ranking metrics as :func:`evalsuite.evaluate` (trec_eval, ranx),
    :func:`evalsuite.task_success_rate` (Wilson 1927), :func:`evalsuite.latency_summary`
    (numpy.percentile, linear).

    Examples
    --------
    >>> rows = [{"query_id": "q1", "system": "rag", "answer_claims_supported": [True, False],
    ...          "success": True, "latency_ms": 120},
    ...         {"query_id": "q2", "system": "rag", "answer_claims_supported": [True, True, None],
    ...          "success": False, "latency_ms": 300}]
    >>> report = evaluate_records(Records.from_rows(rows))
    >>> report.scores["rag"]["faithfulness"]  # (1/2 + 2/2) / 2; the None claim is left out
    Score(faithfulness=0.7500, n=2, coverage=1.000)
    >>> report.task_success["rag"]  # 1 of 2 requests succeeded
    Score(task_success_rate=0.5000, n=2, coverage=1.000)
    >>> float(report.latency_table.loc[0, "p50"])  # (120 + 300) / 2
    210.0
    """
    from ..utils.checks import check_compat, check_cutoff, check_rel_level

    check_compat(compat)
    k = check_cutoff(k, allow_none=False)
    check_rel_level(rel_level)
    if not isinstance(records, Records):
        raise EvalSuiteError("expected Records (from evalsuite.read_records)", field="records", value=type(records).__name__)
    table = records.table
    warnings = list(records.warnings)
    given: list[str] = []
    sources: dict[str, dict[str, str]] = {}
    values = _per_record_metrics(table, compat, k, rel_level, warnings, given, sources)
    _declared_scores(records, values, warnings, given, sources)
    latencies = _latency_columns(table)
    systems = table.column("system").to_numpy(zero_copy_only=False)
    query_ids = table.column("query_id").to_numpy(zero_copy_only=False)
    order = pd.unique(systems).tolist()
    per_query = pd.DataFrame({"system": systems, "query_id": query_ids})
    for name, arr in values.items():
        per_query[name] = arr
    for name in latencies:
        per_query[name] = table.column(name).combine_chunks().cast(pa.float64()).to_numpy(zero_copy_only=False)
    stage_column = _failure_stages(records, rel_level, failure_stages, warnings)
    has_stage = stage_column is not None
    if not values and not latencies and not has_stage:
        raise EvalSuiteError(
            "these records hold no field any metric can use (judgement lists, success, failure_stage, latency_ms, "
            f"latency_<stage>_ms, or context_ids with relevant_ids); fields found: {', '.join(records.fields)}",
            source=records.source, field="fields")
    metrics = [m for m in values if m != "success"]
    scores: dict[str, dict[str, Score]] = {}
    task_success: dict[str, Score] = {}
    failures: dict[str, Score] = {}
    latency_rows, failure_rows = [], []
    groups = {s: np.flatnonzero(systems == s) for s in order}
    for system, rows in groups.items():
        ids = query_ids[rows].tolist()
        scores[system] = {m: Score(values[m][rows], {
            "metric": m, "system": system, "compat": compat,
            "source": _source_of(sources, system, m),
            **({"inputs": sources[system]["inputs:" + m]} if "inputs:" + m in sources.get(system, {}) else {}),
            "convention": "value given in the file (e.g. a RAGAS export, or a judge's column), averaged where defined"
            + ("; lower is better" if m in LOWER_IS_BETTER else "")
            if _source_of(sources, system, m).startswith(("given in the file", "filled by"))
            else _convention(m, k)}, query_ids=ids) for m in metrics}
        if "success" in values:
            outcome = values["success"][rows]
            task_success[system] = task_success_rate(outcome, confidence=confidence)
        if has_stage:
            stages = stage_column.take(pa.array(rows))
            failures[system] = failure_attribution(stages, taxonomy=failure_stages)
            n_unattributed = 0
            if "success" in values:
                n_unattributed = int(np.sum((values["success"][rows] == 0) & ~stages.is_valid().to_numpy(zero_copy_only=False)))
                if n_unattributed:
                    warnings.append(f"{system}: {n_unattributed} failed requests have no failure_stage; "
                                    "they are not in the failure shares")
            for stage, info in failures[system].params["stages"].items():
                failure_rows.append({"system": system, "stage": stage, "count": info["count"], "share": info["share"]})
        for column, stage in latencies.items():
            col = table.column(column).combine_chunks().take(pa.array(rows))
            summary = latency_summary(col, unit="ms")
            latency_rows.append({"system": system, "stage": stage, "unit": "ms", "n": summary["mean"].params["n_valid"],
                                 **{name: float(summary[name]) for name in LATENCY_STATISTICS}})
    return RecordsReport(
        per_query=per_query,
        metrics=metrics,
        scores=scores,
        task_success=task_success,
        failures=failures,
        latency_table=pd.DataFrame(latency_rows, columns=["system", "stage", "unit", "n", *LATENCY_STATISTICS]),
        failure_table=pd.DataFrame(failure_rows, columns=["system", "stage", "count", "share"]),
        params={"k": k, "rel_level": rel_level, "compat": compat, "confidence": confidence, "given_metrics": given,
                "metric_sources": {s: {m: _source_of(sources, s, m) for m in metrics} for s in order},
                "failure_stages": list(failure_stages), "n_records": len(records), "systems": order,
                "source": records.source},
        conventions=dict(CONVENTIONS),
        warnings=warnings,
    )


def _attributed_stages(records: Records, given: pa.Array | None, rel_level: float) -> pa.Array:
    """The given stages, with the stage attribute_failures gives each request that has none.

    Only the requests that may have failed without a given stage go through the rules: a request
    with a given stage keeps it, and one that succeeded (``success`` true, no span in error) did
    not fail, which is what attribute_failures says of it too."""
    table = records.table
    n = table.num_rows
    stages = given.cast(pa.string()) if given is not None else pa.nulls(n, pa.string())
    candidates = ~stages.is_valid().to_numpy(zero_copy_only=False)
    if "success" in table.column_names:
        succeeded = table.column("success").combine_chunks().fill_null(False).to_numpy(zero_copy_only=False)
        if "failed_span_kind" in table.column_names:
            succeeded = succeeded & ~table.column("failed_span_kind").combine_chunks().is_valid().to_numpy(
                zero_copy_only=False)
        candidates &= ~succeeded.astype(bool)
    rows = np.flatnonzero(candidates)
    if not len(rows):
        return stages
    subset = Records(table.take(pa.array(rows)), source=records.source)
    found = pa.array(attribute_failures(subset, rel_level=rel_level)["stage"].tolist(), pa.string())
    return pc.replace_with_mask(stages, pa.array(candidates), found)


def _convention(metric: str, k: int) -> str:
    """The registry's conventions of a computed metric (``critique_<name>``: aspect critique's)."""
    entry = METRICS.get("aspect_critique" if metric.startswith(CRITIQUE_PREFIX) else metric)
    if entry is not None and entry.kind != "ranking":
        return entry.convention
    return CONVENTIONS.get(metric) or f"ranking metric at k={k}"


def _failure_stages(records: Records, rel_level: float, failure_stages: Sequence[str],
                    warnings: list) -> pa.Array | None:
    """Each request's failure stage: the given ``failure_stage``, else the stage its judgements show
    (:func:`evalsuite.attribute_failures`, what the Failures page shows); None when no request failed.

    Records from :func:`evalsuite.with_attributed_failures` (a ``failure_attributed`` column) are
    taken as they are; so is a taxonomy without the stages the attribution rules use."""
    table = records.table
    given = table.column("failure_stage").combine_chunks() if "failure_stage" in table.column_names else None
    rule_stages = set(FAILURE_STAGES) <= {str(s).strip().lower() for s in failure_stages}
    if "failure_attributed" in table.column_names or not rule_stages:
        if not rule_stages and given is not None:
            warnings.append("the failure taxonomy lacks the stages the attribution rules use: only given "
                            "failure_stage values are counted")
        stages = given
    else:
        stages = _attributed_stages(records, given, rel_level)
    if stages is None or stages.null_count == len(stages):
        return None
    return stages
