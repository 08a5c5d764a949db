"""The Overview page: the numbers shown are evaluate()'s, whole-list cutoffs as trec_eval."""

from __future__ import annotations

import numpy as np
import pytest

import evalsuite as es

from .helpers import open_page


def test_overview_numbers_equal_evaluate(cranfield):
    qrels, runs = cranfield
    at = open_page("overview", query={"overview_metrics": ["ndcg", "map"], "overview_k": ["5", "20"]})
    shown = at.dataframe[0].value
    metrics = ["ndcg@5", "ndcg@20", "map@5", "map@20"]
    assert list(shown.columns) == metrics
    for system, run in runs.items():
        expected = es.evaluate(qrels, run, metrics).means
        np.testing.assert_allclose(shown.loc[system, metrics].to_numpy(float), [expected[m] for m in metrics], rtol=0, atol=1e-12)
    judged = at.dataframe[2].value
    report = es.evaluate(qrels, runs["BM25"], ["judged@5", "judged@20"])
    assert judged.loc["BM25", "judged@5"] == pytest.approx(report.means["judged@5"], abs=1e-12)
    coverage = at.dataframe[1].value
    assert coverage.loc["BM25", "queries evaluated"] == 225
    assert coverage.loc["BM25", "coverage"] == 1.0


def test_whole_list_cutoff_gives_trec_evals_map_and_ndcg(cranfield):
    qrels, runs = cranfield
    at = open_page("overview", query={"overview_metrics": ["map", "ndcg", "mrr"], "overview_k": ["10", "all"]})
    shown = at.dataframe[0].value
    assert list(shown.columns) == ["map@10", "map", "ndcg@10", "ndcg", "mrr@10", "mrr"]
    for system, run in runs.items():
        expected = es.evaluate(qrels, run, ["map", "ndcg", "mrr"]).means
        for metric in ("map", "ndcg", "mrr"):
            assert shown.loc[system, metric] == pytest.approx(expected[metric], abs=1e-12)
    # trec_eval's map (no cutoff) differs from map@10 on these 1000-deep runs.
    assert shown.loc["BM25", "map"] != pytest.approx(shown.loc["BM25", "map@10"], abs=1e-6)
    assert "judged" in at.dataframe[2].value.columns
