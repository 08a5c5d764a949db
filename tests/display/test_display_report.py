"""The HTML report export: self-contained, escaped, and stamped with what defines the numbers."""

import re

import pandas as pd
import plotly.graph_objects as go

import evalsuite as es
from evalsuite.display import InputFile, ReportSection, html_report, sha256_hex
from conftest import CRANFIELD


def _report(**overrides):
    run_bytes = (CRANFIELD / "run_bm25.trec").read_bytes()
    evaluation = es.evaluate(CRANFIELD / "qrels.trec", CRANFIELD / "run_bm25.trec", ["ndcg@10", "map"])
    table = pd.DataFrame(evaluation.means, index=pd.Index(["BM25 <b>bold</b>"], name="system"))
    figure = go.Figure(go.Bar(x=["q1", "</script><script>alert(1)</script>"], y=[0.5, 0.7]))
    options = dict(
        title="Cranfield <script>alert('x')</script>",
        sections=[ReportSection("Overview", note="means over 225 queries", tables=[("Means", table)],
                                figures=[("nDCG@10 per query", figure), ("again", figure)])],
        inputs=[InputFile("run", "run_bm25.trec", sha256_hex(run_bytes), len(run_bytes))],
        settings={"cutoffs": [10], "rel_level": 1, "test": "permutation", "correction": "holm"},
        conventions=evaluation.conventions,
        generated_at="2026-11-30T00:00:00+00:00",
    )
    options.update(overrides)
    return html_report(**options), run_bytes


def test_report_is_self_contained_with_plotly_inlined_once():
    text, _ = _report()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link)[^>]+(src|href)=[\"']?https?:", text)  # nothing loaded from the network
    assert text.count("plotly.js v") == 1 or text.count("Plotly.newPlot") == 2
    assert len(text) > 1_000_000  # plotly.js is inside


def test_report_carries_the_reproducibility_stamp():
    text, run_bytes = _report()
    assert f"EvalSuite {es.__version__}" in text
    assert sha256_hex(run_bytes) in text and len(sha256_hex(run_bytes)) == 64
    assert "holm" in text and "permutation" in text and "rel_level" in text
    assert "ties by doc id descending" in text  # a convention of the evaluation
    assert "0.3599" in text  # nDCG@10 of the BM25 run, 4 decimals


def test_user_text_is_escaped_everywhere():
    text, _ = _report()
    assert "<script>alert('x')</script>" not in text and "&lt;script&gt;alert(&#x27;x&#x27;)" in text
    assert "<b>bold</b>" not in text and "&lt;b&gt;bold&lt;/b&gt;" in text
    assert "</script><script>alert(1)" not in text  # inside the figure JSON too
