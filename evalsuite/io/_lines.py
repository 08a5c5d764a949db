"""Row -> line maps for error messages, built only when an error needs one.

The fast readers (pyarrow) number rows, not lines: blank lines, whitespace-only lines and quoted
fields spanning lines make the two differ. These maps recover the exact 1-based line of a data
row by re-reading the text the way pyarrow counted rows, once, on the error path.
"""

from __future__ import annotations

import contextlib
import csv
import io
import sys
import threading
from collections.abc import Callable, Iterator

from ..errors import EvalSuiteError

# The csv module's field limit (131,072 characters by default) is process-wide state. Long
# contexts and answers are valid fields, so the readers raise it while they read and put back what
# they found when the last of them is done; importing a module never changes it.
_LONGEST_FIELD = min(sys.maxsize, 2**31 - 1)
_FIELD_LOCK = threading.Lock()
_field_readers = 0
_field_limit_found: int | None = None


@contextlib.contextmanager
def long_csv_fields() -> Iterator[None]:
    """Let the csv module read fields of any length inside this block (the file's own limits,
    ``max_bytes`` and ``max_line_bytes``, bound them already); the previous limit comes back when
    the last reader in the process leaves the block (a count under a lock: readers in threads
    overlap)."""
    global _field_readers, _field_limit_found
    with _FIELD_LOCK:
        if _field_readers == 0:
            _field_limit_found = csv.field_size_limit(_LONGEST_FIELD)
        _field_readers += 1
    try:
        yield
    finally:
        with _FIELD_LOCK:
            _field_readers -= 1
            if _field_readers == 0 and _field_limit_found is not None:
                csv.field_size_limit(_field_limit_found)
                _field_limit_found = None


def csv_error(exc: csv.Error, source: str | None, line: int | None) -> EvalSuiteError:
    """A csv module error as an EvalSuiteError naming the file and line."""
    return EvalSuiteError(f"could not be read as CSV/TSV ({exc})", source=source, line=line, field="csv")


class LazyLines:
    """``line(row)``: the line where data row ``row`` (0-based) starts; computed on first use."""

    def __init__(self, build: Callable[[], list[int]]) -> None:
        self._build = build
        self._lines: list[int] | None = None

    def __call__(self, row: int | None) -> int | None:
        if row is None:
            return None
        if self._lines is None:
            self._lines = self._build()
        return self._lines[row] if 0 <= row < len(self._lines) else None


def csv_lines(data: bytes, delimiter: str, header: bool = True) -> LazyLines:
    """Lines of the data rows of a CSV/TSV file (blank lines skipped, as pyarrow does)."""

    def build() -> list[int]:
        reader = csv.reader(io.StringIO(data.decode("utf-8", errors="replace"), newline=""), delimiter=delimiter)
        starts, next_line = [], 1
        with long_csv_fields():
            try:
                for index, row in enumerate(reader):
                    first, next_line = next_line, reader.line_num + 1
                    if (header and index == 0) or not row:
                        continue
                    starts.append(first)
            except csv.Error:
                pass  # lines after this are unknown; the error being explained names its own line
        return starts

    return LazyLines(build)


def nonblank_lines(data: bytes) -> LazyLines:
    """Lines that hold something besides whitespace (JSONL rows, as pyarrow's JSON reader counts)."""

    def build() -> list[int]:
        return [number for number, line in enumerate(data.split(b"\n"), start=1) if line.strip()]

    return LazyLines(build)
