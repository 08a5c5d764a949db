"""Each rule of docs/conventions.md (ranking part), pinned by a hand-computed case.

Expected values are worked out by hand in the comments (or follow from the rule directly).
"""

import math

import numpy as np
import pandas as pd
import pytest

import evalsuite as es


def _eval(qrels, run, metrics, **kw):
    return es.evaluate(es.Qrels.from_dict(qrels), es.Run.from_dict(run), metrics, **kw)


def test_tied_scores_are_broken_by_doc_id_descending():
    # d2 and d1 tie at 1.0: trec_eval puts the larger doc id first, so d2 is rank 1, d1 rank 2.
    run = es.Run.from_dict({"q": {"d1": 1.0, "d2": 1.0, "d3": 0.5}})
    assert run.query("q")["doc_id"].tolist() == ["d2", "d1", "d3"]
    report = _eval({"q": {"d1": 1}}, {"q": {"d1": 1.0, "d2": 1.0, "d3": 0.5}}, ["P_1", "recip_rank"])
    assert report.means == {"P_1": 0.0, "recip_rank": 0.5}


def test_tie_order_is_byte_order_not_locale():
    # Byte (code point) order: "Z" < "a" < "é"; descending puts "é" first.
    run = es.Run.from_dict({"q": {"a": 2.0, "Z": 2.0, "é": 2.0}})
    assert run.query("q")["doc_id"].tolist() == ["é", "a", "Z"]


def test_rank_column_is_ignored_when_scores_exist():
    text = b"q Q0 low 1 0.1 t\nq Q0 high 2 0.9 t\n"
    run = es.read_run(text)
    assert run.query("q")["doc_id"].tolist() == ["high", "low"]


def test_rank_only_input_orders_by_rank():
    run = es.read_run(b"query_id,doc_id,rank\nq,b,2\nq,a,1\nq,c,3\n", format="csv")
    assert run.query("q")["doc_id"].tolist() == ["a", "b", "c"]
    assert any("rank column" in w for w in run.warnings)


def test_scores_are_float64_so_tiny_differences_rank():
    # 0.5000000001 and 0.5 are equal in float32 (trec_eval 9, pytrec_eval would then put "b"
    # first by id); in float64 "a" ranks first.
    report = _eval({"q": {"a": 1}}, {"q": {"a": 0.5000000001, "b": 0.5}}, ["P_1"])
    assert report.means["P_1"] == 1.0


def test_query_with_only_non_relevant_judgements_scores_zero_and_is_reported():
    qrels = {"good": {"d1": 1}, "none": {"d1": 0, "d2": -1}}
    run = {"good": {"d1": 1.0}, "none": {"d1": 1.0, "d2": 0.5}}
    report = _eval(qrels, run, ["map", "ndcg@10", "recip_rank", "recall@10", "P_1"])
    assert report.no_relevant_queries == ["none"]
    assert report.per_query.loc["none"].tolist() == [0.0] * 5
    assert report.means["map"] == 0.5  # (1 + 0) / 2 queries


def test_qrels_query_missing_from_run_scores_zero_by_default():
    qrels = {"a": {"d1": 1}, "b": {"d1": 1}}
    report = _eval(qrels, {"a": {"d1": 1.0}}, ["map"])
    assert report.defaulted_queries == ["b"]
    assert report.per_query.loc["b", "map"] == 0.0
    assert report.means["map"] == 0.5
    assert report.params["n_queries"] == 2


def test_intersection_policy_leaves_missing_queries_out_with_a_warning():
    qrels = {"a": {"d1": 1}, "b": {"d1": 1}}
    report = _eval(qrels, {"a": {"d1": 1.0}}, ["map"], queries="intersection")
    assert report.query_ids == ["a"]
    assert report.means["map"] == 1.0
    assert "b" in report.dropped_queries
    assert any("intersection" in w for w in report.warnings)


def test_run_query_without_qrels_is_dropped_and_reported():
    report = _eval({"a": {"d1": 1}}, {"a": {"d1": 1.0}, "extra": {"d1": 1.0}}, ["map"])
    assert report.query_ids == ["a"]
    assert report.dropped_queries == {"extra": "in the run but not in the qrels"}


def test_k_larger_than_the_list_divides_by_k():
    # 3 docs returned, 2 relevant: P@10 = 2/10; R@10 = 2/3 (3 relevant judged).
    qrels = {"q": {"d1": 1, "d2": 1, "d9": 1}}
    report = _eval(qrels, {"q": {"d1": 3.0, "x": 2.0, "d2": 1.0}}, ["P_10", "recall_10", "map_cut_10"])
    assert report.means["P_10"] == pytest.approx(0.2)
    assert report.means["recall_10"] == pytest.approx(2 / 3)
    # AP@10 = (1/1 + 2/3) / 3
    assert report.means["map_cut_10"] == pytest.approx((1 + 2 / 3) / 3)


