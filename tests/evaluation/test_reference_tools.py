"""Per-query agreement with ranx and pytrec-eval-terrier on seeded random inputs (to 1e-9).

The inputs have no tied scores (the tools break ties differently: ranx keeps insertion order),
hundreds of queries, graded and binary qrels with negative grades, qrels queries missing from
the run and run queries without qrels.
"""

import numpy as np
import pytest

import evalsuite as es
from reference import in_trec_order, random_collection

pytestmark = pytest.mark.reference  # compares with another tool (trec_eval's fixtures, ranx, pytrec_eval)

ranx = pytest.importorskip("ranx")
pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 3, 5, 10, 20, 100)
TOL = 1e-9


@pytest.fixture(scope="module", params=[(1, True), (2, False), (3, True)], ids=["graded-1", "binary-2", "graded-3"])
def collection(request):
    seed, graded = request.param
    qrels, run = random_collection(seed, graded=graded)
    return qrels, run, es.Qrels.from_dict(qrels), es.Run.from_dict(run)


def _ranx_per_query(qrels, run, metrics):
    r_qrels, r_run = ranx.Qrels(qrels), ranx.Run(run)
    ranx.evaluate(r_qrels, r_run, metrics, make_comparable=True)
    return r_run.scores  # {metric: {query: value}}


@pytest.mark.parametrize("rel_level", [1, 2])
def test_every_metric_matches_ranx_per_query(collection, rel_level):
    qrels, run, es_qrels, es_run = collection
    pairs = []
    for k in CUTOFFS:
        pairs += [(f"precision@{k}", f"precision@{k}"), (f"recall@{k}", f"recall@{k}"),
                  (f"hit_rate@{k}", f"hit_rate@{k}"), (f"mrr@{k}", f"mrr@{k}"), (f"map@{k}", f"map@{k}"),
                  (f"ndcg@{k}", f"ndcg@{k}"), (f"ndcg_burges@{k}", f"ndcg_burges@{k}"), (f"hits@{k}", f"hits@{k}")]
        pairs += [(f"dcg@{k}", f"dcg@{k}"), (f"dcg_burges@{k}", f"dcg_burges@{k}"), (f"f1@{k}", f"f1@{k}")]
    pairs += [("map", "map"), ("mrr", "mrr"), ("ndcg", "ndcg"), ("ndcg_burges", "ndcg_burges")]
    pairs += [("dcg", "dcg"), ("f1", "f1"), ("r_precision", "r-precision"), ("rbp.5", "rbp.5"), ("rbp.8", "rbp.8"),
              ("rbp.95", "rbp.95"), ("hits", "hits")]
    suffix = "" if rel_level == 1 else f"-l{rel_level}"
    ranx_names = [r + suffix for _, r in pairs]
    reference = _ranx_per_query(qrels, run, ranx_names)
    report = es.evaluate(es_qrels, es_run, [e for e, _ in pairs], rel_level=rel_level)
    assert report.query_ids == sorted(qrels)
    compared = 0
    for (ours, _), theirs in zip(pairs, ranx_names):
        for qid in qrels:
            expected = reference[theirs][qid]
            got = report.per_query.loc[qid, ours]
            assert abs(got - expected) <= TOL, (ours, qid, got, expected)
            compared += 1
    assert compared == len(pairs) * len(qrels)


@pytest.mark.parametrize("rel_level", [1, 2])
def test_trec_measures_match_pytrec_eval_per_query(collection, rel_level):
    qrels, run, es_qrels, es_run = collection
    cut = ",".join(map(str, CUTOFFS))
    measures = {f"P.{cut}", f"recall.{cut}", f"success.{cut}", f"map_cut.{cut}", f"ndcg_cut.{cut}", "map",
                "recip_rank", "ndcg"}
    # nDCG on qrels with negative grades clipped to 0: see pytrec_eval_reference in test_properties.
    plain = pytrec_eval.RelevanceEvaluator(qrels, {m for m in measures if "ndcg" not in m}, relevance_level=rel_level)
    clipped = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    ndcg = pytrec_eval.RelevanceEvaluator(clipped, {m for m in measures if "ndcg" in m}, relevance_level=rel_level)
    first, second = plain.evaluate(run), ndcg.evaluate(run)
    reference = {q: {**first[q], **second.get(q, {})} for q in first}
    names = [f"{m}_{k}" for m in ("P", "recall", "success", "map_cut", "ndcg_cut") for k in CUTOFFS]
    names += ["map", "recip_rank", "ndcg"]
    report = es.evaluate(es_qrels, es_run, names, rel_level=rel_level)
    # pytrec_eval scores queries in both files; the rest are ours to score 0.
    assert set(reference) == set(qrels) & set(run)
    for qid in qrels:
        for name in names:
            if rel_level != 1 and name.startswith("ndcg"):
                continue  # trec_eval ignores the relevance level for nDCG; checked against ranx above
            expected = reference[qid][name] if qid in reference else 0.0
            got = report.per_query.loc[qid, name]
            assert abs(got - expected) <= TOL, (name, qid, got, expected)


