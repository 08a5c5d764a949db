"""Agreement statistics pinned against scikit-learn and statsmodels, PPI against the authors'
ppi-python and the paper's closed form, coverage of the intervals on seeded draws, and the
errors of the judgement-table readers and the human-label join."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalsuite import EvalSuiteError
from evalsuite.stats import agreement, judgement_tables, ppi, system_means

sklearn_metrics = pytest.importorskip("sklearn.metrics")
ppi_py = pytest.importorskip("ppi_py")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
proportion = pytest.importorskip("statsmodels.stats.proportion")

RNG_SEEDS = [0, 1, 2, 3, 4]


def _fixed_vectors(seed: int, n: int = 200):
    rng = np.random.default_rng(seed)
    human = rng.random(n) < 0.6
    flip = rng.random(n) < 0.25
    judge = np.where(flip, ~human, human)
    return judge.astype(int), human.astype(int)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_agreement_matches_scikit_learn(seed):
    judge, human = _fixed_vectors(seed)
    a = agreement.agreement(judge, human)
    assert a.n == len(judge) and a.dropped == 0
    assert np.array_equal(a.confusion, sklearn_metrics.confusion_matrix(human, judge, labels=[0, 1]))
    assert a.accuracy.estimate == pytest.approx(sklearn_metrics.accuracy_score(human, judge), abs=1e-12)
    assert a.kappa.estimate == pytest.approx(sklearn_metrics.cohen_kappa_score(human, judge), abs=1e-12)
    assert a.precision.estimate == pytest.approx(sklearn_metrics.precision_score(human, judge), abs=1e-12)
    assert a.recall.estimate == pytest.approx(sklearn_metrics.recall_score(human, judge), abs=1e-12)


def _posterior_kappa(shape, draws, seed):
    from scipy import stats

    shape = np.asarray(shape, dtype=float)
    cells = np.zeros((draws, 4))
    live = shape > 0  # scipy's Dirichlet needs positive parameters: a cell with none stays at 0
    cells[:, live] = stats.dirichlet.rvs(shape[live], size=draws, random_state=seed)
    p00, p01, p10, p11 = cells.T
    p_e = (p00 + p01) * (p00 + p10) + (p10 + p11) * (p01 + p11)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (p00 + p11 - p_e) / (1 - p_e)
    return kappa[np.isfinite(kappa)]


def _jeffreys_kappa_interval(table, draws=200_000, seed=123):
    """Kappa's 95% posterior interval under Dirichlet(counts + 1/2) (from 30 items), or the
    conservative pair of posteriors below 30, drawn with scipy's Dirichlet (a different generator
    from the one evalsuite uses): the reference for kappa_interval."""
    counts = np.asarray(table, dtype=float).ravel()
    if counts.sum() >= agreement.MIN_LABELS:
        return np.quantile(_posterior_kappa(counts + 0.5, draws, seed), [0.025, 0.975])
    return (np.quantile(_posterior_kappa(counts + [0.5, 1, 1, 0.5], draws, seed), 0.025),
            np.quantile(_posterior_kappa(counts + [1, 0, 0, 1], draws, seed), 0.975))


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_agreement_intervals_match_statsmodels_and_a_jeffreys_reference(seed):
    judge, human = _fixed_vectors(seed, n=120)
    a = agreement.agreement(judge, human, confidence=0.95)
    ref = inter_rater.cohens_kappa(a.confusion)
    assert a.kappa.estimate == pytest.approx(ref.kappa, abs=1e-12)
    assert a.kappa.extra["se"] == pytest.approx(ref.std_kappa, abs=1e-12)
    # The interval is kappa's Jeffreys posterior interval, not the asymptotic one (which can leave [-1, 1]).
    assert (a.kappa.low, a.kappa.high) == pytest.approx(tuple(_jeffreys_kappa_interval(a.confusion)), abs=0.006)
    (tn, fp), (fn, tp) = a.confusion.tolist()
    for iv, k, n in ((a.accuracy, tp + tn, a.n), (a.precision, tp, tp + fp), (a.recall, tp, tp + fn)):
        low, high = proportion.proportion_confint(k, n, alpha=0.05, method="beta")  # Clopper-Pearson
        assert (iv.low, iv.high) == pytest.approx((low, high), abs=1e-9)
        assert iv.method == "clopper-pearson"


@pytest.mark.parametrize("table", [
    [[0, 1], [0, 19]],     # 19 of 20 agreeing: the asymptotic interval ran to 1.196
    [[2, 0], [0, 5]],      # 7 ARES examples, all agreeing: asymptotic 1.269
    [[0, 6], [4, 0]],      # total disagreement: -1 with an interval below -1 before
    [[3, 1], [1, 2]],
    [[20, 0], [0, 0]],     # both sides always 0: kappa undefined, the interval still in range
])
def test_kappa_intervals_stay_in_range_and_name_degenerate_tables(table):
    iv = agreement.agreement(*_pairs_of(table)).kappa
    assert -1 <= iv.low <= iv.high <= 1
    assert math.isnan(iv.estimate) or iv.low <= iv.estimate <= iv.high
    assert iv.width > 0.05  # never a zero-width interval
    low, high = _jeffreys_kappa_interval(table)
    if not math.isnan(iv.estimate):  # widened to the estimate when the equal-tailed interval stops short of it
        low, high = min(low, iv.estimate), max(high, iv.estimate)
    assert (iv.low, iv.high) == pytest.approx((low, high), abs=0.02)  # Monte Carlo: 20,000 draws against 200,000
    if table == [[2, 0], [0, 5]]:
        assert iv.note == "no disagreement" and iv.high == 1.0
    if table == [[20, 0], [0, 0]]:
        assert math.isnan(iv.estimate) and iv.note == "every human label is 0; the judge always says 0"


def _pairs_of(table):
    """(judge, human) vectors with the given confusion counts (rows human 0/1, columns judge 0/1)."""
    judge, human = [], []
    for h in (0, 1):
        for j in (0, 1):
            judge += [j] * table[h][j]
            human += [h] * table[h][j]
    return judge, human


def test_agreement_drops_missing_pairs_and_flags_small_n():
    a = agreement.agreement([True, None, False, True], [True, False, np.nan, False])
    assert a.n == 2 and a.dropped == 2 and a.too_small
    assert a.confusion.tolist() == [[0, 1], [0, 1]]
    # The judge said yes to both: agreement is exactly chance, kappa 0 (scikit-learn agrees).
    assert a.kappa.estimate == sklearn_metrics.cohen_kappa_score([1, 0], [1, 1]) == 0
    # Both sides constant and equal: p_e = 1 and kappa is undefined (NaN), not 1 or 0.
    assert math.isnan(agreement.agreement([1, 1, 1], [1, 1, 1]).kappa.estimate)
    big = agreement.agreement(*_fixed_vectors(0, n=agreement.MIN_LABELS))
    assert not big.too_small


def test_agreement_rejects_bad_labels():
    with pytest.raises(EvalSuiteError) as err:
        agreement.agreement([1, 2], [1, 0])
    assert err.value.field == "judge[1]" and err.value.value == 2
    with pytest.raises(EvalSuiteError, match="one value per item"):
        agreement.agreement([1, 0, 1], [1, 0])
    with pytest.raises(EvalSuiteError) as err:  # text is never read as a number here
        agreement.agreement([1, 0], [1, "0"])
    assert err.value.field == "human[1]" and err.value.value == "0"
    # a numeric array takes the fast path and is checked all the same
    with pytest.raises(EvalSuiteError) as err:
        agreement.agreement(np.array([0.0, 0.5]), np.array([0, 1]))
    assert err.value.field == "judge[1]"


def test_rank_correlation_matches_scipy_by_hand():
    # Spearman of ranks (1, 3, 2, 4) vs (1, 2, 3, 4): 1 - 6 * 2 / (4 * 15) = 0.8; Kendall: 5 concordant,
    # 1 discordant of 6 pairs: (5 - 1) / 6.
    r = agreement.rank_correlation([0.1, 0.4, 0.35, 0.8, None], [1, 2, 3, 4, 5])
    assert r["n"] == 4
    assert r["spearman"] == pytest.approx(0.8)
    assert r["kendall"] == pytest.approx(4 / 6)
    assert math.isnan(agreement.rank_correlation([1, 1, 1], [1, 2, 3])["spearman"])


def test_reliability_bins():
    table = agreement.reliability([0.05, 0.15, 0.55, 0.6, 1.0], [0, 0, 1, 0, 1], bins=5)
    # bins [0, .2), [.4, .6), [.6, .8), [.8, 1]: a score of exactly 1 falls in the last bin
    assert table["n"].tolist() == [2, 1, 1, 1]
    assert table["human_rate"].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert table["bin_low"].tolist() == [0.0, 0.4, 0.6, 0.8]
    assert table["mean_score"].tolist() == pytest.approx([0.1, 0.55, 0.6, 1.0])
    with pytest.raises(EvalSuiteError) as err:
        agreement.reliability([0.5, 1.5], [1, 0])
    assert err.value.field == "judge_scores[1]"


def _synthetic(seed: int, n: int, big_n: int, p: float = 0.7):
    """Human labels ~ Bernoulli(p); a judge that says yes too often (bias +0.1) and errs 20% of the time."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n + big_n) < p).astype(float)
    noise = rng.random(n + big_n)
    f = np.where(noise < 0.2, 1 - y, y)
    f = np.where((f == 0) & (rng.random(n + big_n) < 0.35), 1.0, f)
    return y[:n], f[:n], f[n:], y


