"""Run and Qrels: ranked results and judgements as flat Arrow/numpy arrays with per-query offsets.

Both are immutable after construction. Rows are grouped by query (queries kept in the order
they first appear); a run's rows are in rank order within each query: score descending as
float64, ties broken by doc id descending in byte order (trec_eval's rule). Every id is a
string and is stored exactly as read.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .utils.keys import string_keys
from .utils.parallel import parallel_map, workers
from .utils.checks import ranks_from_counts
from .errors import EvalSuiteError

if TYPE_CHECKING:  # pandas is imported where a data frame is made or read, not at import
    import pandas as pd

__all__ = ["Run", "Qrels"]

LineOf = Callable[[int], "int | None"]


def _no_lines(_row: int) -> None:
    return None


class _Locator:
    """Where input rows came from, to build errors that name file and line (or row)."""

    def __init__(self, source: str | None, line_of: LineOf = _no_lines, label: str = "line") -> None:
        self.source, self.line_of, self.label = source, line_of, label

    def error(self, reason: str, row: int | None = None, **details) -> EvalSuiteError:
        line = None if row is None else self.line_of(row)
        return EvalSuiteError(reason, source=self.source, line=line, line_label=self.label, **details)


class _Ranked:
    """Shared storage of Run and Qrels: query ids, per-query offsets, doc ids and their keys."""

    _kind = "table"

    def __init__(self, query_ids, offsets, doc_ids, doc_keys, *, name, source, warnings):
        self.query_ids: np.ndarray = query_ids
        self.offsets: np.ndarray = offsets
        self.doc_ids: pa.Array = doc_ids
        self.doc_keys: np.ndarray = doc_keys
        self.name: str | None = name
        self.source: str | None = source
        self.warnings: list[str] = list(warnings)
        self._index: dict[str, int] | None = None

    @property
    def n_queries(self) -> int:
        """Number of distinct queries."""
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.doc_ids)

    @property
    def counts(self) -> np.ndarray:
        """Rows per query, shape (n_queries,), int64, aligned with ``query_ids``."""
        return np.diff(self.offsets)

    def row_queries(self) -> np.ndarray:
        """Query index of every row, shape (n_rows,), int64."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.counts)

    def query_position(self, query_id: str) -> int:
        """Index of ``query_id`` in ``query_ids``; KeyError when absent."""
        if self._index is None:
            self._index = {q: i for i, q in enumerate(self.query_ids.tolist())}
        return self._index[query_id]

    def _slice(self, query_id: str) -> slice:
        i = self.query_position(query_id)
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))


class Run(_Ranked):
    """A retrieval run: per query, the retrieved docs in rank order with their scores.

    Build one with :func:`evalsuite.read_run` (files) or :meth:`Run.from_dict` /
    :meth:`Run.from_dataframe` (in memory).

    Attributes
    ----------
    query_ids : ndarray of str, shape (n_queries,)
        Query ids in order of first appearance.
    offsets : ndarray of int64, shape (n_queries + 1,)
        Rows of query ``i`` are ``offsets[i]:offsets[i + 1]``.
    doc_ids : pyarrow string array, shape (n_rows,)
        Doc ids in rank order within each query.
    scores : ndarray of float64, shape (n_rows,)
        Retrieval scores (for a rank-only input, minus the rank, so order is the same).
    name : str or None
        System name (the TREC run tag when the file has one).
    source : str or None
        File name the run was read from.
    warnings : list of str
        Things read that a person should know (ignored extra columns, re-sorted queries).

    Examples
    --------
    >>> run = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}, name="bm25")
    >>> run.query("q1")["doc_id"].tolist()  # score descending; the tie broken by doc id descending
    ['d2', 'd3', 'd1']
    """

    _kind = "run"

    def __init__(self, query_ids, offsets, doc_ids, doc_keys, scores, *, name=None, source=None, warnings=()):
        super().__init__(query_ids, offsets, doc_ids, doc_keys, name=name, source=source, warnings=warnings)
        self.scores: np.ndarray = scores

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, queries={self.n_queries}, rows={len(self)})"

    def query(self, query_id: str) -> pd.DataFrame:
        """The ranked list of one query: columns rank (1-based), doc_id, score."""
        import pandas as pd

        sl = self._slice(query_id)
        docs = self.doc_ids[sl].to_pylist()
        return pd.DataFrame({"rank": np.arange(1, len(docs) + 1), "doc_id": docs, "score": self.scores[sl]})

    def to_dataframe(self) -> pd.DataFrame:
        """All rows: query_id, doc_id, rank (1-based, in EvalSuite's order), score."""
        import pandas as pd

        return pd.DataFrame(
            {
                "query_id": np.repeat(self.query_ids, self.counts),
                "doc_id": self.doc_ids.to_pandas(),
                "rank": ranks_from_counts(self.counts) + 1,
                "score": self.scores,
            }
        )

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], name: str | None = None, duplicates: str = "error") -> "Run":
        """Build a run from ranx's shape ``{query_id: {doc_id: score}}`` (ids must be strings)."""
        return build_run(*_nested_columns(run, "run", "score"), name=name, source="run", duplicates=duplicates)

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, query_col: str = "query_id", doc_col: str = "doc_id",
                       score_col: str = "score", name: str | None = None, duplicates: str = "error") -> "Run":
        """Build a run from a data frame with query id, doc id and score columns."""
        return build_run(*_frame_columns(frame, query_col, doc_col, score_col, "score"), name=name,
                         source="data frame", duplicates=duplicates, line_of=_no_lines)


