"""What every reader shares: bytes within limits, format detection, text decoding, and the
JSON, JSONL and Parquet primitives (the run/qrels readers are in ``run_files`` and
``_read_ranked``, the records reader in ``record_files``)."""

from __future__ import annotations

import io
import functools
import json
import math
import mmap
import os
import re
from collections.abc import Callable
from typing import Any, BinaryIO, Union

import pyarrow as pa
import pyarrow.compute as pc

from ._lines import nonblank_lines
from ..errors import EvalSuiteError
from .limits import (
    ReadLimits, check_columns, check_limits, check_rows, check_text, gunzip, gunzip_pieces, json_depth_error,
    rows_not_objects, too_large, _gunzip_head, _PieceStream,
)


FORMATS = ("trec", "csv", "tsv", "json", "jsonl", "parquet")

PathOrBuffer = Union[str, os.PathLike, bytes, bytearray, memoryview, BinaryIO]

_EXTENSIONS = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
    ".trec": "trec", ".run": "trec", ".qrels": "trec", ".qrel": "trec", ".res": "trec", ".test": "trec",
}

# Header names accepted in CSV/TSV/JSONL/Parquet (lower-cased, '-' and ' ' read as '_').
_QUERY_COLUMNS = ("query_id", "qid", "query", "topic", "topic_id", "queryid", "q_id")
_DOC_COLUMNS = ("doc_id", "corpus_id", "docid", "docno", "doc", "document_id", "passage_id", "pid", "context_id")
_SCORE_COLUMNS = ("score", "sim", "similarity")
_RANK_COLUMNS = ("rank",)
_GRADE_COLUMNS = ("grade", "relevance", "rel", "label", "judgment", "judgement", "qrel", "relevance_grade", "score")

_RUN_TREC_COLUMNS = "query Q0 doc rank score tag"
_QRELS_TREC_COLUMNS = "query iteration doc grade"

# Possessive quantifiers (Python 3.11+): no backtracking, so a long non-number is refused in
# linear time (the plain form took seconds on a 20 KB score).
_NUMBER = re.compile(r"[+-]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][+-]?+\d++)?+")


# What may surround a number in a cell: what pyarrow's CSV reader trims (str.strip would also
# remove control characters such as \x1c, which neither pyarrow nor a person reads as blank).
_BLANKS = " \t\r\n"


def is_number_text(text: str) -> bool:
    """Whether ``text`` is a decimal number as written in run and qrels files (no nan, inf or ``_``)."""
    return _NUMBER.fullmatch(text) is not None


# ----------------------------------------------------------------------------------------------
# Bytes in.


class _Input:
    """One input file: its name for messages and its bytes, read only when needed.

    A plain (not gzip, no byte-order mark) file given by path is handed to pyarrow as a file to
    stream, so the fast path never copies the file into Python; ``data`` reads it on demand for
    the slower paths. A gzip file read with ``lazy_gzip`` (:func:`_load`) keeps only its
    compressed bytes and its first 64 KiB of text: the TREC fast path inflates it while pyarrow
    parses (:meth:`gunzip_stream`), and ``data`` inflates it all for the other paths.
    """

    def __init__(self, name: str, ext_name: str, data: bytes | None = None, path: str | None = None,
                 size: int = 0, head: bytes = b"", compressed: bytes | None = None,
                 limits: ReadLimits | None = None) -> None:
        self.name, self.ext_name, self.path = name, ext_name, path
        self._data = data
        self._compressed, self._limits = compressed, limits
        # A gzip file not yet inflated: its size is not known, only that it is more than its head.
        self.size = len(data) if data is not None else size
        self.head = data[:65536] if data is not None else head

    @property
    def data(self) -> bytes:
        if self._data is None:
            if self._compressed is not None:
                self._data = gunzip(self._compressed, self._limits, self.name)
                self._compressed = None
                self.size = len(self._data)
            else:
                with open(self.path, "rb") as handle:
                    self._data = handle.read()
        return self._data

    @property
    def streams_gzip(self) -> bool:
        """Whether the text is still compressed (:meth:`gunzip_stream` reads it without holding it)."""
        return self._data is None and self._compressed is not None

    def gunzip_stream(self, check: Callable[[bytes], None]) -> "_PieceStream":
        """The text as a file pyarrow reads a block at a time, inflated 1 MiB at a time; each
        piece goes through ``check`` first, which raises to stop the read. The size limit and
        gzip errors raise as :func:`gunzip` raises them."""
        return _PieceStream(gunzip_pieces(self._compressed, self._limits, self.name, piece=1 << 20), check)

    def arrow_source(self):
        """Something pyarrow reads: the file as a stream (read a block at a time), or the bytes
        as a stream too (:func:`arrow_stream`).

        Not a memory map: the pages of a mapped file count in the process's resident memory
        once touched, so mapping a 238 MiB run raised the peak of ``read_run`` by about as much
        (``benchmarks/README.md``, memory); a stream holds a few blocks.
        """
        if self._data is None and self._compressed is None:
            return pa.OSFile(self.path)
        return arrow_stream(self.data)

    def release(self) -> None:
        """Forget the bytes (the parsed columns are all that is needed from here on)."""
        self._data = b""
        self._compressed = None
        self.path = None


