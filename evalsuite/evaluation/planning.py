"""How the Dask engine cuts a run into partitions: from the input files' sizes and the workers'
memory, so that a default run neither exhausts a worker nor makes needless small pieces.

A run's rows travel through the shuffle by query id as a data frame (about 42 bytes a row for
MS MARCO-like ids, measured on a sample of the input, not assumed). A partition is then
concatenated from its pieces and evaluated by the single-machine engine, which holds about
:data:`PEAK_PER_FRAME_BYTE` times the partition's frame while it works (measured: a 5-million-row
partition of 58-byte rows raised a process's peak by 0.75 GiB over the frame itself). Dask spills
stored results to disk above 70 % of a worker's memory limit and kills the worker at 95 %, so the
memory a running task holds beyond what Dask can spill must stay within a quarter of the limit;
the plan keeps it within :data:`TASK_SHARE` (an eighth) of the memory each worker thread has, which
also leaves room for what the allocator keeps after a task. On 100 million MS MARCO-like lines and
two 4 GiB workers this gives 32 partitions: no worker was restarted (peaks 3.03 and 2.88 GiB),
where 20 (one per shard, the old default) had workers killed twice per run (``benchmarks/README.md``).

Nothing here imports dask: the plan is plain arithmetic on numbers the engine gathers.
"""

from __future__ import annotations

import math
import os
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["PartitionPlan", "plan_partitions", "estimate_rows", "PEAK_PER_FRAME_BYTE", "TASK_SHARE"]

# A partition's evaluation holds its pieces, their concatenation and the single-machine engine's
# arrays at once: about this many times the partition's frame (measured 3.7 on 5 million rows).
PEAK_PER_FRAME_BYTE = 4.0

# The share of a worker thread's memory one task may hold (see the module docstring).
TASK_SHARE = 1 / 8

# Reading a text shard holds about this many times its uncompressed bytes (the text, pyarrow's
# columns, the frame): a 5-million-line, 170 MiB gzip shard raised a process's peak by 540 MiB.
READ_PER_TEXT_BYTE = 3.4

# How many inputs are sampled for their compression ratio, line length and row size.
_SAMPLED_INPUTS = 4
_SAMPLE_BYTES = 1 << 20


@dataclass
class PartitionPlan:
    """The partition count the Dask engine uses, and why (shown by the command line).

    Attributes
    ----------
    partitions : int
        Partitions of the shuffle by query id.
    reason : str
        One sentence a person can act on: what was estimated and what the count follows from.
    rows : int or None
        Estimated run rows (None for a data frame of unknown size).
    frame_bytes_per_row : float or None
        Measured on a sample of the input.
    memory_per_thread : int or None
        The smallest memory limit of a worker divided by its threads, bytes.
    """

    partitions: int
    reason: str
    rows: int | None = None
    frame_bytes_per_row: float | None = None
    memory_per_thread: int | None = None


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


def _millions(n: float) -> str:
    return f"{n / 1e6:,.1f} million" if n >= 1e6 else f"{n:,.0f}"


def _head_text(path: str, start: int = 0, limit: int = _SAMPLE_BYTES) -> tuple[bytes, float]:
    """Up to ``limit`` bytes of a file's text from ``start`` (un-gzipped), and its compression
    ratio (text bytes per file byte; 1 for a plain file)."""
    with open(path, "rb") as handle:
        handle.seek(start)
        raw = handle.read(limit)
    if raw[:2] != b"\x1f\x8b" or start:
        return raw, 1.0
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        text = inflater.decompress(raw, limit * 16)
    except zlib.error:
        return b"", 1.0
    used = len(raw) - len(inflater.unconsumed_tail) - len(inflater.unused_data)
    return text, (len(text) / used) if used else 1.0


