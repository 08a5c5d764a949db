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


def test_latency_charts_say_what_they_leave_out_and_count_failures_with_a_latency():
    """Issue 15: every system drawn by default; failed requests with a latency are counted (bedrock's
    -100 rows); those without one are left out, and each chart says how many, per system."""
    rows = [json.loads(line) for line in (RAG / "llmperf_requests.jsonl").open()]
    at = open_page("latency", query={"latency_metric": "success"})
    systems = sorted({r["system"] for r in rows})
    assert sorted(at.multiselect(key="latency_systems").value) == systems  # all 19, not 6
    left = next(d.value for d in at.dataframe if "left out: failed, no latency" in d.value.columns
                and "left out: no success" not in d.value.columns).set_index("system")
    for system in ("bedrock_13b", "lepton_7b", "groq_70b"):
        mine = [r for r in rows if r["system"] == system]
        failed_no_latency = sum(not r["success"] and r.get("latency_ms") is None for r in mine)
        assert left.loc[system, "requests"] == len(mine)
        assert left.loc[system, "left out: failed, no latency"] == failed_no_latency
        assert left.loc[system, "failed shown"] == sum(not r["success"] and r.get("latency_ms") is not None for r in mine)
    assert left.loc["bedrock_13b", "failed shown"] == 97 and left.loc["lepton_7b", "left out: failed, no latency"] == 130
    captions = " ".join(c.value for c in at.caption)
    assert "Left out of the charts above: 393 requests (393 failed, no latency)" in captions  # 130 x 3 + 2 + 1
    # Quality against latency: bedrock_13b's success rate per bin now includes its 97 failures.
    rates = next(d.value for d in at.dataframe if "rate" in d.value.columns and "bin" in d.value.columns)
    bedrock = rates[rates["system"] == "bedrock_13b"]
    assert bedrock["n"].sum() == 150 and bedrock["successes"].sum() == 53


def test_successful_requests_only_gives_llmperfs_summary():
    at = open_page("latency", query={"latency_successful_only": "true"})
    table = at.dataframe[0].value.set_index(["system", "stage"])
    summary = json.loads((RAG.parent / "sources" / "llmperf_latency" / "summary" / "bedrock_13b.json").read_text())
    assert table.loc[("bedrock_13b", "end_to_end"), "n"] == 53
    assert table.loc[("bedrock_13b", "end_to_end"), "p50"] == pytest.approx(
        summary["results_end_to_end_latency_s_quantiles_p50"] * 1000, rel=1e-12)
