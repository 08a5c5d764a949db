"""AppTest of every dashboard page: with the sample data and without data, uploads of good and bad
files (injected through the session's pending list, as the Data page's uploaders do), query
parameters seeding the view, and the numbers shown equal to evalsuite's for the same input."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sqlite3
import time
import unicodedata
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import AlertBase, HeadingBase, Markdown, Toast

import evalsuite as es
from evalsuite._compare import compare, compare_per_query
from dashboard.text import WORD_JOINER, plain
from evalsuite.storage import DatasetRef, check_workspace_id, new_workspace_id, open_store

REPO = Path(__file__).resolve().parent.parent
CRANFIELD = REPO / "sample_data" / "cranfield"
RAG = REPO / "sample_data" / "rag"
PAGES = ["data", "overview", "per_query", "rag_quality", "latency", "failures", "compare"]
TITLES = dict(zip(PAGES, ["Data", "Overview", "Per-query", "RAG quality", "Latency", "Failures", "Compare"]))


def open_page(page: str, query: dict | None = None, pending: list | None = None, clear: bool = False,
              url: str | None = None, secrets: dict | None = None) -> AppTest:
    """Start a session on ``page`` (sample data loaded), optionally emptied or with files queued;
    ``url``: the page's address as a browser would report it (``st.context.url``); ``secrets``:
    the app's Streamlit secrets."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    if url is not None:
        at.context["url"] = url
    for key, value in (secrets or {}).items():
        at.secrets[key] = value
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


@pytest.fixture(autouse=True)
def store_dir(tmp_path, monkeypatch):
    """Every test's workspace store: SQLite in its own folder (never ~/.evalsuite), no other setting."""
    for name in ("EVALSUITE_STORE_URL", "EVALSUITE_STORE_SCHEMA", "EVALSUITE_MAX_DATASET_MB",
                 "EVALSUITE_MAX_WORKSPACE_MB", "EVALSUITE_DEFAULT_EXPIRY_DAYS"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "store"
    monkeypatch.setenv("EVALSUITE_DATA_DIR", str(path))
    return path


@pytest.fixture(scope="module")
def cranfield():
    qrels = es.read_qrels(CRANFIELD / "qrels.trec")
    runs = {"BM25": es.read_run(CRANFIELD / "run_bm25.trec"), "BM25L": es.read_run(CRANFIELD / "run_bm25l.trec")}
    return qrels, runs


@pytest.fixture(scope="module")
def records_report():
    records = es.concat_records([es.read_records(RAG / "ragtruth_qa.jsonl"), es.read_records(RAG / "llmperf_requests.jsonl")])
    return records, es.evaluate_records(records)


def unescape(body: str) -> str:
    """Markdown text with its backslash escapes resolved, as remark parses it."""
    return re.sub(r"\\(.)", r"\1", body)


def texts(elements) -> list[str]:
    """Element bodies as a reader sees them (markdown backslash escapes and the invisible word
    joiners of :func:`dashboard.text.plain` removed)."""
    return [unescape(e.value).replace(WORD_JOINER, "") for e in elements]


# remark-gfm's literal autolinks (mdast-util-gfm-autolink-literal, in Streamlit's markdown bundle):
# these patterns run on the text after escapes are resolved, and a match becomes a link when it
# starts the text or follows whitespace, punctuation or a symbol (and for an e-mail, not '/').
_URL_LITERAL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
_EMAIL_LITERAL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)


