"""Paired statistics over per-query differences: randomisation test, bootstrap interval,
p-value adjustment, effect size and win / tie / loss (scipy.stats wherever it has the test).

Every function takes the per-query differences of one pair of systems on one metric (shape
(n_queries,), float64) and is seeded where it resamples.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings

import numpy as np

from ..errors import EvalSuiteError
from ..metrics.registry import DEFAULTS

__all__ = ["paired_randomization_test", "paired_bootstrap_interval", "adjust_p_values", "effect_size",
           "win_tie_loss", "TESTS", "CORRECTIONS", "CI_METHODS", "ZERO_METHODS", "PAIRS", "TABLE_COLUMNS",
           "DEFAULT_COMPARE_METRICS"]

DEFAULT_COMPARE_METRICS = DEFAULTS["compare"]

TESTS = {
    "permutation": "two-sided paired randomisation test (sign flips of the per-query differences, "
                   "statistic: mean difference; Fisher 1935, as recommended for IR by Smucker et al. 2007)",
    "t-test": "two-sided paired Student's t-test (scipy.stats.ttest_rel)",
    "wilcoxon": "two-sided Wilcoxon signed-rank test (scipy.stats.wilcoxon)",
    "tukey": "Tukey's honestly significant difference test over all the systems compared on a metric "
             "(scipy.stats.tukey_hsd, what ranx's stat_test=\"tukey\" runs; unpaired, its p-values already account "
             "for every pair of systems on that metric)",
}
CORRECTIONS = {
    "holm": "Holm (1979) step-down, controls the family-wise error rate",
    "bonferroni": "Bonferroni, controls the family-wise error rate",
    "fdr_bh": "Benjamini-Hochberg (1995), controls the false discovery rate",
    "westfall_young": "Westfall-Young (1993) step-down max-T over the shared sign-flip resamples, controls the "
                      "family-wise error rate while accounting for correlated metrics and systems (Boytsov et al., "
                      "SIGIR 2013; Carterette, TOIS 2012)",
    "none": "no correction: each p-value is used as it is",
}
CI_METHODS = {"bca": "BCa", "percentile": "percentile"}
ZERO_METHODS = {
    "wilcox": "zero differences (queries where both systems score the same) are dropped before ranking "
              "(Wilcoxon 1945; scipy's default, as R's wilcox.test)",
    "pratt": "zero differences are ranked, then their ranks are dropped (Pratt 1959; more conservative)",
    "zsplit": "zero differences are ranked and their ranks split between the positive and negative sums",
}
PAIRS = ("baseline", "all")

TABLE_COLUMNS = (
    "metric", "baseline", "system", "mean_baseline", "mean_system", "diff", "ci_low", "ci_high",
    "p_value", "p_adjusted", "significant", "effect_size", "wins", "ties", "losses", "n_queries",
    "n_dropped_nan", "n_unpaired",
)

# Resampling works in blocks of at most this many float64 values (about 32 MB per array), so a
# 7,000-query comparison with 10,000 resamples never holds a 70-million-element matrix.
_BLOCK_ELEMENTS = 4_000_000


@functools.cache
def _stats():
    """``scipy.stats``, imported on first use (it costs ~0.6 s; ``import evalsuite`` stays fast)."""
    import scipy.stats

    return scipy.stats


def _rng_kwargs(seed: int) -> dict[str, np.random.Generator]:
    # scipy >= 1.15 takes ``rng``; older versions take a Generator as ``random_state`` (same effect).
    keyword = "rng" if "rng" in inspect.signature(_stats().bootstrap).parameters else "random_state"
    return {keyword: np.random.default_rng(seed)}


def _mean_statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(sample, axis=axis)


# --------------------------------------------------------------------------------------------
# The statistical pieces, each usable on its own
# --------------------------------------------------------------------------------------------


def paired_randomization_test(differences, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the paired randomisation (sign-flip) test of a mean difference.

    Under the null hypothesis the two systems are exchangeable on every query, so each per-query
    difference is as likely to have the opposite sign. The statistic is the mean difference; the
    null distribution flips the sign of each difference independently with probability 1/2.
    Computed by ``scipy.stats.permutation_test((differences,), mean, permutation_type="samples",
    vectorized=True, n_resamples=n_resamples)`` seeded with ``numpy.random.default_rng(seed)``:
    the exact test over all sign patterns when ``2**n <= n_resamples``, otherwise
    ``n_resamples`` random patterns, with scipy's p-value ``(count + 1) / (n_resamples + 1)``
    per tail (Phipson & Smyth 2010), two-sided. scipy's sign flips cost about 10 s for 7,000
    queries and 10,000 resamples on one core, which is why :func:`evalsuite.compare` draws its
    resamples once for the whole report instead (``evalsuite.stats.resampling``); this function is the
    single-row reference.

    Parameters
    ----------
    differences : array-like of float, shape (n,)
        Per-query differences (system - baseline), n >= 1, finite.
    n_resamples : int >= 1
        Random sign patterns to draw (ignored when the exact test is smaller).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    float
        The two-sided p-value in (0, 1].

    References
    ----------
    R. A. Fisher, *The Design of Experiments* (1935); M. D. Smucker, J. Allan, B. Carterette,
    "A comparison of statistical significance tests for information retrieval evaluation",
    CIKM 2007; B. Phipson, G. K. Smyth, "Permutation P-values should never be zero", SAGMB 2010.
    """
    d = np.ascontiguousarray(differences, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise EvalSuiteError("differences must be a non-empty one-dimensional array", field="differences",
                             value=getattr(d, "shape", None))
    block = max(1, min(int(n_resamples), _BLOCK_ELEMENTS // d.size))
    result = _stats().permutation_test((d,), _mean_statistic, permutation_type="samples", vectorized=True,
                                       n_resamples=int(n_resamples), batch=block, **_rng_kwargs(seed))
    return float(result.pvalue)


def paired_bootstrap_interval(differences, method: str = "bca", confidence: float = 0.95,
                              n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float, str | None]:
    """Bootstrap confidence interval of the mean of paired differences (resampling queries).

    Resampling the per-query differences with replacement is the paired bootstrap over queries
    (both systems' values of a query travel together). Computed by ``scipy.stats.bootstrap`` on
    ``(differences,)`` with the mean as statistic, seeded with ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    differences : array-like of float, shape (n,)
        Per-query differences (system - baseline), n >= 2.
    method : {"bca", "percentile"}
        Bias-corrected and accelerated (Efron 1987) or plain percentile interval.
    confidence : float in (0, 1)
        Two-sided confidence level.
    n_resamples : int >= 1
        Bootstrap resamples.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    (low, high, note) : (float, float, str or None)
        The interval, and a note when it was not computed the ordinary way: when every
        difference is the same value ``c`` every resample has mean ``c`` and the interval is
        ``(c, c)`` (scipy's BCa is undefined there); when BCa is undefined for another reason
        (a degenerate jackknife) the percentile interval is returned and the note says so.

    References
    ----------
    B. Efron, "Better bootstrap confidence intervals", JASA 82 (1987); B. Efron and R. J.
    Tibshirani, *An Introduction to the Bootstrap* (1993).
    """
    d = np.ascontiguousarray(differences, dtype=np.float64)
    if method not in CI_METHODS:
        raise EvalSuiteError(f"ci must be one of {', '.join(CI_METHODS)}", field="ci", value=method)
    if np.all(d == d[0]):
        return float(d[0]), float(d[0]), "every difference is the same value: the interval is that value"
    block = max(1, min(n_resamples, _BLOCK_ELEMENTS // d.size))
    stats = _stats()
    with warnings.catch_warnings():
        # A degenerate BCa (NaN, with a warning and a 0/0 in the acceleration) is handled below.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap((d,), _mean_statistic, n_resamples=n_resamples, vectorized=True,
                                 batch=block, confidence_level=confidence, method=CI_METHODS[method],
                                 **_rng_kwargs(seed))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        result = stats.bootstrap((d,), _mean_statistic, n_resamples=n_resamples, vectorized=True,
                                 batch=block, confidence_level=confidence, method="percentile",
                                       **_rng_kwargs(seed))
        return (float(result.confidence_interval.low), float(result.confidence_interval.high),
                "BCa is undefined for these differences; the percentile interval is given")
    return low, high, None


def adjust_p_values(p_values, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons.

    Parameters
    ----------
    p_values : array-like of float, shape (m,)
        Unadjusted p-values in [0, 1].
    method : {"holm", "bonferroni", "fdr_bh", "none"}
        (``westfall_young`` is computed from the resamples by :func:`evalsuite.compare`.)
        ``holm``: step-down, ``p_(i) * (m - i + 1)`` made monotone by a running maximum
        (1-based rank i in ascending order); ``bonferroni``: ``p * m``; ``fdr_bh``:
        Benjamini-Hochberg via ``scipy.stats.false_discovery_control``; ``none``: unchanged.
        All capped at 1.

    Returns
    -------
    numpy.ndarray, shape (m,), float64
        Adjusted p-values in the input order (a p-value is significant when adjusted <= alpha).

    References
    ----------
    S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6
    (1979); Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS B 57 (1995).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if method not in CORRECTIONS:
        raise EvalSuiteError(f"correction must be one of {', '.join(CORRECTIONS)}", field="correction", value=method)
    if p.ndim != 1 or np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise EvalSuiteError("p-values must be a one-dimensional array of numbers in [0, 1]", field="p_values")
    if method == "westfall_young":
        raise EvalSuiteError("the Westfall-Young correction needs the resampled statistics, not only p-values: "
                             "use compare(..., test='permutation', correction='westfall_young')", field="correction",
                             value=method)
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method == "fdr_bh":
        return np.asarray(_stats().false_discovery_control(p, method="bh"), dtype=np.float64)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p[order] * (m - np.arange(m))), 1.0)
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = stepped
    return adjusted


def effect_size(differences) -> float:
    """Standardised mean difference of paired values: ``mean(d) / std(d, ddof=1)``.

    Cohen's d for paired samples (often written d_z): how many standard deviations of the
    per-query differences the mean difference is. When the differences have no spread the
    ratio is undefined; this returns 0.0 when every difference is 0 (no effect) and ``+inf`` /
    ``-inf`` when every query moves by the same non-zero amount. "The same" allows for float
    rounding: a spread (max - min) within 1e-9 of the largest difference's size counts as none,
    so 0.2 - 0.1 and 0.6 - 0.5 are the same move.

    Parameters
    ----------
    differences : array-like of float, shape (n,), n >= 2

    References
    ----------
    J. Cohen, *Statistical Power Analysis for the Behavioral Sciences* (1988); T. Sakai,
    "Statistical reform in information retrieval?", SIGIR Forum 48 (2014).
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.size == 0:
        raise EvalSuiteError("no differences to measure", field="differences")
    size = float(np.max(np.abs(d)))
    if float(np.ptp(d)) <= 1e-9 * size or size == 0.0:
        # np.std of (nearly) equal values is rounding noise (1e-17), not a spread.
        mean = float(np.mean(d))
        return 0.0 if size == 0.0 else math.copysign(math.inf, mean)
    return float(np.mean(d)) / float(np.std(d, ddof=1))


def win_tie_loss(differences, tie_tolerance: float = 1e-9) -> tuple[int, int, int]:
    """Queries where the system is higher than the baseline, within ``tie_tolerance``, or lower.

    ``differences`` are system - baseline; a win is ``d > tie_tolerance``, a tie
    ``|d| <= tie_tolerance``, a loss ``d < -tie_tolerance``. "Win" means a higher value: for a
    metric where lower is better (latency) read wins as losses.
    """
    d = np.asarray(differences, dtype=np.float64)
    wins = int(np.count_nonzero(d > tie_tolerance))
    losses = int(np.count_nonzero(d < -tie_tolerance))
    return wins, int(d.size) - wins - losses, losses


