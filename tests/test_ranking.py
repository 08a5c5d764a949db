"""The list API of evalsuite/ranking.py: keyword-only options, one name for the judgements."""

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