def test_list_api_matches_ranx(collection):
    """The list functions give the same per-query values as ranx on the same queries."""
    qrels, run, _, _ = collection
    qids = [q for q in qrels if q in run]
    relevant = [qrels[q] for q in qids]
    retrieved = [sorted(run[q], key=lambda d: -run[q][d]) for q in qids]
    sub_q = {q: qrels[q] for q in qids}
    sub_r = {q: run[q] for q in qids}
    reference = _ranx_per_query(sub_q, sub_r, ["precision@5", "recall@10", "hit_rate@3", "mrr", "map@10", "ndcg@10", "ndcg_burges@10"])
    results = {
        "precision@5": es.precision_at_k(relevant, retrieved, k=5),
        "recall@10": es.recall_at_k(relevant, retrieved, k=10),
        "hit_rate@3": es.hit_rate_at_k(relevant, retrieved, k=3),
        "mrr": es.mrr(relevant, retrieved),
        "map@10": es.mean_average_precision_at_k(relevant, retrieved, k=10),
        "ndcg@10": es.ndcg_at_k(relevant, retrieved, k=10),
        "ndcg_burges@10": es.ndcg_at_k(relevant, retrieved, k=10, gains="exponential"),
    }
    for name, score in results.items():
        expected = np.array([reference[name][q] for q in qids])
        assert np.max(np.abs(score.per_query - expected)) <= TOL, name
        assert float(score) == pytest.approx(expected.mean(), abs=TOL)
        assert score.params["n_queries"] == len(qids)


