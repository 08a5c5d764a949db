"""The reader pool's results in transit: a parsed Run, Qrels, Records, judgement or latency table
written by the worker as Arrow IPC stream files, and memory-mapped back by the caller (never
pickled). Used by :mod:`evalsuite.io.isolation` and :mod:`evalsuite.io._reader_worker`."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError


def _write_ipc(table: pa.Table, path: str) -> None:
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)


def _read_ipc(path: str) -> pa.Table:
    """A table whose buffers are a memory map of ``path`` (no copy; the file may be unlinked after)."""
    return pa.ipc.open_stream(pa.memory_map(path)).read_all()


def serialise(result, prefix: str, release=None) -> tuple[dict, int]:
    """Write a parsed Run, Qrels or Records as Arrow IPC files ``prefix.0``, ``prefix.1`` ...

    ``release``: for a Run or Qrels, called after each file is written, once that file's arrays
    are dropped from ``result`` (which is then unusable): the reader worker frees each part as
    it is written, instead of holding the whole result beside its files (at 22M lines the two
    together were the top of the dashboard's peak during an upload).

    Returns a JSON-safe header describing it and the number of files written.
    """
    from .judgement_table import JudgementTable
    from .run_qrels import Qrels, Run
    from ..records.table import Records

    if isinstance(result, JudgementTable):
        tables = [result.table]
        header = {"type": "judgements", "source": result.source, "role": result.role,
                  "warnings": list(result.warnings)}
    elif isinstance(result, (Run, Qrels)):
        header = {"type": "run" if isinstance(result, Run) else "qrels", "name": result.name,
                  "source": result.source, "warnings": list(result.warnings)}
        values = "scores" if isinstance(result, Run) else "grades"
        # The numbers in files of their own, which the caller keeps mapped as the doc ids (their
        # pages are the numbers' one copy: copying them out held them twice, +110 MiB at 7M lines).
        # One column per file, the numbers first: while a file is written the worker holds what
        # is left of the result beside it, so the top is the whole result plus the first file
        # (the keys and scores in one file were 336 MiB of that top at 22M lines; the keys alone 168).
        parts = [
            (1, ("doc_keys",), lambda: pa.table({"doc_key": pa.array(result.doc_keys, pa.uint64())})),
            (4, (values,), lambda: pa.table({"value": pa.array(getattr(result, values), pa.float64())})),
            (0, ("doc_ids",), lambda: pa.table({"doc_id": result.doc_ids})),
            (2, (), lambda: pa.table({"query_id": pa.array(result.query_ids.tolist(), pa.string())})),
            (3, (), lambda: pa.table({"offset": pa.array(result.offsets, pa.int64())})),
        ]
        for i, fields, table in parts:
            _write_ipc(table(), f"{prefix}.{i}")
            if release is not None and fields:
                for field in fields:
                    setattr(result, field, None)
                release()
        return header, len(parts)
    elif isinstance(result, Records):
        tables = [result.table]
        header = {"type": "records", "source": result.source, "warnings": list(result.warnings),
                  "aliases": dict(result.aliases), "extra_columns": list(result.extra_columns),
                  "score_columns": list(result.score_columns)}
    elif type(result).__name__ == "LatencyTable":
        tables = [pa.Table.from_pandas(result.table, preserve_index=False)]
        header = {"type": "latency_table", "tool": result.tool, "source": result.source,
                  "warnings": list(result.warnings)}
    else:
        raise TypeError(f"cannot send a {type(result).__name__}")
    for i, table in enumerate(tables):
        _write_ipc(table, f"{prefix}.{i}")
    return header, len(tables)


def _mapped_numbers(path: str, column: str, dtype) -> np.ndarray:
    """The one numeric column of the IPC file at ``path`` as a numpy view of its memory map."""
    table = _read_ipc(path).combine_chunks()
    return table.column(column).chunk(0).to_numpy(zero_copy_only=True) if len(table) else np.zeros(0, dtype)


def deserialise(header: dict, prefix: str, parts: int):
    """The Run, Qrels or Records that :func:`serialise` wrote (memory-mapped, not copied)."""
    from .run_qrels import Qrels, Run
    from ..records.table import Records

    kind = header["type"]
    if kind in ("run", "qrels") and parts == 5:
        docs = _read_ipc(f"{prefix}.0")
        # Read-only numpy views of the mapped numbers, as a Run's arrays are wherever it was read
        # (run_qrels makes them read-only); the map outlives the file, which is unlinked after.
        doc_keys = _mapped_numbers(f"{prefix}.1", "doc_key", np.uint64)
        values = _mapped_numbers(f"{prefix}.4", "value", np.float64)
        query_ids = np.array(_read_ipc(f"{prefix}.2").column("query_id").to_pylist(), dtype=object)
        offsets = _read_ipc(f"{prefix}.3").column("offset").to_numpy().copy()
        cls = Run if kind == "run" else Qrels
        return cls(query_ids, offsets, docs.column("doc_id"), doc_keys, values, name=header["name"],
                   source=header["source"], warnings=header["warnings"])
    tables = [_read_ipc(f"{prefix}.{i}") for i in range(parts)]
    if kind == "judgements" and parts == 1:
        from .judgement_table import JudgementTable

        return JudgementTable(tables[0], source=header["source"], role=header["role"], warnings=header["warnings"])
    if kind == "records" and parts == 1:
        return Records(tables[0], source=header["source"], warnings=header["warnings"], aliases=header["aliases"],
                       extra_columns=header["extra_columns"], score_columns=header.get("score_columns", ()))
    if kind == "latency_table" and parts == 1:
        from ._latency_table import LatencyTable

        return LatencyTable(tables[0].to_pandas(), header["tool"], header["source"], header["warnings"])
    raise EvalSuiteError("the reader sent an unknown result", field="type", value=kind)
