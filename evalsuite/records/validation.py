"""Validation of record values: each value converted to its field's kind, or an error naming the
row, field and value. Two paths give the same result: the exact one (Python values, one by one)
and the fast one (Arrow columns of the expected types, checked at once, falling back to the
exact path for a column that is not).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..utils.ids import trim_id, trim_id_array
from .schema import ARROW_TYPES

__all__ = ["RowError"]


class RowError(Exception):
    """A bad value at ``row`` of the input (converted to EvalSuiteError with the line)."""

    def __init__(self, row: int, field_name: str, value: Any, reason: str) -> None:
        super().__init__(reason)
        self.row, self.field_name, self.value, self.reason = row, field_name, value, reason


# ----------------------------------------------------------------------------------------------
# Per-value validation (the exact path: Python values, one by one).


def _as_label(value, row: int, name: str, graded: bool):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return float(value) if graded else bool(value)
    if graded and isinstance(value, (int, float)):
        if not 0.0 <= float(value) <= 1.0:
            raise RowError(row, name, value, "a grade must lie in 0..1")
        return float(value)
    kind = "true, false, null or a grade in 0..1" if graded else "true, false or null"
    raise RowError(row, name, value, f"each judgement must be {kind}")


def _convert_value(value, kind: str, row: int, name: str):
    """One field value, validated and in canonical form (None stays None)."""
    try:
        return _convert_value_unchecked(value, kind, row, name)
    except OverflowError:  # a JSON integer past float range where a number is expected
        raise RowError(row, name, value, "a number too large to hold as a float (64-bit)") from None


def _convert_value_unchecked(value, kind: str, row: int, name: str):
    if value is None:
        return None
    if kind == "id":
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise RowError(row, name, value, "must be a string (or a whole number)")
        text = trim_id(str(value))  # the one id rule of every format (evalsuite.utils.ids)
        if not text:
            raise RowError(row, name, value, "must not be empty")
        return text
    if kind == "text":
        if not isinstance(value, str):
            raise RowError(row, name, value, "must be a string")
        return value
    if kind == "texts":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RowError(row, name, value, "must be a list of strings")
        return value
    if kind in ("labels", "grades"):
        if not isinstance(value, list):
            raise RowError(row, name, value, "must be a list of judgements")
        return [_as_label(v, row, name, kind == "grades") for v in value]
    if kind == "unit":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
            raise RowError(row, name, value, "must be a number in 0..1")
        return float(value)
    if kind == "score":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RowError(row, name, value, "a given metric value must be a number in 0..1 (or null)")
        if math.isnan(float(value)):
            return None  # undefined for this request (RAGAS writes NaN)
        if not 0.0 <= float(value) <= 1.0:
            raise RowError(row, name, value, "a given metric value must lie in 0..1")
        return float(value)
    if kind == "flag":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise RowError(row, name, value, "must be true or false")
    if kind == "latency":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RowError(row, name, value, "a latency must be a number")
        if not math.isfinite(float(value)) or float(value) < 0:
            raise RowError(row, name, value, "a latency must be a finite number >= 0")
        return float(value)
    if kind == "relevant":
        if isinstance(value, list):
            if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
                raise RowError(row, name, value, "must be a list of ids or a mapping id -> grade")
            ids = [str(v) for v in value]
            if len(set(ids)) != len(ids):
                raise RowError(row, name, value, "lists an id twice")
            return dict.fromkeys(ids, 1.0)
        if isinstance(value, dict):
            out = {}
            for key, grade in value.items():
                if grade is None:
                    continue  # not judged (also what Arrow fills in for keys another row has)
                if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not math.isfinite(grade):
                    raise RowError(row, name, value, f"the grade of {key!r} must be a finite number")
                out[str(key)] = float(grade)
            return out
        raise RowError(row, name, value, "must be a list of ids or a mapping id -> grade")
    raise AssertionError(kind)


def _column_from_values(values: list, kind: str, name: str) -> pa.Array:
    converted = [_convert_value(v, kind, i, name) for i, v in enumerate(values)]
    if kind == "relevant":
        ids = pa.array([None if v is None else list(v) for v in converted], pa.list_(pa.string()))
        return ids, pa.array([None if v is None else list(v.values()) for v in converted], pa.list_(pa.float64()))
    return pa.array(converted, ARROW_TYPES[kind])


# ----------------------------------------------------------------------------------------------
# Column-wise validation (the fast path: Arrow columns of the expected types, checked at once).


def _first_row(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _fast_column(column: pa.ChunkedArray | pa.Array, kind: str, name: str):
    """Validate an Arrow column of the expected type at once; None if the type needs the slow path."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    typ = column.type
    if pa.types.is_null(typ):
        return pa.nulls(len(column), ARROW_TYPES.get(kind, pa.string())) if kind != "relevant" else None
    if kind in ("id", "text"):
        if pa.types.is_large_string(typ):
            column = column.cast(pa.string())
        elif kind == "id" and pa.types.is_integer(typ):
            column = column.cast(pa.string())
        elif not pa.types.is_string(typ):
            return None
        if kind == "id" and len(column):
            column = trim_id_array(column)
            empty = pc.equal(pc.binary_length(column), 0).fill_null(False).to_numpy(zero_copy_only=False)
            if empty.any():
                raise RowError(_first_row(empty), name, "", "must not be empty")
        return column
    if kind == "texts":
        if pa.types.is_list(typ) and (pa.types.is_string(typ.value_type) or pa.types.is_large_string(typ.value_type)):
            return column.cast(pa.list_(pa.string()))
        return None
    if kind in ("labels", "grades"):
        if not pa.types.is_list(typ):
            return None
        value_type = typ.value_type
        flat = pc.list_flatten(column)
        if pa.types.is_boolean(value_type):
            return column.cast(ARROW_TYPES[kind])
        if pa.types.is_integer(value_type) or (kind == "grades" and pa.types.is_floating(value_type)):
            if len(flat):
                lo, hi = pc.min(flat).as_py(), pc.max(flat).as_py()
                if lo is not None and (lo < 0 or hi > 1 or (kind == "labels" and pc.any(pc.not_equal(pc.floor(flat.cast(pa.float64())), flat.cast(pa.float64()))).as_py())):
                    return None  # the slow path names the offending value
            return column.cast(pa.list_(pa.bool_() if kind == "labels" else pa.float64()))
        if pa.types.is_null(value_type):
            return column.cast(ARROW_TYPES[kind])
        return None
    if kind in ("unit", "latency", "score"):
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)) or pa.types.is_boolean(typ):
            return None
        values = column.cast(pa.float64())
        if kind == "score":  # NaN means undefined for that request: store it as null
            values = pc.if_else(pc.is_nan(values), pa.scalar(None, pa.float64()), values)
        data = values.fill_null(0.0).to_numpy(zero_copy_only=False)
        bad = ~np.isfinite(data) | (data < 0) if kind == "latency" else ~((data >= 0) & (data <= 1))
        if bad.any():
            return None
        return values
    if kind == "flag":
        if pa.types.is_boolean(typ):
            return column
        return None
    return None
