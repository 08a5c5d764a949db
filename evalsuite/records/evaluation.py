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
from ..metrics.judgement_lists import CRITIQUE_PREFIX
from ..metrics.operational import (
    FAILURE_STAGES, LATENCY_STATISTICS, failure_attribution, latency_summary, task_success_rate,
)
from ..metrics.registry import GIVEN_NAMES, LOWER_IS_BETTER, METRICS
from ..score import Score
from .attribution import attribute_failures
from .judged_by import filled_label, merge_summaries
from .per_record import (
    conform_table, declared_scores, latency_columns, merge_surveys, per_record_metrics, survey_records,
    system_names,
)
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


def _source_of(sources: dict, system: str, metric: str) -> str:
    """Where a system's value of a metric comes from (ranking metrics and success: the records)."""
    found = sources.get(system, {}).get(metric)
    if found:
        return found
    if metric in GIVEN_NAMES:
        return "none"  # neither judgements nor a given value for this system
    return "computed from the records"



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
    scope = merge_surveys([survey_records(records)])
    part = evaluate_part(records, scope, k=k, rel_level=rel_level, compat=compat, failure_stages=failure_stages,
                         keep_values=True)
    return finish_report([part], scope, warnings=list(records.warnings), source=records.source, fields=records.fields,
                         k=k, rel_level=rel_level, compat=compat, confidence=confidence,
                         failure_stages=failure_stages, per_query=part.per_query)


@dataclass
class RecordsPart:
    """What one part of the records gives the per-system summaries: exact sums and counts, not
    per-record values (except the latencies, whose percentiles need every value, in record order)."""

    n_records: int
    metrics: list
    has_success: bool
    has_stage: bool
    latencies: dict
    warnings: list
    given: list
    sources: dict
    n: dict = field(default_factory=dict)  # system -> records
    sums: dict = field(default_factory=dict)  # system -> metric -> ExactSum of the defined values
    success: dict = field(default_factory=dict)  # system -> (successes, failures, unknown)
    stages: dict = field(default_factory=dict)  # system -> counts per stage of the taxonomy
    unattributed: dict = field(default_factory=dict)  # system -> failed requests without a stage
    latency: dict = field(default_factory=dict)  # (system, column) -> float64 Arrow array (nulls kept)
    columns: list = field(default_factory=list)  # of the per-record table
    values: dict | None = None  # system -> metric -> (values, query ids): one machine keeps them
    stage_arrays: dict = field(default_factory=dict)  # system -> its requests' stages (one machine)
    per_query: pd.DataFrame | None = None


def evaluate_part(records: Records, scope, *, k: int, rel_level: float, compat: str | None,
                  failure_stages: Sequence[str], keep_values: bool = False) -> RecordsPart:
    """Per-record values of (a part of) the records, and their per-system sums and counts.

    ``scope`` (:func:`~evalsuite.records.per_record.merge_surveys`) makes the per-system choices
    those of all the records; ``keep_values`` keeps the per-record values (one machine)."""
    from ..utils.exact_sum import ExactSum

    table = conform_table(records.table, scope)
    if table is not records.table:
        records = Records(table, source=records.source, warnings=records.warnings, aliases=records.aliases,
                          extra_columns=records.extra_columns, score_columns=records.score_columns)
    warnings: list[str] = []
    given: list[str] = []
    sources: dict[str, dict[str, str]] = {}
    values = per_record_metrics(table, scope, compat, k, rel_level, warnings, given, sources)
    declared_scores(table, scope, values, warnings, given, sources)
    latencies = latency_columns(table)
    systems = system_names(table).to_numpy(zero_copy_only=False)
    query_ids = table.column("query_id").to_numpy(zero_copy_only=False)
    per_query = pd.DataFrame({"system": systems, "query_id": query_ids})
    for name, arr in values.items():
        per_query[name] = arr
    latency_arrays = {name: table.column(name).combine_chunks().cast(pa.float64()) for name in latencies}
    for name, arr in latency_arrays.items():
        per_query[name] = arr.to_numpy(zero_copy_only=False)
    stage_column = _failure_stages(records, rel_level, failure_stages, warnings)
    metrics = [m for m in values if m != "success"]
    part = RecordsPart(n_records=table.num_rows, metrics=metrics, has_success="success" in values,
                       has_stage=stage_column is not None, latencies=latencies, warnings=warnings, given=given,
                       sources=sources, columns=list(per_query.columns), values={} if keep_values else None,
                       per_query=per_query)
    failed = values["success"] == 0 if "success" in values else None
    codes = pd.Categorical(systems, categories=list(scope.systems)).codes
    for number, system in enumerate(scope.systems):
        rows = np.flatnonzero(codes == number)
        part.n[system] = int(rows.size)
        part.sums[system] = {}
        for m in metrics:
            chosen = values[m][rows]
            part.sums[system][m] = ExactSum.of(chosen[~np.isnan(chosen)])
        if keep_values:
            ids = query_ids[rows].tolist()
            part.values[system] = {m: (values[m][rows], ids) for m in values}
        if "success" in values:
            outcome = values["success"][rows]
            successes = int(np.count_nonzero(outcome == 1))
            failures = int(np.count_nonzero(outcome == 0))
            part.success[system] = (successes, failures, int(rows.size) - successes - failures)
        if stage_column is not None:
            stages = stage_column.take(pa.array(rows))
            part.stages[system] = failure_attribution(stages, taxonomy=failure_stages).params["stages"]
            if keep_values:
                part.stage_arrays[system] = stages
            if failed is not None:
                part.unattributed[system] = int(np.sum(failed[rows] & ~stages.is_valid().to_numpy(zero_copy_only=False)))
        for column, arr in latency_arrays.items():
            part.latency[system, column] = arr.take(pa.array(rows))
    return part


