"""The rest of the RAGAS metric family, from per-request judgements.

:mod:`evalsuite.rag` holds context precision, context recall, context relevance (ARES),
faithfulness and answer correctness. This module adds the other metrics of the RAGAS metric
reference, named as RAGAS names them:

- :func:`answer_relevancy`: cosine similarity of questions generated from the answer with the
  real question, with a documented rule for noncommittal answers;
- :func:`answer_similarity`: embedding cosine of answer and reference (optionally thresholded);
- :func:`factual_correctness`: claim-level precision, recall or F-beta of the answer against the
  reference (RAGAS ``FactualCorrectness``; :func:`evalsuite.answer_correctness` takes the same
  ``mode`` and ``beta``);
- :func:`context_entity_recall`: |CN ∩ GN| / |GN| over the reference's entities;
- :func:`context_utilization`: context precision with the answer in place of the reference;
- :func:`context_relevancy`: RAGAS's older sentence-level context relevancy;
- :func:`aspect_critique`: a user-defined criterion, majority of ``strictness`` votes.

Every function returns a :class:`~evalsuite.score.Score` (mean over the requests where the
metric is defined, per-request values with NaN where undefined, coverage in ``params``). A
``None`` inside a judgement list is "not judged": left out and counted, never read as False.
The record fields each metric reads are in :data:`RAGAS_FIELDS`; :func:`per_record_values`
computes them all for :func:`evalsuite.evaluate_records`.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from .errors import EvalSuiteError
from .utils.checks import check_compat
from .rag import _Lists, _params, as_judgement_lists, as_unit_interval, context_precision_values
from .score import Score

__all__ = [
    "answer_relevancy",
    "answer_similarity",
    "factual_correctness",
    "context_entity_recall",
    "context_utilization",
    "context_relevancy",
    "aspect_critique",
    "fbeta_values",
    "answer_correctness_fbeta",
    "normalize_entity",
    "entities_found",
    "RAGAS_FIELDS",
    "CRITIQUE_PREFIX",
    "FACTUAL_MODES",
    "per_record_values",
    "ragas_convention",
]

#: Record fields (beyond :mod:`evalsuite.records`'s) that the metrics of this module read.
RAGAS_FIELDS = {
    "generated_questions": "texts",          # questions generated from the answer (display)
    "question_similarities": "grades",       # per generated question: cosine with the question (0..1)
    "answer_noncommittal": "labels",         # per generated question: the judge called the answer noncommittal
    "reference_entities": "texts",           # entities of the reference (GN)
    "context_entities": "texts",             # entities of the retrieved contexts (CN)
    "reference_entities_in_contexts": "labels",  # per reference entity: found in the contexts
    "context_useful_for_answer": "labels",   # per chunk: useful for arriving at the answer
    "context_sentences_relevant": "labels",  # per context sentence: relevant to the question
}
#: Columns named ``critique_<name>`` hold the votes of aspect critique ``<name>`` (labels).
CRITIQUE_PREFIX = "critique_"
FACTUAL_MODES = ("f1", "precision", "recall")


def _texts_or_judgements(function):
    """Let a list function take raw texts plus a judge: ``f(texts=[...], judge=RagasJudge(...))``
    judges the texts (:func:`evalsuite.ragas_judge.score_texts`) and scores the judgements."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, texts=None, judge=None, **kwargs):
        if texts is None and judge is None:
            return function(*args, **kwargs)
        if args or texts is None or judge is None:
            raise EvalSuiteError("give judgements, or texts= with judge=", field="texts" if texts is None else "judge")
        from .ragas_judge import score_texts

        return score_texts(function.__name__, texts, judge, **kwargs)

    wrapper.__doc__ = (function.__doc__ or "") + _TEXTS_NOTE
    return wrapper


_TEXTS_NOTE = """
    Notes
    -----
    From raw texts: ``texts=`` (Records, or one dict per request with question, answer,
    contexts, reference) and ``judge=`` (:class:`evalsuite.ragas_judge.RagasJudge`) judge them
    first, then score the judgements with the options given.
"""


