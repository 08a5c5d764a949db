"""Latency percentile tables (issue 30): summaries, never requests. LLMPerf's own summaries are checked
against numpy over LLMPerf's own per-request file (SOURCE.md: its quantiles are numpy's linear
percentiles over the successful requests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import evalsuite as es
from evalsuite import display

LLMPERF = Path(__file__).resolve().parents[2] / "sample_data" / "sources" / "llmperf_latency"


@pytest.mark.parametrize("endpoint", ["groq_70b", "bedrock_13b", "together_13b", "lepton_7b"])
def test_llmperf_summaries_equal_numpy_over_the_successful_requests(endpoint):
    table = es.read_latency_table(LLMPERF / "summary" / f"{endpoint}.json")
    assert table.tool == "llmperf" and table.systems == [endpoint]
    requests = [r for r in json.loads((LLMPERF / "individual" / f"{endpoint}.json").read_text()) if r["error_code"] is None]
    given = table.table.set_index("stage")
    for stage, key in (("end_to_end", "end_to_end_latency_s"), ("ttft", "ttft_s")):
        values = np.array([r[key] for r in requests]) * 1000
        for q in (50, 90, 95, 99):
            assert given.loc[stage, f"p{q}"] == pytest.approx(np.percentile(values, q), rel=1e-9)
        assert given.loc[stage, "mean"] == pytest.approx(values.mean(), rel=1e-9)
        assert given.loc[stage, "n"] == len(requests)


def test_our_own_download_reads_back_and_is_refused_as_records():
    frame = {"system": ["a"] * 4, "latency_ms": [100.0, 200.0, 300.0, 900.0]}
    import pandas as pd

    computed = display.latency_percentiles(pd.DataFrame(frame), {"latency_ms": "end_to_end"})
    data = computed.to_csv(index=False).encode()
    table = es.read_latency_table(data, source_name="latency_percentiles.csv")
    assert table.tool == "evalsuite"
    pd.testing.assert_frame_equal(table.table, computed, check_dtype=False)
    both = display.given_and_computed(table.table.assign(source="x"), computed)
    assert both.loc[0, "p99 diff"] == 0.0 and both.loc[0, "n given"] == 4
    with pytest.raises(es.EvalSuiteError, match="latency percentile table .* not per-request records"):
        es.read_records(data, source_name="latency_percentiles.csv")


def test_locust_stats_and_an_ambiguous_file():
    locust = (b'"Type","Name","Request Count","Failure Count","Median Response Time","Average Response Time",'
              b'"Min Response Time","Max Response Time","Average Content Size","Requests/s","Failures/s",'
              b'"50%","66%","75%","80%","90%","95%","98%","99%","99.9%","99.99%","100%"\n'
              b'"POST","/ask",120,2,410,450.5,120,2400,512,3.9,0.1,410,460,500,540,700,900,1500,2100,2400,2400,2400\n'
              b'"","Aggregated",120,2,410,450.5,120,2400,512,3.9,0.1,410,460,500,540,700,900,1500,2100,2400,2400,2400\n')
    table = es.read_latency_table(locust, source_name="run_stats.csv")
    assert table.tool == "locust" and table.systems == ["run_stats"]
    row = table.table.set_index("stage").loc["end_to_end"]
    assert (row["n"], row["mean"], row["p50"], row["p99"]) == (120, 450.5, 410, 2100)
    # Percentile columns next to per-request fields: read as records, and the warning says how.
    mixed = b'{"query_id": "q1", "latency_ms": 5, "p50": 4, "p99": 9}\n{"query_id": "q2", "latency_ms": 6, "p50": 4, "p99": 9}\n'
    records = es.read_records(mixed, source_name="mixed.jsonl")
    assert len(records) == 2
    assert any("percentile columns (p50, p99)" in w and "read as per-request records" in w for w in records.warnings)
