"""A metric with an optional input (answer_correctness's similarity) is decided per system: a
system whose records lack the input gets the metric without it, whatever else is loaded."""

from __future__ import annotations

import math

import pytest

import evalsuite as es
from evalsuite import display

# Hand values: RAGAS AnswerCorrectness = (0.75 F1 + 0.25 similarity) / 1.0, F1 = 2TP / (2TP + FP + FN).
# plain: TP 1, FP 1, FN 1 -> F1 0.5. with_similarity: TP 2, FP 0, FN 0 -> F1 1.0, similarity 0.6 -> 0.9.
PLAIN = {"query_id": "q1", "answer_claims_in_reference": [True, False], "reference_claims_in_answer": [True, False]}
WITH_SIMILARITY = {"query_id": "q1", "answer_claims_in_reference": [True, True],
                   "reference_claims_in_answer": [True, True], "answer_similarity": 0.6}


def _report(rows_by_system):
    records = es.concat_records([es.Records.from_rows(rows, system=name) for name, rows in rows_by_system.items()])
    return es.evaluate_records(records)


def test_a_system_without_similarity_gets_f1_alone_whatever_else_is_loaded():
    alone = _report({"plain": [PLAIN]})
    both = _report({"plain": [PLAIN], "judged": [WITH_SIMILARITY]})
    assert float(alone.scores["plain"]["answer_correctness"]) == pytest.approx(0.5, abs=1e-12)
    # Before: the loaded similarity column made "plain"'s requests undefined (NaN, coverage 0).
    assert float(both.scores["plain"]["answer_correctness"]) == pytest.approx(0.5, abs=1e-12)
    assert float(both.scores["judged"]["answer_correctness"]) == pytest.approx(0.75 * 1.0 + 0.25 * 0.6, abs=1e-12)
    assert both.scores["plain"]["answer_correctness"].params["inputs"] == "without answer_similarity"
    assert both.scores["judged"]["answer_correctness"].params["inputs"] == "with answer_similarity"


def test_a_system_with_similarity_on_some_requests_leaves_the_others_undefined():
    # Within one system the weighted formula holds: a request with no similarity is undefined (RAGAS).
    second = dict(WITH_SIMILARITY, query_id="q2")
    del second["answer_similarity"]
    report = _report({"judged": [WITH_SIMILARITY, second]})
    score = report.scores["judged"]["answer_correctness"]
    assert float(score) == pytest.approx(0.9, abs=1e-12)
    assert math.isnan(score.per_query[1]) and score.params["coverage"] == pytest.approx(0.5)


def test_the_rag_quality_table_says_which_inputs_each_system_used():
    table = display.rag_quality_table(_report({"plain": [PLAIN], "judged": [WITH_SIMILARITY]}))
    source = table.set_index(["system", "metric"])["source"]
    assert source["plain", "answer_correctness"] == "computed from the judgements (without answer_similarity)"
    assert source["judged", "answer_correctness"] == "computed from the judgements (with answer_similarity)"
