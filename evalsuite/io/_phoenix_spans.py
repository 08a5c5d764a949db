"""Phoenix's spans export (the spans dataframe of ``get_spans_dataframe`` or ``TraceDataset``, saved
by pandas as Parquet, CSV or JSONL) as :class:`~evalsuite.records.traces.Span` objects, within the
limits of :class:`~evalsuite.io.limits.ReadLimits`. Used by :func:`evalsuite.io.traces.read_traces`."""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from datetime import datetime, timezone

from ..errors import EvalSuiteError
from ..records.traces import Span
from ._lines import csv_error, long_csv_fields
from ._reading import decode_or_explain, jsonl_rows, open_parquet, read_parquet_table, repeated_name
from ._span_values import _Bad, _hex_id, _kind, _spans_error, _status
from .limits import ReadLimits, check_columns, check_rows, check_text, json_depth_error




def _python_literal(text: str):
    """A Python repr of lists, dicts and plain values (pandas writes list and dict cells so), read
    without evaluating anything; None if it is not one."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    allowed = (ast.Expression, ast.List, ast.Tuple, ast.Dict, ast.Constant, ast.UnaryOp, ast.USub, ast.UAdd,
               ast.Load)
    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in ("nan", "None", "True", "False"):
                continue
            if not isinstance(node, allowed):
                return None
        source = ast.unparse(tree) if any(isinstance(n, ast.Name) for n in ast.walk(tree)) else None
    except RecursionError:
        return None
    if source is not None:  # nan as None: literal_eval knows no names but None/True/False
        tree = ast.parse(re.sub(r"\bnan\b", "None", source), mode="eval")
    try:
        return ast.literal_eval(tree)
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None


def _flatten(prefix: str, value, out: dict) -> None:
    """Nested values (Phoenix unflattens attributes) back to OpenInference's flat keys."""
    if isinstance(value, dict) and prefix != "metadata":
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}", inner, out)
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for i, inner in enumerate(value):
            _flatten(f"{prefix}.{i}", inner, out)
    elif value is not None:
        out[prefix] = value


def _epoch_ns(value, field_name: str) -> int:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+", text):
            value = int(text)
        else:
            try:
                return _epoch_ns(datetime.fromisoformat(text.replace("Z", "+00:00")), field_name)
            except ValueError:
                raise _Bad(field_name, value, "must be a time (ISO 8601, or a number since the epoch)") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Bad(field_name, value, "must be a time (ISO 8601, or a number since the epoch)")
    # pandas' to_json writes epoch milliseconds by default; other units by size.
    for bound, factor in ((10**17, 1), (10**14, 1000), (10**11, 1_000_000), (0, 1_000_000_000)):
        if value >= bound:
            return min(value * factor, 2**64 - 1)
    return value


def _phoenix_cell(value):
    if isinstance(value, str) and value[:1] in ("[", "{"):
        parsed = _python_literal(value)
        if parsed is None:
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                return value
        return parsed
    return value


def _phoenix_span(row: dict, line: int) -> Span:
    span_id_cell = row.get("context.span_id")
    span_id = _hex_id(span_id_cell, "context.span_id", 8)
    try:
        attributes: dict = {}
        for key, value in row.items():
            if value is None or value == "" or (isinstance(value, float) and value != value):
                continue
            if key.startswith("attributes."):
                _flatten(key[len("attributes."):], _phoenix_cell(value), attributes)
            elif key.startswith("eval."):
                attributes[key] = value
        metadata = attributes.get("metadata")
        if isinstance(metadata, str):
            attributes["metadata"] = _phoenix_cell(metadata)
        events = []
        for event in _phoenix_cell(row.get("events")) or []:
            if isinstance(event, dict):
                inner = event.get("attributes")
                events.append((str(event.get("name") or ""), inner if isinstance(inner, dict) else {}))
        name = row.get("name")
        return Span(_hex_id(row.get("context.trace_id"), "context.trace_id", 16), span_id,
                    _hex_id(row.get("parent_id"), "parent_id", 8, required=False),
                    name if isinstance(name, str) else "", _kind(attributes, row.get("span_kind")),
                    _epoch_ns(row.get("start_time"), "start_time"), _epoch_ns(row.get("end_time"), "end_time"),
                    _status(row.get("status_code"), "status_code"), str(row.get("status_message") or ""),
                    attributes, events, {}, line)
    except _Bad as exc:
        exc.span_id = span_id
        raise


def _phoenix_rows(inp, limits: ReadLimits) -> tuple[list[dict], list[int], str]:
    data = inp.data
    if data[:4] == b"PAR1":
        import pyarrow as pa

        table = read_parquet_table(open_parquet(data, limits, inp.name), inp.name, data=data, limits=limits)
        for name in ("start_time", "end_time"):
            if name in table.column_names and pa.types.is_timestamp(table.schema.field(name).type):
                column = table.column(name).cast(pa.timestamp("ns", tz="UTC")).cast(pa.int64())
                table = table.set_column(table.column_names.index(name), name, column)
        rows = table.to_pylist()
        return rows, list(range(1, len(rows) + 1)), "row"
    check_text(data, limits, inp.name, lines=True)
    if data.lstrip()[:1] == b"{":
        error = json_depth_error(data, limits, inp.name, per_line=True)
        if error is not None:
            raise error
        rows, lines = jsonl_rows(data, limits, inp.name)
        return rows, lines, "line"
    text = decode_or_explain(data, inp.name)
    reader = csv.reader(io.StringIO(text, newline=""))
    with long_csv_fields():
        try:
            header = [h.strip() for h in next(reader, [])]
            check_columns(len(header), limits, inp.name, line=1)
            if len(header) > 1 and header[0] in header[1:]:  # to_csv wrote the index (context.span_id) first
                header[0] = "\x00index"
            repeated = repeated_name(header)
            if repeated is not None:
                raise EvalSuiteError(f"the header names column {repeated!r} more than once", source=inp.name, line=1,
                                     field="header", value=repeated)
            rows, lines = [], []
            for cells in reader:
                if not cells or all(not c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(cells)}",
                                         source=inp.name, line=reader.line_num, field="columns")
                rows.append(dict(zip(header, cells)))
                lines.append(reader.line_num)
                check_rows(len(rows), limits, inp.name, "rows")
        except csv.Error as exc:
            raise csv_error(exc, inp.name, max(reader.line_num, 1)) from None
    return rows, lines, "line"


def phoenix_spans(inp, limits: ReadLimits) -> tuple[list[Span], str]:
    rows, lines, label = _phoenix_rows(inp, limits)
    spans = []
    for row, line in zip(rows, lines):
        if not isinstance(row, dict):
            raise EvalSuiteError("each span must be an object", source=inp.name, line=line, field="span", value=row)
        missing = [c for c in ("context.span_id", "context.trace_id", "start_time", "end_time") if c not in row]
        if missing:
            raise EvalSuiteError(f"not a Phoenix spans export: no {', '.join(missing)} column", source=inp.name,
                                 line=line, field=missing[0], line_label=label)
        try:
            spans.append(_phoenix_span(row, line))
        except _Bad as exc:
            raise _spans_error(exc, inp.name, line, getattr(exc, "span_id", None), label) from None
    return spans, label
