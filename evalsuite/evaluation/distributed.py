"""Evaluate runs larger than one machine's memory on a Dask cluster, with the single-machine numbers.

``evaluate(qrels, run, metrics, engine="dask")`` (or :func:`evaluate_dask` here) reads the run
shard by shard on the workers, hash-partitions run and qrels rows by query id (a Dask shuffle,
which spills to disk where Dask spills), so every query lies whole in one partition, and
evaluates each partition with the single-machine engine itself (:mod:`~evalsuite.evaluation.local`): the same parsing checks, the
same tie order and the same vectorised kernel (:func:`evalsuite.metrics.ranking_kernel.compute_metrics`). Per
query values are therefore the single-machine values bit for bit. Only the per-query table
(one row per query, a few MB even for a million queries) comes back to the client, where it is
ordered by query id and reduced exactly as the single-machine path reduces it, so the means are
bit-identical too, whatever the partitioning and whatever order the partitions finish in.

Every metric :func:`evalsuite.evaluate` computes is per query (P, recall, hit rate, MRR, MAP,
nDCG in both gains, judged@k), so all of them are available here; nothing of the registry needs
the whole collection at once.

The inputs (files, shards, blocks, data frames) are read and checked by
:mod:`~evalsuite.evaluation.shards`. This module imports dask only when called; ``import evalsuite``
never imports it (``pip install evalsuite[dask]`` installs ``dask[dataframe]`` and ``distributed``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalSuiteError
from .planning import block_bytes_for, estimate_rows, plan_partitions, worker_memory
from .shards import (
    _BLOCK_BYTES, _arrow_ids, _check_duplicates, _frame_from_dataframe, _input_frame, _read_shard, pieces,
    shard_paths,
)

__all__ = ["evaluate_dask", "shard_paths"]

# The logger's documented name (docs/scale.md), kept when this module moved into evaluation/.
log = logging.getLogger("evalsuite.distributed")


def _need_dask():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EvalSuiteError("engine='dask' needs dask[dataframe] and distributed: pip install 'evalsuite[dask]'",
                             field="engine", value="dask") from exc


def _defaulted_values(qrels, specs, rel: float, queries_: list[str]) -> dict[str, np.ndarray]:
    """Per-query values of qrels queries that have no run rows at all (the kernel, with no rows)."""
    from ..metrics.ranking_kernel import JudgedRanking, compute_metrics

    index = pd.Index(queries_)
    row_query = index.get_indexer(pd.Index(np.repeat(qrels.query_ids, qrels.counts)))
    grade = qrels.grades
    order = np.lexsort((-grade, row_query))
    empty_i = np.empty(0, dtype=np.int64)
    judged = JudgedRanking(n_queries=len(queries_), row_query=empty_i, row_rank=empty_i,
                           row_grade=np.empty(0, dtype=np.float64), row_judged=np.empty(0, dtype=bool),
                           n_retrieved=np.zeros(len(queries_), dtype=np.int64),
                           judged_query=row_query[order].astype(np.int64), judged_grade=grade[order])
    return compute_metrics(judged, specs, rel)


def _evaluate_partition(run: pd.DataFrame, qrels: pd.DataFrame, metric_names: list[str], queries: str,
                        rel_level: float, duplicates: str, run_sources: list, qrels_sources: list, limits,
                        max_docs: int | None = None) -> dict:
    """Evaluate one partition (every query of it is whole here) with the single-machine evaluate()."""
    from ..io.run_qrels import build_qrels, build_run
    from .local import evaluate_local
    from .report import parse_metrics
    from ..utils.checks import check_rel_level

    specs = parse_metrics(metric_names)
    rel = check_rel_level(rel_level)
    run_ids = sorted(run["query_id"].unique().tolist())
    qrels_ids = sorted(qrels["query_id"].unique().tolist())
    out: dict[str, Any] = {"run_ids": run_ids, "qrels_ids": qrels_ids, "notes": []}
    columns = [s.name for s in specs]
    q = r = None
    try:  # build_run and build_qrels find duplicates fast; the slow search names shards and lines
        if len(qrels):
            q = build_qrels(_arrow_ids(qrels["query_id"]), _arrow_ids(qrels["doc_id"]), qrels["grade"].to_numpy(),
                            duplicates=duplicates)
            out["notes"] += [f"qrels: {w}" for w in q.warnings]
        if len(run):
            r = build_run(_arrow_ids(run["query_id"]), _arrow_ids(run["doc_id"]), run["score"].to_numpy(),
                          duplicates=duplicates)
            out["notes"] += [f"run: {w}" for w in r.warnings]
    except EvalSuiteError as exc:
        if exc.field == "doc_id" and duplicates == "error":
            _check_duplicates(run, "run", run_sources, limits)
            _check_duplicates(qrels, "qrels", qrels_sources, limits)
        raise
    if set(run_ids) & set(qrels_ids):
        report = evaluate_local(q, r, metric_names, queries=queries, rel_level=rel_level, max_docs=max_docs)
        out["per_query"] = report.per_query
        out["no_relevant"] = report.no_relevant_queries
        del report, q, r
        pa.default_memory_pool().release_unused()
        return out
    # No query of the partition is in both: run queries are dropped; qrels queries score 0 ("qrels")
    # or are dropped ("intersection").
    if q is None or queries == "intersection":
        out["per_query"] = pd.DataFrame({c: np.empty(0) for c in columns}, index=pd.Index([], name="query_id",
                                                                                          dtype=object))
        out["no_relevant"] = []
        return out
    values = _defaulted_values(q, specs, rel, qrels_ids)
    out["per_query"] = pd.DataFrame({c: values[c] for c in columns}, index=pd.Index(qrels_ids, name="query_id"))
    n_relevant = pd.Series(q.grades >= rel).groupby(np.repeat(q.query_ids, q.counts)).sum()
    out["no_relevant"] = sorted(i for i in qrels_ids if n_relevant.get(i, 0) == 0)
    return out


@contextlib.contextmanager
def _client(scheduler, cluster_options: dict | None):
    """A distributed Client: the one given, one connected to an address, or a new LocalCluster's."""
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler is None:
        options = {"processes": True, "dashboard_address": ":0", "silence_logs": logging.CRITICAL, **(cluster_options or {})}
        with LocalCluster(**options) as cluster, \
                Client(cluster) as client:
            yield client
        return
    with Client(scheduler) as client:
        yield client


