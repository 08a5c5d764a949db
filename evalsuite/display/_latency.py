"""Latency views that stay readable with many systems: when to use a log axis, the system-level
quality-against-latency table with its Pareto front, and given percentiles beside computed ones
(pure pandas/numpy; the figures are in ``_figures_latency.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["log_axis_advised", "pareto_front", "system_quality_latency", "given_and_computed", "pick_shown",
           "MANY_SYSTEMS"]

# Above this many systems one overlaid chart is a tangle: small multiples instead.
MANY_SYSTEMS = 6


def log_axis_advised(values, decades: float = 2.0) -> bool:
    """Whether positive values span more than ``decades`` powers of ten (then a log axis shows
    them all; on a linear one most sit in the left tenth).

    >>> log_axis_advised([120, 900, 40_000]), log_axis_advised([100, 900, 5_000])
    (True, False)
    """
    array = np.asarray(values, dtype=np.float64)
    array = array[np.isfinite(array) & (array > 0)]
    return bool(array.size) and float(array.max() / array.min()) > 10.0 ** decades


def pareto_front(latency, quality, higher_is_better: bool = True) -> np.ndarray:
    """Which points no other point beats on both: lower (or equal) latency and better (or equal)
    quality, strictly better on one.

    Parameters
    ----------
    latency, quality : array-like of float, same length
    higher_is_better : bool
        The quality's direction (False for hallucination, noise sensitivity).

    Returns
    -------
    numpy.ndarray of bool
        True for the points on the front; NaN points are never on it.

    Examples
    --------
    >>> pareto_front([100, 200, 300, 250], [0.5, 0.7, 0.9, 0.6]).tolist()
    [True, True, True, False]
    """
    x = np.asarray(latency, dtype=np.float64)
    y = np.asarray(quality, dtype=np.float64)
    if not higher_is_better:
        y = -y
    valid = np.isfinite(x) & np.isfinite(y)
    front = np.zeros(x.size, dtype=bool)
    for i in np.flatnonzero(valid):
        others = valid.copy()
        others[i] = False
        beaten = others & (x <= x[i]) & (y >= y[i]) & ((x < x[i]) | (y > y[i]))
        front[i] = not beaten.any()
    return front


def system_quality_latency(per_query: pd.DataFrame, metric: str, latency: str = "latency_ms",
                           higher_is_better: bool = True) -> pd.DataFrame:
    """One row per system: median latency and mean quality over the requests that have both.

    Parameters
    ----------
    per_query : DataFrame
        A records report's per-request table (``system``, ``metric``, ``latency``).
    metric, latency : str
        Columns.
    higher_is_better : bool
        Direction of ``metric`` (for the front).

    Returns
    -------
    DataFrame
        system, n (requests with both values), ``latency p50``, ``<metric> mean``, ``pareto``
        (on the front), ordered by latency.

    Examples
    --------
    >>> frame = pd.DataFrame({"system": list("aabbcc"), "latency_ms": [100, 300, 400, 600, 150, 250],
    ...                       "success": [1, 0, 1, 1, 0, 0]})
    >>> system_quality_latency(frame, "success")[["system", "latency p50", "success mean", "pareto"]]
      system  latency p50  success mean  pareto
    0      c        200.0           0.0   False
    1      a        200.0           0.5    True
    2      b        500.0           1.0    True
    """
    both = per_query[per_query[metric].notna() & per_query[latency].notna()]
    grouped = both.groupby("system", sort=False)
    table = pd.DataFrame({"n": grouped.size(), "latency p50": grouped[latency].median(),
                          f"{metric} mean": grouped[metric].mean()}).reset_index()
    table["pareto"] = pareto_front(table["latency p50"], table[f"{metric} mean"], higher_is_better)
    return table.sort_values(["latency p50", f"{metric} mean"], kind="stable").reset_index(drop=True)


def given_and_computed(given: pd.DataFrame, computed: pd.DataFrame) -> pd.DataFrame:
    """Given percentiles (files that summarise requests) beside the ones computed from the
    requests, per system and stage.

    Parameters
    ----------
    given : DataFrame
        :attr:`evalsuite.LatencyTable.table` rows (several files concatenated).
    computed : DataFrame
        ``RecordsReport.latency_table`` (or :func:`evalsuite.display.latency_percentiles`).

    Returns
    -------
    DataFrame
        system, stage, source (the file), then for n, mean, p50, p90, p95, p99 the given
        value, the computed one and (for the statistics) the difference computed - given; the
        given table's systems and stages (NaN where the requests have none).

    Examples
    --------
    >>> given = pd.DataFrame({"system": ["a"], "stage": ["end_to_end"], "unit": ["ms"], "n": [2.0], "mean": [150.0],
    ...                       "p50": [150.0], "p90": [190.0], "p95": [195.0], "p99": [199.0], "source": ["a.json"]})
    >>> computed = given.drop(columns="source").assign(p50=160.0)
    >>> given_and_computed(given, computed)[["p50 given", "p50 computed", "p50 diff"]].iloc[0].tolist()
    [150.0, 160.0, 10.0]
    """
    keys = ["system", "stage"]
    stats = ["n", "mean", "p50", "p90", "p95", "p99"]
    left = given[keys + (["source"] if "source" in given else []) + stats].rename(
        columns={c: f"{c} given" for c in stats})
    right = computed[keys + stats].rename(columns={c: f"{c} computed" for c in stats})
    both = left.merge(right, on=keys, how="left", sort=False)
    columns = keys + (["source"] if "source" in given else [])
    for c in stats:
        columns += [f"{c} given", f"{c} computed"]
        if c != "n":
            both[f"{c} diff"] = both[f"{c} computed"] - both[f"{c} given"]
            columns.append(f"{c} diff")
    return both[columns]


def pick_shown(systems: Sequence[str], table: pd.DataFrame, limit: int = MANY_SYSTEMS) -> list[str]:
    """Default systems to draw one by one: the Pareto front's (fastest first), then the fastest
    others, at most ``limit``; ``table`` from :func:`system_quality_latency`."""
    front = table.loc[table["pareto"], "system"].tolist()
    rest = [s for s in table["system"] if s not in front]
    return [s for s in front + rest if s in systems][:limit]