@pytest.mark.parametrize("seed", RNG_SEEDS)
@pytest.mark.parametrize("tuned", [False, True])
def test_ppi_matches_ppi_python(seed, tuned):
    y, f, fu, _ = _synthetic(seed, 80, 700)
    lam = None if tuned else 1
    iv = ppi.ppi_mean(y, f, fu, confidence=0.9, tuned=tuned)
    point = ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=lam)
    assert iv.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-12)
    assert (iv.low, iv.high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-12)
    classic = ppi.classical_mean(y, confidence=0.9)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.1)
    assert (classic.low, classic.high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-12)


def test_ppi_closed_form_of_the_paper_clipped_to_the_range():
    # Angelopoulos et al. 2023, mean estimation: theta = mean(f_unl) - mean(f_lab - y);
    # interval theta +- z_{1-a/2} * sqrt(sigma_f^2 / N + sigma_rect^2 / n).
    y = np.array([1, 0, 1, 1, 0, 1.0])
    f = np.array([1, 0, 0, 1, 1, 1.0])
    fu = np.array([1, 1, 0, 1, 1, 0, 1, 1, 0, 1.0])
    theta = fu.mean() - (f - y).mean()
    se = math.sqrt(fu.var() / len(fu) + (f - y).var() / len(y))
    iv = ppi.ppi_mean(y, f, fu)
    raw = (theta, theta - 1.959963984540054 * se, theta + 1.959963984540054 * se)
    assert iv.extra["unclipped"] == pytest.approx(raw)
    assert raw[2] > 1 and iv.high == 1.0  # the top end is clipped to the range; the rest is the paper's
    assert (iv.estimate, iv.low) == pytest.approx(raw[:2])
    assert iv.extra["lam"] == 1.0 and iv.n == 6 and iv.n_unlabelled == 10 and iv.too_small