def test_negative_grades_are_not_relevant_and_not_counted_in_r():
    # d1 graded -1 at rank 1, d2 graded 1 at rank 2: R = 1.
    qrels = {"q": {"d1": -1, "d2": 1}}
    report = _eval(qrels, {"q": {"d1": 2.0, "d2": 1.0}}, ["P_2", "recall_2", "map", "ndcg_cut_2"])
    assert report.means["P_2"] == 0.5
    assert report.means["recall_2"] == 1.0
    assert report.means["map"] == 0.5
    assert report.means["ndcg_cut_2"] == pytest.approx(1 / math.log2(3))


def test_map_at_k_divides_by_all_relevant_not_min_r_k():
    # 5 relevant judged, the top 2 are relevant: MAP@2 = (1 + 1) / 5 = 0.4 (Spark: 1.0).
    qrels = {"q": {f"d{i}": 1 for i in range(5)}}
    report = _eval(qrels, {"q": {"d0": 9.0, "d1": 8.0, "x": 7.0}}, ["map@2"])
    assert report.means["map@2"] == pytest.approx(0.4)


def test_mrr_with_and_without_cutoff():
    # First relevant doc at rank 3.
    qrels = {"q": {"c": 1}}
    report = _eval(qrels, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["mrr", "mrr@2", "mrr@3", "hit_rate@2", "hit_rate@3"])
    assert report.means == {"mrr": pytest.approx(1 / 3), "mrr@2": 0.0, "mrr@3": pytest.approx(1 / 3),
                            "hit_rate@2": 0.0, "hit_rate@3": 1.0}


