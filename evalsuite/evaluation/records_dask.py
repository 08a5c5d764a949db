"""Per-request records larger than one machine's memory: :func:`evaluate_records_dask` and
:func:`attribute_failures_dask` on a Dask cluster, with the single-machine numbers.

The records are files (a glob of shards or a folder of Parquet files, any format
:func:`evalsuite.read_records` reads); each file is one partition, read on a worker with
``read_records`` itself (every check, errors naming the file and row). Every metric of a record
depends on that record alone, so nothing is shuffled. What is decided per system or for all the
records at once (which inputs a metric uses, whether a system's value comes from its judgements or
from the file, whether a declared score column is used) is decided from the scope of all the
files (:mod:`evalsuite.records.per_record`), gathered first in a pass that reads each file once
and sends back a summary and a 64-bit key per record (for the check that a (system, query_id) is
in one file only). The second pass evaluates each file with the single-machine code under that
scope and sends back, per system: the exact sum and count of each metric's defined values
(:class:`evalsuite.utils.exact_sum.ExactSum`: no float rounding until the mean, so the mean is the
one machine's whatever the split), the counts of successes and failure stages, and the latency
columns (percentiles need every value; 8 bytes a request). The per-record values stay on the
workers, or go to Parquet files (``per_query_output``).

This module imports dask only when called (``pip install evalsuite[dask]``).
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalSuiteError
from ..metrics.operational import FAILURE_STAGES
from .distributed import _client, _need_dask
from .planning import _gib, worker_memory
from .shards import shard_paths

__all__ = ["evaluate_records_dask", "attribute_failures_dask"]

log = logging.getLogger("evalsuite.distributed")

# A file is read whole by one worker thread; reading and evaluating records holds a few times their
# bytes (benchmarks/records_dask.py measures it): a file above this share of a thread's memory is
# named in the plan's warning.
_FILE_SHARE = 1 / 8


def _read(path: str, system, failure_stages, limits):
    from ..io.record_files import read_records

    return read_records(path, system=system, failure_stages=failure_stages, limits=limits)


def _survey_shard(path: str, system, failure_stages, limits) -> dict:
    """Pass 1 on a worker: the file's scope, its read warnings and one 64-bit key per record."""
    from ..records.per_record import survey_records

    records = _read(path, system, failure_stages, limits)
    table = records.table
    pairs = pd.Series(table.column("system").to_numpy(zero_copy_only=False)).astype(str) + "\x1f" + \
        pd.Series(table.column("query_id").to_numpy(zero_copy_only=False)).astype(str)
    return {"survey": survey_records(records), "n": table.num_rows, "source": records.source,
            "warnings": list(records.warnings), "fields": records.fields,
            "keys": pd.util.hash_array(pairs.to_numpy(dtype=object))}


def _evaluate_shard(path: str, index: int, scope, system, failure_stages, limits, options: dict,
                    output: str | None):
    """Pass 2 on a worker: the file's per-system sums and counts under the scope of all files."""
    from ..records.evaluation import evaluate_part

    records = _read(path, system, failure_stages, limits)
    part = evaluate_part(records, scope, failure_stages=failure_stages, **options)
    if output is not None:
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pandas(part.per_query, preserve_index=False),
                       os.path.join(output, f"part-{index:05d}.parquet"))
    part.per_query = None
    return part


def _attribute_shard(path: str, index: int, system, failure_stages, limits, rel_level: float, output: str):
    """attribute_failures of one file, written to ``output``; its counts per system, stage and rule."""
    import pyarrow.parquet as pq

    from ..records.attribution import attribute_failures

    frame = attribute_failures(_read(path, system, failure_stages, limits), rel_level=rel_level)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), os.path.join(output, f"part-{index:05d}.parquet"))
    return _attribution_counts(frame)


