"""The shared resampling pass (evalsuite.stats.resampling) against scipy and a brute-force Westfall-Young.

- sign-flip p-values: equal to scipy.stats.permutation_test when both enumerate every pattern,
  within Monte Carlo error (a tolerance derived from the resample counts) otherwise;
- bootstrap intervals: scipy.stats.bootstrap draws the same indices with the same seed (whatever its batch),
  so the intervals agree to rounding;
- Westfall-Young step-down max-T: against a loop over every sign pattern with
  scipy.stats.ttest_1samp's t statistic, written from Westfall & Young (1993), Algorithm 2.8.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.stats

from evalsuite import EvalSuiteError
from evalsuite.stats.resampling import BLOCK_ELEMENTS, bootstrap_intervals, sign_flip_tests


def mean_statistic(x, axis=-1):
    return np.mean(x, axis=axis)


def scipy_p(d, n_resamples, seed):
    return scipy.stats.permutation_test((d,), mean_statistic, permutation_type="samples", vectorized=True,
                                        n_resamples=n_resamples, rng=np.random.default_rng(seed)).pvalue


def tolerance(p, *n_resamples, z=5.0):
    """z standard deviations of the difference of independent Monte Carlo two-sided p-values."""
    q = min(max(p / 2, 1.0 / max(n_resamples)), 0.5)
    return z * math.sqrt(sum(4 * q * (1 - q) / b for b in n_resamples)) + 2.0 / min(n_resamples)


def differences(n, rows, seed):
    rng = np.random.default_rng(seed)
    shifts = np.linspace(-0.04, 0.06, rows)
    D = rng.normal(shifts, 0.2, (n, rows))
    D[:, -1] = rng.integers(-2, 3, n) / 4  # many exact ties, as MRR or recall differences have
    return D


@pytest.mark.parametrize("n", [3, 9, 13])
def test_exact_enumeration_equals_scipy_exactly(n):
    D = differences(n, 4, n)
    p, _ = sign_flip_tests(D, n_resamples=2 ** n)
    for r in range(D.shape[1]):
        assert p[r] == scipy_p(D[:, r], 2 ** n, 0)


def test_exact_enumeration_with_undefined_entries_equals_scipy_on_each_rows_own_queries():
    D = differences(11, 3, 5)
    defined = np.ones_like(D, dtype=bool)
    defined[[0, 4], 1] = False
    defined[7, 2] = False
    p, _ = sign_flip_tests(np.where(defined, D, np.nan), n_resamples=4_096)
    for r in range(3):
        assert p[r] == scipy_p(D[defined[:, r], r], 4_096, 0)


@pytest.mark.parametrize("n", [40, 700])
def test_random_sign_flips_agree_with_scipy_within_monte_carlo_error(n):
    D = differences(n, 5, n)
    D[:, 0] *= 0.1  # a p-value near 0.5 as well as small ones
    p, _ = sign_flip_tests(D, n_resamples=4_000, seed=1)
    for r in range(D.shape[1]):
        theirs = scipy_p(D[:, r], 20_000, 2)
        assert abs(p[r] - theirs) <= tolerance(theirs, 4_000, 20_000), (r, p[r], theirs)
    assert tolerance(0.3, 4_000, 20_000) < 0.08


def test_undefined_entries_are_the_rows_own_test():
    D = differences(300, 2, 8)
    defined = np.ones_like(D, dtype=bool)
    defined[::3, 1] = False
    p, _ = sign_flip_tests(D, defined, n_resamples=5_000, seed=0)
    theirs = scipy_p(D[defined[:, 1], 1], 20_000, 3)
    assert abs(p[1] - theirs) <= tolerance(theirs, 5_000, 20_000)


def test_reproducible_by_seed_and_blocks_do_not_change_the_numbers(monkeypatch):
    import evalsuite.stats.resampling as module

    D = differences(500, 3, 2)
    first = sign_flip_tests(D, n_resamples=3_000, seed=9, westfall_young=True)
    again = sign_flip_tests(D, n_resamples=3_000, seed=9, westfall_young=True)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    other = sign_flip_tests(D, n_resamples=3_000, seed=10)[0]
    assert not np.array_equal(first[0], other)
    # Blocks bound memory; other block sizes draw other patterns but the same test.
    monkeypatch.setattr(module, "BLOCK_ELEMENTS", 500 * 7)
    small_blocks = sign_flip_tests(D, n_resamples=3_000, seed=9)[0]
    for mine, theirs in zip(first[0], small_blocks):
        assert abs(mine - theirs) <= tolerance(theirs, 3_000, 3_000)


def test_all_zero_row_has_p_one():
    D = differences(30, 2, 1)
    D[:, 1] = 0.0
    p, wy = sign_flip_tests(D, n_resamples=1_000, westfall_young=True)
    assert p[1] == 1.0 and wy[1] == 1.0


# ------------------------------------------------------------------------------------------
# Westfall-Young step-down max-T
# ------------------------------------------------------------------------------------------


def westfall_young_by_definition(D):
    """Westfall & Young (1993), Algorithm 2.8 (step-down max-T), over all 2**n sign patterns,
    with scipy's one-sample t statistic; a plain loop, independent of the code under test."""
    n, m = D.shape

    def abs_t(x):
        if not np.any(x):
            return 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            t = abs(scipy.stats.ttest_1samp(x, 0.0).statistic)
        return math.inf if np.isnan(t) else t

    observed = [abs_t(D[:, j]) for j in range(m)]
    order = sorted(range(m), key=lambda j: -observed[j])
    counts = [0] * m
    patterns = list(itertools.product((1.0, -1.0), repeat=n))
    for signs in patterns:
        flipped = D * np.array(signs)[:, None]
        t = [abs_t(flipped[:, j]) for j in range(m)]
        for position, j in enumerate(order):
            largest = max(t[k] for k in order[position:])
            if largest >= observed[j] * (1 - 1e-12):
                counts[position] += 1
    adjusted, running = [0.0] * m, 0.0
    for position, j in enumerate(order):
        running = max(running, counts[position] / len(patterns))
        adjusted[j] = min(running, 1.0)
    return adjusted


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_westfall_young_equals_the_definition_on_every_sign_pattern(seed):
    D = differences(9, 4, seed)
    p, wy = sign_flip_tests(D, n_resamples=512, westfall_young=True)
    expected = westfall_young_by_definition(D)
    np.testing.assert_allclose(wy, np.maximum(expected, p), rtol=0, atol=1e-15)


