"""Download report: the HTML is built when the button is clicked (a deferred download)."""

from __future__ import annotations

import re

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

import evalsuite as es
from evalsuite.stats.comparison import compare

from .helpers import MINE, SAMPLE_FILES, open_page, sha256


@pytest.fixture
def deferred_downloads(monkeypatch):
    """{file name: the callable a deferred st.download_button registered} (AppTest cannot click
    through to the file, so the test calls the callable itself)."""
    captured = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        captured[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return captured


def report_of(captured: dict, page: str) -> str:
    names = [n for n in captured if n and n.startswith(f"evalsuite-report-{page}-") and n.endswith(".html")]
    assert names, list(captured)
    return captured[names[-1]]().decode("utf-8")


def test_report_of_the_compare_page_has_the_numbers_the_charts_and_the_stamp(deferred_downloads, cranfield):
    qrels, runs = cranfield
    metrics = ["ndcg@10", "recall@100"]
    at = open_page("compare", query={"compare_a": "BM25L", "compare_b": "BM25", "compare_test": "t-test",
                                     "compare_correction": "bonferroni", "compare_metrics": metrics})
    text = report_of(deferred_downloads, "compare")
    assert text.startswith("<!DOCTYPE html>")
    # Stamp: version, settings, conventions, SHA-256 of every input (hashlib on the files).
    assert f"EvalSuite {es.__version__}" in text
    for _, path, _ in SAMPLE_FILES:
        assert sha256(path.read_bytes()) in text, path.name
    for setting in ("<th>test</th><td>t-test</td>", "<th>correction</th><td>bonferroni</td>",
                    "<th>alpha</th><td>0.05</td>", "<th>seed</th><td>0</td>", "<th>rel_level</th><td>1</td>",
                    "<th>query policy</th><td>qrels: queries in the qrels (trec_eval -c"):
        assert setting in text, setting
    assert "ties by doc id descending (trec_eval)" in text and "records: faithfulness" in text
    # The comparison: compare() on the same input, 4 decimals as the report prints.
    expected = compare(qrels, {"BM25L": runs["BM25L"], "BM25": runs["BM25"]}, metrics=metrics, test="t-test",
                       correction="bonferroni", baseline="BM25L").table
    for row in expected.itertuples():
        for value in (row.mean_baseline, row.mean_system, row.diff, row.ci_low, row.ci_high, row.p_adjusted):
            assert f"<td>{value:.4f}</td>" in text, (row.metric, value)
    # The overview: evaluate() means of the Overview page's default metrics.
    means = es.evaluate(qrels, runs["BM25"], ["ndcg@10", "map@100"]).means
    assert f"<td>{means['ndcg@10']:.4f}</td>" in text and f"<td>{means['map@100']:.4f}</td>" in text
    # The charts of the view: the Compare page's three (differences, A against B, the two systems'
    # precision-recall curves), with plotly.js inlined once.
    assert text.count("Plotly.newPlot(") == 3 and text.count("plotly.js v") == 1
    assert not re.search(r"<(script|link)[^>]+(src|href)=[\"']?https?:", text)
    assert at.download_button(key="report_download").proto.label == "Download report"


def test_report_carries_the_overview_selection_and_escapes_user_text(deferred_downloads):
    data = MINE.replace(b"mine", b"<img/src=x/onerror=alert(1)>")
    at = open_page("overview", pending=[("run", "x.trec", data)],
                   query={"overview_metrics": ["precision"], "overview_k": ["5"]})
    assert "<img/src=x/onerror=alert(1)>" in list(at.dataframe[0].value.index)
    text = report_of(deferred_downloads, "overview")
    assert "<img/src=x/onerror=alert(1)>" not in text and "&lt;img/src=x/onerror=alert(1)&gt;" in text
    assert "<th>overview metrics</th><td><pre>[\n &quot;precision@5&quot;\n]</pre>" in text
    assert text.count("Plotly.newPlot(") == 2  # the Overview page's charts: means, precision-recall curves
    assert sha256(data) in text
    # A report made on another page keeps the Overview selection and has that page's charts.
    at.switch_page("pages/latency.py").run()
    text = report_of(deferred_downloads, "latency")
    # histogram, ECDF, quality against latency per system (Pareto) and per request
    assert "&quot;precision@5&quot;" in text and text.count("Plotly.newPlot(") == 4
