"""Run and Qrels: ranked results and judgements as flat Arrow/numpy arrays with per-query offsets.

Both are immutable after construction. Rows are grouped by query (queries kept in the order
they first appear); a run's rows are in rank order within each query: score descending as
float64, ties broken by doc id descending in byte order (trec_eval's rule). Every id is a
string and is stored exactly as read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..utils.ids import invisible_twins
from ..utils.arrays import gather_in_parts, numbers, strings
from ..utils.keys import string_keys
from ..utils.parallel import parallel_map, workers
from ..utils.checks import ranks_from_counts
from ._rank_order import _rank_order
from .columns import (
    LineOf, Locator, check_duplicates_policy, check_finite, check_ids, frame_columns, nested_columns, no_lines,
)

if TYPE_CHECKING:  # pandas is imported where a data frame is made or read, not at import
    import pandas as pd

__all__ = ["Run", "Qrels"]


def _frozen(array) -> np.ndarray:
    """A read-only view of ``array`` (the caller's array itself stays writable). Runs and qrels
    are shared by caches and sessions, and the reader pool hands back views of a mapped file: no
    one writes into them, wherever they were read."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


class _Ranked:
    """Shared storage of Run and Qrels: query ids, per-query offsets, doc ids and their keys.
    The doc keys, scores and grades are read-only arrays."""

    _kind = "table"

    def __init__(self, query_ids, offsets, doc_ids, doc_keys, *, name, source, warnings):
        self.query_ids: np.ndarray = query_ids
        self.offsets: np.ndarray = offsets
        self.doc_ids: pa.Array = doc_ids
        self.doc_keys: np.ndarray = _frozen(doc_keys)
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
        self.scores: np.ndarray = _frozen(scores)

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
        return build_run(*nested_columns(run, "run", "score"), name=name, source="run", duplicates=duplicates)

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, query_col: str = "query_id", doc_col: str = "doc_id",
                       score_col: str = "score", name: str | None = None, duplicates: str = "error") -> "Run":
        """Build a run from a data frame with query id, doc id and score columns."""
        return build_run(*frame_columns(frame, query_col, doc_col, score_col, "score"), name=name,
                         source="data frame", duplicates=duplicates, line_of=no_lines)


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
        self.grades: np.ndarray = _frozen(grades)

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
        return build_qrels(*nested_columns(qrels, "qrels", "grade"), name=name, source="qrels", duplicates=duplicates)

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, query_col: str = "query_id", doc_col: str = "doc_id",
                       grade_col: str = "grade", name: str | None = None, duplicates: str = "error") -> "Qrels":
        """Build qrels from a data frame with query id, doc id and grade columns."""
        return build_qrels(*frame_columns(frame, query_col, doc_col, grade_col, "grade"), name=name,
                           source="data frame", duplicates=duplicates, line_of=no_lines)


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
        codes = np.concatenate([numbers(c.indices) for c in column.chunks]) if column.num_chunks else np.zeros(0)
        del table, column  # the unified indices, copied into ``codes``
    else:
        dictionary = query_ids.dictionary
        codes = numbers(query_ids.indices)
    ids = np.array(dictionary.to_pylist(), dtype=object)
    if codes.size == 0:
        return codes.astype(np.int32), ids[:0]
    first_seen = _first_seen(codes, len(ids))
    if np.array_equal(first_seen, np.arange(len(ids))):
        return codes.astype(np.int32, copy=False), ids
    renumber = np.full(len(ids), -1, dtype=np.int32)
    renumber[first_seen] = np.arange(len(first_seen), dtype=np.int32)
    return renumber[codes], ids[first_seen]


