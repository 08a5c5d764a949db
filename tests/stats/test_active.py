"""Active statistical inference with priority sampling: the order and the inclusion probabilities
follow their definitions, the estimate is unbiased at any stopping point (Monte Carlo over seeds,
where the unweighted mean of the same labels is visibly biased), power tuning minimises the
variance, and too few labels fall back to the weighted human-only interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalsuite import EvalSuiteError
from evalsuite.stats import active


def test_weights_follow_the_uncertainty_rule():
    f = np.array([0.5, 0.9, 0.1, 1.0])
    u = np.sqrt(f * (1 - f))
    assert active.sampling_weights(f, mix=0.3) == pytest.approx(0.3 + 0.7 * u / u.mean())
    assert active.sampling_weights(f).mean() == pytest.approx(1.0)
    with pytest.raises(EvalSuiteError) as err:
        active.sampling_weights([0.5, 1.2])
    assert err.value.field == "judge[1]"


def test_order_and_inclusion_probabilities_are_priority_sampling():
    w = np.array([2.0, 1.0, 0.5, 1.0, 0.0])
    order, keys = active.labelling_order(w, seed=3)
    u = np.random.default_rng(3).random(5)
    assert keys[:4] == pytest.approx(u[:4] / w[:4]) and math.isinf(keys[4])
    assert order.tolist() == np.argsort(keys, kind="stable").tolist() and order[-1] == 4
    labelled = np.zeros(5, dtype=bool)
    labelled[order[:2]] = True
    pi = active.inclusion_probabilities(keys, w, labelled)
    tau = keys[order[2]]
    assert pi[order[:2]] == pytest.approx(np.minimum(1, tau * w[order[:2]]))
    assert np.isnan(pi[order[2:]]).all()
    # A label given out of order (beyond the threshold) is left out of the sample.
    labelled[order[3]] = True
    assert np.isnan(active.inclusion_probabilities(keys, w, labelled)[order[3]])
    # Excluded (skipped by everyone): neither sampled nor blocking the threshold.
    excluded = np.zeros(5, dtype=bool)
    excluded[order[2]] = True
    pi = active.inclusion_probabilities(keys, w, labelled, excluded)
    assert pi[order[3]] == pytest.approx(min(1, keys[order[4]] * w[order[3]]) if np.isfinite(keys[order[4]]) else 1)


def test_the_estimate_is_unbiased_at_a_fixed_stopping_point():
    rng = np.random.default_rng(0)
    m, k, draws = 40, 10, 20_000
    f = rng.random(m)
    y = (rng.random(m) < np.clip(f + 0.25 * (f > 0.5), 0, 1)).astype(float)  # the judge is biased on one side
    w = active.sampling_weights(f, mix=0.2)
    truth = y.mean()
    estimates, naive = np.empty(draws), np.empty(draws)
    for s in range(draws):
        _, keys = active.labelling_order(w, seed=s)
        labelled = np.zeros(m, dtype=bool)
        labelled[np.argsort(keys, kind="stable")[:k]] = True
        pi = active.inclusion_probabilities(keys, w, labelled)
        estimates[s] = active.active_mean(f, np.where(labelled, y, np.nan), pi, fallback=False).extra["unclipped"][0]
        naive[s] = f.mean() + (y[labelled] - f[labelled]).mean()
    se = estimates.std() / math.sqrt(draws)
    assert abs(estimates.mean() - truth) < 4 * se  # unbiased (Duffield, Lund & Thorup 2007)
    assert abs(naive.mean() - truth) > 10 * naive.std() / math.sqrt(draws)  # ignoring the weights is biased


def test_tuned_lambda_minimises_the_variance_of_the_terms():
    rng = np.random.default_rng(1)
    m = 300
    f = rng.random(m)
    y = (rng.random(m) < f).astype(float)
    pi = np.where(rng.random(m) < 0.3, 0.3, np.nan)
    iv = active.active_mean(f, np.where(np.isnan(pi), np.nan, y), pi, tuned=True, fallback=False)
    inverse = np.where(np.isnan(pi), 0, 1 / np.nan_to_num(pi, nan=1))
    grid = np.linspace(0, 1, 2001)
    variances = [np.var(lam * f + (y - lam * f) * inverse) for lam in grid]
    assert iv.extra["lam"] == pytest.approx(grid[int(np.argmin(variances))], abs=1e-3)
    assert iv.method == "active++"


def test_too_few_labels_fall_back_to_the_weighted_human_share():
    f = np.array([0.9, 0.5, 0.1, 0.5])
    y = np.array([np.nan, 1.0, np.nan, 0.0])
    pi = np.array([np.nan, 0.5, np.nan, 0.25])
    iv = active.active_mean(f, y, pi)
    assert iv.method == "human only (clopper-pearson, effective n)"
    assert iv.note == "only 2 labelled requests: active inference needs at least 30"
    assert iv.estimate == pytest.approx((2 * 1 + 4 * 0) / 6)
    with pytest.raises(EvalSuiteError) as err:
        active.active_mean(f, [np.nan] * 4, pi)
    assert err.value.field == "human[1]"


def test_the_fallback_plans_labels_as_the_weighted_human_interval_it_shows():
    """The human-only interval shown in active inference's place keeps its effective sample size,
    so the labels it says would halve it are those of the same weighted interval on its own (found
    on the Calibration page: 12 against 44 for one and the same interval)."""
    from evalsuite.stats.intervals import share_interval
    from evalsuite.stats.sample_size import labels_for_width

    rng = np.random.default_rng(3)
    f = rng.uniform(0.05, 0.95, 300)
    weights = active.sampling_weights(f)
    _, keys = active.labelling_order(weights, seed=4)
    labelled = np.zeros(300, dtype=bool)
    labelled[np.argsort(keys)[:8]] = True
    pi = active.inclusion_probabilities(keys, weights, labelled)
    y = np.where(labelled, (rng.random(300) < 0.5).astype(float), np.nan)
    shown = active.active_mean(f, y, pi)
    alone = share_interval(y[labelled], weights=1 / pi[labelled])
    assert shown.note and (shown.low, shown.high) == (alone.low, alone.high)
    assert shown.extra["n_eff"] == alone.extra["n_eff"] < 8
    assert labels_for_width(shown, shown.width / 2) == labels_for_width(alone, alone.width / 2)