class Qrels(_Ranked):
    """Relevance judgements: per query, judged doc ids with integer (or real) grades.

    Attributes
    ----------
    query_ids, offsets, doc_ids : as in :class:`Run` (rows in file order within a query).
    grades : ndarray of float64, shape (n_rows,)
        Grade of each judged doc (0 or negative: judged not relevant).

    Examples
    --------
    >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d9": 1}})
    >>> qrels.n_queries, len(qrels), qrels.query("q1")
    (2, 3, {'d1': 2.0, 'd2': 0.0})
    """

    _kind = "qrels"

    def __init__(self, query_ids, offsets, doc_ids, doc_keys, grades, *, name=None, source=None, warnings=()):
        super().__init__(query_ids, offsets, doc_ids, doc_keys, name=name, source=source, warnings=warnings)
        self.grades: np.ndarray = grades

    def __repr__(self) -> str:
        return f"Qrels(queries={self.n_queries}, judgements={len(self)})"

    def query(self, query_id: str) -> dict[str, float]:
        """{doc_id: grade} of one query."""
        sl = self._slice(query_id)
        return dict(zip(self.doc_ids[sl].to_pylist(), self.grades[sl].tolist()))

    def to_dataframe(self) -> pd.DataFrame:
        """All rows: query_id, doc_id, grade."""
        import pandas as pd

        return pd.DataFrame(
            {"query_id": np.repeat(self.query_ids, self.counts), "doc_id": self.doc_ids.to_pandas(), "grade": self.grades}
        )

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, float]], name: str | None = None, duplicates: str = "error") -> "Qrels":
        """Build qrels from ranx's shape ``{query_id: {doc_id: grade}}`` (ids must be strings)."""
        return build_qrels(*_nested_columns(qrels, "qrels", "grade"), name=name, source="qrels", duplicates=duplicates)

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, query_col: str = "query_id", doc_col: str = "doc_id",
                       grade_col: str = "grade", name: str | None = None, duplicates: str = "error") -> "Qrels":
        """Build qrels from a data frame with query id, doc id and grade columns."""
        return build_qrels(*_frame_columns(frame, query_col, doc_col, grade_col, "grade"), name=name,
                           source="data frame", duplicates=duplicates, line_of=_no_lines)


# ----------------------------------------------------------------------------------------------
# Construction helpers shared by the readers.


