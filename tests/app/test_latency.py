"""The Latency page: percentiles equal numpy's, for the samples and for a records file with only latency."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from .helpers import RAG, REPO, open_page


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
    at.multiselect(key="latency_request_systems").set_value(["bedrock_13b", "groq_70b"]).run()
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


def _charts(at) -> dict:
    """Plotly charts of the page by their title."""
    out = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        out[spec["layout"]["title"]["text"]] = spec
    return out


def test_nineteen_systems_get_small_multiples_a_log_axis_and_a_pareto_chart():
    """Issue 30: LLMPerf's 19 endpoints span 0.2 s to 100 s end to end (more than two decades), so the
    axis is logarithmic by default; one panel per system instead of 19 overlaid lines; success
    against latency as one labelled point per system, the Pareto front marked."""
    rows = [json.loads(line) for line in (RAG / "llmperf_requests.jsonl").open()]
    at = open_page("latency", query={"latency_metric": "success"})
    assert at.toggle(key="latency_log").value is True
    charts = _charts(at)
    grid = charts["Latency distribution per system"]
    panels = [a["text"] for a in grid["layout"]["annotations"]]
    assert sorted(panels) == sorted({r["system"] for r in rows})
    assert grid["layout"]["xaxis"]["type"] == "log" and grid["layout"]["showlegend"] is False
    ecdf = charts["Latency ECDF per system (grey: the other systems)"]
    assert len([t for t in ecdf["data"] if t.get("name")]) == 19  # one coloured line per panel
    pareto = next(spec for title, spec in charts.items() if title.startswith("success against latency per system"))
    table = next(d.value for d in at.dataframe if "pareto" in d.value.columns).set_index("system")
    # Per system: median end-to-end latency and success rate over the requests with both, as numpy gives them.
    for system in ("groq_70b", "bedrock_13b", "lepton_7b"):
        mine = [r for r in rows if r["system"] == system and r.get("latency_ms") is not None]
        assert table.loc[system, "latency p50"] == pytest.approx(np.median([r["latency_ms"] for r in mine]))
        assert table.loc[system, "success mean"] == pytest.approx(np.mean([r["success"] for r in mine]))
    # The front by brute force: no other system is at least as fast and as successful, and better in one.
    lat, ok = table["latency p50"], table["success mean"]
    front = {s for s in table.index if not any((lat[o] <= lat[s]) and (ok[o] >= ok[s]) and (lat[o] < lat[s] or ok[o] > ok[s])
                                               for o in table.index if o != s)}
    assert set(table.index[table["pareto"]]) == front and "groq_70b" in front
    labels = {t for trace in pareto["data"] for t in (trace.get("text") or []) if t}
    assert front <= labels  # every point on the front is labelled
    # At most six systems per request by default, the front's first.
    shown = at.multiselect(key="latency_request_systems").value
    assert 1 <= len(shown) <= 6 and set(shown) >= (front if len(front) <= 6 else set())


def test_a_few_systems_are_overlaid_with_the_legend_below_and_a_linear_axis():
    at = open_page("latency", query={"latency_systems": ["groq_70b", "anyscale_13b"]})
    at.multiselect(key="latency_systems").set_value(["groq_70b", "anyscale_13b"]).run()
    at.toggle(key="latency_log").set_value(False).run()
    charts = _charts(at)
    histogram = charts["Latency distribution"]
    assert histogram["layout"]["legend"]["orientation"] == "h" and histogram["layout"]["xaxis"]["type"] == "linear"
    assert {t["name"] for t in histogram["data"]} == {"groq_70b", "anyscale_13b"}


def test_a_percentile_table_is_shown_as_a_summary_beside_the_computed_one():
    """LLMPerf's own summary of groq_70b (uploaded as records) is a summary: not 3 requests but a table
    beside the percentiles computed from its 150 requests; over the successful ones they are equal
    (LLMPerf summarises with numpy's linear percentile over its successful requests)."""
    summary = (REPO / "sample_data" / "sources" / "llmperf_latency" / "summary" / "groq_70b.json").read_bytes()
    at = open_page("latency", pending=[("records", "groq_70b.json", summary)])
    at.toggle(key="latency_successful_only").set_value(True).run()
    both = next(d.value for d in at.dataframe if "p50 given" in d.value.columns)
    row = both[(both["system"] == "groq_70b") & (both["stage"] == "end_to_end")].iloc[0]
    document = json.loads(summary)
    assert row["p50 given"] == pytest.approx(document["results_end_to_end_latency_s_quantiles_p50"] * 1000)
    assert row["p50 computed"] == pytest.approx(row["p50 given"], abs=1e-6)
    assert row["p99 computed"] == pytest.approx(row["p99 given"], abs=1e-6)
    assert row["n given"] == row["n computed"] == document["results_num_completed_requests"]
    # Not read as requests: the records' systems are unchanged, and the Data page lists it as a table.
    data = open_page("data", pending=[("records", "groq_70b.json", summary)])
    notices = " ".join(s.value for s in data.success).replace("\\", "")
    assert "groq_70b.json: read as a latency table (llmperf), a summary of requests, not requests" in notices
