"""RAG, answer and operational metrics: hand-checked vectors, undefined cases and RAGAS compat."""

import math

import numpy as np
import pytest
from scipy import stats

import evalsuite as es


def test_context_precision_convention_vectors():
    # docs/conventions.md (registry test vectors): AP [1,1,1] = 1.0, [1,0,1] = 0.8333, [0,1,1] = 0.5833, [0,0,1] = 0.3333, [0,0] = 0.0
    score = es.context_precision([[1, 1, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1], [0, 0]])
    assert np.round(score.per_query, 4).tolist() == [1.0, 0.8333, 0.5833, 0.3333, 0.0]
    # By hand: [1,0,1] = (1/1 + 2/3) / 2; [0,1,1] = (1/2 + 2/3) / 2
    assert score.per_query[1] == pytest.approx((1 + 2 / 3) / 2, abs=1e-15)
    assert score.per_query[2] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)


def test_context_precision_undefined_and_unjudged():
    score = es.context_precision([[True, None, True], [], None])
    # The unjudged chunk is left out of the ranking: [True, True] -> 1.0, counted in params.
    assert score.per_query[0] == 1.0
    assert math.isnan(score.per_query[1]) and math.isnan(score.per_query[2])
    assert score.params["unjudged"] == 1
    assert score.params["coverage"] == pytest.approx(1 / 3)
    assert float(score) == 1.0


def test_context_precision_ragas_compat():
    # RAGAS divides by (useful + 1e-10) and gives 0.0 for an empty list.
    score = es.context_precision([[True, True, True], [True, False, True], []], compat="ragas")
    assert score.per_query[0] == 3 / (3 + 1e-10)
    assert score.per_query[1] == (1 + 2 / 3) / (2 + 1e-10)
    assert score.per_query[2] == 0.0
    with pytest.raises(es.EvalSuiteError):
        es.context_precision([[True]], compat="trulens")


def test_share_metrics_and_none_is_not_false():
    supported = [[True, True, False], [True, None, None], [], None]
    for fn in (es.faithfulness, es.context_recall, es.citation_recall, es.citation_precision):
        score = fn(supported)
        assert score.per_query[0] == pytest.approx(2 / 3)
        assert score.per_query[1] == 1.0  # None is not judged, not False
        assert math.isnan(score.per_query[2]) and math.isnan(score.per_query[3])
        assert score.params["unjudged"] == 2 and score.params["n_defined"] == 2
        assert float(score) == pytest.approx((2 / 3 + 1) / 2)


def test_context_relevance_binary_and_graded():
    assert es.context_relevance([[True, False, True]]).per_query[0] == pytest.approx(2 / 3)
    assert es.context_relevance([[0.5, 1.0, 0.0, None]]).per_query[0] == pytest.approx(0.5)
    with pytest.raises(es.EvalSuiteError) as info:
        es.context_relevance([[0.5, 1.5]])
    assert "0..1" in str(info.value) and info.value.field == "relevant[0][1]"


def test_answer_correctness_by_hand():
    # TP = 1, FP = 1 (answer claims), FN = 2 (reference claims missed): F1 = 2 / (2 + 1 + 2) = 0.4
    f1_only = es.answer_correctness([[True, False]], [[True, False, False]])
    assert float(f1_only) == pytest.approx(0.4)
    assert "F1 alone" in f1_only.params["similarity"]
    weighted = es.answer_correctness([[True, False]], [[True, False, False]], similarity=[0.5])
    assert float(weighted) == pytest.approx(0.75 * 0.4 + 0.25 * 0.5)
    custom = es.answer_correctness([[True, False]], [[True, False, False]], similarity=[0.5], weights=(1, 1))
    assert float(custom) == pytest.approx((0.4 + 0.5) / 2)


def test_answer_correctness_undefined_and_ragas():
    ours = es.answer_correctness([[], [False]], [[], []])
    assert math.isnan(ours.per_query[0]) and ours.per_query[1] == 0.0
    ragas = es.answer_correctness([[], [False]], [[], []], compat="ragas")
    assert ragas.per_query.tolist() == [1.0, 0.0]  # RAGAS scores "no statements either side" 1.0
    with pytest.raises(es.EvalSuiteError):
        es.answer_correctness([[True]], [[True]], weights=(0, 0))
    with pytest.raises(es.EvalSuiteError):
        es.answer_correctness([[True]], [[True]], similarity=[1.2])