def autolinks(body: str) -> list[str]:
    """What Streamlit's markdown would turn into a link in this markdown ``body``: every match
    of remark-gfm's literal-autolink patterns at an allowed start, after escapes are resolved
    (stricter than remark, which also drops a match for an invalid domain)."""
    text = unescape(body)
    found = []
    for pattern, email in ((_URL_LITERAL, False), (_EMAIL_LITERAL, True)):
        for i in range(len(text)):
            before = text[i - 1] if i else " "
            if email and before == "/":
                continue
            if before.isspace() or unicodedata.category(before)[0] in "PS":
                match = pattern.match(text, i)
                if match:
                    found.append(match.group())
    return found


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(element type, body) of everything on the page that Streamlit renders as markdown:
    markdown, captions, headings, alert and toast bodies, and the labels and help texts of
    widgets, expanders, tabs, statuses and metrics."""
    found = []

    def walk(node) -> None:
        if isinstance(node, (Markdown, HeadingBase, AlertBase, Toast)):
            found.append((node.type, node.value))
        for attribute in ("label", "help"):
            value = getattr(node, attribute, None)
            if isinstance(value, str) and value:
                found.append((f"{node.type}.{attribute}", value))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


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
    assert texts(at.subheader)[1:4] == ["Runs (0)", "Qrels (0)", "Per-request records (0)"]
    at.button(key="data_load_samples").click().run()
    assert texts(at.subheader)[1:4] == ["Runs (2)", "Qrels (1)", "Per-request records (2)"]


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


LINK_NAMES = ["https://evil.example/a", "see www.evil.example or mail me@evil.example, HTTP://EVIL.EXAMPLE/b"]


@pytest.mark.parametrize("text", [*LINK_NAMES, "(https://x.example)", "x:https://y.example", "WwW.x.example",
                                  "mailto:a.b+c@x.example", "![x](http://example.invalid/p.png) **bold**"])
def test_plain_text_in_markdown_forms_no_link_and_reads_as_written(text):
    assert autolinks(text), "the pattern port finds the link in the raw text"
    assert autolinks(plain(text)) == []
    assert unescape(plain(text)).replace(WORD_JOINER, "") == text


def _links_in_markdown(at: AppTest) -> list[tuple[str, str, list[str]]]:
    return [(kind, body, autolinks(body)) for kind, body in markdown_texts(at) if autolinks(body)]


def test_system_names_with_urls_are_no_links_on_the_compare_page():
    at = open_page("data")
    for old, new in zip(("BM25", "BM25L"), LINK_NAMES):
        key = next(k for k, f in at.session_state["data_files"].items() if f.system == old)
        at.text_input(key=f"data_name_{key.split(':')[1][:16]}").input(new).run()
    assert _links_in_markdown(at) == []  # the Data page shows the names too
    at.switch_page("pages/compare.py").run()
    assert not at.exception and not at.error, texts(at.error)
    a, b = LINK_NAMES
    assert at.selectbox(key="compare_a").value == a and at.selectbox(key="compare_b").value == b
    # The names are on the page, as written, in markdown (heading, toggle label, caption) ...
    assert texts(at.subheader)[0] == f"{b} against {a}"
    assert b in unescape(at.toggle(key="compare_regressions").label).replace(WORD_JOINER, "")
    assert any(b in caption for caption in texts(at.caption))
    # ... and no markdown on the page holds a link-able URL or address.
    assert _links_in_markdown(at) == []
    at.toggle(key="compare_regressions").set_value(True).run()
    assert _links_in_markdown(at) == []
    assert any(t.value.startswith(f"{a}: top") for t in at.text)  # plain text keeps the name as it is


def test_record_system_names_with_urls_are_no_links_on_the_compare_page():
    names = ["https://evil.example/r", "www.evil.example"]
    data = "".join(json.dumps({"query_id": str(q), "system": name, "success": (q + i) % 2 == 0,
                               "latency_ms": 10.0 + q, "failure_stage": None if (q + i) % 2 == 0 else "generation"})
                   + "\n" for i, name in enumerate(names) for q in range(1, 7)).encode()
    at = open_page("compare", clear=True, pending=[("records", "https-evil.jsonl", data)],
                   query={"compare_source": "per-request records"})
    assert not at.exception and not at.error, texts(at.error)
    assert texts(at.subheader)[0] == f"{names[1]} against {names[0]}"
    assert _links_in_markdown(at) == []


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
    # judged@k over the 3 answered queries, not the 222 the run lacks (they have no docs at all).
    per_query = es.evaluate(qrels, es.read_run(data), ["judged@10"]).per_query["judged@10"]
    judged = at.dataframe[2].value
    assert judged.loc["mine", "queries answered"] == 3
    assert judged.loc["mine", "judged@10"] == pytest.approx(per_query.loc[["1", "2", "3"]].mean(), abs=1e-12)


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
    assert texts(at.subheader)[1:4] == ["Runs (2)", "Qrels (1)", "Per-request records (2)"]
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


@pytest.mark.parametrize("value", ["inf", "nan", "-3", "2.5", "1e400", "abc", "1000"])
def test_a_rel_level_the_sidebar_cannot_take_falls_back_to_1(cranfield, value):
    qrels, runs = cranfield
    at = open_page("overview", query={"rel_level": value, "overview_metrics": ["precision"], "overview_k": ["10"]})
    assert at.number_input(key="rel_level").value == 1
    expected = es.evaluate(qrels, runs["BM25"], ["precision@10"], rel_level=1).means["precision@10"]
    assert at.dataframe[0].value.loc["BM25", "precision@10"] == pytest.approx(expected, abs=1e-12)
    assert "rel_level" not in at.query_params  # the address bar no longer shows the bad value


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


def test_two_qrels_files_of_the_same_name_are_told_apart(cranfield):
    qrels, runs = cranfield
    original = (CRANFIELD / "qrels.trec").read_bytes()
    # Same file name, other judgements: only grade 4 docs kept.
    other = b"".join(line + b"\n" for line in original.splitlines() if line.split()[3] == b"4")
    at = open_page("overview", pending=[("qrels", "qrels.trec", other)],
                   query={"overview_metrics": ["ndcg"], "overview_k": ["10"]})
    # The upload is the active qrels now, and the sidebar says which (name and SHA-256 start).
    expected = es.evaluate(es.read_qrels(other), runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)
    picker = at.sidebar.selectbox(key="qrels")
    assert picker.value == f"qrels.trec (sha256 {sha256(other)[:12]})"
    labels = picker.options
    assert len(labels) == 2 and len(set(labels)) == 2
    assert all(label.startswith("qrels.trec (sha256 ") for label in labels)
    # Choosing the sample qrels again gives the sample's numbers.
    picker.set_value(f"qrels.trec (sha256 {sha256(original)[:12]})").run()
    assert not at.exception
    expected = es.evaluate(qrels, runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def _grade4_qrels() -> bytes:
    """Other judgements for the Cranfield queries: only the grade-4 lines of the sample qrels."""
    lines = (CRANFIELD / "qrels.trec").read_bytes().splitlines()
    return b"".join(line + b"\n" for line in lines if line.split()[3] == b"4")


def _label(name: str, data: bytes) -> str:
    return f"{name} (sha256 {sha256(data)[:12]})"


def test_an_uploaded_qrels_becomes_active_over_the_qrels_in_the_url(cranfield):
    # An address bar from an earlier session names the sample qrels; a qrels uploaded now wins.
    qrels, runs = cranfield
    sample = (CRANFIELD / "qrels.trec").read_bytes()
    other = _grade4_qrels()
    at = open_page("overview", query={"qrels": _label("qrels.trec", sample), "overview_metrics": ["ndcg"],
                                      "overview_k": ["10"]})
    at.session_state["data_pending"] = [("qrels", "g4.trec", other)]
    at.switch_page("pages/data.py").run()
    at.switch_page("pages/overview.py").run()
    assert not at.exception
    assert at.sidebar.selectbox(key="qrels").value == _label("g4.trec", other)
    expected = es.evaluate(es.read_qrels(other), runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_the_same_qrels_bytes_uploaded_again_become_active_again(cranfield):
    qrels, runs = cranfield
    other = _grade4_qrels()
    at = open_page("overview", pending=[("qrels", "g4.trec", other)], query={"overview_metrics": ["ndcg"],
                                                                          "overview_k": ["10"]})
    sample_label = _label("qrels.trec", (CRANFIELD / "qrels.trec").read_bytes())
    at.sidebar.selectbox(key="qrels").set_value(sample_label).run()
    assert at.sidebar.selectbox(key="qrels").value == sample_label
    # The g4 bytes again, under another name: stored once, and active again as the notice says.
    at.session_state["data_pending"] = [("qrels", "copy_of_g4.trec", other)]
    at.switch_page("pages/data.py").run()
    assert any("g4.trec (sha256" in t and "is now the active qrels" in t for t in texts(at.info) + texts(at.success)
               + [c.value for c in at.caption] + [m.value for m in at.markdown] + [x.value for x in at.text])
    at.switch_page("pages/overview.py").run()
    assert at.sidebar.selectbox(key="qrels").value == _label("g4.trec", other)
    expected = es.evaluate(es.read_qrels(other), runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_a_share_link_restores_the_chosen_qrels(cranfield, store_dir):
    qrels, runs = cranfield
    other = _grade4_qrels()
    at = open_page("overview", pending=[("qrels", "other.trec", other)], query={"overview_metrics": ["ndcg"],
                                                                             "overview_k": ["10"]})
    sample_label = _label("qrels.trec", (CRANFIELD / "qrels.trec").read_bytes())
    at.sidebar.selectbox(key="qrels").set_value(sample_label).run()
    link, _ = save_from(at, "share", "two qrels")
    query = parse_qs(urlsplit(link).query)
    assert query["qrels"] == [sample_label]
    reopened = open_page("overview", query={k: v if len(v) > 1 else v[0] for k, v in query.items()})
    assert reopened.sidebar.selectbox(key="qrels").value == sample_label
    expected = es.evaluate(qrels, runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert reopened.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("named_by", ["digest", "name"])
def test_links_of_earlier_versions_name_the_qrels_by_digest_or_file_name(cranfield, store_dir, named_by):
    qrels, runs = cranfield
    sample = (CRANFIELD / "qrels.trec").read_bytes()
    other = _grade4_qrels()
    saved, _ = saved_workspace(store_dir, files=[("qrels", "qrels.trec", sample, None), ("qrels", "g4.trec", other, None),
                                                 ("run", "run_bm25.trec", (CRANFIELD / "run_bm25.trec").read_bytes(),
                                                  "BM25")])
    asked = sha256(sample) if named_by == "digest" else "qrels.trec"
    at = open_page("overview", query={"ws": saved.workspace_id, "qrels": asked, "overview_metrics": ["ndcg"],
                                      "overview_k": ["10"]})
    assert at.sidebar.selectbox(key="qrels").value == _label("qrels.trec", sample)
    expected = es.evaluate(qrels, runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


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


def test_format_of_a_gzip_upload_with_several_members():
    from dashboard import session

    jsonl_run = b"".join(json.dumps({"query_id": "1", "doc_id": d, "score": s}).encode() + b"\n"
                         for d, s in (("184", 3.0), ("29", 2.0), ("31", 1.0)))
    multi = gzip.compress(b"") + gzip.compress(jsonl_run)
    assert len(es.read_run(multi)) == 3  # the reader reads every member
    assert session.format_used("run", "run.gz", multi) == "jsonl"
    records = gzip.compress(b"") + gzip.compress(b'{"query_id": "1", "latency_ms": 5}\n{"query_id": "2", "latency_ms": 6}\n')
    assert session.format_used("records", "records.gz", records) == "jsonl"


# ----------------------------------------------------------------------------------------------
# Save and share: workspaces in the store, links with ws=<id>, deleting, size caps.

SAMPLE_FILES = [("qrels", CRANFIELD / "qrels.trec", None), ("run", CRANFIELD / "run_bm25.trec", "BM25"),
                ("run", CRANFIELD / "run_bm25l.trec", "BM25L"), ("records", RAG / "ragtruth_qa.jsonl", None),
                ("records", RAG / "llmperf_requests.jsonl", None)]
MINE = b"".join(f"{q} Q0 {d} {r} {10 - r} mine\n".encode() for q in ("1", "2", "3", "4") for r, d in
                enumerate(("184", "29", "31", "12", "51"), start=1))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_from(at: AppTest, prefix: str, name: str, days: int | None = None) -> tuple[str, str]:
    """Fill in and submit a save form (``prefix`` "share": the sidebar's, "data_share": the Data
    page's); return the (share link, owner token) shown."""
    at.text_input(key=f"{prefix}_name").input(name)
    if days is not None:
        at.number_input(key=f"{prefix}_days").set_value(days)
    at.button(key=f"{prefix}_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, texts(at.error)
    codes = [c.value for c in at.code]
    assert len(codes) == 2, codes
    return codes[0], codes[1]


def workspace_table(at: AppTest) -> pd.DataFrame:
    """The Data page's list of the session's workspaces."""
    return next(df.value for df in at.dataframe if "status" in df.value.columns)


def saved_workspace(store_dir, files=None, clock=None, expires_in_days=None):
    """A workspace saved straight into the store (not through the app): (SavedWorkspace, files)."""
    files = files or [("qrels", "qrels.trec", (CRANFIELD / "qrels.trec").read_bytes(), None),
                      ("run", "mine.trec", MINE, "Mine"),
                      ("run", "run_bm25.trec", (CRANFIELD / "run_bm25.trec").read_bytes(), "BM25")]
    options = {"clock": clock} if clock else {}
    with open_store(data_dir=store_dir, **options) as store:
        refs = [DatasetRef(store.put_dataset(data, kind=kind, filename=name), kind, name, system=system, format="trec")
                for kind, name, data, system in files]
        return store.save_workspace("from the test", refs, expires_in_days=expires_in_days), files


def test_save_and_share_from_the_sidebar_stores_every_file_and_the_view(store_dir):
    at = open_page("compare", query={"compare_a": "BM25L", "compare_b": "BM25", "compare_test": "t-test"},
                   url="http://evalsuite.test:8501/compare")
    link, token = save_from(at, "share", "Cranfield <b>bold</b> [x](http://evil.test)", days=30)
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "evalsuite.test:8501", "/compare")
    query = parse_qs(parts.query)
    # Every widget of the view bound to the URL, with its value; the id; nothing else.
    assert query["compare_a"] == ["BM25L"] and query["compare_b"] == ["BM25"] and query["compare_test"] == ["t-test"]
    assert query["compare_metrics"] == ["ndcg@10", "map@100", "mrr@10", "recall@100"]
    assert query["compare_source"] == ["ranking runs"] and query["compare_alpha"] == ["0.05"]
    assert query["compare_regressions"] == ["false"] and query["rel_level"] == ["1"]
    assert query["compare_metric"] == ["ndcg@10"] and len(query["compare_query"]) == 1
    assert set(query) == {"ws", "rel_level", "compare_source", "compare_a", "compare_b", "compare_metrics",
                          "compare_test", "compare_correction", "compare_alpha", "compare_metric",
                          "compare_regressions", "compare_query"}
    workspace_id = check_workspace_id(query["ws"][0])
    assert token not in link and len(token) >= 40
    assert at.query_params["ws"] == workspace_id  # the address bar reopens it too
    # The name is shown as text, never as markup.
    success = at.success[0].value
    assert "<b>" not in success and "](http" not in success
    assert texts(at.success)[0] == "Saved workspace Cranfield <b>bold</b> [x](http://evil.test)"

    with open_store(data_dir=store_dir) as store:
        workspace = store.load_workspace(workspace_id)
        assert workspace.name == "Cranfield <b>bold</b> [x](http://evil.test)"
        assert [(r.kind, r.filename, r.digest, r.system) for r in workspace.datasets] == [
            (kind, path.name, sha256(path.read_bytes()), system) for kind, path, system in SAMPLE_FILES]
        for ref, (_, path, _) in zip(workspace.datasets, SAMPLE_FILES):
            assert store.get_dataset(ref.digest) == path.read_bytes()
        assert workspace.expires_at - workspace.created_at == timedelta(days=30)
        store.delete_workspace(workspace_id, token)  # the token shown is the owner's
        assert store.list_workspaces([workspace_id])[0].status == "deleted"


def test_done_hides_the_owner_token():
    at = open_page("overview")
    save_from(at, "share", "once")
    at.button(key="share_result_done").click().run()
    assert not at.code and not at.success


def test_link_opens_the_workspace_in_place_of_the_sample_data_with_the_view(store_dir):
    saved, files = saved_workspace(store_dir)
    at = open_page("overview", query={"ws": saved.workspace_id, "overview_metrics": ["ndcg", "map"],
                                      "overview_k": ["5"]})
    assert not at.error, texts(at.error)
    shown = at.dataframe[0].value
    assert list(shown.index) == ["Mine", "BM25"]  # the workspace's runs, in its order; no sample run
    qrels = es.read_qrels(files[0][2])
    for system, data in (("Mine", MINE), ("BM25", files[2][2])):
        expected = es.evaluate(qrels, es.read_run(data), ["ndcg@5", "map@5"]).means
        assert shown.loc[system, "ndcg@5"] == pytest.approx(expected["ndcg@5"], abs=1e-12)
        assert shown.loc[system, "map@5"] == pytest.approx(expected["map@5"], abs=1e-12)
    assert at.multiselect(key="overview_metrics").value == ["ndcg", "map"]
    assert at.multiselect(key="overview_k").value == [5]
    assert at.query_params["ws"] == saved.workspace_id
    assert "Workspace: from the test" in texts(at.sidebar.caption)

    at.switch_page("pages/rag_quality.py").run()
    assert at.info and "No per-request records" in at.info[0].value  # the samples' records are gone
    assert at.query_params["ws"] == saved.workspace_id  # kept on every page while the data is unchanged

    at.switch_page("pages/data.py").run()
    runs = at.dataframe[0].value
    assert runs["system"].tolist() == ["Mine", "BM25"] and runs["sample"].tolist() == [False, True]
    listed = workspace_table(at)
    assert listed[["name", "status", "yours", "files"]].values.tolist() == [["from the test", "active", "opened", 3]]
    assert f"data_ws_delete_{saved.workspace_id}" not in [b.key for b in at.button]  # no owner token here


def test_changing_the_data_drops_the_workspace_from_the_url(store_dir):
    saved, _ = saved_workspace(store_dir)
    at = open_page("data", query={"ws": saved.workspace_id})
    assert at.query_params["ws"] == saved.workspace_id
    other = MINE.replace(b"mine", b"other").replace(b" 184 ", b" 9 ")
    at.session_state["data_pending"] = [("run", "other.trec", other)]
    at.run()
    assert "ws" not in at.query_params  # the URL no longer claims to be that workspace
    assert texts(at.subheader)[1] == "Runs (3)"


def _bad_link(case: str, store_dir) -> str:
    if case == "malformed":
        return "[click me](http://evil.test) <b>x</b>"
    if case == "unknown":
        return new_workspace_id()
    if case == "damaged":
        saved, _ = saved_workspace(store_dir)
        first = saved.workspace_id[0]
        return ("B" if first == "A" else "A") + saved.workspace_id[1:]
    if case == "deleted":
        saved, _ = saved_workspace(store_dir)
        with open_store(data_dir=store_dir) as store:
            store.delete_workspace(saved.workspace_id, saved.owner_token)
        return saved.workspace_id
    if case == "expired":  # saved three days ago to expire after one
        saved, _ = saved_workspace(store_dir, clock=lambda: time.time() - 3 * 86400, expires_in_days=1)
        return saved.workspace_id
    raise AssertionError(case)


@pytest.mark.parametrize("case,expected", [
    ("malformed", "this is not a workspace id"),
    ("damaged", "this workspace id fails its check: the link was changed or mistyped"),
    ("unknown", "no workspace with this id is stored here"),
    ("deleted", "this workspace was deleted by its owner on"),
    ("expired", "this workspace expired on"),
])
def test_a_link_that_cannot_be_opened_says_why_and_the_sample_data_stays(store_dir, case, expected):
    workspace_id = _bad_link(case, store_dir)
    at = open_page("overview", query={"ws": workspace_id})
    errors = texts(at.error)
    assert len(errors) == 1, errors
    assert errors[0].startswith("This shared workspace cannot be opened: " + expected), errors[0]
    assert errors[0].endswith("Showing the sample data instead.")
    assert "<b>" not in at.error[0].value and "](http" not in at.error[0].value
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]  # the dashboard works on
    at.button(key="ws_problem_dismiss").click().run()
    assert "ws" not in at.query_params and not at.error


