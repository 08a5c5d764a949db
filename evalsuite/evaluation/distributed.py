"""Evaluate runs larger than one machine's memory on a Dask cluster, with the single-machine numbers.

``evaluate(qrels, run, metrics, engine="dask")`` (or :func:`evaluate_dask` here) reads the run
shard by shard on the workers, hash-partitions run and qrels rows by query id (a Dask shuffle,
which spills to disk where Dask spills), so every query lies whole in one partition, and
evaluates each partition with :func:`evalsuite.evaluate` itself: the same parsing checks, the
same tie order and the same vectorised kernel (:func:`evalsuite.ranking.compute_metrics`). Per
query values are therefore the single-machine values bit for bit. Only the per-query table
(one row per query, a few MB even for a million queries) comes back to the client, where it is
ordered by query id and reduced exactly as the single-machine path reduces it, so the means are
bit-identical too, whatever the partitioning and whatever order the partitions finish in.

Every metric :func:`evalsuite.evaluate` computes is per query (P, recall, hit rate, MRR, MAP,
nDCG in both gains, judged@k), so all of them are available here; nothing of the registry needs
the whole collection at once.

This module imports dask only when called; ``import evalsuite`` never imports it
(``pip install evalsuite[dask]`` installs ``dask[dataframe]`` and ``distributed``).
"""

from __future__ import annotations

import contextlib
import glob as _glob
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalSuiteError, reading_errors

__all__ = ["evaluate_dask", "shard_paths"]

# The logger's documented name (docs/scale.md), kept when this module moved into evaluation/.
log = logging.getLogger("evalsuite.distributed")

_RUN_COLUMNS = {"query_id": "string[pyarrow]", "doc_id": "string[pyarrow]", "score": "float64",
                "_shard": "int32", "_row": "int64", "_p": "int64"}
_QRELS_COLUMNS = {"query_id": "string[pyarrow]", "doc_id": "string[pyarrow]", "grade": "float64",
                  "_shard": "int32", "_row": "int64", "_p": "int64"}
_GLOB_CHARS = "*?["
_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


def _need_dask():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EvalSuiteError("engine='dask' needs dask[dataframe] and distributed: pip install 'evalsuite[dask]'",
                             field="engine", value="dask") from exc


def shard_paths(path: str | os.PathLike) -> list[str]:
    """The files a run (or qrels) argument names: one file, a glob of shards, or a Parquet folder.

    Parameters
    ----------
    path : str or path-like
        A file (``run.trec.gz``), a glob (``run.*.trec.gz``, sorted by name), or a folder
        (its ``*.parquet`` files at any depth, sorted by path; a Parquet dataset as Spark,
        pyarrow and Dask write it).

    Returns
    -------
    list of str
        The shard paths, sorted.

    Raises
    ------
    EvalSuiteError
        Nothing matches the glob, the folder holds no Parquet file, the file does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for i in (2, 1):
    ...     _ = (folder / f"run.{i}.trec").write_text("q1 Q0 d1 1 1.0 bm25\\n")
    >>> [pathlib.Path(p).name for p in shard_paths(folder / "run.*.trec")]
    ['run.1.trec', 'run.2.trec']
    """
    text = os.fspath(path)
    if os.path.isdir(text):
        found = sorted(p for p in _glob.glob(os.path.join(text, "**", "*"), recursive=True)
                       if p.endswith(_PARQUET_SUFFIXES) and os.path.isfile(p))
        if not found:
            raise EvalSuiteError("the folder holds no Parquet file (*.parquet)", source=text)
        return found
    if any(c in text for c in _GLOB_CHARS) and not os.path.exists(text):
        found = sorted(p for p in _glob.glob(text) if os.path.isfile(p))
        if not found:
            raise EvalSuiteError("no file matches this pattern", source=text)
        return found
    if not os.path.isfile(text):
        raise EvalSuiteError("no such file", source=text)
    return [text]


def _partition_of(query_ids, n: int) -> np.ndarray:
    """Partition number of each query id (a pandas Series or an Arrow array of strings): a hash of
    the string (pandas' ``hash_array``), modulo ``n``. Each distinct id is hashed once."""
    if isinstance(query_ids, pd.Series):
        query_ids = pa.chunked_array([pa.array(query_ids.to_numpy(dtype=object), pa.string())])
    chunked = query_ids if isinstance(query_ids, pa.ChunkedArray) else pa.chunked_array([query_ids])
    if not pa.types.is_dictionary(chunked.type):
        chunked = chunked.dictionary_encode()
    parts = []
    for chunk in chunked.chunks:
        hashed = pd.util.hash_array(chunk.dictionary.to_numpy(zero_copy_only=False).astype(object))
        by_value = (hashed % np.uint64(n)).astype(np.int64)
        parts.append(by_value[chunk.indices.to_numpy(zero_copy_only=False)])
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


