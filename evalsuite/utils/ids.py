"""What an id is, in every format: the one rule every reader applies, and the check for ids that
differ only by characters a person cannot see.

The rule (``docs/conventions.md``, "ids"): an id is the text between its format's delimiters with
ASCII whitespace (space, tab, line feed, vertical tab, form feed, carriage return: the characters
trec_eval splits TREC lines on) removed from both ends; every other character is kept, byte for
byte: Unicode spaces (U+00A0, U+2003, U+3000), control characters (U+001C..U+001F), zero-width
characters and combining marks included. A TREC file cannot hold ASCII whitespace in an id at
all, so the same run written as TREC, CSV, TSV, JSON, JSONL or Parquet reads as the same ids.

Ids are then compared as bytes: no Unicode normalisation, no case folding.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ID_WHITESPACE", "ID_CONVENTION", "trim_id", "trim_id_array", "visible_form", "invisible_twins"]

# docs/conventions.md prints this section (scripts/build_docs.py).
ID_CONVENTION = """\
An id (query id, doc id, a records file's query id and system, a judgement table's ids) is the text
between its format's delimiters with **ASCII whitespace** (space, tab, line feed, vertical tab, form
feed, carriage return) removed from both ends. Every other character is kept, byte for byte:
Unicode spaces (U+00A0, U+2003, U+3000), control characters (U+001C to U+001F), zero-width
characters and combining marks. Ids are then compared as bytes: no Unicode normalisation, no case
folding. TREC, CSV, TSV, JSON, JSONL and Parquet (gzip-compressed or not), and ids given in memory
(`Run.from_dict`, data frames), follow the same rule, so one run written in every format scores the
same (`tests/io/test_format_round_trip.py` writes generated runs and qrels in every format and
compares every metric).

Why this set: trec_eval splits TREC lines on exactly these six characters, so no TREC file can
hold them in an id; trimming them elsewhere makes the other formats agree with TREC, and a space
after a comma in a hand-written CSV (`q1, d1, 2.0`) names doc `d1`. Unicode spaces and control
characters are kept because TREC keeps them: trec_eval reads them as id text. Before this rule the
CSV/TSV readers trimmed Python's wider whitespace set (even inside quotes) and the other formats
kept it, so one run scored differently by format.