def test_damaged_bytes_in_the_store_are_reported_not_used(store_dir):
    saved, files = saved_workspace(store_dir)
    digest = sha256(MINE)
    with sqlite3.connect(store_dir / "workspaces.sqlite3") as conn:  # changed outside EvalSuite
        conn.execute("UPDATE evalsuite_dataset_blobs SET data = ? WHERE digest = ?", (MINE.replace(b"184", b"185"),
                                                                                      digest))
    conn.close()
    at = open_page("overview", query={"ws": saved.workspace_id})
    errors = texts(at.error)
    assert len(errors) == 1 and "do not match its SHA-256" in errors[0], errors
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]  # nothing of the workspace was loaded


def test_workspace_with_a_file_that_no_longer_reads_opens_the_rest(store_dir):
    files = [("qrels", "qrels.trec", (CRANFIELD / "qrels.trec").read_bytes(), None),
             ("run", "mine.trec", MINE, "Mine"), ("run", "broken.trec", b"1 Q0 d1 1 not-a-score t\n", "Broken")]
    saved, _ = saved_workspace(store_dir, files=files)
    at = open_page("data", query={"ws": saved.workspace_id})
    warnings = texts(at.warning)
    assert any(w.startswith("Workspace 'from the test' opened, but 1 of its files could not be read") for w in warnings)
    assert any("broken.trec, line 1, field 'score'" in e for e in texts(at.error)), texts(at.error)
    assert at.dataframe[0].value["system"].tolist() == ["Mine"]
    assert "ws" in at.query_params  # still the link's, but not claimed as this session's workspace


