"""Answer metrics: is the answer grounded and on topic, from per-request judgements.

- :func:`faithfulness` (RAGAS): answer claims supported by the retrieved context;
- :func:`answer_relevancy` (RAGAS): cosine similarity of questions generated from the answer with
  the real question, with a documented rule for noncommittal answers;
- :func:`answer_similarity` (RAGAS): embedding cosine of answer and reference (optionally
  thresholded);
- :func:`aspect_critique` (RAGAS ``AspectCritic``): a user-defined criterion, majority of votes.

Correctness against the reference (answer correctness, factual correctness) is in
:mod:`evalsuite.metrics.correctness`, the citation metrics of ALCE in
:mod:`evalsuite.metrics.citation`. Judgement lists and the undefined cases are described in
:mod:`evalsuite.metrics.judgement_lists`. Each metric's per-request kernel (``<metric>_values``)
is what :func:`evalsuite.evaluate_records` runs on records; its registry entry
(``METRICS[name]``) names it with the list function.
"""

from __future__ import annotations

import numbers

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError
from ..score import Score
from ..utils.checks import check_compat
from .judgement_lists import (
    JudgementLists, _lists_of_floats, _params, _share_metric, _texts_or_judgements, as_judgement_lists,
    share_values, unit_values,
)

__all__ = [
    "faithfulness",
    "answer_relevancy",
    "answer_similarity",
    "aspect_critique",
    "faithfulness_values",
    "answer_relevancy_values",
    "answer_similarity_values",
    "aspect_critique_values",
]


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


def faithfulness_values(answer_claims_supported, *, compat: str | None = None) -> np.ndarray:
    """Per-request faithfulness (the kernel of ``METRICS["faithfulness"]``).

    >>> faithfulness_values([[True, True, None, False], [None]]).round(4).tolist()
    [0.6667, nan]
    """
    return share_values(answer_claims_supported, "answer_claims_supported")

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
    values, noncommittal_requests, outvoted = _relevancy(similarities, noncommittal, compat)
    return Score(values, _params("answer_relevancy", None, compat=compat, noncommittal_requests=noncommittal_requests,
                                 noncommittal_flags_outvoted=outvoted,
                                 definition="mean cosine of generated questions with the question; 0 when the "
                                            "majority of flags say noncommittal" + (" (ragas: all flags)" if compat else "")))


def _as_python(values):
    """An Arrow array as a Python list; anything else as it is."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.to_pylist() if isinstance(values, pa.Array) else values


def _relevancy(similarities, noncommittal, compat: str | None) -> tuple[np.ndarray, int, int]:
    """Per-request answer relevancy, the number of noncommittal requests and of flags outvoted."""
    sims = _lists_of_floats(_as_python(similarities), "similarities")
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
    return values, noncommittal_requests, outvoted


def answer_relevancy_values(similarities, noncommittal=None, *, compat: str | None = None) -> np.ndarray:
    """Per-request answer relevancy (the kernel of ``METRICS["answer_relevancy"]``).

    >>> answer_relevancy_values([[1.0, 0.5, 0.75], [0.6, 0.5, 0.4], [None]],
    ...                         [[True, False, False], [True, True, False], None]).tolist()
    [0.75, 0.0, nan]
    """
    return _relevancy(similarities, noncommittal, compat)[0]


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
    values = answer_similarity_values(similarity, threshold=threshold)
    return Score(values, _params("answer_similarity", None, threshold=threshold,
                                 definition="cosine of answer and reference embeddings"
                                            + (f", 1 if >= {threshold}" if threshold is not None else "")))


def answer_similarity_values(similarity, *, compat: str | None = None, threshold: float | None = None) -> np.ndarray:
    """Per-request answer similarity (the kernel of ``METRICS["answer_similarity"]``).

    >>> answer_similarity_values([0.9, None, 0.6], threshold=0.7).tolist()
    [1.0, nan, 0.0]
    """
    values = unit_values(similarity, "similarity")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 <= threshold <= 1:
            raise EvalSuiteError("threshold must be a number in 0..1", field="threshold", value=threshold)
        values = np.where(np.isnan(values), np.nan, (values >= threshold).astype(float))
    return values

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
    ties = int(((lists.total * 2 == lists.judged) & (lists.judged > 0) & ~lists.missing).sum())
    return Score(_majority(lists), _params("aspect_critique", lists, criterion=name, ties=ties,
                                           definition="majority of the judge's votes; share of requests judged yes"))


def _majority(lists: JudgementLists) -> np.ndarray:
    yes = lists.total
    no = lists.judged - lists.total
    values = np.full(lists.n, np.nan)
    decided = (yes != no) & ~lists.missing
    values[decided] = (yes[decided] > no[decided]).astype(float)
    return values


def aspect_critique_values(votes, *, compat: str | None = None) -> np.ndarray:
    """Per-request aspect critique (the kernel of ``METRICS["aspect_critique"]``): 1 or 0 by the
    majority of the votes, NaN without votes or on a tie.

    >>> aspect_critique_values([[True, True, False], [True, None, False], [None]]).tolist()
    [1.0, nan, nan]
    """
    return _majority(JudgementLists(as_judgement_lists(votes, "votes")))
