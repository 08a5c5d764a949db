"""One resampling pass for a whole comparison report: sign flips and bootstrap indices drawn once.

A report compares R rows (metric x pair of systems), each a vector of per-query differences
``d = system - baseline`` over the same queries. Resampling each row on its own (what calling
``scipy.stats.permutation_test`` and ``scipy.stats.bootstrap`` per row does) draws and applies
R x n_resamples x n_queries random numbers. Here the random signs and the resampled query
indices are drawn once per report and applied to every row at once as matrix products over the
per-query difference matrix ``D`` (n_queries x R), in blocks of resamples that bound memory:

- randomisation test: a block of sign patterns ``S`` (b x n, +-1) gives the null sums
  ``S @ D`` of every row;
- bootstrap: a block of resampled indices, turned into counts ``C`` (b x n, how often each query
  is drawn), gives the resampled means ``C @ D / n`` of every row.

Because every row sees the same sign patterns, the joint null distribution of all rows is
available at no extra cost: :func:`sign_flip_tests` also returns Westfall and Young's step-down
max-T adjusted p-values (family-wise error control that accounts for the correlation between
metrics and between systems).

A query where a row is undefined (NaN in either system) enters ``D`` as 0 and the row's mean is
over its own ``n_r`` defined queries: ``S @ D / n_r`` is then exactly the sign-flip statistic of
that row's own queries, with the same flips as every other row on the queries they share.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..errors import EvalSuiteError

__all__ = ["sign_flip_tests", "bootstrap_intervals", "BLOCK_ELEMENTS"]

# Random draws are made in blocks of at most this many values (b x n), so a 7,000-query report
# with 10,000 resamples never holds a 70-million-element matrix (about 32 MB per block array).
BLOCK_ELEMENTS = 4_000_000

# Each block of draws is applied in slices of at most this many values (b x n): a slice's bits,
# counts and their float copies stay in the processor's cache (1 MiB as float64) instead of
# going through main memory three times. The draws themselves do not depend on it.
SLICE_ELEMENTS = 1 << 17

# scipy.stats.permutation_test's relative tolerance for null values equal to the observed one.
_GAMMA = 100 * np.finfo(np.float64).eps


def _one_blas_thread():
    """One BLAS thread for the block products: they are skinny (b x n times n x rows) and
    memory-bound, and on a machine whose cores are busy OpenBLAS's spinning threads made the
    whole 2-system report 2-3x slower (measured: 1.0 s with one thread, 3.2 s with two, on 2 busy
    cores). threadpoolctl sets it for this block only."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional speed-up: the numbers are the same without it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _slice_rows(n: int, rows: int) -> int:
    """Resamples per slice of a block (see SLICE_ELEMENTS). With many rows the product dominates
    and BLAS copies the n x rows matrix once per call, so a slice then holds at least 4 resamples
    per row (a 220-row report of 7,000 queries took 8.7 s with 18-resample slices and 6.6 s with
    880, back to back on a busy machine)."""
    return max(1, min(max(SLICE_ELEMENTS // max(n, 1), 4 * rows), BLOCK_ELEMENTS // max(n, 1)))


def _check(differences, defined) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    D = np.asarray(differences, dtype=np.float64)
    if D.ndim == 1:
        D = D[:, None]
    if D.ndim != 2 or D.shape[0] == 0 or D.shape[1] == 0:
        raise EvalSuiteError("differences must be a non-empty (n_queries, n_rows) array", field="differences",
                             value=getattr(D, "shape", None))
    mask = np.isfinite(D) if defined is None else np.asarray(defined, dtype=bool).reshape(D.shape)
    if np.any(~np.isfinite(D[mask])):
        raise EvalSuiteError("a defined difference is not a finite number", field="differences")
    counts = mask.sum(axis=0)
    if np.any(counts < 1):
        raise EvalSuiteError("every row needs at least one defined difference", field="differences",
                             value=counts.tolist())
    return np.where(mask, D, 0.0), mask, counts


def _row_means(D: np.ndarray, counts: np.ndarray, mask: np.ndarray) -> np.ndarray:
    # np.mean over each row's own values (what scipy's statistic computes on the observed data).
    return np.array([np.mean(D[mask[:, r], r]) for r in range(D.shape[1])])


def _exact_patterns(n: int) -> np.ndarray:
    """All 2**n sign patterns as a (2**n, n) float64 array of +-1."""
    bits = (np.arange(2 ** n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)) & 1
    return 1.0 - 2.0 * bits


def _t_statistics(means: np.ndarray, sum_squares: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """|t| of the one-sample t statistic of sign-flipped data from its mean.

    Flipping signs leaves sum(d**2) unchanged, so the variance of a resample is
    (sum(d**2) - n * mean**2) / (n - 1): the t statistic of every resample follows from its mean.
    A row whose differences are all 0 has |t| = 0 everywhere (it can never be significant).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.maximum(sum_squares - counts * means ** 2, 0.0) / np.maximum(counts - 1, 1)
        t = np.abs(means) / np.sqrt(var / counts)
    t[np.isnan(t)] = 0.0
    return t


def sign_flip_tests(differences, defined=None, n_resamples: int = 10_000, seed: int = 0,
                    westfall_young: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Two-sided paired randomisation tests of every row, from one set of sign flips.

    For each row r the statistic is the mean of its defined differences; under the null
    hypothesis each difference is as likely to have either sign. One set of sign patterns (one
    random sign per query and resample) is drawn from ``numpy.random.default_rng(seed)`` and
    applied to all rows. When ``2**n_queries <= n_resamples`` every pattern is enumerated
    instead (the exact test). p-values are computed as ``scipy.stats.permutation_test`` does:
    ``2 * min(P(null <= observed), P(null >= observed))`` with a relative tolerance of
    100 machine epsilons for ties, ``(count + 1) / (n_resamples + 1)`` per tail for random
    patterns (Phipson & Smyth 2010) and ``count / 2**n`` for the exact test, capped at 1.
    ``n_queries`` is the number of rows of ``differences`` (all the report's queries): a row
    defined on fewer queries is enumerated exactly only when the whole report is, where scipy,
    run on that row alone, could already enumerate its own queries (its p-value then agrees
    within Monte Carlo error instead of exactly).

    Parameters
    ----------
    differences : array-like of float, shape (n_queries,) or (n_queries, n_rows)
        Per-query differences (system - baseline), one column per row.
    defined : array-like of bool, same shape, or None
        Which entries take part (None: the finite ones). Undefined entries are ignored.
    n_resamples : int >= 1
        Random sign patterns (ignored for the exact test).
    seed : int >= 0
        Seed of the sign patterns.
    westfall_young : bool
        Also return Westfall and Young's step-down max-T adjusted p-values over all rows: with
        ``t_r`` the one-sample t statistic of row r, rows are ordered by observed ``|t|``
        descending, the adjusted p-value of the j-th is the share of resamples whose largest
        ``|t|`` among the rows from j on reaches the observed ``|t_j|`` (with the +1 of the
        random case), then made monotone by a running maximum (Westfall & Young 1993,
        Algorithm 2.8), never below the row's raw p-value. It controls the family-wise error rate while accounting for the
        correlation between rows; IR studies recommend it over Bonferroni and Holm for
        correlated metrics and systems (Boytsov, Belova & Westfall, SIGIR 2013; Carterette,
        TOIS 30(1), 2012).

    Returns
    -------
    (p_values, adjusted) : (numpy.ndarray of shape (n_rows,), numpy.ndarray or None)
        Raw two-sided p-values, and the Westfall-Young adjusted ones (None unless asked).

    Raises
    ------
    EvalSuiteError
        An empty array, a row without defined differences, a defined value that is not finite.

    References
    ----------
    R. A. Fisher, *The Design of Experiments* (1935); M. D. Smucker, J. Allan, B. Carterette,
    CIKM 2007; B. Phipson, G. K. Smyth, SAGMB 9 (2010); P. H. Westfall, S. S. Young,
    *Resampling-Based Multiple Testing* (Wiley, 1993); L. Boytsov, A. Belova, P. Westfall,
    "Deciding on an adjusted threshold: multiple comparisons in IR", SIGIR 2013.

    Examples
    --------
    >>> d = [[0.5, 0.5], [0.25, 0.0], [0.25, 0.5], [0.25, -0.5]]  # 4 queries, 2 rows
    >>> p, wy = sign_flip_tests(d, n_resamples=100, westfall_young=True)  # 2**4 <= 100: exact
    >>> # Row 0: d = .5 .25 .25 .25, only all + and all - reach |mean| 0.3125: p = 2/16.
    >>> # Row 1: mean 0.125; the null means are +-0.125 and +-0.375 (the sign of the 0 is free):
    >>> # P(null >= 0.125) = 8/16, P(null <= 0.125) = 12/16, p = 2 * min = 1.0 (scipy's two-sided p).
    >>> p.tolist()
    [0.125, 1.0]
    >>> [float(x) >= float(y) for x, y in zip(wy, p)]
    [True, True]
    """
    D, mask, counts = _check(differences, defined)
    n, rows = D.shape
    observed = _row_means(D, counts, mask)
    gamma = np.abs(_GAMMA * observed)
    sum_squares = np.einsum("ij,ij->j", D, D)
    t_observed = _t_statistics(observed, sum_squares, counts)
    order = np.argsort(-t_observed, kind="stable")
    t_sorted = t_observed[order] * (1 - _GAMMA)
    less = np.zeros(rows, dtype=np.int64)
    greater = np.zeros(rows, dtype=np.int64)
    wy_counts = np.zeros(rows, dtype=np.int64)

    def tally(null_means: np.ndarray) -> None:  # (b, rows)
        less[:] += np.count_nonzero(null_means <= observed + gamma, axis=0)
        greater[:] += np.count_nonzero(null_means >= observed - gamma, axis=0)
        if westfall_young:
            t = _t_statistics(null_means, sum_squares, counts)[:, order]
            successive = np.maximum.accumulate(t[:, ::-1], axis=1)[:, ::-1]
            wy_counts[:] += np.count_nonzero(successive >= t_sorted, axis=0)

    exact = n < 63 and 2 ** n <= n_resamples
    if exact:
        patterns = _exact_patterns(n)
        # Each row's null distribution as scipy computes it (np.mean of the flipped values, in
        # query order), so the exact test agrees with scipy's to the last bit.
        null = np.empty((patterns.shape[0], rows))
        for r in range(rows):
            null[:, r] = np.mean(patterns[:, mask[:, r]] * D[mask[:, r], r], axis=-1)
        tally(null)
        total, adjustment = patterns.shape[0], 0
    else:
        rng = np.random.default_rng(seed)
        column_sums = D.sum(axis=0)
        block = max(1, min(int(n_resamples), BLOCK_ELEMENTS // n))
        n_bytes = (n + 7) // 8
        step = _slice_rows(n, rows)
        with _one_blas_thread():
            for start in range(0, int(n_resamples), block):
                b = min(block, int(n_resamples) - start)
                packed = rng.integers(0, 256, (b, n_bytes), dtype=np.uint8)
                for first in range(0, b, step):
                    bits = np.unpackbits(packed[first:first + step], axis=1, count=n)
                    # sum(s * d) with s = 1 - 2 * bit: the column sums minus twice the flipped part.
                    null_sums = column_sums - 2.0 * (bits.astype(np.float64) @ D)
                    tally(null_sums / counts)
        total, adjustment = int(n_resamples), 1
    p = np.minimum(less + adjustment, greater + adjustment) / (total + adjustment) * 2
    p = np.clip(p, 0.0, 1.0)
    if not westfall_young:
        return p, None
    stepped = np.maximum.accumulate((wy_counts + adjustment) / (total + adjustment))
    adjusted = np.empty(rows)
    adjusted[order] = np.minimum(stepped, 1.0)
    # An adjusted p-value is never below the raw one (they use |t| and the two tails of the mean).
    return p, np.maximum(adjusted, p)


def _bca_levels(theta_b: np.ndarray, d: np.ndarray, alpha: float) -> tuple[float, float]:
    """BCa's two quantile levels for the mean of ``d`` (Efron 1987; Efron & Tibshirani 1993,
    14.3 and 15.4), with scipy.stats.bootstrap's arithmetic: ``z0`` from the share of resampled
    means below (and, half, equal to) the observed mean; the acceleration from the jackknife,
    which for the mean is ``sum(u**3) / (6 * sum(u**2)**1.5)``, u = d - mean(d)."""
    from scipy.special import ndtr, ndtri

    theta = np.mean(d)
    share = (np.count_nonzero(theta_b < theta) + np.count_nonzero(theta_b <= theta)) / (2 * theta_b.size)
    z0 = ndtri(share)
    # scipy forms the jackknife means and their deviations U = (n - 1) * (mean - jackknife mean);
    # algebraically U_i = d_i - mean(d). Same formula, one pass.
    n = d.size
    jack = (n * theta - d) / (n - 1)
    u = (n - 1) * (np.mean(jack) - jack)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (np.sum(u ** 3) / n ** 3) / (6 * (np.sum(u ** 2) / n ** 2) ** 1.5)
    z_alpha = float(ndtri(alpha))
    num1, num2 = z0 + z_alpha, z0 - z_alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(ndtr(z0 + num1 / (1 - a * num1))), float(ndtr(z0 + num2 / (1 - a * num2)))


def bootstrap_intervals(differences, defined=None, method: str = "bca", confidence: float = 0.95,
                        n_resamples: int = 10_000, seed: int = 0) -> list[tuple[float, float, str | None]]:
    """Bootstrap intervals of the mean difference of every row, from shared resampled queries.

    Rows with the same defined queries (all rows of an ordinary ranking comparison) share one
    set of resampled query indices, drawn from ``numpy.random.default_rng(seed)`` as
    ``scipy.stats.bootstrap`` draws them (``rng.integers(0, n, (batch, n))``; the generator gives
    the same stream whatever the batch, so scipy's ``batch`` does not matter); the resampled means
    of all those rows are one product of a count matrix (how often each query is drawn in each
    resample) with the difference matrix, a few hundred resamples at a time so that the counts
    stay in the processor's cache. So each row's bootstrap distribution is the one
    ``scipy.stats.bootstrap((d,), np.mean, rng=default_rng(seed))`` computes, up to float
    rounding, and the interval is scipy's percentile or BCa interval of it.

    Parameters
    ----------
    differences, defined
        As in :func:`sign_flip_tests`; a row needs at least two defined differences.
    method : {"bca", "percentile"}
        Interval from the bootstrap distribution (``numpy.quantile``, linear interpolation, as
        ``scipy.stats.quantile``).
    confidence : float in (0, 1)
        Two-sided confidence level.
    n_resamples : int >= 1
        Bootstrap resamples.
    seed : int >= 0
        Seed of the resampled indices.

    Returns
    -------
    list of (low, high, note)
        One per row. ``note`` is None, or says why the interval is not the ordinary one: all
        differences equal (the interval is that value), or BCa undefined (the percentile
        interval is given).

    Raises
    ------
    EvalSuiteError
        A bad array or method.

    References
    ----------
    B. Efron, "Better bootstrap confidence intervals", JASA 82 (1987); B. Efron and R. J.
    Tibshirani, *An Introduction to the Bootstrap* (1993), 14.3 and 15.4.

    Examples
    --------
    >>> (low, high, note), = bootstrap_intervals([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], method="percentile",
    ...                                          n_resamples=2_000, seed=1)
    >>> bool(0.2 < low < 0.35 < high < 0.5), note
    (True, None)
    >>> bootstrap_intervals([0.25, 0.25, 0.25])[0]
    (0.25, 0.25, 'every difference is the same value: the interval is that value')
    """
    if method not in ("bca", "percentile"):
        raise EvalSuiteError("ci must be one of bca, percentile", field="ci", value=method)
    D, mask, counts = _check(differences, defined)
    rows = D.shape[1]
    results: list[tuple[float, float, str | None] | None] = [None] * rows
    alpha = (1 - confidence) / 2
    groups: dict[bytes, list[int]] = {}
    for r in range(rows):
        values = D[mask[:, r], r]
        if values.size < 2:
            raise EvalSuiteError("a bootstrap interval needs at least two differences", field="differences",
                                 value=int(values.size))
        if np.all(values == values[0]):
            results[r] = (float(values[0]), float(values[0]),
                          "every difference is the same value: the interval is that value")
        else:
            groups.setdefault(mask[:, r].tobytes(), []).append(r)
    for members in groups.values():
        positions = np.flatnonzero(mask[:, members[0]])
        values = D[np.ix_(positions, members)]  # (n_g, rows of the group)
        n = positions.size
        rng = np.random.default_rng(seed)
        theta_b = np.empty((len(members), int(n_resamples)))
        step = min(_slice_rows(n, len(members)), int(n_resamples))
        shift = (np.arange(step, dtype=np.int64) * n)[:, None]
        with _one_blas_thread():
            for start in range(0, int(n_resamples), step):
                rows_ = min(step, int(n_resamples) - start)
                # The resamples' indices as scipy's _bootstrap_resample draws them: the generator
                # gives the same stream whether asked for a whole batch at once or for it a slice
                # at a time (tests/stats/test_resampling.py), and a slice stays in the cache.
                idx = rng.integers(0, n, (rows_, n))
                # How often each query is drawn in each resample of the slice: one bincount over
                # the slice, each resample's indices shifted to their own n bins.
                idx += shift[:rows_]
                drawn = np.bincount(idx.ravel(), minlength=rows_ * n).reshape(rows_, n)
                theta_b[:, start:start + rows_] = (drawn @ values).T / n
        for k, r in enumerate(members):
            d = values[:, k]
            levels, note = (alpha, 1 - alpha), None
            if method == "bca":
                levels = _bca_levels(theta_b[k], d, alpha)
                if not all(math.isfinite(x) for x in levels):
                    levels = (alpha, 1 - alpha)
                    note = "BCa is undefined for these differences; the percentile interval is given"
            low, high = np.quantile(theta_b[k], levels)
            results[r] = (float(low), float(high), note)
    return results  # type: ignore[return-value]
