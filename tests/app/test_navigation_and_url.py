"""Query parameters seed the view (bad ones are ignored or dropped); the sidebar's relevance level
applies."""

from __future__ import annotations

import pytest

import evalsuite as es

from .helpers import open_page


def test_query_parameters_seed_widgets():
    at = open_page("per_query", query={"per_query_system": "BM25L", "per_query_metric": "map", "per_query_k": "100"})
    assert at.selectbox(key="per_query_system").value == "BM25L"
    assert at.selectbox(key="per_query_metric").value == "map"
    assert at.selectbox(key="per_query_k").value == 100
    assert "map@100" in at.dataframe[0].value.columns


def test_an_unknown_system_a_in_the_url_falls_back_to_another_system_than_b():
    at = open_page("compare", query={"compare_a": "nonexistent", "compare_b": "BM25"})
    assert at.selectbox(key="compare_a").value == "BM25L"
    assert at.selectbox(key="compare_b").value == "BM25"
    assert not at.warning or all("two different" not in w.value for w in at.warning)
    assert "BM25 against BM25L" in [h.value for h in at.subheader]


def test_invalid_query_parameters_are_ignored():
    at = open_page("compare", query={"compare_a": "no-such-system", "compare_metric": "<script>"})
    assert at.selectbox(key="compare_a").value == "BM25"
    assert not at.error


def test_relevance_level_from_the_url(cranfield):
    qrels, runs = cranfield
    at = open_page("overview", query={"rel_level": "3", "overview_metrics": ["precision"], "overview_k": ["10"]})
    expected = es.evaluate(qrels, runs["BM25"], ["precision@10"], rel_level=3).means["precision@10"]
    assert at.dataframe[0].value.loc["BM25", "precision@10"] == pytest.approx(expected, abs=1e-12)
    # Above 1 this page's nDCG is ranx's, not trec_eval -l's (which leaves nDCG as it is): the help says so.
    assert "trec_eval's -l leaves nDCG as it is" in at.number_input(key="rel_level").help


@pytest.mark.parametrize("value", ["inf", "nan", "-3", "2.5", "1e400", "abc", "1000"])
def test_a_rel_level_the_sidebar_cannot_take_falls_back_to_1(cranfield, value):
    qrels, runs = cranfield
    at = open_page("overview", query={"rel_level": value, "overview_metrics": ["precision"], "overview_k": ["10"]})
    assert at.number_input(key="rel_level").value == 1
    expected = es.evaluate(qrels, runs["BM25"], ["precision@10"], rel_level=1).means["precision@10"]
    assert at.dataframe[0].value.loc["BM25", "precision@10"] == pytest.approx(expected, abs=1e-12)
    assert "rel_level" not in at.query_params  # the address bar no longer shows the bad value


def test_url_keeps_the_current_choice_when_the_options_change():
    # Query 17 chosen after the page opened on query 8; "Regressions only" then drops 8 from the
    # options, and the URL must keep 17 (the user's choice), not lose the parameter.
    at = open_page("compare", query={"compare_metrics": "ndcg@10", "compare_query": "8"})
    at.selectbox(key="compare_query").set_value("17").run()
    at.toggle(key="compare_regressions").set_value(True).run()
    assert not at.exception
    assert at.selectbox(key="compare_query").value == "17"
    # AppTest's query_params do not follow the widget (the browser does that); what matters is
    # that the page did not delete the parameter that holds the choice.
    assert "compare_query" in at.query_params


def test_a_reversed_range_in_the_url_is_dropped():
    at = open_page("per_query", query={"per_query_range": ["0.9", "0.1"]})
    assert at.slider(key="per_query_range").value == (0.0, 1.0)
    assert len(at.dataframe[0].value) == 225


def test_a_link_value_the_page_cannot_take_is_said_not_silently_dropped(cranfield):
    at = open_page("overview", query={"overview_k": ["0", "-3"]})
    toasts = " ".join(t.value for t in at.toast)
    assert "is not a value this page can take" in toasts and "0, \\-3" in toasts, toasts
    assert not at.exception
    clean = open_page("overview")
    assert not [t.value for t in clean.toast]
