"""AppTest of every dashboard page: with the sample data and without data, uploads of good and bad
files (injected through the session's pending list, as the Data page's uploaders do), query
parameters seeding the view, and the numbers shown equal to evalsuite's for the same input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import evalsuite as es
from evalsuite.compare import compare, compare_per_query

REPO = Path(__file__).resolve().parent.parent
CRANFIELD = REPO / "sample_data" / "cranfield"
RAG = REPO / "sample_data" / "rag"
PAGES = ["data", "overview", "per_query", "rag_quality", "latency", "failures", "compare"]
TITLES = dict(zip(PAGES, ["Data", "Overview", "Per-query", "RAG quality", "Latency", "Failures", "Compare"]))


def open_page(page: str, query: dict | None = None, pending: list | None = None, clear: bool = False) -> AppTest:
    """Start a session on ``page`` (sample data loaded), optionally emptied or with files queued."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    # The URL is there from the session's first run (a bound widget reads it when first drawn).
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if clear:
        at.button(key="data_clear_all").click().run()
    if pending:
        at.session_state["data_pending"] = list(pending)
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def cranfield():
    qrels = es.read_qrels(CRANFIELD / "qrels.trec")
    runs = {"BM25": es.read_run(CRANFIELD / "run_bm25.trec"), "BM25L": es.read_run(CRANFIELD / "run_bm25l.trec")}
    return qrels, runs


@pytest.fixture(scope="module")
def records_report():
    records = es.concat_records([es.read_records(RAG / "ragtruth_qa.jsonl"), es.read_records(RAG / "llmperf_requests.jsonl")])
    return records, es.evaluate_records(records)