def test_store_that_cannot_be_opened_leaves_everything_else_working(monkeypatch):
    monkeypatch.setenv("EVALSUITE_STORE_URL", "mysql://user:secret@db.example/evalsuite")
    at = open_page("data")
    infos = texts(at.info)
    assert any(t.startswith("Save and share is not available") and "sqlite:///" in t for t in infos), infos
    assert all("secret" not in t for t in infos)  # the password is never shown
    assert not at.error and texts(at.subheader)[1:4] == ["Runs (2)", "Qrels (1)", "Per-request records (2)"]
    at = open_page("overview", query={"ws": new_workspace_id()})
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith("This shared workspace cannot be opened"), errors
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]


def test_local_store_caps_default_and_configured(monkeypatch):
    at = open_page("data")
    assert "Files of up to 300 MiB each and 1,024 MiB per workspace can be saved." in texts(at.caption)
    monkeypatch.setenv("EVALSUITE_MAX_DATASET_MB", "5")
    monkeypatch.setenv("EVALSUITE_MAX_WORKSPACE_MB", "12")
    at = open_page("data")
    assert "Files of up to 5 MiB each and 12 MiB per workspace can be saved." in texts(at.caption)


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB ({n:,} bytes)"


def test_store_settings_from_secrets_and_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALSUITE_DATA_DIR")
    secrets = {"evalsuite": {"data_dir": str(tmp_path / "from-secrets"), "max_dataset_mb": 7}}
    at = open_page("data", secrets=secrets)
    assert "Files of up to 7 MiB each and 1,024 MiB per workspace can be saved." in texts(at.caption)
    save_from(at, "data_share", "in the secrets' folder")
    with open_store(data_dir=tmp_path / "from-secrets") as store:
        assert store.usage().n_active_workspaces == 1
    monkeypatch.setenv("EVALSUITE_MAX_DATASET_MB", "5")  # the environment wins over the secrets
    at = open_page("data", secrets=secrets)
    assert "Files of up to 5 MiB each and 1,024 MiB per workspace can be saved." in texts(at.caption)


