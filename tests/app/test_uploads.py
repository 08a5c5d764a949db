"""Uploads: good files, bad files, files that do not fit, records without the fields a page needs,
the format of a gzip upload."""

from __future__ import annotations

import gzip
import json

import pytest

import evalsuite as es

from .helpers import CRANFIELD, TITLES, open_page, texts


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
    assert texts(at.subheader)[1:4] == ["Runs (2)", "Qrels (1)", "Per-request records (4)"]
    at.switch_page("pages/overview.py").run()
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]


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


def test_format_of_a_gzip_upload_with_several_members():
    from dashboard import session

    jsonl_run = b"".join(json.dumps({"query_id": "1", "doc_id": d, "score": s}).encode() + b"\n"
                         for d, s in (("184", 3.0), ("29", 2.0), ("31", 1.0)))
    multi = gzip.compress(b"") + gzip.compress(jsonl_run)
    assert len(es.read_run(multi)) == 3  # the reader reads every member
    assert session.format_used("run", "run.gz", multi) == "jsonl"
    records = gzip.compress(b"") + gzip.compress(b'{"query_id": "1", "latency_ms": 5}\n{"query_id": "2", "latency_ms": 6}\n')
    assert session.format_used("records", "records.gz", records) == "jsonl"


def test_a_corrected_file_uploaded_again_replaces_its_old_message():
    at = open_page("data", pending=[("records", "bad.jsonl", b'{"query_id": "1", "latency_ms": -3}\n'),
                                    ("run", "broken.trec", b"1 Q0 184 1 oops tag\n")])
    assert sum("bad.jsonl" in e for e in texts(at.error)) == 1
    at.session_state["data_pending"] = [("records", "bad.jsonl", b'{"query_id": "1", "latency_ms": "x"}\n')]
    at.run()
    errors = texts(at.error)
    # The new failure of bad.jsonl replaced its old message; broken.trec's stays.
    assert [e for e in errors if "bad.jsonl" in e] and all("-3" not in e for e in errors if "bad.jsonl" in e), errors
    assert sum("bad.jsonl" in e for e in errors) == 1 and any("broken.trec" in e for e in errors), errors
    at.session_state["data_pending"] = [("records", "bad.jsonl", b'{"query_id": "1", "latency_ms": 3}\n')]
    at.run()
    errors = texts(at.error)
    assert not [e for e in errors if "bad.jsonl" in e] and any("broken.trec" in e for e in errors), errors
