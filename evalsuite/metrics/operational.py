"""Operational metrics of a RAG system: latency, task success and the stage where a request failed.

- :func:`latency_summary`: mean and percentiles (p50, p90, p95, p99) of per-request latencies;
- :func:`task_success_rate`: share of successful requests, with a Wilson interval;
- :func:`failure_attribution`: share of failed requests per stage of :data:`FAILURE_STAGES`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EvalSuiteError
from ..score import Score

__all__ = [
    "latency_summary",
    "task_success_rate",
    "failure_attribution",
    "latency_values",
    "task_success_values",
    "failure_values",
    "FAILURE_STAGES",
    "LATENCY_STATISTICS",
]


FAILURE_STAGES = ("retrieval", "evidence", "generation", "orchestration", "other")


LATENCY_STATISTICS = ("mean", "p50", "p90", "p95", "p99")


def _as_numbers(values, arg: str) -> tuple[np.ndarray, np.ndarray]:
    """Numbers per request as float64, and a mask of missing entries (None / Arrow null)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or pa.types.is_null(values.type)):
            raise EvalSuiteError("expected numbers", field=arg, value=str(values.type))
        missing = values.is_null().to_numpy(zero_copy_only=False)
        return values.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False), missing
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        return values.astype(np.float64), np.zeros(values.shape, dtype=bool)
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise EvalSuiteError("expected a list of numbers", field=arg, value=type(values).__name__)
    out = np.zeros(len(values), dtype=np.float64)
    missing = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None:
            missing[i] = True
        elif isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise EvalSuiteError("not a number", field=f"{arg}[{i}]", value=v)
        else:
            out[i] = float(v)
    return out, missing


def latency_summary(values, statistic: str | None = None, *, invalid: str = "raise", unit: str | None = None):
    """Mean and 50th/90th/95th/99th percentiles of latencies, in the unit they are given in.

    Percentiles use numpy's default linear interpolation (``numpy.percentile``), as LLMPerf's
    published summaries do.

    Parameters
    ----------
    values : sequence of float, length n_requests
        Latencies (any unit; it is kept). None entries are missing measurements: left out and
        counted in ``params["missing"]``.
    statistic : {"mean", "p50", "p90", "p95", "p99"} or None
        The one statistic to return; None returns all of them as a dict.
    invalid : {"raise", "drop"}
        Negative or non-finite values raise an error naming their positions, or with "drop"
        are left out and counted in ``params["dropped"]``.
    unit : str, optional
        Label of the unit for display (e.g. "ms"); stored in params.

    Returns
    -------
    Score or dict of str -> Score
        The statistic over the valid values (NaN when there are none); ``per_query`` holds the
        values (NaN where missing or dropped); ``params`` has n, n_valid, missing, dropped, unit
        and every statistic.

    Raises
    ------
    EvalSuiteError
        Unknown statistic or ``invalid`` option; a value that is not a number; negative or
        non-finite values when ``invalid="raise"``.

    References
    ----------
    ``numpy.percentile`` with ``method="linear"`` (Hyndman & Fan 1996, definition 7); LLMPerf's
    published latency summaries (ray-project/llmperf).

    Examples
    --------
    >>> # sorted 95, 120, 180, 400; p95 at position 0.95 * 3 = 2.85: 180 + 0.85 * (400 - 180) = 367
    >>> latency_summary([120, 180, 95, 400], "p95", unit="ms")
    Score(latency_p95=367.0000, n=4, coverage=1.000)
    >>> summary = latency_summary([120, 180, 95, 400, None])  # None: not measured, left out
    >>> round(summary["mean"], 2), round(summary["p50"], 2)  # 795 / 4; (120 + 180) / 2
    (198.75, 150.0)
    >>> summary["mean"].params["missing"]
    1
    """
    if statistic is not None and statistic not in LATENCY_STATISTICS:
        raise EvalSuiteError(f"unknown statistic; use one of {', '.join(LATENCY_STATISTICS)} or None",
                             field="statistic", value=statistic)
    if invalid not in ("raise", "drop"):
        raise EvalSuiteError("invalid must be 'raise' or 'drop'", field="invalid", value=invalid)
    data, missing = _as_numbers(values, "values")
    bad = ~missing & (~np.isfinite(data) | (data < 0))
    if bad.any() and invalid == "raise":
        positions = np.flatnonzero(bad)
        shown = ", ".join(str(int(p)) for p in positions[:10]) + (" ..." if positions.size > 10 else "")
        raise EvalSuiteError(
            f"{positions.size} latencies are negative or not finite (positions {shown}); "
            "pass invalid='drop' to leave them out", field="values", value=float(data[positions[0]]))
    valid = ~missing & ~bad
    kept = data[valid]
    if kept.size:
        statistics = {"mean": float(kept.mean()), **{f"p{q}": float(np.percentile(kept, q)) for q in (50, 90, 95, 99)}}
    else:
        statistics = dict.fromkeys(LATENCY_STATISTICS, float("nan"))
    per_request = np.where(valid, data, np.nan)
    common = {"unit": unit, "n": int(data.size), "n_valid": int(kept.size), "missing": int(missing.sum()),
              "dropped": int(bad.sum()), "statistics": statistics, "interpolation": "linear (numpy.percentile)"}
    scores = {name: Score(per_request, {"metric": f"latency_{name}", "statistic": name, **common}, value=statistics[name])
              for name in LATENCY_STATISTICS}
    return scores[statistic] if statistic is not None else scores