def _nested_columns(mapping, what: str, value_name: str) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """Query ids, doc ids and values of ranx's ``{query_id: {doc_id: value}}`` shape."""
    if not isinstance(mapping, Mapping):
        article = "a run" if what == "run" else what
        raise EvalSuiteError(f"{article} must be a mapping {{query_id: {{doc_id: {value_name}}}}}", field=what,
                             value=type(mapping).__name__)
    q, d, v = _flatten_nested(mapping, what, value_name)
    return _strings(q, what), _strings(d, what), np.asarray(v, dtype=np.float64)


def _frame_columns(frame, query_col: str, doc_col: str, value_col: str, value_name: str):
    """Query ids, doc ids and values of a data frame's three columns."""
    q, d = _id_columns(frame, query_col, doc_col)
    return q, d, _numeric_column(frame, value_col, value_name)


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


def _check_ids(ids: pa.Array | pa.ChunkedArray, field: str, where: _Locator) -> None:
    """Reject missing or empty ids, naming the first such row."""
    if ids.null_count:
        row = int(np.flatnonzero(ids.is_null().to_numpy(zero_copy_only=False))[0])
        raise where.error("missing id", row, field=field, value=None, has_value=False)
    if pa.types.is_dictionary(ids.type):
        chunks = ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]
        if not any("" in c.dictionary.to_pylist() for c in chunks):
            return
        ids = ids.cast(ids.type.value_type)
    if len(ids) and pc.min(pc.binary_length(ids)).as_py() == 0:
        row = int(np.flatnonzero(pc.equal(pc.binary_length(ids), 0).to_numpy(zero_copy_only=False))[0])
        raise where.error("empty id", row, field=field, value="")


def _check_finite(values: np.ndarray, field: str, where: _Locator) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise where.error("not a finite number", row, field=field, value=float(values[row]))


