"""trec_eval's views on the dashboard: the precision-recall curve (Overview for every system,
Compare for A and B), the summary block next to the coverage, numeric order of query ids."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import evalsuite as es
from evalsuite import display

from .helpers import open_page


def _curves(at) -> dict[str, list]:
    """{trace name: y values} of the precision-recall chart(s) drawn on the page."""
    out = {}
    for chart in at.get("plotly_chart"):
        figure = json.loads(chart.proto.spec)
        if "Precision-recall" not in json.dumps(figure.get("layout", {}).get("title", {})):
            continue
        for trace in figure["data"]:
            assert trace["x"] == pytest.approx([r / 10 for r in range(11)])
            out[trace["name"]] = trace["y"]
    return out


def _expected_curve(qrels, run) -> list[float]:
    # trec_eval's iprec_at_recall_0.00 ... 1.00, averaged over the qrels queries.
    report = es.evaluate(qrels, run, list(display.PR_CURVE_METRICS))
    return [report.means[m] for m in display.PR_CURVE_METRICS]


def test_overview_draws_every_systems_pr_curve_overlaid(cranfield):
    qrels, runs = cranfield
    at = open_page("overview")
    curves = _curves(at)
    assert set(curves) == set(runs) == {"BM25", "BM25L"}
    for system, run in runs.items():
        np.testing.assert_allclose(curves[system], _expected_curve(qrels, run), rtol=0, atol=1e-12)
        assert curves[system][0] >= curves[system][-1]  # interpolated precision never rises with recall
    assert at.download_button(key="overview_pr_csv").proto.label == "Download CSV"
    table = display.pr_curve_table({s: es.evaluate(qrels, r, list(display.PR_CURVE_METRICS)) for s, r in runs.items()})
    assert list(table.columns) == ["system", "recall", "precision"] and len(table) == 22


def test_compare_draws_the_pr_curves_of_a_and_b(cranfield):
    qrels, runs = cranfield
    at = open_page("compare", query={"compare_a": "BM25L", "compare_b": "BM25"})
    curves = _curves(at)
    assert set(curves) == {"BM25L", "BM25"}
    for system in curves:
        np.testing.assert_allclose(curves[system], _expected_curve(qrels, runs[system]), rtol=0, atol=1e-12)
    assert at.download_button(key="compare_pr_csv").proto.label == "Download CSV"


def test_overview_shows_trec_evals_summary_block(cranfield):
    qrels, runs = cranfield
    at = open_page("overview")
    coverage = at.dataframe[1].value
    for system, run in runs.items():
        report = es.evaluate(qrels, run, ["num_ret", "num_rel", "num_rel_ret"])
        # what `python -m evalsuite qrels run -m num_ret ...` prints (trec_eval's summary lines)
        printed = {line.split("\t")[0].strip(): line.split("\t")[2] for line in report.to_trec_eval().splitlines()}
        for column in ("num_q", "num_ret", "num_rel", "num_rel_ret"):
            assert str(int(coverage.loc[system, column])) == printed[column], (system, column)
    run = runs["BM25"]
    assert int(coverage.loc["BM25", "num_ret"]) == len(run)
    assert int(coverage.loc["BM25", "num_rel"]) == sum(1 for q in qrels.query_ids for g in qrels.query(q).values() if g >= 1)


def test_overview_csv_has_the_summary_block_the_coverage_table_shows(cranfield, monkeypatch):
    from streamlit.runtime.media_file_manager import MediaFileManager

    downloads = {}
    original = MediaFileManager.add

    def add(self, path_or_data, mimetype, coordinates, file_name=None, **kwargs):
        downloads[file_name] = path_or_data
        return original(self, path_or_data, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add", add)
    at = open_page("overview")
    coverage = at.dataframe[1].value
    data = downloads["overview.csv"]
    frame = pd.read_csv(io.BytesIO(data if isinstance(data, bytes) else data.encode("utf-8")), index_col=0)
    for column in ("num_q", "num_ret", "num_rel", "num_rel_ret", "coverage"):
        assert column in frame.columns, column
        for system in coverage.index:
            assert float(frame.loc[system, column]) == float(coverage.loc[system, column]), (system, column)
    headline = at.dataframe[0].value
    for metric in headline.columns:
        np.testing.assert_allclose(frame.loc[headline.index, metric].to_numpy(float),
                                   headline[metric].to_numpy(float), rtol=0, atol=1e-12)


def test_per_query_table_sorts_numeric_ids_numerically(cranfield):
    at = open_page("per_query", query={"per_query_system": "BM25", "per_query_metric": "ndcg", "per_query_k": "10"})
    ids = at.dataframe[0].value["query_id"].astype(str).tolist()
    assert all(q.isdigit() for q in ids)
    assert [int(q) for q in ids] == sorted(int(q) for q in ids)
    assert ids[:3] != sorted(ids)[:3] or ids == sorted(ids, key=int)  # not byte order (1, 10, 100 ...)
    assert ids.index("2") < ids.index("10")


def test_a_metric_without_cutoff_is_shown_once_in_the_overview(cranfield):
    qrels, runs = cranfield
    at = open_page("overview", query={"overview_metrics": ["bpref", "map"], "overview_k": ["10", "all"]})
    shown = at.dataframe[0].value
    assert list(shown.columns) == ["bpref", "map@10", "map"]
    for system, run in runs.items():
        assert shown.loc[system, "bpref"] == pytest.approx(es.evaluate(qrels, run, ["bpref"]).means["bpref"], abs=1e-12)
