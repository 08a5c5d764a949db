"""The Latency page: percentiles equal numpy's, for the samples and for a records file with only latency."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from .helpers import RAG, open_page


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


def test_records_file_with_only_latency_feeds_latency_page():
    rows = [{"query_id": str(i), "system": "fast", "latency_ms": float(i)} for i in range(1, 101)]
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at = open_page("latency", clear=True, pending=[("records", "fast.jsonl", data)])
    table = at.dataframe[0].value
    assert table.loc[0, "p50"] == pytest.approx(np.percentile(np.arange(1, 101), 50))
    assert table.loc[0, "p95"] == pytest.approx(np.percentile(np.arange(1, 101), 95))