@pytest.mark.parametrize("cap", ["dataset", "workspace"])
def test_size_caps_refuse_before_anything_is_written(monkeypatch, store_dir, cap):
    sizes = {path.name: path.stat().st_size for _, path, _ in SAMPLE_FILES}
    largest = max(sizes, key=sizes.get)
    assert largest == "ragtruth_qa.jsonl" and 2**20 < sizes[largest] < 2 * 2**20 and 4 * 2**20 < sum(sizes.values())
    if cap == "dataset":  # 1 MiB: only the largest file is over
        settings = {"EVALSUITE_MAX_DATASET_MB": "1"}
        expected = (f"ragtruth_qa.jsonl: this records file is {_mib(sizes[largest])}; the workspace store keeps at "
                    f"most {_mib(2**20)} per file")
    else:  # 4 MiB: every file fits, all of them together do not
        settings = {"EVALSUITE_MAX_WORKSPACE_MB": "4"}
        expected = (f"this session: the files of this session come to {_mib(sum(sizes.values()))}; the workspace "
                    f"store keeps at most {_mib(4 * 2**20)} per workspace")
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    at = open_page("data")
    at.text_input(key="data_share_name").input("too big")
    at.button(key="data_share_submit").click().run()
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith(expected), errors
    assert not at.code
    with open_store(data_dir=store_dir) as store:
        usage = store.usage()
    assert usage.n_datasets == 0 and usage.n_active_workspaces == 0