def _sample_frame_bytes(sample: bytes, kind: str, fmt: str | None = None) -> tuple[float, float] | None:
    """(frame bytes per row, sample bytes per row) of the complete lines (or the Parquet rows) of
    ``sample``, read by the same reader and frame builder the workers use; None when it does not
    parse."""
    from ..errors import EvalSuiteError
    from ..io.run_files import read_columns
    from .shards import frame_of

    if fmt != "parquet":
        cut = sample.rfind(b"\n")
        if cut <= 0:
            return None
        sample = sample[:cut + 1]
    try:
        parsed, _ = read_columns(sample, kind, name="sample", format=fmt)
    except EvalSuiteError:
        return None
    if parsed.n_rows == 0:
        return None
    frame = frame_of(parsed, 0, kind)
    return float(frame.memory_usage(deep=True, index=False).sum()) / parsed.n_rows, len(sample) / parsed.n_rows


def _parquet_sample(path: str, rows: int = 20_000) -> tuple[int, bytes | None]:
    """A Parquet file's row count (from its footer) and its first ``rows`` rows as a small Parquet
    file of their own (None when the file does not open: the worker will say why)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        handle = pq.ParquetFile(path)
        batch = next(handle.iter_batches(batch_size=rows), None)
        if batch is None:
            return handle.metadata.num_rows, None
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_batches([batch]), sink)
        return handle.metadata.num_rows, sink.getvalue().to_pybytes()
    except Exception:  # noqa: BLE001 - any unreadable file: no estimate from it
        return 0, None


def estimate_rows(pieces: list, kind: str = "run") -> tuple[int | None, float | None, int]:
    """Estimated rows, frame bytes per row and the largest piece's text bytes of the input pieces
    (files, or ``(path, start, end)`` blocks of one), from a sample of the first few of them.

    A text file's rows are its text bytes over the bytes per line of its first MiB, a gzip file's
    text bytes its size times the compression ratio of that MiB; a Parquet file's rows are in its
    footer. Files past the first few are taken to be like them, byte for byte. Returns
    ``(None, None, 0)`` when no sample parses (the engine then plans one partition per input).
    """
    from ..io.run_files import detect_format

    ratios, frame_per_row, text_per_row, file_per_row = [], [], [], []
    text_bytes, file_bytes = [], []
    for i, piece in enumerate(pieces):
        path, start, end = (piece, 0, None) if isinstance(piece, str) else piece
        size = (os.path.getsize(path) if end is None else end) - start
        file_bytes.append(size)
        is_parquet = path.lower().endswith((".parquet", ".pq", ".parq"))
        if i < _SAMPLED_INPUTS and is_parquet:
            n_rows, sample = _parquet_sample(path)
            measured = None if sample is None else _sample_frame_bytes(sample, kind, "parquet")
            if measured is not None and n_rows:
                frame_per_row.append(measured[0])
                file_per_row.append(size / n_rows)
        elif i < _SAMPLED_INPUTS:
            head, ratio = _head_text(path, start, min(_SAMPLE_BYTES, size))
            ratios.append(ratio)
            fmt = detect_format(head[:65536], path[:-3] if path.lower().endswith(".gz") else path)
            measured = _sample_frame_bytes(head, kind) if fmt in ("trec", "csv", "tsv", "jsonl") else None
            if measured is not None:
                frame_per_row.append(measured[0])
                text_per_row.append(measured[1])
                file_per_row.append(measured[1] / ratio)
        text_bytes.append(0 if is_parquet else size * (float(np.median(ratios)) if ratios else 1.0))
    if not frame_per_row:
        return None, None, int(max(text_bytes, default=0))
    rows = sum(file_bytes) / float(np.median(file_per_row))
    return int(rows), float(np.median(frame_per_row)), int(max(text_bytes, default=0))


def worker_memory(client) -> tuple[int | None, int, int]:
    """(smallest memory limit per worker thread in bytes or None, workers, threads in all) of a
    distributed Client's cluster; a worker without a limit counts its machine's memory shared by
    the workers on it."""
    workers = client.scheduler_info().get("workers", {})
    if not workers:
        return None, 1, 1
    hosts: dict[str, int] = {}
    for info in workers.values():
        hosts[info.get("host", "")] = hosts.get(info.get("host", ""), 0) + 1
    per_thread = []
    threads = 0
    for info in workers.values():
        n = max(int(info.get("nthreads") or 1), 1)
        threads += n
        limit = info.get("memory_limit") or 0
        if not limit:
            try:
                import psutil

                limit = psutil.virtual_memory().total // hosts.get(info.get("host", ""), 1)
            except ImportError:  # pragma: no cover - distributed depends on psutil
                limit = 0
        if limit:
            per_thread.append(int(limit) // n)
    return (min(per_thread) if per_thread else None), len(workers), max(threads, 1)


def plan_partitions(requested: int | None, n_inputs: int, rows: int | None, frame_bytes_per_row: float | None,
                    memory_per_thread: int | None, workers: int, threads: int, largest_text: int = 0,
                    what: str = "input partitions") -> PartitionPlan:
    """The shuffle's partition count: the caller's, else enough partitions that evaluating one
    holds at most :data:`TASK_SHARE` of a worker thread's memory, and at least one per thread.

    Parameters
    ----------
    requested : int or None
        ``partitions=`` / ``--partitions`` (used as given).
    n_inputs : int
        Input partitions (shards or blocks).
    rows, frame_bytes_per_row : int, float or None
        From :func:`estimate_rows` (None: a data frame of unknown size; one partition per input).
    memory_per_thread, workers, threads :
        From :func:`worker_memory`.
    largest_text : int
        Text bytes of the largest input (a warning when reading it needs more than a quarter of
        a worker thread's memory: a gzip shard cannot be cut).
    what : str
        What the inputs are called in the reason.

    Returns
    -------
    PartitionPlan

    Examples
    --------
    >>> plan = plan_partitions(None, 20, 100_000_000, 42.0, 4 << 30, 2, 2)
    >>> plan.partitions  # 100M rows x 42 B x 4 / (4 GiB / 8) = 31.3 -> 32
    32
    >>> plan_partitions(7, 20, 100_000_000, 42.0, 4 << 30, 2, 2).partitions
    7
    """
    cluster = f"{workers} worker{'s' if workers != 1 else ''}"
    if memory_per_thread:
        cluster += f", {_gib(memory_per_thread)} per thread"
    if requested is not None:
        return PartitionPlan(requested, f"{requested} partitions, as asked ({n_inputs} {what}; {cluster})", rows,
                             frame_bytes_per_row, memory_per_thread)
    if rows is None or frame_bytes_per_row is None or not memory_per_thread:
        count = max(n_inputs, threads)
        why = "the input's size is unknown" if rows is None else "the workers' memory is unknown"
        return PartitionPlan(count, f"{count} partition{'s' if count != 1 else ''}: one per input partition, at "
                             f"least one per thread ({why}; "
                             f"{n_inputs} {what}; {cluster})", rows, frame_bytes_per_row, memory_per_thread)
    budget = memory_per_thread * TASK_SHARE
    by_memory = math.ceil(rows * frame_bytes_per_row * PEAK_PER_FRAME_BYTE / budget)
    count = max(by_memory, threads, 1)
    per_partition = rows / count
    reason = (f"{count} partition{'s' if count != 1 else ''} of about {_millions(per_partition)} rows: {n_inputs} {what}, about "
              f"{_millions(rows)} rows of {frame_bytes_per_row:.0f} bytes in the shuffle; evaluating a partition "
              f"holds about {_gib(per_partition * frame_bytes_per_row * PEAK_PER_FRAME_BYTE)}, within "
              f"1/{round(1 / TASK_SHARE)} of a thread's memory ({cluster})")
    if by_memory < threads:
        reason += "; at least one partition per thread"
    read_need = largest_text * READ_PER_TEXT_BYTE
    if read_need > memory_per_thread / 4:
        reason += (f"; warning: reading the largest input ({_gib(largest_text)} of text) holds about "
                   f"{_gib(read_need)}, more than a quarter of a thread's memory: cut it into smaller shards")
    return PartitionPlan(count, reason, rows, frame_bytes_per_row, memory_per_thread)


def block_bytes_for(memory_per_thread: int | None, default: int) -> int:
    """The block size of an uncompressed TREC file read in blocks: ``default``, or less when
    reading a block (about :data:`READ_PER_TEXT_BYTE` times its bytes) would hold more than a
    quarter of a worker thread's memory; never below 8 MiB."""
    if not memory_per_thread:
        return default
    return int(max(min(default, memory_per_thread / 4 / READ_PER_TEXT_BYTE), 8 << 20))
