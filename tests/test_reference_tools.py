"""Per-query agreement with ranx and pytrec-eval-terrier on seeded random inputs (to 1e-9).

The inputs have no tied scores (the tools break ties differently: ranx keeps insertion order),
hundreds of queries, graded and binary qrels with negative grades, qrels queries missing from
the run and run queries without qrels.
"""

import numpy as np
import pytest

import evalsuite as es
from reference import random_collection

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
    pairs += [("map", "map"), ("mrr", "mrr"), ("ndcg", "ndcg"), ("ndcg_burges", "ndcg_burges")]
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