def test_delete_from_the_data_page(store_dir):
    at = open_page("data", url="http://evalsuite.test/")
    link, _ = save_from(at, "data_share", "to delete")
    workspace_id = parse_qs(urlsplit(link).query)["ws"][0]
    listed = workspace_table(at)
    assert listed[["name", "status", "yours"]].values.tolist() == [["to delete", "active", "saved here"]]
    at.button(key=f"data_ws_delete_{workspace_id}").click().run()
    listed = workspace_table(at)
    assert listed["status"].tolist() == ["deleted"]
    assert "ws" not in at.query_params
    again = open_page("overview", query={"ws": workspace_id})
    assert "this workspace was deleted by its owner" in texts(again.error)[0]


def test_delete_with_id_and_owner_token(store_dir):
    saved, _ = saved_workspace(store_dir)
    at = open_page("data")
    at.text_input(key="data_ws_delete_id").input(saved.workspace_id)
    at.text_input(key="data_ws_delete_token").input("not the token")
    at.button(key="data_ws_delete_submit").click().run()
    assert any("this owner token does not belong to this workspace" in e for e in texts(at.error)), texts(at.error)
    with open_store(data_dir=store_dir) as store:
        assert store.list_workspaces([saved.workspace_id])[0].status == "active"
    # A whole share link works as well as the bare id.
    at.text_input(key="data_ws_delete_id").input(f"https://evalsuite.test/compare?compare_a=BM25&ws={saved.workspace_id}")
    at.text_input(key="data_ws_delete_token").input(saved.owner_token)
    at.button(key="data_ws_delete_submit").click().run()
    assert not at.error and any(s.startswith("Deleted") for s in texts(at.success))
    with open_store(data_dir=store_dir) as store:
        assert store.list_workspaces([saved.workspace_id])[0].status == "deleted"