def _first_seen(codes: np.ndarray, n_codes: int, block: int = 1 << 20) -> np.ndarray:
    """The codes present in ``codes``, in order of first appearance.

    Looks only at the rows where the code changes, so this is cheap for grouped files; a block
    of rows at a time, so a shuffled file's change positions (nearly every row) never exist
    all at once (150 MB of temporaries for 7 million rows).
    """
    first_position = np.full(n_codes, codes.size, dtype=np.int64)
    for start in range(0, codes.size, block):
        piece = codes[start:start + block]
        change = np.empty(piece.size, dtype=bool)
        change[0] = True
        np.not_equal(piece[1:], piece[:-1], out=change[1:])
        at = np.flatnonzero(change)
        np.minimum.at(first_position, piece[at], at + start)
    present = first_position < codes.size
    return np.flatnonzero(present)[np.argsort(first_position[present], kind="stable")]


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
        # Sorted a few hundred queries at a time: each piece's sorted copy stays small.
        pieces = max(workers(), (queries.size * int(count)) >> 17)
        clash = np.concatenate(parallel_map(_rows_with_repeats, np.array_split(block, min(pieces, queries.size))))
        suspects.extend(queries[clash].tolist())
    groups = []
    for query in suspects:
        rows = np.arange(offsets[query], offsets[query + 1])
        by_doc: dict[str, list[int]] = {}
        for row, doc in zip(rows.tolist(), doc_ids.slice(int(offsets[query]), rows.size).to_pylist()):
            by_doc.setdefault(doc, []).append(row)
        groups.extend(np.array(g) for g in by_doc.values() if len(g) > 1)
    return groups


def duplicate_advice(field: str) -> str:
    """What the error about a repeated (query, doc) tells the reader to do, in a browser (which
    has no duplicates option), in code and on the command line; ``field``: "score" or "grade"."""
    return (f"trec_eval refuses this: remove one of the lines, or keep the higher {field} with duplicates='max' "
            "(on the command line, --duplicates max)")


def _resolve_duplicates(groups, values, codes, query_ids, doc_ids, duplicates, where: Locator, field, perm=None):
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
            f"{len(groups)} duplicated pair(s) in all); {duplicate_advice(field)}",
            second, field="doc_id", value=doc,
        )
    drop = []
    for group in groups:
        keep = group[np.argmax(values[group])]
        drop.extend(int(r) for r in group if r != keep)
    return np.array(sorted(drop), dtype=np.int64)


def _group_rows(columns: list, where: Locator, duplicates: str, field: str, order):
    """Encode queries, order rows with ``order(codes, values, doc_ids)``, hash doc ids, and apply
    the duplicates policy. Shared by runs and qrels.

    ``order`` gives None (the rows are in order) or ``(permutation, values in its order or
    None)``; the permutation puts the rows in query code order (codes number queries by first
    appearance), whatever it does within a query.

    ``columns`` is ``[query_ids, doc_ids, values]``, emptied here: where nothing else holds the
    arrays, each is let go as soon as its encoded or reordered copy replaces it."""
    query_ids, doc_ids, values = columns
    columns.clear()
    codes, qids = _encode_queries(query_ids)
    del query_ids
    # Arrow's pool keeps freed pages for reuse: the parse's (its blocks, the columns not used,
    # the query ids just encoded) go back before the work below needs memory of its own; a
    # 7M-line run held some 150-220 MB of them.
    pool = pa.default_memory_pool()
    pool.release_unused()
    ordered = order(codes, values, doc_ids)
    perm = None
    if ordered is not None:
        perm, ordered_values = ordered
        # Codes in query order are each code repeated by its count: no gather. One column at a
        # time, each original let go before the next (unless the caller holds it), and doc ids
        # hashed after their gather, not before it (a gather of random 8-byte keys: 0.29 s of
        # a 7M-line shuffled run, the hash of the ordered ids 0.14 s).
        codes = np.repeat(np.arange(len(qids), dtype=np.int32), np.bincount(codes, minlength=len(qids)))
        values = values[perm] if ordered_values is None else ordered_values
        del ordered, ordered_values
        if isinstance(doc_ids, pa.ChunkedArray):
            # Its take joins the chunks into a copy first: joined here, so the chunks can go
            # before the gather instead of after it.
            doc_ids = doc_ids.combine_chunks()
            pool.release_unused()
        doc_ids = gather_in_parts(doc_ids, perm)
        pool.release_unused()  # the pool keeps freed pages for reuse: the originals' go back now
    keys = string_keys(doc_ids)
    offsets = _offsets(codes, len(qids))
    groups = _find_duplicates(offsets, keys, doc_ids)
    drop = _resolve_duplicates(groups, values, codes, qids, doc_ids, duplicates, where, field, perm)
    notes = [f"query ids that differ only by invisible characters are different queries: {a!r} and {b!r}"
             for a, b in invisible_twins(strings(qids.tolist()))]
    if drop is not None:
        keep = np.ones(codes.size, dtype=bool)
        keep[drop] = False
        codes, values, keys = codes[keep], values[keep], keys[keep]
        doc_ids = doc_ids.filter(pa.array(keep))
        offsets = _offsets(codes, len(qids))
        notes.append(f"{drop.size} duplicate (query, doc) row(s) dropped, the higher {field} kept (duplicates='max')")
    return qids, offsets, doc_ids, keys, values, notes