def test_judged_matches_ir_measures_per_query(collection):
    """Judged@k divides by min(k, docs retrieved), as ir_measures (which defines it) does."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run, es_qrels, es_run = collection
    measures = [ir_measures.Judged @ k for k in CUTOFFS]
    reference = {}
    for m in ir_measures.iter_calc(measures, qrels, run):
        reference[(str(m.measure), m.query_id)] = m.value
    report = es.evaluate(es_qrels, es_run, [f"judged@{k}" for k in CUTOFFS])
    compared = 0
    for k in CUTOFFS:
        for qid in set(qrels) & set(run):
            got = report.per_query.loc[qid, f"judged@{k}"]
            assert abs(got - reference[(f"Judged@{k}", qid)]) <= TOL, (k, qid)
            compared += 1
    assert compared == len(CUTOFFS) * len(set(qrels) & set(run))
    short = [q for q in set(qrels) & set(run) if len(run[q]) < 20]
    assert short, "the collection must hold queries with fewer docs than the cutoff"


@pytest.fixture(scope="module", params=[(11, True, False), (12, True, True), (13, False, True)],
                ids=["graded", "graded-ties", "binary-ties"])
def tied_collection(request):
    seed, graded, ties = request.param
    qrels, run = random_collection(seed, graded=graded, ties=ties)
    return qrels, run


@pytest.mark.parametrize("rel_level", [1, 2])
def test_trec_eval_default_measures_match_pytrec_eval_with_ties(tied_collection, rel_level):
    """num_ret, num_rel, num_rel_ret, Rprec, bpref, gm_map, iprec_at_recall_* per query as trec_eval
    (pytrec-eval-terrier), on runs where most scores tie (trec_eval breaks ties by doc id descending)."""
    qrels, run = tied_collection
    levels = [f"iprec_at_recall_{r / 10:.2f}" for r in range(11)]
    measures = {"num_ret", "num_rel", "num_rel_ret", "Rprec", "bpref", "gm_map", "iprec_at_recall", "map", "P",
                "recip_rank"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=rel_level).evaluate(run)
    names = ["num_ret", "num_rel", "num_rel_ret", "Rprec", "bpref", "gm_map", *levels, "map", "P_10", "recip_rank"]
    report = es.evaluate(qrels, run, names, rel_level=rel_level)
    both = set(qrels) & set(run)
    assert set(reference) == both
    compared = skipped = 0
    for qid in both:
        n_rel = reference[qid]["num_rel"]
        for name in names:
            expected = reference[qid][name]
            got = report.per_query.loc[qid, name]
            if name == "gm_map":  # trec_eval keeps log(max(AP, 0.00001)) per query
                got = np.log(max(got, 1e-5))
            if name.startswith("iprec"):
                # pytrec_eval runs trec_eval 9, which reaches level r at the int(r R + 0.9)-th relevant
                # doc; trec_eval 10 (and EvalSuite, checked against its fixtures) rounds r R.
                level = float(name.rsplit("_", 1)[1])
                if int(level * n_rel + 0.9) != np.floor(level * n_rel + 0.5):
                    skipped += 1
                    continue
            assert abs(got - expected) <= TOL, (name, qid, got, expected)
            compared += 1
    assert compared + skipped == len(names) * len(both) and skipped < len(levels) * len(both) / 2
    gm = np.exp(np.mean([reference[q]["gm_map"] for q in both] + [np.log(1e-5)] * len(set(qrels) - both)))
    assert float(report.scores["gm_map"]) == pytest.approx(gm, abs=TOL)
    assert float(report.scores["num_ret"]) == sum(len(run[q]) for q in both)


def _gdeval_err(grades: list, k: int) -> float:
    """gdeval.pl's err() (the script ir_measures runs for ERR@k), line for line."""
    score, decay = 0.0, 1.0
    for i, g in enumerate(grades[:k]):
        r = (2 ** g - 1) / 2 ** 4
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def test_err_matches_ir_measures_gdeval(tied_collection):
    """ERR@k as ir_measures computes it (gdeval.pl; it prints 5 decimals, compared as printed), and gdeval's
    loop transcribed (1e-12), on tied runs (gdeval too breaks ties by doc id descending)."""
    qrels, run = tied_collection
    # gdeval wants numeric topic ids.
    qrels = {str(int(q[1:])): docs for q, docs in qrels.items()}
    run = {str(int(q[1:])): docs for q, docs in run.items()}
    report = es.evaluate(qrels, run, ["err@5", "err@20", "err"])
    for qid in set(qrels) & set(run):
        ranking = sorted(run[qid], key=lambda d: (run[qid][d], d), reverse=True)
        grades = [max(qrels[qid].get(d, 0), 0) for d in ranking]
        for name, k in (("err@5", 5), ("err@20", 20), ("err", len(ranking))):
            assert abs(report.per_query.loc[qid, name] - _gdeval_err(grades, k)) <= 1e-12, (qid, name)
    ir_measures = pytest.importorskip("ir_measures")
    import shutil

    if not shutil.which("perl"):
        pytest.skip("ir_measures runs gdeval.pl with perl")
    reference = {(str(m.measure), m.query_id): m.value
                 for m in ir_measures.iter_calc([ir_measures.ERR @ 5, ir_measures.ERR @ 20], qrels, run)}
    compared = 0
    for qid in set(qrels) & set(run):
        for k in (5, 20):
            # gdeval prints %.5f: the same digits
            assert f"{report.per_query.loc[qid, f'err@{k}']:.5f}" == f"{reference[(f'ERR@{k}', qid)]:.5f}", (qid, k)
            compared += 1
    assert compared == 2 * len(set(qrels) & set(run))


def test_ranx_metrics_on_tied_runs_given_in_trec_order(tied_collection):
    """With ties, ranx's order is its own; the measures that do not depend on the order of tied docs
    (f1, hits and r-precision over the whole list) still agree query by query."""
    qrels, run = tied_collection
    reference = _ranx_per_query(qrels, in_trec_order(run), ["f1", "hits"])
    report = es.evaluate(qrels, run, ["f1", "hits"])
    for qid in qrels:
        for name in ("f1", "hits"):
            assert abs(report.per_query.loc[qid, name] - reference[name][qid]) <= TOL, (name, qid)


ALL_TREC_PYTREC = {"set_P", "set_recall", "set_relative_P", "set_map", "set_F", "relative_P", "Rprec_mult", "utility",
                   "11pt_avg", "num_nonrel_judged_ret", "gm_bpref"}


