"""Intervals inside their range: Clopper-Pearson and Wilson against statsmodels, the share interval
of per-request shares and of weighted labels, and the ranges held on every count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalsuite import EvalSuiteError
from evalsuite.stats import intervals

proportion = pytest.importorskip("statsmodels.stats.proportion")


@pytest.mark.parametrize("n", [1, 7, 20, 50, 200])
def test_clopper_pearson_and_wilson_match_statsmodels_for_every_count(n):
    for x in range(n + 1):
        cp = intervals.clopper_pearson_interval(x, n)
        assert (cp.low, cp.high) == pytest.approx(proportion.proportion_confint(x, n, alpha=0.05, method="beta"),
                                                  abs=1e-9)
        w = intervals.wilson_interval(x, n)
        assert (w.low, w.high) == pytest.approx(proportion.proportion_confint(x, n, alpha=0.05, method="wilson"),
                                                abs=1e-9)
        for iv in (cp, w):
            assert 0 <= iv.low <= iv.estimate <= iv.high <= 1 and iv.width > 0


def test_clopper_pearson_covers_at_least_nominally_where_wilson_dips():
    """Exact coverage at n = 20, p = 0.95 (an accuracy of 0.95 on 20 labels): Wilson 92.4%, Clopper-Pearson
    at least 95% (the reason the page uses Clopper-Pearson for 0/1 values)."""
    from scipy import stats

    n, p = 20, 0.95
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    cover = {name: sum(pmf[x] for x in range(n + 1) if f(x, n).low <= p <= f(x, n).high)
             for name, f in (("cp", intervals.clopper_pearson_interval), ("wilson", intervals.wilson_interval))}
    assert cover["cp"] >= 0.95 and cover["wilson"] == pytest.approx(0.9245, abs=5e-4)


def test_share_interval_of_shares_and_of_weighted_labels():
    shares = np.array([1.0, 0.5, 0.75, 1.0, 0.8])
    iv = intervals.share_interval(shares)
    ref = proportion.proportion_confint(shares.sum(), len(shares), alpha=0.05, method="wilson")
    assert iv.method == "wilson (shares)" and (iv.low, iv.high) == pytest.approx(ref, abs=1e-9)
    labels = np.array([1, 0, 1, 1, 0, 1.0])
    weights = np.array([1, 1, 4, 4, 2, 2.0])
    iv = intervals.share_interval(labels, weights=weights)
    mean = (weights * labels).sum() / weights.sum()
    n_eff = weights.sum() ** 2 / (weights ** 2).sum()
    from scipy import stats

    assert iv.estimate == pytest.approx(mean) and iv.extra["n_eff"] == pytest.approx(n_eff)
    x = mean * n_eff
    assert (iv.low, iv.high) == pytest.approx((stats.beta.ppf(0.025, x, n_eff - x + 1),
                                               stats.beta.ppf(0.975, x + 1, n_eff - x)))
    assert iv.method == "clopper-pearson, effective n"
    # equal weights: the unweighted interval
    same = intervals.share_interval(labels, weights=np.full(6, 3.0))
    plain = intervals.share_interval(labels)
    assert (same.low, same.high) == pytest.approx((plain.low, plain.high))


def test_edges_and_errors():
    assert intervals.share_interval([0, 0, 0]).note == "every value is 0"
    assert math.isnan(intervals.share_interval([None, None]).estimate)
    with pytest.raises(EvalSuiteError) as err:
        intervals.share_interval([0.5, 1.5])
    assert err.value.field == "values[1]"
    with pytest.raises(EvalSuiteError):
        intervals.clopper_pearson_interval(5, 4)
    with pytest.raises(EvalSuiteError):
        intervals.kappa_interval([[1, 2, 3]])
    assert intervals.effective_size([]) == 0.0
    with pytest.raises(EvalSuiteError):
        intervals.effective_size([1, 0])