def arrow_stream(data: bytes) -> io.BytesIO:
    """``data`` as a file for pyarrow's CSV reader to read a block at a time (shared, not copied).

    Not ``pa.py_buffer``: from a buffer, pyarrow's threads slice blocks faster than they convert
    them, and the parsed blocks waiting held about as much memory as the text (a 238 MiB run:
    peak 796 MiB from a buffer, 574 MiB from this, in the same 0.4 s).
    """
    return io.BytesIO(data)


def load_bytes(path_or_buffer: PathOrBuffer, name: str | None = None,
               limits: ReadLimits | None = None) -> tuple[bytes, str]:
    """Read a path, bytes or a binary file object (Streamlit's UploadedFile too), un-gzipping.

    Returns the content and the name to show in messages. Raises EvalSuiteError when the
    content (after decompression) is larger than ``limits.max_bytes``.
    """
    inp = _load(path_or_buffer, name, limits)
    return inp.data, inp.name


def _finish(raw: bytes, shown: str, limits: ReadLimits | None = None, lazy_gzip: bool = False) -> _Input:
    """Un-gzip (by magic number, whatever the name says) and drop a UTF-8 byte-order mark.

    With ``lazy_gzip``, gzip content longer than 64 KiB (and without a byte-order mark) is left
    compressed, its head inflated (:class:`_Input`).
    """
    limits = check_limits(limits)
    ext_name = shown[:-3] if shown.lower().endswith(".gz") else shown
    if raw[:2] == b"\x1f\x8b":
        if lazy_gzip:
            head = _gunzip_head(raw, limits, shown)
            if head is not None:
                return _Input(shown, ext_name, size=len(head), head=head, compressed=raw, limits=limits)
        raw = gunzip(raw, limits, shown)
    elif len(raw) > limits.max_bytes:
        raise too_large(len(raw), limits, shown)
    if raw[:3] == b"\xef\xbb\xbf":
        raw = raw[3:]
    return _Input(shown, ext_name, data=raw)


