"""es.attribute_failures: one hand-made record per rule of the documented rule set (issue 15),
given stages win, attributed ones are marked, and RAGChecker's own example metrics agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalsuite as es

SOURCES = Path(__file__).resolve().parents[2] / "sample_data" / "sources"


def _one(row: dict, **kwargs) -> dict:
    frame = es.attribute_failures(es.Records.from_rows([{"query_id": "q", **row}], system="s"), **kwargs)
    return frame.iloc[0].to_dict()


@pytest.mark.parametrize("row, stage, rule", [
    ({"success": False, "error": "openai.APITimeoutError: Request timed out.", "answer_claims_supported": [False]},
     "orchestration", "error text"),
    ({"success": False, "error": "HTTP 429 Too Many Requests"}, "orchestration", "error text"),
    ({"success": False, "error": "ToolException: search tool returned 500"}, "orchestration", "error text"),
    ({"success": False, "reference_claims_supported": [False, False, None], "answer_claims_supported": [False]},
     "retrieval", "context recall 0"),
    ({"success": False, "context_ids": ["d3", "d4"], "relevant_ids": {"d1": 2, "d4": 0}}, "retrieval",
     "no relevant id retrieved"),  # d4 is judged, grade 0: not relevant
    ({"success": False, "contexts": ["a", "b"], "context_relevant": [False, False]}, "retrieval", "no relevant chunk"),
    ({"success": False, "reference_claims_supported": [True, False, False], "answer_claims_supported": [False]},
     "evidence", "partial context recall"),
    ({"success": False, "reference_claims_supported": [True, True], "answer_claims_supported": [True, False]},
     "generation", "unsupported answer claims"),
    ({"success": False, "context_ids": ["d1"], "relevant_ids": ["d1"], "answer_claims_in_reference": [True],
      "reference_claims_in_answer": [True, False]}, "generation", "wrong answer"),
    ({"success": False, "reference_claims_supported": [True], "answer_claims_supported": [True]}, "other",
     "unexplained"),
    ({"success": False, "error": "hallucination: Evident Conflict x1"}, "other", "unexplained"),
])
def test_each_rule_on_a_hand_made_record(row, stage, rule):
    got = _one(row)
    assert (got["failed"], got["stage"], got["rule"], got["attributed"]) == (True, stage, rule, True)
    assert got["reason"]


def test_reasons_carry_the_requests_numbers():
    assert _one({"success": False, "reference_claims_supported": [True, False, False]})["reason"] == (
        "context recall 0.33: 1 of 3 reference claims supported by the retrieved context")
    assert _one({"success": False, "answer_claims_supported": [True, False, False]})["reason"] == (
        "2 of 3 answer claims not supported by the retrieved context (retrieval not judged)")
    assert _one({"success": False, "contexts": ["c"], "context_relevant": [True], "answer_claims_supported": [False]}
                )["reason"] == "1 of 1 answer claims not supported by the retrieved context"  # retrieval judged: fine
    assert _one({"success": False, "context_ids": ["a", "b"], "relevant_ids": ["c"]})["reason"] == (
        "none of 1 relevant ids among the 2 retrieved")


def test_a_given_failure_stage_always_wins_and_is_not_marked_attributed():
    got = _one({"success": False, "failure_stage": " Orchestration ", "reference_claims_supported": [False]})
    assert (got["stage"], got["rule"], got["attributed"]) == ("orchestration", "given", False)
    got = _one({"success": True, "failure_stage": "retrieval"})  # given even against success
    assert (got["failed"], got["stage"]) == (True, "retrieval")


def test_success_decides_whether_a_request_failed():
    got = _one({"success": True, "reference_claims_supported": [False], "answer_claims_supported": [False]})
    assert (got["failed"], got["stage"], got["rule"], got["attributed"]) == (False, None, None, False)
    # success unknown: a judgement that shows a problem, or an error text, makes it a failure ...
    assert _one({"answer_claims_supported": [True, False]})["stage"] == "generation"
    assert _one({"error": "connection reset by peer"})["stage"] == "orchestration"
    # ... a partial recall with a right answer does not, nor does a request without judgements.
    assert not _one({"reference_claims_supported": [True, False], "answer_claims_supported": [True]})["failed"]
    assert not _one({"latency_ms": 12})["failed"]


def test_relevant_grade_below_rel_level_is_not_relevant():
    row = {"success": False, "context_ids": ["d1"], "relevant_ids": {"d1": 1, "d2": 2}}
    assert _one(row)["rule"] == "unexplained"  # d1 (grade 1) was retrieved: not a retrieval failure
    assert _one(row, rel_level=2)["rule"] == "no relevant id retrieved"


def test_ragchecker_examples_are_attributed_by_ragcheckers_own_numbers():
    """RAGChecker's checking_outputs.json: example 0 has claim_recall 0.227 (partial: evidence),
    example 1 claim_recall 1.0, faithfulness 1.0 and precision 0.8 (a response claim not in the
    ground truth: a wrong answer, generation)."""
    path = SOURCES / "ragchecker" / "checking_outputs.json"
    metrics = [r["metrics"] for r in json.loads(path.read_text())["results"]]
    assert 0 < metrics[0]["claim_recall"] < 1
    assert (metrics[1]["claim_recall"], metrics[1]["faithfulness"]) == (1.0, 1.0) and metrics[1]["precision"] < 1
    frame = es.attribute_failures(es.read_records(path))
    assert frame["stage"].tolist() == ["evidence", "generation"]
    assert frame["rule"].tolist() == ["partial context recall", "wrong answer"]
    assert frame["reason"][0].startswith(f"context recall {metrics[0]['claim_recall']:.2f}: 5 of 22")


def test_with_attributed_failures_feeds_the_failure_shares():
    rows = [{"query_id": "1", "success": False, "reference_claims_supported": [False]},
            {"query_id": "2", "success": False, "failure_stage": "orchestration"},
            {"query_id": "3", "success": False, "answer_claims_supported": [False]},
            {"query_id": "4", "success": True}]
    records = es.Records.from_rows(rows, system="s")
    filled = es.with_attributed_failures(records)
    assert filled.table.column("failure_stage").to_pylist() == ["retrieval", "orchestration", "generation", None]
    assert filled.table.column("failure_attributed").to_pylist() == [True, False, True, False]
    assert "failure_rule" in filled.extra_columns and records.table.column("failure_stage").to_pylist()[0] is None
    stages = es.evaluate_records(filled).failures["s"].params["stages"]
    assert {s: v["count"] for s, v in stages.items() if v["count"]} == {"retrieval": 1, "generation": 1,
                                                                       "orchestration": 1}
    with pytest.raises(es.EvalSuiteError):
        es.with_attributed_failures(records, failure_stages=("retrieval", "generation"))
    with pytest.raises(es.EvalSuiteError):
        es.attribute_failures(rows)


def test_evaluate_records_counts_the_attributed_stages_the_failures_page_shows():
    # Request 1 failed with no stage given: its judgements say retrieval (context recall 0). The
    # failure table of the plain records must equal the one of the records the page attributes.
    rows = [{"query_id": "1", "success": False, "reference_claims_supported": [False]},
            {"query_id": "2", "success": False, "failure_stage": "orchestration"},
            {"query_id": "3", "success": False, "answer_claims_supported": [False]},
            {"query_id": "4", "success": True}]
    records = es.Records.from_rows(rows, system="s")
    plain = es.evaluate_records(records).failure_table
    counts = {r.stage: r.count for r in plain.itertuples() if r.count}
    assert counts == {"retrieval": 1, "orchestration": 1, "generation": 1}  # 3 of 4 failed, by hand
    assert plain[plain["count"] > 0]["share"].tolist() == pytest.approx([1 / 3] * 3)
    page = es.evaluate_records(es.with_attributed_failures(records)).failure_table
    assert page.equals(plain)
    # A taxonomy without the rules' stages counts only the stages given, and says so.
    report = es.evaluate_records(records, failure_stages=("orchestration", "timeout"))
    assert report.failure_table.set_index("stage")["count"].to_dict() == {"orchestration": 1, "timeout": 0}
    assert any("only given failure_stage" in w for w in report.warnings)


def test_the_failure_table_counts_what_attribute_failures_gives_every_request():
    """evaluate_records runs the rules only on the requests that may have failed without a given
    stage; its counts must still equal attribute_failures over all the records, for random records
    with given stages, spans in error beside success=True, and success unknown."""
    import numpy as np

    rng = np.random.default_rng(11)
    rows = []
    for i in range(300):
        row = {"query_id": str(i)}
        if rng.random() < 0.7:
            row["success"] = bool(rng.random() < 0.5)
        if rng.random() < 0.2:
            row["failure_stage"] = str(rng.choice(["retrieval", "generation", "orchestration"]))
        if rng.random() < 0.15:
            row["failed_span_kind"] = str(rng.choice(["RETRIEVER", "LLM", "TOOL"]))
        if rng.random() < 0.6:
            row["reference_claims_supported"] = [bool(x) for x in rng.random(rng.integers(0, 4)) < 0.5]
        if rng.random() < 0.6:
            row["answer_claims_supported"] = [bool(x) for x in rng.random(rng.integers(0, 4)) < 0.7]
        if rng.random() < 0.2:
            row["error"] = str(rng.choice(["Request timed out", "bad answer"]))
        rows.append(row)
    records = es.Records.from_rows(rows, system="s")
    stages = es.attribute_failures(records)["stage"].dropna()
    table = es.evaluate_records(records).failure_table
    got = {r.stage: r.count for r in table.itertuples() if r.count}
    assert got == stages.value_counts().to_dict()
    assert sum(got.values()) > 100  # the case is not vacuous


def test_the_vectorised_rules_equal_a_record_by_record_reading_on_random_records():
    """Random records through attribute_failures against the rules applied one record at a time
    in plain Python (the reference reading of docs/records.md)."""
    import numpy as np

    rng = np.random.default_rng(7)
    rows = []
    for i in range(400):
        row = {"query_id": str(i)}
        if rng.random() < 0.7:
            row["success"] = bool(rng.random() < 0.5)
        if rng.random() < 0.6:
            row["reference_claims_supported"] = [bool(x) for x in rng.random(rng.integers(0, 4)) < 0.5]
        if rng.random() < 0.6:
            row["answer_claims_supported"] = [bool(x) for x in rng.random(rng.integers(0, 4)) < 0.7]
        if rng.random() < 0.5:
            row["context_ids"] = [f"d{j}" for j in rng.choice(20, 4, replace=False)]
            row["relevant_ids"] = {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(20, 2, replace=False)}
        if rng.random() < 0.2:
            row["error"] = str(rng.choice(["Request timed out", "bad answer", "HTTP 503 Service Unavailable"]))
        rows.append(row)
    frame = es.attribute_failures(es.Records.from_rows(rows, system="s"))

    def share(values):
        judged = [v for v in values or [] if v is not None]
        return sum(judged) / len(judged) if judged else None

    for row, got in zip(rows, frame.itertuples()):
        recall, faithful = share(row.get("reference_claims_supported")), share(row.get("answer_claims_supported"))
        wanted = {d for d, g in row.get("relevant_ids", {}).items() if g >= 1}
        hit = sum(d in wanted for d in row["context_ids"]) if wanted else None
        missed = recall == 0 or hit == 0
        problem = missed or (faithful is not None and faithful < 1)
        error = row.get("error")
        failed = (not row["success"]) if "success" in row else bool(error) or problem
        if not failed:
            expected = None
        elif error and error != "bad answer":
            expected = "error text"
        elif recall == 0:
            expected = "context recall 0"
        elif hit == 0:
            expected = "no relevant id retrieved"
        elif recall is not None and 0 < recall < 1:
            expected = "partial context recall"
        elif faithful is not None and faithful < 1:
            expected = "unsupported answer claims"
        else:
            expected = "unexplained"
        assert (got.failed, got.rule) == (failed, expected), row
