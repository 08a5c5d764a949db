"""The single-machine engine of :func:`evalsuite.evaluate`: a run joined with its qrels on 64-bit
(query, doc) keys, every metric from one pass of the ranking kernel, no Python loop over queries."""

from __future__ import annotations

import numbers
import os
import sys
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError
from ..io.run_files import read_qrels, read_run
from ..io.run_qrels import Qrels, Run
from ..metrics.ranking_kernel import JudgedRanking, compute_metrics
from ..utils.checks import check_rel_level, ranks_from_counts
from ..utils.arrays import strings
from ..utils.keys import group_keys, strings_equal
from .report import (
    DEFAULT_METRICS, QUERY_POLICIES, EvaluationReport, build_report, invisible_id_warnings, parse_metrics,
    queries_to_evaluate,
)

__all__ = ["evaluate_local", "as_qrels", "as_run"]

_BLOCK_ROWS = 1 << 20  # run rows evaluated at once (whole queries; a larger query is a block of its own)


def _as_ranked(value, cls, what: str, value_name: str):
    """A Run or Qrels from what the caller has: the object, a file path, a ranx-style mapping or
    a data frame."""
    if isinstance(value, cls):
        return value
    if isinstance(value, (str, os.PathLike)):
        return (read_run if cls is Run else read_qrels)(value)
    if isinstance(value, Mapping):
        return cls.from_dict(value)
    pandas = sys.modules.get("pandas")  # a data frame exists only where pandas was imported
    if pandas is not None and isinstance(value, pandas.DataFrame):
        return cls.from_dataframe(value)
    raise EvalSuiteError(f"{what} must be a {cls.__name__}, a file path, a {{query: {{doc: {value_name}}}}} mapping "
                         "or a data frame", field=what, value=type(value).__name__)


def as_qrels(qrels) -> Qrels:
    return _as_ranked(qrels, Qrels, "qrels", "grade")


def as_run(run) -> Run:
    return _as_ranked(run, Run, "run", "score")


def _positions_in(index: dict[str, int], ids) -> np.ndarray:
    """Position of each id in ``index`` (id -> position), -1 where absent; int64, shape (len(ids),).
    A dict, not a pandas Index: the evaluation needs no pandas (0.25 s to import)."""
    return np.fromiter((index.get(query, -1) for query in ids), dtype=np.int64, count=len(ids))


