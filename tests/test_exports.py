"""Evaluation-tool exports read as the tools write them (issue 15): RAGAS results saved with
``to_pandas()`` to CSV/JSON/JSONL/Parquet, DeepEval test runs, TruLens and Phoenix evaluation
exports. The fixtures are in tests/data/exports (README there says how each was made); every
expected value is the tool's own score in the file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import evalsuite as es

EXPORTS = Path(__file__).parent / "data" / "exports"

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
