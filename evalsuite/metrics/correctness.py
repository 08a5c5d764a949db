"""Correctness against the reference answer, from claim-level judgements (RAGAS).

- :func:`answer_correctness` (RAGAS ``AnswerCorrectness``): F1 (or another mode) of claim overlap
  with the reference, optionally weighted with answer similarity;
- :func:`factual_correctness` (RAGAS ``FactualCorrectness``): claim-level precision, recall or
  F-beta against the reference.

TP = answer claims supported by the reference, FP = the other answer claims, FN = reference claims
the answer misses. A claim list whose every verdict is missing (None) says nothing about its side:
a metric that needs that side (F1 and recall need the reference's claims, every mode the
answer's) is undefined for the request, never "no false negative" - RAGAS's FactualCorrectness
and AnswerCorrectness have one NLI call per side, and a call that fails leaves the sample NaN.
Each metric's per-request kernel (``<metric>_values``) is what :func:`evalsuite.evaluate_records`
runs on records; its registry entry (``METRICS[name]``) names it with the list function.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import EvalSuiteError
from ..score import Score
from ..utils.checks import check_compat
from .judgement_lists import JudgementLists, _params, _texts_or_judgements, as_judgement_lists, unit_values

__all__ = [
    "answer_correctness",
    "factual_correctness",
    "answer_correctness_values",
    "factual_correctness_values",
    "answer_correctness_fbeta",
    "fbeta_values",
    "FACTUAL_MODES",
]


FACTUAL_MODES = ("f1", "precision", "recall")


def _claim_lists(answer_in_reference, reference_in_answer) -> tuple[JudgementLists, JudgementLists | None]:
    """The two claim lists of answer correctness and factual correctness, checked and aligned."""
    answer = JudgementLists(as_judgement_lists(answer_in_reference, "answer_in_reference"))
    if reference_in_answer is None:
        return answer, None
    reference = JudgementLists(as_judgement_lists(reference_in_answer, "reference_in_answer"))
    if reference.n != answer.n:
        raise EvalSuiteError(f"answer_in_reference has {answer.n} requests, reference_in_answer {reference.n}",
                             field="reference_in_answer", value=reference.n)
    return answer, reference


def _known(lists: JudgementLists) -> np.ndarray:
    """Requests whose side is known: a list that is not null and not all missing verdicts."""
    return ~lists.missing & ~lists.unknown


def _f1_correctness(answer: JudgementLists, reference: JudgementLists, similarity: np.ndarray | None,
                    weights: tuple[float, float], compat: str | None) -> np.ndarray:
    """Per-request answer correctness with the factual part F1 (see :func:`answer_correctness`)."""
    tp = answer.total
    fp = answer.judged - answer.total
    fn = reference.judged - reference.total
    f1 = np.full(answer.n, np.nan)
    known = _known(answer) & _known(reference)
    claims = tp + fp + fn
    with_claims = known & (claims > 0)
    f1[with_claims] = 2 * tp[with_claims] / (2 * tp[with_claims] + fp[with_claims] + fn[with_claims])
    if compat == "ragas":
        f1[known & (claims == 0)] = 1.0  # RAGAS: no statements on either side scores 1.0
    if similarity is None:
        return f1
    w_f1, w_sim = weights
    return (w_f1 * f1 + w_sim * similarity) / (w_f1 + w_sim)  # NaN similarity -> NaN


def answer_correctness_values(answer_in_reference, reference_in_answer, similarity=None, *,
                              compat: str | None = None, weights=(0.75, 0.25), mode: str = "f1",
                              beta: float = 1.0) -> np.ndarray:
    """Per-request answer correctness (the kernel of ``METRICS["answer_correctness"]``): the
    arithmetic of :func:`answer_correctness`, one float per request (NaN where undefined).

    >>> answer_correctness_values([[True, False], [True]], [[True, False, False], [None]], [0.5, 0.9]).round(4).tolist()
    [0.425, nan]
    """
    return answer_correctness(answer_in_reference, reference_in_answer, similarity, weights, compat=compat,
                              mode=mode, beta=beta).per_query


def answer_correctness(answer_in_reference, reference_in_answer, similarity=None, weights=(0.75, 0.25), *,
                       compat: str | None = None, mode: str = "f1", beta: float = 1.0) -> Score:
    """Answer correctness (RAGAS): weighted F1 of claim overlap with the reference, plus similarity.

    TP = answer claims supported by the reference, FP = the other answer claims, FN = reference
    claims the answer misses; F1 = 2 TP / (2 TP + FP + FN). The score is
    ``(w1 * F1 + w2 * similarity) / (w1 + w2)`` with ``weights = (w1, w2)`` (RAGAS: 0.75, 0.25);
    without ``similarity`` it is F1 alone (``params["similarity"]`` says so).

    Parameters
    ----------
    answer_in_reference : sequence of list of (bool | None), length n_requests
        Per answer claim: supported by the reference (TP) or not (FP).
    reference_in_answer : sequence of list of (bool | None), length n_requests
        Per reference claim: covered by the answer, or missed (FN).
    similarity : sequence of (float in 0..1 | None), length n_requests, optional
        Semantic similarity of answer and reference per request (None entries: undefined).
    weights : (float, float)
        Weights of F1 and similarity, non-negative, not both 0 (default 0.75, 0.25).
    compat : None or "ragas", keyword-only
        "ragas" scores a request with no claims on either side F1 = 1.0, as RAGAS does;
        otherwise it is undefined.
    mode : {"f1", "precision", "recall"}, keyword-only
        The factual part, as RAGAS ``FactualCorrectness`` offers (see
        :func:`factual_correctness`); default F1.
    beta : float > 0, keyword-only
        F-beta instead of F1 in mode "f1" (beta > 1 weighs recall more); default 1.

    Returns
    -------
    Score
        Mean over requests where the score is defined; ``.per_query``, shape (n_requests,),
        NaN where a request has no claims on either side or no similarity; ``params``:
        weights, ``similarity`` ("given" or "none: F1 alone"), compat, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        ``weights`` not two finite non-negative numbers, or both 0; the two judgement lists of
        different lengths; ``similarity`` of another length or outside 0..1; a label that is
        not True/False/None; ``compat`` other than None or "ragas".

    References
    ----------
    RAGAS ``AnswerCorrectness`` (``metrics/_answer_correctness.py``); Es et al., EACL 2024 demo.

    Examples
    --------
    >>> # TP 1, FP 1, FN 2: F1 = 2 / (2 + 1 + 2) = 0.4; with similarity 0.75 * 0.4 + 0.25 * 0.5 = 0.425
    >>> answer_correctness([[True, False]], [[True, False, False]], similarity=[0.5])
    Score(answer_correctness=0.4250, n=1, coverage=1.000)
    >>> answer_correctness([[True, False]], [[True, False, False]])  # F1 alone
    Score(answer_correctness=0.4000, n=1, coverage=1.000)
    >>> # factual part = precision TP / (TP + FP) = 1/2: 0.75 * 0.5 + 0.25 * 0.5 = 0.5
    >>> answer_correctness([[True, False]], [[True, False, False]], similarity=[0.5], mode="precision")
    Score(answer_correctness=0.5000, n=1, coverage=1.000)
    """
    check_compat(compat)
    if (mode, beta) != ("f1", 1.0):
        return answer_correctness_fbeta(answer_in_reference, reference_in_answer, similarity, weights,
                                        compat=compat, mode=mode, beta=beta)
    try:
        w_f1, w_sim = (float(w) for w in weights)
    except (TypeError, ValueError):
        raise EvalSuiteError("weights must be two numbers (F1, similarity)", field="weights", value=weights) from None
    if w_f1 < 0 or w_sim < 0 or w_f1 + w_sim == 0 or not (math.isfinite(w_f1) and math.isfinite(w_sim)):
        raise EvalSuiteError("weights must be non-negative and not both 0", field="weights", value=weights)
    if reference_in_answer is None:
        raise EvalSuiteError("answer correctness needs reference_in_answer (the reference's claims)",
                             field="reference_in_answer", value=None)
    answer, reference = _claim_lists(answer_in_reference, reference_in_answer)
    sim = None
    if similarity is not None:
        sim = _similarity(similarity, answer.n)
    values = _f1_correctness(answer, reference, sim, (w_f1, w_sim), compat)
    return Score(values, _params("answer_correctness", None, weights=(w_f1, w_sim), compat=compat,
                                 similarity="given" if sim is not None else "none: F1 alone",
                                 unjudged=answer.unjudged + reference.unjudged,
                                 requests_without_judgements=int((~_known(answer) | ~_known(reference)).sum())))


def _similarity(similarity, n: int) -> np.ndarray:
    """The similarity term: one number in 0..1 per request (None / null: undefined)."""
    values = unit_values(similarity, "similarity")
    if len(values) != n:
        raise EvalSuiteError(f"expected {n} values, one per request, got {len(values)}", field="similarity",
                             value=len(values))
    return values


def _check_mode_beta(mode: str, beta) -> float:
    if mode not in FACTUAL_MODES:
        raise EvalSuiteError(f"mode must be one of {', '.join(FACTUAL_MODES)}", field="mode", value=mode)
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not math.isfinite(beta) or beta <= 0:
        raise EvalSuiteError("beta must be a finite number > 0", field="beta", value=beta)
    return float(beta)


def fbeta_values(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, defined: np.ndarray, mode: str = "f1",
                 beta: float = 1.0) -> np.ndarray:
    """Per-request precision, recall or F-beta from claim counts (NaN where not ``defined``).

    precision = TP / (TP + FP), recall = TP / (TP + FN), F-beta = (1 + b^2) TP /
    ((1 + b^2) TP + b^2 FN + FP); an empty denominator gives 0 (``mode="f1"`` with beta 1 is
    :func:`evalsuite.answer_correctness`'s F1 = 2 TP / (2 TP + FP + FN)).

    >>> fbeta_values(np.array([1.0]), np.array([1.0]), np.array([2.0]), np.array([True]), "f1", 2.0).round(4).tolist()
    [0.3571]
    """
    b2 = beta * beta
    if mode == "precision":
        num, den = tp, tp + fp
    elif mode == "recall":
        num, den = tp, tp + fn
    else:
        num, den = (1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp
    out = np.full(len(tp), np.nan)
    ok = defined & (den > 0)
    out[defined] = 0.0
    out[ok] = num[ok] / den[ok]
    return out


@_texts_or_judgements
def factual_correctness(answer_in_reference, reference_in_answer=None, *, mode: str = "f1",
                        beta: float = 1.0) -> Score:
    """Factual correctness (RAGAS): precision, recall or F-beta of the answer's claims against
    the reference's.

    TP = answer claims supported by the reference, FP = the other answer claims, FN = reference
    claims the answer misses. ``mode="precision"``: TP / (TP + FP) (needs only the answer's
    claims); ``"recall"``: TP / (TP + FN); ``"f1"``: F-beta = (1 + b^2) TP / ((1 + b^2) TP +
    b^2 FN + FP), beta 1 by default (beta > 1 weighs recall more).

    Parameters
    ----------
    answer_in_reference : sequence of list of (bool | None), length n_requests
        Per answer claim: supported by the reference (TP) or not (FP).
    reference_in_answer : sequence of list of (bool | None), length n_requests, optional
        Per reference claim: covered by the answer or missed (FN); needed for recall and F-beta.
    mode : {"f1", "precision", "recall"}, keyword-only
    beta : float > 0, keyword-only

    Returns
    -------
    Score
        Mean over requests where the mode's claims exist; undefined (NaN) for a request
        without claims on the sides it needs; ``params``: mode, beta, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        An unknown mode, beta <= 0, ``reference_in_answer`` missing for recall or F-beta, the
        lists of different lengths, a label that is not True/False/None.

    References
    ----------
    RAGAS ``FactualCorrectness`` (``metrics/_factual_correctness.py``, modes precision / recall
    / f1, ``beta``); van Rijsbergen, Information Retrieval, 1979 (F-measure).

    Examples
    --------
    >>> # TP 1, FP 1, FN 2: precision 1/2, recall 1/3, F1 = 2 / (2 + 1 + 2) = 0.4
    >>> [float(factual_correctness([[True, False]], [[True, False, False]], mode=m))
    ...  for m in ("precision", "recall", "f1")]
    [0.5, 0.3333333333333333, 0.4]
    >>> float(factual_correctness([[True, False]], [[True, False, False]], beta=2.0))  # 5 / (5 + 8 + 1)
    0.35714285714285715
    """
    beta = _check_mode_beta(mode, beta)
    if reference_in_answer is None and mode != "precision":
        raise EvalSuiteError(f"mode {mode!r} needs reference_in_answer (the reference's claims)",
                             field="reference_in_answer", value=None)
    answer, reference = _claim_lists(answer_in_reference, reference_in_answer)
    values = _factual(answer, reference, mode, beta)
    unjudged = answer.unjudged + (0 if reference is None else reference.unjudged)
    return Score(values, _params("factual_correctness", None, mode=mode, beta=beta, unjudged=unjudged,
                                 definition=f"claim-level {mode}" + (f" (beta {beta:g})" if mode == "f1" else "")))


def _factual(answer: JudgementLists, reference: JudgementLists | None, mode: str, beta: float) -> np.ndarray:
    """Per-request precision, recall or F-beta of the claim lists. Precision needs the answer's
    claims only; recall and F-beta the reference's too: a side that is null or all missing
    verdicts leaves the request undefined."""
    tp = answer.total
    fp = answer.judged - answer.total
    fn = np.zeros(answer.n) if reference is None else reference.judged - reference.total
    known = _known(answer)
    if mode != "precision":
        known &= _known(reference)
    if mode == "precision":
        defined = known & (tp + fp > 0)
    elif mode == "recall":
        defined = known & (tp + fn > 0)
    else:
        defined = known & (tp + fp + fn > 0)
    return fbeta_values(tp, fp, fn, defined, mode, beta)


def factual_correctness_values(answer_in_reference, reference_in_answer=None, *, compat: str | None = None,
                               mode: str = "f1", beta: float = 1.0) -> np.ndarray:
    """Per-request factual correctness (the kernel of ``METRICS["factual_correctness"]``).

    >>> factual_correctness_values([[True, False], [True]], [[True, False, False], [None, None]]).tolist()
    [0.4, nan]
    """
    return factual_correctness(answer_in_reference, reference_in_answer, mode=mode, beta=beta).per_query


def _weights(weights) -> tuple[float, float]:
    try:
        w_f, w_s = (float(w) for w in weights)
    except (TypeError, ValueError):
        raise EvalSuiteError("weights must be two numbers (factual, similarity)", field="weights", value=weights) from None
    if w_f < 0 or w_s < 0 or w_f + w_s == 0 or not (math.isfinite(w_f) and math.isfinite(w_s)):
        raise EvalSuiteError("weights must be non-negative and not both 0", field="weights", value=weights)
    return w_f, w_s


def answer_correctness_fbeta(answer_in_reference, reference_in_answer, similarity=None, weights=(0.75, 0.25), *,
                             compat: str | None = None, mode: str = "f1", beta: float = 1.0) -> Score:
    """Answer correctness with the factual part in another mode or beta (what
    :func:`evalsuite.answer_correctness` calls for ``mode``/``beta`` other than F1).

    score = (w1 * factual + w2 * similarity) / (w1 + w2), factual = :func:`factual_correctness`.

    Raises
    ------
    EvalSuiteError
        As :func:`evalsuite.answer_correctness` and :func:`factual_correctness`.

    Examples
    --------
    >>> # F2 = 5 TP / (5 TP + 4 FN + FP) = 5 / 14; 0.75 * 5/14 + 0.25 * 0.5
    >>> round(float(answer_correctness_fbeta([[True, False]], [[True, False, False]], [0.5], beta=2.0)), 6)
    0.392857
    """
    check_compat(compat)
    w_f, w_s = _weights(weights)
    beta = _check_mode_beta(mode, beta)
    answer, reference = _claim_lists(answer_in_reference, reference_in_answer)
    if reference is None and mode != "precision":
        raise EvalSuiteError(f"mode {mode!r} needs reference_in_answer (the reference's claims)",
                             field="reference_in_answer", value=None)
    values = _factual(answer, reference, mode, beta)
    if compat == "ragas" and mode == "f1" and reference is not None:
        # RAGAS: no statements on either side (two empty lists, not missing verdicts) scores 1.0
        empty = ~answer.missing & ~reference.missing & (answer.lengths + reference.lengths == 0)
        values[empty] = 1.0
    sim = None
    if similarity is not None:
        sim = _similarity(similarity, answer.n)
        values = (w_f * values + w_s * sim) / (w_f + w_s)
    unjudged = answer.unjudged + (0 if reference is None else reference.unjudged)
    return Score(values, _params("answer_correctness", None, weights=(w_f, w_s), compat=compat, mode=mode, beta=beta,
                                 similarity="given" if sim is not None else f"none: {mode} alone",
                                 unjudged=unjudged))
