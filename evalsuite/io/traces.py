"""Trace files to per-request records: OTLP JSON (the OpenTelemetry Collector's file exporter: one
``ExportTraceServiceRequest`` per line, gzip too), OTLP protobuf (the same messages, length-prefixed
as the file exporter writes ``format: proto``, or one message as an OTLP/HTTP body; needs
``opentelemetry-proto``) and Phoenix's spans export (the spans dataframe saved as Parquet, CSV or
JSONL). Spans are parsed here into :class:`~evalsuite.records.traces.Span` objects; the records
are built by :func:`evalsuite.records.traces.records_from_spans` (docs/records.md, "Records from
traces"). Every file goes through the limits of :class:`~evalsuite.io.limits.ReadLimits`, and
``isolate=True`` reads in the worker pool of :mod:`~evalsuite.io.isolation`.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping, Sequence

from ..errors import EvalSuiteError, reading_errors
from ..metrics.operational import FAILURE_STAGES
from ..records.traces import Span, records_from_spans
from ._phoenix_spans import phoenix_spans
from ._reading import PathOrBuffer, _load, _shown_name, decode_or_explain, json_load
from ._span_values import _Bad, _hex_id, _kind, _nanos, _spans_error, _status
from .limits import ReadLimits, check_limits, check_rows, check_text, json_depth_error

__all__ = ["read_traces", "detect_traces_format", "TRACE_FORMATS"]

TRACE_FORMATS = ("otlp-json", "otlp-proto", "phoenix")
_PHOENIX_COLUMNS = (b"context.span_id", b"context.trace_id", b"parent_id")


# ----------------------------------------------------------------------------------------------
# Which files are traces.


def _parquet_footer(data: bytes, limit: int = 16 << 20) -> bytes:
    """The footer of a Parquet file (where its column names are), without parsing it."""
    if len(data) < 12 or data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        return b""
    size = int.from_bytes(data[-8:-4], "little")
    return bytes(data[max(4, len(data) - 8 - min(size, limit)):-8])


def _proto_framing(data: bytes) -> str | None:
    """"prefixed" (4-byte big-endian length before each message), "single" (one message), or None.

    An ``ExportTraceServiceRequest`` starts with field 1 (resource_spans), length-delimited:
    the byte 0x0A.
    """
    if len(data) >= 6 and data[4] == 0x0A and int.from_bytes(data[:4], "big") + 4 <= len(data):
        return "prefixed"
    if len(data) >= 2 and data[0] == 0x0A:
        return "single"
    return None


def detect_traces_format(data: bytes, name: str = "") -> str | None:
    """The trace format of a file's (decompressed) content, or None when it is not a trace file.

    Parameters
    ----------
    data : bytes
        The content, or its start (64 KiB are enough for OTLP and Phoenix CSV/JSONL; Phoenix
        Parquet needs the end of the file, where Parquet keeps its column names).
    name : str
        The file name (``.pb``/``.binpb``/``.otlp`` name protobuf when the bytes agree).

    Returns
    -------
    str or None
        "otlp-json": a JSON object whose first key is ``resourceSpans``; "otlp-proto": bytes framed
        as OTLP messages; "phoenix": a table with Phoenix's span columns (``context.span_id``,
        ``context.trace_id``, ``parent_id``); None otherwise. Only bytes are compared (no parser
        runs on them).

    Examples
    --------
    >>> detect_traces_format(b'{"resourceSpans":[{"resource":{},"scopeSpans":[]}]}\\n')
    'otlp-json'
    >>> detect_traces_format(b"name,span_kind,parent_id,context.span_id,context.trace_id\\n")
    'phoenix'
    >>> detect_traces_format(b'{"query_id": "q1"}\\n') is None
    True
    """
    head = bytes(data[:65536])
    stripped = head.lstrip()
    if stripped[:1] == b"{":
        if re.match(rb'\{\s*"(resourceSpans|resource_spans)"', stripped):
            return "otlp-json"
        first_line = stripped.split(b"\n", 1)[0]
        if all(column in first_line for column in _PHOENIX_COLUMNS):
            return "phoenix"
        return None
    if head[:4] == b"PAR1":
        footer = _parquet_footer(data)
        return "phoenix" if all(column in footer for column in _PHOENIX_COLUMNS) else None
    first_line = head.split(b"\n", 1)[0]
    if all(column in first_line for column in _PHOENIX_COLUMNS) and b"," in first_line:
        return "phoenix"
    framing = _proto_framing(head)
    ext = os.path.splitext(name.lower())[1]
    if framing == "prefixed" or (framing == "single" and ext in (".pb", ".binpb", ".otlp", ".proto", "")):
        return "otlp-proto"
    return None


# ----------------------------------------------------------------------------------------------
# OTLP JSON.


def _get(node: dict, camel: str):
    """A field of an OTLP/JSON object: lowerCamelCase as the spec writes it, snake_case accepted."""
    if camel in node:
        return node[camel]
    return node.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def _any_value(node, field_name: str):
    """An OTLP ``AnyValue`` object as a Python value."""
    if node is None or node == {}:
        return None
    if not isinstance(node, dict) or len(node) != 1:
        raise _Bad(field_name, node, "an attribute value must be an object with one of stringValue, boolValue, "
                                     "intValue, doubleValue, arrayValue, kvlistValue, bytesValue")
    (key, value), = node.items()
    if key in ("stringValue", "string_value"):
        if not isinstance(value, str):
            raise _Bad(field_name, value, "stringValue must be a string")
        return value
    if key in ("boolValue", "bool_value"):
        if not isinstance(value, bool):
            raise _Bad(field_name, value, "boolValue must be true or false")
        return value
    if key in ("intValue", "int_value"):
        if isinstance(value, str) and re.fullmatch(r"-?\d{1,19}", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not -2**63 <= value < 2**63:
            raise _Bad(field_name, value, "intValue must be a 64-bit whole number")
        return value
    if key in ("doubleValue", "double_value"):
        if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
            return float(value.replace("Infinity", "inf"))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Bad(field_name, value, "doubleValue must be a number")
        return float(value)
    if key in ("arrayValue", "array_value"):
        values = (value or {}).get("values") if isinstance(value, dict) else None
        if not isinstance(values or [], list):
            raise _Bad(field_name, value, "arrayValue must hold a list of values")
        return [_any_value(v, field_name) for v in values or []]
    if key in ("kvlistValue", "kvlist_value"):
        values = (value or {}).get("values") if isinstance(value, dict) else None
        return _key_values(values or [], field_name)
    if key in ("bytesValue", "bytes_value"):
        if not isinstance(value, str):
            raise _Bad(field_name, value, "bytesValue must be base64 text")
        return value
    raise _Bad(field_name, node, f"unknown attribute value type {key!r}")


def _key_values(items, field_name: str) -> dict:
    if not isinstance(items, list):
        raise _Bad(field_name, items, "attributes must be a list of {key, value} objects")
    out = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise _Bad(field_name, item, "each attribute must be an object with a string key")
        out[item["key"]] = _any_value(item.get("value"), f"{field_name}.{item['key']}")
    return out


def _json_span(node, resource: dict, line: int) -> Span:
    if not isinstance(node, dict):
        raise _Bad("spans", node, "each span must be an object")
    span_id = _hex_id(_get(node, "spanId"), "spanId", 8)
    try:
        trace_id = _hex_id(_get(node, "traceId"), "traceId", 16)
        parent = _hex_id(_get(node, "parentSpanId"), "parentSpanId", 8, required=False)
        start = _nanos(_get(node, "startTimeUnixNano"), "startTimeUnixNano")
        end = _nanos(_get(node, "endTimeUnixNano"), "endTimeUnixNano")
        attributes = _key_values(_get(node, "attributes") or [], "attributes")
        status = _get(node, "status") or {}
        if not isinstance(status, dict):
            raise _Bad("status", status, "status must be an object with a code and a message")
        message = status.get("message") or ""
        events = []
        for event in _get(node, "events") or []:
            if not isinstance(event, dict):
                raise _Bad("events", event, "each event must be an object")
            events.append((str(event.get("name") or ""), _key_values(event.get("attributes") or [], "events")))
        name = node.get("name")
        if name is not None and not isinstance(name, str):
            raise _Bad("name", name, "a span name must be a string")
        return Span(trace_id, span_id, parent, name or "", _kind(attributes), start, end, _status(status.get("code")),
                    message if isinstance(message, str) else str(message), attributes, events, resource, line)
    except _Bad as exc:
        exc.span_id = span_id
        raise


def _request_spans(document, line: int, out: list) -> None:
    """The spans of one ``ExportTraceServiceRequest`` object."""
    if not isinstance(document, dict):
        raise _Bad("resourceSpans", document, "each line must be an ExportTraceServiceRequest object")
    groups = _get(document, "resourceSpans")
    if not isinstance(groups, list):
        raise _Bad("resourceSpans", groups, "an ExportTraceServiceRequest holds a resourceSpans list")
    for group in groups:
        if not isinstance(group, dict):
            raise _Bad("resourceSpans", group, "each resourceSpans entry must be an object")
        resource_node = group.get("resource") or {}
        resource = _key_values(resource_node.get("attributes") or [], "resource.attributes") \
            if isinstance(resource_node, dict) else {}
        scopes = _get(group, "scopeSpans") or _get(group, "instrumentationLibrarySpans") or []
        if not isinstance(scopes, list):
            raise _Bad("scopeSpans", scopes, "scopeSpans must be a list")
        for scope in scopes:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(spans or [], list):
                raise _Bad("spans", spans, "spans must be a list")
            for node in spans or []:
                out.append(_json_span(node, resource, line))


def _otlp_json(inp, limits: ReadLimits) -> list[Span]:
    data = inp.data
    check_text(data, limits, inp.name, lines=True)
    error = json_depth_error(data, limits, inp.name, per_line=True)
    text = decode_or_explain(data, inp.name)
    lines = text.split("\n")
    documents: list[tuple[int, object]] = []
    try:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                if error is not None:
                    raise error
                documents.append((number, json_load(line, inp.name, line_offset=number - 1)))
    except EvalSuiteError:
        # One pretty-printed request (several lines) rather than one request per line.
        whole_error = json_depth_error(data, limits, inp.name, per_line=False)
        if whole_error is not None or len([x for x in lines if x.strip()]) < 2:
            raise
        try:
            documents = [(1, json_load(text, inp.name))]
        except EvalSuiteError:
            raise
    spans: list[Span] = []
    for number, document in documents:
        try:
            _request_spans(document, number, spans)
        except _Bad as exc:
            raise _spans_error(exc, inp.name, number, getattr(exc, "span_id", None), "line") from None
        check_rows(len(spans), limits, inp.name, "spans")
    return spans


# ----------------------------------------------------------------------------------------------
# OTLP protobuf.


def _proto_value(value, field_name: str):
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_proto_value(v, field_name) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _proto_value(kv.value, field_name) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, which)


def _proto_attributes(items, field_name: str) -> dict:
    return {kv.key: _proto_value(kv.value, f"{field_name}.{kv.key}") for kv in items}


def _proto_id(raw: bytes, field_name: str, size: int, required: bool = True) -> str | None:
    if not raw and not required:
        return None
    if len(raw) != size:
        raise _Bad(field_name, raw.hex(), f"must be {size} bytes")
    if raw.strip(b"\x00") == b"":
        if not required:
            return None
        raise _Bad(field_name, raw.hex(), "an id of all zeros is invalid")
    return raw.hex()


def _otlp_proto(inp, limits: ReadLimits) -> list[Span]:
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise EvalSuiteError("reading OTLP protobuf needs the opentelemetry-proto package: pip install "
                             "evalsuite[traces] (or save the traces as OTLP JSON)", source=inp.name) from None
    data = inp.data
    framing = _proto_framing(data)
    bodies: list[bytes] = []
    if framing == "prefixed":
        at = 0
        while at < len(data):
            if len(data) - at < 4:
                raise EvalSuiteError("the file ends inside a message length", source=inp.name, line=len(bodies) + 1,
                                     field="length", line_label="message")
            size = int.from_bytes(data[at:at + 4], "big")
            if at + 4 + size > len(data):
                raise EvalSuiteError(f"message {len(bodies) + 1} says it has {size:,} bytes; the file ends first",
                                     source=inp.name, line=len(bodies) + 1, field="length", value=size,
                                     line_label="message")
            bodies.append(data[at + 4:at + 4 + size])
            at += 4 + size
            check_rows(len(bodies), limits, inp.name, "messages")
    else:
        bodies.append(data)
    spans: list[Span] = []
    for number, body in enumerate(bodies, start=1):
        message = ExportTraceServiceRequest()
        try:
            message.ParseFromString(body)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise EvalSuiteError(f"not an OTLP ExportTraceServiceRequest ({exc})", source=inp.name, line=number,
                                 field="protobuf", line_label="message") from None
        for group in message.resource_spans:
            resource = _proto_attributes(group.resource.attributes, "resource.attributes")
            for scope in group.scope_spans:
                for node in scope.spans:
                    span_id = node.span_id.hex() or None
                    try:
                        span_id = _proto_id(node.span_id, "span_id", 8)
                        attributes = _proto_attributes(node.attributes, "attributes")
                        spans.append(Span(
                            _proto_id(node.trace_id, "trace_id", 16), span_id,
                            _proto_id(node.parent_span_id, "parent_span_id", 8, required=False), node.name,
                            _kind(attributes), node.start_time_unix_nano, node.end_time_unix_nano,
                            _status(node.status.code), node.status.message, attributes,
                            [(e.name, _proto_attributes(e.attributes, "events")) for e in node.events], resource,
                            number))
                    except _Bad as exc:
                        raise _spans_error(exc, inp.name, number, span_id, "message") from None
                    check_rows(len(spans), limits, inp.name, "spans")
    return spans


# ----------------------------------------------------------------------------------------------
# The reader.


def read_traces(path_or_buffer: PathOrBuffer, format: str | None = None, *, source_name: str | None = None,
                system: str | None = None, root_name: str | None = None,
                prices: Mapping[str, Sequence[float]] | None = None, failure_stages: Sequence[str] = FAILURE_STAGES,
                limits: ReadLimits | None = None, isolate: bool = False):
    """Read traces (OpenTelemetry spans with OpenInference attributes) as per-request records.

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file (gzip detected and decompressed).
    format : {"otlp-json", "otlp-proto", "phoenix"} or None
        None detects it from the content (:func:`detect_traces_format`). Phoenix exports may be
        Parquet, CSV or JSONL (told apart by content).
    source_name : str, optional
        Name to show in messages (defaults to the file name).
    system : str, optional
        System of the records whose spans' resource names none (``openinference.project.name``,
        then ``service.name``); default the file name's stem.
    root_name : str, optional
        One record per span of this name instead of one per trace (a trace that holds a whole
        session of requests).
    prices : mapping of str -> (float, float), optional
        Model name (``llm.model_name``) -> price per million prompt and completion tokens; gives
        the ``cost`` column.
    failure_stages : sequence of str
        As :func:`evalsuite.read_records`.
    limits : ReadLimits, optional
        Bytes, lines (spans), line length, columns and JSON nesting the file may have.
    isolate : bool
        Parse in a worker process with a time and memory cap (as the dashboard does).

    Returns
    -------
    Records
        One record per trace (docs/records.md, "Records from traces"); broken traces are
        listed in ``warnings`` and in each record's ``trace_problems``.

    Raises
    ------
    EvalSuiteError
        Naming the file, line (message for protobuf, row for Parquet), span id and field: an id
        that is not hex (or base64) of the right length, a time that is not a whole number of
        nanoseconds, an unknown status code, an attribute value of no OTLP type, malformed JSON
        or protobuf; a file that is not a trace file; a file past ``limits``; with
        ``isolate``, a parse that crashed or ran out of time or memory.

    References
    ----------
    OTLP (opentelemetry-proto, ``trace/v1``; its JSON encoding writes ids as hex), the
    Collector's file exporter, the OpenInference semantic conventions (span kinds,
    ``retrieval.documents``, ``reranker.output_documents``, ``llm.token_count.*``), Phoenix's
    spans dataframe (``context.span_id``, ``parent_id``, ``attributes.*``, ``eval.<name>.score``).

    Examples
    --------
    >>> line = ('{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"rag"}}]},'
    ...         '"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",'
    ...         '"name":"query","startTimeUnixNano":"1000000","endTimeUnixNano":"901000000",'
    ...         '"attributes":[{"key":"input.value","value":{"stringValue":"Why?"}}]}]}]}]}')
    >>> records = read_traces(line.encode())
    >>> records.systems, records.table.column("latency_ms").to_pylist(), records.table.column("question").to_pylist()
    (['rag'], [900.0], ['Why?'])
    """
    if isolate or check_limits(limits).bounded:
        from .isolation import read_isolated

        return read_isolated("traces", path_or_buffer, source_name, format=format, limits=limits, system=system,
                             root_name=root_name, prices=None if prices is None else dict(prices),
                             failure_stages=tuple(failure_stages))
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        limits = check_limits(limits)
        inp = _load(path_or_buffer, source_name, limits)
        if inp.size == 0:
            raise EvalSuiteError("the file is empty", source=inp.name)
        fmt = format.lower() if isinstance(format, str) else detect_traces_format(inp.data, inp.ext_name)
        if fmt is None:
            raise EvalSuiteError("not a trace file: expected OTLP JSON (one ExportTraceServiceRequest per line), "
                                 "OTLP protobuf, or Phoenix's spans export (context.span_id, context.trace_id, "
                                 "parent_id columns)", source=inp.name, field="format")
        if fmt not in TRACE_FORMATS:
            raise EvalSuiteError(f"unknown trace format; use one of {', '.join(TRACE_FORMATS)}", field="format",
                                 value=format)
        label = "line"
        if fmt == "otlp-json":
            spans = _otlp_json(inp, limits)
        elif fmt == "otlp-proto":
            spans, label = _otlp_proto(inp, limits), "message"
        else:
            spans, label = phoenix_spans(inp, limits)
        return records_from_spans(spans, source=inp.name, line_label=label, system=system, root_name=root_name,
                                  prices=prices, failure_stages=failure_stages)