def _exact_grades(run: Run, rows: np.ndarray, row_query: np.ndarray, qrels: Qrels, qrels_rows: np.ndarray,
                  qrels_query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact (string) join of run rows with judgements; used only for queries with a key collision."""
    import pandas as pd

    left = pd.DataFrame({"q": row_query, "d": run.doc_ids.take(pa.array(rows)).to_pylist()})
    right = pd.DataFrame({"q": qrels_query, "d": qrels.doc_ids.take(pa.array(qrels_rows)).to_pylist(),
                          "g": qrels.grades[qrels_rows]})
    merged = left.merge(right, on=["q", "d"], how="left", sort=False)
    grades = np.array(merged["g"].to_numpy(dtype=np.float64, na_value=np.nan))  # a writable copy
    judged = ~np.isnan(grades)
    grades[~judged] = 0.0
    return grades, judged


def _lookup_grades(run: Run, rows: np.ndarray, row_query: np.ndarray, qrels: Qrels, qrels_rows: np.ndarray,
                   qrels_query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grade and judged flag of each selected run row, joined on (query, doc id).

    Uses 64-bit (query, doc) keys with searchsorted (run rows come grouped by query, so the
    search walks the sorted qrels keys nearly in order), then checks every match on the strings.
    A query where two different ids share a key (odds about 2**-40 per pair of its ids) is
    joined again on the strings; the other queries keep the fast result, which is exact for
    them because equal strings always have equal keys.
    """
    grades = np.zeros(rows.size, dtype=np.float64)
    judged = np.zeros(rows.size, dtype=bool)
    if rows.size == 0 or qrels_rows.size == 0:
        return grades, judged
    n_groups = int(max(row_query.max(), qrels_query.max())) + 1
    run_keys = group_keys(row_query, run.doc_keys[rows], n_groups)
    qrels_keys = group_keys(qrels_query, qrels.doc_keys[qrels_rows], n_groups)
    order = np.argsort(qrels_keys, kind="stable")
    sorted_keys = qrels_keys[order]
    repeated = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    suspect = set(qrels_query[order[repeated]].tolist())
    pos = np.minimum(np.searchsorted(sorted_keys, run_keys), sorted_keys.size - 1)
    matched = np.flatnonzero(sorted_keys[pos] == run_keys)
    match_rows = qrels_rows[order[pos[matched]]]
    confirmed = (qrels_query[order[pos[matched]]] == row_query[matched]) & strings_equal(
        run.doc_ids, rows[matched], qrels.doc_ids, match_rows)
    suspect.update(row_query[matched[~confirmed]].tolist())
    grades[matched[confirmed]] = qrels.grades[match_rows[confirmed]]
    judged[matched[confirmed]] = True
    if suspect:
        redo = np.isin(row_query, np.fromiter(suspect, dtype=row_query.dtype))
        redo_qrels = np.isin(qrels_query, np.fromiter(suspect, dtype=qrels_query.dtype))
        grades[redo], judged[redo] = _exact_grades(run, rows[redo], row_query[redo], qrels, qrels_rows[redo_qrels],
                                                   qrels_query[redo_qrels])
    return grades, judged


def evaluate_local(qrels, run, metrics: str | Sequence[str] = DEFAULT_METRICS, queries: str = "qrels",
                   rel_level: float = 1, max_docs: int | None = None) -> EvaluationReport:
    """:func:`evalsuite.evaluate` in this process (``engine="local"``): the single-machine engine,
    which the Dask engine also runs on each partition. Parameters, returns and errors as there."""
    specs = parse_metrics(metrics)
    rel = check_rel_level(rel_level)
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, numbers.Integral)
                                 or max_docs < 1):
        raise EvalSuiteError("max_docs must be a whole number >= 1 (or None for every doc)", field="max_docs",
                             value=max_docs)
    if queries not in QUERY_POLICIES:
        raise EvalSuiteError(f"queries must be one of {', '.join(QUERY_POLICIES)}", field="queries", value=queries)
    qrels, run = as_qrels(qrels), as_run(run)

    qrels_ids = qrels.query_ids
    run_ids = run.query_ids
    run_set = set(run_ids.tolist())
    warnings = [*(f"run: {w}" for w in run.warnings), *(f"qrels: {w}" for w in qrels.warnings)]
    query_twins = invisible_id_warnings("query", strings(run_ids.tolist()), strings(qrels_ids.tolist()))
    warnings += query_twins + invisible_id_warnings("doc", run.doc_ids, qrels.doc_ids)
    try:
        eval_ids, dropped = queries_to_evaluate(run_set, set(qrels_ids.tolist()), queries, warnings)
    except EvalSuiteError as exc:
        if not query_twins:
            raise
        raise EvalSuiteError(f"{exc.reason}; {query_twins[0]}", field=exc.field) from None
    defaulted = sorted(set(eval_ids) - run_set)
    eval_index = {query: i for i, query in enumerate(eval_ids)}

    # Kernel order: run queries in the run's own order (its rows stay contiguous, no re-sort),
    # then evaluated queries that the run lacks.
    run_eval_pos = _positions_in(eval_index, run_ids)
    run_kept = run_eval_pos >= 0
    n_run_kept = int(run_kept.sum())
    kernel_to_eval = np.concatenate([run_eval_pos[run_kept], _positions_in(eval_index, defaulted)]).astype(np.int64)
    eval_to_kernel = np.empty(len(eval_ids), dtype=np.int64)
    eval_to_kernel[kernel_to_eval] = np.arange(len(eval_ids))

    cutoffs = [s.k for s in specs]
    max_k = None if any(k is None for k in cutoffs) else max(cutoffs)
    counts = run.counts[run_kept]
    if max_docs is not None:
        counts = np.minimum(counts, max_docs)
    selected = counts if max_k is None else np.minimum(counts, max_k)
    starts = run.offsets[:-1][run_kept]

    qrels_eval_pos = _positions_in(eval_index, qrels_ids)
    qrels_row_query = qrels.row_queries()
    qrels_row_eval = qrels_eval_pos[qrels_row_query]
    qrels_rows = np.flatnonzero(qrels_row_eval >= 0)
    qrels_query = eval_to_kernel[qrels_row_eval[qrels_rows]]
    judged_grade = qrels.grades[qrels_rows]
    ideal_order = np.lexsort((-judged_grade, qrels_query))
    qrels_rows, qrels_query, judged_grade = qrels_rows[ideal_order], qrels_query[ideal_order], judged_grade[ideal_order]
    n_retrieved = np.zeros(len(eval_ids), dtype=np.int64)
    n_retrieved[:n_run_kept] = counts

    # The kernel's per-row arrays (rank, grade, keys, ...) for a block of queries at a time: a
    # query's values depend on its own rows only, so blocks change no value, and the memory is
    # bounded by a block (a run of 7M lines evaluated without a cutoff held 1.7x its file at once).
    per_kernel = {spec.name: np.empty(len(eval_ids), dtype=np.float64) for spec in specs}
    ends = np.cumsum(selected)
    cuts = [0]
    while cuts[-1] < n_run_kept:
        cuts.append(max(int(np.searchsorted(ends, (ends[cuts[-1] - 1] if cuts[-1] else 0) + _BLOCK_ROWS,
                                            side="right")), cuts[-1] + 1))
    if len(cuts) > 1:
        cuts[-1] = len(eval_ids)  # the last block also holds the qrels queries without run rows
    else:
        cuts.append(len(eval_ids))
    qrels_cuts = np.searchsorted(qrels_query, cuts)
    for (a, b), (qa, qb) in zip(zip(cuts[:-1], cuts[1:]), zip(qrels_cuts[:-1], qrels_cuts[1:])):
        block = selected[a:min(b, n_run_kept)]
        row_rank = ranks_from_counts(block)
        rows = np.repeat(starts[a:min(b, n_run_kept)], block) + row_rank
        row_query = np.repeat(np.arange(block.size, dtype=np.int64), block)
        block_query = qrels_query[qa:qb] - a
        row_grade, row_judged = _lookup_grades(run, rows, row_query, qrels, qrels_rows[qa:qb], block_query)
        judged = JudgedRanking(
            n_queries=b - a, row_query=row_query, row_rank=row_rank, row_grade=row_grade, row_judged=row_judged,
            n_retrieved=n_retrieved[a:b], judged_query=block_query, judged_grade=judged_grade[qa:qb],
        )
        for name, part in compute_metrics(judged, specs, rel).items():
            if name in per_kernel:
                per_kernel[name][a:b] = part
        del judged, rows, row_query, row_rank, row_grade, row_judged

    n_relevant = np.bincount(qrels_query[judged_grade >= rel], minlength=len(eval_ids))
    no_relevant = sorted(eval_ids[i] for i in kernel_to_eval[np.flatnonzero(n_relevant == 0)])
    values = {}
    for spec in specs:
        values[spec.name] = np.empty(len(eval_ids), dtype=np.float64)
        values[spec.name][kernel_to_eval] = per_kernel[spec.name]
    return build_report(values, specs, eval_ids, queries=queries, rel_level=rel_level, dropped=dropped,
                        defaulted=defaulted, no_relevant=no_relevant, warnings=warnings,
                        params={"max_docs": max_docs, "run_name": run.name, "run_source": run.source,
                                "qrels_source": qrels.source})