def evaluate_dask(qrels, run, metrics: str | Sequence[str] | None = None, queries: str = "qrels",
                  rel_level: float = 1, *, scheduler=None, partitions: int | None = None, name: str | None = None,
                  duplicates: str = "error", limits=None, progress: bool = False,
                  cluster_options: dict | None = None, shuffle_method: str | None = "tasks",
                  block_bytes: int | None = None, max_docs: int | None = None, on_plan=None):
    """Score a run against qrels on a Dask cluster; the same report as :func:`evalsuite.evaluate`.

    Parameters
    ----------
    qrels : path, glob, Parquet folder, Qrels, {query: {doc: grade}}, pandas or Dask DataFrame
        Judgements. Files are read on the workers with EvalSuite's readers (every format, gzip).
    run : path, glob of shards (``"run.*.trec.gz"``), Parquet folder, Run, pandas or Dask DataFrame
        The run. Each file (or block of ``block_bytes`` of an uncompressed TREC file) is one
        input partition, read whole by one worker, so a partition's size (about 3.4 times its
        uncompressed bytes while parsed) bounds a worker's memory, not the run's size. A data frame needs query id, doc id and score (or rank) columns, named as
        the readers accept them (``query_id``/``qid``, ``doc_id``/``docno``, ``score``).
    metrics, queries, rel_level, max_docs :
        As in :func:`evalsuite.evaluate` (default: its ``DEFAULT_METRICS``; ``max_docs`` is
        trec_eval's -M).
    scheduler : None, str or distributed.Client
        None starts a ``LocalCluster`` (processes; ``cluster_options`` are passed to it, e.g.
        ``{"n_workers": 2, "memory_limit": "4GiB"}``) and closes it afterwards; a string is a
        scheduler address (``tcp://host:8786``); a Client is used as it is.
    partitions : int, optional
        Partitions of the hash shuffle by query id. Default: planned from the input files' sizes
        and the workers' memory (:func:`evalsuite.evaluation.planning.plan_partitions`): enough
        that evaluating one holds at most an eighth of a worker thread's memory, at least one per
        thread; for a data frame of unknown size, one per input partition. The plan and its
        reason are in ``report.params`` (``partitions``, ``partitions_reason``), logged, and
        passed to ``on_plan``.
    name : str, optional
        Run name (default: the TREC run tag when every shard has the same one, else the
        first shard's file name).
    duplicates : {"error", "max"}
        As in :func:`evalsuite.read_run`; an error names both shards and lines.
    limits : ReadLimits, optional
        Per-shard read limits (see :class:`evalsuite.ReadLimits`).
    progress : bool
        Show Dask's progress bar on stderr (the command line does). Progress is also logged
        (logger ``evalsuite.distributed``, INFO) as partitions finish.
    shuffle_method : {"tasks", "p2p"} or None
        Dask's shuffle. "tasks" (default) went through 100 million lines on two 4 GiB workers;
        "p2p" (Dask's own default on a cluster) stalled there at 66 % with workers restarted
        at their memory limit (``benchmarks/README.md``). None: Dask's configured default.
    block_bytes : int, optional
        An uncompressed TREC file larger than this is read in blocks of about this many bytes,
        cut at line breaks (default 128 MiB, some 3.5 million MS MARCO-like lines, or less when
        reading a block would hold more than a quarter of a worker thread's memory); a gzip file
        or a column format (CSV, Parquet ...) is one input partition.
    on_plan : callable, optional
        Called with the :class:`~evalsuite.evaluation.planning.PartitionPlan` before any work is
        sent to the cluster (the command line prints its reason).

    Returns
    -------
    EvaluationReport
        Per-query table and means ``==`` those of :func:`evalsuite.evaluate` on the same data,
        whatever ``partitions``; ``params`` also has ``engine``, ``partitions`` and
        ``partitions_reason``.

    Raises
    ------
    EvalSuiteError
        Everything :func:`evalsuite.evaluate` and the readers raise, naming the shard and line;
        a doc listed twice for a query, in one shard or in two, names both places; dask or
        distributed not installed.

    References
    ----------
    Dask (Rocklin, SciPy 2015); the metrics' definitions and trec_eval's conventions as in
    :func:`evalsuite.evaluate` (``docs/metrics.md``, ``docs/conventions.md``).

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d1": 0.9, "d2": 0.5}}
    >>> report = evaluate_dask(qrels, run, "mrr", cluster_options={"n_workers": 1, "processes": False})
    >>> report.means  # (1 + 1/2) / 2, as evaluate() gives
    {'mrr': 0.75}
    """
    _need_dask()
    import dask
    import dask.dataframe as dd
    from distributed import as_completed

    from .report import DEFAULT_METRICS, QUERY_POLICIES, parse_metrics
    from ..io.columns import check_duplicates_policy
    from ..utils.checks import check_rel_level

    specs = parse_metrics(DEFAULT_METRICS if metrics is None else metrics)
    metric_names = [s.name for s in specs]
    check_rel_level(rel_level)
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, int) or max_docs < 1):
        raise EvalSuiteError("max_docs must be a whole number >= 1 (or None for every doc)", field="max_docs",
                             value=max_docs)
    if queries not in QUERY_POLICIES:
        raise EvalSuiteError(f"queries must be one of {', '.join(QUERY_POLICIES)}", field="queries", value=queries)
    check_duplicates_policy(duplicates)
    if partitions is not None and (not isinstance(partitions, int) or partitions < 1):
        raise EvalSuiteError("partitions must be a whole number >= 1", field="partitions", value=partitions)

    run_in, run_meta = _input_frame(run, "run", None)  # files found (or refused) before a cluster starts
    qrels_in, qrels_meta = _input_frame(qrels, "qrels", None)

    with _client(scheduler, cluster_options) as client:
        memory_per_thread, n_workers, n_threads = worker_memory(client)
        blocks = block_bytes if block_bytes is not None else block_bytes_for(memory_per_thread, _BLOCK_BYTES)
        run_in = pieces(run_in, blocks) if isinstance(run_in, list) else run_in
        qrels_in = pieces(qrels_in, blocks) if isinstance(qrels_in, list) else qrels_in
        n_in = len(run_in) if isinstance(run_in, list) else run_in.npartitions
        rows, row_bytes, largest = estimate_rows(run_in, "run") if isinstance(run_in, list) else (None, None, 0)
        what = ("input partitions" if not isinstance(run_in, list) else
                "shards" if all(isinstance(p, str) for p in run_in) else "shards and blocks")
        plan = plan_partitions(partitions, n_in, rows, row_bytes, memory_per_thread, n_workers, n_threads, largest,
                               what)
        n_parts = plan.partitions
        log.info("dask: %s", plan.reason)
        if on_plan is not None:
            on_plan(plan)

        def build(inp, meta, kind):
            if isinstance(inp, list):
                sources = list(inp)
                pairs = [dask.delayed(_read_shard, nout=2, pure=True)(p, i, kind, limits) for i, p in enumerate(inp)]
                frame = dd.from_delayed([p[0] for p in pairs], meta=meta, verify_meta=False)
                return frame, sources, [p[1] for p in pairs]
            frame, sources, infos = _frame_from_dataframe(inp, kind)
            return frame, sources, infos

        run_frame, run_sources, run_infos = build(run_in, run_meta, "run")
        qrels_frame, qrels_sources, qrels_infos = build(qrels_in, qrels_meta, "qrels")
        shuffle = {} if shuffle_method is None else {"shuffle_method": shuffle_method}
        run_parts = run_frame.shuffle(on="_p", npartitions=n_parts, **shuffle).to_delayed()
        qrels_parts = qrels_frame.shuffle(on="_p", npartitions=n_parts, **shuffle).to_delayed()
        tasks = [dask.delayed(_evaluate_partition, pure=True)(r, q, metric_names, queries, rel_level, duplicates,
                                                              run_sources, qrels_sources, limits, max_docs)
                 for r, q in zip(run_parts, qrels_parts)]
        futures = client.compute([*tasks, dask.delayed(list)(run_infos), dask.delayed(list)(qrels_infos)])
        if progress:
            from distributed import progress as dask_progress

            with contextlib.redirect_stdout(sys.stderr):
                dask_progress(futures)
        done = 0
        for future in as_completed(futures[:len(tasks)]):
            if future.status == "error":
                future.result()  # raises the worker's EvalSuiteError here
            done += 1
            log.info("dask: %d/%d partitions evaluated", done, len(tasks))
        results = client.gather(futures)
    parts, run_infos, qrels_infos = results[:len(tasks)], results[-2], results[-1]
    return _assemble(parts, run_infos, qrels_infos, specs, queries, rel_level, plan, name, run, qrels, max_docs)


