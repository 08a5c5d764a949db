"""RAG, context, answer and operational metrics from per-request judgements.

Every function takes one entry per request and returns a :class:`~evalsuite.score.Score`: a
float equal to the mean over the requests where the metric is defined, with the per-request
values (NaN where undefined) and ``params`` giving the coverage (defined / total).

Judgement lists hold ``True`` / ``False`` per item (claim, chunk, statement, citation);
``None`` inside a list means "not judged": the item is left out and counted in
``params["unjudged"]``, never read as False. Definitions and undefined cases follow
``docs/conventions.md``; ``compat="ragas"`` reproduces RAGAS's own numbers where they differ.

The kernels work on Arrow list arrays (flat values plus offsets) and ``numpy.bincount``, so a
million requests are scored without a Python loop per request; the record reader hands its
columns to them directly.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import EvalSuiteError
from .utils.checks import check_compat, group_positions
from .score import Score

__all__ = [
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "answer_correctness",
    "citation_recall",
    "citation_precision",
    "latency_summary",
    "task_success_rate",
    "failure_attribution",
    "FAILURE_STAGES",
    "LATENCY_STATISTICS",
]

FAILURE_STAGES = ("retrieval", "evidence", "generation", "orchestration", "other")
LATENCY_STATISTICS = ("mean", "p50", "p90", "p95", "p99")

# RAGAS adds this to the denominator of context precision (ragas/metrics/_context_precision.py).
RAGAS_EPSILON = 1e-10


# ----------------------------------------------------------------------------------------------
# Input conversion: Python lists -> Arrow list arrays, with errors that name the request.


def as_judgement_lists(values, arg: str, graded: bool = False) -> pa.ListArray:
    """Per-request judgement lists as an Arrow list array (bool, or float for graded labels).

    ``values`` is a sequence (one entry per request) of lists of True / False / None (or numbers
    in 0..1 when ``graded``), or None for a request without judgements; an Arrow list array is
    passed through.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return _checked_arrow_lists(values, arg, graded)
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise EvalSuiteError("expected one list of judgements per request", field=arg, value=type(values).__name__)
    item_type = pa.float64() if graded else pa.bool_()
    out = []
    for i, item in enumerate(values):
        if item is None:
            out.append(None)
            continue
        if isinstance(item, (str, bytes, bool)) or not isinstance(item, (Sequence, np.ndarray)):
            raise EvalSuiteError("each request needs a list of judgements (True/False/None)", field=f"{arg}[{i}]", value=item)
        checked = []
        for j, label in enumerate(item):
            if label is None or (isinstance(label, float) and math.isnan(label)):
                checked.append(None)
            elif isinstance(label, (bool, np.bool_)) or (isinstance(label, numbers.Integral) and label in (0, 1)):
                # 0/1 are read as False/True, as in the conventions' test vectors ([1, 0, 1]).
                checked.append(bool(label) if not graded else float(label))
            elif graded and isinstance(label, numbers.Real):
                if not 0.0 <= float(label) <= 1.0:
                    raise EvalSuiteError("a grade must lie in 0..1", field=f"{arg}[{i}][{j}]", value=label)
                checked.append(float(label))
            else:
                kind = "True, False, None or a grade in 0..1" if graded else "True, False or None"
                raise EvalSuiteError(f"a judgement must be {kind}", field=f"{arg}[{i}][{j}]", value=label)
        out.append(checked)
    return pa.array(out, type=pa.list_(item_type))


def _checked_arrow_lists(values: pa.Array, arg: str, graded: bool) -> pa.ListArray:
    """An Arrow list array of judgements, checked like Python input: True/False/None (0/1 allowed),
    or grades in 0..1 when ``graded``."""
    if not (pa.types.is_list(values.type) or pa.types.is_large_list(values.type)):
        raise EvalSuiteError("expected a list of judgements per request", field=arg, value=str(values.type))
    item = values.type.value_type
    target = pa.list_(pa.float64() if graded else pa.bool_())
    if pa.types.is_boolean(item) or pa.types.is_null(item):
        return values.cast(target)
    if not (pa.types.is_integer(item) or pa.types.is_floating(item)):
        raise EvalSuiteError("judgements must be True/False/None" + (" or grades in 0..1" if graded else ""),
                             field=arg, value=str(item))
    flat = pc.list_flatten(values).cast(pa.float64()).to_numpy(zero_copy_only=False)
    flat = flat[~np.isnan(flat)]
    allowed = (flat >= 0) & (flat <= 1) if graded else (flat == 0) | (flat == 1)
    if not allowed.all():
        kind = "a grade must lie in 0..1" if graded else "a judgement must be True, False, None, 0 or 1"
        raise EvalSuiteError(kind, field=arg, value=float(flat[~allowed][0]))
    return values.cast(target)