def _attribution_counts(frame: pd.DataFrame) -> dict:
    """(system, stage, rule, attributed) -> records, with None for a request that did not fail."""
    from collections import Counter

    keys = zip(frame["system"].tolist(), frame["stage"].tolist(), frame["rule"].tolist(), frame["attributed"].tolist())
    return dict(Counter((s, None if st is None or st != st else st, None if r is None or r != r else r, bool(a))
                        for s, st, r, a in keys))


def _keys_at(path: str, rows: list, system, failure_stages, limits) -> list:
    table = _read(path, system, failure_stages, limits).table
    picked = table.take(pa.array(rows, pa.int64()))
    return list(zip(picked.column("system").to_pylist(), picked.column("query_id").to_pylist()))


def _check_unique(client, paths: list, surveys: list, system, failure_stages, limits) -> None:
    """A (system, query_id) in two files is an error naming both (as concat_records says it); the
    64-bit keys find candidates, the records' own strings confirm them."""
    keys = np.concatenate([s["keys"] for s in surveys]) if surveys else np.empty(0, np.uint64)
    order = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if not same.size:
        return
    starts = np.cumsum([0] + [s["n"] for s in surveys])
    for at in same[:20].tolist():
        first, second = (int(x) for x in order[at:at + 2])
        places = []
        for position in (first, second):
            shard = int(np.searchsorted(starts, position, side="right") - 1)
            places.append((shard, position - int(starts[shard])))
        found = [client.submit(_keys_at, paths[shard], [row], system, failure_stages, limits, pure=False).result()[0]
                 for shard, row in places]
        if found[0] == found[1]:
            (a, row_a), (b, row_b) = places
            raise EvalSuiteError(
                f"system {found[0][0]!r} has query_id {found[0][1]!r} in more than one file ({surveys[a]['source']} row "
                f"{row_a + 1} and {surveys[b]['source']} row {row_b + 1}); give each file its own system name",
                field="query_id", value=found[0][1])


def _plan_reason(paths: list, surveys: list, memory_per_thread, n_workers: int, n_threads: int) -> tuple[str, str | None]:
    rows = [s["n"] for s in surveys]
    sizes = [os.path.getsize(p) for p in paths]
    reason = (f"{len(paths)} partitions, one per file (a record's metrics need no other record: nothing is "
              f"shuffled): {sum(rows):,} records, at most {max(rows):,} in a file; {n_workers} workers, "
              + (f"{_gib(memory_per_thread)} per thread" if memory_per_thread else "no memory limit"))
    warning = None
    if memory_per_thread and max(sizes) > memory_per_thread * _FILE_SHARE:
        big = paths[int(np.argmax(sizes))]
        warning = (f"{os.path.basename(big)} ({_gib(max(sizes))} on disk) is more than 1/8 of a worker thread's "
                   "memory; a file is read whole by one worker: cut such files into smaller shards")
    return reason, warning


