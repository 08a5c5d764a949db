"""Checks and array helpers shared by the readers, the metrics and every export.

- argument checks: :func:`check_cutoff`, :func:`check_rel_level`, :func:`check_compat`;
- rank grouping: :func:`ranks_from_counts`, :func:`group_positions` (rows grouped by query);
- spreadsheet-safe CSV: every CSV EvalSuite writes goes through :func:`safe_csv` or
  :func:`defuse_formula`.
"""

from __future__ import annotations

import io
import math
import numbers

import numpy as np

from ..errors import EvalSuiteError

__all__ = ["FORMULA_PREFIXES", "defuse_formula", "safe_csv", "ranks_from_counts", "group_positions", "check_cutoff",
           "check_rel_level", "check_compat"]


def check_rel_level(rel_level: object) -> float:
    """Validate ``rel_level`` (a real number > 0) and return it as a float."""
    if isinstance(rel_level, bool) or not isinstance(rel_level, numbers.Real) or not math.isfinite(rel_level) or rel_level <= 0:
        raise EvalSuiteError(
            "rel_level must be a number > 0 (grades <= 0 are never relevant)", field="rel_level", value=rel_level
        )
    return float(rel_level)


def check_cutoff(k: object, allow_none: bool = True) -> int | None:
    """A cutoff k as an int >= 1 (None for the whole list when ``allow_none``); else an error naming k."""
    if k is None and allow_none:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise EvalSuiteError("k must be a whole number >= 1 (or None for the whole list)", field="k", value=k)
    if k <= 0:
        raise EvalSuiteError("k must be >= 1", field="k", value=k)
    if k > 10**9:
        raise EvalSuiteError("k is too large (at most 1,000,000,000)", field="k", value=k)
    return int(k)


def check_compat(compat) -> None:
    """``compat`` must be None or "ragas" (RAGAS's own numbers where they differ)."""
    if compat not in (None, "ragas"):
        raise EvalSuiteError("compat must be None or 'ragas'", field="compat", value=compat)


def ranks_from_counts(counts: np.ndarray) -> np.ndarray:
    """0-based rank of each row within its group, for rows grouped with ``counts`` rows per group.

    >>> ranks_from_counts(np.array([2, 0, 3])).tolist()
    [0, 1, 0, 1, 2]
    """
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    return np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)


def group_positions(groups: np.ndarray) -> np.ndarray:
    """0-based position of each element within its run of equal values (``groups`` sorted).

    >>> group_positions(np.array([4, 4, 7, 9, 9, 9])).tolist()
    [0, 1, 0, 0, 1, 2]
    """
    n = groups.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    return ranks_from_counts(np.diff(np.append(starts, n)))

# Cell starts that make Excel, LibreOffice or Google Sheets read a cell as a formula (OWASP,
# "CSV Injection"): '=', '+', '-', '@', tab and carriage return.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def defuse_formula(text: str) -> str:
    """``text`` with a leading single quote when a spreadsheet would read it as a formula.

    >>> defuse_formula("=1+1"), defuse_formula("q1")
    ("'=1+1", 'q1')
    """
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def safe_csv(frame, index: bool = False) -> bytes:
    """CSV bytes (UTF-8) of ``frame`` that are safe to open in a spreadsheet.

    Every text cell, column name and index label that starts with ``= + - @``, a tab or a
    carriage return gets a leading single quote, so the spreadsheet shows it as text instead
    of evaluating it (OWASP "CSV Injection"). Numeric columns are written as numbers
    (``-0.25`` in a float column is a number, not a formula); NaN is an empty cell.

    Parameters
    ----------
    frame : pandas.DataFrame
        Any table; it is not modified.
    index : bool
        Write the index as the first column(s).

    Returns
    -------
    bytes
        The CSV file content.
    """
    import pandas as pd

    out = frame.copy()
    out.columns = [defuse_formula(str(c)) for c in out.columns]
    for col in out.columns:
        series = out[col]
        if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)
                or pd.api.types.is_datetime64_any_dtype(series)):
            out[col] = series.map(lambda v: v if v is None or (isinstance(v, float) and np.isnan(v))
                                  else defuse_formula(v if isinstance(v, str) else str(v)))
    if index:
        if isinstance(out.index, pd.MultiIndex):
            out.index = pd.MultiIndex.from_tuples(
                [tuple(defuse_formula(str(v)) for v in t) for t in out.index], names=out.index.names)
        elif not pd.api.types.is_numeric_dtype(out.index):
            out.index = pd.Index([defuse_formula(str(v)) for v in out.index], name=out.index.name)
    buffer = io.StringIO()
    # CRLF line ends (RFC 4180): Python's csv module quotes a field holding any character of the
    # line terminator, so with "\r\n" a lone CR or LF inside a cell is quoted too.
    out.to_csv(buffer, index=index, lineterminator="\r\n")
    return buffer.getvalue().encode("utf-8")