def _load(path_or_buffer: PathOrBuffer, name: str | None = None, limits: ReadLimits | None = None,
          lazy_gzip: bool = False) -> _Input:
    """The input, read within ``limits`` (``lazy_gzip``: see :func:`_finish`)."""
    limits = check_limits(limits)
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = os.fspath(path_or_buffer)
        shown = name or os.path.basename(path)
        try:
            with open(path, "rb") as handle:
                head = handle.read(65536)
                size = os.fstat(handle.fileno()).st_size
                if head[:2] == b"\x1f\x8b":
                    # Compressed size is no guide to content size: the limit is checked while decompressing.
                    return _finish(head + handle.read(), shown, limits, lazy_gzip)
                if size > limits.max_bytes:
                    raise too_large(size, limits, shown)
                if head[:3] == b"\xef\xbb\xbf" or size <= len(head):
                    return _finish(head + handle.read(), shown, limits)
        except FileNotFoundError:
            raise EvalSuiteError("file not found", source=path) from None
        except IsADirectoryError:
            raise EvalSuiteError("is a directory, not a file", source=path) from None
        except PermissionError:
            raise EvalSuiteError("permission denied", source=path) from None
        ext_name = shown[:-3] if shown.lower().endswith(".gz") else shown
        return _Input(shown, ext_name, path=path, size=size, head=head)
    shown = name or _shown_name(path_or_buffer)
    return _finish(buffer_bytes(path_or_buffer, limits, shown), shown, limits, lazy_gzip)


def buffer_bytes(buffer, limits: ReadLimits, shown: str | None) -> bytes:
    """The bytes of an in-memory input (bytes, or a binary file object read from its start),
    refused when larger than ``limits.max_bytes`` (a gzip file's content is checked later, while
    it is decompressed)."""
    if isinstance(buffer, (bytes, bytearray, memoryview, mmap.mmap)):  # a map's read() moves its position
        raw = buffer
    elif hasattr(buffer, "read"):
        if hasattr(buffer, "seek"):
            try:
                buffer.seek(0)
            except (OSError, ValueError):
                pass
        raw = buffer.read(limits.max_bytes + 1)  # one byte more tells a file that is too large
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
    else:
        raise EvalSuiteError("expected a file path, bytes or a binary file object", field="path_or_buffer",
                             value=type(buffer).__name__)
    if len(raw) > limits.max_bytes:
        raise too_large(len(raw), limits, shown, "the file")
    return raw if isinstance(raw, bytes) else bytes(raw)


def detect_format(data: bytes, name: str = "") -> str:
    """Guess a run or qrels file's format from its name's extension, then from its content.

    ``.txt`` and unknown extensions are sniffed: Parquet magic, JSON (one document) or JSONL
    (one object per line), CSV or TSV with a recognised header, otherwise TREC (whitespace
    separated). A ``.tsv`` or ``.csv`` file whose first line is not a header of known column
    names is read as TREC, as MS MARCO's headerless ``qrels.dev.tsv`` (``qid 0 pid grade``,
    tab separated) needs.

    Parameters
    ----------
    data : bytes
        The start of the file's (decompressed) content; the first 64 KiB are looked at.
    name : str
        The file name without a ``.gz`` suffix ("" when unknown).

    Returns
    -------
    str
        One of ``FORMATS``: "trec", "csv", "tsv", "json", "jsonl", "parquet". Content that
        fits no other format is "trec"; the reader then says what is wrong with it.

    References
    ----------
    The TREC run (``qid Q0 docid rank score tag``) and qrels (``qid 0 docid grade``) layouts
    trec_eval reads; MS MARCO's ``qrels.dev.tsv``.

    Examples
    --------
    >>> detect_format(b"q1 Q0 d1 1 2.5 bm25\\n", "run.txt")
    'trec'
    >>> detect_format(b"query_id,doc_id,score\\nq1,d1,2.5\\n", "run.csv")  # a header of known names
    'csv'
    >>> detect_format(b"1048585\\t0\\t7187158\\t1\\n", "qrels.dev.tsv")  # no header: TREC
    'trec'
    >>> detect_format(b'{"query_id": "q1"}\\n{"query_id": "q2"}\\n')
    'jsonl'
    """
    ext = os.path.splitext(name.lower())[1]
    if ext in _EXTENSIONS and _EXTENSIONS[ext] not in ("trec", "csv", "tsv"):
        return _EXTENSIONS[ext]
    if data[:4] == b"PAR1":
        return "parquet"
    head = bytes(data[:65536])
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        first_line = stripped.split(b"\n", 1)[0].strip()
        rest = stripped[len(first_line):].strip() if b"\n" in stripped else b""
        if first_line.startswith(b"{") and rest.startswith(b"{"):
            try:
                json.loads(first_line)
                return "jsonl"
            except (ValueError, RecursionError):  # not one JSON object: a deeply nested line too
                pass
        return "json"
    first = _first_data_line(head)
    if ext == ".csv" and first is not None and "," in first:
        return "csv"
    if first is not None and _looks_like_header(first):
        if "\t" in first:
            return "tsv"
        if "," in first:
            return "csv"
    return "trec"