def test_bad_judgements_name_the_request():
    with pytest.raises(es.EvalSuiteError) as info:
        es.faithfulness([[True], [True, "yes"]])
    assert info.value.field == "answer_claims_supported[1][1]" and info.value.value == "yes"
    with pytest.raises(es.EvalSuiteError) as info:
        es.faithfulness([[True], "TTF"])
    assert info.value.field == "answer_claims_supported[1]"
    with pytest.raises(es.EvalSuiteError):
        es.faithfulness([[2]])


def test_latency_summary_matches_numpy_linear_percentiles():
    values = [120.0, 180.0, 95.0, 400.0]
    p95 = es.latency_summary(values, statistic="p95")
    assert float(p95) == np.percentile(values, 95) == pytest.approx(367.0)
    every = es.latency_summary(values, unit="ms")
    assert set(every) == {"mean", "p50", "p90", "p95", "p99"}
    assert float(every["mean"]) == pytest.approx(np.mean(values))
    assert float(every["p50"]) == np.percentile(values, 50)
    assert every["p99"].params["unit"] == "ms"
    assert every["p99"].per_query.tolist() == values


def test_latency_summary_rejects_negative_and_non_finite_with_positions():
    with pytest.raises(es.EvalSuiteError) as info:
        es.latency_summary([10.0, -1.0, float("nan"), 5.0])
    assert "positions 1, 2" in str(info.value)
    dropped = es.latency_summary([10.0, -1.0, float("inf"), 5.0, None], statistic="mean", invalid="drop")
    assert float(dropped) == 7.5
    assert dropped.params["dropped"] == 2 and dropped.params["missing"] == 1 and dropped.params["n_valid"] == 2
    with pytest.raises(es.EvalSuiteError):
        es.latency_summary([1.0, "fast"])
    with pytest.raises(es.EvalSuiteError):
        es.latency_summary([1.0], statistic="p42")


def test_task_success_rate_wilson_vectors():
    # docs/conventions.md (registry test vectors): 8/10 -> [0.4902, 0.9433]; 0/10 -> [0, 0.2775]; 10/10 -> [0.7225, 1.0]
    for successes, expected in ((8, (0.4902, 0.9433)), (0, (0.0, 0.2775)), (10, (0.7225, 1.0))):
        score = es.task_success_rate([True] * successes + [False] * (10 - successes))
        assert (round(score.params["ci_low"], 4), round(score.params["ci_high"], 4)) == expected
        assert float(score) == successes / 10 and score.params["n"] == 10 and score.params["confidence"] == 0.95
        reference = stats.binomtest(successes, 10).proportion_ci(0.95, method="wilson")
        assert (score.params["ci_low"], score.params["ci_high"]) == (reference.low, reference.high)


def test_task_success_rate_unknown_outcomes_and_empty():
    score = es.task_success_rate([True, None, False, True], confidence=0.9)
    assert float(score) == pytest.approx(2 / 3) and score.params["unknown"] == 1 and score.params["n"] == 3
    empty = es.task_success_rate([None, None])
    assert math.isnan(float(empty)) and math.isnan(empty.params["ci_low"])
    with pytest.raises(es.EvalSuiteError):
        es.task_success_rate(["ok"])


def test_failure_attribution_shares_counts_and_labels():
    score = es.failure_attribution(["retrieval", None, "Generation", "GENERATION", None])
    stages = score.params["stages"]
    assert list(stages) == ["retrieval", "evidence", "generation", "orchestration", "other"]
    assert stages["generation"] == {"count": 2, "share": 2 / 3}
    assert stages["retrieval"] == {"count": 1, "share": 1 / 3}
    assert stages["evidence"]["count"] == 0
    assert float(score) == 3 / 5 and score.params["n_failed"] == 3
    with pytest.raises(es.EvalSuiteError) as info:
        es.failure_attribution(["retrieval", "network"])
    assert "allowed: retrieval, evidence, generation, orchestration, other" in str(info.value)
    assert info.value.field == "stages[1]"
    custom = es.failure_attribution(["network", None], taxonomy=["network", "model"])
    assert custom.params["stages"]["network"] == {"count": 1, "share": 1.0}
    nothing = es.failure_attribution([None, None])
    assert math.isnan(nothing.params["stages"]["retrieval"]["share"]) and float(nothing) == 0.0
