"""Span values every trace format shares (ids, times, status, kind) and the error a bad one
raises: converted by :mod:`evalsuite.io.traces` to an EvalSuiteError naming the file, line, span
id and field."""

from __future__ import annotations

import base64
import binascii
import re

from ..errors import EvalSuiteError

_HEX_TRACE = re.compile(r"[0-9a-fA-F]{32}")
_HEX_SPAN = re.compile(r"[0-9a-fA-F]{16}")




class _Bad(Exception):
    """A bad value in a span: converted to an EvalSuiteError with the file, line and span id."""

    def __init__(self, field_name: str, value, reason: str) -> None:
        super().__init__(reason)
        self.field_name, self.value, self.reason = field_name, value, reason


def _hex_id(value, field_name: str, size: int, required: bool = True) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id: hex as OTLP/JSON writes it, or base64 as protobuf's
    JSON mapping writes bytes; all zeros is invalid (the OTLP spec)."""
    if value in (None, "") and not required:
        return None
    if isinstance(value, str):
        text = value.strip()
        if (_HEX_TRACE if size == 16 else _HEX_SPAN).fullmatch(text):
            out = text.lower()
        else:
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raw = b""
            if len(raw) != size:
                raise _Bad(field_name, value, f"must be {size * 2} hex digits (or {size} bytes in base64)")
            out = raw.hex()
        if out.strip("0") == "":
            if not required:
                return None
            raise _Bad(field_name, value, "an id of all zeros is invalid")
        return out
    raise _Bad(field_name, value, f"must be a string of {size * 2} hex digits")


def _nanos(value, field_name: str) -> int:
    """A time in ns since the epoch: a whole number, or one written as a decimal string."""
    if isinstance(value, bool):
        raise _Bad(field_name, value, "must be a whole number of nanoseconds since the epoch")
    if isinstance(value, str) and value.isdigit() and len(value) <= 20:
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not 0 <= value < 2**64:
        raise _Bad(field_name, value, "must be a whole number of nanoseconds since the epoch (0 .. 2^64-1)")
    return value


def _status(code, field_name: str = "status.code") -> str:
    names = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK",
             "STATUS_CODE_ERROR": "ERROR", "UNSET": "UNSET", "OK": "OK", "ERROR": "ERROR", None: "UNSET", "": "UNSET"}
    key = code.strip().upper() if isinstance(code, str) else code
    if isinstance(key, bool) or key not in names:
        raise _Bad(field_name, code, "must be 0 (unset), 1 (ok) or 2 (error), or their names")
    return names[key]


def _kind(attributes: dict, given=None) -> str:
    kind = given if isinstance(given, str) and given.strip() else attributes.get("openinference.span.kind")
    return kind.strip().upper() if isinstance(kind, str) else ""


def _spans_error(exc: _Bad, source: str, line, span_id, line_label: str) -> EvalSuiteError:
    where = f"span {span_id}: " if span_id else ""
    return EvalSuiteError(where + exc.reason, source=source, line=line, field=exc.field_name, value=exc.value,
                          line_label=line_label)