def _first_data_line(head: bytes) -> str | None:
    for raw in head.split(b"\n"):
        line = raw.decode("utf-8", errors="replace").strip()
        if line and not line.startswith("#"):
            return line
    return None


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _looks_like_header(line: str) -> bool:
    sep = "\t" if "\t" in line else ","
    names = {_normal(n.strip('"')) for n in line.split(sep)}
    return bool(names & set(_QUERY_COLUMNS)) and bool(names & set(_DOC_COLUMNS))


def _shown_name(path_or_buffer) -> str | None:
    """The name messages use for an input before it is opened (for errors of the last resort)."""
    if isinstance(path_or_buffer, (str, os.PathLike)):
        return os.path.basename(os.fspath(path_or_buffer))
    if isinstance(path_or_buffer, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return os.path.basename(str(getattr(path_or_buffer, "name", "") or "<upload>"))


def decode_or_explain(data, name: str) -> str:
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raw = bytes(data)
        line = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start:exc.end]
        raise EvalSuiteError(f"bytes that are not UTF-8 text ({exc.reason}); save the file as UTF-8",
                             source=name, line=line, field="bytes", value=bad) from None


def repeated_name(names: list[str]) -> str | None:
    """The first name (in sorted order) that occurs more than once, in linear time; None if none."""
    seen: set[str] = set()
    repeated = {n for n in names if n in seen or seen.add(n)}
    return min(repeated) if repeated else None


def open_parquet(data: bytes, limits: ReadLimits, source: str):
    """A ``pyarrow.parquet.ParquetFile`` whose footer is within ``limits`` (nothing else read yet).

    A Parquet file states its rows, columns and uncompressed size in its footer: a 0.5 MB file
    can hold 50 million rows of one repeated value, so these are checked before any data is
    decoded.
    """
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(pa.BufferReader(pa.py_buffer(data)))
        meta = parquet.metadata
        check_columns(meta.num_columns, limits, source, line_label="row")
        check_rows(meta.num_rows, limits, source, "rows")
        unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        names = parquet.schema_arrow.names
    except (pa.ArrowException, OSError) as exc:
        raise EvalSuiteError(f"not a readable Parquet file ({exc})", source=source) from None
    if unpacked > limits.max_bytes:
        raise too_large(unpacked, limits, source, "the uncompressed data")
    repeated = repeated_name(names)
    if repeated is not None:  # pyarrow reads the file, then a column by name is ambiguous
        raise EvalSuiteError(f"the file names column {repeated!r} more than once", source=source, field="columns",
                             value=", ".join(map(str, names)))
    return parquet


def read_parquet_table(parquet, source: str, columns: list[str] | None = None, *, data=None,
                       limits: ReadLimits | None = None) -> pa.Table:
    """Read (some columns of) an opened Parquet file, fully validated (UTF-8 of strings too).

    With ``data`` (the file's bytes) the columns are decoded only when their decoded size, bounded
    from the page headers (dictionary and run-length encodings counted), is within
    ``limits.max_bytes`` (:mod:`evalsuite.io._parquet_size`).
    """
    from ._parquet_size import read_within_budget

    try:
        if data is not None:
            table = read_within_budget(parquet, data, columns, check_limits(limits), source)
        else:
            table = parquet.read(columns=columns)
        table.validate(full=True)
    except (pa.ArrowException, OSError) as exc:
        raise EvalSuiteError(f"not a readable Parquet file ({exc})", source=source) from None
    return table