@pytest.mark.parametrize("tuned", [False, True])
def test_ppi_equals_ppi_python_inside_the_range_and_is_clipped_outside(tuned):
    """The issue's case: PPI 1.048 [0.960, 1.136] for a system whose labels are nearly all 1."""
    rng = np.random.default_rng(4)
    y = (rng.random(40) < 0.97).astype(float)
    f = np.where(rng.random(40) < 0.15, 1 - y, y)
    fu = (rng.random(400) < 0.95).astype(float)
    lam = None if tuned else 1
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam))
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)))
    iv = ppi.ppi_mean(y, f, fu, tuned=tuned)
    assert iv.extra["unclipped"] == pytest.approx((point, low, high), abs=1e-12)
    assert (iv.estimate, iv.low, iv.high) == pytest.approx((min(point, 1), max(low, 0), min(high, 1)), abs=1e-12)
    assert 0 <= iv.low <= iv.estimate <= iv.high <= 1
    if not tuned:
        assert high > 1  # ppi_py's interval leaves the range here; ours stops at 1


def test_normal_approximation_problems_fall_back_to_human_only():
    y = np.array([1.0] * 40)
    m = ppi.mean_intervals(y, y, np.ones(100))
    assert m["ppi"].method == "human only (clopper-pearson)"
    assert m["ppi"].note.startswith("every labelled request is yes (40 of 40)")
    # 1.000 [1.000, 1.000] from 40 labels that are all 1 was the CLT interval; Clopper-Pearson: [0.912, 1]
    assert (m["human"].estimate, m["human"].high) == (1.0, 1.0)
    assert m["human"].low == pytest.approx(0.025 ** (1 / 40))
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.5).astype(float)
    m = ppi.mean_intervals(y, y, (rng.random(500) < 0.5).astype(float))  # a judge that never errs on the labels
    assert m["ppi"].note == "the judge agrees with every human label (0 disagreements in 200): at least 10 are needed"
    f = np.where(rng.random(200) < 0.2, 1 - y, y)
    m = ppi.mean_intervals(y, f, (rng.random(500) < 0.5).astype(float))
    assert m["ppi"].method == "ppi" and m["ppi"].note == ""
    assert ppi.mean_intervals(y[:60], f[:60], np.ones(9), tuned=True)["ppi"].note == (
        "only 60 labelled requests: PPI++ needs at least 100")


