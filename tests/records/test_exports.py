"""Evaluation-tool exports read as the tools write them (issue 15): RAGAS results saved with
``to_pandas()`` to CSV/JSON/JSONL/Parquet, DeepEval test runs, TruLens and Phoenix evaluation
exports. The fixtures are in tests/data/exports (README there says how each was made); every
expected value is the tool's own score in the file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import evalsuite as es
from conftest import SAMPLE

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"

# The scores RAGAS 0.4.3 wrote into ragas_result.* (per sample; NaN = RAGAS could not score it).
RAGAS_SCORES = {
    "faithfulness": [1.0, 0.0, math.nan],
    "answer_relevancy": [0.97, 0.95, 0.62],
    "context_precision": [0.9999999999, 0.9999999999, 0.0],  # llm_context_precision_with_reference
    "context_recall": [1.0, 1.0, 0.0],
    "factual_correctness": [0.67, 0.0, 0.0],  # factual_correctness(mode=f1)
    "answer_similarity": [0.91, 0.88, 0.35],  # semantic_similarity
    "context_entity_recall": [1.0, 0.5, 0.0],
    "noise_sensitivity": [0.0, 1.0, 0.0],  # noise_sensitivity(mode=relevant)
}


def _mean(values):
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined)


@pytest.mark.parametrize("name", ["ragas_result.csv", "ragas_result.json", "ragas_result.jsonl", "ragas_result.parquet"])
def test_ragas_results_read_with_their_own_scores(name):
    records = es.read_records(EXPORTS / name)
    assert records.systems == ["ragas_result"] and len(records) == 3
    assert records.table.column("contexts").to_pylist()[0] == [
        "Emma is a novel by Jane Austen.", "It is set in 'Highbury', Surrey."]
    assert records.table.column("question").to_pylist()[2] == "Who is Mr. Knightley?"
    assert records.extra_columns == []  # every column is used (the CSV's index column is dropped)
    report = es.evaluate_records(records)
    scores = report.scores["ragas_result"]
    for metric, values in RAGAS_SCORES.items():
        per_query = scores[metric].per_query
        assert [None if math.isnan(v) else v for v in per_query] == [None if math.isnan(v) else v for v in values], metric
        assert float(scores[metric]) == pytest.approx(_mean(values), abs=1e-12), metric
        assert report.params["metric_sources"]["ragas_result"][metric] == "given in the file"
    assert scores["faithfulness"].params["coverage"] == pytest.approx(2 / 3)


def test_ragas_01_column_names_read():
    records = es.read_records(EXPORTS / "ragas01_result.csv")
    assert set(records.aliases) == {"ground_truth"}  # question, answer, contexts are canonical already
    assert records.table.column("contexts").to_pylist()[1] == ["Emma was first published in 1815.", "Austen died in 1817."]
    scores = es.evaluate_records(records).scores["ragas01_result"]
    assert float(scores["answer_correctness"]) == pytest.approx((0.74 + 0.2) / 2, abs=1e-12)
    assert float(scores["answer_similarity"]) == pytest.approx((0.96 + 0.81) / 2, abs=1e-12)
    assert float(scores["faithfulness"]) == 0.5


# The metric scores DeepEval's test run holds (deepeval_test_run.json, written by DeepEval 4.3.1).
DEEPEVAL_SCORES = {
    "faithfulness": [1.0, 0.5, 1.0],
    "answer_relevancy": [1.0, 1.0, 0.0],
    "context_precision": [1.0, 1.0, 0.0],  # Contextual Precision
    "context_recall": [1.0, 1.0, 0.0],  # Contextual Recall
}


def test_deepeval_test_run_reads_with_scores_reasons_and_pass_fail():
    records = es.read_records(EXPORTS / "deepeval_test_run.json")
    table = records.table
    assert table.column("query_id").to_pylist() == ["test_case_0", "test_case_1", "test_case_2"]
    assert table.column("contexts").to_pylist()[1] == ["We ship to the US and Canada.", "Canadian orders take 5-7 business days."]
    assert table.column("reference").to_pylist()[2] == "Yes, PayPal is accepted at checkout."
    assert table.column("success").to_pylist() == [True, False, False]  # DeepEval's own test pass/fail
    assert table.column("latency_ms").to_pylist() == [1250.0, 2500.0, None]  # completionTime, seconds
    assert table.column("faithfulness_reason").to_pylist()[1] == "'in 2 days' and 'for free' contradict the retrieval context."
    # A G-Eval metric is kept (score, reason, error), not used; its errored score is missing.
    assert table.column("correctness_geval").to_pylist() == [0.9, 0.2, None]
    assert table.column("correctness_geval_error").to_pylist()[2] == "RateLimitError: 429 Too Many Requests"
    assert "correctness_geval" in records.extra_columns
    report = es.evaluate_records(records)
    scores = report.scores["deepeval_test_run"]
    for metric, values in DEEPEVAL_SCORES.items():
        assert list(scores[metric].per_query) == values, metric
        assert scores[metric].params["source"] == "given in the file"
    assert float(report.task_success["deepeval_test_run"]) == pytest.approx(1 / 3)
    # The G-Eval score is shown as given: DeepEval's 0.9 and 0.2; the errored one is undefined.
    assert records.score_columns == ["correctness_geval"]
    geval = scores["correctness_geval"]
    assert float(geval) == pytest.approx(0.55, abs=1e-12) and geval.params["coverage"] == pytest.approx(2 / 3)
    assert geval.params["source"] == "given in the file"


def test_deepeval_latest_test_run_wrapper_reads_the_same():
    import json

    run = json.loads((EXPORTS / "deepeval_test_run.json").read_text())
    wrapped = json.dumps({"testRunData": run}).encode()  # .deepeval/.latest_test_run.json
    records = es.read_records(wrapped, format="json", source_name="latest")
    assert records.table.column("context_recall").to_pylist() == [1.0, 1.0, 0.0]


def test_trulens_records_and_feedback_read_with_the_rag_triad():
    """TruSession.get_records_and_feedback() saved with to_csv (TruLens 2.16.0 wrote the file)."""
    records = es.read_records(EXPORTS / "trulens_records.csv")
    assert records.systems == ["emma_rag v1"]  # app_name and app_version
    table = records.table
    assert table.column("question").to_pylist() == ["When was Emma published?", "Who wrote Emma?"]
    assert table.column("query_id").to_pylist()[0] == "record_hash_fdd93636b317fa23902f28981d35ea38"
    assert table.column("latency_ms").to_pylist() == pytest.approx([0.346, 0.381], abs=1e-9)  # latency is seconds
    assert {"record_json", "Groundedness_calls", "cost_json"} <= set(records.extra_columns)
    report = es.evaluate_records(records)
    scores = report.scores["emma_rag v1"]
    assert list(scores["faithfulness"].per_query) == [0.5, 1.0]  # Groundedness
    assert list(scores["answer_relevancy"].per_query) == [1.0, 1.0]  # Answer Relevance
    assert list(scores["context_relevance"].per_query) == [0.0, 0.9]  # Context Relevance
    assert report.params["metric_sources"]["emma_rag v1"]["context_relevance"] == "given in the file"


def test_trulens_frame_as_jsonl_and_parquet_reads_the_same():
    import io

    import pandas as pd

    frame = pd.read_csv(EXPORTS / "trulens_records.csv", index_col=0)
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    for data in (frame.to_json(orient="records", lines=True).encode(), buffer.getvalue()):
        records = es.read_records(data, source_name="trulens")
        assert records.systems == ["emma_rag v1"]
        assert records.table.column("faithfulness").to_pylist() == [0.5, 1.0]
        assert records.table.column("latency_ms").to_pylist() == pytest.approx([0.346, 0.381], abs=1e-9)


def test_a_trulens_feedback_of_the_users_own_is_shown_as_given():
    """A feedback column has a `<name>_calls` column beside it in TruLens's frame: a custom one
    (here "Conciseness") is a declared score; an unrelated numeric column is not."""

    import pandas as pd

    frame = pd.read_csv(EXPORTS / "trulens_records.csv", index_col=0)
    frame["Conciseness"] = [0.25, 0.75]
    frame["Conciseness_calls"] = ["[{'args': {}, 'ret': 0.25}]", "[{'args': {}, 'ret': 0.75}]"]
    records = es.read_records(frame.to_csv().encode(), format="csv", source_name="trulens.csv")
    assert records.score_columns == ["Conciseness"]
    assert "total_tokens" in records.extra_columns and "total_tokens" not in records.score_columns
    report = es.evaluate_records(records)
    assert float(report.scores["emma_rag v1"]["Conciseness"]) == 0.5
    assert "total_tokens" not in report.metrics
    # Through the isolated reader (as the dashboard reads) the declaration survives.
    isolated = es.read_records(frame.to_csv().encode(), format="csv", source_name="trulens.csv", isolate=True)
    assert isolated.score_columns == ["Conciseness"]


def test_a_declared_score_outside_the_unit_interval_is_not_used():
    import json

    run = json.loads((EXPORTS / "deepeval_test_run.json").read_text())
    run["testCases"][0]["metricsData"][4]["score"] = 7.0  # a G-Eval on a 0..10 scale, say
    records = es.read_records(json.dumps(run).encode(), format="json", source_name="run")
    report = es.evaluate_records(records)
    assert "correctness_geval" not in report.metrics
    assert any("correctness_geval: scores outside 0..1" in w for w in report.warnings)


def test_phoenix_evaluate_dataframe_results_read_with_their_scores():
    """phoenix.evals evaluate_dataframe() output saved with to_csv (Phoenix evals 3.9.4 wrote it):
    each <name>_score cell is a Score dict written as a Python repr."""
    records = es.read_records(EXPORTS / "phoenix_evals.csv")
    table = records.table
    assert table.column("query_id").to_pylist() == ["5a1e0c9b2f7d4e11", "8c3f6a0d1b2e4f22", "b7d2e9f4a6c1d833"]
    assert table.column("contexts").to_pylist()[2] == ["Gift cards never expire."]
    assert table.column("answer").to_pylist()[1] == "Yes, in 2 days, for free."
    # document_relevance is Phoenix's name for context relevance (the registry's Phoenix export names).
    assert records.score_columns == []
    assert records.table.column("context_relevance").to_pylist() == [1.0, 1.0, 0.0]
    report = es.evaluate_records(records)
    scores = report.scores["phoenix_evals"]
    assert list(scores["faithfulness"].per_query) == [1.0, 0.0, 1.0]
    assert list(scores["hallucination"].per_query) == [0.0, 1.0, 0.0]  # direction minimize: lower is better
    assert "lower is better" in scores["hallucination"].params["convention"]
    assert list(scores["context_relevance"].per_query) == [1.0, 1.0, 0.0]


def test_phoenix_score_cells_are_read_without_evaluating_anything():
    head = "input,output,faithfulness_execution_details,faithfulness_score\n"
    ok = es.read_records((head + "q,a,{},\"{'name': 'faithfulness', 'score': 0.5, 'label': 'faithful', "
                          "'metadata': {'model': 'x'}}\"\n").encode(), format="csv", source_name="p.csv")
    assert ok.table.column("faithfulness").to_pylist() == [0.5]
    assert ok.table.column("faithfulness_label").to_pylist() == ["faithful"]
    with pytest.raises(es.EvalSuiteError) as info:
        es.read_records((head + "q,a,{},\"{'score': __import__('os').getpid()}\"\n").encode(), format="csv",
                        source_name="p.csv")
    assert info.value.line == 2 and "Phoenix Score" in str(info.value)


def test_llmperfs_per_request_files_read_as_the_bundled_sample_built_them():
    # The sample's llmperf_requests.jsonl was built from these files by scripts/build_sample_data.py
    # (its own reading, checked against the counts SOURCE.md states); reading each file directly must
    # give the same outcomes, errors and latencies, with the request index as query id.
    import json

    sample = [json.loads(line) for line in (SAMPLE / "rag" / "llmperf_requests.jsonl").read_text().splitlines()]
    folder = SAMPLE / "sources" / "llmperf_latency" / "individual"
    for name in ("groq_70b", "lepton_7b", "bedrock_13b"):
        records = es.read_records(folder / f"{name}.json")
        assert records.systems == [name] and records.warnings == []
        rows = records.table.to_pylist()
        expected = [r for r in sample if r["system"] == name]
        assert len(rows) == len(expected) == 150
        for index, (got, want) in enumerate(zip(rows, expected)):
            assert got["query_id"] == str(index)
            assert got["success"] == want["success"]
            assert got.get("error") == want.get("error")
            for field in ("latency_ms", "latency_ttft_ms"):
                if want.get(field) is None:
                    assert got.get(field) is None, (name, index, field)
                else:
                    assert got[field] == pytest.approx(want[field], rel=1e-12, abs=0), (name, index, field)
            assert got.get("answer") == want.get("answer")
    lepton = es.evaluate_records(es.read_records(folder / "lepton_7b.json"))
    assert float(lepton.task_success["lepton_7b"]) == pytest.approx(20 / 150)  # 130 of 150 refused with HTTP 429


def test_an_llmperf_latency_that_is_not_a_number_names_its_item():
    data = b'[{"error_code": null, "error_msg": "", "end_to_end_latency_s": 0.5, "ttft_s": 0.1},' \
           b' {"error_code": null, "error_msg": "", "end_to_end_latency_s": "slow", "ttft_s": 0.1}]'
    with pytest.raises(es.EvalSuiteError) as info:
        es.read_records(data, source_name="llmperf.json")
    assert info.value.line == 2 and info.value.field == "end_to_end_latency_s"
