"""Readers for runs and qrels: TREC, CSV/TSV with a header, JSON, JSONL and Parquet (gzip too).

Parsing is done by pyarrow; a pure-Python pass runs only to locate and explain a problem the
fast parser rejected (so every error names the file, line, field and value) and for files the
fast parser cannot take as they are (``#`` comment lines, blank lines, extra columns after the
TREC run tag). Ids are always read as strings, exactly as written.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .data import Qrels, Run, build_qrels, build_run
from ._lines import csv_lines, nonblank_lines
from .errors import EvalSuiteError, reading_errors
from .limits import (
    ReadLimits, check_columns, check_limits, check_rows, check_text, gunzip, json_depth_error, rows_not_objects,
    too_large,
)

__all__ = ["read_run", "read_qrels", "FORMATS", "load_bytes", "detect_format"]

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

    A plain (not gzip, no byte-order mark) file given by path is handed to pyarrow as a memory
    map, so the fast path never copies the file into Python; ``data`` reads it on demand for the
    slower paths.
    """

    def __init__(self, name: str, ext_name: str, data: bytes | None = None, path: str | None = None,
                 size: int = 0, head: bytes = b"") -> None:
        self.name, self.ext_name, self.path = name, ext_name, path
        self._data = data
        self.size = len(data) if data is not None else size
        self.head = data[:65536] if data is not None else head

    @property
    def data(self) -> bytes:
        if self._data is None:
            with open(self.path, "rb") as handle:
                self._data = handle.read()
        return self._data

    def arrow_source(self):
        """Something pyarrow reads without a copy: a memory map of the file, or the bytes."""
        if self._data is None:
            return pa.memory_map(self.path)
        return pa.py_buffer(self._data)

    def release(self) -> None:
        """Forget the bytes (the parsed columns are all that is needed from here on)."""
        self._data = b""
        self.path = None


def load_bytes(path_or_buffer: PathOrBuffer, name: str | None = None,
               limits: ReadLimits | None = None) -> tuple[bytes, str]:
    """Read a path, bytes or a binary file object (Streamlit's UploadedFile too), un-gzipping.

    Returns the content and the name to show in messages. Raises EvalSuiteError when the
    content (after decompression) is larger than ``limits.max_bytes``.
    """
    inp = _load(path_or_buffer, name, limits)
    return inp.data, inp.name


def _finish(raw: bytes, shown: str, limits: ReadLimits | None = None) -> _Input:
    """Un-gzip (by magic number, whatever the name says) and drop a UTF-8 byte-order mark."""
    limits = check_limits(limits)
    ext_name = shown[:-3] if shown.lower().endswith(".gz") else shown
    if raw[:2] == b"\x1f\x8b":
        raw = gunzip(raw, limits, shown)
    elif len(raw) > limits.max_bytes:
        raise too_large(len(raw), limits, shown)
    if raw[:3] == b"\xef\xbb\xbf":
        raw = raw[3:]
    return _Input(shown, ext_name, data=raw)


def _load(path_or_buffer: PathOrBuffer, name: str | None = None, limits: ReadLimits | None = None) -> _Input:
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
                    return _finish(head + handle.read(), shown, limits)
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
    return _finish(buffer_bytes(path_or_buffer, limits, shown), shown, limits)


