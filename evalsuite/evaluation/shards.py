"""The Dask engine's inputs: what a run or qrels argument names (one file, a glob of shards, a
Parquet folder, blocks of lines of a large TREC file, a data frame or a Dask DataFrame), each shard
read and checked on a worker with the single-machine readers' own parsers and checks
(:func:`evalsuite.io.run_files.read_columns`, :mod:`evalsuite.io.columns`), and a duplicate that
spans two shards found and named with both places. Used by :mod:`~evalsuite.evaluation.distributed`.
"""

from __future__ import annotations

import glob as _glob
import os

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalSuiteError, reading_errors
from ..io.run_qrels import duplicate_advice

__all__ = ["shard_paths"]


# The rows' layout in the shuffle. Ids are Arrow strings with 32-bit offsets (pandas' own
# "string[pyarrow]" holds 64-bit ones), a row's place in its shard fits 32 bits (a shard is read
# whole by one worker) and the shuffle key too: 42 bytes a row for MS MARCO-like ids where the
# first layout took 58, and every stored byte of a shuffle counts against a worker's memory.
_IDS = pd.ArrowDtype(pa.string())

_RUN_COLUMNS = {"query_id": _IDS, "doc_id": _IDS, "score": "float64", "_shard": "int32", "_row": "uint32",
                "_p": "int32"}


_QRELS_COLUMNS = {"query_id": _IDS, "doc_id": _IDS, "grade": "float64", "_shard": "int32", "_row": "uint32",
                  "_p": "int32"}


_GLOB_CHARS = "*?["


_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


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


def _partition_of(query_ids) -> np.ndarray:
    """The shuffle key of each query id (a pandas Series or an Arrow array of strings): a 31-bit
    hash of the string (pandas' ``hash_array``), the same for a query in every shard. Each
    distinct id is hashed once.

    Dask's shuffle hashes this key again, modulo the partition count. A key already reduced
    modulo that count (as it first was) gave Dask only as many distinct values as partitions,
    and hashing n values into n partitions leaves about a third of them empty: with 20
    partitions, 9 were empty and one held 3/20 of the rows. With a key per query the partitions
    are even to within a few percent."""
    if isinstance(query_ids, pd.Series):
        query_ids = pa.chunked_array([pa.array(query_ids.to_numpy(dtype=object), pa.string())])
    chunked = query_ids if isinstance(query_ids, pa.ChunkedArray) else pa.chunked_array([query_ids])
    if not pa.types.is_dictionary(chunked.type):
        chunked = chunked.dictionary_encode()
    parts = []
    for chunk in chunked.chunks:
        hashed = pd.util.hash_array(chunk.dictionary.to_numpy(zero_copy_only=False).astype(object))
        by_value = (hashed >> np.uint64(33)).astype(np.int32)
        parts.append(by_value[chunk.indices.to_numpy(zero_copy_only=False)])
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)


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


def pieces(paths: list[str], block_bytes: int) -> list:
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


def frame_of(parsed, shard: int, kind: str) -> pd.DataFrame:
    """The rows of a parsed shard as the shuffle carries them (see ``_RUN_COLUMNS``): ids, score
    (or minus the rank) or grade, the shard's number, each row's place in it, its partition."""
    rank_only = parsed.values is None
    values = -np.asarray(parsed.ranks, dtype=np.float64) if rank_only else np.asarray(parsed.values, dtype=np.float64)
    if len(values) >= 1 << 32:
        raise EvalSuiteError("a shard of 4 billion rows or more: cut it into smaller shards", field="rows",
                             value=len(values))
    frame = pd.DataFrame({
        "query_id": pd.Series(pd.arrays.ArrowExtensionArray(_as_string_chunks(parsed.query_ids))),
        "doc_id": pd.Series(pd.arrays.ArrowExtensionArray(_as_string_chunks(parsed.doc_ids))),
        ("score" if kind == "run" else "grade"): values,
        "_shard": np.full(len(values), shard, dtype=np.int32),
        "_row": np.arange(len(values), dtype=np.uint32),
    })
    frame["_p"] = _partition_of(parsed.query_ids)
    return frame


def _read_shard(path: str, shard: int, kind: str, limits):
    """Read one shard on a worker: (rows as a data frame, {"tag", "warnings", "rank_only"})."""
    parsed, name = _parse_shard(path, kind, limits)
    frame = frame_of(parsed, shard, kind)
    info = {"source": name, "tag": parsed.tag, "warnings": list(parsed.warnings), "rank_only": parsed.values is None}
    del parsed
    pa.default_memory_pool().release_unused()  # give the parse's buffers back; workers read many shards
    return frame, info


def _as_string_chunks(ids) -> pa.ChunkedArray:
    """Ids (a string or dictionary-encoded array, chunked or not) as a chunked string array with
    32-bit offsets (each chunk of a shard is far below their 2 GiB bound)."""
    chunked = ids if isinstance(ids, pa.ChunkedArray) else pa.chunked_array([ids])
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
        f"{label2} {line2}; {n_pairs} duplicated pair(s) in this partition); {duplicate_advice(field)}",
        source=name2, line=line2, line_label=label2, field="doc_id", value=first_key[1],
    )


def _arrow_ids(series: pd.Series) -> pa.Array:
    """A string column of a partition as one Arrow string array (no copy through Python objects).
    Its chunks (the shuffle's pieces) are joined with 64-bit offsets when their characters pass
    the 2 GiB a 32-bit offset can address."""
    values = series.array
    if hasattr(values, "__arrow_array__"):
        array = values.__arrow_array__()
        if isinstance(array, pa.ChunkedArray):
            if pa.types.is_dictionary(array.type):
                array = array.cast(array.type.value_type)
            if array.type == pa.string() and array.nbytes >= (1 << 31) - (1 << 26):
                array = array.cast(pa.large_string())
            array = array.combine_chunks()
    else:
        array = pa.array(series.to_numpy(dtype=object))
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array if array.type in (pa.string(), pa.large_string()) else array.cast(pa.string())


def _frame_from_dataframe(ddf, kind: str):
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
            "query_id": pd.Series(pd.arrays.ArrowExtensionArray(_as_string_chunks(query))),
            "doc_id": pd.Series(pd.arrays.ArrowExtensionArray(_as_string_chunks(doc))),
            value_col: values if roles.value else -values,
            "_shard": np.full(len(part), number, dtype=np.int32),
            "_row": np.arange(len(part), dtype=np.uint32),
        })
        frame["_p"] = _partition_of(query)
        return frame

    frame = ddf.map_partitions(convert, meta=meta)
    sources = [(f"{kind} data frame partition {i}",) for i in range(ddf.npartitions)]
    return frame, sources, []


def _input_frame(value, kind: str, block_bytes: int | None):
    """The input partitions of a run or qrels argument: a list of shards (files or byte blocks) to
    read on the workers, with the data frame they make (meta), or a Dask DataFrame (and None).
    ``block_bytes`` None leaves files whole (:func:`pieces` cuts them later)."""
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
        paths = shard_paths(value)
        return (pieces(paths, block_bytes) if block_bytes else paths), meta
    if isinstance(value, dict) and kind == "qrels":
        return dd.from_pandas(Qrels.from_dict(value).to_dataframe(), npartitions=1), None
    if isinstance(value, dict):
        return dd.from_pandas(Run.from_dict(value).to_dataframe(), npartitions=1), None
    raise EvalSuiteError(f"with engine='dask' the {kind} must be a path, a glob of shards, a Parquet folder, "
                         "a Dask or pandas DataFrame", field=kind, value=type(value).__name__)
