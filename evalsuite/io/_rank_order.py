"""How a run's rows are put in trec_eval's order: query (by code), score descending, doc id
descending where scores tie; each step a block of rows at a time, so no sorted copy of every
column is held (issue 31's memory target). Used by :func:`evalsuite.io.run_qrels.build_run`."""

from __future__ import annotations

import bisect

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..utils.arrays import take
from ..utils.parallel import parallel_map


def _rank_order(codes: np.ndarray, scores: np.ndarray, doc_ids: pa.Array) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Permutation putting rows in (query, score desc, doc id desc) order, with ``scores`` in
    that order when it came out of the sort (None: gather them); None if already so.

    Rows are ordered by score with numpy's quicksort, then grouped by query with a stable sort
    of the query codes (a radix sort when they fit 16 bits); where queries are long (top-1000
    runs) they are grouped first and each query's scores sorted alone. Doc ids are compared
    only within runs of equal (query, score), usually none. A sort on all three keys, doc id strings
    included, took 2.7 s of a 4.9 s read of a 7-million-line file whose lines were shuffled.
    """
    n = codes.size
    if n <= 1:
        return None
    same = codes[1:] == codes[:-1]
    if bool(np.all(codes[1:] >= codes[:-1])) and not bool(np.any(same & (scores[1:] > scores[:-1]))):
        tie = np.flatnonzero(same & (scores[1:] == scores[:-1]))
        if tie.size == 0:
            return None
        left = take(doc_ids, tie)
        right = take(doc_ids, tie + 1)
        if bool(pc.all(pc.greater(left, right)).as_py()):
            return None
    del same
    n_queries = int(codes.max(initial=0)) + 1
    if n >= _ROWS_PER_QUERY_SORTED_ALONE * n_queries:
        order, same, ordered_scores = _score_order_within_queries(codes, scores, n_queries)
        return _break_ties(order, codes, scores, doc_ids, same, ordered_scores), ordered_scores
    # Score descending (the order of equal scores is settled below); 32-bit row numbers and
    # 16-bit query codes where they fit keep the sort's arrays small (memory is issue 31's other target).
    order = np.argsort(np.negative(scores))
    if n < (1 << 31):
        order = order.astype(np.int32)
    by_query, _ = _stable_group_order(codes[order], n_queries)
    order = order[by_query]
    del by_query
    return _break_ties(order, codes, scores, doc_ids), None


# Queries this long on average are grouped first, then each sorted by score on its own: 7,000
# sorts of 1,000 scores (cache-sized) took 0.37 s where one sort of all 7 million took 0.72 s;
# with fewer rows per query the loop's per-query cost would outweigh it.
_ROWS_PER_QUERY_SORTED_ALONE = 256


def _stable_group_order(codes: np.ndarray, n_codes: int, block: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows ordered by code, file order kept within a code (what a stable argsort gives), and
    the count of each code.

    A counting sort a block of rows at a time: each block is sorted on its own (a radix sort
    when codes fit 16 bits) and its rows written to their places after the rows of earlier
    blocks. One argsort of 7 million codes held 126 MB of temporaries (its int64 result and
    the radix sort's buffer) and took 0.33-0.36 s; blocks of 2**17 rows stay in cache and took
    0.20-0.22 s. A block is never smaller than the number of codes, whose per-block counts it pays.
    """
    counts = np.bincount(codes, minlength=n_codes)
    cursor = np.zeros(n_codes, dtype=np.int64)
    np.cumsum(counts[:-1], out=cursor[1:])
    order = np.empty(codes.size, dtype=np.int32 if codes.size < (1 << 31) else np.int64)
    narrow = n_codes <= (1 << 16)
    block = block or max(1 << 17, n_codes)
    first = np.zeros(n_codes, dtype=np.int64)
    for start in range(0, codes.size, block):
        piece = codes[start:start + block]
        if narrow:
            piece = piece.astype(np.uint16)
        local = np.argsort(piece, kind="stable")
        piece_codes = piece[local]
        piece_counts = np.bincount(piece_codes, minlength=n_codes)
        np.cumsum(piece_counts[:-1], out=first[1:])
        order[cursor[piece_codes] + (np.arange(local.size) - first[piece_codes])] = local + start
        cursor += piece_counts
    return order, counts