def _reject_constant(value: str):
    raise ValueError(f"{value} is not allowed (scores and grades must be finite numbers)")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook`` for json: a key given twice in one object is an error, not a silent overwrite."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one JSON object")
        out[key] = value
    return out


class LongNumber(ValueError):
    """An integer in JSON with more digits than ``max_number_digits``."""

    def __init__(self, text: str, limit: int) -> None:
        super().__init__(f"an integer of {len(text.lstrip('-')):,} digits (limit max_number_digits={limit})")
        self.text = text


@functools.lru_cache(maxsize=8)
def _int_parser(limit: int):
    """``parse_int`` for json: an integer's digits are counted before ``int()`` sees them (Python's
    int() of a long digit string is slow, and refuses more than 4,300 digits with a ValueError)."""
    def parse(text: str) -> int:
        if len(text) > limit and len(text.lstrip("-")) > limit:
            raise LongNumber(text, limit)
        return int(text)

    return parse


def json_loads(text: str, limits: ReadLimits | None = None, **options):
    """``json.loads`` with the readers' rules: NaN and Infinity refused, a key twice in one object
    refused, integers of at most ``limits.max_number_digits`` digits (ValueError otherwise)."""
    settings = {"parse_constant": _reject_constant, "object_pairs_hook": unique_keys,
                "parse_int": _int_parser(check_limits(limits).max_number_digits), **options}
    return json.loads(text, **settings)


def _number_line(text: str, literal: str, line_offset: int | None) -> int | None:
    at = text.find(literal)
    return None if at < 0 else text.count("\n", 0, at) + 1 + (line_offset or 0)


def json_load(text: str, name: str, line_offset: int | None = None, limits: ReadLimits | None = None):
    """Parse one JSON text (a whole document, or one JSONL line starting after ``line_offset``
    lines); every problem is an EvalSuiteError naming the line where it can be known."""
    line = None if line_offset is None else line_offset + 1  # the line of a whole-line problem
    try:
        return json_loads(text, limits)
    except LongNumber as exc:
        raise EvalSuiteError(str(exc), source=name, line=_number_line(text, exc.text, line_offset), field="number",
                             value=exc.text[:20] + "...") from None
    except json.JSONDecodeError as exc:
        raise EvalSuiteError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=name,
                             line=exc.lineno + (line_offset or 0), field="json",
                             value=text[max(0, exc.pos - 20): exc.pos + 20]) from None
    except RecursionError:
        raise EvalSuiteError("JSON nested too deeply to read", source=name, line=line, field="json") from None
    except ValueError as exc:
        raise EvalSuiteError(f"invalid JSON: {exc}", source=name, line=line, field="json") from None


