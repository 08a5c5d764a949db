"""Scans of a TREC file's bytes before pyarrow parses it: which single separator splits its
lines exactly as trec_eval's whitespace split does (a space, a tab, or none: normalise first),
and whether every field is plain (no empty field, only ASCII), so the fields read only to check
them need not be converted. Each scan reads a path's file through a memory map (no copy)."""

from __future__ import annotations

import numpy as np

from ._reading import _Input


def _scan_whitespace(inp: _Input) -> tuple[str | None, bool]:
    """The field separator pyarrow can split the file on exactly as trec_eval splits lines
    (:func:`_separator`), and whether every field is plain (:func:`_plain_fields`).

    Most files have no control byte but the line feed: one pass (:func:`_plain_spaced`) answers
    both for them (0.08 s of a 238 MB run, where the two exact searches took 0.21 s); the
    others are searched exactly.
    """
    plain = _plain_spaced(inp)
    if plain is not None:
        return " ", plain
    separator = _separator(inp)
    return separator, separator is not None and _plain_fields(inp, separator)


def _plain_spaced(inp: _Input, block: int = 1 << 18) -> bool | None:
    """None when the bytes hold a control byte other than the line feed (a tab, CR, vertical
    tab, form feed or anything below 0x20); otherwise whether they are plain for a space
    separator: only ASCII, no two spaces in a row (:func:`_plain_spaced_bytes`)."""
    if inp.path is not None and inp._data is None:
        import mmap

        with open(inp.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return _plain_spaced_bytes(view, block)  # its numpy views die in that call, before the map closes
    return _plain_spaced_bytes(inp.data, block)


def _plain_spaced_bytes(data, block: int = 1 << 18) -> bool | None:
    """:func:`_plain_spaced` of a bytes-like object.

    numpy over blocks of ``block`` bytes (views; 256 KiB stay in cache: 0.08 s of a 238 MB run,
    4 MiB blocks 0.14 s), each one byte longer so a pair across two blocks is seen.
    """
    view = np.frombuffer(data, dtype=np.uint8)
    ascii_only, double_space = True, False
    for start in range(0, view.size, block):
        piece = view[start:start + block + 1]
        if np.count_nonzero(piece < 32) != np.count_nonzero(piece == 10):
            return None
        if ascii_only and int(piece.max()) > 0x7F:
            ascii_only = False
        if not double_space:
            space = piece == 32
            double_space = bool(np.logical_and(space[1:], space[:-1]).any())
    return ascii_only and not double_space


def _has_other_whitespace(inp: _Input) -> bool:
    """Whether the file has whitespace other than single spaces and line ends (tab, vertical tab,
    form feed, a CR not before a LF): pyarrow's space-delimited pass would keep it inside a field
    or end a line at a lone CR, so such files take the normalising pass (``find`` and ``count``
    run at memory speed; a regular expression took 4 s on a 250 MB run)."""
    if inp.path is not None and inp._data is None:
        import mmap

        with open(inp.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            if any(view.find(c) != -1 for c in (b"\t", b"\v", b"\f")):
                return True
            if view.find(b"\r") == -1:
                return False
    data = inp.data
    if any(data.find(c) != -1 for c in (b"\t", b"\v", b"\f")):
        return True
    return _lone_cr(data)


def _separator(inp: _Input) -> str | None:
    """The one field separator pyarrow can split the file on exactly as trec_eval splits lines:
    a space (no other whitespace but line ends), a tab (tabs and no spaces, vertical tabs, form
    feeds or lone CRs: a tab-separated export), or None (mixed whitespace: normalise first).

    A tab-separated file skips the normalising pass, which copies the file several times; runs
    of tabs, leading or trailing tabs give empty fields or extra columns, which the pyarrow pass
    refuses like runs of spaces, so such files still take the normalising pass."""
    if not _has_other_whitespace(inp):
        return " "
    if inp.path is not None and inp._data is None:
        import mmap

        with open(inp.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return "\t" if _only_tabs(view) else None
    return "\t" if _only_tabs(inp.data) else None


def _only_tabs(data) -> bool:
    """No spaces, vertical tabs, form feeds or CRs other than in CRLF line ends."""
    if any(data.find(c) != -1 for c in (b" ", b"\v", b"\f")):
        return False
    return not _lone_cr(data)


def _lone_cr(data) -> bool:
    """A CR that is not part of a CRLF line end. ``data``: bytes or an mmap of the file (which has
    no ``count``: a regular expression searches both)."""
    import re

    return data.find(b"\r") != -1 and re.search(rb"\r(?!\n)", data) is not None


def _plain_fields(inp: _Input, separator: str, block: int = 1 << 22) -> bool:
    """Whether no field can be empty or hold text that is not UTF-8: no two separators in a row
    (the only way a field between two others is empty) and only ASCII bytes. Then the fields
    read only to check them (Q0, rank, the qrels' iteration) need not be converted.

    Three numpy passes over cache-sized blocks of the bytes (a view, no copy): ``bytes.find`` of
    two separators took 0.3 s of a 1.1 s read of a 250 MB run (a space starts every few bytes,
    so its search seldom skips), these 0.03 s."""
    code = ord(separator)

    def plain(view) -> bool:
        data = np.frombuffer(view, dtype=np.uint8)
        for start in range(0, data.size, block):
            piece = data[start:start + block + 1]  # one byte more: a pair across two blocks is seen
            if int(piece.max()) > 0x7F:
                return False
            at = piece == code
            if np.logical_and(at[1:], at[:-1]).any():
                return False
        return True

    if inp.path is not None and inp._data is None:
        import mmap

        with open(inp.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return plain(view)  # its numpy views die with its frame, before the map closes
    return plain(inp.data)


class _NotAsScanned(Exception):
    """A piece of a streamed file is not what its head promised (:class:`_PieceScan`)."""


class _PieceScan:
    """Checks each piece of a streamed (gzip) TREC file, in order, for what the whole-text scans
    would have found before the parse: no control byte but the line feed, and plain fields when
    the head was plain (:func:`_plain_spaced_bytes`, a double space across two pieces too), and
    no line longer than ``max_line_bytes`` (:func:`~evalsuite.io.limits.check_text`). Raises
    :class:`_NotAsScanned` at the first piece that fails: the caller then reads the whole text
    the slow way, which explains a long line with its number.
    """

    def __init__(self, plain: bool, max_line_bytes: int) -> None:
        self.plain, self.max_line_bytes = plain, max_line_bytes
        self.open_line = 0  # bytes of the line still open at the end of the last piece
        self.last_was_space = False

    def __call__(self, piece: bytes) -> None:
        found = _plain_spaced_bytes(piece)
        if found is None or (self.plain and (not found or (self.last_was_space and piece[:1] == b" "))):
            raise _NotAsScanned
        first = piece.find(b"\n")
        if first == -1:
            self.open_line += len(piece)
            if self.open_line > self.max_line_bytes:
                raise _NotAsScanned
        else:
            last = piece.rfind(b"\n")
            if self.open_line + first > self.max_line_bytes or (
                    last - first > self.max_line_bytes and _longest_line(piece[first + 1:last]) > self.max_line_bytes):
                raise _NotAsScanned
            self.open_line = len(piece) - last - 1
        self.last_was_space = piece[-1:] == b" "


def _longest_line(text: bytes) -> int:
    """The length of the longest line of ``text`` (only asked of a piece longer than ``max_line_bytes``)."""
    return max(map(len, text.split(b"\n")))