def buffer_bytes(buffer, limits: ReadLimits, shown: str | None) -> bytes:
    """The bytes of an in-memory input (bytes, or a binary file object read from its start),
    refused when larger than ``limits.max_bytes`` (a gzip file's content is checked later, while
    it is decompressed)."""
    if isinstance(buffer, (bytes, bytearray, memoryview)):
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
    """Guess the format from the file name's extension, then from the content.

    Returns one of ``FORMATS``. ``.txt`` and unknown extensions are sniffed: Parquet magic,
    JSON (one document) or JSONL (one object per line), CSV or TSV with a recognised header,
    otherwise TREC (whitespace separated). A ``.tsv`` or ``.csv`` file whose first line is not a
    header of known column names is read as TREC, as MS MARCO's headerless ``qrels.dev.tsv``
    (``qid 0 pid grade``, tab separated) needs.
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
            except ValueError:
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


# ----------------------------------------------------------------------------------------------
# Public readers.


def read_run(path_or_buffer: PathOrBuffer, format: str | None = None, *, name: str | None = None,
             duplicates: str = "error", source_name: str | None = None, limits: ReadLimits | None = None,
             isolate: bool = False) -> Run:
    """Read a run: per query, retrieved doc ids with scores.

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file; gzip-compressed content is detected and decompressed.
    format : {"trec", "csv", "tsv", "json", "jsonl", "parquet"} or None
        None detects it from the extension and the content (see :func:`detect_format`).
        TREC: ``query Q0 doc rank score tag``, whitespace separated, ``#`` comment lines
        allowed; the rank column is ignored (trec_eval); extra columns after the tag are
        ignored with a warning (as trec_eval does). CSV/TSV/JSONL/Parquet: columns for the
        query id (``query_id``, ``query-id``, ``qid`` ...), the doc id (``doc_id``,
        ``corpus-id``, ``docno`` ...) and ``score`` and/or ``rank`` (rank only: ascending rank
        is the order). JSON: ranx's ``{query_id: {doc_id: score}}``.
    name : str, optional
        System name; defaults to the TREC run tag, else the file name without extension.
    duplicates : {"error", "max"}
        A doc listed twice for one query is an error (as in trec_eval) unless "max" keeps the
        higher score.
    source_name : str, optional
        Name to show in messages instead of the file name.
    limits : ReadLimits, optional
        Bytes, lines, line length, columns and JSON nesting the file may have (see
        :class:`ReadLimits`; the defaults pass a 7-million-line run).
    isolate : bool
        Parse in a separate worker process with a time and memory cap (see
        :func:`evalsuite.isolation.read_isolated`), so no file can crash or exhaust this
        process; the dashboard always does. Default False: parse here.

    Returns
    -------
    Run
        Rows grouped by query, ordered by score descending then doc id descending.

    Raises
    ------
    EvalSuiteError
        Any problem, naming the file, line, field and value: malformed lines, wrong column
        counts, non-numeric or non-finite scores, an empty file, a qrels file given as a
        run, undecodable bytes, duplicate docs, a file past ``limits``; with ``isolate``, also
        a parse that crashed, ran out of time or memory (:class:`evalsuite.ReaderStopped`).

    Examples
    --------
    >>> run = read_run(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n", source_name="run.trec")
    >>> run.name, run.query("q1")["doc_id"].tolist()
    ('bm25', ['d1', 'd2'])
    """
    if isolate:
        from .isolation import read_isolated

        return read_isolated("run", path_or_buffer, source_name, format=format, limits=limits, name=name,
                             duplicates=duplicates)
    source = source_name or _shown_name(path_or_buffer)
    with reading_errors(source):
        inp = _load(path_or_buffer, source_name, limits)
        fmt = _check_format(format, inp)
        parsed = _parse(inp, fmt, "run", check_limits(limits))
        inp.release()  # the parsed columns are all that is needed now
        if parsed.n_rows == 0:
            raise EvalSuiteError("no run lines found (the file is empty or holds only comments)", source=inp.name)
        run_name = name or parsed.tag or os.path.splitext(os.path.basename(inp.ext_name))[0] or None
        return build_run(parsed.query_ids, parsed.doc_ids, parsed.values, parsed.ranks, name=run_name,
                         source=inp.name, line_of=parsed.line_of, duplicates=duplicates, warnings=parsed.warnings,
                         line_label=parsed.line_label)


def _shown_name(path_or_buffer) -> str | None:
    """The name messages use for an input before it is opened (for errors of the last resort)."""
    if isinstance(path_or_buffer, (str, os.PathLike)):
        return os.path.basename(os.fspath(path_or_buffer))
    if isinstance(path_or_buffer, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return os.path.basename(str(getattr(path_or_buffer, "name", "") or "<upload>"))


def read_qrels(path_or_buffer: PathOrBuffer, format: str | None = None, *, duplicates: str = "error",
               source_name: str | None = None, limits: ReadLimits | None = None, isolate: bool = False) -> Qrels:
    """Read relevance judgements (qrels).

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file; gzip-compressed content is detected and decompressed.
    format : {"trec", "csv", "tsv", "json", "jsonl", "parquet"} or None
        As in :func:`read_run`. TREC qrels: ``query iteration doc grade`` (the iteration
        column is ignored). CSV/TSV/JSONL/Parquet: query id, doc id and a grade column
        (``grade``, ``relevance``, ``label`` ... or BEIR's ``score``). JSON: ranx's
        ``{query_id: {doc_id: grade}}``.
    duplicates : {"error", "max"}
        A doc judged twice for one query is an error unless "max" keeps the higher grade.
    source_name, limits, isolate :
        As in :func:`read_run`.

    Returns
    -------
    Qrels

    Raises
    ------
    EvalSuiteError
        As :func:`read_run`; also a grade that is not a whole number (trec_eval would
        truncate it silently, pytrec_eval raises).

    Examples
    --------
    >>> qrels = read_qrels(b"q1 0 d1 2\\nq1 0 d2 0\\n", source_name="qrels.trec")
    >>> qrels.query("q1")
    {'d1': 2.0, 'd2': 0.0}
    """
    if isolate:
        from .isolation import read_isolated

        return read_isolated("qrels", path_or_buffer, source_name, format=format, limits=limits,
                             duplicates=duplicates)
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        inp = _load(path_or_buffer, source_name, limits)
        fmt = _check_format(format, inp)
        parsed = _parse(inp, fmt, "qrels", check_limits(limits))
        inp.release()
        if parsed.n_rows == 0:
            raise EvalSuiteError("no judgements found (the file is empty or holds only comments)", source=inp.name)
        grades = parsed.values
        bad = np.flatnonzero(grades != np.floor(grades))
        if bad.size:
            row = int(bad[0])
            raise EvalSuiteError("a grade must be a whole number (relevance levels are integers)", source=inp.name,
                                 line=parsed.line_of(row), field="grade", value=parsed.raw_value(row),
                                 line_label=parsed.line_label)
        return build_qrels(parsed.query_ids, parsed.doc_ids, grades, source=inp.name, line_of=parsed.line_of,
                           duplicates=duplicates, warnings=parsed.warnings, line_label=parsed.line_label)


def not_unicode_error(exc: UnicodeEncodeError, source: str | None) -> EvalSuiteError:
    """The error for text holding a lone surrogate (JSON's \\ud800 escapes can produce one)."""
    return EvalSuiteError("text that is not valid Unicode: a lone surrogate (JSON escapes such as \\ud800 can "
                          "produce one); fix the id or text", source=source, field="text",
                          value=exc.object[max(0, exc.start - 20): exc.end + 20])


def _parse(inp: _Input, fmt: str, kind: str, limits: ReadLimits) -> _Parsed:
    _check_input(inp, fmt, limits)
    try:
        parsed = _PARSERS[fmt](inp, kind, limits)
    except UnicodeEncodeError as exc:
        raise not_unicode_error(exc, inp.name) from None
    check_rows(parsed.n_rows, limits, inp.name)
    return parsed


def _check_input(inp: _Input, fmt: str, limits: ReadLimits) -> None:
    """Limits a text file is held to before any parser sees it (Parquet: by its footer, later)."""
    if fmt == "parquet":
        return
    if inp.path is not None:  # a plain file given by path: memory-mapped, rows counted after parsing
        if fmt in ("trec", "csv", "tsv", "jsonl"):
            import mmap

            with open(inp.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                check_text(view, limits, inp.name, count_rows=False)
            return
    check_text(inp.data, limits, inp.name, lines=fmt != "json")
    if fmt in ("json", "jsonl"):
        error = json_depth_error(inp.data, limits, inp.name, per_line=fmt == "jsonl")
        if error is not None:
            raise error


def _check_format(format: str | None, inp: _Input) -> str:
    if format is None:
        return detect_format(inp.head, inp.ext_name)
    fmt = str(format).lower()
    if fmt not in FORMATS:
        raise EvalSuiteError(f"unknown format; use one of {', '.join(FORMATS)} or None to detect it",
                             field="format", value=format)
    return fmt


# ----------------------------------------------------------------------------------------------
# Parsed columns, before validation.


@dataclass
class _Parsed:
    query_ids: pa.Array
    doc_ids: pa.Array
    values: np.ndarray | None  # scores (run) or grades (qrels)
    ranks: np.ndarray | None = None
    line_of: Callable[[int], int | None] = lambda row: row + 1
    tag: str | None = None
    warnings: list[str] = field(default_factory=list)
    raw: Callable[[int], Any] | None = None
    line_label: str = "line"

    @property
    def n_rows(self) -> int:
        return len(self.query_ids)

    def raw_value(self, row: int) -> Any:
        return self.raw(row) if self.raw is not None else float(self.values[row])


# ----------------------------------------------------------------------------------------------
# TREC (whitespace separated).


def _has_comment_or_blank_lines(data: bytes) -> bool:
    """Whether the file has ``#`` comment lines or blank lines (only asked on the slow path)."""
    return data[:1] in (b"#", b"\n") or data.find(b"\n#") != -1 or data.find(b"\n\n") != -1


def _normalise_whitespace(data: bytes, chunk: int = 1 << 24) -> bytes:
    """Tabs and CRs to spaces, runs of spaces to one, no space at line starts or ends.

    Line breaks are kept, so line numbers do not change. Works in chunks cut at line breaks
    to keep memory near the file size.
    """
    out = []
    n = len(data)
    start = 0
    while start < n:
        end = min(start + chunk, n)
        if end < n:
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or n)
        block = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start).copy()
        block[(block == 9) | (block == 13)] = 32
        space = block == 32
        newline = block == 10
        # Drop a space that follows a space or a line break, or that precedes a line break.
        after_break = np.concatenate(([True], space[:-1] | newline[:-1]))
        before_break = np.concatenate((newline[1:], [True]))
        block = block[~(space & (after_break | before_break))]
        # One space may remain before a line break (the first of a trailing run): drop it.
        before_break = np.concatenate(((block == 10)[1:], [True]))
        block = block[~((block == 32) & before_break)]
        out.append(block.tobytes())
        start = end
    return b"".join(out)


def _trec_layout(kind: str) -> tuple[int, list[str], int, int]:
    """Columns count, names, index of the doc column and of the value column."""
    if kind == "run":
        return 6, ["query_id", "q0", "doc_id", "rank", "score", "tag"], 2, 4
    return 4, ["query_id", "iteration", "doc_id", "grade"], 2, 3


def _wrong_kind_message(kind: str, ncols: int) -> str:
    if kind == "run":
        hint = " - this looks like a qrels file (query iteration doc grade)" if ncols == 4 else ""
        return f"a TREC run line has 6 columns ({_RUN_TREC_COLUMNS}), this one has {ncols}{hint}"
    hint = " - this looks like a run file (query Q0 doc rank score tag)" if ncols >= 6 else ""
    return f"a TREC qrels line has 4 columns ({_QRELS_TREC_COLUMNS}), this one has {ncols}{hint}"


def _parse_trec(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    """TREC run or qrels: pyarrow on the file as it is, else on normalised whitespace, else Python."""
    if inp.size == 0:
        raise EvalSuiteError("the file is empty", source=inp.name)
    parsed = _parse_trec_arrow(inp.arrow_source(), kind)
    if parsed is not None:
        return parsed
    data = inp.data
    if not _has_comment_or_blank_lines(data):
        parsed = _parse_trec_arrow(pa.py_buffer(_normalise_whitespace(data)), kind)
        if parsed is not None:
            return parsed
    return _parse_trec_python(inp, kind)


def _parse_trec_arrow(source, kind: str) -> _Parsed | None:
    """Fast path for single-space separated lines (``source``: a pyarrow buffer or memory map).

    Returns None when the result would not be what a whitespace split gives line by line
    (pyarrow rejected a line, a field is empty, a line is blank or starts with '#'); the
    caller then normalises or explains.
    """
    ncols, names, _, _ = _trec_layout(kind)
    value_col = names[-1] if kind == "qrels" else "score"
    text_cols = [c for c in names if c not in ("query_id", value_col, "tag")]
    query_type = pa.dictionary(pa.int32(), pa.string())
    try:
        table = pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            # Blank lines must fail here (not be skipped), or line numbers would shift.
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                              escape_char=False, newlines_in_values=False,
                                              ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={"query_id": query_type, value_col: pa.float64(), **{c: pa.string() for c in text_cols},
                              **({"tag": query_type} if kind == "run" else {})},
                null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    for col in text_cols:
        if table.num_rows and pc.min(pc.binary_length(table.column(col))).as_py() == 0:
            return None
    for chunk in table.column("query_id").chunks:
        if any(q == "" or q.startswith("#") for q in chunk.dictionary.to_pylist()):
            return None
    pa.default_memory_pool().release_unused()
    tag, warnings = None, []
    if kind == "run":
        tag_values: set[str] = set()
        for chunk in table.column("tag").chunks:
            tag_values.update(chunk.dictionary.to_pylist())
        if "" in tag_values:
            return None
        if len(tag_values) == 1:
            tag = next(iter(tag_values))
        elif len(tag_values) > 1:
            warnings.append(f"{len(tag_values)} different run tags in one file; read as one run")
    values = table.column(value_col).combine_chunks().to_numpy(zero_copy_only=False)
    return _Parsed(table.column("query_id"), table.column("doc_id"), values, tag=tag, warnings=warnings)


def _split_fields(line: str) -> list[str]:
    return [f for f in line.replace("\t", " ").split(" ") if f]


def _decode_or_explain(data, name: str) -> str:
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raw = bytes(data)
        line = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start:exc.end]
        raise EvalSuiteError(f"bytes that are not UTF-8 text ({exc.reason}); save the file as UTF-8",
                             source=name, line=line, field="bytes", value=bad) from None


def _parse_trec_python(inp: _Input, kind: str) -> _Parsed:
    """Line-by-line reader: comments, blank lines, extra run columns, and exact error locations."""
    ncols, names, doc_index, value_index = _trec_layout(kind)
    text = _decode_or_explain(inp.data, inp.name)
    queries: list[str] = []
    docs: list[str] = []
    raw_values: list[str] = []
    lines: list[int] = []
    tags: set[str] = set()
    extra_lines: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        fields = _split_fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != ncols:
            if kind == "run" and len(fields) > ncols:
                extra_lines.append(number)
            else:
                raise EvalSuiteError(_wrong_kind_message(kind, len(fields)), source=inp.name, line=number,
                                     field="columns", value=line.strip())
        value = fields[value_index]
        if not _NUMBER.fullmatch(value):
            raise EvalSuiteError(f"the {names[value_index]} must be a number", source=inp.name, line=number,
                                 field=names[value_index], value=value)
        queries.append(fields[0])
        docs.append(fields[doc_index])
        raw_values.append(value)
        lines.append(number)
        if kind == "run":
            tags.add(fields[5])
    warnings = []
    if extra_lines:
        warnings.append(
            f"{len(extra_lines)} line(s) have columns after the run tag (first: line {extra_lines[0]}); "
            "they were ignored, as trec_eval does"
        )
    values = np.array([float(v) for v in raw_values], dtype=np.float64)
    line_array = np.asarray(lines, dtype=np.int64)
    return _Parsed(
        pa.array(queries, pa.string()), pa.array(docs, pa.string()), values,
        line_of=lambda row: int(line_array[row]),
        tag=next(iter(tags)) if len(tags) == 1 else None,
        warnings=warnings,
        raw=lambda row: raw_values[row],
    )


# ----------------------------------------------------------------------------------------------
# Column formats: CSV, TSV, JSONL, Parquet.


def _pick(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    normal = {_normal(c): c for c in columns}
    for cand in candidates:
        if cand in normal:
            return normal[cand]
    return None


@dataclass
class _Roles:
    query: str
    doc: str
    value: str | None
    rank: str | None


def _roles(columns: list[str], kind: str, source: str) -> _Roles:
    query = _pick(columns, _QUERY_COLUMNS)
    doc = _pick(columns, _DOC_COLUMNS)
    missing = [n for n, c in (("query id (query_id, query-id, qid, ...)", query), ("doc id (doc_id, corpus-id, docno, ...)", doc)) if c is None]
    if missing:
        raise EvalSuiteError(f"no column for the {' and the '.join(missing)}; columns found: {columns}",
                             source=source, field="header", value=", ".join(map(str, columns)))
    if kind == "run":
        score = _pick(columns, _SCORE_COLUMNS)
        rank = _pick(columns, _RANK_COLUMNS)
        if score is None and rank is None:
            grade = _pick(columns, _GRADE_COLUMNS)
            hint = f" - column {grade!r} suggests this is a qrels file" if grade else ""
            raise EvalSuiteError(f"a run needs a 'score' or 'rank' column; columns found: {columns}{hint}",
                                 source=source, field="header", value=", ".join(map(str, columns)))
        return _Roles(query, doc, score, rank)
    grade = _pick(columns, _GRADE_COLUMNS)
    if grade is None:
        hint = " - it has a 'rank' column, so it looks like a run file" if _pick(columns, _RANK_COLUMNS) else ""
        raise EvalSuiteError(f"qrels need a grade column (grade, relevance, label or score); columns found: {columns}{hint}",
                             source=source, field="header", value=", ".join(map(str, columns)))
    if _pick(columns, _RANK_COLUMNS) is not None:
        raise EvalSuiteError(f"this has a 'rank' column, so it looks like a run file, not qrels; columns found: {columns}",
                             source=source, field="header", value=", ".join(map(str, columns)))
    return _Roles(query, doc, grade, None)


def _ids_to_string(column: pa.ChunkedArray | pa.Array, field: str, source: str, line_of, line_label="line") -> pa.Array:
    """Ids as strings: integers are written in decimal; anything else but strings is refused."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column
    if pa.types.is_integer(column.type):
        return column.cast(pa.string())
    if pa.types.is_null(column.type):
        raise EvalSuiteError("missing id", source=source, line=line_of(0), field=field, value=None, line_label=line_label)
    sample = next((v for v in column.to_pylist() if v is not None), None)
    raise EvalSuiteError(f"ids must be strings or whole numbers, this column holds {column.type}", source=source,
                         line=line_of(0), field=field, value=sample, line_label=line_label)


def _numbers(column, field: str, source: str, line_of, line_label="line") -> np.ndarray:
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_boolean(column.type) or not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            for row, value in enumerate(column.to_pylist()):
                if value is None or not _NUMBER.fullmatch(value.strip(_BLANKS)):
                    raise EvalSuiteError("not a number", source=source, line=line_of(row), field=field, value=value,
                                         line_label=line_label)
            return np.array([float(v) for v in column.to_pylist()], dtype=np.float64)
        sample = next((v for v in column.to_pylist() if v is not None), None)
        raise EvalSuiteError(f"must be numbers, this column holds {column.type}", source=source, line=line_of(0),
                             field=field, value=sample, line_label=line_label)
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise EvalSuiteError("missing value", source=source, line=line_of(row), field=field, value=None,
                             has_value=False, line_label=line_label)
    return column.to_numpy(zero_copy_only=False).astype(np.float64)


def _from_table(table: pa.Table, kind: str, source: str, line_of, line_label: str = "line") -> _Parsed:
    roles = _roles(table.column_names, kind, source)
    query = _ids_to_string(table.column(roles.query), roles.query, source, line_of, line_label)
    doc = _ids_to_string(table.column(roles.doc), roles.doc, source, line_of, line_label)
    values = _numbers(table.column(roles.value), roles.value, source, line_of, line_label) if roles.value else None
    ranks = _numbers(table.column(roles.rank), roles.rank, source, line_of, line_label) if roles.rank and values is None else None
    warnings = []
    extra = [c for c in table.column_names if c not in (roles.query, roles.doc, roles.value, roles.rank)]
    if extra:
        warnings.append(f"columns not used: {', '.join(map(str, extra))}")
    return _Parsed(query, doc, values, ranks, line_of=line_of, warnings=warnings, line_label=line_label)


def repeated_name(names: list[str]) -> str | None:
    """The first name (in sorted order) that occurs more than once, in linear time; None if none."""
    seen: set[str] = set()
    repeated = {n for n in names if n in seen or seen.add(n)}
    return min(repeated) if repeated else None


def _trim_ids(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Ids without surrounding whitespace, as header cells are (``q1, d1, 2.0`` names doc ``d1``)."""
    return pc.utf8_trim_whitespace(column)


def _parse_delimited(inp: _Input, kind: str, delimiter: str, limits: ReadLimits) -> _Parsed:
    data = inp.data
    if len(data) == 0:
        raise EvalSuiteError("the file is empty", source=inp.name)
    header_end = data.find(b"\n")
    header_line = _decode_or_explain(data[: header_end if header_end != -1 else len(data)], inp.name).rstrip("\r")
    header = [h.strip().strip('"') for h in header_line.split(delimiter)]
    check_columns(len(header), limits, inp.name, line=1)
    repeated = repeated_name(header)
    if repeated is not None:
        raise EvalSuiteError(f"the header names column {repeated!r} more than once", source=inp.name, line=1,
                             field="header", value=header_line)
    roles = _roles(header, kind, inp.name)
    text_cols = {roles.query: pa.string(), roles.doc: pa.string()}
    value_cols = {c: pa.float64() for c in (roles.value, roles.rank) if c}
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data),
            # The header as trimmed above names the columns, so " doc_id" is doc_id and its cells
            # are read as text (not inferred as numbers, which would drop leading zeros).
            read_options=pacsv.ReadOptions(block_size=1 << 24, column_names=header, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(column_types={**text_cols, **value_cols}, null_values=[],
                                                 strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        _explain_delimited(inp, delimiter, header, roles, exc)
        raise  # _explain_delimited always raises
    table = table.set_column(table.column_names.index(roles.query), roles.query, _trim_ids(table.column(roles.query)))
    table = table.set_column(table.column_names.index(roles.doc), roles.doc, _trim_ids(table.column(roles.doc)))
    return _from_table(table, kind, inp.name, csv_lines(data, delimiter))


def _explain_delimited(inp: _Input, delimiter: str, header: list[str], roles: _Roles, exc: Exception) -> None:
    """Find the first line the fast CSV parser rejected and raise an error naming it."""
    import csv

    text = _decode_or_explain(inp.data, inp.name)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    next(reader, None)
    numeric = {c for c in (roles.value, roles.rank) if c}
    for row in reader:
        number = reader.line_num
        if not row:
            continue
        if len(row) != len(header):
            raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(row)}", source=inp.name,
                                 line=number, field="columns", value=delimiter.join(row)) from None
        for col, value in zip(header, row):
            if col in numeric and not _NUMBER.fullmatch(value.strip(_BLANKS)):
                raise EvalSuiteError("not a number", source=inp.name, line=number, field=col, value=value) from None
    raise EvalSuiteError(f"could not be parsed as {'TSV' if delimiter == chr(9) else 'CSV'}: {exc}", source=inp.name) from None


def _parse_csv(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    return _parse_delimited(inp, kind, ",", limits)


def _parse_tsv(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    return _parse_delimited(inp, kind, "\t", limits)


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
    except (pa.ArrowException, OSError) as exc:
        raise EvalSuiteError(f"not a readable Parquet file ({exc})", source=source) from None
    if unpacked > limits.max_bytes:
        raise too_large(unpacked, limits, source, "the uncompressed data")
    return parquet


def read_parquet_table(parquet, source: str, columns: list[str] | None = None) -> pa.Table:
    """Read (some columns of) an opened Parquet file, fully validated (UTF-8 of strings too)."""
    try:
        table = parquet.read(columns=columns)
        table.validate(full=True)
    except (pa.ArrowException, OSError) as exc:
        raise EvalSuiteError(f"not a readable Parquet file ({exc})", source=source) from None
    return table


def _parse_parquet(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    parquet = open_parquet(inp.data, limits, inp.name)
    names = parquet.schema_arrow.names
    roles = _roles(names, kind, inp.name)
    used = [c for c in dict.fromkeys((roles.query, roles.doc, roles.value, roles.rank)) if c]
    parsed = _from_table(read_parquet_table(parquet, inp.name, used), kind, inp.name, lambda row: row + 1,
                         line_label="row")
    extra = [c for c in names if c not in used]
    parsed.warnings = [f"columns not used: {', '.join(map(str, extra))}"] if extra else []
    return parsed


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


def _json_load(text: str, name: str, line_offset: int = 0):
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise EvalSuiteError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=name,
                             line=exc.lineno + line_offset, field="json", value=text[max(0, exc.pos - 20): exc.pos + 20]) from None
    except RecursionError:
        raise EvalSuiteError("JSON nested too deeply to read", source=name, line=line_offset + 1 if line_offset else None,
                             field="json") from None
    except ValueError as exc:
        raise EvalSuiteError(f"invalid JSON: {exc}", source=name, line=line_offset + 1 if line_offset else None,
                             field="json") from None


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


def _parse_json(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    text = _decode_or_explain(inp.data, inp.name)
    if not text.strip():
        raise EvalSuiteError("the file is empty", source=inp.name)
    document = _json_load(text, inp.name)
    if isinstance(document, list):
        check_rows(len(document), limits, inp.name, "items")
        return _rows_to_parsed(document, inp.name, kind, lambda row: None, "item", limits)
    if not isinstance(document, dict):
        raise EvalSuiteError("expected ranx's {query_id: {doc_id: value}} or a list of row objects", source=inp.name,
                             field="json", value=type(document).__name__)
    value_name = "score" if kind == "run" else "grade"
    queries, docs, values = [], [], []
    for qid, inner in document.items():
        if not isinstance(inner, dict):
            raise EvalSuiteError(f"each query must map doc ids to a {value_name}", source=inp.name, field=qid,
                                 value=inner)
        for doc, value in inner.items():
            number = finite_number(value)
            if number is None:
                raise EvalSuiteError(f"the {value_name} must be a finite number", source=inp.name,
                                     field=f"{qid} -> {doc}", value=value)
            queries.append(qid)
            docs.append(doc)
            values.append(number)
    return _Parsed(pa.array(queries, pa.string()), pa.array(docs, pa.string()), np.array(values, dtype=np.float64),
                   line_of=lambda row: None, raw=lambda row: values[row])


def _rows_to_parsed(rows: list, name: str, kind: str, line_of, label: str, limits: ReadLimits) -> _Parsed:
    columns: dict[str, list] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise EvalSuiteError("each row must be a JSON object", source=name, line=line_of(i), field=label, value=row)
        for key in row:
            columns.setdefault(key, [])
        if len(columns) > limits.max_columns:
            check_columns(len(columns), limits, name, line=line_of(i))
    names = list(columns)
    roles = _roles(names, kind, name)
    out: dict[str, list] = {c: [] for c in (roles.query, roles.doc, roles.value, roles.rank) if c}
    for i, row in enumerate(rows):
        for col in out:
            value = row.get(col)
            if col in (roles.query, roles.doc):
                if isinstance(value, bool) or not isinstance(value, (str, int)):
                    raise EvalSuiteError("ids must be strings or whole numbers", source=name, line=line_of(i),
                                         field=col, value=value)
                value = str(value)
            else:
                value = finite_number(value)
                if value is None:
                    raise EvalSuiteError("must be a finite number", source=name, line=line_of(i), field=col,
                                         value=row.get(col))
            out[col].append(value)
    table = pa.table({c: pa.array(v, pa.string() if c in (roles.query, roles.doc) else pa.float64()) for c, v in out.items()})
    parsed = _from_table(table, kind, name, line_of)
    extra = [c for c in names if c not in out]
    parsed.warnings = [f"fields not used: {', '.join(extra)}"] if extra else []
    return parsed


def _parse_jsonl(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    import pyarrow.json as pajson

    data = inp.data
    if len(data) == 0 or not bytes(data[:65536]).strip():
        raise EvalSuiteError("the file is empty", source=inp.name)
    table = None
    # pyarrow's JSON reader crashes the process on some lines that are not objects (a first
    # line `null`): such files, and any it refuses, go to the line-by-line reader.
    if not rows_not_objects(data):
        try:
            table = pajson.read_json(pa.BufferReader(pa.py_buffer(data)))
            table.validate(full=True)
            names = table.column_names
        except (pa.ArrowException, UnicodeDecodeError):
            table = None
    if table is not None:
        check_columns(len(names), limits, inp.name)
        roles = _roles(names, kind, inp.name)
        # Ids read as floats (integers past 2**63, say) lost digits: the exact path reads them.
        if not any(pa.types.is_floating(table.schema.field(c).type) for c in (roles.query, roles.doc)):
            return _from_table(table, kind, inp.name, nonblank_lines(data))
    # Slow path: blank lines, mixed id types, or an error to locate.
    text = _decode_or_explain(data, inp.name)
    rows, lines = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        rows.append(_json_load(line, inp.name, line_offset=number - 1))
        lines.append(number)
    return _rows_to_parsed(rows, inp.name, kind, lambda row: lines[row] if row is not None and row < len(lines) else None,
                           "line", limits)


_PARSERS: dict[str, Callable[[_Input, str], _Parsed]] = {
    "trec": _parse_trec,
    "csv": _parse_csv,
    "tsv": _parse_tsv,
    "json": _parse_json,
    "jsonl": _parse_jsonl,
    "parquet": _parse_parquet,
}