def test_a_perfect_judge_gives_the_judge_mean_and_a_narrower_normal_interval():
    y, _, _, full = _synthetic(9, 60, 600)
    raw = ppi.ppi_mean(full[:60], full[:60], full[60:])
    assert raw.estimate == pytest.approx(full[60:].mean())
    m = ppi.mean_intervals(full[:60], full[:60], full[60:])
    assert m["ppi"].width == m["human"].width and "0 disagreements" in m["ppi"].note
    assert raw.width < m["human"].width / 2


@pytest.mark.parametrize("tuned", [False, True])
def test_ppi_interval_covers_the_true_mean_about_95_percent(tuned):
    """Coverage property: 1,000 seeded draws, true mean 0.7; a 95% interval should cover it in
    93.5%..96.5% of them (binomial sd of the count is 0.7 points). The judge-only interval,
    biased by the judge's errors, must not (it is not an interval for the human mean)."""
    p, draws = 0.7, 1000
    covered = judge_covered = 0
    for seed in range(draws):
        y, f, fu, _ = _synthetic(10_000 + seed, 150, 1500, p)
        m = ppi.mean_intervals(y, f, fu, tuned=tuned)
        covered += m["ppi"].low <= p <= m["ppi"].high
        judge_covered += m["judge"].low <= p <= m["judge"].high
    assert 0.935 <= covered / draws <= 0.965, covered
    assert judge_covered / draws < 0.5


def test_paired_difference_interval_covers_and_is_narrower_than_independent():
    rng = np.random.default_rng(5)
    covered, ratios = 0, []
    draws = 400
    for _ in range(draws):
        n, big_n = 120, 1200
        base = rng.random(n + big_n)  # request difficulty shared by both systems
        ya = (base < 0.75).astype(float)
        yb = (base < 0.65).astype(float)  # true difference b - a = -0.10
        fa = np.where(rng.random(n + big_n) < 0.15, 1 - ya, ya)
        fb = np.where(rng.random(n + big_n) < 0.15, 1 - yb, yb)
        a = (ya[:n], fa[:n], fa[n:])
        b = (yb[:n], fb[:n], fb[n:])
        paired = ppi.ppi_mean_difference(b, a, paired=True)
        indep = ppi.ppi_mean_difference(b, a, paired=False)
        covered += paired.low <= -0.10 <= paired.high
        ratios.append(paired.width / indep.width)
    assert 0.92 <= covered / draws <= 0.98
    # The shared request difficulty cancels in the paired differences (the judge errors do not).
    assert np.median(ratios) < 0.97  # 0.93 here