def texts(elements) -> list[str]:
    """Element bodies as a reader sees them (markdown backslash escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


# ----------------------------------------------------------------------------------------------
# Every page, with the sample data and without data.


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_with_sample_data(page):
    at = open_page(page)
    assert texts(at.title) == [TITLES[page]]
    assert not at.error, texts(at.error)


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_data(page):
    at = open_page(page, clear=True)
    assert texts(at.title) == [TITLES[page]]
    assert not at.error, texts(at.error)
    if page != "data":
        assert at.info, "an empty page says what is missing"
        assert not at.dataframe


def test_clear_then_load_sample_data_again():
    at = open_page("data", clear=True)
    assert texts(at.subheader)[1:] == ["Runs (0)", "Qrels (0)", "Per-request records (0)"]
    at.button(key="data_load_samples").click().run()
    assert texts(at.subheader)[1:] == ["Runs (2)", "Qrels (1)", "Per-request records (2)"]


# ----------------------------------------------------------------------------------------------
# The numbers shown are evalsuite's.


def test_data_page_describes_what_was_read(cranfield):
    qrels, runs = cranfield
    at = open_page("data")
    table = at.dataframe[0].value.set_index("system")
    for system, run in runs.items():
        assert table.loc[system, "queries"] == run.n_queries == 225
        assert table.loc[system, "rows"] == len(run)
        assert table.loc[system, "format"] == "trec"
    qrels_table = at.dataframe[1].value
    assert qrels_table.loc[0, "judgements"] == len(qrels)
    assert qrels_table.loc[0, "relevant (grade >= 1)"] == int((qrels.grades >= 1).sum())
    records_table = at.dataframe[2].value
    assert records_table["requests"].tolist() == [817, 2845]


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


def test_per_query_numbers_equal_evaluate(cranfield):
    qrels, runs = cranfield
    at = open_page("per_query", query={"per_query_system": "BM25L", "per_query_metric": "recall",
                                       "per_query_k": "20", "per_query_query": "17"})
    table = at.dataframe[0].value.set_index("query_id")
    expected = es.evaluate(qrels, runs["BM25L"], ["recall@20"]).per_query["recall@20"]
    pd.testing.assert_series_equal(table["recall@20"].sort_index(), expected.sort_index(), check_names=False,
                                   check_index_type=False)
    ranked = at.dataframe[1].value
    reference = runs["BM25L"].query("17")
    assert ranked["doc_id"].tolist() == reference["doc_id"].iloc[: len(ranked)].tolist()
    judgements = qrels.query("17")
    for doc, label in zip(ranked["doc_id"], ranked["label"]):
        grade = judgements.get(doc)
        assert label == ("unjudged" if grade is None else
                         f"relevant ({grade:g})" if grade >= 1 else f"not relevant ({grade:g})")


def test_per_query_records_view_shows_the_request():
    at = open_page("per_query", query={"per_query_source": "per-request records",
                                       "per_query_record_system": "gpt-4-0613", "per_query_query": "14300"})
    row = next(json.loads(line) for line in (RAG / "ragtruth_qa.jsonl").open()
               if '"14300"' in line and '"gpt-4-0613"' in line)
    shown = texts(at.text)
    assert row["question"] in shown and row["answer"] in shown
    contexts = next(df.value for df in at.dataframe if "context" in df.value.columns)
    assert contexts["context"].tolist() == row["contexts"]


def test_rag_quality_numbers_equal_evaluate_records(records_report):
    _, report = records_report
    at = open_page("rag_quality")
    summary = at.dataframe[0].value
    for system in summary.index:
        assert summary.loc[system, "faithfulness"] == pytest.approx(report.means[system]["faithfulness"], abs=1e-12)
    success = at.dataframe[1].value.set_index("system")
    for system, score in report.task_success.items():
        if system in success.index:
            assert success.loc[system, "success rate"] == pytest.approx(float(score), abs=1e-12)
            assert success.loc[system, "ci_low"] == pytest.approx(score.params["ci_low"], abs=1e-12)
            assert success.loc[system, "ci_high"] == pytest.approx(score.params["ci_high"], abs=1e-12)
    # Reference: the success share straight from the file.
    rows = [json.loads(line) for line in (RAG / "ragtruth_qa.jsonl").open()]
    gpt4 = [r["success"] for r in rows if r["system"] == "gpt-4-0613"]
    assert success.loc["gpt-4-0613", "success rate"] == pytest.approx(np.mean(gpt4), abs=1e-12)


def test_latency_percentiles_equal_numpy(records_report):
    _, report = records_report
    at = open_page("latency", query={"latency_stage": "ttft"})
    table = at.dataframe[0].value
    expected = report.latency_table[report.latency_table["n"] > 0].reset_index(drop=True)
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected, check_dtype=False)
    rows = [json.loads(line) for line in (RAG / "llmperf_requests.jsonl").open()]
    values = [r["latency_ms"] for r in rows if r["system"] == "anyscale_13b" and r.get("latency_ms") is not None]
    mine = table[(table["system"] == "anyscale_13b") & (table["stage"] == "end_to_end")].iloc[0]
    assert mine["p50"] == pytest.approx(np.percentile(values, 50), abs=1e-9)
    assert mine["p99"] == pytest.approx(np.percentile(values, 99), abs=1e-9)
    assert at.selectbox(key="latency_stage").value == "ttft"


def test_failures_counts_equal_the_file():
    rows = [json.loads(line) for line in (RAG / "llmperf_requests.jsonl").open()]
    failed = [r for r in rows if r["system"] == "bedrock_13b" and r.get("failure_stage")]
    at = open_page("failures", query={"failures_system": "bedrock_13b"})
    summary = at.dataframe[0].value.set_index("system")
    assert summary.loc["bedrock_13b", "failed"] == len(failed)
    stages = at.dataframe[1].value.set_index("stage")
    for stage, count in pd.Series([r["failure_stage"] for r in failed]).value_counts().items():
        assert stages.loc[stage, "count"] == count
    listed = at.dataframe[2].value
    assert len(listed) == len(failed)
    assert set(listed["query_id"]) == {r["query_id"] for r in failed}


def test_failures_stage_filter_lists_only_that_stage():
    rows = [json.loads(line) for line in (RAG / "llmperf_requests.jsonl").open()]
    failed = [r for r in rows if r["system"] == "bedrock_13b" and r.get("failure_stage")]
    stage = pd.Series([r["failure_stage"] for r in failed]).value_counts().index[0]
    at = open_page("failures", query={"failures_system": "bedrock_13b", "failures_stage": stage})
    listed = at.dataframe[2].value
    assert set(listed["failure_stage"]) == {stage}
    assert len(listed) == sum(r["failure_stage"] == stage for r in failed)


def test_compare_numbers_equal_compare(cranfield):
    qrels, runs = cranfield
    at = open_page("compare", query={"compare_a": "BM25L", "compare_b": "BM25", "compare_test": "t-test",
                                     "compare_metrics": ["ndcg@10", "recall@100"], "compare_metric": "recall@100"})
    shown = at.dataframe[0].value
    expected = compare(qrels, {"BM25L": runs["BM25L"], "BM25": runs["BM25"]}, metrics=["ndcg@10", "recall@100"],
                       test="t-test", correction="holm", alpha=0.05, baseline="BM25L").table
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)
    assert set(shown["baseline"]) == {"BM25L"}
    diff = at.dataframe[1].value
    per_query = es.evaluate(qrels, runs["BM25"], ["recall@100"]).per_query["recall@100"] - \
        es.evaluate(qrels, runs["BM25L"], ["recall@100"]).per_query["recall@100"]
    np.testing.assert_allclose(diff.set_index("query_id")["diff"].sort_index().to_numpy(),
                               per_query.sort_index().to_numpy(), atol=1e-12)
    assert diff["diff"].is_monotonic_increasing


def test_compare_regressions_only(cranfield):
    at = open_page("compare", query={"compare_regressions": "true"})
    diff = at.dataframe[1].value
    assert len(diff) and (diff["diff"] < 0).all()


def test_compare_records_systems(records_report):
    _, report = records_report
    at = open_page("compare", query={"compare_source": "per-request records", "compare_a": "gpt-4-0613",
                                     "compare_b": "llama-2-7b-chat"})
    assert not at.error, texts(at.error)
    table = at.dataframe[0].value
    assert table["metric"].tolist() == ["faithfulness", "success"]
    per_query = {n: report.per_query[report.per_query["system"] == n].set_index("query_id")[["faithfulness", "success"]]
                 for n in ("gpt-4-0613", "llama-2-7b-chat")}
    expected = compare_per_query(per_query, metrics=["faithfulness", "success"], baseline="gpt-4-0613").table
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)


# ----------------------------------------------------------------------------------------------
# Uploads: good files, bad files, files that do not fit.


def test_upload_of_a_good_run_adds_a_system(cranfield):
    qrels, _ = cranfield
    data = b"".join(f"{q} Q0 {d} {r} {10 - r} mine\n".encode() for q in ("1", "2", "3") for r, d in
                    enumerate(("184", "29", "31", "12"), start=1))
    at = open_page("overview", pending=[("run", "mine.trec", data)])
    shown = at.dataframe[0].value
    assert list(shown.index) == ["BM25", "BM25L", "mine"]
    expected = es.evaluate(qrels, es.read_run(data), ["ndcg@10"]).means["ndcg@10"]
    assert shown.loc["mine", "ndcg@10"] == pytest.approx(expected, abs=1e-12)
    coverage = at.dataframe[1].value
    assert coverage.loc["mine", "answered"] == 3
    assert coverage.loc["mine", "scored 0: missing from run"] == 222


def test_upload_of_a_bad_file_is_a_plain_message_and_keeps_the_data():
    pending = [("run", "broken.trec", b"1 Q0 184 1 12.5 tag\n1 Q0 29 2 oops tag\n"),
               ("qrels", "half.qrels", b"1 0 184\n"),
               ("records", "bad.jsonl", b'{"query_id": "1", "latency_ms": -3}\n')]
    at = open_page("data", pending=pending)
    errors = texts(at.error)
    assert any("broken.trec, line 2, field 'score'" in e for e in errors), errors
    assert any(e.startswith("half.qrels") for e in errors), errors
    assert any("bad.jsonl" in e and "latency_ms" in e for e in errors), errors
    assert all("Traceback" not in e for e in errors)
    assert texts(at.subheader)[1:] == ["Runs (2)", "Qrels (1)", "Per-request records (2)"]
    at.switch_page("pages/overview.py").run()
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]


def test_user_text_in_messages_is_not_markdown():
    name = "![x](http://example.invalid/p.png) **bold**.trec"
    at = open_page("data", pending=[("run", name, b"1 Q0 d 1 oops t\n")])
    raw = [e.value for e in at.error]
    assert len(raw) == 1 and "![x](" not in raw[0] and "**bold**" not in raw[0]
    assert texts(at.error)[0].startswith(name)


def test_run_sharing_no_query_with_the_qrels_is_reported_and_others_still_shown():
    data = b"q-1 Q0 d1 1 3.0 other\nq-2 Q0 d2 1 2.0 other\n"
    at = open_page("overview", pending=[("run", "other.trec", data)])
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith("other (other.trec)") and "no query to evaluate" in errors[0]
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]


def test_same_bytes_twice_are_stored_once():
    data = (CRANFIELD / "run_bm25.trec").read_bytes()
    at = open_page("data", pending=[("run", "again.trec", data)])
    assert texts(at.subheader)[1] == "Runs (2)"
    assert any("already loaded" in s for s in texts(at.success))


@pytest.mark.parametrize("page", ["per_query", "rag_quality", "latency", "failures", "compare"])
def test_records_without_any_usable_field(page):
    data = b'{"query_id": "1", "system": "bare", "question": "q?"}\n{"query_id": "2", "system": "bare", "question": "r?"}\n'
    query = {"per_query_source": "per-request records", "compare_source": "per-request records"}
    at = open_page(page, clear=True, pending=[("records", "bare.jsonl", data)], query=query)
    assert texts(at.title) == [TITLES[page]]
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith("bare.jsonl") and "no field any metric can use" in errors[0]


@pytest.mark.parametrize("page,expected", [("rag_quality", "no field a quality metric needs"),
                                           ("failures", "no failure_stage or success field")])
def test_records_without_the_fields_a_page_needs(page, expected):
    data = b'{"query_id": "1", "system": "timed", "latency_ms": 12.5}\n{"query_id": "2", "system": "timed", "latency_ms": 20}\n'
    at = open_page(page, clear=True, pending=[("records", "timed.jsonl", data)])
    assert any(expected in w for w in texts(at.warning)), texts(at.warning)
    assert not at.error


def test_records_without_latency_on_the_latency_page():
    data = b'{"query_id": "1", "system": "s", "success": true}\n{"query_id": "2", "system": "s", "success": false}\n'
    at = open_page("latency", clear=True, pending=[("records", "ok.jsonl", data)])
    assert any("no latency field" in w for w in texts(at.warning)), texts(at.warning)
    assert not at.error


def test_records_file_with_only_latency_feeds_latency_page():
    rows = [{"query_id": str(i), "system": "fast", "latency_ms": float(i)} for i in range(1, 101)]
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at = open_page("latency", clear=True, pending=[("records", "fast.jsonl", data)])
    table = at.dataframe[0].value
    assert table.loc[0, "p50"] == pytest.approx(np.percentile(np.arange(1, 101), 50))
    assert table.loc[0, "p95"] == pytest.approx(np.percentile(np.arange(1, 101), 95))


def test_renaming_a_system():
    at = open_page("data")
    key = next(k for k in at.session_state["data_files"] if at.session_state["data_files"][k].system == "BM25")
    digest = key.split(":")[1]
    at.text_input(key=f"data_name_{digest[:16]}").input("Okapi BM25").run()
    assert at.dataframe[0].value["system"].tolist() == ["Okapi BM25", "BM25L"]
    at.switch_page("pages/overview.py").run()
    assert list(at.dataframe[0].value.index) == ["Okapi BM25", "BM25L"]


# ----------------------------------------------------------------------------------------------
# Query parameters seed the view; the sidebar's relevance level applies.


def test_query_parameters_seed_widgets():
    at = open_page("per_query", query={"per_query_system": "BM25L", "per_query_metric": "map", "per_query_k": "100"})
    assert at.selectbox(key="per_query_system").value == "BM25L"
    assert at.selectbox(key="per_query_metric").value == "map"
    assert at.selectbox(key="per_query_k").value == 100
    assert "map@100" in at.dataframe[0].value.columns


def test_invalid_query_parameters_are_ignored():
    at = open_page("compare", query={"compare_a": "no-such-system", "compare_metric": "<script>"})
    assert at.selectbox(key="compare_a").value == "BM25"
    assert not at.error


def test_relevance_level_from_the_url(cranfield):
    qrels, runs = cranfield
    at = open_page("overview", query={"rel_level": "3", "overview_metrics": ["precision"], "overview_k": ["10"]})
    expected = es.evaluate(qrels, runs["BM25"], ["precision@10"], rel_level=3).means["precision@10"]
    assert at.dataframe[0].value.loc["BM25", "precision@10"] == pytest.approx(expected, abs=1e-12)
