"""Tables for per-request records and distributions: pre-binned histograms and ECDFs (a million
values stay a few hundred points), failed requests, quality against latency, RAG quality.
Pure functions over EvalSuite's results; never imports streamlit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalSuiteError

__all__ = ['binned_histogram', 'ecdf_points', 'sample_rows', 'failed_requests', 'quality_vs_latency', 'is_binary', 'rate_by_latency_bin', 'rag_quality_table', 'latency_left_out', 'latency_percentiles', 'failure_mix']


# ----------------------------------------------------------------------------------------------
# Distributions: pre-binned so a million values stay a few hundred points.


def _finite(values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array[np.isfinite(array)]


def binned_histogram(frame: pd.DataFrame, value: str, group: str | None = None, bins: int = 60,
                     log: bool = False) -> pd.DataFrame:
    """Histogram counts per group on shared bin edges, computed with :func:`numpy.histogram`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with a numeric ``value`` column (NaN and infinities are skipped).
    value : str
        Column to bin (e.g. ``latency_ms``).
    group : str, optional
        Column whose distinct values get one histogram each (e.g. ``system``).
    bins : int
        Number of bins over the overall [min, max] of the finite values.
    log : bool
        Use log-spaced edges (positive values only; others are skipped), for heavy tails.

    Returns
    -------
    pandas.DataFrame
        Columns ``group`` (when given), ``left``, ``right``, ``center``, ``count``, ``share``
        (count / the group's number of finite values): ``bins`` rows per group.
    """
    if bins < 1:
        raise EvalSuiteError("bins must be a positive integer", field="bins", value=bins)
    values = frame[value].to_numpy(dtype=np.float64, na_value=np.nan)
    keep = np.isfinite(values) & ((values > 0) if log else True)
    if not keep.any():
        return pd.DataFrame(columns=([group] if group else []) + ["left", "right", "center", "count", "share"])
    lo, hi = float(values[keep].min()), float(values[keep].max())
    if hi == lo:
        hi = lo + (abs(lo) or 1.0) * 1e-9 + 1e-12
    edges = np.geomspace(lo, hi, bins + 1) if log else np.linspace(lo, hi, bins + 1)
    groups = [(None, values[keep])] if group is None else [
        (name, part[np.isfinite(part) & ((part > 0) if log else True)])
        for name, part in ((name, sub[value].to_numpy(dtype=np.float64, na_value=np.nan))
                           for name, sub in frame.groupby(group, sort=True, observed=True))]
    parts = []
    for name, part in groups:
        counts, _ = np.histogram(part, bins=edges)
        piece = pd.DataFrame({
            "left": edges[:-1], "right": edges[1:],
            "center": np.sqrt(edges[:-1] * edges[1:]) if log else (edges[:-1] + edges[1:]) / 2,
            "count": counts.astype(np.int64),
            "share": counts / part.size if part.size else np.zeros(bins),
        })
        if group is not None:
            piece.insert(0, group, name)
        parts.append(piece)
    return pd.concat(parts, ignore_index=True)


def ecdf_points(frame: pd.DataFrame, value: str, group: str | None = None, max_points: int = 400) -> pd.DataFrame:
    """Points on the empirical CDF of ``value`` per group, at most ``max_points`` per group.

    The points lie exactly on the ECDF: the sorted values at evenly spaced ranks (always the
    smallest and the largest), each with ``p`` = share of values <= it (ties counted in
    full). Up to ``max_points`` values, every value is a point.

    Returns
    -------
    pandas.DataFrame
        Columns ``group`` (when given), ``value``, ``p`` (share of values <= value).
    """
    if max_points < 2:
        raise EvalSuiteError("max_points must be at least 2", field="max_points", value=max_points)
    groups = [(None, frame[value])] if group is None else list(frame.groupby(group, sort=True, observed=True)[value])
    parts = []
    for name, series in groups:
        data = np.sort(_finite(series.to_numpy(dtype=np.float64, na_value=np.nan)))
        n = data.size
        if n == 0:
            continue
        idx = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(np.int64))
        x = data[idx]
        # With ties, the ECDF at x counts every copy of x: share of values <= x.
        piece = pd.DataFrame({"value": x, "p": np.searchsorted(data, x, side="right") / n})
        if group is not None:
            piece.insert(0, group, name)
        parts.append(piece)
    if not parts:
        return pd.DataFrame(columns=([group] if group else []) + ["value", "p"])
    return pd.concat(parts, ignore_index=True)


def sample_rows(frame: pd.DataFrame, max_rows: int = 5000, seed: int = 0) -> tuple[pd.DataFrame, bool]:
    """At most ``max_rows`` rows of ``frame`` (a seeded uniform sample, kept in frame order).

    Returns the rows and whether they are a sample, so a chart can say so.
    """
    if len(frame) <= max_rows:
        return frame, False
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(len(frame), size=max_rows, replace=False))
    return frame.iloc[keep], True


# ----------------------------------------------------------------------------------------------
# Per-request records.


def _stage_key(labels: pd.Series) -> pd.Series:
    # The reader accepts failure stages case-insensitively and with surrounding spaces (as
    # evalsuite.failure_attribution counts them): compare on the same normal form.
    return labels.astype("string").str.strip().str.lower()


def failed_requests(frame: pd.DataFrame, system: str | None = None, stage: str | None = None,
                    columns: Sequence[str] = ("system", "query_id", "failure_stage", "failure_attributed", "failure_rule",
                                              "failure_reason", "error")) -> pd.DataFrame:
    """The failed requests (a non-null ``failure_stage``) of a records frame, optionally one
    system's and one stage's, with the columns that explain them (those present).

    ``stage`` matches labels case-insensitively and ignoring surrounding whitespace
    (``"Retrieval"`` and ``" retrieval "`` are the stage ``retrieval``), as the reader and
    :func:`evalsuite.failure_attribution` do; the labels are listed as the file has them.
    """
    if "failure_stage" not in frame:
        return pd.DataFrame(columns=[c for c in columns if c in frame.columns])
    mask = frame["failure_stage"].notna().to_numpy().copy()
    if system is not None and "system" in frame:
        mask &= (frame["system"] == system).to_numpy(dtype=bool, na_value=False)
    if stage is not None:
        wanted = str(stage).strip().lower()
        mask &= (_stage_key(frame["failure_stage"]) == wanted).to_numpy(dtype=bool, na_value=False)
    return frame.loc[mask, [c for c in columns if c in frame.columns]].reset_index(drop=True)


def quality_vs_latency(per_query: pd.DataFrame, metric: str, latency: str = "latency_ms") -> pd.DataFrame:
    """Rows of a records report's per-query table where both ``metric`` and ``latency`` are
    defined: columns ``system``, ``query_id``, ``metric``, ``latency``."""
    for col in (metric, latency):
        if col not in per_query:
            raise EvalSuiteError(f"no {col!r} column in the per-request table", field=col)
    both = per_query[metric].notna().to_numpy() & per_query[latency].notna().to_numpy()
    return per_query.loc[both, ["system", "query_id", metric, latency]].reset_index(drop=True)


def is_binary(values) -> bool:
    """True when every defined (non-NaN) value is 0 or 1 and there is at least one: a success
    flag, or a judgement with one claim per request."""
    array = np.asarray(values, dtype=np.float64)
    array = array[~np.isnan(array)]
    return bool(array.size) and bool(np.isin(array, (0.0, 1.0)).all())


def rate_by_latency_bin(frame: pd.DataFrame, metric: str, latency: str = "latency_ms", group: str = "system",
                        bins: int = 10, confidence: float = 0.95) -> pd.DataFrame:
    """Share of requests whose 0/1 ``metric`` is 1, per latency bin and group, with its Wilson
    interval (:func:`evalsuite.task_success_rate`).

    The bins are shared by every group: quantiles of all finite latencies (equal-count bins over
    the pooled requests, :func:`numpy.quantile`; duplicate edges merged), left-closed, the last
    also right-closed. Rows whose metric or latency is missing are left out.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``group``, ``metric`` (0, 1 or NaN) and ``latency`` (a number, NaN when unknown).
    metric, latency, group : str
        Column names.
    bins : int
        Number of quantile bins before merging duplicate edges (at least 1).
    confidence : float
        Level of the Wilson interval.

    Returns
    -------
    pandas.DataFrame
        Columns ``group``, ``bin`` (0-based), ``left``, ``right`` (bin edges, latency unit),
        ``n`` (requests), ``successes``, ``rate`` (successes / n), ``ci_low``, ``ci_high``; one
        row per group and non-empty bin, sorted by group then bin.

    Raises
    ------
    EvalSuiteError
        ``bins`` < 1, a column is missing, or ``metric`` holds a value other than 0, 1 or NaN.
    """
    from ..metrics.operational import task_success_rate

    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise EvalSuiteError("bins must be a positive integer", field="bins", value=bins)
    for col in (group, metric, latency):
        if col not in frame:
            raise EvalSuiteError(f"no {col!r} column in the per-request table", field=col)
    values = frame[metric].to_numpy(dtype=np.float64, na_value=np.nan)
    times = frame[latency].to_numpy(dtype=np.float64, na_value=np.nan)
    keep = ~np.isnan(values) & np.isfinite(times)
    columns = [group, "bin", "left", "right", "n", "successes", "rate", "ci_low", "ci_high"]
    if not keep.any():
        return pd.DataFrame(columns=columns)
    if not np.isin(values[keep], (0.0, 1.0)).all():
        raise EvalSuiteError(f"{metric} holds values other than 0 and 1", field=metric)
    edges = np.unique(np.quantile(times[keep], np.linspace(0.0, 1.0, bins + 1)))
    if edges.size == 1:
        edges = np.array([edges[0], edges[0]])
    index = np.clip(np.searchsorted(edges, times[keep], side="right") - 1, 0, edges.size - 2)
    kept = pd.DataFrame({group: frame[group].to_numpy()[keep], "bin": index, "value": values[keep]})
    rows = []
    for (name, b), part in kept.groupby([group, "bin"], sort=True, observed=True):
        score = task_success_rate(part["value"].to_numpy(dtype=np.float64), confidence=confidence)
        rows.append({group: name, "bin": int(b), "left": float(edges[b]), "right": float(edges[b + 1]),
                     "n": int(score.params["n"]), "successes": int(score.params["successes"]), "rate": float(score),
                     "ci_low": float(score.params["ci_low"]), "ci_high": float(score.params["ci_high"])})
    return pd.DataFrame(rows, columns=columns)


def rag_quality_table(report, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Long table of a records report's quality metrics: one row per system and metric.

    Parameters
    ----------
    report : RecordsReport
        From :func:`evalsuite.evaluate_records`.
    metrics : sequence of str, optional
        Which metrics (default ``report.metrics`` then ``success``).

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``metric``, ``mean``, ``coverage``, ``n_defined``, ``n``,
        ``ci_low``, ``ci_high``, ``source`` (where that system's value comes from: "computed
        from the judgements", "given in the file" - a RAGAS export's own column -, "computed
        from the records" or "none" - also when no record of the system has a value -; decided
        per system; for a metric with optional inputs, which it used, e.g. "(with
        answer_similarity)"). ``coverage`` is NaN for a system with no requests (a share of none). The ``success`` rows come from
        ``report.task_success`` (the success rate with its Wilson interval); other metrics have
        no interval (NaN).
    """
    names = list(metrics) if metrics is not None else list(report.metrics) + ["success"]
    rows = []
    for system, scores in report.scores.items():
        for metric in names:
            if metric == "success" and system in report.task_success:
                score = report.task_success[system]
                ci = (float(score.params["ci_low"]), float(score.params["ci_high"]))
            elif metric in scores:
                score, ci = scores[metric], (np.nan, np.nan)
            else:
                continue
            n, n_defined = int(score.params.get("n", 0)), int(score.params.get("n_defined", 0))
            # No value at all: no source to name, and a share of no requests is undefined, not 0.
            source = ("none" if n_defined == 0 and "n_defined" in score.params
                      else str(score.params.get("source", "computed from the records"))
                      + (f" ({score.params['inputs']})" if score.params.get("inputs") else ""))
            rows.append({"system": system, "metric": metric, "mean": float(score),
                         "coverage": float(score.params.get("coverage", np.nan)) if n else np.nan,
                         "n_defined": n_defined, "n": n, "ci_low": ci[0], "ci_high": ci[1], "source": source})
    return pd.DataFrame(rows, columns=["system", "metric", "mean", "coverage", "n_defined", "n", "ci_low", "ci_high",
                                       "source"])


def latency_left_out(per_query: pd.DataFrame, latency: str, metric: str | None = None,
                     systems: Sequence[str] | None = None) -> pd.DataFrame:
    """Per system: how many requests a latency chart shows and how many it leaves out, and why.

    A request is left out when it has no ``latency`` value (split into failed requests,
    ``success`` = 0, and the others) or, for a quality-against-latency chart, no ``metric``
    value. A failed request that has a latency is shown (and counted in ``shown``).

    Parameters
    ----------
    per_query : pandas.DataFrame
        A records report's per-request table (``system``, the latency column, optionally
        ``success`` 1/0/NaN and ``metric``).
    latency : str
        The latency column, e.g. ``latency_ms``.
    metric : str, optional
        The quality column of a quality-against-latency chart.
    systems : sequence of str, optional
        The systems shown (default all, in table order).

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``requests``, ``shown``, ``failed shown`` (failed requests with a
        latency), ``left out: failed, no latency``, ``left out: no latency`` (not failed),
        and with ``metric`` ``left out: no <metric>`` (requests with a latency but no value).

    Raises
    ------
    EvalSuiteError
        A named column is missing.

    Examples
    --------
    >>> table = pd.DataFrame({"system": ["a", "a", "a", "a"], "latency_ms": [120.0, None, 300.0, None],
    ...                       "success": [1.0, 0.0, 0.0, 1.0]})
    >>> latency_left_out(table, "latency_ms").iloc[0].to_dict()  # request 2 failed with no latency
    {'system': 'a', 'requests': 4, 'shown': 2, 'failed shown': 1, 'left out: failed, no latency': 1, 'left out: no latency': 1}
    """
    for col in ("system", latency) + ((metric,) if metric else ()):
        if col not in per_query:
            raise EvalSuiteError(f"no {col!r} column in the per-request table", field=col)
    frame = per_query if systems is None else per_query[per_query["system"].isin(list(systems))]
    has_latency = frame[latency].notna().to_numpy()
    failed = (frame["success"] == 0).to_numpy() if "success" in frame else np.zeros(len(frame), dtype=bool)
    has_metric = frame[metric].notna().to_numpy() if metric else np.ones(len(frame), dtype=bool)
    order = list(systems) if systems is not None else frame["system"].drop_duplicates().tolist()
    names = frame["system"].to_numpy()
    rows = []
    for system in order:
        mine = names == system
        row = {"system": system, "requests": int(mine.sum()),
               "shown": int((mine & has_latency & has_metric).sum()),
               "failed shown": int((mine & has_latency & has_metric & failed).sum()),
               "left out: failed, no latency": int((mine & ~has_latency & failed).sum()),
               "left out: no latency": int((mine & ~has_latency & ~failed).sum())}
        if metric:
            row[f"left out: no {metric}"] = int((mine & has_latency & ~has_metric).sum())
        rows.append(row)
    columns = ["system", "requests", "shown", "failed shown", "left out: failed, no latency", "left out: no latency"]
    return pd.DataFrame(rows, columns=columns + ([f"left out: no {metric}"] if metric else []))


def latency_percentiles(per_query: pd.DataFrame, columns: dict, successful_only: bool = False) -> pd.DataFrame:
    """Latency percentiles per system and stage from a records report's per-request table,
    optionally over the successful requests only (``success`` = 1), as LLMPerf's summaries are.

    Parameters
    ----------
    per_query : pandas.DataFrame
        ``system``, the latency columns, and ``success`` when ``successful_only``.
    columns : dict of str -> str
        Latency column -> stage name (``{"latency_ms": "end_to_end"}``).
    successful_only : bool
        Leave out requests whose ``success`` is not 1 (unknown ones too).

    Returns
    -------
    pandas.DataFrame
        Columns system, stage, unit, n, mean, p50, p90, p95, p99 (as
        ``RecordsReport.latency_table``), computed by :func:`evalsuite.latency_summary`.

    Examples
    --------
    >>> table = pd.DataFrame({"system": ["a"] * 3, "latency_ms": [100.0, 200.0, 900.0], "success": [1, 1, 0]})
    >>> latency_percentiles(table, {"latency_ms": "end_to_end"}, successful_only=True)[["n", "mean", "p50"]]
       n   mean    p50
    0  2  150.0  150.0
    """
    from ..metrics.operational import LATENCY_STATISTICS, latency_summary

    frame = per_query
    if successful_only:
        if "success" not in per_query:
            raise EvalSuiteError("no 'success' column: cannot keep the successful requests only", field="success")
        frame = per_query[per_query["success"] == 1]
    rows = []
    for system in per_query["system"].drop_duplicates().tolist():
        part = frame[frame["system"] == system]
        for column, stage in columns.items():
            values = pa.array(part[column].to_numpy(dtype=np.float64, na_value=np.nan), from_pandas=True)  # NaN: None
            summary = latency_summary(values, unit="ms")
            rows.append({"system": system, "stage": stage, "unit": "ms", "n": summary["mean"].params["n_valid"],
                         **{name: float(summary[name]) for name in LATENCY_STATISTICS}})
    return pd.DataFrame(rows, columns=["system", "stage", "unit", "n", *LATENCY_STATISTICS])


def failure_mix(report, systems: Sequence[str]) -> pd.DataFrame:
    """How the failure mix shifts between systems: per stage, each system's failed-request count
    and share of its failed requests, and the shift of the last system's share against the first's.

    Parameters
    ----------
    report : RecordsReport
        From :func:`evalsuite.evaluate_records` (its ``failures``: counts per stage).
    systems : sequence of str
        Two (or more) systems of the report, the first the baseline.

    Returns
    -------
    pandas.DataFrame
        One row per stage of the taxonomy (in taxonomy order): ``stage``, then per system
        ``<system> count`` and ``<system> share`` (of that system's failed requests; NaN when
        it has none), then ``shift`` = last share - first share.

    Raises
    ------
    EvalSuiteError
        Fewer than two systems, or a system without failure data.

    Examples
    --------
    >>> import evalsuite as es
    >>> rows = [{"query_id": "1", "system": "a", "failure_stage": "retrieval"},
    ...         {"query_id": "2", "system": "a", "failure_stage": "generation"},
    ...         {"query_id": "1", "system": "b", "failure_stage": "generation"}]
    >>> report = es.evaluate_records(es.Records.from_rows(rows))
    >>> failure_mix(report, ["a", "b"]).head(3)
            stage  a count  a share  b count  b share  shift
    0   retrieval        1      0.5        0      0.0   -0.5
    1    evidence        0      0.0        0      0.0    0.0
    2  generation        1      0.5        1      1.0    0.5
    """
    systems = list(systems)
    if len(systems) < 2:
        raise EvalSuiteError("the failure mix compares at least two systems", field="systems", value=systems)
    for system in systems:
        if system not in report.failures:
            raise EvalSuiteError("no failure data for this system (no failure_stage or success in its records)",
                                 field="system", value=system)
    stages = list(report.failures[systems[0]].params["stages"])
    for system in systems[1:]:
        stages += [s for s in report.failures[system].params["stages"] if s not in stages]
    table = pd.DataFrame({"stage": stages})
    shares = []
    for system in systems:
        info = report.failures[system].params["stages"]
        counts = np.array([info.get(s, {}).get("count", 0) for s in stages], dtype=np.int64)
        total = counts.sum()
        share = counts / total if total else np.full(len(stages), np.nan)
        table[f"{system} count"] = counts
        table[f"{system} share"] = share
        shares.append(share)
    table["shift"] = shares[-1] - shares[0]
    return table