def test_ndcg_linear_and_exponential_gains_by_hand():
    # Ranked grades [3, 0, 2]; ideal [3, 2].
    qrels = {"q": {"a": 3, "b": 0, "c": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    report = _eval(qrels, run, ["ndcg@3", "ndcg_burges@3"])
    linear = (3 + 2 / 2) / (3 + 2 / math.log2(3))  # log2(4) = 2 at rank 3
    exponential = (7 + 3 / 2) / (7 + 3 / math.log2(3))
    assert report.means["ndcg@3"] == pytest.approx(linear, abs=1e-12)
    assert report.means["ndcg_burges@3"] == pytest.approx(exponential, abs=1e-12)


def test_ndcg_ideal_uses_judged_docs_not_retrieved():
    # Only 1 doc retrieved (grade 1) but 2 relevant judged (grades 2 and 1).
    report = _eval({"q": {"a": 1, "b": 2}}, {"q": {"a": 1.0}}, ["ndcg", "ndcg@1"])
    assert report.means["ndcg@1"] == pytest.approx(1 / 2)
    assert report.means["ndcg"] == pytest.approx(1 / (2 + 1 / math.log2(3)))


def test_ndcg_rel_level_2_gives_grade_1_no_gain():
    # rel_level=2: the grade-1 doc at rank 1 earns nothing; ideal holds only the grade-2 doc.
    report = _eval({"q": {"a": 1, "b": 2}}, {"q": {"a": 2.0, "b": 1.0}}, ["ndcg@2"], rel_level=2)
    assert report.means["ndcg@2"] == pytest.approx((2 / math.log2(3)) / 2)
    assert "ndcg_rel_level" in report.conventions


def test_idcg_zero_gives_zero_not_nan():
    report = _eval({"q": {"a": 0}}, {"q": {"a": 1.0}}, ["ndcg@5", "ndcg_burges@5"])
    assert report.means == {"ndcg@5": 0.0, "ndcg_burges@5": 0.0}


def test_judged_at_k_counts_any_grade():
    # top 4: a (grade 0), b (unjudged), c (grade 2), d (unjudged) -> 2 of 4 judged.
    report = _eval({"q": {"a": 0, "c": 2}}, {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}, ["judged@4"])
    assert report.means["judged@4"] == 0.5


def test_trec_eval_aliases_and_ranx_names_agree():
    qrels = {"q": {"a": 2, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    pairs = [("P_2", "precision@2"), ("recall_2", "recall@2"), ("success_1", "hit_rate@1"),
             ("recip_rank", "mrr"), ("map_cut_3", "map@3"), ("ndcg_cut_3", "ndcg@3")]
    report = _eval(qrels, run, [n for p in pairs for n in p])
    for trec, ranx_name in pairs:
        assert report.means[trec] == report.means[ranx_name]


def test_list_api_matches_hand_values_and_keeps_order():
    relevant = [{"a", "c"}, {"x"}, set()]
    retrieved = [["a", "b", "c"], ["y", "x"], []]
    p = es.precision_at_k(relevant, retrieved, k=2)
    assert list(p.per_query) == [0.5, 0.5, 0.0]
    assert float(p) == pytest.approx(1 / 3)
    assert p.params["k"] == 2 and p.params["n_queries"] == 3 and p.params["rel_level"] == 1
    assert list(es.mrr(relevant, retrieved).per_query) == [1.0, 0.5, 0.0]
    assert list(es.recall_at_k(relevant, retrieved, k=1).per_query) == [0.5, 0.0, 0.0]
    assert list(es.hit_rate_at_k(relevant, retrieved, k=1).per_query) == [1.0, 0.0, 0.0]
    # AP@3 for [1, 0, 1] with R = 2: (1 + 2/3) / 2
    assert es.mean_average_precision_at_k(relevant, retrieved, k=3).per_query[0] == pytest.approx((1 + 2 / 3) / 2)


def test_list_api_accepts_grades_and_rel_level():
    graded = [{"a": 1, "b": 3}]
    ranking = [["a", "b"]]
    assert float(es.precision_at_k(graded, ranking, k=2, rel_level=2)) == 0.5
    linear = es.ndcg_at_k(graded, ranking, k=2)
    assert float(linear) == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert linear.params["gains"] == "linear"
    # Non-integer grades are fine in memory; 0.5 is below the default rel_level 1 (gain 0) ...
    below = es.ndcg_at_k([{"a": 0.5, "b": 1.0}], [["a", "b"]], k=2)
    assert float(below) == pytest.approx(1 / math.log2(3))
    # ... and counts with gain 0.5 from rel_level 0.5.
    half = es.ndcg_at_k([{"a": 0.5, "b": 1.0}], [["a", "b"]], k=2, rel_level=0.5)
    assert float(half) == pytest.approx((0.5 + 1 / math.log2(3)) / (1 + 0.5 / math.log2(3)))


def test_score_behaves_as_a_float():
    score = es.precision_at_k([{"a"}], [["a", "b"]], k=2)
    assert score == 0.5 and score + 1 == 1.5 and f"{score:.2f}" == "0.50" and isinstance(score, float)
    assert score.to_series().tolist() == [0.5]


def test_no_relevant_warning_writes_whole_grades_as_integers():
    # A query whose judged docs are all below rel_level scores 0, and the warning says which grade.
    report = _eval({"q": {"a": 1}, "r": {"b": 2}}, {"q": {"a": 1.0}, "r": {"b": 1.0}}, ["ndcg@2"], rel_level=2.0)
    assert any("1 evaluated query has no judged doc with grade >= 2; it scores 0" in w for w in report.warnings), report.warnings
    half = _eval({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg@2"], rel_level=1.5)
    assert any("grade >= 1.5;" in w for w in half.warnings), half.warnings


@pytest.mark.parametrize("block_rows", [1, 3, 17, 1000])
def test_blocks_of_queries_change_no_value(monkeypatch, block_rows):
    """evaluate_local evaluates a block of queries at a time (memory); any block size gives the
    values of one block, bit for bit: ties, missing and extra queries, graded qrels, no cutoff."""
    import evalsuite.evaluation.local as local

    rng = np.random.default_rng(7)
    run = {f"q{q}": {f"d{d}": float(rng.integers(0, 5)) for d in rng.choice(60, int(rng.integers(1, 25)), replace=False)}
           for q in range(40)}
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(60, int(rng.integers(1, 9)), replace=False)}
             for q in range(5, 48)}
    metrics = ["ndcg", "map", "P_5", "recall@20", "mrr", "iprec_at_recall_0.50", "num_rel_ret", "judged@10"]
    whole = local.evaluate_local(qrels, run, metrics)
    for queries in ("qrels", "intersection"):
        monkeypatch.setattr(local, "_BLOCK_ROWS", 1 << 20)
        expected = local.evaluate_local(qrels, run, metrics, queries=queries)
        monkeypatch.setattr(local, "_BLOCK_ROWS", block_rows)
        got = local.evaluate_local(qrels, run, metrics, queries=queries)
        pd.testing.assert_frame_equal(got.per_query, expected.per_query, check_exact=True)
        assert got.means == expected.means and got.no_relevant_queries == expected.no_relevant_queries
    assert whole.per_query.shape[0] == 43


def test_query_warnings_count_one_query_and_many_in_words_that_agree():
    # One query, then two, in each of the three warnings about queries.
    one = _eval({"q": {"a": 1}, "r": {"b": 2}, "s": {"c": 2}}, {"q": {"a": 1.0}, "r": {"b": 1.0}, "t": {"d": 1.0}},
                ["ndcg@2"], rel_level=2.0)
    assert {"1 qrels query is missing from the run; it scores 0", "1 run query has no qrels and is left out"} <= set(one.warnings)
    assert any(w.startswith("1 evaluated query has no judged doc with grade >= 2; it scores 0") for w in one.warnings)
    two = _eval({"q": {"a": 1}, "r": {"b": 1}, "s": {"c": 2}, "u": {"e": 2}, "w": {"g": 2}},
                {"q": {"a": 1.0}, "r": {"b": 1.0}, "w": {"g": 1.0}, "t": {"d": 1.0}, "v": {"f": 1.0}}, ["ndcg@2"],
                rel_level=2.0)
    assert {"2 qrels queries are missing from the run; they score 0", "2 run queries have no qrels and are left out"} <= set(two.warnings)
    assert any(w.startswith("2 evaluated queries have no judged doc with grade >= 2; they score 0") for w in two.warnings)
