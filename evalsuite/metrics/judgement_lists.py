"""Judgement lists: the per-request lists of True / False / None (or 0..1 grades) that the RAG
metrics read, as Arrow list arrays with per-request counts, and the record columns that hold them.

Every RAG metric (:mod:`~evalsuite.metrics.context`, :mod:`~evalsuite.metrics.answer`,
:mod:`~evalsuite.metrics.citation`) takes one entry per request and returns a
:class:`~evalsuite.score.Score`: the mean over the requests where the metric is defined, the
per-request values (NaN where undefined) and ``params`` with the coverage (defined / total).
``None`` inside a list means "not judged": the item is left out and counted in
``params["unjudged"]``, never read as False. The kernels work on Arrow list arrays (flat values
plus offsets) and ``numpy.bincount``, so a million requests are scored without a Python loop per
request; the record reader hands its columns to them directly.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EvalSuiteError
from ..score import Score

__all__ = [
    "as_judgement_lists",
    "as_unit_interval",
    "unit_values",
    "share_values",
    "JudgementLists",
    "CRITIQUE_PREFIX",
]


#: Columns named ``critique_<name>`` hold the votes of aspect critique ``<name>`` (labels).
CRITIQUE_PREFIX = "critique_"


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


class JudgementLists:
    """Flat view of a list array: per-request counts of judged and true items.

    ``missing``: the request has no list (null); ``unknown``: it has a list whose every verdict is
    missing (None), so nothing is known about it - not the same as an empty list, which says
    there is nothing to judge (no claims, no chunks).
    """

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
        self.lengths = lengths
        self.unknown = (lengths > 0) & (self.judged == 0)
        self.unjudged = int(lengths.sum() - self.judged.sum())

    def share(self) -> np.ndarray:
        """Mean label per request (share of True), NaN without judged items or list."""
        out = np.full(self.n, np.nan)
        ok = (self.judged > 0) & ~self.missing
        out[ok] = self.total[ok] / self.judged[ok]
        return out


def _params(metric: str, lists: JudgementLists | None = None, **extra) -> dict:
    params = {"metric": metric}
    if lists is not None:
        params["unjudged"] = lists.unjudged
        params["requests_without_judgements"] = int(lists.missing.sum())
    params.update(extra)
    return params


def _share_metric(name: str, lists_input, arg: str, definition: str, graded: bool = False, **extra) -> Score:
    lists = JudgementLists(as_judgement_lists(lists_input, arg, graded=graded))
    return Score(lists.share(), _params(name, lists, definition=definition, **extra))


def share_values(lists_input, arg: str, graded: bool = False) -> np.ndarray:
    """Per request the share of True (the mean grade when ``graded``), NaN without a judged item:
    the kernel of every metric that is a share of a judgement list (faithfulness, context recall,
    the citation metrics ...).

    >>> share_values([[True, None, False], [None], []], "labels").tolist()  # a None is left out
    [0.5, nan, nan]
    """
    return JudgementLists(as_judgement_lists(lists_input, arg, graded=graded)).share()


def unit_values(values, arg: str) -> np.ndarray:
    """One float per request in 0..1 (None and null -> NaN) from a sequence or an Arrow array;
    raises naming the first value outside.

    >>> import pyarrow as pa
    >>> unit_values(pa.array([0.5, None]), "similarity").tolist()
    [0.5, nan]
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or pa.types.is_null(values.type)):
            raise EvalSuiteError("expected one number per request", field=arg, value=str(values.type))
        out = values.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
        bad = ~np.isnan(out) & ((out < 0) | (out > 1))
        if bad.any():
            raise EvalSuiteError("must be a number in 0..1", field=f"{arg}[{int(np.flatnonzero(bad)[0])}]",
                                 value=float(out[bad][0]))
        return out
    return as_unit_interval(values, arg, len(values) if hasattr(values, "__len__") else 0)


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


def _texts_or_judgements(function):
    """Let a list function take raw texts plus a judge: ``f(texts=[...], judge=RagasJudge(...))``
    judges the texts (:meth:`evalsuite.judges.ragas.RagasJudge.score_texts`) and scores the judgements.

    The judge is asked through its own method, so the metrics never import the judges."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, texts=None, judge=None, **kwargs):
        if texts is None and judge is None:
            return function(*args, **kwargs)
        if args or texts is None or judge is None:
            raise EvalSuiteError("give judgements, or texts= with judge=", field="texts" if texts is None else "judge")
        score_texts = getattr(judge, "score_texts", None)
        if score_texts is None:
            raise EvalSuiteError("judge must be a RagasJudge (evalsuite.judges.ragas)", field="judge",
                                 value=type(judge).__name__)
        return score_texts(function.__name__, texts, **kwargs)

    wrapper.__doc__ = (function.__doc__ or "") + _TEXTS_NOTE
    return wrapper


_TEXTS_NOTE = """
    Notes
    -----
    From raw texts: ``texts=`` (Records, or one dict per request with question, answer,
    contexts, reference) and ``judge=`` (:class:`evalsuite.judges.ragas.RagasJudge`) judge them
    first, then score the judgements with the options given.
"""