class _Lists:
    """Flat view of a list array: per-request counts of judged and true items."""

    def __init__(self, lists: pa.ListArray) -> None:
        self.n = len(lists)
        self.missing = lists.is_null().to_numpy(zero_copy_only=False)
        flat = pc.list_flatten(lists)
        parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
        judged = flat.is_valid().to_numpy(zero_copy_only=False)
        values = flat.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False) if len(flat) else np.zeros(0)
        self.parent = parent[judged]
        self.values = values[judged]
        self.judged = np.bincount(self.parent, minlength=self.n).astype(np.float64)
        self.total = np.bincount(self.parent, weights=self.values, minlength=self.n)
        lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
        self.unjudged = int(lengths.sum() - self.judged.sum())

    def share(self) -> np.ndarray:
        """Mean label per request (share of True), NaN without judged items or list."""
        out = np.full(self.n, np.nan)
        ok = (self.judged > 0) & ~self.missing
        out[ok] = self.total[ok] / self.judged[ok]
        return out


def _params(metric: str, lists: _Lists | None = None, **extra) -> dict:
    params = {"metric": metric}
    if lists is not None:
        params["unjudged"] = lists.unjudged
        params["requests_without_judgements"] = int(lists.missing.sum())
    params.update(extra)
    return params


# ----------------------------------------------------------------------------------------------
# Context and answer metrics.


def context_precision_values(useful: pa.ListArray, compat: str | None = None) -> tuple[np.ndarray, _Lists]:
    """Per-request average precision of the ``useful`` labels (see :func:`context_precision`)."""
    lists = _Lists(useful)
    positions = group_positions(lists.parent) + 1  # rank among judged chunks
    hits = lists.values > 0
    useful_parent = lists.parent[hits]
    cumulative = group_positions(useful_parent) + 1  # useful chunks so far, at each useful one
    precision_sum = np.bincount(useful_parent, weights=cumulative / positions[hits], minlength=lists.n)
    n_useful = np.bincount(useful_parent, minlength=lists.n).astype(np.float64)
    out = np.full(lists.n, np.nan)
    if compat == "ragas":
        # RAGAS: numerator / (n_useful + 1e-10), 0.0 for an empty list (never NaN).
        present = ~lists.missing
        out[present] = precision_sum[present] / (n_useful[present] + RAGAS_EPSILON)
    else:
        defined = (lists.judged > 0) & ~lists.missing
        out[defined] = 0.0
        has_useful = defined & (n_useful > 0)
        out[has_useful] = precision_sum[has_useful] / n_useful[has_useful]
    return out, lists


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
    values, lists = context_precision_values(as_judgement_lists(useful, "useful"), compat)
    return Score(values, _params("context_precision", lists, compat=compat,
                                 definition="average precision of usefulness labels in rank order"))


def _share_metric(name: str, lists_input, arg: str, definition: str, graded: bool = False, **extra) -> Score:
    lists = _Lists(as_judgement_lists(lists_input, arg, graded=graded))
    return Score(lists.share(), _params(name, lists, definition=definition, **extra))


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


def citation_recall(statements_cited_supported) -> Score:
    """Citation recall (ALCE): statements fully supported by their citations / statements.

    Parameters
    ----------
    statements_cited_supported : sequence of list of (bool | None), length n_requests
        Per request, per statement of the answer: do its cited passages entail it. None inside
        a list: not judged.

    Returns
    -------
    Score
        Mean over requests with a judged statement; ``.per_query``, shape (n_requests,),
        undefined (NaN) for a request without one; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list.

    References
    ----------
    Gao et al. 2023, "Enabling Large Language Models to Generate Text with Citations" (ALCE),
    EMNLP 2023.

    Examples
    --------
    >>> citation_recall([[True, False, True]])  # 2 of 3 statements supported by their citations
    Score(citation_recall=0.6667, n=1, coverage=1.000)
    """
    return _share_metric("citation_recall", statements_cited_supported, "statements_cited_supported",
                         "statements supported by their citations / statements")


