"""Answer metrics: is the answer grounded, correct and on topic, from per-request judgements.

- :func:`faithfulness` (RAGAS): answer claims supported by the retrieved context;
- :func:`answer_correctness` (RAGAS): F1 (or another mode) of claim overlap with the reference,
  optionally weighted with answer similarity;
- :func:`factual_correctness` (RAGAS ``FactualCorrectness``): claim-level precision, recall or
  F-beta against the reference;
- :func:`answer_relevancy` (RAGAS): cosine similarity of questions generated from the answer with
  the real question, with a documented rule for noncommittal answers;
- :func:`answer_similarity` (RAGAS): embedding cosine of answer and reference (optionally
  thresholded);
- :func:`aspect_critique` (RAGAS ``AspectCritic``): a user-defined criterion, majority of votes.

The citation metrics of ALCE are in :mod:`evalsuite.metrics.citation`. Judgement lists and the
undefined cases are described in :mod:`evalsuite.metrics.judgement_lists`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError
from ..score import Score
from ..utils.checks import check_compat
from .judgement_lists import (
    JudgementLists, _lists_of_floats, _params, _share_metric, _texts_or_judgements, as_judgement_lists,
    as_unit_interval,
)

__all__ = [
    "faithfulness",
    "answer_correctness",
    "factual_correctness",
    "answer_relevancy",
    "answer_similarity",
    "aspect_critique",
    "answer_correctness_values",
    "answer_correctness_fbeta",
    "fbeta_values",
    "FACTUAL_MODES",
]


FACTUAL_MODES = ("f1", "precision", "recall")


def faithfulness(answer_claims_supported, *, compat: str | None = None) -> Score:
    """Faithfulness (RAGAS): answer claims supported by the retrieved context / answer claims.

    Parameters
    ----------
    answer_claims_supported : sequence of list of (bool | None), length n_requests
        Per request, per claim of the answer: can it be inferred from the context. None inside
        a list: not judged (left out, counted in ``params["unjudged"]``, never read as False).
    compat : None or "ragas", keyword-only
        Same numbers either way (RAGAS returns NaN without statements, as here).

    Returns
    -------
    Score
        Mean over requests with a judged answer claim; ``.per_query``, shape (n_requests,),
        undefined (NaN) for a request without one; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list, ``compat``
        other than None or "ragas".

    References
    ----------
    RAGAS ``Faithfulness`` (``metrics/_faithfulness.py``); Es et al. 2024, "RAGAS: Automated
    Evaluation of Retrieval Augmented Generation".

    Examples
    --------
    >>> score = faithfulness([[True, True, None, False]])  # None left out: 2 of 3 judged claims supported
    >>> score
    Score(faithfulness=0.6667, n=1, coverage=1.000)
    >>> score.params["unjudged"]
    1
    """
    check_compat(compat)
    return _share_metric("faithfulness", answer_claims_supported, "answer_claims_supported",
                         "supported answer claims / answer claims", compat=compat)


def answer_correctness_values(in_reference: pa.ListArray, in_answer: pa.ListArray, similarity: np.ndarray | None,
                              weights: tuple[float, float], compat: str | None) -> tuple[np.ndarray, dict]:
    """Per-request answer correctness (see :func:`answer_correctness`) and counts for params."""
    answer = JudgementLists(in_reference)
    reference = JudgementLists(in_answer)
    tp = answer.total
    fp = answer.judged - answer.total
    fn = reference.judged - reference.total
    n = answer.n
    f1 = np.full(n, np.nan)
    known = ~answer.missing & ~reference.missing
    claims = tp + fp + fn
    with_claims = known & (claims > 0)
    f1[with_claims] = 2 * tp[with_claims] / (2 * tp[with_claims] + fp[with_claims] + fn[with_claims])
    if compat == "ragas":
        f1[known & (claims == 0)] = 1.0  # RAGAS: no statements on either side scores 1.0
    if similarity is None:
        values = f1
    else:
        w_f1, w_sim = weights
        values = (w_f1 * f1 + w_sim * similarity) / (w_f1 + w_sim)  # NaN similarity -> NaN
    counts = {"unjudged": answer.unjudged + reference.unjudged,
              "requests_without_judgements": int((answer.missing | reference.missing).sum())}
    return values, counts


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
    in_ref = as_judgement_lists(answer_in_reference, "answer_in_reference")
    in_ans = as_judgement_lists(reference_in_answer, "reference_in_answer")
    if len(in_ref) != len(in_ans):
        raise EvalSuiteError(f"answer_in_reference has {len(in_ref)} requests, reference_in_answer {len(in_ans)}",
                             field="reference_in_answer", value=len(in_ans))
    sim = None
    if similarity is not None:
        sim = as_unit_interval(similarity, "similarity", len(in_ref))
    values, counts = answer_correctness_values(in_ref, in_ans, sim, (w_f1, w_sim), compat)
    return Score(values, _params("answer_correctness", None, weights=(w_f1, w_sim), compat=compat,
                                 similarity="given" if sim is not None else "none: F1 alone", **counts))


@_texts_or_judgements
def answer_relevancy(similarities, noncommittal=None, *, compat: str | None = None) -> Score:
    """Answer relevancy (RAGAS): mean cosine similarity of questions generated from the answer
    with the real question; 0 for an answer the judge calls noncommittal.

    The judge generates ``strictness`` questions (default 3) the answer would answer, and for
    each says whether the answer is noncommittal (evasive, "I don't know"). Our rule: the answer
    is noncommittal, and scores 0, when the **majority** of the judged flags say so; otherwise
    the score is the mean similarity over all generated questions, and flags outvoted this way are
    counted in ``params["noncommittal_flags_outvoted"]`` (never dropped silently). RAGAS 0.1
    zeroed the score on any single flag (``np.any``), current RAGAS only on unanimous flags
    (``np.all``): ``compat="ragas"`` follows current RAGAS.

    Parameters
    ----------
    similarities : sequence of list of (float in 0..1 | None), length n_requests
        Per request, per generated question: cosine similarity of its embedding with the
        question's (negative cosines written as 0, as the embedding judge does). None inside:
        the question was not generated (left out); an empty list or None: undefined.
    noncommittal : sequence of list of (bool | None), optional
        Per request, per generated question: the judge's noncommittal flag (same length as that
        request's similarities), or one flag for the whole answer (what :class:`RagasJudge`
        asks for). None: no flags (nothing is noncommittal). A noncommittal answer scores 0
        even without generated questions (an empty answer).
    compat : None or "ragas", keyword-only
        "ragas": 0 only when every judged flag is set (``np.all``).

    Returns
    -------
    Score
        Mean over requests with a similarity; ``.per_query`` shape (n_requests,), NaN where
        undefined; ``params``: ``noncommittal_requests``, ``noncommittal_flags_outvoted``, coverage.

    Raises
    ------
    EvalSuiteError
        A similarity outside 0..1, a flag that is not True/False/None, the two inputs of
        different lengths (per request or overall), ``compat`` other than None or "ragas".

    References
    ----------
    Es et al., "RAGAS: Automated Evaluation of Retrieval Augmented Generation", EACL 2024 demo,
    answer relevance; RAGAS ``ResponseRelevancy`` (``metrics/_answer_relevance.py``).

    Examples
    --------
    >>> answer_relevancy([[0.9, 0.7, 0.8]])  # (0.9 + 0.7 + 0.8) / 3
    Score(answer_relevancy=0.8000, n=1, coverage=1.000)
    >>> s = answer_relevancy([[1.0, 0.5, 0.75], [0.6, 0.5, 0.4]],
    ...                      [[True, False, False], [True, True, False]])
    >>> s.per_query.tolist()  # 1 flag of 3: outvoted, mean kept; 2 of 3: noncommittal, 0
    [0.75, 0.0]
    >>> s.params["noncommittal_flags_outvoted"], s.params["noncommittal_requests"]
    (1, 1)
    >>> answer_relevancy([[0.6, 0.5, 0.4]], [[True, True, False]], compat="ragas").per_query.tolist()
    [0.5]
    """
    check_compat(compat)
    sims = _lists_of_floats(similarities, "similarities")
    flags = None
    if noncommittal is not None:
        flags = as_judgement_lists(noncommittal, "noncommittal").to_pylist()
        if len(flags) != len(sims):
            raise EvalSuiteError(f"similarities has {len(sims)} requests, noncommittal {len(flags)}",
                                 field="noncommittal", value=len(flags))
    values = np.full(len(sims), np.nan)
    noncommittal_requests = outvoted = 0
    for i, row in enumerate(sims):
        if row is None:
            continue
        judged = [s for s in row if s is not None]
        votes = []
        if flags is not None and flags[i] is not None:
            if len(flags[i]) not in (1, len(row)):
                raise EvalSuiteError(f"{len(flags[i])} flags for {len(row)} generated questions (give one per "
                                     "question, or one for the answer)", field=f"noncommittal[{i}]", value=len(flags[i]))
            votes = [f for f in flags[i] if f is not None]
        n_set = sum(votes)
        if compat == "ragas":
            is_noncommittal = bool(votes) and n_set == len(votes)
        else:
            is_noncommittal = n_set * 2 > len(votes)
        if not judged and not is_noncommittal:
            continue  # no generated question: undefined
        if is_noncommittal:
            values[i] = 0.0
            noncommittal_requests += 1
        else:
            values[i] = float(np.mean(judged))
            outvoted += n_set
    return Score(values, _params("answer_relevancy", None, compat=compat, noncommittal_requests=noncommittal_requests,
                                 noncommittal_flags_outvoted=outvoted,
                                 definition="mean cosine of generated questions with the question; 0 when the "
                                            "majority of flags say noncommittal" + (" (ragas: all flags)" if compat else "")))


@_texts_or_judgements
def answer_similarity(similarity, *, threshold: float | None = None) -> Score:
    """Answer similarity (RAGAS semantic similarity): embedding cosine of answer and reference.

    Parameters
    ----------
    similarity : sequence of (float in 0..1 | None), length n_requests
        Per request the cosine of the answer's and the reference's embeddings (the
        ``answer_similarity`` field the embedding judge fills; None: not judged).
    threshold : float in 0..1 or None, keyword-only
        When given, each value becomes 1 if it is >= threshold, else 0 (RAGAS ``threshold``).

    Returns
    -------
    Score
        Mean over judged requests; ``params``: threshold, coverage.

    Raises
    ------
    EvalSuiteError
        A value outside 0..1, or a threshold outside 0..1.

    References
    ----------
    RAGAS ``SemanticSimilarity`` / ``AnswerSimilarity`` (``metrics/_answer_similarity.py``);
    Risch et al., "Semantic Answer Similarity for Evaluating Question Answering Models", 2021.

    Examples
    --------
    >>> answer_similarity([0.9, 0.6, None])  # (0.9 + 0.6) / 2, the None request left out
    Score(answer_similarity=0.7500, n=3, coverage=0.667)
    >>> answer_similarity([0.9, 0.6], threshold=0.7).per_query.tolist()
    [1.0, 0.0]
    """
    values = as_unit_interval(similarity, "similarity", len(similarity) if hasattr(similarity, "__len__") else 0)
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 <= threshold <= 1:
            raise EvalSuiteError("threshold must be a number in 0..1", field="threshold", value=threshold)
        values = np.where(np.isnan(values), np.nan, (values >= threshold).astype(float))
    return Score(values, _params("answer_similarity", None, threshold=threshold,
                                 definition="cosine of answer and reference embeddings"
                                            + (f", 1 if >= {threshold}" if threshold is not None else "")))


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
    answer = JudgementLists(as_judgement_lists(answer_in_reference, "answer_in_reference"))
    if reference_in_answer is None:
        if mode != "precision":
            raise EvalSuiteError(f"mode {mode!r} needs reference_in_answer (the reference's claims)",
                                 field="reference_in_answer", value=None)
        reference = None
    else:
        reference = JudgementLists(as_judgement_lists(reference_in_answer, "reference_in_answer"))
        if reference.n != answer.n:
            raise EvalSuiteError(f"answer_in_reference has {answer.n} requests, reference_in_answer {reference.n}",
                                 field="reference_in_answer", value=reference.n)
    tp = answer.total
    fp = answer.judged - answer.total
    fn = np.zeros(answer.n) if reference is None else reference.judged - reference.total
    known = ~answer.missing if reference is None else ~answer.missing & ~reference.missing
    if mode == "precision":
        defined = known & (tp + fp > 0)
    elif mode == "recall":
        defined = known & (tp + fn > 0)
    else:
        defined = known & (tp + fp + fn > 0)
    values = fbeta_values(tp, fp, fn, defined, mode, beta)
    unjudged = answer.unjudged + (0 if reference is None else reference.unjudged)
    return Score(values, _params("factual_correctness", None, mode=mode, beta=beta, unjudged=unjudged,
                                 definition=f"claim-level {mode}" + (f" (beta {beta:g})" if mode == "f1" else "")))


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
    factual = factual_correctness(answer_in_reference, reference_in_answer, mode=mode, beta=beta)
    values = np.asarray(factual.per_query, dtype=float).copy()
    if compat == "ragas" and mode == "f1" and reference_in_answer is not None:
        a = as_judgement_lists(answer_in_reference, "answer_in_reference")
        r = as_judgement_lists(reference_in_answer, "reference_in_answer")
        empty = ~np.asarray(a.is_null()) & ~np.asarray(r.is_null())
        claims = JudgementLists(a).judged + JudgementLists(r).judged
        values[empty & (claims == 0)] = 1.0  # RAGAS: no statements on either side scores 1.0
    sim = None
    if similarity is not None:
        sim = as_unit_interval(similarity, "similarity", len(values))
        values = (w_f * values + w_s * sim) / (w_f + w_s)
    return Score(values, _params("answer_correctness", None, weights=(w_f, w_s), compat=compat, mode=mode, beta=beta,
                                 similarity="given" if sim is not None else f"none: {mode} alone",
                                 unjudged=factual.params["unjudged"]))


@_texts_or_judgements
def aspect_critique(votes, *, name: str | None = None) -> Score:
    """Aspect critique (RAGAS ``AspectCritic``): a yes/no verdict on a user-defined criterion,
    decided per request by the majority of the judge's votes; per system the share of yes.

    Parameters
    ----------
    votes : sequence of list of (bool | None), length n_requests
        Per request, the ``strictness`` votes (an odd number; the LLM judge asks that many
        times). None votes (missing) are left out; a tie among the rest is undefined.
    name : str, keyword-only, optional
        The criterion's name (kept in params).

    Returns
    -------
    Score
        Share of requests judged yes, over the requests with a decided majority; per request 1
        or 0 (NaN: no votes or a tie); ``params``: ``ties``, ``unjudged``, name.

    Raises
    ------
    EvalSuiteError
        A vote that is not True/False/None.

    References
    ----------
    RAGAS ``AspectCritic`` (``metrics/_aspect_critic.py``): strictness = number of votes,
    majority decides; Es et al., EACL 2024 demo.

    Examples
    --------
    >>> s = aspect_critique([[True, True, False], [False, False, True], [True, None, False]])
    >>> s.per_query.tolist()  # 2 of 3 yes; 1 of 3; a tie once the missing vote is left out
    [1.0, 0.0, nan]
    >>> s, s.params["ties"]
    (Score(aspect_critique=0.5000, n=3, coverage=0.667), 1)
    """
    lists = JudgementLists(as_judgement_lists(votes, "votes"))
    yes = lists.total
    no = lists.judged - lists.total
    values = np.full(lists.n, np.nan)
    decided = (yes != no) & ~lists.missing
    values[decided] = (yes[decided] > no[decided]).astype(float)
    ties = int(((yes == no) & (lists.judged > 0) & ~lists.missing).sum())
    return Score(values, _params("aspect_critique", lists, criterion=name, ties=ties,
                                 definition="majority of the judge's votes; share of requests judged yes"))