def evaluate_records_dask(records, *, k: int = 10, rel_level: float = 1, compat: str | None = None,
                          confidence: float = 0.95, failure_stages: Sequence[str] = FAILURE_STAGES,
                          system: str | None = None, limits=None, scheduler=None, cluster_options: dict | None = None,
                          per_query_output: str | os.PathLike | None = None, progress: bool = False, on_plan=None):
    """:func:`evalsuite.evaluate_records` of records files on a Dask cluster: the same numbers.

    Parameters
    ----------
    records : path, glob of shards (``"records/part-*.parquet"``) or folder of Parquet files
        Each file is read with :func:`evalsuite.read_records` on a worker (any format it reads)
        and is one partition: a worker holds one file at a time (per thread), so the number of
        records is bounded by the cluster's disks, not by a machine's memory.
    k, rel_level, compat, confidence, failure_stages :
        As in :func:`evalsuite.evaluate_records`.
    system : str, optional
        As in :func:`evalsuite.read_records` (records without a ``system`` field).
    limits : ReadLimits, optional
        Per-file read limits (:class:`evalsuite.ReadLimits`).
    scheduler, cluster_options :
        As in :func:`evalsuite.evaluation.distributed.evaluate_dask` (None: a LocalCluster).
    per_query_output : path, optional
        A folder (new or empty) where each partition writes its per-record table
        (``part-00000.parquet`` ..., in the files' order; the rows of ``per_query`` of
        :func:`evalsuite.evaluate_records`). Without it the per-record values are not kept.
    progress : bool
        Dask's progress bar on stderr; progress is also logged (``evalsuite.distributed``, INFO).
    on_plan : callable, optional
        Called with the plan's reason (a str) once the files are surveyed, before they are evaluated.

    Returns
    -------
    RecordsReport
        ``scores``, ``task_success``, ``failures``, ``latency_table``, ``failure_table``,
        ``params`` and ``warnings`` ``==`` those of ``evaluate_records(concat_records([...]))`` of
        the same files; each Score's ``per_query`` is empty (``params`` has n, n_defined and
        coverage) and ``per_query`` has no rows (see ``per_query_output``). ``params`` also has
        ``engine`` ("dask"), ``partitions``, ``partitions_reason`` and ``per_query_files``.

    Raises
    ------
    EvalSuiteError
        What :func:`evalsuite.read_records` and :func:`evalsuite.evaluate_records` raise, naming
        the file; a (system, query_id) in two files, naming both; a non-empty
        ``per_query_output``; dask or distributed not installed.

    References
    ----------
    :func:`evalsuite.evaluate_records` (each metric's definition); exact float summation as in
    Shewchuk (1997) and Python's ``math.fsum``, here by integer sums per binary exponent.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.jsonl").write_text('{"query_id": "q1", "system": "rag", "answer_claims_supported": [true, false]}\\n')
    >>> _ = (folder / "b.jsonl").write_text('{"query_id": "q2", "system": "rag", "answer_claims_supported": [true]}\\n')
    >>> report = evaluate_records_dask(str(folder / "*.jsonl"), cluster_options={"n_workers": 1, "processes": False})
    >>> report.scores["rag"]["faithfulness"]  # (1/2 + 1) / 2, as evaluate_records gives
    Score(faithfulness=0.7500, n=2, coverage=1.000)
    """
    _need_dask()
    from ..records.evaluation import finish_report
    from ..records.per_record import merge_surveys
    from ..utils.checks import check_compat, check_cutoff, check_rel_level

    check_compat(compat)
    k = check_cutoff(k, allow_none=False)
    check_rel_level(rel_level)
    failure_stages = tuple(failure_stages)
    paths = shard_paths(records)
    output = _empty_folder(per_query_output)
    token = secrets.token_hex(4)
    with _client(scheduler, cluster_options) as client:
        memory_per_thread, n_workers, n_threads = worker_memory(client)
        surveys = client.gather([client.submit(_survey_shard, p, system, failure_stages, limits,
                                               key=f"records-survey-{token}-{i}") for i, p in enumerate(paths)])
        _check_unique(client, paths, surveys, system, failure_stages, limits)
        scope = merge_surveys([s["survey"] for s in surveys])
        reason, warning = _plan_reason(paths, surveys, memory_per_thread, n_workers, n_threads)
        log.info("dask: %s", reason)
        if on_plan is not None:
            on_plan(reason + (f"; warning: {warning}" if warning else ""))
        options = {"k": k, "rel_level": rel_level, "compat": compat}
        futures = [client.submit(_evaluate_shard, p, i, scope, system, failure_stages, limits, options, output,
                                 key=f"records-evaluate-{token}-{i}") for i, p in enumerate(paths)]
        parts = _gather(client, futures, progress, "files evaluated")
    fields = list(dict.fromkeys(f for s in surveys for f in s["fields"]))
    report = finish_report(parts, scope, warnings=[w for s in surveys for w in s["warnings"]],
                           source=", ".join(str(s["source"]) for s in surveys), fields=fields, k=k,
                           rel_level=rel_level, compat=compat, confidence=confidence, failure_stages=failure_stages,
                           per_query=_empty_per_query(parts[0]))
    if warning:
        report.warnings.append(warning)
    report.params.update({"engine": "dask", "partitions": len(paths), "partitions_reason": reason,
                          "per_query_files": sorted(os.path.join(output, f) for f in os.listdir(output))
                          if output else []})
    return report


