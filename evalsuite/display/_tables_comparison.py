"""Tables of a comparison of systems (:class:`~evalsuite.stats.comparison_report.ComparisonReport`):
one row per system and metric, systems by metrics with their significance marks, and each
system's difference from the baseline with its interval. Pure functions; never imports streamlit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import EvalSuiteError

__all__ = ["comparison_rows", "systems_by_metrics", "differences_from_baseline", "pairwise_differences"]


def comparison_rows(report) -> pd.DataFrame:
    """The rows of a :class:`evalsuite.ComparisonReport` in a page-wide shape: 12 narrow columns.

    Parameters
    ----------
    report : ComparisonReport

    Returns
    -------
    pandas.DataFrame
        ``metric``, ``baseline``, ``system`` (str); ``mean baseline``, ``mean system``, ``diff``
        (float); ``95% CI`` (text ``[low, high]``, 4 decimals, the confidence level of the
        report); ``p``, ``p adj`` (float); ``sig`` (``"*"`` when significant, else empty);
        ``effect`` (float); ``W/T/L`` (text); ``n`` (int). Every number is the report's own
        (``report.table`` holds them all, and its CSV has every column).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalsuite import compare_per_query
    >>> ids = ["q1", "q2", "q3", "q4"]
    >>> old = pd.DataFrame({"mrr": [0.5, 0.5, 0.5, 0.5]}, index=ids)
    >>> new = pd.DataFrame({"mrr": [1.0, 1.0, 1.0, 0.5]}, index=ids)
    >>> rows = comparison_rows(compare_per_query({"old": old, "new": new}, n_resamples=100))
    >>> rows[["system", "diff", "95% CI", "W/T/L", "n"]].to_dict("records")
    [{'system': 'new', 'diff': 0.375, '95% CI': '[+0.1250, +0.5000]', 'W/T/L': '3/1/0', 'n': 4}]
    """
    t = report.table
    level = f"{report.params['confidence']:.0%} CI"
    return pd.DataFrame({
        "metric": t["metric"].astype(str), "baseline": t["baseline"].astype(str), "system": t["system"].astype(str),
        "mean baseline": t["mean_baseline"], "mean system": t["mean_system"], "diff": t["diff"],
        level: [f"[{lo:+.4f}, {hi:+.4f}]" for lo, hi in zip(t["ci_low"], t["ci_high"])],
        "p": t["p_value"], "p adj": t["p_adjusted"], "sig": np.where(t["significant"], "*", ""),
        "effect": t["effect_size"], "W/T/L": [f"{w}/{ti}/{lo}" for w, ti, lo in zip(t["wins"], t["ties"], t["losses"])],
        "n": t["n_queries"].astype(int),
    })


def systems_by_metrics(report, digits: int = 4) -> pd.DataFrame:
    """Systems x metrics: each system's mean with its significance mark against the baseline.

    A mean is followed by ``▲`` when the system is significantly better than the baseline on
    that metric (after the report's correction, in the metric's direction: lower latency is
    better) and ``▼`` when significantly worse; nothing otherwise. The baseline's row is
    ``<name> (baseline)``. Only comparisons with the baseline are marked.

    Parameters
    ----------
    report : ComparisonReport
    digits : int
        Decimals of the means.

    Returns
    -------
    pandas.DataFrame
        Index ``system`` (baseline first), one text column per metric.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalsuite import compare_per_query
    >>> ids = [f"q{i}" for i in range(8)]
    >>> base = pd.DataFrame({"ndcg@10": [0.2] * 8}, index=ids)
    >>> worse = pd.DataFrame({"ndcg@10": [0.1] * 8}, index=ids)
    >>> same = pd.DataFrame({"ndcg@10": [0.1, 0.3] * 4}, index=ids)
    >>> systems_by_metrics(compare_per_query({"bm25": base, "x": worse, "y": same}, test="t-test"))
                     ndcg@10
    system
    bm25 (baseline)   0.2000
    x               0.1000 ▼
    y                 0.2000
    """
    from ..stats.comparison_report import higher_is_better

    t = report.table
    baseline = report.params["baseline"]
    marks = {}
    for r in t[(t["baseline"] == baseline) & t["significant"] & (t["diff"] != 0)].itertuples(index=False):
        up = (r.diff > 0) == higher_is_better(r.metric)
        marks[(str(r.system), str(r.metric))] = " ▲" if up else " ▼"
    rows = {}
    for system in report.systems:
        label = f"{system} (baseline)" if system == baseline else str(system)
        rows[label] = {m: f"{report.system_means.loc[system, m]:.{digits}f}" + marks.get((system, m), "")
                       for m in report.metrics}
    frame = pd.DataFrame.from_dict(rows, orient="index")[list(report.metrics)]
    frame.index.name = "system"
    return frame


def differences_from_baseline(report, metric: str) -> pd.DataFrame:
    """Queries x systems: each system's per-query difference from the baseline on ``metric``.

    Rows are sorted by the mean difference over the systems, ascending (the queries where the
    systems lose most first; NaN last, ties by query id); columns are the systems other than the
    baseline, in report order. A value is NaN where either system has none.

    Parameters
    ----------
    report : ComparisonReport
    metric : str
        One of ``report.metrics``.

    Returns
    -------
    pandas.DataFrame
        Index ``query_id`` (str), float columns named by system.

    Raises
    ------
    EvalSuiteError
        ``metric`` is not in the report.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalsuite import compare_per_query
    >>> ids = ["q1", "q2", "q3"]
    >>> base = pd.DataFrame({"mrr": [0.5, 0.5, 1.0]}, index=ids)
    >>> a = pd.DataFrame({"mrr": [1.0, 0.5, 0.5]}, index=ids)
    >>> b = pd.DataFrame({"mrr": [1.0, 0.0, 1.0]}, index=ids)
    >>> differences_from_baseline(compare_per_query({"base": base, "a": a, "b": b}, n_resamples=10), "mrr")
                a    b
    query_id
    q2        0.0 -0.5
    q3       -0.5  0.0
    q1        0.5  0.5
    """
    if metric not in report.per_query:
        raise EvalSuiteError(f"metric {metric!r} is not in the comparison", field="metric", value=metric)
    table = report.per_query[metric]
    baseline = report.params["baseline"]
    others = [s for s in report.systems if s != baseline]
    diff = pd.DataFrame({s: table[s].to_numpy(dtype=np.float64) - table[baseline].to_numpy(dtype=np.float64)
                         for s in others}, index=pd.Index(table.index.astype(str), name="query_id"))
    order = pd.DataFrame({"mean": diff.mean(axis=1, skipna=True), "id": diff.index})
    order = order.sort_values(["mean", "id"], kind="stable", na_position="last")
    return diff.loc[order["id"]]


def pairwise_differences(report, metric: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Systems x systems: the difference in mean ``metric`` of each pair compared, row minus column.

    Made for a comparison of every pair (``pairs="all"``); with a baseline only, the cells of the
    pairs not compared are NaN. The cell (row ``s``, column ``t``) is ``mean(s) - mean(t)`` over
    the queries the pair shares (the report's ``diff`` of the pair, negated when the report
    compared ``t`` against ``s``), so the matrix is antisymmetric; the diagonal is NaN.

    Parameters
    ----------
    report : ComparisonReport
    metric : str
        One of ``report.metrics``.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The differences (float) and whether each pair's difference is significant after the
        report's correction (bool; False where not compared). Both have index and columns
        ``report.systems`` in report order.

    Raises
    ------
    EvalSuiteError
        ``metric`` is not in the report.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalsuite import compare_per_query
    >>> ids = [f"q{i}" for i in range(6)]
    >>> runs = {"a": pd.DataFrame({"mrr": [0.5] * 6}, index=ids),
    ...         "b": pd.DataFrame({"mrr": [1.0] * 6}, index=ids),
    ...         "c": pd.DataFrame({"mrr": [0.5, 1.0] * 3}, index=ids)}
    >>> diff, significant = pairwise_differences(compare_per_query(runs, pairs="all", test="t-test"), "mrr")
    >>> diff
          a     b     c
    a   NaN -0.50 -0.25
    b  0.50   NaN  0.25
    c  0.25 -0.25   NaN
    >>> bool(significant.loc["b", "a"])
    True
    """
    if metric not in report.per_query:
        raise EvalSuiteError(f"metric {metric!r} is not in the comparison", field="metric", value=metric)
    systems = [str(s) for s in report.systems]
    diff = pd.DataFrame(np.nan, index=systems, columns=systems)
    significant = pd.DataFrame(False, index=systems, columns=systems)
    t = report.table
    for r in t[t["metric"] == metric].itertuples(index=False):
        first, second = str(r.baseline), str(r.system)
        diff.loc[second, first] = float(r.diff)
        diff.loc[first, second] = -float(r.diff)
        significant.loc[second, first] = significant.loc[first, second] = bool(r.significant)
    return diff, significant
