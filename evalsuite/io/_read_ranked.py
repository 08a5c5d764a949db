"""Parsers of run and qrels files into columns (``_Parsed``): TREC (pyarrow, then normalised
whitespace, then line by line) and the column formats (CSV, TSV, JSON, JSONL, Parquet)."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ._lines import csv_error, csv_lines, long_csv_fields, nonblank_lines
from ..errors import EvalSuiteError
from ..utils.arrays import has_empty_strings, numbers
from ..utils.ids import trim_id_array
from .limits import ReadLimits, check_columns, check_rows, check_text
from .columns import ColumnRoles, column_roles
from ._reading import (
    arrow_stream, jsonl_rows, jsonl_table, _BLANKS, decode_or_explain, finite_number, _Input, json_load, _NUMBER,
    open_parquet, _QRELS_TREC_COLUMNS, read_parquet_table, repeated_name, _RUN_TREC_COLUMNS,
)
from ._trec_scan import _NotAsScanned, _PieceScan, _plain_spaced_bytes, _scan_whitespace


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

    def hand_over(self) -> list:
        """``[query_ids, doc_ids, values, ranks]``, no longer held here (for ``build_run_handed_over``)."""
        columns = [self.query_ids, self.doc_ids, self.values, self.ranks]
        self.query_ids = self.doc_ids = self.values = self.ranks = None
        return columns


# ----------------------------------------------------------------------------------------------
# TREC (whitespace separated).


def _has_comment_or_blank_lines(data: bytes) -> bool:
    """Whether the file has ``#`` comment lines or blank lines (only asked on the slow path)."""
    return data[:1] in (b"#", b"\n") or data.find(b"\n#") != -1 or data.find(b"\n\n") != -1