def _lists_of_floats(values, arg: str) -> list:
    """Per request a list of floats in 0..1 (None entries kept), or None for the request."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise EvalSuiteError("expected one list of numbers per request", field=arg, value=type(values).__name__)
    out = []
    for i, item in enumerate(values):
        if item is None:
            out.append(None)
            continue
        if isinstance(item, (str, bytes, bool, numbers.Number)) or not isinstance(item, (Sequence, np.ndarray)):
            raise EvalSuiteError("each request needs a list of numbers", field=f"{arg}[{i}]", value=item)
        row = []
        for j, v in enumerate(item):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                row.append(None)
            elif isinstance(v, numbers.Real) and 0.0 <= float(v) <= 1.0:
                row.append(float(v))
            else:
                raise EvalSuiteError("a similarity must be a number in 0..1", field=f"{arg}[{i}][{j}]", value=v)
        out.append(row)
    return out


# ----------------------------------------------------------------------------------------------
# Answer relevancy and answer similarity.


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


# ----------------------------------------------------------------------------------------------
# Factual correctness: precision, recall, F-beta of claims.


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
    answer = _Lists(as_judgement_lists(answer_in_reference, "answer_in_reference"))
    if reference_in_answer is None:
        if mode != "precision":
            raise EvalSuiteError(f"mode {mode!r} needs reference_in_answer (the reference's claims)",
                                 field="reference_in_answer", value=None)
        reference = None
    else:
        reference = _Lists(as_judgement_lists(reference_in_answer, "reference_in_answer"))
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
        claims = _Lists(a).judged + _Lists(r).judged
        values[empty & (claims == 0)] = 1.0  # RAGAS: no statements on either side scores 1.0
    sim = None
    if similarity is not None:
        sim = as_unit_interval(similarity, "similarity", len(values))
        values = (w_f * values + w_s * sim) / (w_f + w_s)
    return Score(values, _params("answer_correctness", None, weights=(w_f, w_s), compat=compat, mode=mode, beta=beta,
                                 similarity="given" if sim is not None else f"none: {mode} alone",
                                 unjudged=factual.params["unjudged"]))


# ----------------------------------------------------------------------------------------------
# Context metrics.


def normalize_entity(text: str) -> str:
    """An entity as compared: NFKC, case-folded, inner whitespace collapsed, outer punctuation stripped.

    >>> normalize_entity("  The  EIFFEL Tower. ")
    'the eiffel tower'
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(".,;:!?\"'()[]{}")


def entities_found(reference_entities, context_entities, *, compat: str | None = None) -> list:
    """Per request, per distinct reference entity: is it among the context entities.

    Entities are compared after :func:`normalize_entity` (``compat="ragas"``: as exact strings,
    as RAGAS's set intersection does). Duplicates of a reference entity count once (RAGAS takes
    sets). A request with either list None gives None.

    >>> entities_found([["Paris", "France", "paris"]], [["PARIS", "Seine"]])
    [[True, False]]
    >>> entities_found([["Paris", "France"]], [["PARIS", "Seine"]], compat="ragas")
    [[False, False]]
    """
    check_compat(compat)
    key = (lambda s: s) if compat == "ragas" else normalize_entity
    for arg, values in (("reference_entities", reference_entities), ("context_entities", context_entities)):
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise EvalSuiteError("expected one list of entities per request", field=arg, value=type(values).__name__)
    if len(reference_entities) != len(context_entities):
        raise EvalSuiteError(f"reference_entities has {len(reference_entities)} requests, context_entities "
                             f"{len(context_entities)}", field="context_entities", value=len(context_entities))
    out = []
    for i, (gn, cn) in enumerate(zip(reference_entities, context_entities)):
        if gn is None or cn is None:
            out.append(None)
            continue
        for arg, items in (("reference_entities", gn), ("context_entities", cn)):
            if isinstance(items, (str, bytes)) or not all(isinstance(e, str) for e in items):
                raise EvalSuiteError("each request needs a list of entity strings", field=f"{arg}[{i}]", value=items)
        context = {key(e) for e in cn}
        seen: dict[str, bool] = {}
        for e in gn:
            k = key(e)
            if k and k not in seen:
                seen[k] = k in context
        out.append(list(seen.values()))
    return out


