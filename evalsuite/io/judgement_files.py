"""Judgement tables and human-label files read like every other file: the shared reader (limits,
gzip, format detection, the JSON and Parquet primitives, the id rule), in the isolated reader
pool when asked, every problem an EvalSuiteError naming file, line, field and value.

A judgement table has one row per judged item (columns in :data:`JUDGEMENT_COLUMNS`; see
:mod:`evalsuite.stats.judgement_tables`, which turns what is read here into a data frame and
works with it). This module reads and validates; it knows nothing of agreement or PPI.

Labels (``judge_label``, ``human_label``) must be 1/0, true/false, yes/no (ARES's ``[[Yes]]`` and
``[[No]]`` too) or empty (not labelled); anything else, ``nan`` and ``maybe`` included, is an
error naming the line and value: a label that is read as "not labelled" by accident silently
changes every agreement figure and interval.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ..errors import EvalSuiteError, not_unicode_error, reading_errors
from ..utils.ids import trim_id
from ._lines import csv_error, long_csv_fields
from ._reading import (
    _NUMBER, PathOrBuffer, _load, _shown_name, check_input, decode_or_explain, finite_number, json_load, jsonl_rows,
    open_parquet, read_parquet_table, repeated_name,
)
from .judgement_table import JUDGEMENT_COLUMNS, JudgementTable
from .limits import ReadLimits, check_columns, check_limits, check_rows

__all__ = ["JUDGEMENT_COLUMNS", "JudgementTable", "read_judgement_table", "JUDGEMENT_FORMATS", "label_value"]

JUDGEMENT_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")
_ID_COLUMNS = ("query_id", "system", "judgement", "judge")
_LABEL_COLUMNS = ("judge_label", "human_label")
_SCORE_COLUMNS = ("judge_score", "human_score")
_KEYS = ("query_id", "system", "judgement", "item")
# What a file of each role needs: the id, and one of two value columns.
_NEEDS = {"judgements": ("judge_label", "judge_score"), "labels": ("human_label", "human_score")}
# A label file may say who labelled (the Label page's export): two labellers' labels of one record
# are two rows, so the labeller is part of the key.
_LABELLER = "labeller"


def _known_columns(role: str) -> tuple[str, ...]:
    return JUDGEMENT_COLUMNS + ((_LABELLER,) if role == "labels" else ())
_TRUE = frozenset(("1", "1.0", "true", "yes", "[[yes]]"))
_FALSE = frozenset(("0", "0.0", "false", "no", "[[no]]"))
_BLANK = " \t\r\n\x0b\x0c"


def _label(value, source, line, name, label_word: str):
    if isinstance(value, np.generic):  # numpy's bool, int or float (lists of a data frame's cells)
        value = value.item()
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        if value in (0, 1):
            return float(value)
        if isinstance(value, float) and math.isnan(value):
            return math.nan  # a binary format's missing float (pandas writes NaN to Parquet)
    elif isinstance(value, str):
        text = value.strip(_BLANK).lower()
        if text == "":
            return math.nan
        if text in _TRUE:
            return 1.0
        if text in _FALSE:
            return 0.0
    raise EvalSuiteError(f"a {label_word} must be 1/0, true/false or yes/no (empty = not labelled)", source=source,
                         line=line, field=name, value=value)


def label_value(value, source: str | None = None, line: int | None = None, name: str | None = None) -> float:
    """A label as a number: 1.0 (1, true, yes, ``[[Yes]]``), 0.0 (0, false, no, ``[[No]]``) or NaN
    (None, an empty text: not labelled); anything else is an EvalSuiteError naming ``source``,
    ``line``, ``name`` and the value.

    Examples
    --------
    >>> label_value("Yes"), label_value(0), label_value(None)
    (1.0, 0.0, nan)
    >>> label_value("nan", "labels.csv", 3, "human_label")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: labels.csv, line 3, field 'human_label', value 'nan': a label must be 1/0, true/false or yes/no (empty = not labelled)
    """
    return _label(value, source, line, name, "label")


def _score(value, source, line, name):
    if value is None:
        return math.nan
    if isinstance(value, str):
        text = value.strip(_BLANK)
        if text == "" or text.lower() in ("nan", "null", "none", "na"):
            return math.nan
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return number
        raise EvalSuiteError("a score must be a finite number (empty = none)", source=source, line=line, field=name,
                             value=value)
    number = finite_number(float(value) if isinstance(value, bool) else value)
    if number is None:
        if isinstance(value, float) and math.isnan(value):
            return math.nan  # Parquet's missing float
        raise EvalSuiteError("a score must be a finite number (empty = none)", source=source, line=line, field=name,
                             value=value)
    return number


def _item(value, source, line):
    if value is None or (isinstance(value, str) and not value.strip(_BLANK)):
        return 0
    number = None
    if isinstance(value, str):
        text = value.strip(_BLANK)
        if _NUMBER.fullmatch(text) and len(text) <= 20:
            number = float(text)
    elif not isinstance(value, bool) and isinstance(value, (int, float)):
        number = finite_number(value)
    if number is None or number < 0 or number != int(number) or number >= 2**53:
        raise EvalSuiteError("item must be a whole number >= 0 (the claim, chunk or statement index)", source=source,
                             line=line, field="item", value=value)
    return int(number)


def _id(value, source, line, name, required: bool) -> str:
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = trim_id(value)  # the one id rule of every format (evalsuite.utils.ids)
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    else:
        raise EvalSuiteError("expected a string id", source=source, line=line, field=name, value=value)
    if required and not text:
        raise EvalSuiteError("a value is required", source=source, line=line, field=name, value=value,
                             has_value=True)
    return text


def _columns_of(names: Sequence[str], role: str, source: str, line_label: str) -> tuple[list[str], list[str]]:
    """(the judgement columns present, the columns not used); an error when a needed one is missing."""
    present = [c for c in _known_columns(role) if c in names]
    if "query_id" not in present:
        raise EvalSuiteError(f"a column 'query_id' is required (columns found: {', '.join(sorted(map(str, names)))})",
                             source=source, line=1, field="query_id", line_label=line_label)
    first, second = _NEEDS[role]
    if first not in present and second not in present:
        raise EvalSuiteError(f"a {first} or {second} column is required", source=source, line=1, field=first,
                             line_label=line_label)
    return present, [str(c) for c in names if c not in _known_columns(role)]


def _table(rows: list[dict], lines: list[int | None], names: Sequence[str], role: str, source: str,
           line_label: str, limits: ReadLimits) -> JudgementTable:
    if not rows:
        raise EvalSuiteError("the file has no data rows", source=source)
    check_rows(len(rows), limits, source, "rows")
    present, unused = _columns_of(names, role, source, line_label)
    columns: dict[str, list] = {"line": list(lines)}
    for name in present:
        columns[name] = []
    for row, line in zip(rows, lines):
        for name in present:
            value = row.get(name)
            where = (source, line, name)
            if name in _ID_COLUMNS or name == _LABELLER:
                columns[name].append(_id(value, *where, required=name == "query_id"))
            elif name == "item":
                columns[name].append(_item(value, source, line))
            elif name in _LABEL_COLUMNS:
                columns[name].append(_label(value, *where, "label"))
            else:
                columns[name].append(_score(value, *where))
    types = {"line": pa.int64(), "item": pa.int64(), **{c: pa.string() for c in (*_ID_COLUMNS, _LABELLER)},
             **{c: pa.float64() for c in (*_LABEL_COLUMNS, *_SCORE_COLUMNS)}}
    # from_pandas: a missing score or label (NaN here) is stored as null, NaN again in a data frame.
    table = pa.table({name: pa.array(values, types[name], from_pandas=True) for name, values in columns.items()})
    _check_unique(columns, present, role, source, line_label)
    warnings = [f"columns not used: {', '.join(unused)}"] if unused else []
    return JudgementTable(table, source, role, warnings)


def _check_unique(columns: dict, present: list[str], role: str, source: str, line_label: str) -> None:
    """A key (query_id, system, judgement, item, and the judge for a judgement table) given twice is
    an error naming the second line."""
    keys = [k for k in _KEYS if k in present]
    if role == "judgements" and "judge" in present:
        keys.append("judge")
    if role == "labels" and _LABELLER in present:
        keys.append(_LABELLER)
    seen: dict[tuple, int | None] = {}
    for i, key in enumerate(zip(*(columns[k] for k in keys))):
        if key in seen:
            shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, key))
            raise EvalSuiteError(f"this {shown} appears twice (first on {line_label} {seen[key]})", source=source,
                                 line=columns["line"][i], field=keys[0], value=key[0], line_label=line_label)
        seen[key] = columns["line"][i]


# ----------------------------------------------------------------------------------------------
# Formats.


def _delimited(inp, delimiter: str, role: str, limits: ReadLimits) -> JudgementTable:
    text = decode_or_explain(inp.data, inp.name)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows, lines = [], []
    with long_csv_fields():
        try:
            header = next(reader, None)
            if not header or not any(h.strip() for h in header):
                raise EvalSuiteError("the file is empty", source=inp.name)
            header = [h.strip() for h in header]
            check_columns(len(header), limits, inp.name, line=1)
            repeated = repeated_name(header)
            if repeated is not None:
                raise EvalSuiteError(f"the header names column {repeated!r} more than once", source=inp.name, line=1,
                                     field="header", value=delimiter.join(header))
            for values in reader:
                line = reader.line_num
                if not any(v.strip(_BLANK) for v in values):
                    continue
                if len(values) != len(header):
                    raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(values)}",
                                         source=inp.name, line=line, field="columns", value=delimiter.join(values))
                rows.append(dict(zip(header, values)))
                lines.append(line)
        except csv.Error as exc:
            raise csv_error(exc, inp.name, max(reader.line_num, 1)) from None
    return _table(rows, lines, header, role, inp.name, "line", limits)


def _names_of(rows: list, source: str, line_of, limits: ReadLimits) -> list[str]:
    names: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise EvalSuiteError("each row must be a JSON object", source=source, line=line_of(i), field="json",
                                 value=row)
        names.update(dict.fromkeys(row))
        if len(names) > limits.max_columns:
            check_columns(len(names), limits, source, line=line_of(i))
    return list(names)


def _jsonl(inp, role: str, limits: ReadLimits) -> JudgementTable:
    rows, lines = jsonl_rows(inp.data, limits, inp.name)
    names = _names_of(rows, inp.name, lambda i: lines[i], limits)
    return _table(rows, lines, names, role, inp.name, "line", limits)


def _json(inp, role: str, limits: ReadLimits) -> JudgementTable:
    text = decode_or_explain(inp.data, inp.name)
    if not text.strip():
        raise EvalSuiteError("the file is empty", source=inp.name)
    document = json_load(text, inp.name, limits=limits)
    if isinstance(document, dict):
        document = [document]  # one object: a JSONL file of one line is also a JSON document
    if not isinstance(document, list):
        raise EvalSuiteError("expected a JSON list of row objects", source=inp.name, field="json",
                             value=type(document).__name__)
    check_rows(len(document), limits, inp.name, "items")
    names = _names_of(document, inp.name, lambda i: i + 1, limits)
    return _table(document, list(range(1, len(document) + 1)), names, role, inp.name, "item", limits)


def _parquet(inp, role: str, limits: ReadLimits) -> JudgementTable:
    parquet = open_parquet(inp.data, limits, inp.name)
    names = parquet.schema_arrow.names
    used = [c for c in _known_columns(role) if c in names]
    _columns_of(names, role, inp.name, "row")
    table = read_parquet_table(parquet, inp.name, used, data=inp.data, limits=limits)
    rows = table.to_pylist()
    result = _table(rows, list(range(1, len(rows) + 1)), names, role, inp.name, "row", limits)
    return result


_READERS = {"csv": lambda inp, role, limits: _delimited(inp, ",", role, limits),
            "tsv": lambda inp, role, limits: _delimited(inp, "\t", role, limits),
            "jsonl": _jsonl, "json": _json, "parquet": _parquet}


def _detect(head: bytes, name: str) -> str:
    """The format by extension, else by content: Parquet magic, ``[`` JSON, ``{`` JSONL (one object
    per line; a single object reads the same either way), a tab in the first line TSV, else CSV."""
    import os

    ext = os.path.splitext(name.lower())[1]
    by_ext = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
              ".parquet": "parquet", ".pq": "parquet"}
    if ext in by_ext:
        return by_ext[ext]
    if head[:4] == b"PAR1":
        return "parquet"
    stripped = bytes(head).lstrip()
    if stripped[:1] == b"[":
        return "json"
    if stripped[:1] == b"{":
        return "jsonl"
    return "tsv" if b"\t" in stripped.split(b"\n", 1)[0] else "csv"


def read_judgement_table(path_or_buffer: PathOrBuffer, *, role: str = "judgements", format: str | None = None,
                         source_name: str | None = None, limits: ReadLimits | None = None,
                         isolate: bool = False) -> JudgementTable:
    """Read a judgement table or a file of human labels: CSV, TSV, JSONL, JSON or Parquet (gzip too).

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
    role : {"judgements", "labels"}
        A judgement table needs ``query_id`` and ``judge_label`` or ``judge_score``, and a key
        (query_id, system, judgement, item, judge) given once; a label file ``query_id`` and
        ``human_label`` or ``human_score``, its key the columns of query_id, system, judgement and
        item it has.
    format : {"csv", "tsv", "jsonl", "json", "parquet"} or None
        None: by extension, else by content.
    source_name : str, optional
        Name in messages (default: the file's name).
    limits : ReadLimits, optional
        The limits every reader checks (size after decompression, rows, line length, columns,
        JSON nesting, integer digits); a time or memory bound reads in a worker process.
    isolate : bool
        Read in a worker process of the reader pool (as the dashboard does).

    Returns
    -------
    JudgementTable

    Raises
    ------
    EvalSuiteError
        Naming file, line (row for Parquet), field and value: a needed column missing, a label
        that is not 1/0, true/false, yes/no or empty, a score that is not a finite number, an item
        that is not a whole number >= 0, an id that is not text, a key given twice, a file past
        ``limits``; with ``isolate``, a reader stopped (:class:`evalsuite.ReaderStopped`).

    References
    ----------
    The layout follows ARES's labelled TSV files (one row per query/passage/answer with
    ``[[Yes]]``/``[[No]]`` labels), made long so any judgement type fits.

    Examples
    --------
    >>> t = read_judgement_table(b"query_id,judge_label,human_label\\nq1,1,yes\\nq2,0,\\n", source_name="t.csv")
    >>> t.table.column("human_label").to_pylist(), t.table.column("line").to_pylist()
    ([1.0, None], [2, 3])
    >>> read_judgement_table(b"query_id,judge_label,human_label\\nq1,1,maybe\\n", source_name="t.csv")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: t.csv, line 2, field 'human_label', value 'maybe': a label must be 1/0, true/false or yes/no (empty = not labelled)
    """
    if role not in _NEEDS:
        raise EvalSuiteError("role is 'judgements' or 'labels'", field="role", value=role)
    if isolate or check_limits(limits).bounded:
        from .isolation import read_isolated

        return read_isolated("judgements", path_or_buffer, source_name, format=format, limits=limits, role=role)
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        limits = check_limits(limits)
        inp = _load(path_or_buffer, source_name, limits)
        if inp.size == 0:
            raise EvalSuiteError("the file is empty", source=inp.name)
        fmt = format.lower() if isinstance(format, str) else _detect(inp.head, inp.ext_name)
        if fmt not in JUDGEMENT_FORMATS:
            raise EvalSuiteError(f"unknown format; use one of {', '.join(JUDGEMENT_FORMATS)}", field="format",
                                 value=format)
        check_input(inp, fmt, limits)
        try:
            return _READERS[fmt](inp, role, limits)
        except UnicodeEncodeError as exc:
            raise not_unicode_error(exc, inp.name) from None