_BLOCK_BYTES = 128 << 20  # an uncompressed TREC file above this is read in blocks of about this size


def _after_newline(handle, pos: int, size: int) -> int:
    """The offset just after the first line break at or after ``pos - 1`` (0 stays 0)."""
    if pos <= 0:
        return 0
    handle.seek(pos - 1)
    while True:
        chunk = handle.read(1 << 16)
        if not chunk:
            return size
        nl = chunk.find(b"\n")
        if nl != -1:
            return handle.tell() - len(chunk) + nl + 1


def _pieces(paths: list[str], block_bytes: int) -> list:
    """Input partitions: a file, or (path, start, end) byte blocks, cut at line breaks, of an
    uncompressed TREC file larger than ``block_bytes`` (gzip and the column formats are read whole)."""
    from ..io.run_files import detect_format

    out: list = []
    for path in paths:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            head = handle.read(65536)
            if size <= block_bytes or head[:2] == b"\x1f\x8b" or detect_format(head, path) != "trec":
                out.append(path)
                continue
            cuts = sorted({_after_newline(handle, i * block_bytes, size) for i in range(size // block_bytes + 1)} | {size})
        out.extend((path, a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a)
    return out


def _piece_name(piece) -> str:
    return os.path.basename(piece if isinstance(piece, str) else piece[0])


def _lines_before(piece) -> int:
    """Lines of the file before a block (0 for a whole file); read only to report an error."""
    if isinstance(piece, str) or piece[1] == 0:
        return 0
    count, left = 0, piece[1]
    with open(piece[0], "rb") as handle:
        while left:
            chunk = handle.read(min(left, 1 << 24))
            count, left = count + chunk.count(b"\n"), left - len(chunk)
    return count


def _parse_shard(piece, kind: str, limits):
    """Parse one shard (a file, or a block of lines of one) with the single-machine readers'
    parsers and their checks; returns (parsed, shown name). Line numbers in errors are the file's."""
    try:
        return _parse_piece(piece, kind, limits)
    except EvalSuiteError as exc:
        offset = _lines_before(piece) if exc.line is not None else 0
        if not offset:
            raise
        raise EvalSuiteError(exc.reason, source=exc.source, line=exc.line + offset, field=exc.field, value=exc.value,
                             line_label="line") from None


def _parse_piece(piece, kind: str, limits):
    from ..io.columns import Locator, check_finite, check_ids
    from ..io.run_files import read_columns

    name = _piece_name(piece)
    with reading_errors(name):
        if isinstance(piece, str):
            parsed, name = read_columns(piece, kind, limits)
        else:
            with open(piece[0], "rb") as handle:
                handle.seek(piece[1])
                block = handle.read(piece[2] - piece[1])
            parsed, name = read_columns(block, kind, limits, name=name, format="trec")
        if parsed.n_rows == 0:
            what = "run lines" if kind == "run" else "judgements"
            raise EvalSuiteError(f"no {what} found (the file is empty or holds only comments)", source=name)
        where = Locator(name, parsed.line_of, parsed.line_label)
        check_ids(parsed.query_ids, "query_id", where)
        check_ids(parsed.doc_ids, "doc_id", where)
        if parsed.values is not None:
            check_finite(parsed.values, "score" if kind == "run" else "grade", where)
        elif parsed.ranks is not None:
            check_finite(parsed.ranks, "rank", where)
        else:
            raise where.error("a run needs a score or a rank column", field="score")
        if kind == "qrels":
            bad = np.flatnonzero(parsed.values != np.floor(parsed.values))
            if bad.size:
                row = int(bad[0])
                raise EvalSuiteError("a grade must be a whole number (relevance levels are integers)", source=name,
                                     line=parsed.line_of(row), field="grade", value=parsed.raw_value(row),
                                     line_label=parsed.line_label)
    return parsed, name


def _read_shard(path: str, shard: int, kind: str, limits, n_partitions: int):
    """Read one shard on a worker: (rows as a data frame, {"tag", "warnings", "rank_only"})."""
    parsed, name = _parse_shard(path, kind, limits)
    rank_only = parsed.values is None
    values = -np.asarray(parsed.ranks, dtype=np.float64) if rank_only else np.asarray(parsed.values, dtype=np.float64)
    frame = pd.DataFrame({
        "query_id": pd.Series(pd.arrays.ArrowStringArray(_as_string_chunks(parsed.query_ids))),
        "doc_id": pd.Series(pd.arrays.ArrowStringArray(_as_string_chunks(parsed.doc_ids))),
        ("score" if kind == "run" else "grade"): values,
        "_shard": np.full(len(values), shard, dtype=np.int32),
        "_row": np.arange(len(values), dtype=np.int64),
    })
    frame["_p"] = _partition_of(parsed.query_ids, n_partitions)
    info = {"source": name, "tag": parsed.tag, "warnings": list(parsed.warnings), "rank_only": rank_only}
    del parsed
    pa.default_memory_pool().release_unused()  # give the parse's buffers back; workers read many shards
    return frame, info


def _as_string_chunks(ids) -> pa.ChunkedArray:
    """Ids (a string or dictionary-encoded array, chunked or not) as a chunked plain string array."""
    chunked = ids if isinstance(ids, pa.ChunkedArray) else pa.chunked_array([ids])
    if pa.types.is_dictionary(chunked.type):
        chunked = chunked.cast(pa.string())
    if chunked.type != pa.string():
        chunked = chunked.cast(pa.string())
    return chunked


def _line_of(sources: list, shard: int, row: int, kind: str, limits) -> tuple[str, int | None, str]:
    """Shard name, line (or row) number and its label of a row, re-parsing the shard (errors only)."""
    source = sources[shard]
    if isinstance(source, tuple) and len(source) == 1:  # a partition of a data frame the caller gave
        return source[0], row + 1, "row"
    parsed, name = _parse_shard(source, kind, limits)
    line = parsed.line_of(row)
    return name, None if line is None else line + _lines_before(source), parsed.line_label


def _check_duplicates(frame: pd.DataFrame, kind: str, sources: list, limits) -> None:
    """Raise on a (query, doc) pair listed twice, naming both shards and lines."""
    if len(frame) < 2:
        return
    hashed = pd.util.hash_pandas_object(frame[["query_id", "doc_id"]], index=False)
    suspect = frame[hashed.duplicated(keep=False).to_numpy()]
    if suspect.empty:
        return
    twice = suspect[suspect.duplicated(["query_id", "doc_id"], keep=False)]
    if twice.empty:
        return
    twice = twice.sort_values(["_shard", "_row"])
    n_pairs = int(twice.duplicated(["query_id", "doc_id"]).sum())
    first_key = twice.iloc[0][["query_id", "doc_id"]].tolist()
    same = twice[(twice["query_id"] == first_key[0]) & (twice["doc_id"] == first_key[1])]
    (s1, r1), (s2, r2) = same[["_shard", "_row"]].to_numpy()[:2].tolist()
    name1, line1, label1 = _line_of(sources, s1, r1, kind, limits)
    name2, line2, label2 = _line_of(sources, s2, r2, kind, limits)
    field = "score" if kind == "run" else "grade"
    raise EvalSuiteError(
        f"doc {first_key[1]!r} appears twice for query {first_key[0]!r} ({name1} {label1} {line1} and {name2} "
        f"{label2} {line2}; {n_pairs} duplicated pair(s) in this partition); trec_eval refuses this; pass "
        f"duplicates='max' to keep the higher {field}",
        source=name2, line=line2, line_label=label2, field="doc_id", value=first_key[1],
    )


def _arrow_ids(series: pd.Series) -> pa.Array:
    """A string column of a partition as one Arrow string array (no copy through Python objects)."""
    values = series.array
    if hasattr(values, "__arrow_array__"):
        array = values.__arrow_array__()
        array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    else:
        array = pa.array(series.to_numpy(dtype=object))
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array.cast(pa.string()) if array.type != pa.string() else array


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


def _frame_from_dataframe(ddf, kind: str, n_partitions: int):
    """Columns of a caller's Dask DataFrame mapped to ours (query id, doc id, score or rank / grade)."""
    from ..io.columns import column_roles

    roles = column_roles(list(ddf.columns), kind, f"{kind} data frame")
    value_col = "score" if kind == "run" else "grade"
    meta = pd.DataFrame({c: pd.Series(dtype=t) for c, t in (_RUN_COLUMNS if kind == "run" else _QRELS_COLUMNS).items()})

    def convert(part: pd.DataFrame, partition_info=None) -> pd.DataFrame:
        from ..io.columns import Locator, check_finite, check_ids, frame_columns

        number = partition_info["number"] if partition_info else 0
        where = Locator(f"{kind} data frame partition {number}", lambda row: row + 1, "row")
        query, doc, values = frame_columns(part, roles.query, roles.doc, roles.value or roles.rank,
                                           "rank" if not roles.value else value_col)
        check_ids(query, "query_id", where)
        check_ids(doc, "doc_id", where)
        check_finite(values, value_col if roles.value else "rank", where)
        frame = pd.DataFrame({
            "query_id": pd.Series(pd.arrays.ArrowStringArray(_as_string_chunks(query))),
            "doc_id": pd.Series(pd.arrays.ArrowStringArray(_as_string_chunks(doc))),
            value_col: values if roles.value else -values,
            "_shard": np.full(len(part), number, dtype=np.int32),
            "_row": np.arange(len(part), dtype=np.int64),
        })
        frame["_p"] = _partition_of(query, n_partitions)
        return frame

    frame = ddf.map_partitions(convert, meta=meta)
    sources = [(f"{kind} data frame partition {i}",) for i in range(ddf.npartitions)]
    return frame, sources, []


def _input_frame(value, kind: str, block_bytes: int):
    """The input partitions of a run or qrels argument: a list of shards (files or byte blocks) to
    read on the workers, with the data frame they make (meta), or a Dask DataFrame (and None)."""
    import dask.dataframe as dd

    from ..io.run_qrels import Qrels, Run

    meta = pd.DataFrame({c: pd.Series(dtype=t) for c, t in (_RUN_COLUMNS if kind == "run" else _QRELS_COLUMNS).items()})
    if isinstance(value, dd.DataFrame):
        return value, None
    if isinstance(value, (Run, Qrels)):
        return dd.from_pandas(value.to_dataframe(), npartitions=1), None
    if isinstance(value, pd.DataFrame):
        return dd.from_pandas(value, npartitions=1), None
    if isinstance(value, (str, os.PathLike)):
        return _pieces(shard_paths(value), block_bytes), meta
    if isinstance(value, dict) and kind == "qrels":
        return dd.from_pandas(Qrels.from_dict(value).to_dataframe(), npartitions=1), None
    if isinstance(value, dict):
        return dd.from_pandas(Run.from_dict(value).to_dataframe(), npartitions=1), None
    raise EvalSuiteError(f"with engine='dask' the {kind} must be a path, a glob of shards, a Parquet folder, "
                         "a Dask or pandas DataFrame", field=kind, value=type(value).__name__)


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
                  block_bytes: int = _BLOCK_BYTES, max_docs: int | None = None):
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
        Partitions of the hash shuffle by query id (default: the number of input partitions,
        at least the number of workers).
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
    block_bytes : int
        An uncompressed TREC file larger than this is read in blocks of about this many bytes,
        cut at line breaks (default 128 MiB, some 3.5 million MS MARCO-like lines); a gzip file
        or a column format (CSV, Parquet ...) is one input partition.

    Returns
    -------
    EvaluationReport
        Per-query table and means ``==`` those of :func:`evalsuite.evaluate` on the same data,
        whatever ``partitions``; ``params`` also has ``engine`` and ``partitions``.

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

    run_in, run_meta = _input_frame(run, "run", block_bytes)
    qrels_in, qrels_meta = _input_frame(qrels, "qrels", block_bytes)

    with _client(scheduler, cluster_options) as client:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        n_in = len(run_in) if isinstance(run_in, list) else run_in.npartitions
        n_parts = partitions or max(n_in, n_workers)

        def build(inp, meta, kind):
            if isinstance(inp, list):
                sources = list(inp)
                pairs = [dask.delayed(_read_shard, nout=2, pure=True)(p, i, kind, limits, n_parts)
                         for i, p in enumerate(inp)]
                frame = dd.from_delayed([p[0] for p in pairs], meta=meta, verify_meta=False)
                return frame, sources, [p[1] for p in pairs]
            frame, sources, infos = _frame_from_dataframe(inp, kind, n_parts)
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
    return _assemble(parts, run_infos, qrels_infos, specs, queries, rel_level, n_parts, name, run, qrels, max_docs)


def _assemble(parts, run_infos, qrels_infos, specs, queries, rel_level, n_parts, name, run, qrels, max_docs):
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
                            "engine": "dask", "partitions": n_parts})