def test_ppi_errors_and_empty_sets():
    with pytest.raises(EvalSuiteError, match="one value per labelled request"):
        ppi.ppi_mean([1, 0], [1], [1, 1])
    with pytest.raises(EvalSuiteError) as err:
        ppi.ppi_mean([1, None], [1, 0], [1])
    assert err.value.field == "human[1]"
    assert math.isnan(ppi.ppi_mean([], [], [1, 0]).estimate)
    with pytest.raises(EvalSuiteError):
        ppi.ppi_mean([1], [1], [1], confidence=1.0)


# ------------------------------------------------------------------------------------------------
# judgement tables, the join and their errors
# ------------------------------------------------------------------------------------------------

TABLE = (b"query_id,system,judgement,item,judge,judge_score,judge_label,human_label\n"
         b"q1,A,claim_support,0,lex,0.9,1,1\n"
         b"q1,A,claim_support,1,lex,0.2,0,\n"
         b"q2,A,claim_support,0,lex,0.7,1,0\n"
         b"q1,B,claim_support,0,lex,0.8,1,1\n")


def test_read_judgements_and_errors(tmp_path):
    t = judgement_tables.read_judgements(TABLE, source_name="j.csv")
    assert len(t) == 4 and t["human_label"].isna().sum() == 1 and t["line"].tolist() == [2, 3, 4, 5]
    bad = TABLE.replace(b"q2,A,claim_support,0,lex,0.7,1,0", b"q2,A,claim_support,0,lex,0.7,maybe,0")
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.read_judgements(bad, source_name="j.csv")
    e = err.value
    assert (e.source, e.line, e.field, e.value) == ("j.csv", 4, "judge_label", "maybe")
    dup = TABLE + b"q1,B,claim_support,0,lex,0.1,0,0\n"
    with pytest.raises(EvalSuiteError, match="appears twice") as err:
        judgement_tables.read_judgements(dup, source_name="j.csv")
    assert err.value.line == 6 and err.value.field == "query_id"
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.read_judgements(b"system,judge_label\nA,1\n", source_name="j.csv")
    assert err.value.field == "query_id" and err.value.line == 1
    path = tmp_path / "j.jsonl"
    path.write_text('{"query_id": "q1", "judge_score": 0.8, "human_label": true}\n{"query_id": "q2", "judge_score": "x"}\n')
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.read_judgements(path)
    assert (err.value.source, err.value.line, err.value.field, err.value.value) == ("j.jsonl", 2, "judge_score", "x")


def test_join_human_labels_by_request_and_item():
    t = judgement_tables.read_judgements(TABLE, source_name="j.csv")
    labels = b"query_id\tsystem\titem\thuman_label\nq1\tA\t1\t[[Yes]]\nq2\tA\t0\tno\nq7\tA\t0\t1\n"
    joined, counts = judgement_tables.join_human_labels(t, labels, source_name="h.tsv")
    assert joined["human_label"].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert counts == {"matched": 2, "unmatched": 1, "first_unmatched_line": 4}
    # Without a system column, one label row labels the request for every system.
    joined, counts = judgement_tables.join_human_labels(t, b"query_id,item,human_label\nq1,0,0\n")
    assert joined.loc[joined["item"] == 0, "human_label"].tolist() == [0.0, 0.0, 0.0]
    assert counts["matched"] == 1
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.join_human_labels(t, b"query_id,item,human_label\nq1,0,1\nq1,0,0\n", source_name="h.csv")
    assert (err.value.source, err.value.line, err.value.field, err.value.value) == ("h.csv", 3, "query_id", "q1")
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.join_human_labels(t, b"query_id,item,human_label\nq1,-1,1\n", source_name="h.csv")
    assert (err.value.line, err.value.field, err.value.value) == (2, "item", "-1")
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.join_human_labels(t, b"query_id,item,human_label\nq1,0,1\nq2,0\n", source_name="h.csv")
    assert err.value.line == 3
    with pytest.raises(EvalSuiteError, match="human_label or human_score"):
        judgement_tables.join_human_labels(t, b"query_id,item\nq1,0\n")


