"""Latency views for many systems (issue 30): the log-axis rule, the Pareto front against brute force,
and the figures (small multiples, the Pareto chart) with user text shown as text."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from evalsuite import display


def test_log_axis_past_two_decades():
    assert display.log_axis_advised([1.0, 100.0]) is False
    assert display.log_axis_advised([1.0, 100.1]) is True
    assert display.log_axis_advised([0.0, -5.0, np.nan, 3.0]) is False  # only positive finite values count


@pytest.mark.parametrize("seed", range(5))
def test_pareto_front_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 8, 30).astype(float)  # ties on purpose
    y = rng.integers(0, 5, 30) / 4
    for higher in (True, False):
        yy = y if higher else -y
        brute = [not any(x[j] <= x[i] and yy[j] >= yy[i] and (x[j] < x[i] or yy[j] > yy[i])
                         for j in range(30) if j != i) for i in range(30)]
        assert display.pareto_front(x, y, higher_is_better=higher).tolist() == brute


def test_figures_for_nineteen_systems_escape_names():
    systems = [f"<b>s{i}</b>" for i in range(19)]
    frame = pd.DataFrame({"system": np.repeat(systems, 20), "latency_ms": np.tile(np.geomspace(10, 90_000, 20), 19),
                          "success": np.tile([1, 0], 190)})
    binned = display.binned_histogram(frame, "latency_ms", group="system", bins=10, log=True)
    points = display.ecdf_points(frame, "latency_ms", group="system")
    grid = display.latency_histogram_grid(binned, systems, log=True)
    titles = [a.text for a in grid.layout.annotations]
    assert titles == [s.replace("<", "&lt;").replace(">", "&gt;") for s in systems]
    assert grid.layout.xaxis.type == "log" and grid.layout.showlegend is False
    ecdf = display.latency_ecdf_grid(points, systems, log=True)
    assert len([t for t in ecdf.data if t.name]) == 19
    table = display.system_quality_latency(frame, "success")
    pareto = display.quality_latency_pareto(table, "success")
    labels = [t for trace in pareto.data for t in (trace.text or ()) if t]
    assert labels and not any("<b>" in t for t in labels)
    assert pareto.layout.legend.orientation == "h"


def test_given_beside_computed_keeps_given_rows_only():
    given = pd.DataFrame({"system": ["a", "b"], "stage": ["end_to_end"] * 2, "unit": ["ms"] * 2, "n": [3.0, 2.0],
                          "mean": [1.0, 2.0], "p50": [1.0, 2.0], "p90": [1.0, 2.0], "p95": [1.0, 2.0], "p99": [1.0, 2.0]})
    computed = given.iloc[:1].assign(p50=1.5)
    both = display.given_and_computed(given, computed)
    assert both["system"].tolist() == ["a", "b"]
    assert both.loc[0, "p50 diff"] == 0.5 and np.isnan(both.loc[1, "p50 computed"])
    assert list(itertools.islice(both.columns, 2)) == ["system", "stage"]
