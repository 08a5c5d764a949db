"""Columns of ids and values, checked: where rows came from (:class:`Locator`, for errors that name
file and line), which column of a table is the query, the doc, the score, rank or grade
(:func:`column_roles`), ids and values taken from ranx-style mappings and data frames, and the
checks every builder applies (no missing or empty id, finite numbers, a known duplicates policy).

:mod:`~evalsuite.io.run_qrels` builds Run and Qrels from these columns; the Dask engine
(:mod:`evalsuite.evaluation.distributed`) checks its shards with the same functions, so both report
a bad value the same way.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EvalSuiteError
from ..utils.arrays import has_empty_strings
from ..utils.ids import trim_id_array
from ._reading import _DOC_COLUMNS, _GRADE_COLUMNS, _QUERY_COLUMNS, _RANK_COLUMNS, _SCORE_COLUMNS, _normal

if TYPE_CHECKING:  # pandas is imported where a data frame is read, not at import
    import pandas as pd

__all__ = ["Locator", "LineOf", "no_lines", "column_roles", "ColumnRoles", "nested_columns", "frame_columns", "check_ids",
           "check_finite", "check_duplicates_policy"]


LineOf = Callable[[int], "int | None"]


def no_lines(_row: int) -> None:
    return None


class Locator:
    """Where input rows came from, to build errors that name file and line (or row)."""

    def __init__(self, source: str | None, line_of: LineOf = no_lines, label: str = "line") -> None:
        self.source, self.line_of, self.label = source, line_of, label

    def error(self, reason: str, row: int | None = None, **details) -> EvalSuiteError:
        line = None if row is None else self.line_of(row)
        return EvalSuiteError(reason, source=self.source, line=line, line_label=self.label, **details)


def nested_columns(mapping, what: str, value_name: str) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """Query ids, doc ids and values of ranx's ``{query_id: {doc_id: value}}`` shape."""
    if not isinstance(mapping, Mapping):
        article = "a run" if what == "run" else what
        raise EvalSuiteError(f"{article} must be a mapping {{query_id: {{doc_id: {value_name}}}}}", field=what,
                             value=type(mapping).__name__)
    q, d, v = _flatten_nested(mapping, what, value_name)
    # The one id rule of every reader (evalsuite.utils.ids), so a dict and a file agree.
    return trim_id_array(_strings(q, what)), trim_id_array(_strings(d, what)), np.asarray(v, dtype=np.float64)


def frame_columns(frame, query_col: str, doc_col: str, value_col: str, value_name: str):
    """Query ids, doc ids and values of a data frame's three columns."""
    q, d = _id_columns(frame, query_col, doc_col)
    return trim_id_array(q), trim_id_array(d), _numeric_column(frame, value_col, value_name)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _strings(values: list, source: str) -> pa.Array:
    """Python strings as an Arrow string array; a lone surrogate is an EvalSuiteError."""
    try:
        return pa.array(values, pa.string())
    except UnicodeEncodeError:
        bad = next(v for v in values if isinstance(v, str) and not _encodable(v))
        raise EvalSuiteError("an id that is not valid Unicode (a lone surrogate such as \\ud800)", source=source,
                             field="id", value=bad) from None


def _flatten_nested(mapping: Mapping, what: str, value_name: str):
    queries, docs, values = [], [], []
    for qid, inner in mapping.items():
        if not isinstance(qid, str):
            raise EvalSuiteError("query ids must be strings", source=what, field="query_id", value=qid)
        if not isinstance(inner, Mapping):
            raise EvalSuiteError(f"each query must map doc ids to a {value_name}", source=what, field=qid, value=type(inner).__name__)
        for doc, value in inner.items():
            if not isinstance(doc, str):
                raise EvalSuiteError("doc ids must be strings", source=what, field=f"{qid}", value=doc)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite(value):
                raise EvalSuiteError(f"the {value_name} must be a finite number", source=what, field=f"{qid} / {doc}", value=value)
            queries.append(qid)
            docs.append(doc)
            values.append(float(value))
    return queries, docs, values