def _merged_sources(parts: Sequence[RecordsPart]) -> dict:
    """The parts' sources (the same in every part: made from the scope), with each given metric's
    judge provenance summed over the parts and put in words (:func:`filled_label`)."""
    sources = {system: dict(per) for system, per in parts[0].sources.items()}
    for system, per in sources.items():
        for key in [k for k in per if k.startswith("provenance:")]:
            metric = key.removeprefix("provenance:")
            merged = merge_summaries(p.sources.get(system, {}).get(key) for p in parts)
            per[metric] = filled_label(merged) or "given in the file"
            del per[key]
    return sources


def _stage_labels(counts: dict, n: int) -> pa.Array:
    """Stage labels of ``n`` requests with these counts per stage (the rest did not fail)."""
    labels = pa.array([*counts, None], pa.string())
    index = np.repeat(np.arange(len(counts) + 1), [*counts.values(), n - sum(counts.values())])
    return labels.take(pa.array(index))


def finish_report(parts: Sequence[RecordsPart], scope, *, warnings: list, source, fields, k: int, rel_level: float,
                  compat: str | None, confidence: float, failure_stages: Sequence[str],
                  per_query: pd.DataFrame) -> RecordsReport:
    """The report from the parts' sums and counts (in the parts' order, which is the records' order).

    A metric's corpus value is the exact mean of its defined values (:class:`ExactSum`, rounded
    once), so one machine and any split of the records give the same number; the Wilson interval
    and failure shares come from the counts; the latency percentiles from every value, in order."""
    first = parts[0]
    warnings = [*warnings, *first.warnings]
    has_stage = any(p.has_stage for p in parts)
    if not first.metrics and not first.has_success and not first.latencies and not has_stage:
        raise EvalSuiteError(
            "these records hold no field any metric can use (judgement lists, success, failure_stage, latency_ms, "
            f"latency_<stage>_ms, or context_ids with relevant_ids); fields found: {', '.join(fields)}",
            source=source, field="fields")
    metrics, order = first.metrics, list(scope.systems)
    sources = _merged_sources(parts)
    kept = first.values if len(parts) == 1 else None
    scores: dict[str, dict[str, Score]] = {}
    task_success: dict[str, Score] = {}
    failures: dict[str, Score] = {}
    latency_rows, failure_rows = [], []
    for system in order:
        n = sum(p.n[system] for p in parts)
        scores[system] = {}
        for m in metrics:
            total = sum((p.sums[system][m] for p in parts[1:]), parts[0].sums[system][m])
            params = {"metric": m, "system": system, "compat": compat, "source": _source_of(sources, system, m),
                      **({"inputs": sources[system]["inputs:" + m]} if "inputs:" + m in sources.get(system, {}) else {}),
                      "convention": "value given in the file (e.g. a RAGAS export, or a judge's column), averaged where defined"
                      + ("; lower is better" if m in LOWER_IS_BETTER else "")
                      if _source_of(sources, system, m).startswith(("given in the file", "filled by"))
                      else _convention(m, k)}
            if kept is not None:
                per_record, ids = kept[system][m]
                scores[system][m] = Score(per_record, params, query_ids=ids, value=total.mean())
            else:  # the per-record values stay with the workers (or in their files)
                scores[system][m] = Score(np.empty(0), {**params, "n": n, "n_defined": total.count,
                                                        "coverage": total.count / n if n else 0.0}, value=total.mean())
        if first.has_success:
            if kept is not None:
                task_success[system] = task_success_rate(kept[system]["success"][0], confidence=confidence)
            else:
                s, f, u = (sum(p.success[system][i] for p in parts) for i in range(3))
                rate = task_success_rate(np.repeat([1.0, 0.0, np.nan], [s, f, u]), confidence=confidence)
                task_success[system] = Score(np.empty(0), rate.params, value=float(rate))
        if has_stage:
            counts = {stage: sum(p.stages[system][stage]["count"] for p in parts if p.has_stage)
                      for stage in [str(t).strip().lower() for t in failure_stages]}
            if kept is not None:
                score = failure_attribution(first.stage_arrays[system], taxonomy=failure_stages)
            else:
                score = failure_attribution(_stage_labels(counts, n), taxonomy=failure_stages)
                score = Score(np.empty(0), score.params, value=float(score))
            failures[system] = score
            # A part where nothing has a stage: each of its failed requests is one without a stage.
            n_unattributed = sum(p.unattributed[system] if p.has_stage else p.success[system][1]
                                 for p in parts) if first.has_success else 0
            if n_unattributed:
                warnings.append(f"{system}: {n_unattributed} failed requests have no failure_stage; "
                                "they are not in the failure shares")
            for stage, info in score.params["stages"].items():
                failure_rows.append({"system": system, "stage": stage, "count": info["count"], "share": info["share"]})
        for column, stage in first.latencies.items():
            arrays = [p.latency[system, column] for p in parts]
            col = arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)
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
        params={"k": k, "rel_level": rel_level, "compat": compat, "confidence": confidence,
                "given_metrics": first.given,
                "metric_sources": {s: {m: _source_of(sources, s, m) for m in metrics} for s in order},
                "failure_stages": list(failure_stages), "n_records": sum(p.n_records for p in parts),
                "systems": order, "source": source},
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