def _encode_queries(query_ids: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Query code per row, numbered in order of first appearance, and the distinct ids.

    Accepts plain or dictionary-encoded (as the TREC reader produces) string arrays.
    """
    if not pa.types.is_dictionary(query_ids.type):
        query_ids = pc.dictionary_encode(query_ids)
    if isinstance(query_ids, pa.ChunkedArray):
        table = pa.table({"q": query_ids}).unify_dictionaries()
        column = table.column("q")
        dictionary = column.chunks[0].dictionary if column.num_chunks else pa.array([], pa.string())
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in column.chunks]) if column.num_chunks else np.zeros(0)
    else:
        dictionary = query_ids.dictionary
        codes = query_ids.indices.to_numpy(zero_copy_only=False)
    ids = np.array(dictionary.to_pylist(), dtype=object)
    if codes.size == 0:
        return codes.astype(np.int32), ids[:0]
    # Renumber by first appearance (a dictionary need not be in that order): look only at the
    # rows where the code changes, so this is cheap for grouped files.
    change = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    segment_codes = codes[change]
    first_position = np.full(len(ids), segment_codes.size, dtype=np.int64)
    np.minimum.at(first_position, segment_codes, np.arange(segment_codes.size))
    present = first_position < segment_codes.size
    first_seen = np.flatnonzero(present)[np.argsort(first_position[present], kind="stable")]
    if np.array_equal(first_seen, np.arange(len(ids))):
        return codes.astype(np.int32, copy=False), ids
    renumber = np.full(len(ids), -1, dtype=np.int32)
    renumber[first_seen] = np.arange(len(first_seen), dtype=np.int32)
    return renumber[codes], ids[first_seen]


def _offsets(codes_sorted: np.ndarray, n_queries: int) -> np.ndarray:
    # A binary search per query on the sorted codes: no temporary as long as the rows (a
    # bincount would first copy the int32 codes to int64, a fresh 8-bytes-per-row array).
    bounds = np.arange(n_queries + 1, dtype=codes_sorted.dtype if codes_sorted.size else np.int64)
    return np.searchsorted(codes_sorted, bounds, side="left").astype(np.int64)


def _is_contiguous(codes: np.ndarray, n_queries: int) -> bool:
    """True when each query's rows are adjacent and queries appear in code order."""
    if codes.size == 0:
        return True
    return bool(np.all(codes[1:] >= codes[:-1])) and int(codes[-1]) == n_queries - 1


def _rank_order(codes: np.ndarray, scores: np.ndarray, doc_ids: pa.Array) -> np.ndarray | None:
    """Permutation putting rows in (query, score desc, doc id desc) order; None if already so."""
    n = codes.size
    if n > 1:
        same = codes[1:] == codes[:-1]
        in_order = bool(np.all(codes[1:] >= codes[:-1])) and not bool(np.any(same & (scores[1:] > scores[:-1])))
        if in_order:
            tie = np.flatnonzero(same & (scores[1:] == scores[:-1]))
            if tie.size == 0:
                return None
            left = doc_ids.take(pa.array(tie))
            right = doc_ids.take(pa.array(tie + 1))
            if bool(pc.all(pc.greater(left, right)).as_py()):
                return None
    else:
        return None
    table = pa.table({"q": codes, "s": scores, "d": doc_ids})
    return pc.sort_indices(table, [("q", "ascending"), ("s", "descending"), ("d", "descending")]).to_numpy()


def _rows_with_repeats(block: np.ndarray) -> np.ndarray:
    """For each row of a 2-D key block: does a key occur twice in it."""
    ordered = np.sort(block, axis=1)
    return (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)


def _find_duplicates(offsets: np.ndarray, keys: np.ndarray, doc_ids: pa.Array) -> list[np.ndarray]:
    """Groups of row indices sharing (query, doc id); empty list when every pair is unique.

    Rows are grouped by query (``offsets``). Queries with the same number of rows are sorted
    together as the rows of one 2-D block (a view, not a copy, when they are adjacent, as in
    top-1000 runs), which is several times faster than one global sort. Equal keys are then
    confirmed on the strings.
    """
    counts = np.diff(offsets)
    suspects = []
    for count in np.unique(counts):
        if count < 2:
            continue
        queries = np.flatnonzero(counts == count)
        first = int(offsets[queries[0]])
        if queries[-1] - queries[0] + 1 == queries.size:
            block = keys[first:first + int(count) * queries.size].reshape(queries.size, int(count))
        else:
            block = keys[offsets[queries][:, None] + np.arange(count)[None, :]]
        clash = np.concatenate(parallel_map(_rows_with_repeats, np.array_split(block, workers())))
        suspects.extend(queries[clash].tolist())
    groups = []
    for query in suspects:
        rows = np.arange(offsets[query], offsets[query + 1])
        by_doc: dict[str, list[int]] = {}
        for row, doc in zip(rows.tolist(), doc_ids.slice(int(offsets[query]), rows.size).to_pylist()):
            by_doc.setdefault(doc, []).append(row)
        groups.extend(np.array(g) for g in by_doc.values() if len(g) > 1)
    return groups


def _check_duplicates_policy(duplicates: str) -> None:
    if duplicates not in ("error", "max"):
        raise EvalSuiteError("duplicates must be 'error' or 'max'", field="duplicates", value=duplicates)


def _resolve_duplicates(groups, values, codes, query_ids, doc_ids, duplicates, where: _Locator, field, perm=None):
    """Raise on duplicate (query, doc) rows, or return the rows to drop under duplicates='max'."""
    if not groups:
        return None
    if duplicates == "error":
        group = groups[0]
        orig = (lambda r: int(perm[r])) if perm is not None else (lambda r: int(r))
        # The two first occurrences in file order (rows may have been re-sorted by score).
        first, second = sorted(orig(r) for r in group)[:2]
        lines = [where.line_of(first), where.line_of(second)]
        place = f"{where.label}s {lines[0]} and {lines[1]}" if None not in lines else f"rows {first + 1} and {second + 1}"
        doc = doc_ids[int(group[0])].as_py()
        raise where.error(
            f"doc {doc!r} appears twice for query {query_ids[codes[int(group[0])]]!r} ({place}; "
            f"{len(groups)} duplicated pair(s) in all); trec_eval refuses this; pass duplicates='max' to keep the higher {field}",
            second, field="doc_id", value=doc,
        )
    drop = []
    for group in groups:
        keep = group[np.argmax(values[group])]
        drop.extend(int(r) for r in group if r != keep)
    return np.array(sorted(drop), dtype=np.int64)


def _group_rows(query_ids, doc_ids, values: np.ndarray, where: _Locator, duplicates: str, field: str, order):
    """Encode queries, order rows with ``order(codes, values, doc_ids)`` (a permutation or None),
    hash doc ids, and apply the duplicates policy. Shared by runs and qrels."""
    codes, qids = _encode_queries(query_ids)
    keys = string_keys(doc_ids)
    perm = order(codes, values, doc_ids)
    if perm is not None:
        codes, values, keys = codes[perm], values[perm], keys[perm]
        doc_ids = doc_ids.take(pa.array(perm))
    offsets = _offsets(codes, len(qids))
    groups = _find_duplicates(offsets, keys, doc_ids)
    drop = _resolve_duplicates(groups, values, codes, qids, doc_ids, duplicates, where, field, perm)
    notes = []
    if drop is not None:
        keep = np.ones(codes.size, dtype=bool)
        keep[drop] = False
        codes, values, keys = codes[keep], values[keep], keys[keep]
        doc_ids = doc_ids.filter(pa.array(keep))
        offsets = _offsets(codes, len(qids))
        notes.append(f"{drop.size} duplicate (query, doc) row(s) dropped, the higher {field} kept (duplicates='max')")
    return qids, offsets, doc_ids, keys, values, notes


def _group_order(codes: np.ndarray, _values, _doc_ids) -> np.ndarray | None:
    """Qrels keep their file order within a query; only interleaved queries are regrouped."""
    return None if _is_contiguous(codes, int(codes.max()) + 1 if codes.size else 0) else np.argsort(codes, kind="stable")


def build_run(query_ids: pa.Array, doc_ids: pa.Array, scores: np.ndarray | None, ranks: np.ndarray | None = None, *,
              name: str | None = None, source: str | None = None, line_of: LineOf = _no_lines,
              duplicates: str = "error", warnings=(), line_label: str = "line") -> Run:
    """Validate, order and index run rows (see :class:`Run`); the readers' common last step.

    ``scores`` orders each query (descending; ties by doc id descending). When only ``ranks``
    is given (no scores), rows are ordered by rank ascending and the stored score is -rank.
    ``line_of(row)`` maps an input row to its file line for error messages.
    """
    _check_duplicates_policy(duplicates)
    where = _Locator(source, line_of, line_label)
    warnings = list(warnings)
    _check_ids(query_ids, "query_id", where)
    _check_ids(doc_ids, "doc_id", where)
    if scores is None:
        if ranks is None:
            raise where.error("a run needs a score or a rank column", field="score")
        _check_finite(ranks, "rank", where)
        scores = -np.asarray(ranks, dtype=np.float64)
        warnings.append("no score column: docs ordered by the rank column")
    else:
        scores = np.asarray(scores, dtype=np.float64)
        _check_finite(scores, "score", where)
    qids, offsets, doc_ids, keys, scores, notes = _group_rows(query_ids, doc_ids, scores, where, duplicates, "score",
                                                              _rank_order)
    return Run(qids, offsets, doc_ids, keys, scores, name=name, source=source, warnings=warnings + notes)


def build_qrels(query_ids: pa.Array, doc_ids: pa.Array, grades: np.ndarray, *, name: str | None = None,
                source: str | None = None, line_of: LineOf = _no_lines, duplicates: str = "error", warnings=(),
                line_label: str = "line") -> Qrels:
    """Validate and index judgements (see :class:`Qrels`); the readers' common last step."""
    _check_duplicates_policy(duplicates)
    where = _Locator(source, line_of, line_label)
    _check_ids(query_ids, "query_id", where)
    _check_ids(doc_ids, "doc_id", where)
    grades = np.asarray(grades, dtype=np.float64)
    _check_finite(grades, "grade", where)
    qids, offsets, doc_ids, keys, grades, notes = _group_rows(query_ids, doc_ids, grades, where, duplicates, "grade",
                                                              _group_order)
    return Qrels(qids, offsets, doc_ids, keys, grades, name=name, source=source, warnings=list(warnings) + notes)
