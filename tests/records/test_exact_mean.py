"""The exact mean of evaluate_records' corpus values: equal to the mean of the exact rational sum
(Python's Fraction), rounded once, and the same however the values are split."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import evalsuite as es
from evalsuite.utils.exact_sum import ExactSum, exact_mean


def _reference(values) -> float:
    return float(sum(Fraction(float(v)) for v in values) / len(values))


@pytest.mark.parametrize("kind", ["unit", "wide", "ratios", "extremes"])
def test_exact_mean_is_the_rounded_rational_mean_whatever_the_split(kind):
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(1, 400))
        if kind == "unit":
            x = rng.random(n)
        elif kind == "wide":  # exponents over most of the float range, both signs
            x = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)
        elif kind == "ratios":  # what judgement shares are: 1/3, 2/7 ...
            x = rng.integers(0, 7, size=n) / rng.integers(1, 9, size=n)
        else:
            x = np.concatenate([rng.random(n), [5e-324, -5e-324, 1.7e308, -1.7e308, 2.0 ** -1074]])
        expected = _reference(x)
        assert exact_mean(x) == expected
        cuts = np.sort(rng.integers(0, x.size + 1, size=3))
        parts = np.split(x, cuts)
        total = sum((ExactSum.of(p) for p in parts[1:]), ExactSum.of(parts[0]))
        assert total.mean() == expected and total.count == x.size


def test_a_float_sum_depends_on_the_split_the_exact_one_does_not():
    x = np.array([1e16, 1.0, -1e16, 1.0] * 5)  # exact sum 10, mean 0.5
    assert sum(x.tolist()) / x.size != 0.5  # left to right, each 1.0 after 1e16 is lost
    assert exact_mean(x) == 0.5 and exact_mean(x[::-1]) == 0.5
    assert (ExactSum.of(x[:3]) + ExactSum.of(x[3:])).mean() == 0.5


def test_non_finite_and_empty():
    assert math.isnan(exact_mean([]))
    assert exact_mean([np.inf, 1.0]) == np.inf and exact_mean([-np.inf]) == -np.inf
    assert math.isnan(exact_mean([np.inf, -np.inf])) and math.isnan(exact_mean([np.nan, 1.0]))


def test_evaluate_records_reports_the_exact_mean():
    rows = [{"query_id": f"q{i}", "system": "rag", "answer_claims_supported": [True] * (i % 3) + [False] * (i % 7 + 1)}
            for i in range(500)]
    report = es.evaluate_records(es.Records.from_rows(rows))
    score = report.scores["rag"]["faithfulness"]
    assert float(score) == _reference(score.per_query[~np.isnan(score.per_query)])
