"""The list API of evalsuite/metrics/ranking.py: keyword-only options, one name for the judgements."""

from __future__ import annotations

import inspect

import pytest

import evalsuite as es

LIST_FUNCTIONS = [es.precision_at_k, es.recall_at_k, es.hit_rate_at_k, es.mrr, es.mean_average_precision_at_k,
                  es.ndcg_at_k]


@pytest.mark.parametrize("function", LIST_FUNCTIONS, ids=lambda f: f.__name__)
def test_list_functions_share_one_signature_shape(function):
    parameters = inspect.signature(function).parameters
    assert list(parameters)[:2] == ["relevant", "retrieved"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in parameters.items()
               if name not in ("relevant", "retrieved"))
    with pytest.raises(TypeError):
        function([{"a"}], [["a"]], 1)  # k is keyword-only
    assert "Examples" in function.__doc__ and "Parameters" in function.__doc__


def test_ndcg_still_takes_its_old_keyword():
    assert float(es.ndcg_at_k(graded=[{"a": 1}], retrieved=[["b", "a"]], k=2)) == pytest.approx(1 / 1.584962500721156)
    with pytest.raises(es.EvalSuiteError, match="once"):
        es.ndcg_at_k([{"a": 1}], [["a"]], graded=[{"a": 1}])


def test_hits_is_ranx_count_and_hit_rate_keeps_its_names():
    # ranx hits@k = number of relevant docs in the top k; hit_rate@k / success_k = any relevant.
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}}
    run = {"q1": {"a": 3.0, "c": 2.0, "b": 1.0}}
    report = es.evaluate(qrels, run, ["hits@3", "hits@1", "hits", "hit_rate@3", "success_3", "HITS@3"])
    assert report.means == {"hits@3": 2.0, "hits@1": 1.0, "hits": 2.0, "hit_rate@3": 1.0, "success_3": 1.0,
                            "HITS@3": 2.0}
    assert es.parse_metric("hits@5").base == "hits"
    assert es.parse_metric("hitrate@5").base == "hit_rate"


def test_judged_divides_by_the_docs_retrieved_when_fewer_than_k():
    # ir_measures Judged@k: judged docs in the top k / min(k, docs retrieved).
    qrels = {"q1": {"a": 0, "b": 1}, "q2": {"x": 1}}
    run = {"q1": {"a": 2.0, "z": 1.0}, "q2": {"x": 1.0, "y": 0.5, "w": 0.2}}
    report = es.evaluate(qrels, run, ["judged@10", "judged@2", "judged"])
    assert report.per_query.loc["q1"].tolist() == [0.5, 0.5, 0.5]  # a of a, z
    assert report.per_query.loc["q2"].tolist() == [pytest.approx(1 / 3), 0.5, pytest.approx(1 / 3)]


def test_an_empty_run_scores_every_qrels_query_0_with_a_warning():
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}}
    report = es.evaluate(qrels, es.Run.from_dict({}), ["P_5", "map", "ndcg@10", "judged@10", "hits@10"])
    assert report.query_ids == ["q1", "q2"] and report.defaulted_queries == ["q1", "q2"]
    assert all(v == 0.0 for v in report.means.values())
    assert any("the run is empty" in w for w in report.warnings)
    with pytest.raises(es.EvalSuiteError, match="no query to evaluate"):
        es.evaluate(qrels, es.Run.from_dict({}), ["P_5"], queries="intersection")
    with pytest.raises(es.EvalSuiteError, match="no query to evaluate"):  # a run of other queries: a wrong file
        es.evaluate(qrels, {"q9": {"a": 1.0}}, ["P_5"])