def citation_precision(citations_relevant) -> Score:
    """Citation precision (ALCE): relevant citations / citations.

    Parameters
    ----------
    citations_relevant : sequence of list of (bool | None), length n_requests
        Per request, per citation: is it needed to support its statement. A request without
        citations is undefined (ALCE's script scores it 0).

    Returns
    -------
    Score
        Mean over requests with a judged citation; ``.per_query``, shape (n_requests,), NaN
        where undefined; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list.

    References
    ----------
    Gao et al. 2023 (ALCE), EMNLP 2023.

    Examples
    --------
    >>> citation_precision([[True, True, False, True], []])  # 3 of 4 citations; no citations: undefined
    Score(citation_precision=0.7500, n=2, coverage=0.500)
    """
    return _share_metric("citation_precision", citations_relevant, "citations_relevant",
                         "relevant citations / citations")


def answer_correctness_values(in_reference: pa.ListArray, in_answer: pa.ListArray, similarity: np.ndarray | None,
                              weights: tuple[float, float], compat: str | None) -> tuple[np.ndarray, dict]:
    """Per-request answer correctness (see :func:`answer_correctness`) and counts for params."""
    answer = _Lists(in_reference)
    reference = _Lists(in_answer)
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
        :func:`evalsuite.ragas.factual_correctness`); default F1.
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
        from .ragas import answer_correctness_fbeta

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


def as_unit_interval(values, arg: str, n: int) -> np.ndarray:
    """A float per request in 0..1 (None -> NaN); raises naming the first value outside."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise EvalSuiteError("expected one number per request", field=arg, value=type(values).__name__)
    if len(values) != n:
        raise EvalSuiteError(f"expected {n} values, one per request, got {len(values)}", field=arg, value=len(values))
    out = np.full(n, np.nan)
    for i, v in enumerate(values):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0.0 <= float(v) <= 1.0):
            raise EvalSuiteError("must be a number in 0..1", field=f"{arg}[{i}]", value=v)
        out[i] = float(v)
    return out


# ----------------------------------------------------------------------------------------------
# Operational metrics.


def _as_numbers(values, arg: str) -> tuple[np.ndarray, np.ndarray]:
    """Numbers per request as float64, and a mask of missing entries (None / Arrow null)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or pa.types.is_null(values.type)):
            raise EvalSuiteError("expected numbers", field=arg, value=str(values.type))
        missing = values.is_null().to_numpy(zero_copy_only=False)
        return values.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False), missing
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        return values.astype(np.float64), np.zeros(values.shape, dtype=bool)
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise EvalSuiteError("expected a list of numbers", field=arg, value=type(values).__name__)
    out = np.zeros(len(values), dtype=np.float64)
    missing = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None:
            missing[i] = True
        elif isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise EvalSuiteError("not a number", field=f"{arg}[{i}]", value=v)
        else:
            out[i] = float(v)
    return out, missing


def latency_summary(values, statistic: str | None = None, *, invalid: str = "raise", unit: str | None = None):
    """Mean and 50th/90th/95th/99th percentiles of latencies, in the unit they are given in.

    Percentiles use numpy's default linear interpolation (``numpy.percentile``), as LLMPerf's
    published summaries do.

    Parameters
    ----------
    values : sequence of float, length n_requests
        Latencies (any unit; it is kept). None entries are missing measurements: left out and
        counted in ``params["missing"]``.
    statistic : {"mean", "p50", "p90", "p95", "p99"} or None
        The one statistic to return; None returns all of them as a dict.
    invalid : {"raise", "drop"}
        Negative or non-finite values raise an error naming their positions, or with "drop"
        are left out and counted in ``params["dropped"]``.
    unit : str, optional
        Label of the unit for display (e.g. "ms"); stored in params.

    Returns
    -------
    Score or dict of str -> Score
        The statistic over the valid values (NaN when there are none); ``per_query`` holds the
        values (NaN where missing or dropped); ``params`` has n, n_valid, missing, dropped, unit
        and every statistic.

    Raises
    ------
    EvalSuiteError
        Unknown statistic or ``invalid`` option; a value that is not a number; negative or
        non-finite values when ``invalid="raise"``.

    References
    ----------
    ``numpy.percentile`` with ``method="linear"`` (Hyndman & Fan 1996, definition 7); LLMPerf's
    published latency summaries (ray-project/llmperf).

    Examples
    --------
    >>> # sorted 95, 120, 180, 400; p95 at position 0.95 * 3 = 2.85: 180 + 0.85 * (400 - 180) = 367
    >>> latency_summary([120, 180, 95, 400], "p95", unit="ms")
    Score(latency_p95=367.0000, n=4, coverage=1.000)
    >>> summary = latency_summary([120, 180, 95, 400, None])  # None: not measured, left out
    >>> round(summary["mean"], 2), round(summary["p50"], 2)  # 795 / 4; (120 + 180) / 2
    (198.75, 150.0)
    >>> summary["mean"].params["missing"]
    1
    """
    if statistic is not None and statistic not in LATENCY_STATISTICS:
        raise EvalSuiteError(f"unknown statistic; use one of {', '.join(LATENCY_STATISTICS)} or None",
                             field="statistic", value=statistic)
    if invalid not in ("raise", "drop"):
        raise EvalSuiteError("invalid must be 'raise' or 'drop'", field="invalid", value=invalid)
    data, missing = _as_numbers(values, "values")
    bad = ~missing & (~np.isfinite(data) | (data < 0))
    if bad.any() and invalid == "raise":
        positions = np.flatnonzero(bad)
        shown = ", ".join(str(int(p)) for p in positions[:10]) + (" ..." if positions.size > 10 else "")
        raise EvalSuiteError(
            f"{positions.size} latencies are negative or not finite (positions {shown}); "
            "pass invalid='drop' to leave them out", field="values", value=float(data[positions[0]]))
    valid = ~missing & ~bad
    kept = data[valid]
    if kept.size:
        statistics = {"mean": float(kept.mean()), **{f"p{q}": float(np.percentile(kept, q)) for q in (50, 90, 95, 99)}}
    else:
        statistics = dict.fromkeys(LATENCY_STATISTICS, float("nan"))
    per_request = np.where(valid, data, np.nan)
    common = {"unit": unit, "n": int(data.size), "n_valid": int(kept.size), "missing": int(missing.sum()),
              "dropped": int(bad.sum()), "statistics": statistics, "interpolation": "linear (numpy.percentile)"}
    scores = {name: Score(per_request, {"metric": f"latency_{name}", "statistic": name, **common}, value=statistics[name])
              for name in LATENCY_STATISTICS}
    return scores[statistic] if statistic is not None else scores