def _group_order(codes: np.ndarray, _values, _doc_ids) -> tuple[np.ndarray, None] | None:
    """Qrels keep their file order within a query; only interleaved queries are regrouped."""
    if _is_contiguous(codes, int(codes.max()) + 1 if codes.size else 0):
        return None
    return np.argsort(codes, kind="stable"), None


def build_run(query_ids: pa.Array, doc_ids: pa.Array, scores: np.ndarray | None, ranks: np.ndarray | None = None, *,
              name: str | None = None, source: str | None = None, line_of: LineOf = no_lines,
              duplicates: str = "error", warnings=(), line_label: str = "line") -> Run:
    """Validate, order and index run rows (see :class:`Run`); the readers' common last step.

    ``scores`` orders each query (descending; ties by doc id descending). When only ``ranks``
    is given (no scores), rows are ordered by rank ascending and the stored score is -rank.
    ``line_of(row)`` maps an input row to its file line for error messages.
    """
    return build_run_handed_over([query_ids, doc_ids, scores, ranks], name=name, source=source, line_of=line_of,
                                 duplicates=duplicates, warnings=warnings, line_label=line_label)


def build_run_handed_over(columns: list, *, name: str | None = None, source: str | None = None,
                          line_of: LineOf = no_lines, duplicates: str = "error", warnings=(),
                          line_label: str = "line") -> Run:
    """:func:`build_run` of ``columns = [query_ids, doc_ids, scores, ranks]``, which it empties.

    For a reader that gives its parsed columns up: a run not in rank order is reordered by
    copies, and with no other reference left each original is freed as its copy replaces it
    (a 7M-line shuffled run: the doc ids and scores not held twice).
    """
    query_ids, doc_ids, scores, ranks = columns
    columns.clear()
    check_duplicates_policy(duplicates)
    where = Locator(source, line_of, line_label)
    warnings = list(warnings)
    check_ids(query_ids, "query_id", where)
    check_ids(doc_ids, "doc_id", where)
    if scores is None:
        if ranks is None:
            raise where.error("a run needs a score or a rank column", field="score")
        check_finite(ranks, "rank", where)
        scores = -np.asarray(ranks, dtype=np.float64)
        warnings.append("no score column: docs ordered by the rank column")
    else:
        scores = np.asarray(scores, dtype=np.float64)
        check_finite(scores, "score", where)
    rows = [query_ids, doc_ids, scores]
    del query_ids, doc_ids, scores, ranks
    qids, offsets, doc_ids, keys, scores, notes = _group_rows(rows, where, duplicates, "score", _rank_order)
    return Run(qids, offsets, doc_ids, keys, scores, name=name, source=source, warnings=warnings + notes)


def build_qrels(query_ids: pa.Array, doc_ids: pa.Array, grades: np.ndarray, *, name: str | None = None,
                source: str | None = None, line_of: LineOf = no_lines, duplicates: str = "error", warnings=(),
                line_label: str = "line") -> Qrels:
    """Validate and index judgements (see :class:`Qrels`); the readers' common last step."""
    check_duplicates_policy(duplicates)
    where = Locator(source, line_of, line_label)
    check_ids(query_ids, "query_id", where)
    check_ids(doc_ids, "doc_id", where)
    grades = np.asarray(grades, dtype=np.float64)
    check_finite(grades, "grade", where)
    qids, offsets, doc_ids, keys, grades, notes = _group_rows([query_ids, doc_ids, grades], where, duplicates, "grade",
                                                              _group_order)
    return Qrels(qids, offsets, doc_ids, keys, grades, name=name, source=source, warnings=list(warnings) + notes)