def _normalise_whitespace(data: bytes, chunk: int = 1 << 24) -> bytes:
    """Tabs, CRs, vertical tabs and form feeds to spaces, runs of spaces to one, no space at line starts or ends.

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
        block[(block == 9) | (block == 13) | (block == 11) | (block == 12)] = 32
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
    if inp.streams_gzip:
        parsed = _parse_trec_streamed(inp, kind, limits)
        if parsed is not None:
            return parsed
        check_text(inp.data, limits, inp.name)  # what check_input left to the stream
    separator, plain = _scan_whitespace(inp)
    parsed = None if separator is None else _parse_trec_arrow(inp.arrow_source, kind, separator, every_field=not plain,
                                                              text_done=inp.release)
    if parsed is not None:
        return parsed
    data = inp.data
    if not _has_comment_or_blank_lines(data):
        normalised = _normalise_whitespace(data)  # no two spaces in a row: only bytes outside ASCII can fail
        parsed = _parse_trec_arrow(lambda: arrow_stream(normalised), kind, every_field=not normalised.isascii())
        if parsed is not None:
            return parsed
    return _parse_trec_python(inp, kind)


def _parse_trec_streamed(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed | None:
    """The fast path on a gzip file inflated while pyarrow parses it, its text never whole in
    memory (238 MiB for 7 million lines). The separator and whether fields are plain are read
    from the head; every piece is checked to agree (:class:`_PieceScan`). None when the head has
    a tab or another control byte, when a piece disagrees, or when the fast path declines."""
    plain = _plain_spaced_bytes(inp.head)
    if plain is None:
        return None
    try:
        return _parse_trec_arrow(lambda: inp.gunzip_stream(_PieceScan(plain, limits.max_line_bytes)), kind,
                                 every_field=not plain, text_done=inp.release)
    except _NotAsScanned:
        return None


# pyarrow's CSV blocks. 1 MiB (its default) parsed a 7M-line run 0.25-0.3 s faster than 16 MiB
# (benchmarks/README.md, issue 31); a line longer than a block makes pyarrow stop ("straddles
# two block boundaries"), so such a file is parsed again in blocks of the longest line allowed.
_BLOCK_BYTES = 1 << 20
_LONG_LINE_BLOCK_BYTES = 1 << 24  # ReadLimits' default max_line_bytes


def _parse_trec_arrow(open_source: Callable[[], Any], kind: str, delimiter: str = " ",
                      every_field: bool = True, text_done: Callable[[], None] | None = None) -> _Parsed | None:
    """Fast path for lines separated by single spaces, or single tabs (``delimiter``;
    ``open_source()``: a new pyarrow buffer or file of the content, for each attempt).

    Returns None when the result would not be what a whitespace split gives line by line
    (pyarrow rejected a line, a field is empty, a line is blank or starts with '#'); the
    caller then normalises or explains. The columns read only to check them (Q0 and rank, the
    qrels' iteration: not empty, UTF-8) are not converted when ``every_field`` is False: the
    caller found no two separators in a row and no byte outside ASCII, so neither can fail
    (their strings were a quarter of the parse's memory). ``text_done()`` is called once the
    table is accepted, before its scores are copied out: the text is no longer needed (a gzip
    file's text in memory, 238 MB for 7 million lines, was held through that copy).
    """
    ncols, names, _, _ = _trec_layout(kind)
    value_col = names[-1] if kind == "qrels" else "score"
    text_cols = [c for c in names if c not in ("query_id", value_col, "tag") and (every_field or c == "doc_id")]
    kept = [c for c in names if c in ("query_id", value_col, "tag") or c in text_cols]
    query_type = pa.dictionary(pa.int32(), pa.string())

    def read(block_bytes: int) -> pa.Table:
        return pacsv.read_csv(
            open_source(),
            read_options=pacsv.ReadOptions(column_names=names, block_size=block_bytes),
            # Blank lines must fail here (not be skipped), or line numbers would shift.
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                              escape_char=False, newlines_in_values=False,
                                              ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={"query_id": query_type, value_col: pa.float64(), **{c: pa.string() for c in text_cols},
                              **({"tag": query_type} if kind == "run" else {})},
                include_columns=kept, null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
        )

    try:
        try:
            table = read(_BLOCK_BYTES)
        except pa.ArrowInvalid as exc:
            if "straddles" not in str(exc):
                raise
            table = read(_LONG_LINE_BLOCK_BYTES)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if any(has_empty_strings(table.column(col)) for col in text_cols):
        return None
    # One compute call over every chunk's dictionary: an ungrouped run's 238 dictionaries of
    # 7,000 ids each were 0.19 s as Python strings, 0.06 s here.
    query_texts = pa.chunked_array([c.dictionary for c in table.column("query_id").chunks], pa.string())
    # No Python scalars as compute arguments: pyarrow converts them with pa.scalar, which
    # imports pandas (0.25 s; tests/test_layout.py keeps it off the read path).
    if len(query_texts) and (pc.min(pc.binary_length(query_texts)).as_py() == 0
                             or pc.any(pc.starts_with(query_texts, "#")).as_py()):
        return None
    del query_texts
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
    if text_done is not None:
        text_done()
    chunks = table.column(value_col).chunks
    table = table.drop_columns([value_col])
    return _Parsed(table.column("query_id"), table.column("doc_id"), _float_blocks(chunks), tag=tag, warnings=warnings)


def _float_blocks(chunks: list) -> np.ndarray:
    """The float64 blocks of a column (``chunks``, emptied) as one array, each block freed once
    copied (and given back to the system every 64 blocks and at the end): a whole second copy
    of the column beside the table was the parse's peak."""
    values = np.empty(sum(len(c) for c in chunks), dtype=np.float64)
    at = 0
    for i in range(len(chunks)):
        block, chunks[i] = chunks[i], None
        values[at:at + len(block)] = numbers(block)  # not to_numpy, which imports pandas
        at += len(block)
        if i % 64 == 63:
            # Freed blocks are each under glibc's mmap threshold, so the heap keeps them: let
            # them go as the copy grows (a 7M-line run's 53 MiB of them was a reader's peak).
            pa.default_memory_pool().release_unused()
    pa.default_memory_pool().release_unused()
    return values


_WHITESPACE = str.maketrans("\t\r\v\f", "    ")


def _split_fields(line: str) -> list[str]:
    """Fields split on trec_eval's whitespace (space, tab, CR, vertical tab, form feed)."""
    return [f for f in line.translate(_WHITESPACE).split(" ") if f]


def _parse_trec_python(inp: _Input, kind: str) -> _Parsed:
    """Line-by-line reader: comments, blank lines, extra run columns, and exact error locations."""
    ncols, names, doc_index, value_index = _trec_layout(kind)
    text = decode_or_explain(inp.data, inp.name)
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
    roles = column_roles(table.column_names, kind, source)
    # Ids by the one rule of every format (evalsuite.utils.ids): ASCII whitespace off both ends.
    query = trim_id_array(_ids_to_string(table.column(roles.query), roles.query, source, line_of, line_label))
    doc = trim_id_array(_ids_to_string(table.column(roles.doc), roles.doc, source, line_of, line_label))
    values = _numbers(table.column(roles.value), roles.value, source, line_of, line_label) if roles.value else None
    ranks = _numbers(table.column(roles.rank), roles.rank, source, line_of, line_label) if roles.rank and values is None else None
    warnings = []
    extra = [c for c in table.column_names if c not in (roles.query, roles.doc, roles.value, roles.rank)]
    if extra:
        warnings.append(f"columns not used: {', '.join(map(str, extra))}")
    return _Parsed(query, doc, values, ranks, line_of=line_of, warnings=warnings, line_label=line_label)


def _parse_delimited(inp: _Input, kind: str, delimiter: str, limits: ReadLimits) -> _Parsed:
    data = inp.data
    if len(data) == 0:
        raise EvalSuiteError("the file is empty", source=inp.name)
    header_end = data.find(b"\n")
    header_line = decode_or_explain(data[: header_end if header_end != -1 else len(data)], inp.name).rstrip("\r")
    header = [h.strip().strip('"') for h in header_line.split(delimiter)]
    check_columns(len(header), limits, inp.name, line=1)
    repeated = repeated_name(header)
    if repeated is not None:
        raise EvalSuiteError(f"the header names column {repeated!r} more than once", source=inp.name, line=1,
                             field="header", value=header_line)
    roles = column_roles(header, kind, inp.name)
    text_cols = {roles.query: pa.string(), roles.doc: pa.string()}
    value_cols = {c: pa.float64() for c in (roles.value, roles.rank) if c}

    def read(newlines_in_values: bool) -> pa.Table:
        return pacsv.read_csv(
            pa.py_buffer(data),
            # The header as trimmed above names the columns, so " doc_id" is doc_id and its cells
            # are read as text (not inferred as numbers, which would drop leading zeros).
            read_options=pacsv.ReadOptions(block_size=1 << 24, column_names=header, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=newlines_in_values),
            convert_options=pacsv.ConvertOptions(column_types={**text_cols, **value_cols}, null_values=[],
                                                 strings_can_be_null=False),
        )

    try:
        table = read(False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        try:
            # A quoted line break where pyarrow cuts its 16 MiB blocks needs the slower mode.
            table = read(True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            _explain_delimited(inp, delimiter, header, roles, exc)
            raise  # _explain_delimited always raises
    return _from_table(table, kind, inp.name, csv_lines(data, delimiter))


def _explain_delimited(inp: _Input, delimiter: str, header: list[str], roles: ColumnRoles, exc: Exception) -> None:
    """Find the first line the fast CSV parser rejected and raise an error naming it."""
    import csv

    text = decode_or_explain(inp.data, inp.name)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    numeric = {c for c in (roles.value, roles.rank) if c}
    with long_csv_fields():
        try:
            next(reader, None)
            for row in reader:
                number = reader.line_num
                if not row:
                    continue
                if len(row) != len(header):
                    raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(row)}",
                                         source=inp.name, line=number, field="columns", value=delimiter.join(row))
                for col, value in zip(header, row):
                    if col in numeric and not _NUMBER.fullmatch(value.strip(_BLANKS)):
                        raise EvalSuiteError("not a number", source=inp.name, line=number, field=col, value=value)
        except csv.Error as error:
            raise csv_error(error, inp.name, max(reader.line_num, 1)) from None
    raise EvalSuiteError(f"could not be parsed as {'TSV' if delimiter == chr(9) else 'CSV'}: {exc}", source=inp.name) from None


def _parse_csv(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    return _parse_delimited(inp, kind, ",", limits)


def _parse_tsv(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    return _parse_delimited(inp, kind, "\t", limits)


def _parse_parquet(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    parquet = open_parquet(inp.data, limits, inp.name)
    names = parquet.schema_arrow.names
    roles = column_roles(names, kind, inp.name)
    used = [c for c in dict.fromkeys((roles.query, roles.doc, roles.value, roles.rank)) if c]
    parsed = _from_table(read_parquet_table(parquet, inp.name, used, data=inp.data, limits=limits), kind, inp.name,
                         lambda row: row + 1, line_label="row")
    extra = [c for c in names if c not in used]
    parsed.warnings = [f"columns not used: {', '.join(map(str, extra))}"] if extra else []
    return parsed


def _parse_json(inp: _Input, kind: str, limits: ReadLimits) -> _Parsed:
    text = decode_or_explain(inp.data, inp.name)
    if not text.strip():
        raise EvalSuiteError("the file is empty", source=inp.name)
    document = json_load(text, inp.name, limits=limits)
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
    return _Parsed(trim_id_array(pa.array(queries, pa.string())), trim_id_array(pa.array(docs, pa.string())),
                   np.array(values, dtype=np.float64), line_of=lambda row: None, raw=lambda row: values[row])


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
    roles = column_roles(names, kind, name)
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
    data = inp.data
    if len(data) == 0 or not bytes(data[:65536]).strip():
        raise EvalSuiteError("the file is empty", source=inp.name)
    table = jsonl_table(data, limits, inp.name)
    if table is not None:
        roles = column_roles(table.column_names, kind, inp.name)
        # Ids read as floats (integers past 2**63, say) lost digits: the exact path reads them.
        if not any(pa.types.is_floating(table.schema.field(c).type) for c in (roles.query, roles.doc)):
            return _from_table(table, kind, inp.name, nonblank_lines(data))
    # Slow path: mixed id types, or an error to locate.
    rows, lines = jsonl_rows(data, limits, inp.name)
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