def _finite(value: numbers.Real) -> bool:
    """``math.isfinite`` that also answers for integers too large for a float (they are not finite here)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _id_columns(frame: pd.DataFrame, query_col: str, doc_col: str) -> tuple[pa.Array, pa.Array]:
    import pandas as pd

    out = []
    for col, field in ((query_col, "query_id"), (doc_col, "doc_id")):
        if col not in frame.columns:
            raise EvalSuiteError(f"column {col!r} not found; columns are {list(frame.columns)}", field=field, value=col)
        series = frame[col]
        if not (pd.api.types.is_string_dtype(series) or pd.api.types.is_object_dtype(series) or pd.api.types.is_integer_dtype(series)):
            raise EvalSuiteError(f"ids must be strings or integers, column {col!r} is {series.dtype}", field=field, value=str(series.dtype))
        if series.isna().any():
            row = int(np.flatnonzero(series.isna().to_numpy())[0])
            raise EvalSuiteError("missing id", source="data frame", field=f"{col} (row {row})", value=None, has_value=False)
        if pd.api.types.is_integer_dtype(series):
            out.append(pa.array(series.astype("int64").astype(str).to_numpy(), pa.string()))
            continue
        values = series.to_numpy(dtype=object)
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise EvalSuiteError("ids must be strings", source="data frame", line=None, field=f"{col} (row {i})", value=v)
        out.append(_strings(list(values), "data frame"))
    return out[0], out[1]


def _numeric_column(frame: pd.DataFrame, col: str, field: str) -> np.ndarray:
    import pandas as pd

    if col not in frame.columns:
        raise EvalSuiteError(f"column {col!r} not found; columns are {list(frame.columns)}", field=field, value=col)
    series = frame[col]
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        raise EvalSuiteError(f"column {col!r} must be numeric, it is {series.dtype}", field=field, value=str(series.dtype))
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def check_ids(ids: pa.Array | pa.ChunkedArray, field: str, where: Locator) -> None:
    """Reject missing or empty ids, naming the first such row."""
    if ids.null_count:
        row = int(np.flatnonzero(ids.is_null().to_numpy(zero_copy_only=False))[0])
        raise where.error("missing id", row, field=field, value=None, has_value=False)
    if pa.types.is_dictionary(ids.type):
        chunks = ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]
        texts = pa.chunked_array([c.dictionary for c in chunks], ids.type.value_type)
        if not len(texts) or pc.min(pc.binary_length(texts)).as_py() > 0:
            return
        ids = ids.cast(ids.type.value_type)
    if has_empty_strings(ids):
        row = int(np.flatnonzero(pc.equal(pc.binary_length(ids), 0).to_numpy(zero_copy_only=False))[0])
        raise where.error("empty id", row, field=field, value="")


def check_finite(values: np.ndarray, field: str, where: Locator) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise where.error("not a finite number", row, field=field, value=float(values[row]))


def check_duplicates_policy(duplicates: str) -> None:
    if duplicates not in ("error", "max"):
        raise EvalSuiteError("duplicates must be 'error' or 'max'", field="duplicates", value=duplicates)


def _pick(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    normal = {_normal(c): c for c in columns}
    for cand in candidates:
        if cand in normal:
            return normal[cand]
    return None


@dataclass
class ColumnRoles:
    query: str
    doc: str
    value: str | None
    rank: str | None


def column_roles(columns: list[str], kind: str, source: str) -> ColumnRoles:
    query = _pick(columns, _QUERY_COLUMNS)
    doc = _pick(columns, _DOC_COLUMNS)
    missing = [n for n, c in (("query id (query_id, query-id, qid, ...)", query), ("doc id (doc_id, corpus-id, docno, ...)", doc)) if c is None]
    if missing:
        raise EvalSuiteError(f"no column for the {' and the '.join(missing)}; columns found: {columns}",
                             source=source, field="header", value=", ".join(map(str, columns)))
    if kind == "run":
        score = _pick(columns, _SCORE_COLUMNS)
        rank = _pick(columns, _RANK_COLUMNS)
        if score is None and rank is None:
            grade = _pick(columns, _GRADE_COLUMNS)
            hint = f" - column {grade!r} suggests this is a qrels file" if grade else ""
            raise EvalSuiteError(f"a run needs a 'score' or 'rank' column; columns found: {columns}{hint}",
                                 source=source, field="header", value=", ".join(map(str, columns)))
        return ColumnRoles(query, doc, score, rank)
    grade = _pick(columns, _GRADE_COLUMNS)
    if grade is None:
        hint = " - it has a 'rank' column, so it looks like a run file" if _pick(columns, _RANK_COLUMNS) else ""
        raise EvalSuiteError(f"qrels need a grade column (grade, relevance, label or score); columns found: {columns}{hint}",
                             source=source, field="header", value=", ".join(map(str, columns)))
    if _pick(columns, _RANK_COLUMNS) is not None:
        raise EvalSuiteError(f"this has a 'rank' column, so it looks like a run file, not qrels; columns found: {columns}",
                             source=source, field="header", value=", ".join(map(str, columns)))
    return ColumnRoles(query, doc, grade, None)
