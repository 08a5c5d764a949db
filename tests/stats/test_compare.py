"""es.compare / compare_per_query: every number against scipy called directly, ranx, or a hand count.

p-values are checked against scipy.stats on the same per-query vectors (paired by query id),
corrections against hand-computed Holm / Bonferroni / Benjamini-Hochberg sequences, win/tie/loss
against plain counts, Cranfield t-test p-values against scipy and ranx.
"""

import io
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from conftest import CRANFIELD, SAMPLE

import evalsuite as es
from evalsuite.stats.comparison import (
    TABLE_COLUMNS, ComparisonReport, adjust_p_values, compare, compare_per_query, effect_size, latex_escape,
    paired_bootstrap_interval, win_tie_loss,
)


def mean_statistic(x, axis=-1):
    return np.mean(x, axis=axis)


def scipy_sign_flip(differences, n_resamples, seed):
    return scipy.stats.permutation_test((differences,), mean_statistic, permutation_type="samples", vectorized=True,
                                        n_resamples=n_resamples, rng=np.random.default_rng(seed)).pvalue


def two_systems(n=60, seed=0, shift=0.03, shuffle_second=True):
    """Two per-query tables sharing query ids; the second in another row order (pairing must be by id)."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(n)]
    base = pd.DataFrame({"ndcg@10": rng.random(n), "map@100": rng.integers(0, 5, n) / 4}, index=pd.Index(ids, name="query_id"))
    other = base.copy()
    other["ndcg@10"] = np.clip(base["ndcg@10"] + rng.normal(shift, 0.1, n), 0, 1)
    other["map@100"] = np.clip(base["map@100"] + (rng.integers(-1, 2, n) / 4), 0, 1)  # many exact ties
    if shuffle_second:
        other = other.iloc[rng.permutation(n)]
    return base, other


def aligned(base, other, metric):
    """The values of both systems for ``metric`` on the queries of ``base``, by id."""
    return base[metric].to_numpy(), other[metric].reindex(base.index).to_numpy()


# ------------------------------------------------------------------------------------------
# p-values, intervals, effect sizes, counts: against scipy and plain counts
# ------------------------------------------------------------------------------------------


def mc_tolerance(p, *n_resamples, z=5.0):
    """z standard deviations of the difference of independent Monte Carlo estimates of a two-sided
    p-value ``2 * min(tail)`` from ``n_resamples`` sign patterns each: the tail is a binomial share
    with standard error sqrt(q (1 - q) / B), q = p / 2, doubled. z = 5: a false failure about
    once in 1.7 million checks."""
    q = min(max(p / 2, 1.0 / max(n_resamples)), 0.5)
    return z * math.sqrt(sum(4 * q * (1 - q) / b for b in n_resamples)) + 2.0 / min(n_resamples)


@pytest.mark.parametrize("n", [5, 12])
@pytest.mark.parametrize("seed", [0, 3])
def test_exact_sign_flip_test_equals_scipy_exactly(n, seed):
    # 2**12 = 4,096 <= 5,000 resamples: both enumerate every sign pattern, so the p-values are equal.
    base, other = two_systems(n=n, seed=n + seed)
    report = compare_per_query({"a": base, "b": other}, test="permutation", seed=seed, n_resamples=5_000,
                               correction="none")
    for row in report.table.itertuples():
        a, b = aligned(base, other, row.metric)
        assert row.p_value == scipy_sign_flip(b - a, 5_000, seed), (row.metric, n, seed)
        assert row.n_queries == n


@pytest.mark.parametrize("n", [13, 14, 40, 225])
@pytest.mark.parametrize("seed", [0, 3])
def test_shared_sign_flips_agree_with_scipy_within_monte_carlo_error(n, seed):
    # The shared pass draws its own sign patterns, so it agrees with scipy's within Monte Carlo
    # error; n = 13 and 14 are also checked against the exact p-value (all 2**n patterns).
    base, other = two_systems(n=n, seed=n + seed)
    report = compare_per_query({"a": base, "b": other}, test="permutation", seed=seed, n_resamples=5_000,
                               correction="none")
    for row in report.table.itertuples():
        a, b = aligned(base, other, row.metric)
        theirs = scipy_sign_flip(b - a, 20_000, seed + 100)
        assert abs(row.p_value - theirs) <= mc_tolerance(theirs, 5_000, 20_000), (row.metric, row.p_value, theirs)
        if n <= 14:
            exact = scipy_sign_flip(b - a, 2 ** n, 0)
            assert abs(row.p_value - exact) <= mc_tolerance(exact, 5_000), (row.metric, row.p_value, exact)
    assert mc_tolerance(0.18, 5_000, 20_000) < 0.06  # the tolerance is not so wide that it cannot fail


def test_t_test_and_wilcoxon_equal_scipy_on_the_same_vectors():
    base, other = two_systems(n=80, seed=5)
    for test in ("t-test", "wilcoxon"):
        for zero_method in ("wilcox", "pratt", "zsplit"):
            report = compare_per_query({"a": base, "b": other}, test=test, zero_method=zero_method, correction="none")
            for row in report.table.itertuples():
                a, b = aligned(base, other, row.metric)
                if test == "t-test":
                    expected = scipy.stats.ttest_rel(b, a).pvalue
                else:
                    expected = scipy.stats.wilcoxon(b, a, zero_method=zero_method).pvalue
                assert row.p_value == expected, (test, zero_method, row.metric)
            assert report.params["zero_method"] == zero_method


@pytest.mark.parametrize("ci", ["bca", "percentile"])
def test_interval_equals_scipy_bootstrap_on_the_differences(ci):
    base, other = two_systems(n=150, seed=9)
    report = compare_per_query({"a": base, "b": other}, ci=ci, confidence=0.9, n_resamples=3_000, seed=4)
    for row in report.table.itertuples():
        a, b = aligned(base, other, row.metric)
        res = scipy.stats.bootstrap((b - a,), mean_statistic, n_resamples=3_000, confidence_level=0.9,
                                    method={"bca": "BCa", "percentile": "percentile"}[ci],
                                    rng=np.random.default_rng(4))
        # Same resampled indices (same seed, same batch), means by a matrix product: equal to rounding.
        assert row.ci_low == pytest.approx(res.confidence_interval.low, rel=1e-12, abs=1e-15)
        assert row.ci_high == pytest.approx(res.confidence_interval.high, rel=1e-12, abs=1e-15)
        assert row.ci_low < row.diff < row.ci_high


def test_means_diff_effect_size_and_win_tie_loss_equal_plain_computations():
    base, other = two_systems(n=70, seed=2)
    # A difference of 1e-12 is a tie under the default tolerance 1e-9.
    other.loc["q000", "ndcg@10"] = base.loc["q000", "ndcg@10"] + 1e-12
    report = compare_per_query({"a": base, "b": other})
    for row in report.table.itertuples():
        a, b = aligned(base, other, row.metric)
        d = b - a
        assert row.mean_baseline == pytest.approx(a.mean(), abs=1e-15)
        assert row.mean_system == pytest.approx(b.mean(), abs=1e-15)
        assert row.diff == pytest.approx(b.mean() - a.mean(), abs=1e-15)
        assert row.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        wins = sum(1 for x in d if x > 1e-9)
        losses = sum(1 for x in d if x < -1e-9)
        assert (row.wins, row.ties, row.losses) == (wins, len(d) - wins - losses, losses)
        assert row.ties > 0
    assert win_tie_loss([0.5, 1e-10, -1e-10, -0.2, 0.0, 2e-9], tie_tolerance=1e-9) == (2, 3, 1)
    assert win_tie_loss([0.5, 0.01, -0.01], tie_tolerance=0.01) == (1, 2, 0)


def test_pairing_is_by_query_id_not_by_position():
    base, other = two_systems(n=50, seed=1, shuffle_second=False)
    shuffled = other.iloc[np.random.default_rng(0).permutation(50)]
    first = compare_per_query({"a": base, "b": other}, test="t-test").table
    second = compare_per_query({"a": base, "b": shuffled}, test="t-test").table
    pd.testing.assert_frame_equal(first, second)
    # Paired by position, the shuffled table would give another p-value.
    by_position = scipy.stats.ttest_rel(shuffled["ndcg@10"].to_numpy(), base["ndcg@10"].to_numpy()).pvalue
    assert first.loc[0, "p_value"] != by_position


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy, on the constant differences
def test_all_zero_and_constant_differences():
    base, _ = two_systems(n=20, seed=3)
    for test in ("permutation", "t-test", "wilcoxon"):
        row = compare_per_query({"a": base, "b": base.copy()}, test=test).table.iloc[0]
        assert row.p_value == 1.0 and row.p_adjusted == 1.0 and not row.significant
        assert (row.ci_low, row.ci_high, row.effect_size, row["diff"]) == (0.0, 0.0, 0.0, 0.0)
        assert (row.wins, row.ties, row.losses) == (0, 20, 0)
    shifted = base.copy()
    shifted["map@100"] += 0.25  # quarters: every difference is exactly 0.25
    row = compare_per_query({"a": base, "b": shifted}, ["map@100"], test="t-test").table.iloc[0]
    assert row.effect_size == math.inf
    assert (row.ci_low, row.ci_high) == (0.25, 0.25)
    assert row.p_value == scipy.stats.ttest_rel(shifted["map@100"], base["map@100"]).pvalue == 0.0
    assert effect_size([-0.1, -0.1, -0.1]) == -math.inf
    assert effect_size([0.0, 0.0]) == 0.0


def test_bca_falls_back_to_percentile_when_undefined():
    low, high, note = paired_bootstrap_interval([0.0, 0.0, 0.0, 1.0], "bca", 0.95, 200, 0)
    # Whatever scipy does here, the interval must be finite and ordered.
    assert math.isfinite(low) and math.isfinite(high) and low <= high
    low, high, note = paired_bootstrap_interval([0.3, 0.3, 0.3], "bca", 0.95, 200, 0)
    assert (low, high) == (0.3, 0.3) and "same value" in note


# ------------------------------------------------------------------------------------------
# Multiple-comparison corrections: hand-computed sequences
# ------------------------------------------------------------------------------------------

P = [0.01, 0.04, 0.03, 0.005, 0.2]


def test_holm_bonferroni_bh_hand_computed():
    # Sorted: 0.005, 0.01, 0.03, 0.04, 0.2 (m = 5).
    # Holm: 5*0.005=0.025, 4*0.01=0.04, 3*0.03=0.09, max(2*0.04, 0.09)=0.09, 1*0.2=0.2.
    np.testing.assert_allclose(adjust_p_values(P, "holm"), [0.04, 0.09, 0.09, 0.025, 0.2], rtol=1e-12)
    np.testing.assert_allclose(adjust_p_values(P, "bonferroni"), [0.05, 0.2, 0.15, 0.025, 1.0], rtol=1e-12)
    # BH: m/i * p_(i) = 0.025, 0.025, 0.05, 0.05, 0.2, then a running minimum from the largest.
    np.testing.assert_allclose(adjust_p_values(P, "fdr_bh"), [0.025, 0.05, 0.05, 0.025, 0.2], rtol=1e-12)
    np.testing.assert_array_equal(adjust_p_values(P, "none"), P)
    np.testing.assert_allclose(adjust_p_values([0.5, 0.6], "holm"), [1.0, 1.0])
    np.testing.assert_allclose(adjust_p_values([0.04, 0.01, 0.5], "fdr_bh"), [0.06, 0.03, 0.5], rtol=1e-12)
    with pytest.raises(es.EvalSuiteError, match="correction"):
        adjust_p_values(P, "sidak")


def _holm_by_definition(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_correction_spans_every_pair_and_metric():
    rng = np.random.default_rng(8)
    ids = pd.Index([f"q{i}" for i in range(40)])
    systems = {name: pd.DataFrame({"m1": rng.random(40) + shift, "m2": rng.random(40)}, index=ids)
               for name, shift in (("a", 0.0), ("b", 0.15), ("c", 0.05))}
    report = compare_per_query(systems, pairs="all", test="t-test", correction="holm", alpha=0.05)
    table = report.table
    assert len(table) == 6 and report.params["n_comparisons"] == 6
    assert list(zip(table["baseline"], table["system"]))[:3] == [("a", "b"), ("a", "c"), ("b", "c")]
    np.testing.assert_allclose(table["p_adjusted"], _holm_by_definition(table["p_value"].tolist()), rtol=1e-12)
    assert (table["significant"] == (table["p_adjusted"] <= 0.05)).all()
    assert table["significant"].any() and not table["significant"].all()
    bonf = compare_per_query(systems, pairs="all", test="t-test", correction="bonferroni").table
    np.testing.assert_allclose(bonf["p_adjusted"], np.minimum(bonf["p_value"] * 6, 1.0), rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Reproducibility and independence of rows
# ------------------------------------------------------------------------------------------


def test_same_seed_same_numbers_other_seed_other_numbers():
    base, other = two_systems(n=120, seed=4, shift=0.01)
    first = compare_per_query({"a": base, "b": other}, seed=7)
    second = compare_per_query({"a": base, "b": other}, seed=7)
    pd.testing.assert_frame_equal(first.table, second.table)
    third = compare_per_query({"a": base, "b": other}, seed=8)
    assert not np.array_equal(first.table["p_value"], third.table["p_value"])
    assert not np.array_equal(first.table["ci_low"], third.table["ci_low"])


def test_a_row_does_not_depend_on_the_other_systems_in_the_report():
    base, other = two_systems(n=90, seed=6)
    _, third = two_systems(n=90, seed=16)
    alone = compare_per_query({"a": base, "b": other}).table
    with_third = compare_per_query({"a": base, "b": other, "c": third}).table
    cols = ["p_value", "ci_low", "ci_high", "effect_size", "wins", "ties", "losses"]
    pd.testing.assert_frame_equal(alone[cols], with_third[with_third["system"] == "b"][cols].reset_index(drop=True))


# ------------------------------------------------------------------------------------------
# NaN (undefined) values, unpaired queries
# ------------------------------------------------------------------------------------------


def test_nan_values_are_left_out_and_counted():
    base, other = two_systems(n=30, seed=12, shuffle_second=False)
    base.loc[["q001", "q002"], "ndcg@10"] = np.nan
    other.loc[["q002", "q005"], "ndcg@10"] = np.nan
    other = other.drop(index=["q029"])  # in one system only
    report = compare_per_query({"a": base, "b": other}, test="t-test")
    row = report.table.set_index("metric").loc["ndcg@10"]
    assert (row.n_queries, row.n_dropped_nan, row.n_unpaired) == (26, 3, 1)
    keep = [q for q in base.index if q not in ("q001", "q002", "q005", "q029")]
    expected = scipy.stats.ttest_rel(other.loc[keep, "ndcg@10"], base.loc[keep, "ndcg@10"]).pvalue
    assert row.p_value == expected
    assert report.per_query["ndcg@10"].shape == (30, 2)
    assert report.system_means.loc["a", "ndcg@10"] == pytest.approx(base["ndcg@10"].mean(skipna=True), abs=1e-15)
    assert "undefined (NaN)" in report.to_text()


# ------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------


def test_bad_input_raises_clear_errors():
    base, other = two_systems(n=10, seed=0)
    with pytest.raises(es.EvalSuiteError, match="at least two systems"):
        compare_per_query({"a": base})
    disjoint = other.copy()
    disjoint.index = [f"x{i}" for i in range(10)]
    with pytest.raises(es.EvalSuiteError, match="share no query id"):
        compare_per_query({"a": base, "b": disjoint})
    with pytest.raises(es.EvalSuiteError, match="metric 'map@100' is missing from system 'b'"):
        compare_per_query({"a": base, "b": other.drop(columns=["map@100"])})
    few = other.copy()
    few.loc[few.index[1:], "ndcg@10"] = np.nan
    with pytest.raises(es.EvalSuiteError, match="1 queries have a value in both"):
        compare_per_query({"a": base, "b": few})
    with pytest.raises(es.EvalSuiteError, match="at least two"):
        compare_per_query({"a": base.iloc[:1], "b": other})
    with pytest.raises(es.EvalSuiteError, match="more than once"):
        compare_per_query({"a": pd.concat([base, base.iloc[:1]]), "b": other})
    with pytest.raises(es.EvalSuiteError, match="baseline"):
        compare_per_query({"a": base, "b": other}, baseline="zzz")
    with pytest.raises(es.EvalSuiteError, match="DataFrame"):
        compare_per_query({"a": base, "b": {"q1": 0.3}})
    with pytest.raises(es.EvalSuiteError, match="numbers"):
        compare_per_query({"a": base, "b": other.assign(**{"ndcg@10": "high"})})
    for option, value in [("test", "sign"), ("correction", "sidak"), ("alpha", 1.5), ("ci", "basic"),
                          ("n_resamples", 0), ("seed", -1), ("seed", None), ("confidence", 95), ("pairs", "some"),
                          ("zero_method", "drop"), ("tie_tolerance", -1)]:
        with pytest.raises(es.EvalSuiteError, match=option):
            compare_per_query({"a": base, "b": other}, **{option: value})


def test_compare_rejects_bad_runs():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
    run_a = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 1.0, "x": 2.0}}
    run_b = {"q3": {"d3": 2.0, "x": 1.0}, "q4": {"x": 2.0, "d4": 1.0}}
    with pytest.raises(es.EvalSuiteError, match="no evaluated query in common"):
        compare(qrels, {"a": run_a, "b": run_b}, ["ndcg@10"])
    with pytest.raises(es.EvalSuiteError, match="at least two systems"):
        compare(qrels, {"a": run_a}, ["ndcg@10"])
    with pytest.raises(es.EvalSuiteError, match="map each system name"):
        compare(qrels, [run_a, run_b], ["ndcg@10"])
    with pytest.raises(es.EvalSuiteError, match="metric"):
        compare(qrels, {"a": run_a, "b": run_a}, ["ndcg@ten"])


def test_compare_scores_a_query_missing_from_a_run_as_zero():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run_a = {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"d2": 1.0, "x": 2.0}, "q3": {"d3": 3.0}}
    run_b = {"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 5.0}}  # q3 missing: scores 0
    report = compare(qrels, {"a": run_a, "b": run_b}, ["mrr@10"], test="t-test")
    values = report.per_query["mrr@10"]
    assert values.loc["q3", "b"] == 0.0 and values.loc["q3", "a"] == 1.0
    row = report.table.iloc[0]
    assert (row.n_queries, row.wins, row.ties, row.losses) == (3, 1, 0, 2)
    assert row.p_value == scipy.stats.ttest_rel([0.5, 1.0, 0.0], [1.0, 0.5, 1.0]).pvalue
    assert report.evaluations["b"].defaulted_queries == ["q3"]
    assert any(w.startswith("b: ") and "missing from the run" in w for w in report.warnings)


# ------------------------------------------------------------------------------------------
# Cranfield: scipy and ranx
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cranfield_runs():
    return {"bm25": CRANFIELD / "run_bm25.trec", "bm25l": CRANFIELD / "run_bm25l.trec"}


def test_cranfield_t_test_equals_scipy_and_ranx(cranfield_runs):
    ranx = pytest.importorskip("ranx")
    qrels_path = CRANFIELD / "qrels.trec"
    report = compare(qrels_path, cranfield_runs, ["map", "ndcg@10"], test="t-test")
    table = report.table.set_index("metric")
    # Our per-query values are evaluate()'s, on the same 225 qrels queries for both runs.
    for name, path in cranfield_runs.items():
        ev = es.evaluate(qrels_path, path, ["map", "ndcg@10"])
        pd.testing.assert_frame_equal(report.per_query["map"][[name]].rename(columns={name: "map"}), ev.per_query[["map"]])
    for metric in ("map", "ndcg@10"):
        values = report.per_query[metric]
        assert len(values) == 225 and table.loc[metric, "n_queries"] == 225
        assert table.loc[metric, "p_value"] == scipy.stats.ttest_rel(values["bm25l"], values["bm25"]).pvalue

    r_qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
    r_runs = []
    for name, path in cranfield_runs.items():
        run = ranx.Run.from_file(str(path), kind="trec")
        run.name = name
        assert set(run.keys()) == set(r_qrels.keys())  # identical query sets: nothing to make comparable
        r_runs.append(run)
    ranx_report = ranx.compare(r_qrels, r_runs, metrics=["map", "ndcg@10"], stat_test="student")
    for metric in ("map", "ndcg@10"):
        theirs = ranx_report.comparisons[("bm25", "bm25l")][metric]["p_value"]
        assert table.loc[metric, "p_value"] == pytest.approx(theirs, rel=1e-9, abs=0)
        assert table.loc[metric, "p_value"] < 1e-10


def test_cranfield_default_comparison_is_reproducible(cranfield_runs):
    first = es.compare(CRANFIELD / "qrels.trec", cranfield_runs)
    second = compare(CRANFIELD / "qrels.trec", cranfield_runs)
    pd.testing.assert_frame_equal(first.table, second.table)
    assert list(first.table.columns) == list(TABLE_COLUMNS)
    assert first.metrics == ["ndcg@10", "map@100", "mrr@10", "recall@100"]
    assert first.params["test"] == "permutation" and first.params["correction"] == "holm"
    for row in first.table.itertuples():
        values = first.per_query[row.metric]
        d = (values["bm25l"] - values["bm25"]).to_numpy()
        theirs = scipy_sign_flip(d, 10_000, 0)
        assert abs(row.p_value - theirs) <= mc_tolerance(theirs, 10_000, 10_000)
        assert row.ci_low <= row.diff <= row.ci_high


# ------------------------------------------------------------------------------------------
# RAG sample records: two systems, per-request faithfulness and success
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ragtruth_report():
    return es.evaluate_records(es.read_records(SAMPLE / "rag" / "ragtruth_qa.jsonl"))


def test_ragtruth_two_systems_compare_by_request_id(ragtruth_report):
    systems = ["gpt-4-0613", "llama-2-7b-chat"]
    report = es.compare_records(ragtruth_report, systems=systems, test="wilcoxon", n_resamples=2_000)
    assert report.metrics == ["faithfulness", "success"] and report.params["baseline"] == "gpt-4-0613"
    wide = ragtruth_report.per_query.pivot(index="query_id", columns="system")
    for row in report.table.itertuples():
        both = wide[row.metric][systems].dropna()
        answered = wide[row.metric][systems].notna().sum()
        assert row.n_queries == len(both) and row.n_unpaired == abs(answered.iloc[0] - answered.iloc[1]) == 1
        assert row.p_value == scipy.stats.wilcoxon(both[systems[1]], both[systems[0]]).pvalue
        d = both[systems[1]] - both[systems[0]]
        assert (row.wins, row.losses) == (int((d > 1e-9).sum()), int((d < -1e-9).sum()))
        assert row.diff < 0 and row.significant  # llama-2-7b hallucinates more than gpt-4 (RAGTruth)
    again = es.compare_records(ragtruth_report, systems=systems, test="wilcoxon", n_resamples=2_000)
    pd.testing.assert_frame_equal(report.table, again.table)


def test_compare_records_bad_input(ragtruth_report):
    with pytest.raises(es.EvalSuiteError, match="not in the records"):
        es.compare_records(ragtruth_report, systems=["gpt-4-0613", "gpt-5"])
    with pytest.raises(es.EvalSuiteError, match="'latency_ms' is not in the records"):
        es.compare_records(ragtruth_report, "latency_ms")
    with pytest.raises(es.EvalSuiteError, match="at least two systems"):
        es.compare_records(ragtruth_report, systems=["gpt-4-0613"])
    with pytest.raises(es.EvalSuiteError, match="RecordsReport"):
        es.compare_records(ragtruth_report.per_query)
    # LLMPerf request ids embed the endpoint name: no request is shared, nothing to pair.
    llmperf = es.evaluate_records(es.read_records(SAMPLE / "rag" / "llmperf_requests.jsonl"))
    with pytest.raises(es.EvalSuiteError, match="share no query id"):
        es.compare_records(llmperf, ["latency_ms"], systems=llmperf.systems[:2])


# ------------------------------------------------------------------------------------------
# Renderings
# ------------------------------------------------------------------------------------------


def test_latex_booktabs_caption_markers_and_escaping():
    rng = np.random.default_rng(0)
    ids = pd.Index([f"q{i}" for i in range(60)])
    base = pd.DataFrame({"hit_rate@10": rng.random(60), "ndcg@10": rng.random(60)}, index=ids)
    better = base + 0.2
    better["ndcg@10"] = base["ndcg@10"] + rng.normal(0, 0.05, 60)
    worse = base - 0.2
    systems = {"bm_25": base, "dense & co": better, "50%#sys": worse}
    latex = compare_per_query(systems, correction="bonferroni", alpha=0.01, n_resamples=2_000).to_latex()
    for piece in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{cl|rr}", r"\caption{",
                  "paired randomisation test", "Bonferroni-adjusted", r"$\alpha = 0.01$", "4 comparisons",
                  r"bm\_25 (baseline)", r"dense \& co", r"50\%\#sys", r"hit\_rate@10"):
        assert piece in latex, piece
    assert "bm_25" not in latex and "dense & co" not in latex
    lines = latex.splitlines()
    # ranx's layout: "# & System & metrics", a letter per system (baseline a), superscripts name the
    # systems a mean is significantly higher than, \hphantom keeps the others' room, best in bold.
    assert r"\textbf{\#} & \textbf{System} & \textbf{hit\_rate@10} & \textbf{ndcg@10} \\" in lines
    base_line = next(line for line in lines if line.startswith(r"a & bm\_25"))
    dense = next(line for line in lines if line.startswith(r"b & dense \& co"))
    worse_line = next(line for line in lines if line.startswith(r"c & 50\%"))
    # hit_rate: dense (b) > baseline (a) > worse (c), all significant; ndcg: b about a, a > c.
    assert dense.split(" & ")[2] == r"\textbf{0.7053}$^{a}$\hphantom{$^{c}$}"
    assert "$^{" not in dense.split(" & ")[3].replace(r"\hphantom{$^{ac}$}", "")
    assert base_line.count(r"$^{c}$\hphantom{$^{b}$}") == 2
    assert "$^{" not in worse_line.replace(r"\hphantom{$^{ab}$}", "")
    assert "higher than; each system is compared with the baseline" in latex

    all_pairs = compare_per_query(systems, pairs="all", test="t-test").to_latex()
    better_line = next(line for line in all_pairs.splitlines() if line.startswith(r"b & dense \& co"))
    assert r"\textbf{0.7053}$^{ac}$ &" in better_line  # higher than a and c on hit_rate: no phantom left
    assert "two-sided paired t-test" in all_pairs and "Holm-adjusted" in all_pairs
    assert latex_escape("a_b&c%d$e#f{g}h~i^j\\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k")


@pytest.fixture(scope="module")
def three_cranfield_runs(tmp_path_factory):
    """BM25, BM25L and a third run: BM25L's ranking on every third query, BM25's elsewhere (its
    per-query values are theirs, on which ranx and EvalSuite agree to the last digit)."""
    path = tmp_path_factory.mktemp("runs") / "run_mixed.trec"
    lines = [line for name, keep in (("bm25", 1), ("bm25l", 0))
             for line in (CRANFIELD / f"run_{name}.trec").read_text().splitlines()
             if (int(line.split()[0]) % 3 != 0) == keep]
    path.write_text("\n".join(lines) + "\n")
    return {"bm25": CRANFIELD / "run_bm25.trec", "bm25l": CRANFIELD / "run_bm25l.trec", "mixed": path}


@pytest.mark.parametrize("test,stat_test", [("t-test", "student"), ("tukey", "tukey")])
def test_many_systems_equal_ranx_compare(three_cranfield_runs, test, stat_test):
    ranx = pytest.importorskip("ranx")
    qrels_path = CRANFIELD / "qrels.trec"
    metrics = ["map", "ndcg@10", "recall@100"]
    report = compare(qrels_path, three_cranfield_runs, metrics, pairs="all", test=test, correction="none")
    assert len(report.table) == 3 * 3 and report.systems == ["bm25", "bm25l", "mixed"]
    r_qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
    r_runs = []
    for name, path in three_cranfield_runs.items():
        run = ranx.Run.from_file(str(path), kind="trec")
        run.name = name
        r_runs.append(run)
    theirs = ranx.compare(r_qrels, r_runs, metrics=metrics, stat_test=stat_test, max_p=0.05)
    for row in report.table.itertuples():
        expected = theirs.comparisons[(row.baseline, row.system)][row.metric]["p_value"]
        assert row.p_value == pytest.approx(expected, rel=1e-9, abs=1e-15), (row.metric, row.baseline, row.system)
        assert row.mean_system == pytest.approx(theirs.results[row.system][row.metric], abs=1e-12)
    if test == "tukey":  # scipy's Tukey HSD on the same per-query values
        for metric in metrics:
            values = report.per_query[metric]
            direct = scipy.stats.tukey_hsd(*(values[s].to_numpy() for s in report.systems)).pvalue
            rows = report.table[report.table["metric"] == metric]
            for row in rows.itertuples():
                i, j = report.systems.index(row.baseline), report.systems.index(row.system)
                assert row.p_value == direct[i, j]
    # Some pairs differ significantly and some do not, so the agreement is not vacuous.
    assert 0 < int((report.table["p_value"] < 0.05).sum()) < len(report.table)


def test_baseline_against_each_and_westfall_young(three_cranfield_runs):
    qrels_path = CRANFIELD / "qrels.trec"
    report = compare(qrels_path, three_cranfield_runs, ["map@100", "ndcg@10"], baseline="mixed",
                     correction="westfall_young", n_resamples=4_000)
    assert report.systems == ["mixed", "bm25", "bm25l"] and set(report.table["baseline"]) == {"mixed"}
    table = report.table
    assert (table["p_adjusted"] >= table["p_value"]).all()
    # Never above Bonferroni's adjustment of the same raw p-values (plus Monte Carlo resolution).
    assert (table["p_adjusted"] <= np.minimum(table["p_value"] * len(table), 1) + 1e-12).all()
    assert "Westfall" in report.describe()[2]
    with pytest.raises(es.EvalSuiteError, match="needs test='permutation'"):
        compare(qrels_path, three_cranfield_runs, ["map@100"], test="t-test", correction="westfall_young")
    with pytest.raises(es.EvalSuiteError, match="resampled statistics"):
        adjust_p_values([0.1, 0.2], "westfall_young")


def test_csv_is_spreadsheet_safe_and_round_trips():
    base, other = two_systems(n=25, seed=1)
    report = compare_per_query({"=HYPERLINK(\"http://x\")": base, "@sum": other, "+x": other, "-y": base - 0.1},
                               n_resamples=500)
    text = report.to_csv()
    back = pd.read_csv(io.StringIO(text))
    assert set(back["baseline"]) == {"'=HYPERLINK(\"http://x\")"}
    assert set(back["system"]) == {"'@sum", "'+x", "'-y"}
    assert (back["diff"] < 0).any()  # negative numbers stay numbers
    np.testing.assert_allclose(back["p_value"], report.table["p_value"], rtol=1e-15)
    assert list(back.columns) == list(TABLE_COLUMNS)


def test_text_and_dataframe_renderings():
    base, other = two_systems(n=40, seed=2)
    report = compare_per_query({"base": base, "new": other}, test="wilcoxon", correction="fdr_bh", n_resamples=500)
    text = str(report)
    assert "Wilcoxon signed-rank" in text and "Benjamini-Hochberg" in text and "adjusted p <= 0.05" in text
    assert "zero_method='wilcox'" in text
    assert text.count("\n") >= 6 and "ndcg@10" in text and "map@100" in text
    frame = report.to_dataframe()
    assert list(frame.columns) == list(TABLE_COLUMNS)
    frame.loc[0, "p_value"] = -1.0
    assert report.table.loc[0, "p_value"] != -1.0  # a copy
    assert isinstance(report, ComparisonReport) and "2 systems" in repr(report)
    assert report.table["significant"].dtype == bool


def test_a_row_is_the_same_alone_or_in_a_large_report():
    # The shared pass draws one sign and one resampled index per query and resample, whatever the
    # number of rows: a row's numbers depend on the seed and the query ids, not on the other rows.
    rng = np.random.default_rng(21)
    ids = pd.Index([f"q{i}" for i in range(400)])
    systems = {name: pd.DataFrame({"m1": rng.random(400), "m2": rng.integers(0, 3, 400) / 2}, index=ids)
               for name in ("a", "b", "c")}
    full = compare_per_query(systems, pairs="all", n_resamples=3_000, correction="none").table
    for row in full.itertuples():
        alone = compare_per_query({row.baseline: systems[row.baseline], row.system: systems[row.system]},
                                  [row.metric], n_resamples=3_000, correction="none").table.iloc[0]
        for col in ("p_value", "ci_low", "ci_high", "diff"):
            assert getattr(row, col) == pytest.approx(alone[col], rel=1e-12, abs=1e-15), col


def test_page_shapes_of_a_many_system_report():
    from evalsuite import display

    rng = np.random.default_rng(3)
    ids = pd.Index([f"q{i}" for i in range(80)])
    base = pd.DataFrame({"ndcg@10": rng.random(80), "latency_ms": 100 + rng.random(80)}, index=ids)
    faster = base.assign(latency_ms=base["latency_ms"] - 20)          # better: lower latency
    worse = base.assign(**{"ndcg@10": base["ndcg@10"] - 0.3})           # worse: lower nDCG
    name = "<b>x</b> & y"
    report = compare_per_query({"base": base, "faster": faster, name: worse}, test="t-test")
    grid = display.systems_by_metrics(report)
    assert grid.loc["faster", "latency_ms"].endswith(" ▲") and grid.loc["faster", "ndcg@10"] == f"{base['ndcg@10'].mean():.4f}"
    assert grid.loc[name, "ndcg@10"].endswith(" ▼") and grid.index[0] == "base (baseline)"
    assert report.verdict() == ("faster is significantly better than base on latency_ms, and not significantly "
                                f"different on ndcg@10; {name} is significantly worse than base on ndcg@10, and "
                                "not significantly different on latency_ms (t-test, Holm, alpha 0.05).")
    assert list(report.regressions()["system"]) == [name]
    heat = display.differences_from_baseline(report, "ndcg@10")
    np.testing.assert_allclose(heat[name].to_numpy(), -0.3, atol=1e-12)
    assert (heat["faster"] == 0).all()
    figure = display.difference_heatmap(heat, "ndcg@10", "base")
    assert list(figure.data[0].x) == ["faster", "&lt;b&gt;x&lt;/b&gt; &amp; y"]  # text, never markup
    assert figure.data[0].zmid == 0 and figure.data[0].zmax == -figure.data[0].zmin


def test_scores_other_tools_define_as_lower_is_better_count_as_regressions_when_they_rise():
    # DeepEval's hallucination and RAGAS's noise_sensitivity are shares of bad outcomes: a system
    # whose hallucination rises is worse, though its number is larger.
    rng = np.random.default_rng(5)
    ids = pd.Index([f"q{i}" for i in range(60)])
    base = pd.DataFrame({"hallucination": rng.random(60) * 0.5, "noise_sensitivity": rng.random(60) * 0.5,
                         "faithfulness": rng.random(60)}, index=ids)
    risen = base + pd.DataFrame({"hallucination": 0.3, "noise_sensitivity": 0.3, "faithfulness": 0.3}, index=ids)
    report = compare_per_query({"base": base, "risen": risen}, test="t-test")
    regressed = set(report.regressions()["metric"])
    assert regressed == {"hallucination", "noise_sensitivity"}  # faithfulness rose: better


def test_every_pair_verdict_names_the_significant_pairs_without_the_baseline():
    # C beats B on every query by 0.3 (t-test p ~ 0), neither differs from A in mean; the verdict of
    # pairs="all" must say what the B-C comparison found, not only the comparisons with A.
    ids = [f"q{i}" for i in range(12)]
    noise = np.array([0.01, -0.02, 0.03, 0.0, -0.01, 0.02, -0.03, 0.01, 0.0, -0.02, 0.02, -0.01])
    a = pd.DataFrame({"ndcg@10": np.r_[[0.1, 0.7] * 6]}, index=ids)
    b = pd.DataFrame({"ndcg@10": 0.25 + noise}, index=ids)
    c = pd.DataFrame({"ndcg@10": 0.55 + noise}, index=ids)
    report = es.compare_per_query({"A": a, "B": b, "C": c}, test="t-test", pairs="all")
    row = report.table[(report.table["baseline"] == "B") & (report.table["system"] == "C")].iloc[0]
    assert row["significant"] and row["diff"] == pytest.approx(0.3)
    assert "between the other systems, C is significantly better than B on ndcg@10" in report.verdict()
    only_a = es.compare_per_query({"A": a, "B": b, "C": c}, test="t-test")
    assert "other systems" not in only_a.verdict()
    same = es.compare_per_query({"A": a, "B": b, "C": b.copy()}, test="t-test", pairs="all")
    assert "between the other systems, no difference is significant" in same.verdict()


def test_one_comparison_is_not_called_all_1_comparisons():
    ids = [f"q{i}" for i in range(6)]
    one = es.compare_per_query({"A": pd.DataFrame({"m": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}, index=ids),
                                "B": pd.DataFrame({"m": [0.2, 0.2, 0.4, 0.4, 0.6, 0.5]}, index=ids)}, test="t-test")
    assert any("over the one comparison of this report" in line for line in one.describe())


@pytest.mark.parametrize("test", ["permutation", "wilcoxon"])
def test_too_few_queries_for_any_significance_is_said(test):
    # Three queries that all improve: scipy's exact sign-flip test gives 2/2^3 = 0.25, the
    # smallest p-value there is on 3 queries, so nothing can be significant at 0.05.
    ids = ["q1", "q2", "q3"]
    old = pd.DataFrame({"mrr@10": [0.5, 0.0, 0.25], "ndcg@10": [0.2, 0.2, 0.2]}, index=ids)
    new = pd.DataFrame({"mrr@10": [1.0, 0.5, 0.75], "ndcg@10": [0.2, 0.2, 0.2]}, index=ids)
    d = new["mrr@10"].to_numpy() - old["mrr@10"].to_numpy()
    smallest = scipy.stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
    assert smallest == pytest.approx(0.25)
    report = compare_per_query({"old": old, "new": new}, test=test)
    assert report.table.loc[0, "p_value"] >= smallest - 1e-12
    notes = [w for w in report.warnings if "smallest possible p-value" in w]
    # ndcg@10 does not differ on any query: nothing to detect, no note for it.
    assert notes == [f"mrr@10 (old vs new): 3 queries differ, so the {test} test's smallest possible p-value is "
                     "2/2^3 = 0.25, above alpha = 0.05: no difference can be significant, and a bootstrap interval "
                     "on so few queries is not reliable either; compare on more queries"]
    assert "note: mrr@10 (old vs new): 3 queries differ" in report.to_text()  # the command line prints it


def test_enough_queries_or_a_t_test_give_no_too_few_note():
    # 6 differing queries: 2/2^6 = 0.031 <= 0.05, so a difference can be significant; the t-test
    # has no such floor (its p-value here is 0: every difference is the same).
    ids = [f"q{i}" for i in range(6)]
    old, new = (pd.DataFrame({"m": [v] * 6}, index=ids) for v in (0.1, 0.3))
    assert not [w for w in compare_per_query({"a": old, "b": new}).warnings if "smallest possible" in w]
    three = {name: frame.iloc[:3] for name, frame in (("a", old), ("b", new))}
    assert not [w for w in compare_per_query(three, test="t-test").warnings if "smallest possible" in w]
    # ... while alpha = 0.3 is reachable on 3 queries (0.25 <= 0.3).
    assert not [w for w in compare_per_query(three, alpha=0.3).warnings if "smallest possible" in w]
