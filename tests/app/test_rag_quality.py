"""The RAG quality page: the numbers shown are evaluate_records()'s and the file's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from .helpers import RAG, open_page


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


def test_a_ragas_csv_next_to_the_samples_shows_its_own_scores():
    """Issue 15: a RAGAS result saved with to_pandas().to_csv() shows its own faithfulness with the
    sample records loaded too (the samples carry judgement lists), and says where each value is from."""
    import pandas as pd

    frame = pd.DataFrame({"user_input": ["q1", "q2"], "retrieved_contexts": [["a", "b"], ["c"]],
                          "response": ["x", "y"], "reference": ["x", "z"], "faithfulness": [1.0, 0.5],
                          "factual_correctness(mode=f1)": [0.25, float("nan")]})
    at = open_page("rag_quality", pending=[("records", "my_ragas.csv", frame.to_csv().encode())],
                   query={"rag_quality_systems": ["my_ragas", "gpt-4-0613"]})
    summary = at.dataframe[0].value
    assert summary.loc["my_ragas", "faithfulness"] == 0.75  # (1.0 + 0.5) / 2, the file's own values
    assert summary.loc["my_ragas", "factual_correctness"] == 0.25
    assert summary.loc["my_ragas", "factual_correctness coverage"] == 0.5
    rows = [json.loads(line) for line in (RAG / "ragtruth_qa.jsonl").open()]
    gpt4 = [np.mean(r["answer_claims_supported"]) for r in rows if r["system"] == "gpt-4-0613" and r["answer_claims_supported"]]
    assert summary.loc["gpt-4-0613", "faithfulness"] == pytest.approx(np.mean(gpt4), abs=1e-12)
    sources = next(d.value for d in at.dataframe
                   if "faithfulness" in d.value.columns and (d.value.astype(str) == "given in the file").any().any())
    assert sources.loc["my_ragas", "faithfulness"] == "given in the file"
    assert sources.loc["gpt-4-0613", "faithfulness"] == "computed from the judgements"
    assert not [w.value for w in at.warning]


def test_table_success_table_and_chart_list_the_systems_in_one_order():
    at = open_page("rag_quality", query={"rag_quality_metric": "faithfulness"})
    order = list(at.dataframe[0].value.index)
    assert list(at.dataframe[1].value["system"]) == [s for s in order if s in set(at.dataframe[1].value["system"])]
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert chart["data"][0]["x"] == order


def test_every_metric_evaluate_records_computed_is_listed():
    """Issue 26: the page lists every metric of the report, factual correctness from the judged
    claim lists included (it was judged and never shown)."""
    import evalsuite as es

    rows = [{"query_id": "q1", "system": "claims", "answer_claims_in_reference": [True, False],
             "reference_claims_in_answer": [True, False, False], "answer_claims_supported": [True, True]},
            {"query_id": "q2", "system": "claims", "answer_claims_in_reference": [True],
             "reference_claims_in_answer": [None, None], "answer_claims_supported": [False]}]
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at = open_page("rag_quality", pending=[("records", "claims.jsonl", data)],
                   query={"rag_quality_systems": ["claims"]})
    summary = at.dataframe[0].value
    report = es.evaluate_records(es.Records.from_rows(rows))
    assert {"factual_correctness", "answer_correctness", "faithfulness"} <= set(report.metrics)
    for metric in report.metrics:
        assert metric in summary.columns, metric
    # q1: TP 1, FP 1, FN 2: F1 = 2 / 5; q2's reference verdicts are all missing: undefined
    assert summary.loc["claims", "factual_correctness"] == pytest.approx(0.4)
    assert summary.loc["claims", "factual_correctness coverage"] == 0.5


def test_a_system_with_only_success_values_is_pointed_to_when_not_chosen():
    # A records file with success and latency only (a trace, an LLMPerf run): its system is not chosen
    # by default (no judged metric), so the success table of the chosen systems would be empty.
    rows = [{"query_id": f"q{i}", "success": i % 5 != 0, "latency_ms": 100.0 + i} for i in range(10)]
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at = open_page("rag_quality", pending=[("records", "only_success.jsonl", data)],
                   query={"rag_quality_systems": ["ragchecker_example"]})
    # ragchecker_example's records carry no success field.
    infos = " ".join(i.value for i in at.info)
    assert "None of the chosen systems has success values; 27 other systems have: " in infos, infos
    assert "and 21 more" in infos, infos  # 26 sample systems have success, and the upload