def task_success_rate(outcomes, *, confidence: float = 0.95) -> Score:
    """Share of successful requests, with a Wilson score interval.

    Parameters
    ----------
    outcomes : sequence of bool or None, length n_requests
        Whether each request was resolved to specification; None = unknown (left out, counted).
    confidence : float in (0, 1)
        Confidence level of the interval (default 0.95).

    Returns
    -------
    Score
        Successes / judged requests (NaN when none); ``params``: ``ci_low``, ``ci_high``
        (Wilson, from ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``), ``n``
        (judged requests), ``successes``, ``unknown``, ``confidence``, ``method``.

    Raises
    ------
    EvalSuiteError
        ``confidence`` not strictly between 0 and 1; an outcome that is not True/False/None (in
        a float array: not 0, 1 or NaN).

    References
    ----------
    Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22.

    Examples
    --------
    >>> rate = task_success_rate([True, True, False, None])  # 2 of 3 judged requests; 1 unknown
    >>> rate
    Score(task_success_rate=0.6667, n=3, coverage=0.750)
    >>> # Wilson, z = 1.96, n = 3, p = 2/3: centre (p + z**2 / 6) / (1 + z**2 / 3) = 0.5731,
    >>> # half-width z * (p * (1 - p) / 3 + z**2 / 36) ** 0.5 / (1 + z**2 / 3) = 0.3654
    >>> round(rate.params["ci_low"], 4), round(rate.params["ci_high"], 4)
    (0.2077, 0.9385)
    """
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise EvalSuiteError("confidence must be between 0 and 1", field="confidence", value=confidence)
    if isinstance(outcomes, (pa.Array, pa.ChunkedArray)):
        values = outcomes.cast(pa.float64()).to_numpy(zero_copy_only=False)
    elif isinstance(outcomes, np.ndarray) and outcomes.dtype.kind == "f":
        # Float array: 1.0 success, 0.0 failure, NaN unknown (what evaluate_records holds).
        values = outcomes.astype(np.float64)
        if not np.all(np.isnan(values) | (values == 0) | (values == 1)):
            raise EvalSuiteError("outcomes must be 0, 1 or NaN", field="outcomes", value=float(values[~np.isin(values, (0, 1)) & ~np.isnan(values)][0]))
    else:
        if isinstance(outcomes, (str, bytes)) or not isinstance(outcomes, (Sequence, np.ndarray)):
            raise EvalSuiteError("expected one True/False/None per request", field="outcomes", value=type(outcomes).__name__)
        values = np.empty(len(outcomes), dtype=np.float64)
        for i, v in enumerate(outcomes):
            if v is None:
                values[i] = np.nan
            elif isinstance(v, (bool, np.bool_)):
                values[i] = float(v)
            else:
                raise EvalSuiteError("an outcome must be True, False or None", field=f"outcomes[{i}]", value=v)
    judged = ~np.isnan(values)
    n = int(judged.sum())
    successes = int(values[judged].sum())
    if n:
        from scipy import stats  # imported here: scipy.stats costs ~0.6 s at import time

        interval = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
        low, high = float(interval.low), float(interval.high)
    else:
        low = high = float("nan")
    return Score(values, {"metric": "task_success_rate", "ci_low": low, "ci_high": high, "n": n, "successes": successes,
                          "unknown": int(values.size - n), "n_requests": int(values.size), "confidence": confidence,
                          "method": "wilson", "n_defined": n, "coverage": n / values.size if values.size else 0.0})


