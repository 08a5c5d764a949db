"""Fixtures of the dashboard's AppTest tests: every test's own workspace store (autouse), and the
sample data read by evalsuite for the expected numbers. Plain helpers are in ``helpers.py``."""

from __future__ import annotations

import pytest

import evalsuite as es

from .helpers import CRANFIELD, RAG


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
    records = es.concat_records([es.read_records(RAG / name) for name in (
        "ragtruth_qa.jsonl", "llmperf_requests.jsonl", "ares_judge_examples.jsonl", "ragchecker_examples.jsonl")])
    records = es.with_attributed_failures(records)  # as the dashboard does
    return records, es.evaluate_records(records)
