"""The rest of the RAGAS family (evalsuite/metrics/context.py and answer.py): hand-computed arithmetic, degenerate and bad
input, and the compat='ragas' differences. The registry's vectors run in test_registry.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.metrics.correctness import answer_correctness_fbeta, fbeta_values
from evalsuite.metrics.context import entities_found, normalize_entity


def _pq(score):
    return [None if math.isnan(v) else round(v, 10) for v in np.asarray(score.per_query, dtype=float)]


# -- answer relevancy -------------------------------------------------------------------------


def test_answer_relevancy_noncommittal_rules():
    sims = [[0.8, 0.6, 0.7], [0.8, 0.6, 0.7], [0.8, 0.6, 0.7], [0.8, 0.6, 0.7]]
    flags = [[False, False, False], [True, False, False], [True, True, False], [True, True, True]]
    ours = es.answer_relevancy(sims, flags)
    # 0 flags: mean 0.7; 1 of 3: outvoted, mean 0.7; 2 of 3: majority, 0; 3 of 3: 0
    assert _pq(ours) == [0.7, 0.7, 0.0, 0.0]
    assert ours.params["noncommittal_requests"] == 2
    assert ours.params["noncommittal_flags_outvoted"] == 1
    ragas = es.answer_relevancy(sims, flags, compat="ragas")  # np.all: only unanimous flags zero
    assert _pq(ragas) == [0.7, 0.7, 0.7, 0.0]


def test_answer_relevancy_missing_flags_and_questions():
    # A None flag is not a vote: 1 yes of 1 judged flag is a majority; None similarity left out of the mean.
    score = es.answer_relevancy([[0.9, None, 0.5], [0.9, 0.5, 0.4]], [[False, None, None], [True, None, None]])
    assert _pq(score) == [0.7, 0.0]
    # No generated question, or an empty list: undefined (RAGAS: nan when every question is empty).
    score = es.answer_relevancy([[None, None], [], None])
    assert _pq(score) == [None, None, None]
    assert score.params["coverage"] == 0.0
    # A 2-2 tie is not a majority: the mean is kept and both flags are counted as outvoted.
    tie = es.answer_relevancy([[1.0, 0.5, 0.5, 0.0]], [[True, True, False, False]])
    assert _pq(tie) == [0.5] and tie.params["noncommittal_flags_outvoted"] == 2


@pytest.mark.parametrize("sims, flags, field", [
    ([[1.2]], None, "similarities[0][0]"),
    ([[0.5, "x"]], None, "similarities[0][1]"),
    ("abc", None, "similarities"),
    ([[0.5, 0.5, 0.5]], [[True, False]], "noncommittal[0]"),
    ([[0.5]], [[True], [False]], "noncommittal"),
    ([[0.5]], [["yes"]], "noncommittal[0][0]"),
])
def test_answer_relevancy_bad_input_names_the_field(sims, flags, field):
    with pytest.raises(EvalSuiteError) as info:
        es.answer_relevancy(sims, flags)
    assert info.value.field == field


# -- answer similarity ------------------------------------------------------------------------


def test_answer_similarity_threshold_and_bad_values():
    assert _pq(es.answer_similarity([0.5, 0.7, None], threshold=0.7)) == [0.0, 1.0, None]
    assert float(es.answer_similarity([0.2, 0.4])) == pytest.approx(0.3)
    with pytest.raises(EvalSuiteError):
        es.answer_similarity([1.5])
    with pytest.raises(EvalSuiteError) as info:
        es.answer_similarity([0.5], threshold=2)
    assert info.value.field == "threshold"


# -- factual correctness and answer correctness's modes ---------------------------------------


def test_fbeta_against_sklearn():
    # sklearn's fbeta_score on the same confusion counts (TP 3, FP 1, FN 2) is the reference.
    sklearn = pytest.importorskip("sklearn.metrics")
    y_true = [1, 1, 1, 1, 1, 0]
    y_pred = [1, 1, 1, 0, 0, 1]
    for beta in (0.5, 1.0, 2.0):
        ours = fbeta_values(np.array([3.0]), np.array([1.0]), np.array([2.0]), np.array([True]), "f1", beta)[0]
        assert ours == pytest.approx(sklearn.fbeta_score(y_true, y_pred, beta=beta), abs=1e-12)


def test_fbeta_by_hand():
    # TP 3, FP 1, FN 2: P = 3/4, R = 3/5; F1 = 6 / (6 + 1 + 2) = 2/3; F0.5 = 1.25 * 3 / (1.25 * 3 + 0.25 * 2 + 1)
    tp, fp, fn, ok = np.array([3.0]), np.array([1.0]), np.array([2.0]), np.array([True])
    assert fbeta_values(tp, fp, fn, ok, "precision")[0] == 0.75
    assert fbeta_values(tp, fp, fn, ok, "recall")[0] == 0.6
    assert fbeta_values(tp, fp, fn, ok, "f1")[0] == pytest.approx(2 / 3)
    assert fbeta_values(tp, fp, fn, ok, "f1", 0.5)[0] == pytest.approx(3.75 / 5.25)


def test_factual_correctness_degenerate():
    # No answer claims: precision undefined; no claims anywhere: F1 undefined; claims all false: 0.
    score = es.factual_correctness([[], [], [False]], [[True], [], [False]], mode="precision")
    assert _pq(score) == [None, None, 0.0]
    # TP comes from the answer's claims and FN from the reference's (as in answer_correctness): a reference
    # claim the answer covers is neither, so [] / [True] has no counted claim.
    assert _pq(es.factual_correctness([[], [], [False], []], [[False], [], [False], [True]])) == [0.0, None, 0.0, None]
    assert _pq(es.factual_correctness([[], [True]], [[False], []], mode="recall")) == [0.0, 1.0]
    with pytest.raises(EvalSuiteError) as info:
        es.factual_correctness([[True]], mode="f1")
    assert info.value.field == "reference_in_answer"
    for bad in ({"mode": "f2"}, {"beta": 0}, {"beta": float("inf")}, {"beta": True}):
        with pytest.raises(EvalSuiteError):
            es.factual_correctness([[True]], [[True]], **bad)


def test_answer_correctness_modes_and_weights():
    a, r = [[True, False]], [[True, False, False]]
    # F1 mode with beta 1 is the existing function's arithmetic exactly.
    assert float(es.answer_correctness(a, r, [0.5], beta=1.0)) == float(es.answer_correctness(a, r, [0.5]))
    assert float(answer_correctness_fbeta(a, r, [0.5])) == pytest.approx(0.425)
    # recall 1/3: (0.6 x 1/3 + 0.4 x 0.5) / 1.0
    assert float(es.answer_correctness(a, r, [0.5], (0.6, 0.4), mode="recall")) == pytest.approx(0.2 + 0.2)
    with pytest.raises(EvalSuiteError) as info:
        es.answer_correctness(a, r, [0.5], (0, 0), mode="recall")
    assert info.value.field == "weights"
    with pytest.raises(EvalSuiteError):
        es.answer_correctness(a, r, [0.5], (-1, 2), beta=2.0)
    # compat ragas: no claims on either side scores 1.0 in F-beta too
    assert _pq(es.answer_correctness([[]], [[]], beta=2.0, compat="ragas")) == [1.0]
    assert _pq(es.answer_correctness([[]], [[]], beta=2.0)) == [None]


# -- context metrics --------------------------------------------------------------------------


def test_entities_are_normalised_and_counted_once():
    assert normalize_entity("\u00c9cole  Polytechnique!") == "école polytechnique"
    assert normalize_entity("ＡＢＣ") == "abc"  # NFKC: full-width letters
    assert entities_found([["Paris", "paris", "Lyon"], None], [["PARIS"], ["x"]]) == [[True, False], None]
    score = es.context_entity_recall(reference_entities=[[], ["A"]], context_entities=[["A"], []])
    assert _pq(score) == [None, 0.0]  # no reference entity: undefined (RAGAS: 0 / (0 + 1e-8) = 0)


def test_context_entity_recall_needs_one_input_form():
    with pytest.raises(EvalSuiteError):
        es.context_entity_recall()
    with pytest.raises(EvalSuiteError):
        es.context_entity_recall([[True]], reference_entities=[["a"]], context_entities=[["a"]])
    with pytest.raises(EvalSuiteError):
        es.context_entity_recall(reference_entities=[["a"]])
    with pytest.raises(EvalSuiteError) as info:
        es.context_entity_recall(reference_entities=[["a", 3]], context_entities=[["a"]])
    assert info.value.field == "reference_entities[0]"


def test_context_utilization_is_context_precision_on_the_answer_labels():
    labels = [[True, False, True], [False, False, True], [], [None, True], None]
    assert _pq(es.context_utilization(labels)) == _pq(es.context_precision(labels))
    ragas = es.context_utilization([[True, True, True], []], compat="ragas")
    assert _pq(ragas) == [round(3 / (3 + 1e-10), 10), 0.0]


def test_context_relevancy_sentences():
    score = es.context_relevancy([[True, False, None, False], [], None])
    assert _pq(score) == [round(1 / 3, 10), None, None]
    assert score.params["unjudged"] == 1


def test_aspect_critique_majority():
    score = es.aspect_critique([[True], [False], [True, False, True, False, False], [None, None], []], name="harmful")
    assert _pq(score) == [1.0, 0.0, 0.0, None, None]
    assert score.params["criterion"] == "harmful" and score.params["ties"] == 0
    with pytest.raises(EvalSuiteError):
        es.aspect_critique([["yes"]])


def test_answer_relevancy_one_flag_for_the_whole_answer():
    # What RagasJudge writes: one noncommittal verdict per answer; an empty answer has no question and scores 0.
    score = es.answer_relevancy([[0.5, 1.0], [0.5, 1.0], []], [[False], [True], [True]])
    assert _pq(score) == [0.75, 0.0, 0.0]


def test_a_ragas_export_with_its_own_scores_stays_readable(tmp_path):
    # RAGAS's to_pandas() columns: the scores are used as given (and said so), semantic_similarity is answer_similarity.
    path = tmp_path / "ragas_export.jsonl"
    rows = [{"user_input": "q?", "response": "a", "retrieved_contexts": ["c"], "reference": "r",
             "context_entity_recall": 0.5, "context_utilization": 1.0, "semantic_similarity": 0.8, "faithfulness": 1.0},
            {"user_input": "q2?", "response": "b", "retrieved_contexts": ["d"], "reference": "s",
             "context_entity_recall": 0.0, "context_utilization": 0.5, "semantic_similarity": 0.6, "faithfulness": 0.5}]
    path.write_text("".join(__import__("json").dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = es.evaluate_records(es.read_records(path, system="ragas"))
    means = report.means["ragas"]
    assert means["context_entity_recall"] == 0.25 and means["context_utilization"] == 0.75
    assert means["answer_similarity"] == pytest.approx(0.7) and means["faithfulness"] == 0.75
    assert {"context_entity_recall", "context_utilization"} <= set(report.params["given_metrics"])


@pytest.mark.parametrize("answer_in_reference, reference_in_answer, mode, expected", [
    # RAGAS tests/unit/test_factual_correctness.py (mock LLM): the verdicts its mocks return and the
    # scores it asserts. Precision: response claims [1, 0] -> 1 / (1 + 1).
    ([[True, False]], None, "precision", 0.5),
    # Recall: response claim [1] (TP 1), reference claims [1, 0] (FN 1) -> 1 / (1 + 1).
    ([[True]], [[True, False]], "recall", 0.5),
    # Backward-compatibility case: one supported claim each way -> F1 1.0.
    ([[True]], [[True]], "f1", 1.0),
])
def test_factual_correctness_reproduces_ragas_mock_llm_tests(answer_in_reference, reference_in_answer, mode, expected):
    assert float(es.factual_correctness(answer_in_reference, reference_in_answer, mode=mode)) == expected


@pytest.mark.parametrize("arguments, expected", [
    # RAGAS tests/unit/test_answer_correctness.py (mock LLM and embeddings), as judgement lists.
    ({"answer_in_reference": [[True, False]], "reference_in_answer": [[True, False]]}, 0.5),  # TP 1, FP 1, FN 1
    ({"answer_in_reference": [[True]], "reference_in_answer": [[True]], "weights": (1.0, 0.0)}, 1.0),  # factuality only
    ({"answer_in_reference": [[True]], "reference_in_answer": [[True]], "similarity": [1.0],
      "weights": (0.5, 0.5)}, 1.0),  # identical embeddings
    ({"answer_in_reference": [[]], "reference_in_answer": [[]], "weights": (1.0, 0.0), "compat": "ragas"}, 1.0),
])
def test_answer_correctness_reproduces_ragas_mock_llm_tests(arguments, expected):
    assert float(es.answer_correctness(**arguments)) == expected
    if "compat" not in arguments:  # the F-beta path (mode/beta given) gives the same numbers at beta 1
        assert float(answer_correctness_fbeta(**arguments)) == expected
