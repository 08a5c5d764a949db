"""evalsuite.display (tables and figures): display tables pinned against numpy, pandas, hand-computed
values and evalsuite's own evaluate()/evaluate_records() (whose numbers are pinned elsewhere)."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pandas as pd
import pytest

import evalsuite as es
from evalsuite import display

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}, "q3": {"z": 0}}
RUN = {"q1": {"a": 3.0, "d": 2.0, "c": 1.0, "b": 0.5}, "q3": {"z": 1.0}, "q9": {"a": 1.0}}


@pytest.fixture
def report():
    return es.evaluate(es.Qrels.from_dict(QRELS), es.Run.from_dict(RUN), ["precision@2", "judged@2", "judged@4"])


# ----------------------------------------------------------------------------------------------
# safe_csv


def read_back(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "=HYPERLINK(\"http://e\")"])
def test_safe_csv_defuses_formula_cells(cell):
    rows = read_back(display.safe_csv(pd.DataFrame({"query_id": [cell, "ok"], "value": [0.5, -0.25]})))
    assert rows[1][0] == "'" + cell
    assert rows[2] == ["ok", "-0.25"]  # a negative number in a numeric column stays a number


def test_safe_csv_defuses_headers_and_index_and_keeps_nan_empty():
    frame = pd.DataFrame({"=cmd": ["a", None], "x": [1.0, np.nan]}, index=pd.Index(["+i", "j"], name="system"))
    rows = read_back(display.safe_csv(frame, index=True))
    assert rows[0] == ["system", "'=cmd", "x"]
    assert rows[1] == ["'+i", "a", "1.0"]
    assert rows[2] == ["j", "", ""]


def test_safe_csv_leaves_the_input_alone():
    frame = pd.DataFrame({"a": ["=x"]})
    display.safe_csv(frame)
    assert frame.loc[0, "a"] == "=x"


# ----------------------------------------------------------------------------------------------
# Ranking tables


def test_overview_table_counts_by_hand(report):
    table = display.overview_table({"sys": report}, ["precision@2"])
    row = table.loc["sys"]
    # q1 top 2: a (2, relevant), d (unjudged) -> 1/2; q2 missing from the run -> 0; q3: z grade 0 -> 0.
    assert row["precision@2"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert row["queries evaluated"] == 3
    assert row["answered"] == 2
    assert row["coverage"] == pytest.approx(2 / 3)
    assert row["scored 0: missing from run"] == 1
    assert row["scored 0: no relevant judged"] == 1
    assert row["dropped: not in qrels"] == 1


def test_query_accounting_names_each_query_and_reason(report):
    table = display.query_accounting(report)
    assert table.to_dict("records") == [
        {"query_id": "q9", "outcome": "dropped", "reason": "in the run but not in the qrels"},
        {"query_id": "q2", "outcome": "scored 0", "reason": "in the qrels but not in the run"},
        {"query_id": "q3", "outcome": "scored 0", "reason": "no judged doc with grade >= 1"},
    ]


def test_judged_table_by_hand(report):
    table = display.judged_table({"sys": report}, [2, 4])
    # judged@k = judged docs in the top k / min(k, docs retrieved) (ir_measures): q1 top 2 = a, d
    # -> 1/2; top 4 = a, d, c, b -> 3/4; q3 retrieved only z (judged) -> 1/1 for both. q2 is
    # missing from the run: no docs, so not averaged (it scores 0 in the report's means, as
    # trec_eval -c, which would read as holes in the qrels).
    assert table.loc["sys", "queries answered"] == 2
    assert table.loc["sys", "judged@2"] == pytest.approx((0.5 + 1) / 2)
    assert table.loc["sys", "judged@4"] == pytest.approx((0.75 + 1) / 2)
    assert report.means["judged@4"] == pytest.approx((0.75 + 0 + 1) / 3)
    assert table.loc["sys", "queries with an unjudged doc in the top 4"] == 1


def test_judged_table_needs_the_metric(report):
    with pytest.raises(es.EvalSuiteError, match="judged@10"):
        display.judged_table({"sys": report}, [10])


def test_per_query_table_explains_zeros(report):
    table = display.per_query_table(report).set_index("query_id")
    assert table.loc["q1", "outcome"] == "scored"
    assert table.loc["q2", "outcome"] == "scored 0: missing from the run"
    assert table.loc["q3", "outcome"] == "scored 0: no relevant judged doc"


def test_ranked_list_with_labels():
    run = es.Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 3.0, "d": 0.1}})
    qrels = es.Qrels.from_dict({"q": {"a": 2, "c": 0}})
    table = display.ranked_list_with_labels(run, qrels, "q", k=3, titles={"a": "Doc A"})
    # Ties by doc id descending (trec_eval): c (3.0), then b before a (both 1.0).
    assert table["doc_id"].tolist() == ["c", "b", "a"]
    assert table["rank"].tolist() == [1, 2, 3]
    assert table["label"].tolist() == ["not relevant (0)", "unjudged", "relevant (2)"]
    assert np.isnan(table["grade"][1]) and table["grade"][2] == 2
    assert table["title"].tolist() == ["", "", "Doc A"]
    assert display.ranked_list_with_labels(run, qrels, "q", rel_level=3)["label"].tolist()[2] == "not relevant (2)"


def test_ranked_list_of_a_query_the_run_lacks_is_empty():
    run = es.Run.from_dict({"q": {"a": 1.0}})
    table = display.ranked_list_with_labels(run, None, "other")
    assert table.empty and list(table.columns) == ["rank", "doc_id", "score", "grade", "label"]


def test_side_by_side_lists():
    run_a = es.Run.from_dict({"q": {"a": 3.0, "b": 2.0}})
    run_b = es.Run.from_dict({"q": {"b": 3.0, "c": 2.0, "a": 1.0}})
    qrels = es.Qrels.from_dict({"q": {"a": 1}})
    both = display.side_by_side_lists(display.ranked_list_with_labels(run_a, qrels, "q"),
                                    display.ranked_list_with_labels(run_b, qrels, "q"), ("A", "B"))
    assert both["A: doc_id"].tolist()[:2] == ["a", "b"] and pd.isna(both["A: doc_id"][2])
    assert both["B: doc_id"].tolist() == ["b", "c", "a"]
    assert both["A: rank in other"].tolist() == [3, 1, pd.NA]
    assert both["B: rank in other"].tolist() == [2, pd.NA, 1]


def test_per_query_difference():
    per_query = pd.DataFrame({"A": [0.5, 0.2, np.nan, 0.4], "B": [0.1, 0.2, 0.3, 0.9]},
                             index=pd.Index(["q1", "q2", "q3", "q4"], name="query_id"))
    diff = display.per_query_difference(per_query, "A", "B")
    assert diff["query_id"].tolist() == ["q1", "q2", "q4", "q3"]
    np.testing.assert_allclose(diff["diff"].to_numpy()[:3], [-0.4, 0.0, 0.5], atol=1e-15)
    assert diff["outcome"].tolist() == ["B worse", "tie", "B better", "undefined"]
    assert diff.columns.tolist() == ["query_id", "A: A", "B: B", "diff", "outcome"]
    with pytest.raises(es.EvalSuiteError, match="'C'"):
        display.per_query_difference(per_query, "A", "C")


# ----------------------------------------------------------------------------------------------
# Distributions


def test_binned_histogram_equals_numpy():
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.lognormal(6, 0.5, 1000), [np.nan, np.inf]])
    groups = np.repeat(["a", "b"], [600, 402])
    frame = pd.DataFrame({"system": groups, "latency_ms": values})
    binned = display.binned_histogram(frame, "latency_ms", group="system", bins=20)
    finite = values[np.isfinite(values)]
    edges = np.linspace(finite.min(), finite.max(), 21)
    for name in ("a", "b"):
        part = values[groups == name]
        part = part[np.isfinite(part)]
        expected, _ = np.histogram(part, bins=edges)
        got = binned[binned["system"] == name]
        np.testing.assert_array_equal(got["count"].to_numpy(), expected)
        np.testing.assert_allclose(got["left"].to_numpy(), edges[:-1])
        np.testing.assert_allclose(got["share"].sum(), 1.0)
    assert len(binned) == 40


def test_binned_histogram_log_edges_and_constant_values():
    frame = pd.DataFrame({"v": [1.0, 10.0, 100.0, 0.0, -5.0]})
    binned = display.binned_histogram(frame, "v", bins=2, log=True)
    np.testing.assert_allclose(binned["left"].to_numpy(), [1.0, 10.0])
    assert binned["count"].tolist() == [1, 2]  # 0 and -5 cannot be on a log axis
    constant = display.binned_histogram(pd.DataFrame({"v": [5.0, 5.0]}), "v", bins=3)
    assert constant["count"].sum() == 2
    assert display.binned_histogram(pd.DataFrame({"v": [np.nan]}), "v").empty


def test_ecdf_points_lie_on_the_ecdf():
    rng = np.random.default_rng(3)
    values = np.round(rng.exponential(100, 100_000), 1)  # many ties
    points = display.ecdf_points(pd.DataFrame({"v": values}), "v", max_points=300)
    assert len(points) <= 300
    expected = np.searchsorted(np.sort(values), points["value"].to_numpy(), side="right") / values.size
    np.testing.assert_allclose(points["p"].to_numpy(), expected)
    assert points["value"].iloc[0] == values.min() and points["value"].iloc[-1] == values.max()
    assert points["p"].iloc[-1] == 1.0
    small = display.ecdf_points(pd.DataFrame({"v": [3.0, 1.0, 2.0]}), "v")
    assert small["value"].tolist() == [1.0, 2.0, 3.0]
    np.testing.assert_allclose(small["p"], [1 / 3, 2 / 3, 1.0])


def test_sample_rows_is_seeded_and_ordered():
    frame = pd.DataFrame({"x": np.arange(100)})
    rows, sampled = display.sample_rows(frame, 10, seed=1)
    again, _ = display.sample_rows(frame, 10, seed=1)
    assert sampled and len(rows) == 10 and rows["x"].is_monotonic_increasing
    pd.testing.assert_frame_equal(rows, again)
    whole, sampled = display.sample_rows(frame, 100)
    assert whole is frame and sampled is False


# ----------------------------------------------------------------------------------------------
# Records


@pytest.fixture
def records_report():
    rows = [
        {"query_id": "1", "system": "s", "answer_claims_supported": [True, False, True, True], "success": True,
         "latency_ms": 100.0},
        {"query_id": "2", "system": "s", "answer_claims_supported": [True], "success": False,
         "failure_stage": "retrieval", "error": "=no docs"},
        {"query_id": "3", "system": "s", "success": True, "latency_ms": 300.0},
    ]
    rows += [{"query_id": str(i), "system": "t", "success": i < 8, "latency_ms": 10.0 * i,
              **({"failure_stage": "generation", "error": "timeout"} if i >= 8 else {})} for i in range(10)]
    records = es.Records.from_rows(rows)
    return records, es.evaluate_records(records)


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval (Wilson 1927), written out from the formula."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_rag_quality_table_by_hand(records_report):
    _, report = records_report
    table = display.rag_quality_table(report).set_index(["system", "metric"])
    faith = table.loc[("s", "faithfulness")]
    assert faith["mean"] == pytest.approx((3 / 4 + 1) / 2)
    assert faith["coverage"] == pytest.approx(2 / 3) and faith["n_defined"] == 2 and faith["n"] == 3
    assert np.isnan(faith["ci_low"])
    success = table.loc[("t", "success")]
    assert success["mean"] == pytest.approx(0.8)
    low, high = wilson(8, 10)
    assert (success["ci_low"], success["ci_high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)  # the conventions' test vector


def test_failed_requests_and_quality_vs_latency(records_report):
    records, report = records_report
    failed = display.failed_requests(records.frame)
    assert failed["query_id"].tolist() == ["2", "8", "9"]
    assert failed.columns.tolist() == ["system", "query_id", "failure_stage", "error"]
    only = display.failed_requests(records.frame, "t", "generation")
    assert only["query_id"].tolist() == ["8", "9"]
    assert display.failed_requests(records.frame, "s", "generation").empty
    both = display.quality_vs_latency(report.per_query, "faithfulness", "latency_ms")
    assert both[["system", "query_id"]].values.tolist() == [["s", "1"]]
    with pytest.raises(es.EvalSuiteError):
        display.quality_vs_latency(report.per_query, "context_recall")


def test_describe_tables():
    run = es.Run.from_dict({"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 2.0}})
    described = display.describe_run(run, "trec")
    assert (described["queries"], described["rows"], described["distinct docs"], described["docs per query (max)"]) == (2, 3, 2, 2)
    qrels = es.Qrels.from_dict({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}})
    described = display.describe_qrels(qrels, "trec", rel_level=2)
    assert described["relevant (grade >= 2)"] == 1 and described["grade levels"] == "0, 1, 2"
    assert described["distinct docs"] == 3


def test_distinct_ids_is_exact_when_keys_collide():
    import pyarrow as pa
    import pyarrow.compute as pc
    from evalsuite.display._tables_ranking import distinct_ids
    from evalsuite.utils.keys import string_keys

    rng = np.random.default_rng(3)
    ids = pa.array([f"d{i}" for i in rng.integers(0, 500, 3000)])
    assert distinct_ids(ids, string_keys(ids)) == pc.count_distinct(ids).as_py()
    # every id given one key: equal neighbours that are different strings must not be counted as one
    assert distinct_ids(ids, np.zeros(len(ids), dtype=np.uint64)) == pc.count_distinct(ids).as_py()
    assert distinct_ids(pa.array([], pa.string()), np.empty(0, dtype=np.uint64)) == 0


# ----------------------------------------------------------------------------------------------
# Figures: built from the tables, light, user text not read as markup.


def test_figures_stay_light_and_escape_text(records_report):
    frame = pd.DataFrame({"system": np.repeat(["<b>x</b>", "y"], 500_000),
                          "latency_ms": np.random.default_rng(0).gamma(2, 300, 1_000_000)})
    binned = display.binned_histogram(frame, "latency_ms", group="system", bins=60)
    points = display.ecdf_points(frame, "latency_ms", group="system", max_points=400)
    hist, ecdf = display.latency_histogram(binned), display.latency_ecdf(points)
    assert sum(len(t.x) for t in hist.data) == 120
    assert sum(len(t.x) for t in ecdf.data) <= 800
    assert [t.name for t in hist.data] == ["&lt;b&gt;x&lt;/b&gt;", "y"]
    stages = pd.DataFrame({"stage": ["retrieval", "generation", "other"], "count": [2, 0, 1], "share": [2 / 3, 0, 1 / 3]})
    pie = display.failure_pie(stages, "t")
    assert list(pie.data[0].labels) == ["retrieval", "other"] and list(pie.data[0].values) == [2, 1]


def test_difference_figures():
    diff = display.per_query_difference(pd.DataFrame({"A": [0.1, 0.5], "B": [0.3, 0.2]}, index=["q1", "q2"]), "A", "B")
    bars = display.difference_bars(diff, "ndcg@10", ("A", "B"))
    assert list(bars.data[0].x) == ["q2", "q1"]
    np.testing.assert_allclose(bars.data[0].y, [-0.3, 0.2])
    scatter = display.system_scatter(diff, "ndcg@10", ("A", "B"))
    np.testing.assert_allclose(scatter.data[0].x, [0.5, 0.1])
    np.testing.assert_allclose(scatter.data[0].y, [0.2, 0.3])


# ----------------------------------------------------------------------------------------------
# Fixes from the new-user trial and the adversarial review.


@pytest.mark.parametrize("names", [("diff", "query_id"), ("outcome", "diff"), ("query_id", "outcome"),
                                   ("A: x", "x"), ("B: y", "A: y")])
def test_per_query_difference_with_systems_named_like_its_columns(names):
    a, b = names
    per_query = pd.DataFrame({a: [0.5, 0.2, 0.4], b: [0.1, 0.2, 0.9]}, index=pd.Index(["q1", "q2", "q3"], name="query_id"))
    diff = display.per_query_difference(per_query, a, b)
    col_a, col_b = display.difference_columns(a, b)
    assert diff.columns.tolist() == ["query_id", col_a, col_b, "diff", "outcome"]
    assert len(set(diff.columns)) == 5
    assert diff["query_id"].tolist() == ["q1", "q2", "q3"]
    np.testing.assert_allclose(diff[col_a].to_numpy(), [0.5, 0.2, 0.4])
    np.testing.assert_allclose(diff[col_b].to_numpy(), [0.1, 0.2, 0.9])
    np.testing.assert_allclose(diff["diff"].to_numpy(), [-0.4, 0.0, 0.5], atol=1e-15)
    scatter = display.system_scatter(diff, "ndcg@10", names)
    np.testing.assert_allclose(scatter.data[0].x, [0.5, 0.2, 0.4])
    np.testing.assert_allclose(scatter.data[0].y, [0.1, 0.2, 0.9])
    bars = display.difference_bars(diff, "ndcg@10", names)
    assert list(bars.data[0].x) == ["q1", "q2", "q3"]


def test_system_scatter_axes_are_the_metric_range_on_both_axes():
    diff = display.per_query_difference(pd.DataFrame({"A": [0.1, 0.5, 0.0], "B": [0.3, 0.2, 1.0]},
                                                   index=["q1", "q2", "q3"]), "A", "B")
    scatter = display.system_scatter(diff, "ndcg@10", ("A", "B"))
    x, y = scatter.layout.xaxis, scatter.layout.yaxis
    assert list(x.range) == list(y.range) == pytest.approx([-0.03, 1.03])
    assert x.constrain == y.constrain == "domain"  # the 1:1 scale shrinks the plot, never the range
    assert y.scaleanchor == "x"
    np.testing.assert_allclose(scatter.data[1].x, [-0.03, 1.03])  # the diagonal spans the axes
    # Values off [0, 1] (a score a records file gives on its own scale): their span, padded.
    wide = display.per_query_difference(pd.DataFrame({"A": [0.0, 4.0], "B": [2.0, 5.0]}, index=["q1", "q2"]), "A", "B")
    assert list(display.system_scatter(wide, "score", ("A", "B")).layout.xaxis.range) == pytest.approx([-0.15, 5.15])


@pytest.mark.parametrize("label", ["Retrieval", " retrieval ", "RETRIEVAL\t", "retrieval"])
def test_failed_requests_match_stages_as_the_reader_does(label):
    rows = [{"query_id": "1", "system": "s", "success": False, "failure_stage": label, "error": "no docs"},
            {"query_id": "2", "system": "s", "success": False, "failure_stage": " Generation ", "error": "timeout"},
            {"query_id": "3", "system": "s", "success": True}]
    records = es.Records.from_rows(rows)
    report = es.evaluate_records(records)
    counts = report.failure_table.set_index("stage")["count"]
    assert counts["retrieval"] == 1 and counts["generation"] == 1  # what the page offers to click
    listed = display.failed_requests(records.frame, "s", "retrieval")
    assert listed["query_id"].tolist() == ["1"]
    assert listed["failure_stage"].tolist() == [label]  # shown as the file has it
    assert display.failed_requests(records.frame, "s", "generation")["query_id"].tolist() == ["2"]
    assert display.failed_requests(records.frame, "s", " Generation")["query_id"].tolist() == ["2"]


def test_judged_table_with_the_whole_list(report):
    whole = es.evaluate(es.Qrels.from_dict(QRELS), es.Run.from_dict(RUN), ["judged@2", "judged"])
    table = display.judged_table({"sys": whole}, [2, None])
    # judged (whole list) = judged docs / docs returned: q1 a, d, c, b -> 3/4; q3 z -> 1; q2 is
    # missing from the run and not averaged.
    assert table.loc["sys", "judged"] == pytest.approx((0.75 + 1) / 2)
    assert table.loc["sys", "queries with an unjudged doc in the ranked list"] == 1
    assert display.metric_name("map", None) == "map" and display.metric_name("map", 100) == "map@100"


def test_rate_by_latency_bin_by_hand():
    # 20 requests of one system, latencies 10..200 ms; success when latency < 100 ms, plus one at 150.
    latency = np.arange(1, 21) * 10.0
    success = ((latency < 100) | (latency == 150)).astype(float)
    success[3] = np.nan  # unknown: left out
    frame = pd.DataFrame({"system": "s", "query_id": [str(i) for i in range(20)], "success": success,
                          "latency_ms": latency})
    table = display.rate_by_latency_bin(frame, "success", "latency_ms", bins=4)
    kept = latency[~np.isnan(success)]
    edges = np.quantile(kept, [0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(table["left"], edges[:-1])
    np.testing.assert_allclose(table["right"], edges[1:])
    # Bins by hand (left-closed, the last closed): which kept latencies fall in each.
    ok = success[~np.isnan(success)]
    expected_n, expected_k = [], []
    for i in range(4):
        inside = (kept >= edges[i]) & ((kept < edges[i + 1]) if i < 3 else (kept <= edges[i + 1]))
        expected_n.append(int(inside.sum()))
        expected_k.append(int(ok[inside].sum()))
    assert table["n"].tolist() == expected_n and sum(expected_n) == 19
    assert table["successes"].tolist() == expected_k
    np.testing.assert_allclose(table["rate"], np.array(expected_k) / np.array(expected_n))
    for row in table.itertuples():
        low, high = wilson(row.successes, row.n)
        assert (row.ci_low, row.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert display.is_binary(frame["success"]) and not display.is_binary([0.0, 0.5, 1.0]) and not display.is_binary([np.nan])
    with pytest.raises(es.EvalSuiteError, match="other than 0 and 1"):
        display.rate_by_latency_bin(frame.assign(success=0.5), "success")
    figure = display.rate_by_latency(table, "success")
    assert list(figure.layout.yaxis.range) == pytest.approx([-0.03, 1.03])
    np.testing.assert_allclose(figure.data[0].y, table["rate"])


def test_quality_latency_scatter_keeps_the_metric_range():
    data = pd.DataFrame({"system": ["s", "s"], "query_id": ["1", "2"], "faithfulness": [0.5, 0.75],
                         "latency_ms": [100.0, 200.0]})
    figure = display.quality_latency_scatter(data, "faithfulness")
    assert list(figure.layout.yaxis.range) == pytest.approx([-0.03, 1.03])


def test_per_query_difference_refuses_a_system_with_two_columns():
    per_query = pd.DataFrame([[0.1, 0.2, 0.5], [0.3, 0.3, 0.5]], columns=["s", "s", "t"], index=["q1", "q2"])
    with pytest.raises(es.EvalSuiteError, match="'s' has 2 columns"):
        display.per_query_difference(per_query, "s", "t")


def test_figure_text_keeps_entities_written_in_names():
    diff = display.per_query_difference(pd.DataFrame({"a&lt;b": [0.1], "B": [0.2]}, index=["q&amp;1"]), "a&lt;b", "B")
    bars = display.difference_bars(diff, "ndcg@10", ("a&lt;b", "B"))
    assert "a&amp;lt;b" in bars.layout.yaxis.title.text  # plotly shows "a&lt;b", not "a<b"


def test_latency_axes_name_the_stage_once_with_the_unit():
    frame = pd.DataFrame({"system": ["a", "a"], "query_id": ["1", "2"], "success": [1.0, 0.0],
                          "latency_ms": [10.0, 20.0], "latency_ttft_ms": [1.0, 2.0]})
    fig = display.quality_latency_scatter(frame, "success", "latency_ms")
    assert fig.layout.xaxis.title.text == "end-to-end latency (ms)"
    rates = display.rate_by_latency_bin(frame, "success", "latency_ttft_ms", bins=1)
    assert display.rate_by_latency(rates, "success", "latency_ttft_ms").layout.xaxis.title.text == \
        "ttft latency (ms), middle of the bin"


def test_latency_left_out_and_successful_only_percentiles_by_hand():
    frame = pd.DataFrame({"system": ["a", "a", "a", "b"], "latency_ms": [100.0, np.nan, 300.0, np.nan],
                          "success": [1.0, 0.0, 0.0, np.nan], "faithfulness": [0.5, np.nan, np.nan, 1.0]})
    left = display.latency_left_out(frame, "latency_ms", "faithfulness").set_index("system")
    assert left.loc["a"].tolist() == [3, 1, 0, 1, 0, 1]  # 300 ms has no faithfulness
    assert left.loc["b"].tolist() == [1, 0, 0, 0, 1, 0]  # success unknown: not counted as failed
    every = display.latency_percentiles(frame, {"latency_ms": "end_to_end"}).set_index("system")
    ok = display.latency_percentiles(frame, {"latency_ms": "end_to_end"}, successful_only=True).set_index("system")
    assert (every.loc["a", "n"], every.loc["a", "p50"]) == (2, np.percentile([100, 300], 50))
    assert (ok.loc["a", "n"], ok.loc["a", "p50"], ok.loc["b", "n"]) == (1, 100.0, 0)


def test_numeric_query_ids_sort_numerically_in_per_query_tables():
    qrels = {str(q): {"a": 1} for q in (1, 2, 10, 100)}
    run = {str(q): {"a": 1.0 if q != 10 else 0.0, "b": 0.5} for q in (1, 2, 10, 100)}
    report = es.evaluate(qrels, run, ["P_1"])
    assert report.query_ids == ["1", "10", "100", "2"]  # the report keeps trec_eval's byte order
    assert display.per_query_table(report)["query_id"].tolist() == ["1", "2", "10", "100"]
    # ties (diff 0 for 1, 2, 100) listed by query id numerically
    other = es.evaluate(qrels, {q: {"a": 1.0, "b": 0.5} for q in run}, ["P_1"])
    per_query = pd.DataFrame({"A": other.per_query["P_1"], "B": report.per_query["P_1"]})
    diff = display.per_query_difference(per_query, "A", "B")
    assert diff["query_id"].tolist() == ["10", "1", "2", "100"]
    assert display.per_query_table(es.evaluate({"q10": {"a": 1}, "q2": {"a": 1}}, {"q2": {"a": 1.0}}, ["P_1"]))[
        "query_id"].tolist() == ["q10", "q2"]  # not all numbers: byte order


def test_pairwise_differences_are_the_reports_pairs_both_ways():
    rng = np.random.default_rng(3)
    ids = [f"q{i}" for i in range(30)]
    runs = {name: pd.DataFrame({"mrr": rng.random(30) + shift}, index=ids)
            for name, shift in (("a", 0.0), ("b", 0.3), ("c", 0.05))}
    report = es.compare_per_query(runs, pairs="all", test="t-test")
    diff, significant = display.pairwise_differences(report, "mrr")
    means = {name: float(frame["mrr"].mean()) for name, frame in runs.items()}
    for row in "abc":
        assert math.isnan(diff.loc[row, row]) and not significant.loc[row, row]
        for col in set("abc") - {row}:
            assert diff.loc[row, col] == pytest.approx(means[row] - means[col], abs=1e-12)
    table = report.table.set_index(["baseline", "system"])
    for (first, second), r in table.iterrows():
        assert significant.loc[first, second] == significant.loc[second, first] == bool(r["significant"])
    assert significant.loc["b", "a"] and not significant.loc["c", "a"]  # 0.3 apart vs 0.05 apart, 30 queries
    with pytest.raises(es.EvalSuiteError):
        display.pairwise_differences(report, "ndcg@10")


def test_rag_quality_names_no_source_for_a_value_no_record_has():
    """A system whose records hold only empty claim lists: faithfulness is computed, but from nothing
    (n_defined 0), so the table names no source ("none", shown as "-") rather than "computed from the
    judgements" next to an empty cell."""
    from evalsuite.records.table import Records

    rows = [{"query_id": "q1", "system": "a", "answer_claims_supported": [True, False]},
            {"query_id": "q1", "system": "b", "answer_claims_supported": []}]
    table = display.rag_quality_table(es.evaluate_records(Records.from_rows(rows)))
    by_system = table.set_index("system")
    assert by_system.loc["a", "source"] == "computed from the judgements" and by_system.loc["a", "mean"] == 0.5
    assert by_system.loc["b", "n_defined"] == 0 and by_system.loc["b", "source"] == "none"


def test_records_description_puts_warnings_and_unused_columns_before_the_long_lists():
    from evalsuite.records.table import Records

    rows = [{"query_id": "q1", "system": "a", "answer": "x", "model": "m1"}]
    row = display.describe_records(Records.from_rows(rows), "jsonl")
    keys = list(row)
    assert keys.index("warnings") < keys.index("fields") and keys.index("kept, not used") < keys.index("systems")
    assert "model" in row["kept, not used"]
