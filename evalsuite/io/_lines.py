"""Row -> line maps for error messages, built only when an error needs one.

The fast readers (pyarrow) number rows, not lines: blank lines, whitespace-only lines and quoted
fields spanning lines make the two differ. These maps recover the exact 1-based line of a data
row by re-reading the text the way pyarrow counted rows, once, on the error path.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Callable

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # long contexts or answers are valid fields


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
        for index, row in enumerate(reader):
            first, next_line = next_line, reader.line_num + 1
            if (header and index == 0) or not row:
                continue
            starts.append(first)
        return starts

    return LazyLines(build)


def nonblank_lines(data: bytes) -> LazyLines:
    """Lines that hold something besides whitespace (JSONL rows, as pyarrow's JSON reader counts)."""

    def build() -> list[int]:
        return [number for number, line in enumerate(data.split(b"\n"), start=1) if line.strip()]

    return LazyLines(build)