def latency_values(values, *, compat: str | None = None) -> np.ndarray:
    """Per-request latency (the kernel of ``METRICS["latency"]``): the value, NaN where missing,
    negative or not finite.

    >>> latency_values([120, None, -1]).tolist()
    [120.0, nan, nan]
    """
    return latency_summary(values, "mean", invalid="drop").per_query


def task_success_values(outcomes, *, compat: str | None = None) -> np.ndarray:
    """Per-request success (the kernel of ``METRICS["success"]``): 1.0, 0.0, NaN when unknown.

    >>> task_success_values([True, False, None]).tolist()
    [1.0, 0.0, nan]
    """
    return _outcome_values(outcomes)


def _outcome_values(outcomes) -> np.ndarray:
    """Outcomes as floats: 1.0 success, 0.0 failure, NaN unknown; checked."""
    if isinstance(outcomes, (pa.Array, pa.ChunkedArray)):
        values = outcomes.cast(pa.float64()).to_numpy(zero_copy_only=False)
    elif isinstance(outcomes, np.ndarray) and outcomes.dtype.kind == "f":
        # Float array: 1.0 success, 0.0 failure, NaN unknown (what evaluate_records holds).
        values = outcomes.astype(np.float64)
        if not np.all(np.isnan(values) | (values == 0) | (values == 1)):
            raise EvalSuiteError("outcomes must be 0, 1 or NaN", field="outcomes", value=float(values[~np.isin(values, (0, 1)) & ~np.isnan(values)][0]))
    else:
        if isinstance(outcomes, (str, bytes)) or not isinstance(outcomes, (Sequence, np.ndarray)):
            raise EvalSuiteError("expected one True/False/None per request", field="outcomes", value=type(outcomes).__name__)
        values = np.empty(len(outcomes), dtype=np.float64)
        for i, v in enumerate(outcomes):
            if v is None:
                values[i] = np.nan
            elif isinstance(v, (bool, np.bool_)):
                values[i] = float(v)
            else:
                raise EvalSuiteError("an outcome must be True, False or None", field=f"outcomes[{i}]", value=v)
    return values


def task_success_rate(outcomes, *, confidence: float = 0.95) -> Score:
    """Share of successful requests, with a Wilson score interval.

    Parameters
    ----------
    outcomes : sequence of bool or None, length n_requests
        Whether each request was resolved to specification; None = unknown (left out, counted).
    confidence : float in (0, 1)
        Confidence level of the interval (default 0.95).

    Returns
    -------
    Score
        Successes / judged requests (NaN when none); ``params``: ``ci_low``, ``ci_high``
        (Wilson, from ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``), ``n``
        (judged requests), ``successes``, ``unknown``, ``confidence``, ``method``.

    Raises
    ------
    EvalSuiteError
        ``confidence`` not strictly between 0 and 1; an outcome that is not True/False/None (in
        a float array: not 0, 1 or NaN).

    References
    ----------
    Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22.

    Examples
    --------
    >>> rate = task_success_rate([True, True, False, None])  # 2 of 3 judged requests; 1 unknown
    >>> rate
    Score(task_success_rate=0.6667, n=3, coverage=0.750)
    >>> # Wilson, z = 1.96, n = 3, p = 2/3: centre (p + z**2 / 6) / (1 + z**2 / 3) = 0.5731,
    >>> # half-width z * (p * (1 - p) / 3 + z**2 / 36) ** 0.5 / (1 + z**2 / 3) = 0.3654
    >>> round(rate.params["ci_low"], 4), round(rate.params["ci_high"], 4)
    (0.2077, 0.9385)
    """
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise EvalSuiteError("confidence must be between 0 and 1", field="confidence", value=confidence)
    values = _outcome_values(outcomes)
    judged = ~np.isnan(values)
    n = int(judged.sum())
    successes = int(values[judged].sum())
    if n:
        from scipy import stats  # imported here: scipy.stats costs ~0.6 s at import time

        interval = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
        low, high = float(interval.low), float(interval.high)
    else:
        low = high = float("nan")
    return Score(values, {"metric": "task_success_rate", "ci_low": low, "ci_high": high, "n": n, "successes": successes,
                          "unknown": int(values.size - n), "n_requests": int(values.size), "confidence": confidence,
                          "method": "wilson", "n_defined": n, "coverage": n / values.size if values.size else 0.0})


