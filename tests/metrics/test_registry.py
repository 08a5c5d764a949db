"""Checks run on every registered metric (in the spirit of scikit-learn's metrics/tests/test_common.py):
its hand-computed vectors, its range, invariance to the order of queries, the maximum on a perfect
input, the documented value when nothing is relevant, and names that parse back to it. A new
registry entry gets all of these for free."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import evalsuite as es
from evalsuite.metrics.registry import KINDS, METRICS
from evalsuite.metrics.functions import list_function
from evalsuite.metrics.names import metric_info

REPO = Path(__file__).resolve().parents[2]
ENTRIES = list(METRICS.values())
IDS = [m.name for m in ENTRIES]


def _lists(qrels: dict, run: dict) -> tuple[list, list]:
    """ranx-shaped dicts to the list API's (relevant, retrieved), the run ordered by score."""
    queries = list(qrels)
    relevant = [qrels[q] for q in queries]
    retrieved = [sorted(run.get(q, {}), key=lambda d: (-run[q][d], d)) for q in queries]
    return relevant, retrieved


def compute(metric, arguments: dict) -> es.Score:
    """The metric's value for a vector's arguments, through its public function."""
    arguments = dict(arguments)
    if metric.kind == "ranking":
        name = arguments.pop("metric")
        return es.evaluate(arguments["qrels"], arguments["run"], [name]).scores[name]
    return list_function(metric)(**arguments, **metric.function_arguments)


def _value(score) -> float:
    return float(score)


@pytest.mark.parametrize("metric", ENTRIES, ids=IDS)
def test_entry_is_complete(metric):
    assert metric.kind in KINDS
    assert metric.title and metric.summary and metric.formula and metric.source and metric.pages
    assert metric.conventions and all(metric.conventions)
    assert metric.vectors, "every metric has at least one hand-computed vector"
    assert all(v.arithmetic for v in metric.vectors)
    low, high = metric.value_range
    assert low < high
    assert callable(list_function(metric))


@pytest.mark.parametrize("metric", ENTRIES, ids=IDS)
def test_vectors(metric):
    for vector in metric.vectors:
        assert _value(compute(metric, vector.arguments)) == pytest.approx(vector.expected, abs=1e-12), vector.arithmetic


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.kind == "ranking"], ids=lambda m: m.name)
def test_ranking_vectors_through_the_list_function(metric):
    for vector in metric.vectors:
        spec = es.parse_metric(vector.arguments["metric"])
        relevant, retrieved = _lists(vector.arguments["qrels"], vector.arguments["run"])
        if metric.function == "evalsuite.ranking_metric":
            score = list_function(metric)(relevant, retrieved, vector.arguments["metric"])
        else:
            score = list_function(metric)(relevant, retrieved, k=spec.k, **metric.function_arguments)
        assert float(score) == pytest.approx(vector.expected, abs=1e-12)


def _random_cases(metric, rng, n_queries=12):
    """Random inputs of the metric's shape (several queries/requests) for the invariance checks."""
    if metric.kind == "ranking":
        name = metric.vectors[0].arguments["metric"]
        qrels, run = {}, {}
        for q in range(n_queries):
            docs = [f"d{i}" for i in rng.permutation(20)[:10]]
            qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs[:6]}
            run[f"q{q}"] = {d: float(rng.random()) for d in rng.permutation(docs)[:8]}
        return {"qrels": qrels, "run": run, "metric": name}
    arguments = dict(metric.vectors[0].arguments)
    out = {}
    for key, value in arguments.items():
        if key == "similarity":
            out[key] = [float(x) for x in rng.random(n_queries)]
        elif key == "stages":
            out[key] = [None if rng.random() < 0.5 else str(rng.choice(es.FAILURE_STAGES)) for _ in range(n_queries)]
        elif key == "values":
            out[key] = [float(x) for x in rng.random(n_queries) * 1000]
        elif key == "outcomes":
            out[key] = [bool(x) for x in rng.random(n_queries) < 0.6]
        elif key == "relevant":
            out[key] = [[float(g) for g in rng.random(int(rng.integers(1, 5)))] for _ in range(n_queries)]
        else:
            out[key] = [[bool(x) for x in rng.random(int(rng.integers(1, 6))) < 0.5] for _ in range(n_queries)]
    return out


def _permute(arguments: dict, order: np.ndarray) -> dict:
    out = {}
    for key, value in arguments.items():
        if key in ("qrels", "run"):
            keys = list(value)
            out[key] = {keys[i]: value[keys[i]] for i in order if i < len(keys)}
        elif isinstance(value, list):
            out[key] = [value[i] for i in order]
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("metric", ENTRIES, ids=IDS)
def test_value_in_range_and_query_order_changes_nothing(metric):
    rng = np.random.default_rng(7)
    for _ in range(5):
        arguments = _random_cases(metric, rng)
        score = compute(metric, arguments)
        low, high = metric.value_range
        value = _value(score)
        assert math.isnan(value) or low <= value <= high
        per_query = np.asarray(score.per_query, dtype=float)
        assert np.all(np.isnan(per_query) | ((per_query >= low) & (per_query <= high)))
        order = rng.permutation(len(next(v for v in arguments.values() if isinstance(v, (list, dict)))))
        shuffled = _value(compute(metric, _permute(arguments, order)))
        assert shuffled == pytest.approx(value, rel=1e-12, abs=1e-12) or (math.isnan(shuffled) and math.isnan(value))


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.perfect is not None], ids=lambda m: m.name)
def test_a_perfect_input_scores_the_best_value(metric):
    best = metric.value_range[1] if metric.higher_is_better else metric.value_range[0]
    assert _value(compute(metric, metric.perfect)) == pytest.approx(best)


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.nothing_relevant is not None], ids=lambda m: m.name)
def test_nothing_relevant_follows_the_documented_rule(metric):
    arguments, expected = metric.nothing_relevant
    assert _value(compute(metric, arguments)) == pytest.approx(expected)


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.kind == "ranking"], ids=lambda m: m.name)
def test_every_accepted_name_parses_to_its_entry(metric):
    suffix = "@0.5" if metric.param else "@10" if metric.cutoff else ""
    names = [f"{n}{suffix}" for n in metric.parse_names] + [n.upper() + suffix for n in metric.parse_names]
    if metric.trec_param:
        names.append(f"{metric.trec_param}_0.50")
    if metric.trec_cut:
        names.append(f"{metric.trec_cut}_10")
    if metric.trec_whole:
        names.append(metric.trec_whole)
    for name in names:
        assert es.parse_metric(name).base == metric.name, name
        assert metric_info(name) is metric


@pytest.mark.parametrize("metric", [m for m in ENTRIES if m.kind == "ranking" and not m.cutoff and not m.param and m.parse_names],
                         ids=lambda m: m.name)
def test_a_metric_without_cutoff_refuses_one(metric):
    with pytest.raises(es.EvalSuiteError, match="takes no cutoff|persistence|recall level"):
        es.parse_metric(f"{metric.parse_names[0]}@10")


def test_metric_info_refuses_unknown_names():
    with pytest.raises(es.EvalSuiteError):
        metric_info("bogus@10")


def test_docs_are_generated_from_the_registry_and_current():
    result = subprocess.run([sys.executable, "scripts/build_docs.py", "--check"], cwd=REPO, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    for metric in ENTRIES:
        assert f'<a id="{metric.name}"></a>' in text