Ids that differ only by characters a person cannot see (Unicode categories Zs but the ASCII space,
Zl, Zp, Cc, Cf: `d1` and `d1` + U+00A0, `q1` and `q1` + U+200B) are different ids. `evaluate`
warns when ids of the run match ids of the qrels only once such characters are removed, and a
reader warns when two query ids of one file do.
"""

# Arrow's ascii_trim_whitespace removes exactly these (bytes 9-13 and 32); trec_eval splits on them.
ID_WHITESPACE = " \t\n\x0b\x0c\r"
_WHITESPACE_BYTES = np.zeros(256, dtype=bool)
_WHITESPACE_BYTES[[9, 10, 11, 12, 13, 32]] = True


def trim_id(text: str) -> str:
    """An id as the rule reads it: ASCII whitespace off both ends, nothing else changed.

    Examples
    --------
    >>> trim_id(" d1\\t"), trim_id("d1\\u00a0"), trim_id("\\x1fd1")
    ('d1', 'd1\\xa0', '\\x1fd1')
    """
    return text.strip(ID_WHITESPACE)


def _needs_trim(array: pa.Array) -> bool:
    """Whether any string of ``array`` starts or ends with ASCII whitespace (a gather of the first
    and last byte of each string, no copy of the strings)."""
    if len(array) == 0:
        return False
    if pa.types.is_large_string(array.type):
        offset_type = np.int64
    else:
        offset_type = np.int32
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[array.offset:array.offset + len(array) + 1]
    if buffers[2] is None:
        return False
    data = np.frombuffer(buffers[2], dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    nonempty = ends > starts
    if array.null_count:
        nonempty &= array.is_valid().to_numpy(zero_copy_only=False)
    if not nonempty.any():
        return False
    starts, ends = starts[nonempty], ends[nonempty]
    return bool(_WHITESPACE_BYTES[data[starts]].any() or _WHITESPACE_BYTES[data[ends - 1]].any())


def trim_id_array(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """:func:`trim_id` over an Arrow string column (plain, large or dictionary-encoded).

    Linear and cheap when nothing needs trimming (the common case): the first and last byte of
    each string are looked at, and the column is returned unchanged.

    Examples
    --------
    >>> trim_id_array(pa.array(["q1", " q2 ", "q3\\u3000"])).to_pylist()
    ['q1', 'q2', 'q3\\u3000']
    """
    if isinstance(column, pa.ChunkedArray):
        chunks = [trim_id_array(c) for c in column.chunks]
        return pa.chunked_array(chunks, type=column.type) if chunks else column
    if pa.types.is_dictionary(column.type):
        dictionary = trim_id_array(column.dictionary)
        if dictionary is column.dictionary:
            return column
        return pa.DictionaryArray.from_arrays(column.indices, dictionary)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return column
    if not _needs_trim(column):
        return column
    return pc.ascii_trim_whitespace(column)


# ----------------------------------------------------------------------------------------------
# Ids that look the same.

# Characters that render as nothing or as blank, other than the ASCII space (an inner space is
# visible between letters): Unicode spaces (Zs but U+0020), line and paragraph separators,
# control characters and format characters (zero-width space and joiners, soft hyphen, byte-order
# mark, bidirectional marks).
_INVISIBLE_CATEGORIES = frozenset(("Zs", "Zl", "Zp", "Cc", "Cf"))


def _invisible(char: str) -> bool:
    return char != " " and unicodedata.category(char) in _INVISIBLE_CATEGORIES


def visible_form(text: str) -> str:
    """``text`` without the characters a person cannot see (see :func:`invisible_twins`).

    Examples
    --------
    >>> visible_form("d1\\u00a0"), visible_form("d\\u200b1"), visible_form("d 1")
    ('d1', 'd1', 'd 1')
    """
    return "".join(c for c in text if not _invisible(c))


# The same set as an RE2 class (Arrow's regular expressions): Zs without U+0020 spelled out.
_INVISIBLE_RE2 = (r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\x{00A0}\x{1680}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}]")


def _as_strings(ids) -> pa.Array | pa.ChunkedArray:
    if isinstance(ids, pa.ChunkedArray):
        if not pa.types.is_dictionary(ids.type):
            # Chunk by chunk: joining a run's doc ids first copied them all (0.4 s for 7 million
            # MS MARCO v2 ids), to learn in the common case that none holds an invisible character.
            return pa.chunked_array([_as_strings(c) for c in ids.chunks], type=pa.string())
        ids = ids.combine_chunks()
    if pa.types.is_dictionary(ids.type):
        ids = ids.dictionary
    return ids if pa.types.is_string(ids.type) else ids.cast(pa.string())


def _maybe_invisible(ids: pa.Array) -> bool:
    """Whether any byte of the ids is below 0x20 or above 0x7e (two vectorised reductions over
    the data buffer; pure printable ASCII, the common case, answers no at once)."""
    if isinstance(ids, pa.ChunkedArray):
        return any(_maybe_invisible(chunk) for chunk in ids.chunks)
    data = ids.buffers()[2]
    if data is None or len(ids) == 0:
        return False
    values = np.frombuffer(data, dtype=np.uint8)
    return bool(values.size) and (int(values.min()) < 0x20 or int(values.max()) > 0x7E)


_NO_STRINGS = pa.Array.from_buffers(pa.string(), 0, [None, pa.py_buffer(bytes(4)), pa.py_buffer(b"")])  # pa.array([]) imports pandas


def _with_invisible(ids: pa.Array) -> pa.Array:
    """The distinct ids that hold an invisible character."""
    if not _maybe_invisible(ids):
        return _NO_STRINGS
    unique = pc.unique(ids.drop_null())
    return unique.filter(pc.match_substring_regex(unique, _INVISIBLE_RE2))


def invisible_twins(first, second=None, limit: int = 3) -> list[tuple[str, str]]:
    """Pairs of distinct ids that are equal once invisible characters are removed.

    With one column: pairs within it (``"q1"`` and ``"q1\\u200b"`` in one file). With two: ids of
    ``first`` that are not in ``second`` but equal one of its ids once invisible characters are
    removed from both (a run's ``"d1\\u00a0"`` against the qrels' ``"d1"``): such a run scores as if
    it had not retrieved the document. Invisible: Unicode categories Zs (but the ASCII space), Zl,
    Zp, Cc and Cf.

    Linear in the ids' bytes; ids of printable ASCII only (the common case) cost two reductions
    over the data buffer.

    Parameters
    ----------
    first, second : pyarrow string arrays (plain, large, dictionary or chunked)
    limit : int
        At most this many pairs are returned.

    Returns
    -------
    list of (str, str)
        ``(id of first, the id it looks like)``, sorted; empty when there is none.

    Examples
    --------
    >>> invisible_twins(pa.array(["d1\\u00a0", "d2"]), pa.array(["d1", "d2"]))
    [('d1\\xa0', 'd1')]
    >>> invisible_twins(pa.array(["q1", "q1\\u200b", "q2"]))
    [('q1\\u200b', 'q1')]
    """
    first = _as_strings(first)
    odd_first = _with_invisible(first)
    if second is None:
        if len(odd_first) == 0:
            return []
        pairs, seen = set(), {}
        forms = [visible_form(t) for t in odd_first.to_pylist()]
        plain = pc.is_in(pa.array(forms, pa.string()), value_set=pc.unique(first)).to_pylist()
        for text, form, is_plain in zip(odd_first.to_pylist(), forms, plain):
            if is_plain:
                pairs.add((text, form))
            elif form in seen:
                pairs.add((text, seen[form]))
            else:
                seen[form] = text
        return sorted(pairs)[:limit]
    second = _as_strings(second)
    odd_second = _with_invisible(second)
    if len(odd_first) == 0 and len(odd_second) == 0:
        return []
    second_set = pc.unique(second.drop_null())
    pairs = set()
    # An id of first with an invisible character, missing from second, whose visible form is in
    # second (as written, or as the visible form of an id with invisible characters).
    second_forms = {visible_form(t): t for t in odd_second.to_pylist()}
    missing = odd_first.filter(pc.invert(pc.is_in(odd_first, value_set=second_set)))
    if len(missing):
        forms = [visible_form(t) for t in missing.to_pylist()]
        present = pc.is_in(pa.array(forms, pa.string()), value_set=second_set).to_pylist()
        for text, form, is_present in zip(missing.to_pylist(), forms, present):
            if is_present:
                pairs.add((text, form))
            elif form in second_forms and second_forms[form] != text:
                pairs.add((text, second_forms[form]))
    # A plain id of first, missing from second, that is the visible form of an id of second.
    if second_forms:
        keys = pa.array(list(second_forms), pa.string())
        hit = pc.unique(first.filter(pc.is_in(first, value_set=keys).fill_null(False)))
        hit = hit.filter(pc.invert(pc.is_in(hit, value_set=second_set)))
        pairs.update((text, second_forms[text]) for text in hit.to_pylist())
    return sorted(pairs)[:limit]
