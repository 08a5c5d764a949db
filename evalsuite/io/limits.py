"""Limits on what a reader accepts, checked while reading, and linear-time checks of raw text.

Every reader (runs, qrels, records) takes ``limits=ReadLimits(...)``. The defaults pass real
data with room to spare (a 7-million-line MS MARCO-sized run is 238 MiB and 7 million lines)
and stop a hostile file long before it can exhaust a machine: a gzip bomb is decompressed in
pieces and stopped at ``max_bytes``; a Parquet file's row and column counts are read from its
footer before any data; JSON nesting is measured by a vectorised scan before a parser recurses.

Nothing here uses a regular expression with nested or adjacent unbounded repeats on user data:
every check is linear in the input.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from ..errors import EvalSuiteError

try:
    # ISA-L's inflate reads the same gzip streams as zlib at about twice its speed (a 238 MB run:
    # 0.52 s against 1.05 s; benchmarks/README.md, issue 31); zlib where its wheel is not installed.
    from isal import isal_zlib as _inflate

    _INFLATE_ERRORS: tuple[type[Exception], ...] = (zlib.error, _inflate.error)
    _FIRST_MEMBER_IN_ONE_CALL = True  # its output grows in one buffer (gunzip)
except ImportError:  # pragma: no cover - isal is in requirements.txt
    _inflate = zlib
    _INFLATE_ERRORS = (zlib.error,)
    _FIRST_MEMBER_IN_ONE_CALL = False  # zlib's one call collects blocks and joins them: twice the text

__all__ = ["ReadLimits", "DEFAULT_LIMITS", "BOUNDED"]

MIB = 1 << 20


@dataclass(frozen=True)
class ReadLimits:
    """What one input file may hold; a file past any limit gets an :class:`EvalSuiteError`.

    Parameters
    ----------
    max_bytes : int
        Content size in bytes after gzip decompression (default 2 GiB; a 7-million-line TREC
        run is 238 MiB). Decompression stops as soon as it is passed.
    max_rows : int
        Lines of a text file, rows of a Parquet file or items of a JSON list (default 30 million).
    max_line_bytes : int
        Bytes in one line of a TREC, CSV, TSV or JSONL file (default 16 MiB). A JSON document
        (ranx's format is often one line) is not limited by it.
    max_columns : int
        Columns of a CSV/TSV header or Parquet schema, or distinct keys of JSON rows (default 10,000).
    max_depth : int
        Nesting of JSON arrays and objects (default 64; records need 4).
    max_number_digits : int
        Digits of an integer written in JSON (default 1,000): a longer one is refused before it is
        converted, with an error naming its line. Shorter ones past float range (309 digits) are
        read and refused where a finite number is needed, kept where any value is (an unknown
        records column); Python's ``int()`` would refuse more than 4,300 digits with a bare
        ValueError, and converts in time quadratic in the digits.
    timeout_s : float or None
        Seconds the read may take (default None: no bound). When it or ``memory_bytes`` is set,
        the file is read in a worker process of the reader pool (as ``isolate=True``), which is
        stopped past either bound: the same bounds the dashboard applies to every upload (60 s
        and 6 GiB there, :data:`BOUNDED`), for the command line (``--bounded``,
        ``--read-timeout``, ``--read-memory-mb``) and the API. In-process (both None) nothing
        can stop a parser that runs long.
    memory_bytes : int or None
        Resident memory of the reading process, in bytes (default None: no bound; at least
        256 MiB when given). See ``timeout_s``.

    Examples
    --------
    >>> import evalsuite as es
    >>> es.read_run(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n", limits=es.ReadLimits(max_rows=1))
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: <bytes>, field 'rows', value 2: more than 1 lines (limit max_rows=1)
    """

    max_bytes: int = 2 * 1024 * MIB
    max_rows: int = 30_000_000
    max_line_bytes: int = 16 * MIB
    max_columns: int = 10_000
    max_depth: int = 64
    max_number_digits: int = 1000
    timeout_s: float | None = None
    memory_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_rows", "max_line_bytes", "max_columns", "max_depth", "max_number_digits"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EvalSuiteError("a limit must be a whole number >= 1", field=name, value=value)
        timeout = self.timeout_s
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not 0 < timeout < float("inf")):
            raise EvalSuiteError("timeout_s must be a number of seconds > 0, or None", field="timeout_s",
                                 value=timeout)
        memory = self.memory_bytes
        if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory < 256 * MIB):
            raise EvalSuiteError("memory_bytes must be a whole number of bytes >= 256 MiB, or None",
                                 field="memory_bytes", value=memory)

    @property
    def bounded(self) -> bool:
        """Whether a read with these limits runs in a worker process (a time or memory bound is set)."""
        return self.timeout_s is not None or self.memory_bytes is not None

    def in_process(self) -> "ReadLimits":
        """These limits without the process bounds (what the worker process reads with)."""
        return replace(self, timeout_s=None, memory_bytes=None) if self.bounded else self


DEFAULT_LIMITS = ReadLimits()
# The bounds of a read in a worker process when nothing else is asked, and of every upload to the
# dashboard: 60 s; 6 GiB resident (reading a 7-million-line run, 238 MiB, peaks near 0.9 GiB in a
# worker; 6 GiB leaves room for the largest file the default limits admit while keeping two
# workers far below 24 GiB).
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_BYTES = 6 * 1024 * MIB
BOUNDED = ReadLimits(timeout_s=DEFAULT_TIMEOUT_S, memory_bytes=DEFAULT_MEMORY_BYTES)


def check_limits(limits: ReadLimits | None) -> ReadLimits:
    """``limits`` or the defaults; anything else is an error naming the argument."""
    if limits is None:
        return DEFAULT_LIMITS
    if not isinstance(limits, ReadLimits):
        raise EvalSuiteError("limits must be an evalsuite.ReadLimits", field="limits", value=type(limits).__name__)
    return limits


def size_text(n: int) -> str:
    """A byte count for messages: ``2.0 GiB``, ``16.0 MiB`` or ``512 bytes``."""
    if n >= 1024 * MIB:
        return f"{n / (1024 * MIB):,.1f} GiB"
    return f"{n / MIB:,.1f} MiB" if n >= MIB else f"{n:,} bytes"


def too_large(size: int, limits: ReadLimits, source: str | None, what: str = "the content") -> EvalSuiteError:
    return EvalSuiteError(f"{what} is larger than {size_text(limits.max_bytes)} (limit max_bytes={limits.max_bytes})",
                          source=source, field="bytes", value=size)


_NOT_ZERO = re.compile(rb"[^\x00]")


def gunzip(raw: bytes, limits: ReadLimits, source: str | None, piece: int = 4 * MIB) -> bytes:
    """Decompress gzip (several members too), stopping as soon as the output passes ``max_bytes``.

    The output is produced ``piece`` bytes at a time, so a small file that expands to gigabytes
    costs at most ``max_bytes`` plus one piece of memory before it is refused. Trailing zero
    bytes after a member are ignored, as :func:`gzip.decompress` does.

    Linear in the input for any number of members: each member is fed from a view of the input
    in slices that start at 64 bytes and double while the member needs more, so the bytes the inflater
    hands back after a member's end (``unused_data``, a copy) are at most about the member's own
    size, never the rest of the file (copying the rest after every member made 320,000 empty
    members take a minute).

    With ISA-L (``isal``), the first member (most files' only one) is inflated in one call
    bounded by ``max_bytes``: its output grows in one buffer, so the file's text is in memory
    once, not in pieces and then joined (a 238 MiB run: 316 MiB peak against 554 MiB, 0.34 s).
    zlib's one call collects blocks and joins them, so it keeps the pieces.
    """
    return b"".join(gunzip_pieces(raw, limits, source, piece, first_member_in_one_call=_FIRST_MEMBER_IN_ONE_CALL))


def gunzip_pieces(raw: bytes, limits: ReadLimits, source: str | None, piece: int = 4 * MIB,
                  first_member_in_one_call: bool = False) -> Iterator[bytes]:
    """:func:`gunzip`'s output as it is inflated, pieces of at most ``piece`` bytes (the first
    member in one piece when ``first_member_in_one_call``), with the same checks, raised when
    the piece that fails them is reached: a reader that streams a file never holds its text.
    """
    view = memoryview(raw)
    n = len(view)
    total = 0
    position = 0
    one_call = first_member_in_one_call  # the first member only: after it, unused_data is the rest
    while position < n:
        inflater = _inflate.decompressobj(wbits=31)
        step = n if one_call else 64
        fed_to = position  # input up to here has been given to this member's inflater
        pending: bytes | memoryview = b""
        full = False  # the last call filled a whole piece: zlib may hold more output
        try:
            while True:
                if not pending and not full:
                    if fed_to >= n:
                        raise EvalSuiteError("not a valid gzip file (it ends before the end of the compressed "
                                             "data)", source=source)
                    pending = view[fed_to:fed_to + step]
                    fed_to += len(pending)
                    step = min(step * 2, piece)
                most = limits.max_bytes - total + 1 if one_call else piece
                one_call = False
                chunk = inflater.decompress(pending, most)
                full = len(chunk) == most
                total += len(chunk)
                if total > limits.max_bytes:
                    raise EvalSuiteError(f"the gzip content expands past {size_text(limits.max_bytes)} "
                                         f"(limit max_bytes={limits.max_bytes}); the file was not read further",
                                         source=source, field="bytes", value=f"more than {total:,} bytes")
                if chunk:
                    yield chunk
                pending = inflater.unconsumed_tail
                if inflater.eof:
                    break
        except _INFLATE_ERRORS as exc:
            raise EvalSuiteError(f"not a valid gzip file ({exc})", source=source) from None
        position = fed_to - len(inflater.unused_data)
        # Zero bytes after a member are padding (as gzip.decompress reads them).
        found = _NOT_ZERO.search(view, position)
        if found is None:
            break
        position = found.start()
        if view[position:position + 2] != b"\x1f\x8b":
            raise EvalSuiteError("not a valid gzip file (bytes after the compressed data that are not gzip)",
                                 source=source)


def _gunzip_head(raw: bytes, limits: ReadLimits, shown: str, head_bytes: int = 65536) -> bytes | None:
    """The first ``head_bytes`` of a gzip file's text, or None when the text is no longer than
    that or starts with a byte-order mark (then it is simply inflated)."""
    pieces = gunzip_pieces(raw, limits, shown, piece=head_bytes)
    head = b""
    for piece in pieces:
        head += piece
        if len(head) > head_bytes:
            return None if head[:3] == b"\xef\xbb\xbf" else head[:head_bytes]
    return None


class _PieceStream(io.RawIOBase):
    """An iterator of byte strings read as a file, each string passed to ``check`` when it is
    reached (pyarrow's CSV reader calls ``read`` from its reading thread; an exception raised
    there comes out of ``read_csv`` as it is)."""

    def __init__(self, pieces: Iterator[bytes], check: Callable[[bytes], None]) -> None:
        self._pieces, self._check = pieces, check
        self._piece, self._at = b"", 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        parts = []
        while size != 0:
            if self._at == len(self._piece):
                piece = next(self._pieces, None)
                if piece is None:
                    break
                self._check(piece)
                self._piece, self._at = piece, 0
            end = len(self._piece) if size < 0 else min(len(self._piece), self._at + size)
            # A whole piece is passed on as it is (a full slice and a one-part join copy nothing).
            parts.append(self._piece[self._at:end])
            size = size - (end - self._at) if size > 0 else size
            self._at = end
        return b"".join(parts)


def check_text(data, limits: ReadLimits, source: str | None, *, lines: bool = True, count_rows: bool = True) -> None:
    """Size, number of lines and (when ``lines``) the longest line of a text, in linear time.

    ``data`` is bytes, or an ``mmap`` of a file given by path (then ``count_rows=False``: its
    rows are counted after parsing, which needs no copy of the file). Lines are counted with
    ``bytes.count``. For line length, a line of ``max_line_bytes`` or more contains a whole
    aligned block of ``max_line_bytes // 2`` bytes without a line break, so it suffices to look
    for a line break in each such block (``find`` stops at the first one, so this reads a few
    bytes per block) and measure the line exactly only around a block that has none.
    """
    n = len(data)
    if n > limits.max_bytes:
        raise too_large(n, limits, source)
    if count_rows:
        rows = data.count(b"\n") + (1 if n and data[-1:] != b"\n" else 0)
        if rows > limits.max_rows:
            raise EvalSuiteError(f"more than {limits.max_rows:,} lines (limit max_rows={limits.max_rows})",
                                 source=source, field="rows", value=rows)
    if not lines or n <= limits.max_line_bytes:
        return
    block = max(1, limits.max_line_bytes // 2)
    for start in range(0, n - block + 1, block):
        if data.find(b"\n", start, start + block) != -1:
            continue
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start + block)
        line_end = n if line_end == -1 else line_end
        if line_end - line_start > limits.max_line_bytes:
            number = bytes(data[:line_start]).count(b"\n") + 1
            raise EvalSuiteError(f"a line longer than {size_text(limits.max_line_bytes)} "
                                 f"(limit max_line_bytes={limits.max_line_bytes})", source=source, line=number,
                                 field="line", value=f"{line_end - line_start:,} bytes")


def check_columns(count: int, limits: ReadLimits, source: str | None, line: int | None = None,
                  line_label: str = "line") -> None:
    if count > limits.max_columns:
        raise EvalSuiteError(f"more than {limits.max_columns:,} columns (limit max_columns={limits.max_columns})",
                             source=source, line=line, field="columns", value=count, line_label=line_label)


def check_rows(count: int, limits: ReadLimits, source: str | None, what: str = "rows") -> None:
    if count > limits.max_rows:
        raise EvalSuiteError(f"more than {limits.max_rows:,} {what} (limit max_rows={limits.max_rows})",
                             source=source, field="rows", value=count)


# Bytes the JSON nesting scan looks at: quote, backslash, brackets, braces and the line break.
_QUOTE, _BACKSLASH, _NEWLINE = 34, 92, 10
_OPEN = (91, 123)   # [ {
_CLOSE = (93, 125)  # ] }
_INTERESTING = np.zeros(256, dtype=bool)
_INTERESTING[[_QUOTE, _BACKSLASH, _NEWLINE, *_OPEN, *_CLOSE]] = True


def json_depth_error(data: bytes, limits: ReadLimits, source: str | None, *, per_line: bool,
                     chunk: int = 16 * MIB) -> EvalSuiteError | None:
    """The error for JSON nested deeper than ``max_depth``, or None; linear time, bounded memory.

    Looks only at quotes, backslashes, brackets, braces and line breaks (numpy, a chunk at a
    time): a quote preceded by an odd run of backslashes is escaped; brackets inside strings do
    not count. A raw line break cannot occur inside a valid JSON string, so each line starts
    outside any string; with ``per_line`` (JSONL) each line also starts at depth 0. For invalid
    JSON the count may be off, and the parser then reports the real problem.
    """
    depth, in_string, backslashes = 0, 0, 0
    n = len(data)
    base = np.frombuffer(data, dtype=np.uint8)
    for start in range(0, n, chunk):
        block = base[start:start + chunk]
        positions = np.flatnonzero(_INTERESTING[block])
        if positions.size == 0:
            continue
        chars = block[positions]
        is_bs = chars == _BACKSLASH
        adjacent = np.empty(positions.size, dtype=bool)
        adjacent[0] = positions[0] == 0
        adjacent[1:] = positions[1:] == positions[:-1] + 1
        # Length of the run of backslashes ending at each backslash event.
        # Whether the event just before is a backslash right next to it (or one carried over).
        previous_bs = np.concatenate(([adjacent[0] and backslashes > 0], is_bs[:-1] & adjacent[1:]))
        run_start = is_bs & ~previous_bs
        index = np.arange(positions.size)
        first_of_run = np.maximum.accumulate(np.where(run_start | ~is_bs, index, 0))
        run_length = index - first_of_run + 1
        carried = np.where((positions[first_of_run] == 0) & adjacent[0], backslashes, 0) if backslashes else 0
        run_length = run_length + carried
        prev_len = np.concatenate(([backslashes], run_length[:-1]))
        escaped = previous_bs & (prev_len % 2 == 1)
        quote = (chars == _QUOTE) & ~escaped
        newline = chars == _NEWLINE
        # Quote parity since the last line break (or the chunk's start, with the carried state).
        toggles = np.cumsum(quote, dtype=np.int64)
        last_nl = np.maximum.accumulate(np.where(newline, index, -1))
        at_nl = np.where(last_nl >= 0, toggles[np.maximum(last_nl, 0)], 0)
        start_parity = np.where(last_nl >= 0, 0, in_string)
        before = (start_parity + toggles - quote - at_nl) % 2
        outside = before == 0
        step = np.zeros(positions.size, dtype=np.int64)
        step[np.isin(chars, _OPEN) & outside] = 1
        step[np.isin(chars, _CLOSE) & outside] = -1
        level = np.cumsum(step)
        if per_line:
            reset = np.where(last_nl >= 0, level[np.maximum(last_nl, 0)], -depth)
            level = level - reset
        else:
            level = level + depth
        deepest = int(level.max())
        if deepest > limits.max_depth:
            at = start + int(positions[int(np.argmax(level > limits.max_depth))])
            return EvalSuiteError(f"JSON nested more than {limits.max_depth} levels deep "
                                  f"(limit max_depth={limits.max_depth})", source=source,
                                  line=data.count(b"\n", 0, at) + 1, field="json", value=f"depth {deepest}")
        # State carried into the next chunk.
        depth = int(level[-1])
        in_string = int((before[-1] + quote[-1]) % 2) if not newline[-1] else 0
        end_run = is_bs[-1] and positions[-1] == len(block) - 1
        backslashes = int(run_length[-1]) if end_run else 0
    return None


_NOT_AN_OBJECT = re.compile(rb"(?m)^[ \t\r\f\v]*+[^{ \t\r\f\v\n]")  # possessive: no backtracking


def rows_not_objects(data: bytes) -> bool:
    """Whether a JSONL text has a non-blank line that does not start with ``{`` (linear scan).

    pyarrow's JSON reader crashes the process on some such lines (a first line ``null``), so
    those files go to the line-by-line reader, which names the line.
    """
    return _NOT_AN_OBJECT.search(data) is not None