def failure_attribution(stages, *, taxonomy: Sequence[str] = FAILURE_STAGES) -> Score:
    """Where requests failed: count and share of failed requests per pipeline stage.

    Parameters
    ----------
    stages : sequence of str or None, length n_requests
        The stage each request failed at, or None when it did not fail. Matched
        case-insensitively against ``taxonomy``.
    taxonomy : sequence of str
        Allowed stages (default: retrieval, evidence, generation, orchestration, other).

    Returns
    -------
    Score
        Float = share of requests that failed; ``per_query`` 1.0 for a failed request, 0.0
        otherwise; ``params["stages"]`` = {stage: {"count": int, "share": float}} for every
        stage of the taxonomy (share of the failed requests; NaN when nothing failed),
        ``params["n_failed"]``.

    Raises
    ------
    EvalSuiteError
        A label not in the taxonomy (the message lists the allowed ones); a taxonomy that is
        empty or repeats a stage.

    References
    ----------
    EvalSuite's record schema (``failure_stage``, docs/records.md); the stage taxonomy follows
    RAGChecker's diagnosis of retriever and generator errors (Ru et al., NeurIPS 2024 D&B).

    Examples
    --------
    >>> result = failure_attribution(["retrieval", None, "Generation", None])  # 2 of 4 requests failed
    >>> result
    Score(failure_attribution=0.5000, n=4, coverage=1.000)
    >>> result.params["stages"]["generation"]  # 1 of the 2 failures (case-insensitive match)
    {'count': 1, 'share': 0.5}
    """
    allowed = [str(t).strip().lower() for t in taxonomy]
    if not allowed or len(set(allowed)) != len(allowed):
        raise EvalSuiteError("taxonomy must list distinct stage names", field="taxonomy", value=list(taxonomy))
    if isinstance(stages, (pa.Array, pa.ChunkedArray)):
        labels = stages.combine_chunks() if isinstance(stages, pa.ChunkedArray) else stages
        if not (pa.types.is_string(labels.type) or pa.types.is_large_string(labels.type) or pa.types.is_null(labels.type)):
            raise EvalSuiteError("stages must be strings (or None)", field="stages", value=str(labels.type))
        labels = labels.cast(pa.string())
        found = pc.index_in(pc.utf8_trim_whitespace(pc.utf8_lower(labels)), value_set=pa.array(allowed))
        unknown = labels.is_valid().to_numpy(zero_copy_only=False) & found.is_null().to_numpy(zero_copy_only=False)
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise EvalSuiteError(f"unknown failure stage; allowed: {', '.join(allowed)} (or None for no failure)",
                                 field=f"stages[{i}]", value=labels[i].as_py())
        codes = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        if isinstance(stages, (str, bytes)) or not isinstance(stages, (Sequence, np.ndarray)):
            raise EvalSuiteError("expected one stage (or None) per request", field="stages", value=type(stages).__name__)
        index = {name: i for i, name in enumerate(allowed)}
        codes = np.full(len(stages), -1, dtype=np.int64)
        for i, label in enumerate(stages):
            if label is None:
                continue
            key = label.strip().lower() if isinstance(label, str) else None
            if key not in index:
                raise EvalSuiteError(f"unknown failure stage; allowed: {', '.join(allowed)} (or None for no failure)",
                                     field=f"stages[{i}]", value=label)
            codes[i] = index[key]
    failed = codes >= 0
    counts = np.bincount(codes[failed], minlength=len(allowed))
    n_failed = int(failed.sum())
    breakdown = {name: {"count": int(counts[i]), "share": float(counts[i] / n_failed) if n_failed else float("nan")}
                 for i, name in enumerate(allowed)}
    return Score(failed.astype(np.float64), {"metric": "failure_attribution", "stages": breakdown,
                                             "n_failed": n_failed, "taxonomy": allowed})


def failure_values(stages, *, compat: str | None = None) -> np.ndarray:
    """Per-request failure (the kernel of ``METRICS["failure_rate"]``): 1.0 when a stage is given.

    >>> failure_values(["retrieval", None]).tolist()
    [1.0, 0.0]
    """
    return np.asarray(failure_attribution(stages).per_query, dtype=np.float64)