def test_judgements_from_records_human_columns():
    recs = pd.DataFrame({"query_id": ["q1", "q2"], "system": ["A", "A"],
                         "answer_claims_supported": [[True, False], [True]],
                         "human_answer_claims_supported": [[True, True], [None]]})
    t = judgement_tables.judgements_from_records(recs, "answer_claims_supported", judge="lex")
    assert t["judge_label"].tolist() == [1.0, 0.0, 1.0]
    assert t["human_label"].tolist()[:2] == [1.0, 1.0] and math.isnan(t["human_label"].iloc[2])
    recs.at[1, "human_answer_claims_supported"] = [True, True]
    with pytest.raises(EvalSuiteError) as err:
        judgement_tables.judgements_from_records(recs, "answer_claims_supported")
    assert err.value.line == 2 and err.value.field == "human_answer_claims_supported"


def test_table_level_agreement_and_intervals():
    t = judgement_tables.read_judgements(TABLE)
    agree = agreement.agreement_table(t, by=("judge", "judgement"))
    assert agree[["n", "tp", "fp", "fn", "tn"]].values.tolist() == [[3, 2, 1, 0, 0]]
    iv = system_means.system_intervals(t)
    a = iv[(iv["system"] == "A")].set_index("estimator")
    # A: q1 judge mean 0.5, human 1 (only item 0 labelled); q2 judge 1, human 0. All labelled.
    assert a.loc["human only", "estimate"] == pytest.approx(0.5)
    assert a.loc["judge only", "estimate"] == pytest.approx(0.75)
    assert math.isnan(a.loc["PPI", "estimate"])  # no unlabelled request: nothing to add
    with pytest.raises(EvalSuiteError) as err:
        system_means.difference_interval(t, "A", "C")
    assert err.value.field == "system_b"


def test_labelled_subset_is_seeded_and_paired():
    rows = "".join(f"q{i},{s},c,0,lex,1,1,{(i + len(s)) % 2}\n" for i in range(20) for s in ("A", "BB"))
    t = judgement_tables.read_judgements(b"query_id,system,judgement,item,judge,judge_score,judge_label,human_label\n" + rows.encode())
    s1 = system_means.labelled_subset(t, 5, seed=3)
    s2 = system_means.labelled_subset(t, 5, seed=3)
    assert s1["human_label"].equals(s2["human_label"])
    kept = s1[s1["human_label"].notna()]
    assert kept["query_id"].nunique() == 5 and len(kept) == 10  # the same ids for both systems
    assert s1["held_out_label"].notna().all()


# ------------------------------------------------------------------------------------------------
# the shipped calibration samples
# ------------------------------------------------------------------------------------------------

def test_calibration_samples_rebuild_byte_for_byte_and_match_the_sources(tmp_path):
    import importlib.util
    import json
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("build_calibration_sample", repo / "scripts" / "build_calibration_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    shipped = repo / "sample_data" / "calibration"
    for name in ("ragtruth_claim_support.csv", "ares_labels.csv", "alce_utility.csv"):
        assert (tmp_path / name).read_bytes() == (shipped / name).read_bytes(), name
    # Independent of the script: RAGTruth answers with no span have every sentence labelled 1, and
    # the share of answers with a span (259 of 817, its SOURCE.md) is the share with a 0.
    ragtruth = judgement_tables.read_judgements(shipped / "ragtruth_claim_support.csv")
    any_zero = (ragtruth.groupby(["system", "query_id"])["human_label"].min() == 0).sum()
    assert any_zero == 259
    # ALCE: human_score is the utility rating of the source, label = rating >= 4.
    source = json.loads((repo / "sample_data" / "sources" / "alce_human_eval" /
                         "human_eval_utility_completed.json").read_text("utf-8"))
    ratings = [r["utility_score"] for runs in source.values() for run in runs.values()
               for qid, r in run.items() if qid != "overall_results"]
    alce = judgement_tables.read_judgements(shipped / "alce_utility.csv")
    assert sorted(alce["human_score"]) == sorted(ratings)
    assert (alce["human_label"] == (alce["human_score"] >= 4)).all()
    ares = judgement_tables.read_judgements(shipped / "ares_labels.csv")
    assert len(ares) == 126 and ares.groupby("judgement").size().to_dict() == {
        "answer_faithfulness": 42, "answer_relevance": 42, "context_relevance": 42}