@pytest.mark.parametrize("rel_level", [1, 2])
def test_all_trec_measures_match_pytrec_eval_with_ties(tied_collection, rel_level):
    """trec_eval's all_trec measures that pytrec-eval-terrier computes, per query, on tied runs."""
    qrels, run = tied_collection
    reference = pytrec_eval.RelevanceEvaluator(qrels, ALL_TREC_PYTREC, relevance_level=rel_level).evaluate(run)
    both = sorted(set(qrels) & set(run))
    names = sorted(reference[both[0]])
    assert len(names) == 9 + 10 + 9  # relative_P and Rprec_mult at their 9 and 10 default parameters
    report = es.evaluate(qrels, run, names, rel_level=rel_level)
    n_rel = {q: sum(1 for g in qrels[q].values() if g >= rel_level) for q in both}
    compared = 0
    for qid in both:
        for name in names:
            got = report.per_query.loc[qid, name]
            expected = reference[qid][name]
            if name == "gm_bpref":
                got = np.log(max(got, 1e-5))
            if name == "11pt_avg" and any(int(r / 10 * n_rel[qid] + 0.9) != np.floor(r / 10 * n_rel[qid] + 0.5)
                                          for r in range(11)):
                continue  # trec_eval 9's rounding of the recall levels (see the iprec_at_recall test)
            assert abs(got - expected) <= TOL, (name, qid, got, expected)
            compared += 1
    assert compared > len(names) * len(both) * 0.9


TREC_FAMILIES = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall",
                 "P", "recall", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "ndcg", "ndcg_cut", "map_cut",
                 "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_nonrel_judged_ret", "infAP", "binG", "G", "ndcg_rel", "Rndcg")


@pytest.mark.parametrize("run_file", ["run_bm25.trec", "run_bm25l.trec"])
def test_cranfield_sample_runs_every_measure_equals_pytrec_eval(run_file):
    """Every trec_eval measure EvalSuite computes (92 of all_trec's lines; not rbp, rbp_resid), per query, on
    the Cranfield sample runs (graded 0-4)."""
    from conftest import CRANFIELD

    qrels = es.read_qrels(CRANFIELD / "qrels.trec")
    run = es.read_run(CRANFIELD / run_file)
    q_dict = {q: {d: int(g) for d, g in qrels.query(q).items()} for q in qrels.query_ids}
    r_dict = {q: dict(zip(run.query(q)["doc_id"], map(float, run.query(q)["score"]))) for q in run.query_ids}
    reference = pytrec_eval.RelevanceEvaluator(q_dict, set(TREC_FAMILIES)).evaluate(r_dict)
    both = sorted(set(reference))
    names = [n for n in reference[both[0]] if es.parse_metric(n).trec_name == n]
    assert len(names) == len(reference[both[0]]) == 92, sorted(set(reference[both[0]]) - set(names))
    report = es.evaluate(qrels, run, names)
    compared = skipped = 0
    for qid in both:
        n_rel = reference[qid]["num_rel"]
        for name in names:
            got, expected = report.per_query.loc[qid, name], reference[qid][name]
            if name.startswith("gm_"):
                got = np.log(max(got, 1e-5))
            levels = [float(name.rsplit("_", 1)[1])] if name.startswith("iprec") else \
                [r / 10 for r in range(11)] if name == "11pt_avg" else []
            if any(int(x * n_rel + 0.9) != np.floor(x * n_rel + 0.5) for x in levels):
                skipped += 1  # trec_eval 9's rounding of recall levels (pytrec_eval); see above
                continue
            assert abs(got - expected) <= TOL, (name, qid, got, expected)
            compared += 1
    # only the 12 recall-level measures are ever skipped, and on fewer than half of the queries
    assert compared + skipped == len(names) * len(both) and skipped < 12 * len(both) / 2, (compared, skipped)


@pytest.mark.parametrize("rel_level", [1, 2])
def test_infap_bing_and_gain_measures_match_pytrec_eval_with_ties(tied_collection, rel_level):
    """infAP and binG (negative grades: pooled, unjudged) at both levels; G, ndcg_rel, Rndcg at level 1
    (trec_eval ignores -l for its gain measures; EvalSuite's follow ranx there, as nDCG)."""
    qrels, run = tied_collection
    plain = pytrec_eval.RelevanceEvaluator(qrels, {"infAP", "binG"}, relevance_level=rel_level).evaluate(run)
    names = ["infAP", "binG"]
    reference = plain
    if rel_level == 1:
        # negative grades clipped to 0: the same gain (0) for these measures; see the nDCG test above
        clipped = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
        gains = pytrec_eval.RelevanceEvaluator(clipped, {"G", "ndcg_rel", "Rndcg"}).evaluate(run)
        reference = {q: {**plain[q], **gains[q]} for q in plain}
        names += ["G", "ndcg_rel", "Rndcg"]
    report = es.evaluate(qrels, run, names, rel_level=rel_level)
    for qid in reference:
        for name in names:
            got, expected = report.per_query.loc[qid, name], reference[qid][name]
            assert abs(got - expected) <= TOL, (name, qid, got, expected)