def failure_attribution(stages, *, taxonomy: Sequence[str] = FAILURE_STAGES) -> Score:
    """Where requests failed: count and share of failed requests per pipeline stage.

    Parameters
    ----------
    stages : sequence of str or None, length n_requests
        The stage each request failed at, or None when it did not fail. Matched
        case-insensitively against ``taxonomy``.
    taxonomy : sequence of str
        Allowed stages (default: retrieval, evidence, generation, orchestration, other).

    Returns
    -------
    Score
        Float = share of requests that failed; ``per_query`` 1.0 for a failed request, 0.0
        otherwise; ``params["stages"]`` = {stage: {"count": int, "share": float}} for every
        stage of the taxonomy (share of the failed requests; NaN when nothing failed),
        ``params["n_failed"]``.

    Raises
    ------
    EvalSuiteError
        A label not in the taxonomy (the message lists the allowed ones); a taxonomy that is
        empty or repeats a stage.

    References
    ----------
    EvalSuite's record schema (``failure_stage``, docs/records.md); the stage taxonomy follows
    RAGChecker's diagnosis of retriever and generator errors (Ru et al., NeurIPS 2024 D&B).

    Examples
    --------
    >>> result = failure_attribution(["retrieval", None, "Generation", None])  # 2 of 4 requests failed
    >>> result
    Score(failure_attribution=0.5000, n=4, coverage=1.000)
    >>> result.params["stages"]["generation"]  # 1 of the 2 failures (case-insensitive match)
    {'count': 1, 'share': 0.5}
    """
    allowed = [str(t).strip().lower() for t in taxonomy]
    if not allowed or len(set(allowed)) != len(allowed):
        raise EvalSuiteError("taxonomy must list distinct stage names", field="taxonomy", value=list(taxonomy))
    if isinstance(stages, (pa.Array, pa.ChunkedArray)):
        labels = stages.combine_chunks() if isinstance(stages, pa.ChunkedArray) else stages
        if not (pa.types.is_string(labels.type) or pa.types.is_large_string(labels.type) or pa.types.is_null(labels.type)):
            raise EvalSuiteError("stages must be strings (or None)", field="stages", value=str(labels.type))
        labels = labels.cast(pa.string())
        found = pc.index_in(pc.utf8_trim_whitespace(pc.utf8_lower(labels)), value_set=pa.array(allowed))
        unknown = labels.is_valid().to_numpy(zero_copy_only=False) & found.is_null().to_numpy(zero_copy_only=False)
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise EvalSuiteError(f"unknown failure stage; allowed: {', '.join(allowed)} (or None for no failure)",
                                 field=f"stages[{i}]", value=labels[i].as_py())
        codes = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        if isinstance(stages, (str, bytes)) or not isinstance(stages, (Sequence, np.ndarray)):
            raise EvalSuiteError("expected one stage (or None) per request", field="stages", value=type(stages).__name__)
        index = {name: i for i, name in enumerate(allowed)}
        codes = np.full(len(stages), -1, dtype=np.int64)
        for i, label in enumerate(stages):
            if label is None:
                continue
            key = label.strip().lower() if isinstance(label, str) else None
            if key not in index:
                raise EvalSuiteError(f"unknown failure stage; allowed: {', '.join(allowed)} (or None for no failure)",
                                     field=f"stages[{i}]", value=label)
            codes[i] = index[key]
    failed = codes >= 0
    counts = np.bincount(codes[failed], minlength=len(allowed))
    n_failed = int(failed.sum())
    breakdown = {name: {"count": int(counts[i]), "share": float(counts[i] / n_failed) if n_failed else float("nan")}
                 for i, name in enumerate(allowed)}
    return Score(failed.astype(np.float64), {"metric": "failure_attribution", "stages": breakdown,
                                             "n_failed": n_failed, "taxonomy": allowed})