# ----------------------------------------------------------------------------------------------
# Download report: the HTML is built when the button is clicked (a deferred download).


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
    # The charts of the view: the Compare page's two, with plotly.js inlined once.
    assert text.count("Plotly.newPlot(") == 2 and text.count("plotly.js v") == 1
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
    assert text.count("Plotly.newPlot(") == 1  # the Overview page's chart
    assert sha256(data) in text
    # A report made on another page keeps the Overview selection and has that page's charts.
    at.switch_page("pages/latency.py").run()
    text = report_of(deferred_downloads, "latency")
    assert "&quot;precision@5&quot;" in text and text.count("Plotly.newPlot(") == 3


def test_reader_settings_from_the_environment_and_a_bad_one(monkeypatch):
    from dashboard import loaders
    from evalsuite import isolation

    monkeypatch.setenv("EVALSUITE_READER_MAX_ROWS", "5")
    monkeypatch.setenv("EVALSUITE_READER_TIMEOUT_S", "soon")
    loaders.reader_limits.clear()
    loaders.start_readers.clear()
    try:
        assert loaders.reader_limits().max_rows == 5
        problem = loaders.start_readers()
        assert "EVALSUITE_READER_TIMEOUT_S" in problem and "'soon'" in problem
        assert isolation.default_pool().timeout_s == isolation.DEFAULT_TIMEOUT_S
        data = b"".join(b"q1 Q0 d%d 1 1.0 t\n" % i for i in range(6))
        with pytest.raises(es.EvalSuiteError, match="max_rows=5"):
            loaders.read_run.__wrapped__("digest", "six.trec", data)
    finally:
        loaders.reader_limits.clear()
        loaders.start_readers.clear()


def test_uploads_are_read_in_the_reader_processes_and_the_samples_here(monkeypatch):
    from dashboard import loaders
    from dashboard.constants import SAMPLE_FILES

    sample = SAMPLE_FILES[0][1].read_bytes()
    assert not loaders._isolate(loaders.digest_of(sample), sample)
    upload = sample + b"q9 0 d9 1\n"
    assert loaders._isolate(loaders.digest_of(upload), upload)
    assert loaders._isolate(loaders.digest_of(sample), upload)  # a digest that does not match its bytes
    calls = []
    monkeypatch.setattr(es, "read_qrels", lambda data, **kw: calls.append(kw["isolate"]))
    loaders.read_qrels.__wrapped__(loaders.digest_of(upload), "upload.qrels", upload)
    assert calls == [True]