@_texts_or_judgements
def context_entity_recall(entities_in_contexts=None, *, reference_entities=None, context_entities=None,
                          compat: str | None = None) -> Score:
    """Context entity recall (RAGAS): share of the reference's entities found in the contexts,
    |CN ∩ GN| / |GN|.

    Give either the per-entity judgements ``entities_in_contexts`` or the two entity lists
    (from the LLM judge or the records), which are matched by :func:`entities_found`.

    Parameters
    ----------
    entities_in_contexts : sequence of list of (bool | None), length n_requests, optional
        Per distinct reference entity: found in the retrieved contexts.
    reference_entities, context_entities : sequence of list of str, keyword-only, optional
        GN and CN per request.
    compat : None or "ragas", keyword-only
        "ragas": entities match as exact strings (RAGAS's set intersection), not normalised.

    Returns
    -------
    Score
        Mean over requests with at least one reference entity; undefined (NaN) without any
        (RAGAS divides by |GN| + 1e-8 and scores 0); ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        Both or neither input form given; bad labels or entity lists.

    References
    ----------
    RAGAS ``ContextEntityRecall`` (``metrics/_context_entities_recall.py``).

    Examples
    --------
    >>> context_entity_recall([[True, False, True]])  # 2 of 3 reference entities in the contexts
    Score(context_entity_recall=0.6667, n=1, coverage=1.000)
    >>> context_entity_recall(reference_entities=[["Eiffel Tower", "Paris", "1889"]],
    ...                       context_entities=[["eiffel tower", "Paris", "Gustave Eiffel"]])
    Score(context_entity_recall=0.6667, n=1, coverage=1.000)
    """
    check_compat(compat)
    given_lists = reference_entities is not None or context_entities is not None
    if (entities_in_contexts is None) == (not given_lists):
        raise EvalSuiteError("give entities_in_contexts, or reference_entities with context_entities",
                             field="entities_in_contexts", value=None)
    if given_lists:
        if reference_entities is None or context_entities is None:
            raise EvalSuiteError("both reference_entities and context_entities are needed",
                                 field="context_entities" if context_entities is None else "reference_entities")
        entities_in_contexts = entities_found(reference_entities, context_entities, compat=compat)
    lists = _Lists(as_judgement_lists(entities_in_contexts, "entities_in_contexts"))
    return Score(lists.share(), _params("context_entity_recall", lists, compat=compat,
                                        definition="reference entities found in the contexts / reference entities"))


@_texts_or_judgements
def context_utilization(useful_for_answer, *, compat: str | None = None) -> Score:
    """Context utilization (RAGAS): context precision with the answer in place of the reference.

    Per request: average precision of the chunks' "useful for arriving at the answer" labels in
    rank order (exactly :func:`evalsuite.context_precision`'s arithmetic and rules).

    Parameters
    ----------
    useful_for_answer : sequence of list of (bool | None), length n_requests
        Per retrieved chunk in rank order: was it useful for the answer given.
    compat : None or "ragas", keyword-only
        "ragas" divides by (useful + 1e-10) as RAGAS does (empty list: 0.0).

    Returns
    -------
    Score
        Mean over requests with a judged chunk; ``params``: coverage, ``unjudged``, compat.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, ``compat`` other than None or "ragas".

    References
    ----------
    RAGAS ``LLMContextPrecisionWithoutReference`` / ``ContextUtilization``
    (``metrics/_context_precision.py``).

    Examples
    --------
    >>> context_utilization([[False, True, True]])  # useful at ranks 2 (1/2) and 3 (2/3)
    Score(context_utilization=0.5833, n=1, coverage=1.000)
    """
    check_compat(compat)
    values, lists = context_precision_values(as_judgement_lists(useful_for_answer, "useful_for_answer"), compat)
    return Score(values, _params("context_utilization", lists, compat=compat,
                                 definition="average precision of the chunks useful for the answer"))


