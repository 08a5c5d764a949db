"""How many labels, how many queries: the paired t-test's sample size and detectable difference
against statsmodels' power solver, the randomisation test's resampled power next to the t-test's,
and the labels an interval needs for a width, checked against the widths themselves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalsuite import EvalSuiteError
from evalsuite.stats import intervals, ppi, sample_size

power_module = pytest.importorskip("statsmodels.stats.power")


@pytest.mark.parametrize("effect", [0.05, 0.1, 0.2, 0.5, 0.8, 1.5])
@pytest.mark.parametrize("power", [0.8, 0.9])
def test_queries_for_power_matches_statsmodels(effect, power):
    expected = math.ceil(power_module.TTestPower().solve_power(effect_size=effect, alpha=0.05, power=power))
    assert sample_size.queries_for_power(sd=1.0, difference=effect, power=power) == max(expected, 2)
    n = sample_size.queries_for_power(sd=0.3, difference=0.3 * effect, power=power)
    assert n == max(expected, 2)  # only the ratio difference / sd matters


@pytest.mark.parametrize("n", [5, 34, 100, 2000])
def test_detectable_difference_inverts_the_power(n):
    found = sample_size.detectable_difference(0.2, n)
    # statsmodels' power at the difference found is 0.8 (its own solver stops 2e-5 short at n = 2000)
    assert power_module.TTestPower().power(effect_size=found / 0.2, nobs=n, alpha=0.05) == pytest.approx(0.8, abs=1e-9)
    expected = power_module.TTestPower().solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8)
    assert found == pytest.approx(0.2 * expected, rel=1e-4)


def test_randomisation_power_is_close_to_the_t_tests_and_plans_near_it():
    d = np.random.default_rng(0).normal(0, 0.2, 400)
    t_power = power_module.TTestPower().power(effect_size=0.1 / 0.2, nobs=34, alpha=0.05)
    assert sample_size.randomisation_power(d, 34, 0.1, seed=1) == pytest.approx(t_power, abs=0.04)
    big = sample_size.randomisation_power(d, 400, 0.02, seed=1)  # the normal limit of the sign-flip test
    assert big == pytest.approx(power_module.TTestPower().power(effect_size=0.02 / 0.2, nobs=400, alpha=0.05), abs=0.04)
    n_t = sample_size.queries_for_power(0.2, 0.1)
    n_r = sample_size.queries_for_power(0.2, 0.1, test="randomisation", differences=d)
    assert abs(n_r - n_t) <= 4
    assert sample_size.randomisation_power(d, n_r, 0.1) >= 0.8
    with pytest.raises(EvalSuiteError):
        sample_size.queries_for_power(0.2, 0.1, test="randomisation")
    with pytest.raises(EvalSuiteError):
        sample_size.queries_for_power(0.0, 0.1)


@pytest.mark.parametrize("x,n", [(30, 40), (40, 40), (3, 50), (100, 200)])
def test_labels_for_width_of_a_share_is_the_smallest_n_that_reaches_it(x, n):
    iv = intervals.clopper_pearson_interval(x, n)
    target = iv.width / 2
    needed = sample_size.labels_for_width(iv, target)
    p = x / n
    width = lambda m: intervals.clopper_pearson_interval(p * m, m).width  # noqa: E731
    assert width(needed) <= target < width(needed - 1)


def test_labels_for_width_of_ppi_uses_its_two_variances():
    rng = np.random.default_rng(2)
    y = (rng.random(60) < 0.6).astype(float)
    f = np.where(rng.random(60) < 0.2, 1 - y, y)
    fu = (rng.random(4000) < 0.6).astype(float)
    iv = ppi.ppi_mean(y, f, fu)
    needed = sample_size.labels_for_width(iv, iv.width / 2)
    z = intervals._z(0.95)
    m = 4060
    width = lambda k: 2 * z * math.sqrt(fu.var() / (m - k) + (y - f).var() / k)  # noqa: E731
    assert width(needed) <= iv.width / 2 < width(needed - 1)
    assert sample_size.labels_for_width(iv, 0.01) is None  # below the judge's own floor on these 4,060 requests