def test_westfall_young_costs_nothing_for_identical_rows_and_about_sidak_for_independent_ones():
    # Perfectly correlated rows (the same metric twice): no multiplicity to pay for.
    d = differences(200, 1, 4)[:, 0]
    p, wy = sign_flip_tests(np.column_stack([d, d, d]), n_resamples=5_000, westfall_young=True)
    np.testing.assert_array_equal(wy, p)
    # Independent rows: between the raw p-value and Bonferroni's, close to Sidak's 1 - (1 - p)**m.
    rng = np.random.default_rng(0)
    D = rng.normal(0.0, 0.2, (400, 6))
    D[:, 0] += 0.025
    p, wy = sign_flip_tests(D, n_resamples=20_000, seed=3, westfall_young=True)
    assert np.all(wy >= p) and np.all(wy <= np.minimum(6 * p, 1.0) + 1e-12)
    # The row with the largest |t| is adjusted by the maximum over all six: Sidak's value.
    top = int(np.argmin(p))
    sidak = 1 - (1 - p[top]) ** 6
    assert abs(wy[top] - sidak) <= tolerance(sidak, 20_000) + 0.01, (p[top], wy[top], sidak)


# ------------------------------------------------------------------------------------------
# Bootstrap intervals
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method, batch", [("bca", BLOCK_ELEMENTS // 3_000), ("percentile", BLOCK_ELEMENTS // 3_000),
                                           ("bca", None), ("bca", 7)])
def test_bootstrap_equals_scipy_with_the_same_seed_whatever_its_batch(method, batch):
    # The draws are scipy's whatever its batch (the generator's stream does not depend on how
    # many indices are asked for at a time), and ours come in slices of another size.
    n = 3_000  # several blocks of resamples
    D = differences(n, 3, 6)
    got = bootstrap_intervals(D, method=method, confidence=0.9, n_resamples=2_500, seed=5)
    for r in range(3):
        res = scipy.stats.bootstrap((D[:, r],), mean_statistic, n_resamples=2_500, confidence_level=0.9,
                                    method={"bca": "BCa", "percentile": "percentile"}[method], vectorized=True,
                                    batch=batch, rng=np.random.default_rng(5))
        assert got[r][0] == pytest.approx(res.confidence_interval.low, rel=1e-11)
        assert got[r][1] == pytest.approx(res.confidence_interval.high, rel=1e-11)
        assert got[r][2] is None


def test_bootstrap_rows_with_other_queries_use_their_own_queries():
    D = differences(120, 2, 3)
    defined = np.ones_like(D, dtype=bool)
    defined[:20, 1] = False
    got = bootstrap_intervals(D, defined, n_resamples=1_000, seed=2)
    res = scipy.stats.bootstrap((D[20:, 1],), mean_statistic, n_resamples=1_000, rng=np.random.default_rng(2))
    assert got[1][:2] == pytest.approx((res.confidence_interval.low, res.confidence_interval.high), rel=1e-11)


def test_bootstrap_degenerate_rows_and_bad_input():
    low, high, note = bootstrap_intervals([0.0, 0.0, 0.0, 1.0], n_resamples=200)[0]
    assert 0.0 <= low <= high <= 1.0
    # One resample below the mean: the bias correction is infinite, BCa undefined: percentile given.
    d = [0.0] * 9 + [1.0]
    low, high, note = bootstrap_intervals(d, n_resamples=1, seed=0)[0]
    assert "percentile" in note and low == high
    assert bootstrap_intervals([0.3, 0.3, 0.3])[0] == (0.3, 0.3, "every difference is the same value: the interval "
                                                                  "is that value")
    with pytest.raises(EvalSuiteError, match="ci must be"):
        bootstrap_intervals([0.1, 0.2], method="basic")
    with pytest.raises(EvalSuiteError, match="at least two"):
        bootstrap_intervals([0.1])
    with pytest.raises(EvalSuiteError, match="non-empty"):
        sign_flip_tests(np.empty((0, 2)))
    with pytest.raises(EvalSuiteError, match="at least one defined"):
        sign_flip_tests([[np.nan, 0.1], [np.nan, 0.2]])