@_texts_or_judgements
def context_relevancy(sentences_relevant) -> Score:
    """Context relevancy (RAGAS's older, sentence-level form): context sentences relevant to the
    question / context sentences.

    Parameters
    ----------
    sentences_relevant : sequence of list of (bool | None), length n_requests
        Per sentence of the retrieved contexts (all chunks, in order; split by pysbd): does it
        help answer the question. None: not judged.

    Returns
    -------
    Score
        Mean over requests with a judged sentence; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None.

    References
    ----------
    Es et al., "RAGAS", EACL 2024 demo, context relevance: CR = extracted sentences / sentences
    of c(q); RAGAS 0.1 ``ContextRelevancy``. Our ``context_relevance`` (ARES) is per chunk.

    Examples
    --------
    >>> context_relevancy([[True, False, False, True]])  # 2 of 4 sentences relevant
    Score(context_relevancy=0.5000, n=1, coverage=1.000)
    """
    lists = _Lists(as_judgement_lists(sentences_relevant, "sentences_relevant"))
    return Score(lists.share(), _params("context_relevancy", lists,
                                        definition="relevant context sentences / context sentences"))


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
    lists = _Lists(as_judgement_lists(votes, "votes"))
    yes = lists.total
    no = lists.judged - lists.total
    values = np.full(lists.n, np.nan)
    decided = (yes != no) & ~lists.missing
    values[decided] = (yes[decided] > no[decided]).astype(float)
    ties = int(((yes == no) & (lists.judged > 0) & ~lists.missing).sum())
    return Score(values, _params("aspect_critique", lists, criterion=name, ties=ties,
                                 definition="majority of the judge's votes; share of requests judged yes"))


# ----------------------------------------------------------------------------------------------
# From record columns (evaluate_records).


def ragas_convention(metric: str) -> str | None:
    """The registry's conventions of a metric of this module (``critique_<name>``: aspect critique's)."""
    from ._registry import METRICS

    if metric.startswith(CRITIQUE_PREFIX):
        metric = "aspect_critique"
    entry = METRICS.get(metric)
    return None if entry is None else entry.convention


def per_record_values(table, compat: str | None = None) -> dict[str, np.ndarray]:
    """Per-record values of this module's metrics from the judgement columns a table holds.

    Parameters
    ----------
    table : pyarrow.Table
        Records' table (:attr:`evalsuite.Records.table`).
    compat : None or "ragas"

    Returns
    -------
    dict of metric -> float array (NaN: undefined); ``critique_<name>`` per aspect.

    Examples
    --------
    >>> import pyarrow as pa
    >>> t = pa.table({"question_similarities": [[1.0, 0.5], None], "critique_polite": [[True], [False]]})
    >>> {k: v.tolist() for k, v in per_record_values(t).items()}
    {'answer_relevancy': [0.75, nan], 'critique_polite': [1.0, 0.0]}
    """
    n = table.num_rows
    names = set(table.column_names)

    def has(name):
        return name in names and table.column(name).null_count < n

    def col(name):
        return table.column(name).combine_chunks()

    out: dict[str, np.ndarray] = {}
    if has("question_similarities"):
        flags = col("answer_noncommittal").to_pylist() if has("answer_noncommittal") else None
        out["answer_relevancy"] = np.asarray(
            answer_relevancy(col("question_similarities").to_pylist(), flags, compat=compat).per_query, float)
    if has("answer_similarity"):
        out["answer_similarity"] = col("answer_similarity").cast("float64").to_numpy(zero_copy_only=False)
    if has("reference_entities_in_contexts"):
        out["context_entity_recall"] = _Lists(col("reference_entities_in_contexts")).share()
    elif has("reference_entities") and has("context_entities"):
        out["context_entity_recall"] = np.asarray(context_entity_recall(
            reference_entities=col("reference_entities").to_pylist(),
            context_entities=col("context_entities").to_pylist(), compat=compat).per_query, float)
    if has("context_useful_for_answer"):
        out["context_utilization"], _ = context_precision_values(col("context_useful_for_answer"), compat)
    if has("context_sentences_relevant"):
        out["context_relevancy"] = _Lists(col("context_sentences_relevant")).share()
    for name in sorted(names):
        if name.startswith(CRITIQUE_PREFIX) and has(name):
            out[name] = np.asarray(aspect_critique(col(name)).per_query, float)
    return out