def attribute_failures_dask(records, output: str | os.PathLike, *, rel_level: float = 1,
                            failure_stages: Sequence[str] = FAILURE_STAGES, system: str | None = None, limits=None,
                            scheduler=None, cluster_options: dict | None = None, progress: bool = False) -> pd.DataFrame:
    """:func:`evalsuite.attribute_failures` of records files on a Dask cluster.

    Each file is read and attributed on a worker (every rule looks at one record only) and its
    table (one row per record: system, query_id, failed, stage, attributed, rule, reason) is
    written to ``output`` as ``part-00000.parquet`` ..., in the files' order: together, the
    rows of ``attribute_failures`` of the combined records.

    Parameters
    ----------
    records, system, limits, scheduler, cluster_options, progress :
        As in :func:`evaluate_records_dask`.
    output : path
        A folder, new or empty.
    rel_level, failure_stages :
        As in :func:`evalsuite.attribute_failures` and :func:`evalsuite.read_records`.

    Returns
    -------
    pandas.DataFrame
        Counts of records per system, stage, rule and attributed (columns ``system``,
        ``stage``, ``rule``, ``attributed``, ``count``; stage and rule None for requests that
        did not fail), summed over the files.

    Raises
    ------
    EvalSuiteError
        What :func:`evalsuite.read_records` raises, naming the file; a non-empty ``output``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.jsonl").write_text('{"query_id": "q1", "system": "rag", "success": false, "error": "timeout"}\\n')
    >>> counts = attribute_failures_dask(str(folder / "a.jsonl"), folder / "out",
    ...                                  cluster_options={"n_workers": 1, "processes": False})
    >>> counts[["stage", "rule", "count"]].to_dict("records")
    [{'stage': 'orchestration', 'rule': 'error text', 'count': 1}]
    """
    _need_dask()
    paths = shard_paths(records)
    folder = _empty_folder(output)
    token = secrets.token_hex(4)
    with _client(scheduler, cluster_options) as client:
        futures = [client.submit(_attribute_shard, p, i, system, tuple(failure_stages), limits, rel_level, folder,
                                 key=f"records-attribute-{token}-{i}") for i, p in enumerate(paths)]
        counts = _gather(client, futures, progress, "files attributed")
    total: dict = {}
    for part in counts:
        for key, count in part.items():
            total[key] = total.get(key, 0) + count
    rows = [(*key, count) for key, count in total.items()]
    names = ["system", "stage", "rule", "attributed", "count"]
    return pd.DataFrame({name: pd.Series([r[i] for r in rows], dtype=object if i < 3 else None)
                         for i, name in enumerate(names)})


def _gather(client, futures: list, progress: bool, what: str) -> list:
    from distributed import as_completed

    if progress:
        import contextlib
        import sys

        from distributed import progress as dask_progress

        with contextlib.redirect_stdout(sys.stderr):
            dask_progress(futures)
    done = 0
    for future in as_completed(futures):
        if future.status == "error":
            future.result()  # raises the worker's EvalSuiteError here
        done += 1
        log.info("dask: %d/%d %s", done, len(futures), what)
    return client.gather(futures)


def _empty_folder(path) -> str | None:
    if path is None:
        return None
    path = os.path.abspath(os.fspath(path))
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise EvalSuiteError("the output folder must be new or empty (its part files would be mixed with these)",
                             source=path, field="output")
    os.makedirs(path, exist_ok=True)
    return path


def _empty_per_query(part) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object if c in ("system", "query_id") else np.float64) for c in part.columns})