def _score_order_within_queries(codes: np.ndarray, scores: np.ndarray, n_queries: int,
                                block: int = 1 << 18) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows by query code (stable: a radix sort when codes fit 16 bits), each query's rows by
    score descending (equal scores in no set order: the caller breaks ties); for each pair of
    neighbours in that order, whether they tie (same query and score); and the scores in that
    order (sorted here anyway: a gather of all of them afterwards took 0.13 s of 7 million).

    Scores are gathered for a block of whole queries (about ``block`` rows) at a time, so no
    reordered copy of all of them is held (56 MB for 7 million rows); the blocks are sorted on
    the shared thread pool (numpy lets go of the GIL while it sorts and gathers), and a block
    whose queries all have the same length (a top-k run) in one 2-D sort: 7,000 queries of
    1,000 rows took 0.31 s query by query, 0.15-0.26 s as one 2-D sort on one thread."""
    order, counts = _stable_group_order(codes, n_queries)
    ends = np.cumsum(counts).tolist()
    starts = [0] + ends[:-1]
    same = np.empty(max(order.size - 1, 0), dtype=bool)
    ordered_scores = np.empty(order.size, dtype=np.float64)
    spans = []  # (first query, end query) of each block
    first_query = 0
    while first_query < n_queries:
        end_query = max(first_query + 1, bisect.bisect_right(ends, starts[first_query] + block, lo=first_query))
        spans.append((first_query, end_query))
        first_query = end_query

    def sort_block(span: tuple[int, int]) -> None:
        first, end = span
        low, high = starts[first], ends[end - 1]
        rows = order[low:high]  # a view: reordered in place
        negated = scores[rows]
        np.negative(negated, out=negated)
        lengths = counts[first:end]
        width = int(lengths[0])  # a block holds one query at least
        if width > 1 and bool(np.all(lengths == width)):
            by_score = np.argsort(negated.reshape(-1, width), axis=1)
            by_score += np.arange(0, high - low, width, dtype=by_score.dtype)[:, None]
            by_score = by_score.ravel()
            rows[:] = rows[by_score]
            negated = negated[by_score]
        else:
            for start, stop in zip(starts[first:end], ends[first:end]):
                if stop - start > 1:
                    by_score = np.argsort(negated[start - low:stop - low])
                    rows[start - low:stop - low] = rows[start - low:stop - low][by_score]
                    negated[start - low:stop - low] = negated[start - low:stop - low][by_score]
        np.equal(negated[1:], negated[:-1], out=same[low:high - 1])  # same[high - 1]: a query boundary, below
        np.negative(negated, out=ordered_scores[low:high])

    parallel_map(sort_block, spans)
    boundaries = np.asarray(ends[:-1], dtype=np.int64)
    same[boundaries[boundaries > 0] - 1] = False  # a query's last row and the next one's first never tie
    return order, same, ordered_scores


def _break_ties(order: np.ndarray, codes: np.ndarray, scores: np.ndarray, doc_ids: pa.Array,
                same: np.ndarray | None = None, ordered_scores: np.ndarray | None = None) -> np.ndarray:
    """``order`` (rows by query, then score descending) with each run of equal (query, score)
    put in doc id descending order (byte order), as trec_eval breaks ties. ``same``: whether
    each pair of neighbours in ``order`` ties, when the caller knows it already;
    ``ordered_scores`` (``scores[order]``) is kept so as ``order`` changes (0.0 and -0.0 tie)."""
    if same is None:
        same = np.empty(max(order.size - 1, 0), dtype=bool)
        step = 1 << 20  # gathered a slice at a time: no sorted copy of the codes and scores
        for start in range(0, order.size - 1, step):
            rows = order[start:start + step + 1]
            slice_codes, slice_scores = codes[rows], scores[rows]
            same[start:start + rows.size - 1] = ((slice_codes[1:] == slice_codes[:-1])
                                                 & (slice_scores[1:] == slice_scores[:-1]))
    if not same.any():
        return order
    tied = np.zeros(order.size, dtype=bool)
    tied[:-1] |= same
    tied[1:] |= same
    positions = np.flatnonzero(tied)  # the runs of ties, each contiguous in ``order``
    starts = np.ones(positions.size, dtype=bool)
    starts[1:] = ~same[positions[1:] - 1]
    rows = order[positions]
    table = pa.table({"run": np.cumsum(starts), "d": take(doc_ids, rows)})
    within = pc.sort_indices(table, [("run", "ascending"), ("d", "descending")]).to_numpy()
    order[positions] = rows[within]
    if ordered_scores is not None:
        ordered_scores[positions] = scores[order[positions]]
    return order
