"""How many labels, how many queries: the labels an interval needs to reach a target width
(:func:`labels_for_width`), and the queries a paired comparison needs to detect a difference with
a given power (:func:`queries_for_power`, :func:`detectable_difference`; topic set size design,
Sakai 2016), for the paired t-test and the randomisation test.

A comparison that is "not significant" on 50 queries says little when 300 would be needed to see
the difference that matters: these functions say which case it is, from the variance observed.
"""

from __future__ import annotations

import math
import numbers
from typing import Sequence

import numpy as np

from ..errors import EvalSuiteError
from .intervals import Interval, _z, clopper_pearson_interval, wilson_interval

__all__ = ["labels_for_width", "queries_for_power", "detectable_difference", "randomisation_power", "TESTS"]

#: The paired tests :func:`queries_for_power` plans for.
TESTS = ("t-test", "randomisation")
_MAX_QUERIES = 1_000_000


def _positive(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise EvalSuiteError(f"{name} must be a number > 0", field=name, value=value)
    return float(value)


def _probability(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise EvalSuiteError(f"{name} must be between 0 and 1", field=name, value=value)
    return float(value)


def _share_width(share: float, n: float, method: str, confidence: float) -> float:
    interval = wilson_interval if method.startswith("wilson") else clopper_pearson_interval
    iv = interval(min(max(share * n, 0.0), n), n, confidence)
    return iv.high - iv.low


def labels_for_width(interval: Interval, target_width: float, total: int | None = None) -> int | None:
    """Labelled requests an interval needs to be at most ``target_width`` wide, from its current
    variance (the same share, the same judge).

    Parameters
    ----------
    interval : Interval
        A human-only interval (``clopper-pearson``, ``wilson (shares)``, with or without
        ``effective n``, or ``human only (...)`` in PPI's place), a PPI interval (``ppi``,
        ``ppi++``: uses ``extra["var_judge"]`` and ``extra["var_rectifier"]``) or an active one
        (``active``, ``active++``).
    target_width : float > 0
        The width wanted (``high - low``).
    total : int, optional
        Requests there are to label (PPI default: labelled + unlabelled; human only: no limit).

    Returns
    -------
    int or None
        The smallest number of labelled requests whose interval, at the observed share or
        variance, is at most ``target_width`` wide; None when no number up to ``total`` reaches it
        (PPI: the judge's own variance over the unlabelled requests sets a floor). A planning
        figure: the next labels change the variance it rests on.

        - human only: the interval's own method at the observed share and n labels (the Wilson or
          Clopper-Pearson width, found by bisection);
        - PPI: width ``2 z sqrt(var_judge / (M - n) + var_rectifier / n)`` with M requests in all;
        - active: the rectifier part of the variance scales as ``1 / n`` (inclusion probabilities
          grow in proportion to the budget).

    Raises
    ------
    EvalSuiteError
        ``target_width`` not > 0; an interval of another method, or without an estimate.

    References
    ----------
    Angelopoulos et al. (2023), Science 382 (the PPI variance); Zrnic & Candes (2024), ICML (the
    active one); Clopper & Pearson (1934).

    Examples
    --------
    >>> from evalsuite.stats.intervals import clopper_pearson_interval
    >>> iv = clopper_pearson_interval(30, 40)
    >>> round(iv.width, 3), labels_for_width(iv, iv.width / 2)  # half the width: about 4x the labels
    (0.285, 154)
    """
    target = _positive(target_width, "target_width")
    if math.isnan(interval.estimate):
        raise EvalSuiteError("the interval has no estimate to plan from", field="interval", value=interval.method)
    method = interval.method
    conf = interval.confidence
    z = _z(conf)
    if method.startswith("human only ("):
        method = method[len("human only ("):-1]
    if method.startswith(("clopper-pearson", "wilson")):
        n_eff = float(interval.extra.get("n_eff", interval.n)) or 1.0
        scale = n_eff / max(interval.n, 1)  # weighted labels: effective labels per label
        limit = total if total is not None else _MAX_QUERIES
        if _share_width(interval.estimate, limit * scale, method, conf) > target:
            return None
        low, high = 1, limit
        while low < high:
            mid = (low + high) // 2
            if _share_width(interval.estimate, mid * scale, method, conf) <= target:
                high = mid
            else:
                low = mid + 1
        return low
    if method in ("ppi", "ppi++"):
        var_j, var_r = interval.extra.get("var_judge"), interval.extra.get("var_rectifier")
        if var_j is None or var_r is None:
            raise EvalSuiteError("a PPI interval from ppi_mean carries its variances", field="interval", value=method)
        m = total if total is not None else interval.n + interval.n_unlabelled
        counts = np.arange(1, max(m, 2))
        widths = 2 * z * np.sqrt(var_j / np.maximum(m - counts, 1) + var_r / counts)
        ok = np.flatnonzero(widths <= target)
        return int(counts[ok[0]]) if len(ok) else None
    if method in ("active", "active++"):
        se = float(interval.extra.get("se", math.nan))
        m = interval.n + interval.n_unlabelled
        var_terms = se * se * m
        var_r = max(var_terms - float(interval.extra.get("var_judge", 0.0)), 0.0)
        var_j = var_terms - var_r
        limit = total if total is not None else m
        counts = np.arange(1, max(limit, 1) + 1)
        widths = 2 * z * np.sqrt((var_j + var_r * interval.n / counts) / m)
        ok = np.flatnonzero(widths <= target)
        return int(counts[ok[0]]) if len(ok) else None
    raise EvalSuiteError("no plan for an interval of this method", field="interval", value=interval.method)


def _t_power(n: float, effect: float, alpha: float) -> float:
    """Power of the two-sided paired t-test on n pairs at standardised effect ``effect``."""
    from scipy import stats

    df = n - 1.0
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    ncp = math.sqrt(n) * effect
    power = float(stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp))
    if not math.isfinite(power):  # scipy's noncentral t gives NaN far in its tail: the normal limit
        power = float(stats.norm.sf(crit - ncp) + stats.norm.cdf(-crit - ncp))
    return min(max(power, 0.0), 1.0)


def _t_queries(effect: float, alpha: float, power: float) -> int | None:
    """Smallest n >= 2 with t-test power >= ``power`` (bisection up to twice Sakai's normal
    approximation ``((z_a/2 + z_b) / effect)^2 + z_a/2^2 / 2``)."""
    from scipy import stats

    z_a, z_b = float(stats.norm.ppf(1 - alpha / 2)), float(stats.norm.ppf(power))
    guess = ((z_a + z_b) / effect) ** 2 + z_a * z_a / 2
    if guess > _MAX_QUERIES:
        return None
    low, high = 2, int(2 * guess) + 10
    while _t_power(high, effect, alpha) < power:
        high *= 2
    while low < high:
        mid = (low + high) // 2
        if _t_power(mid, effect, alpha) >= power:
            high = mid
        else:
            low = mid + 1
    return low


def queries_for_power(sd: float, difference: float, alpha: float = 0.05, power: float = 0.8,
                      test: str = "t-test", differences: Sequence | None = None, seed: int = 0) -> int | None:
    """Queries a paired comparison needs to detect a mean difference with the given power.

    Parameters
    ----------
    sd : float > 0
        Standard deviation of the per-query differences (system - baseline), from the queries
        already judged (``ddof=1``).
    difference : float > 0
        The smallest difference in mean that matters (Sakai's minimum detectable difference).
    alpha : float in (0, 1)
        Two-sided significance level.
    power : float in (0, 1)
        Probability of a significant result when the true difference is ``difference``.
    test : {"t-test", "randomisation"}
        The paired test the comparison runs.
    differences : sequence of float, optional
        ``randomisation`` only: the observed per-query differences; resampled (centred, shifted by
        ``difference``) to estimate the randomisation test's power (:func:`randomisation_power`).
    seed : int
        Seed of the resampling (``randomisation``).

    Returns
    -------
    int or None
        The smallest number of queries ``n >= 2`` with power at least ``power``: for the t-test the
        exact power of the two-sided paired t-test under the noncentral t distribution (noncentrality
        ``sqrt(n) difference / sd``, n - 1 degrees of freedom); for the randomisation test the
        resampled power, searched from the t-test's n (the two agree closely for sums of many
        differences). None when more than 1,000,000 queries would be needed.

    Raises
    ------
    EvalSuiteError
        Arguments out of range; ``randomisation`` without ``differences``.

    References
    ----------
    Sakai, T. (2016), "Topic set size design", Information Retrieval Journal 19(3) (the t-test case
    and its tools); Cohen, J. (1988), *Statistical Power Analysis for the Behavioral Sciences*.

    Examples
    --------
    >>> queries_for_power(sd=1.0, difference=0.5)  # Cohen's d_z = 0.5: 34 pairs, as G*Power says
    34
    >>> queries_for_power(sd=0.2, difference=0.02)  # d_z = 0.1: about 8 times (z_.975 + z_.8)^2 / 0.1^2
    787
    """
    sd = _positive(sd, "sd")
    difference = _positive(difference, "difference")
    alpha = _probability(alpha, "alpha")
    power = _probability(power, "power")
    if test not in TESTS:
        raise EvalSuiteError(f"test must be one of {', '.join(TESTS)}", field="test", value=test)
    low = _t_queries(difference / sd, alpha, power)
    if test == "t-test" or low is None:
        return low
    if differences is None:
        raise EvalSuiteError("the randomisation test's power is resampled from the observed differences",
                             field="differences")
    n = low
    if randomisation_power(differences, n, difference, alpha, seed=seed) >= power:
        while n > 2 and randomisation_power(differences, n - 1, difference, alpha, seed=seed) >= power:
            n -= 1
        return n
    while n < _MAX_QUERIES:
        n = max(n + 1, int(n * 1.05))
        if randomisation_power(differences, n, difference, alpha, seed=seed) >= power:
            return n
    return None


def randomisation_power(differences: Sequence, n: int, difference: float, alpha: float = 0.05,
                        resamples: int = 2000, flips: int = 1000, seed: int = 0) -> float:
    """Power of the two-sided paired randomisation (sign-flip) test on ``n`` queries, resampled.

    Parameters
    ----------
    differences : sequence of float
        Observed per-query differences; centred and shifted by ``difference``, they are the
        population the ``resamples`` draws of ``n`` queries come from.
    n : int >= 2
    difference : float
        The true mean difference assumed.
    alpha : float in (0, 1)
    resamples : int
        Sets of n queries drawn (with replacement).
    flips : int
        Random sign patterns per set (n <= 200); for more queries the sign-flip distribution of the
        mean is replaced by its normal limit (variance ``sum d_i^2 / n^2``), which it matches
        closely there.
    seed : int

    Returns
    -------
    float
        The share of resampled sets whose randomisation p-value is at most ``alpha``.

    Raises
    ------
    EvalSuiteError
        Fewer than 2 differences, a non-finite one, or ``n < 2``.

    References
    ----------
    Fisher (1935), *The Design of Experiments*; Smucker, Allan & Carterette (2007), CIKM; Sakai (2016).

    Examples
    --------
    >>> d = np.random.default_rng(0).normal(0, 1, 500)
    >>> 0.7 < randomisation_power(d, 34, 0.5) < 0.9  # the t-test's 0.81 at d_z = 0.5
    True
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2 or not np.all(np.isfinite(d)):
        raise EvalSuiteError("need at least 2 finite per-query differences", field="differences")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise EvalSuiteError("n must be an integer >= 2", field="n", value=n)
    alpha = _probability(alpha, "alpha")
    rng = np.random.default_rng(seed)
    population = d - d.mean() + float(difference)
    rejected = 0
    block = max(1, 4_000_000 // (n * (flips if n <= 200 else 1)))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        sample = population[rng.integers(0, len(population), size=(size, n))]
        observed = np.abs(sample.mean(1))
        if n <= 200:
            signs = rng.integers(0, 2, size=(size, flips, n), dtype=np.int8) * 2 - 1
            null = np.abs((signs * sample[:, None, :]).mean(2))
            p_value = ((null >= observed[:, None] - 1e-12).sum(1) + 1) / (flips + 1)
        else:
            from scipy import stats

            scale = np.sqrt((sample * sample).sum(1)) / n
            with np.errstate(invalid="ignore", divide="ignore"):
                p_value = np.where(scale > 0, 2 * stats.norm.sf(observed / scale), 1.0)
        rejected += int((p_value <= alpha).sum())
    return rejected / resamples


def detectable_difference(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest mean difference a paired t-test on ``n`` queries detects with the given power.

    Parameters
    ----------
    sd : float > 0
        Standard deviation of the per-query differences.
    n : int >= 2
        Queries.
    alpha, power : float in (0, 1)

    Returns
    -------
    float
        The difference ``delta`` at which the two-sided paired t-test's power is ``power`` (the
        inverse of :func:`queries_for_power`).

    Raises
    ------
    EvalSuiteError
        Arguments out of range.

    References
    ----------
    Sakai (2016), "Topic set size design" (the minimum detectable difference).

    Examples
    --------
    >>> round(detectable_difference(1.0, 34), 3)  # 34 pairs detect d_z = 0.495 with power 0.8
    0.495
    """
    sd = _positive(sd, "sd")
    alpha = _probability(alpha, "alpha")
    power = _probability(power, "power")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise EvalSuiteError("n must be an integer >= 2", field="n", value=n)
    from scipy import optimize

    return float(optimize.brentq(lambda e: _t_power(n, e, alpha) - power, 1e-9, 100.0, xtol=1e-10)) * sd