def _assemble(parts, run_infos, qrels_infos, specs, queries, rel_level, plan, name, run, qrels, max_docs):
    """The report, from the partitions' results, by the single-machine evaluate()'s own query
    policy and report assembly (so the words and the corpus values are the same too)."""
    from .report import build_report, queries_to_evaluate

    run_set: set[str] = set()
    qrels_set: set[str] = set()
    for part in parts:
        if run_set.intersection(part["run_ids"]) or qrels_set.intersection(part["qrels_ids"]):
            raise RuntimeError("internal error: a query id lies in two partitions")  # the shuffle guarantees not
        run_set.update(part["run_ids"])
        qrels_set.update(part["qrels_ids"])
    warnings = []
    for info in run_infos:
        warnings += [f"run: {info['source']}: {w}" for w in info["warnings"]]
    if any(info["rank_only"] for info in run_infos):
        warnings.append("run: no score column: docs ordered by the rank column")
    for info in qrels_infos:
        warnings += [f"qrels: {info['source']}: {w}" for w in info["warnings"]]
    for note in sorted({n for part in parts for n in part["notes"]}):
        warnings.append(note)
    eval_ids, dropped = queries_to_evaluate(run_set, qrels_set, queries, warnings)
    defaulted = sorted(set(eval_ids) - run_set)
    frames = [p["per_query"] for p in parts if len(p["per_query"])]
    table = pd.concat(frames) if frames else pd.DataFrame(columns=[spec.name for spec in specs], dtype=np.float64)
    table = table.reindex(pd.Index(eval_ids, name="query_id"))
    no_relevant = sorted(q for p in parts for q in p["no_relevant"])
    tags = {info["tag"] for info in run_infos}
    run_name = name or (tags.pop() if len(tags) == 1 and None not in tags else None)
    if run_name is None and run_infos:
        run_name = os.path.splitext(os.path.basename(run_infos[0]["source"].removesuffix(".gz")))[0]
    values = {spec.name: table[spec.name].to_numpy(dtype=np.float64, copy=True) for spec in specs}
    return build_report(values, specs, eval_ids, queries=queries, rel_level=rel_level, dropped=dropped,
                        defaulted=defaulted, no_relevant=no_relevant, warnings=warnings, params={
                            "max_docs": max_docs, "run_name": run_name,
                            "run_source": os.fspath(run) if isinstance(run, (str, os.PathLike)) else "data frame",
                            "qrels_source": os.fspath(qrels) if isinstance(qrels, (str, os.PathLike)) else "qrels",
                            "engine": "dask", "partitions": plan.partitions, "partitions_reason": plan.reason})
