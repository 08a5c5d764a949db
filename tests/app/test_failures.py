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


def test_the_samples_fail_at_several_stages_and_each_request_shows_its_rule():
    """Issue 15: ARES's sample fails at retrieval and generation, attributed from its labels; each
    failed request is listed with its rule, whether it was attributed, and the reason."""
    rows = [json.loads(line) for line in (RAG / "ares_judge_examples.jsonl").open()]
    at = open_page("failures", query={"failures_system": "ares_judge_examples"})
    summary = at.dataframe[0].value.set_index("system")
    assert summary.loc["ares_judge_examples", "failed"] == sum(not r["success"] for r in rows) == 24
    assert summary.loc["ares_judge_examples", "of them attributed"] == 24
    assert summary.loc["bedrock_13b", "of them attributed"] == 0  # LLMPerf gives its stages
    stages = at.dataframe[1].value.set_index("stage")
    irrelevant = sum(not r["context_relevant"][0] for r in rows)
    assert stages.loc["retrieval", "count"] == irrelevant == 12
    assert stages.loc["generation", "count"] == 12
    listed = at.dataframe[2].value.set_index("query_id")
    for r in rows:
        if r["success"]:
            assert r["query_id"] not in listed.index
            continue
        row = listed.loc[r["query_id"]]
        assert bool(row["attributed"])
        if not r["context_relevant"][0]:
            assert (row["failure_stage"], row["rule"]) == ("retrieval", "no relevant chunk")
            assert row["reason"] == "none of 1 judged retrieved chunks is relevant"
        else:
            assert (row["failure_stage"], row["rule"]) == ("generation", "unsupported answer claims")
    rules = at.table[0].value
    assert rules.index.tolist()[:2] == ["given", "span in error"] and len(rules) == 10


def test_ragchecker_sample_shows_an_evidence_failure():
    at = open_page("failures", query={"failures_system": "ragchecker_example"})
    listed = at.dataframe[2].value.set_index("query_id")
    assert listed.loc["0", "failure_stage"] == "evidence" and listed.loc["0", "rule"] == "partial context recall"
    assert listed.loc["1", "failure_stage"] == "generation" and listed.loc["1", "rule"] == "wrong answer"


def test_default_system_is_the_one_whose_failures_span_most_stages():
    # On the samples most systems fail at one stage only; the page opens on one that shows two.
    at = open_page("failures")
    assert not at.exception
    system = at.selectbox(key="failures_system").value
    stages = next(d.value for d in at.dataframe if "share" in d.value.columns and "stage" in d.value.columns)
    assert (stages["count"] > 0).sum() == 2, (system, stages)
