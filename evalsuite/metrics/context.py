"""Context metrics: how good the retrieved chunks are for the question, from per-request judgements.

- :func:`context_precision` (RAGAS): average precision of the chunks judged useful;
- :func:`context_recall` (RAGAS): reference claims supported by the contexts;
- :func:`context_relevance` (ARES): share of retrieved chunks relevant to the question, per chunk,
  with 0..1 grades allowed;
- :func:`context_entity_recall` (RAGAS): the reference's entities found in the contexts;
- :func:`context_utilization` (RAGAS): context precision with the answer in place of the reference;
- :func:`context_relevancy` (RAGAS 0.1): share of context *sentences* relevant to the question.

``context_relevance`` and ``context_relevancy`` are two metrics, not one under two spellings:
the first is ARES's per-chunk relevance (graded labels allowed, one judgement per retrieved
chunk, the ``context_relevant`` field), the second RAGAS's older sentence-level form (the
contexts split into sentences by pysbd, one judgement per sentence, the
``context_sentences_relevant`` field). Their values differ whenever chunks hold several
sentences; each keeps the name its defining tool gives it (``docs/metrics.md``).

Judgement lists and the undefined cases are described in :mod:`evalsuite.metrics.judgement_lists`;
``compat="ragas"`` reproduces RAGAS's own numbers where they differ. Each metric's per-request
kernel (``<metric>_values``: the judgement columns as Arrow arrays or lists in, one float per
request out, NaN where undefined) is what :func:`evalsuite.evaluate_records` runs on records and
what the list function scores; its registry entry (``METRICS[name]``) names both.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError
from ..score import Score
from ..utils.checks import check_compat, group_positions
from .judgement_lists import (
    JudgementLists, _params, _share_metric, _texts_or_judgements, as_judgement_lists, share_values,
)

__all__ = [
    "context_precision",
    "context_recall",
    "context_relevance",
    "context_entity_recall",
    "context_utilization",
    "context_relevancy",
    "context_precision_values",
    "context_recall_values",
    "context_relevance_values",
    "context_entity_recall_values",
    "context_utilization_values",
    "context_relevancy_values",
    "normalize_entity",
    "entities_found",
]


# RAGAS adds this to the denominator of context precision (ragas/metrics/_context_precision.py).
RAGAS_EPSILON = 1e-10


def _average_precision(lists: JudgementLists, compat: str | None = None) -> np.ndarray:
    """Per-request average precision of usefulness labels in rank order (see :func:`context_precision`)."""
    positions = group_positions(lists.parent) + 1  # rank among judged chunks
    hits = lists.values > 0
    useful_parent = lists.parent[hits]
    cumulative = group_positions(useful_parent) + 1  # useful chunks so far, at each useful one
    precision_sum = np.bincount(useful_parent, weights=cumulative / positions[hits], minlength=lists.n)
    n_useful = np.bincount(useful_parent, minlength=lists.n).astype(np.float64)
    out = np.full(lists.n, np.nan)
    if compat == "ragas":
        # RAGAS: numerator / (n_useful + 1e-10), 0.0 for an empty list; a list whose every verdict
        # is missing stays undefined (RAGAS scores NaN when a verdict cannot be parsed).
        present = ~lists.missing & ~lists.unknown
        out[present] = precision_sum[present] / (n_useful[present] + RAGAS_EPSILON)
    else:
        defined = (lists.judged > 0) & ~lists.missing
        out[defined] = 0.0
        has_useful = defined & (n_useful > 0)
        out[has_useful] = precision_sum[has_useful] / n_useful[has_useful]
    return out


def context_precision_values(useful, *, compat: str | None = None) -> np.ndarray:
    """Per-request context precision (the kernel of ``METRICS["context_precision"]``).

    >>> context_precision_values([[True, False, True], [None, None], None]).round(4).tolist()
    [0.8333, nan, nan]
    """
    return _average_precision(JudgementLists(as_judgement_lists(useful, "useful")), compat)


def context_recall_values(reference_claims_supported, *, compat: str | None = None) -> np.ndarray:
    """Per-request context recall (the kernel of ``METRICS["context_recall"]``): share of supported
    reference claims, NaN without a judged claim.

    >>> context_recall_values([[True, False, True, True], []]).tolist()
    [0.75, nan]
    """
    return share_values(reference_claims_supported, "reference_claims_supported")


def context_relevance_values(relevant, *, compat: str | None = None) -> np.ndarray:
    """Per-request context relevance (the kernel of ``METRICS["context_relevance"]``): share of
    relevant chunks, or the mean grade.

    >>> context_relevance_values([[True, False], [1.0, 0.5]]).tolist()
    [0.5, 0.75]
    """
    return share_values(relevant, "relevant", graded=True)


def context_precision(useful, *, compat: str | None = None) -> Score:
    """Context precision (RAGAS): average precision of the retrieved chunks' usefulness labels.

    Per request: sum over ranks k of a useful chunk of P@k, divided by the number of useful
    chunks (exact; 0 when none is useful). Chunks labelled None are left out of the ranking
    (the condensed list) and counted.

    Parameters
    ----------
    useful : sequence of list of (bool | None), length n_requests
        Per request, per retrieved chunk in rank order: was it useful for reaching the
        reference answer (0/1 are read as False/True; a pyarrow list array is taken as is).
        None for a whole request: no judgements (undefined).
    compat : None or "ragas", keyword-only
        "ragas" divides by (useful + 1e-10) as RAGAS does, so [1, 1, 1] gives 0.9999999999667
        and a request with no chunks gives 0.0 instead of undefined.

    Returns
    -------
    Score
        Mean over requests with at least one judged chunk; ``.per_query``, shape
        (n_requests,), NaN where undefined; ``params``: coverage, ``unjudged`` (None labels),
        ``requests_without_judgements``, compat.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list, ``compat``
        other than None or "ragas".

    References
    ----------
    RAGAS ``LLMContextPrecisionWithReference`` (explodinggradients/ragas,
    ``metrics/_context_precision.py``); Es et al., "RAGAS: Automated Evaluation of Retrieval
    Augmented Generation", EACL 2024 demo. The registry's test vectors: [1,1,1] = 1.0,
    [1,0,1] = 0.8333, [0,1,1] = 0.5833, [0,0,1] = 0.3333, [0,0] = 0.0.

    Examples
    --------
    >>> context_precision([[True, False, True]])  # useful at ranks 1 and 3: (1/1 + 2/3) / 2
    Score(context_precision=0.8333, n=1, coverage=1.000)
    >>> # Request 1: the None chunk is left out, useful at ranks 2 and 3 of the rest: (1/2 + 2/3) / 2;
    >>> # request 2 has no judgements (undefined), so coverage is 1 of 2.
    >>> context_precision([[False, True, None, True], None])
    Score(context_precision=0.5833, n=2, coverage=0.500)
    >>> float(context_precision([[True, True, True]], compat="ragas"))  # (1 + 1 + 1) / (3 + 1e-10)
    0.9999999999666667
    """
    check_compat(compat)
    lists = JudgementLists(as_judgement_lists(useful, "useful"))
    return Score(_average_precision(lists, compat), _params("context_precision", lists, compat=compat,
                                 definition="average precision of usefulness labels in rank order"))


def context_recall(reference_claims_supported, *, compat: str | None = None) -> Score:
    """Context recall (RAGAS): reference claims supported by the retrieved context / reference claims.

    Parameters
    ----------
    reference_claims_supported : sequence of list of (bool | None), length n_requests
        Per request, per claim of the reference answer: is it attributable to the retrieved
        context. None inside a list: not judged (left out, counted); None for a request: no
        judgements.
    compat : None or "ragas", keyword-only
        Same numbers either way (RAGAS also returns NaN when there are no claims).

    Returns
    -------
    Score
        Mean over requests with a judged reference claim; ``.per_query``, shape (n_requests,),
        undefined (NaN) for a request with none; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list, ``compat``
        other than None or "ragas".

    References
    ----------
    RAGAS ``LLMContextRecall`` (``metrics/_context_recall.py``); Es et al., EACL 2024 demo.

    Examples
    --------
    >>> context_recall([[True, False, True, True]])  # 3 of 4 reference claims supported
    Score(context_recall=0.7500, n=1, coverage=1.000)
    >>> context_recall([[True, None], []])  # 1 of 1 judged claim; no claims: undefined
    Score(context_recall=1.0000, n=2, coverage=0.500)
    """
    check_compat(compat)
    return _share_metric("context_recall", reference_claims_supported, "reference_claims_supported",
                         "supported reference claims / reference claims", compat=compat)


def context_relevance(relevant) -> Score:
    """Context relevance (ARES): share of retrieved chunks relevant to the question.

    Parameters
    ----------
    relevant : sequence of list of (bool | float in 0..1 | None), length n_requests
        Per request, per retrieved chunk: relevant or not, or a graded relevance in 0..1 (the
        per-request value is then the mean grade). None inside a list: not judged.

    Returns
    -------
    Score
        Mean over requests with a judged chunk; ``.per_query``, shape (n_requests,), undefined
        (NaN) for a request without judged chunks; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A grade outside 0..1 or not a number, a request entry that is not a list.

    References
    ----------
    Saad-Falcon et al. 2024, "ARES: An Automated Evaluation Framework for RAG Systems",
    NAACL 2024 (context relevance).

    Examples
    --------
    >>> score = context_relevance([[True, False], [1.0, 0.5]])
    >>> score.per_query.tolist()  # 1 of 2 chunks relevant; grades 1.0 and 0.5: mean 0.75
    [0.5, 0.75]
    >>> score  # (0.5 + 0.75) / 2
    Score(context_relevance=0.6250, n=2, coverage=1.000)
    """
    return _share_metric("context_relevance", relevant, "relevant", "relevant chunks / chunks (mean grade if graded)",
                         graded=True)


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
    lists = _entity_lists(entities_in_contexts, reference_entities, context_entities, compat)
    return Score(lists.share(), _params("context_entity_recall", lists, compat=compat,
                                        definition="reference entities found in the contexts / reference entities"))


def _entity_lists(entities_in_contexts, reference_entities, context_entities, compat) -> JudgementLists:
    given_lists = reference_entities is not None or context_entities is not None
    if (entities_in_contexts is None) == (not given_lists):
        raise EvalSuiteError("give entities_in_contexts, or reference_entities with context_entities",
                             field="entities_in_contexts", value=None)
    if given_lists:
        if reference_entities is None or context_entities is None:
            raise EvalSuiteError("both reference_entities and context_entities are needed",
                                 field="context_entities" if context_entities is None else "reference_entities")
        entities_in_contexts = entities_found(reference_entities, context_entities, compat=compat)
    return JudgementLists(as_judgement_lists(entities_in_contexts, "entities_in_contexts"))


def context_entity_recall_values(entities_in_contexts=None, reference_entities=None, context_entities=None, *,
                                 compat: str | None = None) -> np.ndarray | None:
    """Per-request context entity recall (the kernel of ``METRICS["context_entity_recall"]``), from
    the per-entity judgements when given, else from the two entity lists; None when neither form
    is complete (the metric cannot be computed from these columns).

    >>> context_entity_recall_values(None, [["Paris", "1889"]], [["paris"]]).tolist()
    [0.5]
    >>> context_entity_recall_values(None, [["Paris"]], None) is None
    True
    """
    if entities_in_contexts is None and (reference_entities is None or context_entities is None):
        return None
    if entities_in_contexts is not None:
        reference_entities = context_entities = None
    else:
        reference_entities, context_entities = _pylist(reference_entities), _pylist(context_entities)
    return _entity_lists(entities_in_contexts, reference_entities, context_entities, compat).share()


def _pylist(values):
    """An Arrow array as a Python list (the entity lists are matched as strings)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.to_pylist() if isinstance(values, pa.Array) else values


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
    lists = JudgementLists(as_judgement_lists(useful_for_answer, "useful_for_answer"))
    return Score(_average_precision(lists, compat), _params("context_utilization", lists, compat=compat,
                                                            definition="average precision of the chunks useful for "
                                                                       "the answer"))


def context_utilization_values(useful_for_answer, *, compat: str | None = None) -> np.ndarray:
    """Per-request context utilization (the kernel of ``METRICS["context_utilization"]``).

    >>> context_utilization_values([[False, True, True]]).round(4).tolist()
    [0.5833]
    """
    return _average_precision(JudgementLists(as_judgement_lists(useful_for_answer, "useful_for_answer")), compat)


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
    lists = JudgementLists(as_judgement_lists(sentences_relevant, "sentences_relevant"))
    return Score(lists.share(), _params("context_relevancy", lists,
                                        definition="relevant context sentences / context sentences"))


def context_relevancy_values(sentences_relevant, *, compat: str | None = None) -> np.ndarray:
    """Per-request context relevancy (the kernel of ``METRICS["context_relevancy"]``).

    >>> context_relevancy_values([[True, False, False, True]]).tolist()
    [0.5]
    """
    return share_values(sentences_relevant, "sentences_relevant")
