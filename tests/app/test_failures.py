"""The Failures page: counts equal the file's, and the stage filter."""

from __future__ import annotations

import json

import pandas as pd

from .helpers import RAG, open_page


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