def finite_number(value) -> float | None:
    """``value`` as a float when it is a finite int or float (not a bool), else None.

    JSON integers have no size limit: one past float range is not finite, not an OverflowError.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def valid_table(table: pa.Table, data: bytes, lines_of_rows=None) -> pa.Table:
    """Fully validate what pyarrow's JSON reader returned, re-reading any broken chunk.

    pyarrow 26's JSON reader can return a list<bool> chunk whose offsets run past its values
    (seen on a 1-million-record file: "Length spanned by list offsets (12515) larger than values
    array (length 12514)"). Such a chunk is rebuilt from its own lines with the json module
    (``lines_of_rows`` maps a row to its 1-based line; blank lines hold no row).
    """
    try:
        table.validate(full=True)
        return table
    except pa.ArrowInvalid:
        pass
    lines_of_rows = lines_of_rows or nonblank_lines(data)
    lines = None
    columns = []
    for name in table.column_names:
        column = table.column(name)
        chunks, start = [], 0
        for chunk in column.chunks:
            try:
                chunk.validate(full=True)
            except pa.ArrowInvalid:
                if lines is None:
                    lines = data.split(b"\n")
                chunk = pa.array([json_loads(lines[lines_of_rows(start + i) - 1]).get(name) for i in range(len(chunk))],
                                 type=chunk.type)
            chunks.append(chunk)
            start += len(chunk)
        columns.append(pa.chunked_array(chunks, type=column.type))
    repaired = pa.table(columns, names=table.column_names)
    repaired.validate(full=True)
    return repaired


def jsonl_table(data: bytes, limits: ReadLimits, source: str) -> pa.Table | None:
    """The fast path of every JSONL reader: pyarrow's JSON reader, fully validated, or None.

    None when a line is not an object (pyarrow crashes the process on some, such as a first
    line ``null``) or pyarrow refuses the file; the caller then reads it line by line with
    :func:`jsonl_rows`, which names the line. Raises when the rows have more than
    ``limits.max_columns`` keys.
    """
    import pyarrow.json as pajson

    if rows_not_objects(data):
        return None
    try:
        table = valid_table(pajson.read_json(pa.BufferReader(pa.py_buffer(data))), data)
        names = table.column_names
    except (pa.ArrowException, UnicodeDecodeError, ValueError, RecursionError):
        return None  # the line-by-line reader names the line
    check_columns(len(names), limits, source)
    if not _read_as_written(table, data):
        return None
    return table


def _inferred_away(kind: pa.DataType) -> bool:
    """Whether pyarrow's inference may have changed what was written: a string that looks like a
    date read as a timestamp (its text is gone), in a column or nested in lists and structs."""
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_time(kind):
        return True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _inferred_away(kind.value_type)
    if pa.types.is_struct(kind):
        return any(_inferred_away(kind.field(i).type) for i in range(kind.num_fields))
    return False


def _read_as_written(table: pa.Table, data: bytes) -> bool:
    """Whether pyarrow's table holds what the JSONL text says, one row per non-blank line.

    Not when a value was inferred as a date or time, when a float column reaches 2**63 (an
    integer too wide for int64, read as a float with digits lost), or when a line held two
    objects (pyarrow reads both; the line is invalid JSONL, and the line-by-line reader says so).
    """
    for column in table.columns:
        if _inferred_away(column.type):
            return False
        if pa.types.is_floating(column.type) and column.length() > column.null_count:
            largest = pc.max(pc.abs(column)).as_py()
            if largest is not None and largest >= 2.0**63:
                return False
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if table.num_rows != lines:  # blank lines, or a line with two objects: count exactly
        return table.num_rows == sum(1 for line in data.split(b"\n") if line.strip())
    return True


def jsonl_rows(data: bytes, limits: ReadLimits, source: str) -> tuple[list, list[int]]:
    """Every non-blank line of a JSONL text parsed with the json module, and its line number.

    Raises EvalSuiteError naming the line of invalid JSON, undecodable bytes, or the line where
    the rows' keys pass ``limits.max_columns``.
    """
    text = decode_or_explain(data, source)
    rows, lines = [], []
    keys: set = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        row = json_load(line, source, line_offset=number - 1, limits=limits)
        if isinstance(row, dict):
            keys.update(row)
            if len(keys) > limits.max_columns:
                check_columns(len(keys), limits, source, line=number)
        rows.append(row)
        lines.append(number)
    return rows, lines


def check_input(inp: _Input, fmt: str, limits: ReadLimits) -> None:
    """The limits a text file is held to before any parser sees it (Parquet: by its footer, later).

    A plain file given by path is checked through a memory map (its rows are counted after
    parsing, which needs no copy); JSON and JSONL are also checked for nesting, which the JSON
    parsers need the bytes for anyway.
    """
    if fmt == "parquet" or (fmt == "trec" and inp.streams_gzip):
        return  # a streamed TREC file is checked as it is inflated (``_read_ranked._parse_trec``)
    if inp.path is not None and inp._data is None and fmt != "json":
        import mmap

        with open(inp.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            check_text(view, limits, inp.name, count_rows=False)
    else:
        check_text(inp.data, limits, inp.name, lines=fmt != "json")
    if fmt in ("json", "jsonl"):
        error = json_depth_error(inp.data, limits, inp.name, per_line=fmt == "jsonl")
        if error is not None:
            raise error
