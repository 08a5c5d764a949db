"""Records files: read them (JSONL, JSON, CSV/TSV, Parquet, gzip too) into
:class:`~evalsuite.records.table.Records`, and write them back (Parquet, JSONL).

A JSON file is a list of objects, RAGChecker's ``{"results": [...]}``, a DeepEval test run or a
pandas ``to_json`` frame; CSV/TSV cells of list fields hold JSON lists (or the Python lists pandas
writes). Columns of RAGAS, DeepEval, TruLens, Phoenix and RAGChecker exports are mapped to the
record fields (:mod:`evalsuite.records.schema`, :mod:`evalsuite.records.vendors`); every value is
validated (:mod:`evalsuite.records.table`), and a problem raises :class:`EvalSuiteError` naming
the file, line (row for Parquet), field and value. ``isolate=True`` reads in a worker process
(:mod:`~evalsuite.io.isolation`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from ..errors import EvalSuiteError, not_unicode_error, reading_errors
from ..metrics.operational import FAILURE_STAGES
from ..records.schema import field_kind
from ..records.table import Records, map_columns, records_from_rows, records_from_table, require_record_fields
from ..records.validation import RowError
from ..records.vendors import deepeval_rows, deepeval_score_keys, python_list_literal
from ..utils.ids import trim_id
from ._lines import csv_error, long_csv_fields, nonblank_lines
from .latency_tables import detect_latency_table, percentile_columns
from ._reading import (
    LongNumber, PathOrBuffer, _load, _shown_name, check_input, json_load, json_loads, jsonl_rows, jsonl_table,
    open_parquet, read_parquet_table, repeated_name,
)
from .limits import ReadLimits, check_columns, check_limits, check_rows
from .output_files import atomic_output, check_output_path

__all__ = ["read_records", "detect_records_format", "write_records", "check_output", "OUTPUT_SUFFIXES"]


def _parse_json_cell(text, row: int, name: str):
    if text is None:
        return None
    stripped = text.strip()
    if stripped == "":
        return None
    try:
        return json_loads(stripped, parse_constant=float)  # NaN in a list cell, as json.dumps writes it
    except RecursionError:
        raise RowError(row, name, text[:80], "JSON nested too deeply to read") from None
    except LongNumber as exc:
        raise RowError(row, name, text[:80], str(exc)) from None
    except ValueError:
        # pandas' to_csv (RAGAS's documented export) writes list cells as Python reprs.
        value = python_list_literal(stripped) if stripped.startswith("[") else None
        if value is not None:
            return value
        raise RowError(row, name, text, "a list field in CSV must hold a JSON list (e.g. [\"a\", \"b\"] or [true, false]) "
                        "or a Python list of strings, numbers, True/False/None (as pandas writes it)") from None


def _csv_value(text, kind: str, row: int, name: str):
    """A CSV cell (text) to the Python value its field expects."""
    if text is None or text == "":
        return None
    if kind in ("texts", "labels", "grades", "relevant"):
        return _parse_json_cell(text, row, name)
    if kind in ("unit", "latency", "score"):
        try:
            return float(text.strip())
        except ValueError:
            raise RowError(row, name, text, "must be a number") from None
    if kind == "id":
        return trim_id(text)  # the one id rule of every format: " q1" names query q1
    if kind == "flag":
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise RowError(row, name, text, "must be true or false")
    return text


def _read_delimited(inp, delimiter: str, system, failure_stages, limits: ReadLimits) -> Records:
    text = inp.data.decode("utf-8") if isinstance(inp.data, bytes) else inp.data
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    with long_csv_fields():
        try:
            return _delimited_records(inp, reader, delimiter, system, failure_stages, limits)
        except csv.Error as exc:
            raise csv_error(exc, inp.name, max(reader.line_num, 1)) from None


def _delimited_records(inp, reader, delimiter: str, system, failure_stages, limits: ReadLimits) -> Records:
    header = next(reader, None)
    if not header:
        raise EvalSuiteError("the file is empty", source=inp.name)
    header = [h.strip() for h in header]
    check_columns(len(header), limits, inp.name, line=1)
    index_column = header[0] in ("", "Unnamed: 0") and len(header) > 1
    if index_column:  # pandas' to_csv writes the index first, under an empty name
        header[0] = "\x00pandas index"
    repeated = repeated_name(header)
    if repeated is not None:
        raise EvalSuiteError(f"the header names column {repeated!r} more than once", source=inp.name, line=1,
                             field="header", value=delimiter.join(header))
    mapping, _, _ = map_columns(header)
    require_record_fields(mapping, header, inp.name)
    rows, lines = [], []
    for cells in reader:
        if not cells or all(not c.strip() for c in cells):
            continue
        line = reader.line_num
        if len(cells) != len(header):
            raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(cells)}", source=inp.name,
                                 line=line, field="columns", value=delimiter.join(cells))
        row = {}
        for name, cell in zip(header, cells):
            if index_column and name == header[0]:
                continue
            canonical = mapping.get(name)
            kind = field_kind(canonical) if canonical else None
            try:
                row[name] = _csv_value(cell, kind, len(rows), name) if kind else (cell if cell != "" else None)
            except RowError as err:
                raise EvalSuiteError(err.reason, source=inp.name, line=line, field=err.field_name, value=err.value) from None
        rows.append(row)
        lines.append(line)
    records = records_from_rows(rows, inp.name, lambda r: lines[r] if r < len(lines) else None, "line", system,
                                 failure_stages)
    if index_column:
        records.warnings.append("the first column has no name (a pandas index, as to_csv writes it): ignored")
    return records


def _read_jsonl(inp, system, failure_stages, limits: ReadLimits) -> Records:
    data = inp.data
    lines_of_rows = nonblank_lines(data)
    table = jsonl_table(data, limits, inp.name)
    # Ids that came out as floats (integers past 2**63) lost digits: the exact path reads them.
    id_columns = [c for c, canonical in map_columns(table.column_names)[0].items() if field_kind(canonical) == "id"] \
        if table is not None else []
    if table is not None and not any(pa.types.is_floating(table.schema.field(c).type) for c in id_columns):
        records = records_from_table(table, inp.name, lines_of_rows, "line", system, failure_stages)
        if records is not None:
            return records
    rows, lines = jsonl_rows(data, limits, inp.name)
    return records_from_rows(rows, inp.name, lambda r: lines[r] if r < len(lines) else None, "line", system, failure_stages)


def _read_json(inp, system, failure_stages, limits: ReadLimits) -> Records:
    document = json_load(inp.data.decode("utf-8"), inp.name, limits=limits)
    scores: list[str] = []
    if isinstance(document, dict) and isinstance(document.get("results"), list):
        document = document["results"]  # RAGChecker's input/output files
    elif isinstance(document, dict) and isinstance(document.get("test_cases"), list):
        document = document["test_cases"]  # DeepEval test-case exports
    elif isinstance(document, dict) and (isinstance(document.get("testCases"), list)
                                         or isinstance(document.get("testRunData"), dict)):
        scores = deepeval_score_keys(document)
        document = deepeval_rows(document, inp.name)  # a DeepEval test run (TestRun.save)
    elif isinstance(document, dict):
        document = _pandas_json_rows(document, inp.name)
    if not isinstance(document, list):
        raise EvalSuiteError("expected a JSON list of records (or RAGChecker's {\"results\": [...]})", source=inp.name,
                             field="json", value=type(document).__name__)
    check_rows(len(document), limits, inp.name, "records")
    keys: set = set()
    for row in document:
        if isinstance(row, dict):
            keys.update(row)
    check_columns(len(keys), limits, inp.name)
    records = records_from_rows(document, inp.name, lambda r: None if r is None else r + 1, "item", system,
                                 failure_stages)
    if scores:
        records.score_columns = [c for c in scores if c in records.extra_columns]
    return records


def _pandas_json_rows(document: dict, source: str):
    """The rows of a DataFrame written by pandas ``to_json`` (RAGAS's ``to_pandas()``) with
    orient "columns" (pandas' default: ``{column: {index: value}}``) or "split"
    (``{"columns": [...], "index": [...], "data": [[...]]}``); other dicts are returned as they
    are (and refused by the caller)."""
    if isinstance(document.get("columns"), list) and isinstance(document.get("data"), list):
        columns = document["columns"]
        rows = []
        for i, values in enumerate(document["data"]):
            if not isinstance(values, list) or len(values) != len(columns):
                raise EvalSuiteError(f"row {i + 1} of a pandas 'split' JSON must be a list of {len(columns)} values",
                                     source=source, field="data", value=values)
            rows.append(dict(zip(map(str, columns), values)))
        return rows
    if document and all(isinstance(v, dict) for v in document.values()):
        index = list(dict.fromkeys(k for inner in document.values() for k in inner))
        return [{column: inner.get(i) for column, inner in document.items()} for i in index]
    return document


def _read_parquet(inp, system, failure_stages, limits: ReadLimits) -> Records:
    table = read_parquet_table(open_parquet(inp.data, limits, inp.name), inp.name, data=inp.data, limits=limits)
    index = [c for c in table.column_names if c.startswith("__index_level_")]
    if index:  # a pandas index pyarrow stored as a column (to_parquet of a non-default index)
        table = table.drop_columns(index)
    records = records_from_table(table, inp.name, lambda r: r + 1, "row", system, failure_stages)
    if records is None:
        records = records_from_rows(table.to_pylist(), inp.name, lambda r: r + 1, "row", system, failure_stages)
    return records


_RECORD_FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")


def detect_records_format(data: bytes, name: str = "") -> str:
    """The format :func:`read_records` uses for a records file when none is given.

    Parameters
    ----------
    data : bytes
        The start of the file's (decompressed) content; 64 KiB is plenty.
    name : str
        The file name without a ``.gz`` suffix; its extension decides first.

    Returns
    -------
    str
        One of "jsonl", "json", "csv", "tsv", "parquet": by extension (``.jsonl``/``.ndjson``,
        ``.json``, ``.csv``, ``.tsv``, ``.parquet``/``.pq``), else by content (Parquet magic, one
        JSON document, one JSON object per line, a tab in the first line, otherwise CSV). It
        raises nothing for bytes: every content gets a format, and the reader then says what
        is wrong with the file.

    Examples
    --------
    >>> detect_records_format(b"", "results.ndjson")  # the extension decides
    'jsonl'
    >>> detect_records_format(b'{"query_id": "q1"}\\n{"query_id": "q2"}\\n')  # one object per line
    'jsonl'
    >>> detect_records_format(b'[{"query_id": "q1"}]')  # one JSON document
    'json'
    >>> detect_records_format(b"query_id\\tanswer\\nq1\\tyes\\n")  # a tab in the first line
    'tsv'
    """
    ext = os.path.splitext(name.lower())[1]
    by_ext = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
              ".parquet": "parquet", ".pq": "parquet"}
    if ext in by_ext:
        return by_ext[ext]
    head = bytes(data[:65536])
    if head[:4] == b"PAR1":
        return "parquet"
    stripped = head.lstrip()
    if stripped[:1] == b"[" or (stripped[:1] == b"{" and b"\n{" not in stripped):
        return "json"
    if stripped[:1] == b"{":
        return "jsonl"
    first = stripped.split(b"\n", 1)[0]
    return "tsv" if b"\t" in first else "csv"


def read_records(path_or_buffer: PathOrBuffer, format: str | None = None, *, source_name: str | None = None,
                 system: str | None = None, failure_stages: Sequence[str] = FAILURE_STAGES,
                 limits: ReadLimits | None = None, isolate: bool = False) -> Records:
    """Read per-request records (docs/records.md) from JSONL, JSON, CSV/TSV or Parquet.

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file (gzip detected and decompressed).
    format : {"jsonl", "json", "csv", "tsv", "parquet"} or None
        None detects it from the extension, then the content.
    source_name : str, optional
        Name to show in messages (defaults to the file name).
    system : str, optional
        System name for records without a ``system`` field (default: the file name's stem).
    failure_stages : sequence of str
        Allowed ``failure_stage`` labels (matched case-insensitively).
    limits : ReadLimits, optional
        Bytes, lines, line length, columns, JSON nesting and integer digits the file may have;
        with a time or memory bound the file is read in a worker process (as ``isolate``).
    isolate : bool
        Parse in a worker process with a time and memory cap (as the dashboard does); see
        :func:`evalsuite.io.isolation.read_isolated`.

    Returns
    -------
    Records
        One row per record, in canonical fields (see :class:`Records`).

    Raises
    ------
    EvalSuiteError
        Naming the file, line (row for Parquet), field and value: a judgement list whose
        length differs from ``contexts``, a grade outside 0..1, an unknown failure stage, a
        latency that is not a finite number >= 0, malformed JSON, a list field in CSV that is
        not a JSON list, a repeated (system, query_id), an empty file, a file past ``limits``;
        with ``isolate``, a parse that crashed or ran out of time or memory
        (:class:`evalsuite.ReaderStopped`).

    References
    ----------
    Column names of RAGAS exports (0.1: question, answer, contexts, ground_truth; >= 0.2:
    user_input, response, retrieved_contexts, reference), DeepEval's ``LLMTestCase`` and
    RAGChecker's input JSON are mapped to the canonical fields (:data:`ALIASES`,
    ``docs/records.md``).

    Examples
    --------
    >>> records = read_records(b'{"query_id": "q1", "system": "rag", "latency_ms": 120}\\n', format="jsonl")
    >>> records.systems, len(records)
    (['rag'], 1)
    """
    if isolate or check_limits(limits).bounded:
        from .isolation import read_isolated

        return read_isolated("records", path_or_buffer, source_name, format=format, limits=limits, system=system,
                             failure_stages=tuple(failure_stages))
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        return _read_records(path_or_buffer, format, source_name, system, failure_stages, check_limits(limits))


def _read_records(path_or_buffer, format, source_name, system, failure_stages, limits: ReadLimits) -> Records:
    inp = _load(path_or_buffer, source_name, limits)
    if inp.size == 0:
        raise EvalSuiteError("the file is empty", source=inp.name)
    fmt = format.lower() if isinstance(format, str) else detect_records_format(inp.head, inp.ext_name)
    if fmt not in _RECORD_FORMATS:
        raise EvalSuiteError(f"unknown records format; use one of {', '.join(_RECORD_FORMATS)}", field="format", value=format)
    if fmt in ("csv", "json", "jsonl") and detect_latency_table(inp.head, inp.ext_name) is not None:
        raise EvalSuiteError("a latency percentile table (a summary of requests per system and stage), not "
                             "per-request records: read it with read_latency_table (the Data page shows it on the "
                             "Latency page beside the percentiles computed from the requests)", source=inp.name,
                             field="format", value=detect_latency_table(inp.head, inp.ext_name))
    try:
        check_input(inp, fmt, limits)
        if fmt == "jsonl":
            records = _read_jsonl(inp, system, failure_stages, limits)
        elif fmt == "json":
            records = _read_json(inp, system, failure_stages, limits)
        elif fmt == "parquet":
            records = _read_parquet(inp, system, failure_stages, limits)
        else:
            records = _read_delimited(inp, "," if fmt == "csv" else "\t", system, failure_stages, limits)
        percentiles = percentile_columns(records.extra_columns)
        if len(percentiles) >= 2:
            records.warnings.append(f"the file has percentile columns ({', '.join(percentiles[:6])}) as well as "
                                    "per-request fields: read as per-request records, one per row; the percentile "
                                    "columns are kept, not used (a percentile table has no per-request fields)")
        if {"context.trace_id", "parent_id"} <= set(records.extra_columns):
            records.warnings.append("this looks like Phoenix's spans export: read as one record per span; "
                                    "read_traces makes one record per trace (the Data page does)")
        return records
    except UnicodeEncodeError as exc:
        raise not_unicode_error(exc, inp.name) from None
    except UnicodeDecodeError as exc:
        raw = inp.data
        raise EvalSuiteError(f"bytes that are not UTF-8 text ({exc.reason}); save the file as UTF-8", source=inp.name,
                             line=raw.count(b"\n", 0, exc.start) + 1, field="bytes", value=raw[exc.start:exc.end]) from None


# ----------------------------------------------------------------------------------------------
# Writing records files.


OUTPUT_SUFFIXES = (".parquet", ".pq", ".jsonl", ".ndjson")


def check_output(path: str | os.PathLike, *, inputs: Sequence = (), force: bool = False) -> Path:
    """Refuse, before any work, an output path :func:`write_records` would refuse: an extension it
    cannot write, an input of the command (by path or inode, ``force`` or not), an existing file
    without ``force`` (:func:`evalsuite.io.output_files.check_output_path`).

    Parameters
    ----------
    path : str or PathLike
    inputs : sequence
        The files the command reads (paths; others are ignored).
    force : bool
        Replace an existing file that is not an input.

    Returns
    -------
    Path

    Raises
    ------
    EvalSuiteError
        Naming the path and field ``output``.

    Examples
    --------
    >>> check_output("judged.csv")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: judged.csv, field 'output': the output must end in .parquet or .jsonl
    """
    if isinstance(path, (str, os.PathLike)) and Path(path).suffix.lower() not in OUTPUT_SUFFIXES:
        raise EvalSuiteError("the output must end in .parquet or .jsonl", source=str(path), field="output")
    return check_output_path(path, inputs=inputs, force=force)


def write_records(records, path: str | os.PathLike, *, inputs: Sequence = (), force: bool = False) -> None:
    """Write records as Parquet (``.parquet``/``.pq``) or JSONL (``.jsonl``) that ``read_records`` reads back.

    The file is written beside ``path`` under a temporary name and renamed into place
    (:func:`evalsuite.io.output_files.atomic_output`): an interrupted write leaves no half file,
    an input is never written over, an existing file only with ``force``.

    Parameters
    ----------
    records : evalsuite.Records
    path : path
        The output file; its extension picks the format.
    inputs : sequence
        The files the records came from (paths): ``path`` must be none of them.
    force : bool
        Replace an existing file (never an input).

    Raises
    ------
    EvalSuiteError
        Another extension, an input, an existing file without ``force``, or a file that cannot be
        written.

    Examples
    --------
    >>> import tempfile, os, evalsuite as es
    >>> records = es.Records.from_rows([{"query_id": "q1", "relevant_ids": {"d1": 2}, "latency_ms": 5}])
    >>> path = os.path.join(tempfile.mkdtemp(), "judged.parquet")
    >>> write_records(records, path)
    >>> es.read_records(path).table.column("relevant_grades").to_pylist()  # the grades survive the round trip
    [[2.0]]
    >>> write_records(records, path)
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: ...judged.parquet, field 'output': the output exists already; pass --force (force=True) to replace it, or choose another name
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = check_output(path, inputs=inputs, force=force)
    table = records.table
    if "relevant_grades" in table.column_names:  # back to the one relevant_ids field of the schema
        ids, grades = table.column("relevant_ids").to_pylist(), table.column("relevant_grades").to_pylist()
        graded = any(g is not None and any(x != 1.0 for x in g) for g in grades)
        values = [None if i is None else (dict(zip(i, g)) if graded else i) for i, g in zip(ids, grades)]
        table = table.drop_columns(["relevant_grades"]).set_column(
            table.column_names.index("relevant_ids"), "relevant_ids", pa.array(values))
    suffix = target.suffix.lower()
    with atomic_output(target, inputs=inputs, force=force) as temporary:
        if suffix in (".parquet", ".pq"):
            pq.write_table(table, temporary)
        else:
            with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
                for row in table.to_pylist():
                    handle.write(json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n")
