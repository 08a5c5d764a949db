"""How large a Parquet file's columns are once decoded, bounded before they are decoded.

A Parquet footer states each row group's uncompressed size, but that is the size of the encoded
pages: a column of one 2 KB string repeated 30 million times is a 2 KB dictionary and run-length
encoded indices of a few kilobytes, and decodes to 60 GB. So the bound here comes from the page
headers themselves, which are what the decoder follows: every page of every column chunk read is
walked (Thrift compact protocol, a few fields per page), and each page's decoded size is bounded
by its encoding:

- fixed-width values: values x width;
- byte arrays, PLAIN or DELTA_LENGTH_BYTE_ARRAY: the page's uncompressed bytes (the values are
  there verbatim) plus an offset per value;
- byte arrays, dictionary-encoded: values x the longest dictionary entry (the dictionary page is
  decoded by pyarrow, alone) plus an offset per value;
- byte arrays, DELTA_BYTE_ARRAY (prefix compression: a value may repeat a prefix of the one
  before): values x the page's uncompressed bytes, the only bound that holds.

When that bound is past ``max_bytes`` but dictionary columns make it loose (one long entry among
short ones), those columns are read as dictionaries (indices only, 4 bytes per value), their exact
decoded size is summed, and only then decoded. Nothing here trusts a count the decoder does not
follow.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EvalSuiteError
from .limits import ReadLimits, size_text

__all__ = ["DecodedSize", "decoded_size", "read_within_budget"]

MAX_PAGES = 1_000_000  # page headers walked per file at most (a 2 GiB file of 1 MiB pages has 2,048)

_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3
# Parquet's Encoding enum.
_PLAIN, _PLAIN_DICTIONARY, _RLE, _DELTA_LENGTH, _DELTA_BYTE_ARRAY, _RLE_DICTIONARY = 0, 2, 3, 6, 7, 8


class _Bad(Exception):
    """A page header that cannot be read (the file is damaged)."""


# ----------------------------------------------------------------------------------------------
# Thrift compact protocol: just enough to read a PageHeader and skip what it does not need.


class _Compact:
    def __init__(self, data: memoryview, pos: int, end: int) -> None:
        self.data, self.pos, self.end = data, pos, end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise _Bad("a page header runs past its column chunk")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise _Bad("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > 16:
            raise _Bad("a page header nested too deeply")
        if kind in (1, 2):  # bool inside a struct: the value is the type
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.pos += 8
        elif kind == 8:
            length = self.varint()  # read before adding: `pos += varint()` would add to the old pos
            self.pos += length
        elif kind in (9, 10):
            head = self.byte()
            size = head >> 4
            if size == 15:
                size = self.varint()
            for _ in range(size):
                self.skip_element(head & 0x0F, depth + 1)
        elif kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip_element(types >> 4, depth + 1)
                    self.skip_element(types & 0x0F, depth + 1)
        elif kind == 12:
            for _, field_kind in self.fields():
                self.skip(field_kind, depth + 1)
        else:
            raise _Bad(f"an unknown Thrift type {kind}")
        if self.pos > self.end:
            raise _Bad("a page header runs past its column chunk")

    def skip_element(self, kind: int, depth: int) -> None:
        if kind in (1, 2):  # a bool element of a list is a whole byte
            self.byte()
        else:
            self.skip(kind, depth)

    def fields(self):
        """(field id, type) of each field of the struct at the current position, up to its stop."""
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return
            delta, kind = head >> 4, head & 0x0F
            last = last + delta if delta else self.zigzag()
            yield last, kind


def _page_header(reader: _Compact) -> dict:
    """type, uncompressed, compressed, values, encoding (0 for a dictionary page: PLAIN)."""
    page = {"type": None, "uncompressed": None, "compressed": None, "values": 0, "encoding": _PLAIN}
    for field_id, kind in reader.fields():
        if field_id in (1, 2, 3) and kind == 5:
            page[("type", "uncompressed", "compressed")[field_id - 1]] = reader.zigzag()
        elif field_id in (5, 7, 8) and kind == 12:
            for inner_id, inner_kind in reader.fields():
                if inner_id == 1 and inner_kind == 5:
                    page["values"] = reader.zigzag()
                elif ((field_id in (5, 7) and inner_id == 2) or (field_id == 8 and inner_id == 4)) and inner_kind == 5:
                    page["encoding"] = reader.zigzag()
                else:
                    reader.skip(inner_kind)
        else:
            reader.skip(kind)
    if page["type"] is None or page["compressed"] is None or page["uncompressed"] is None \
            or page["compressed"] < 0 or page["uncompressed"] < 0 or page["values"] < 0:
        raise _Bad("a page header without its type or sizes")
    return page


def _pages(data: memoryview, start: int, end: int, budget: list[int]):
    """Every page header of one column chunk (the bytes ``start:end`` of the file)."""
    pos = start
    while pos < end:
        budget[0] -= 1
        if budget[0] < 0:
            raise EvalSuiteError(f"more than {MAX_PAGES:,} pages in the columns read; the file's pages are too small "
                                 "to check (write it with the default page size)")
        reader = _Compact(data, pos, end)
        page = _page_header(reader)
        yield page
        pos = reader.pos + page["compressed"]


# ----------------------------------------------------------------------------------------------
# Bounds.


class DecodedSize:
    """The decoded-size bound of the columns read: ``bound`` in bytes, and the dictionary leaves
    (by path) with their part of it, which an exact count may lower."""

    def __init__(self) -> None:
        self.bound = 0
        self.dictionary_leaves: dict[str, int] = {}  # leaf path -> its part of the bound


def _list_head(reader: _Compact) -> tuple[int, int]:
    head = reader.byte()
    size = head >> 4
    if size == 15:
        size = reader.varint()
    return size, head & 0x0F


def _column_chunks(data: memoryview) -> list[list[tuple[int, int]]]:
    """(start, compressed size) of every column chunk, per row group, read from the footer here.

    pyarrow's ``RowGroupMetaData.column(j)`` aborts the process (C++ terminate, not a Python
    exception) on a footer whose size statistics do not match the schema ("Definition level
    histogram size mismatch"), so the offsets are read from the footer's Thrift directly:
    FileMetaData.row_groups (4) > RowGroup.columns (1) > ColumnChunk.meta_data (3) >
    total_compressed_size (7), data_page_offset (9), dictionary_page_offset (11).
    """
    if len(data) < 12 or bytes(data[-4:]) != b"PAR1":
        raise _Bad("no plain Parquet footer")
    length = int.from_bytes(data[-8:-4], "little")
    end = len(data) - 8
    if length > end - 4:
        raise _Bad("a footer longer than the file")
    reader = _Compact(data, end - length, end)
    groups: list[list[tuple[int, int]]] = []
    for field_id, kind in reader.fields():
        if field_id != 4 or kind != 9:
            reader.skip(kind)
            continue
        size, element = _list_head(reader)
        if element != 12:
            raise _Bad("row groups that are not structs")
        for _ in range(size):
            chunks: list[tuple[int, int]] = []
            for group_id, group_kind in reader.fields():
                if group_id != 1 or group_kind != 9:
                    reader.skip(group_kind)
                    continue
                count, chunk_kind = _list_head(reader)
                if chunk_kind != 12:
                    raise _Bad("column chunks that are not structs")
                for _ in range(count):
                    chunks.append(_chunk_extent(reader))
            groups.append(chunks)
    return groups


def _chunk_extent(reader: _Compact) -> tuple[int, int]:
    found: dict[int, int] = {}
    for chunk_id, chunk_kind in reader.fields():
        if chunk_id != 3 or chunk_kind != 12:
            reader.skip(chunk_kind)
            continue
        for meta_id, meta_kind in reader.fields():
            if meta_id in (7, 9, 11) and meta_kind == 6:
                found[meta_id] = reader.zigzag()
            else:
                reader.skip(meta_kind)
    if 7 not in found or 9 not in found:
        raise _Bad("a column chunk without its offset or size")
    start = found[9]
    dictionary = found.get(11)
    if dictionary and dictionary < start:  # some writers set 0 for "none"
        start = dictionary
    return start, found[7]


def _dictionaries(array):
    """The dictionaries of the dictionary-encoded leaves inside ``array`` (nested lists and structs)."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        yield array.dictionary
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        yield from _dictionaries(array.values)
    elif pa.types.is_map(kind):
        yield from _dictionaries(array.keys)
        yield from _dictionaries(array.items)
    elif pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            yield from _dictionaries(array.field(i))


class _DictionaryChunk:
    """A byte-array column chunk with a dictionary page: its dictionary-encoded values, and the
    longest entry (first bounded by the dictionary page's size, then measured when needed)."""

    def __init__(self, row_group: int, top: str, leaf: str, page_bytes: int) -> None:
        self.row_group, self.top, self.leaf = row_group, top, leaf
        self.values = 0
        self.longest = page_bytes  # no entry is longer than its page

    @property
    def part(self) -> int:
        return self.values * (4 + self.longest)


def decoded_size(parquet, data, columns: list[str] | None, source: str,
                 budget: int | None = None) -> DecodedSize:
    """A bound of the decoded size of ``columns`` (top-level names; None: all) of an opened
    ``pyarrow.parquet.ParquetFile`` whose bytes are ``data``, from its page headers.

    Dictionary-encoded values are first bounded by their dictionary page's size; when the bound is
    past ``budget``, the longest entry of the largest dictionaries is measured (pyarrow decodes the
    dictionary page of one row group alone), largest first, until the bound is within it.

    Raises EvalSuiteError naming ``source`` when a page header cannot be read or the file has more
    than :data:`MAX_PAGES` pages in those columns.
    """
    meta = parquet.metadata
    schema = parquet.schema
    wanted = None if columns is None else set(columns)
    view = memoryview(data)
    size = DecodedSize()
    pages_left = [MAX_PAGES]
    leaves = [schema.column(i) for i in range(len(schema))]
    dictionary_chunks: list[_DictionaryChunk] = []
    fixed = 0
    try:
        groups = _column_chunks(view)
        if len(groups) != meta.num_row_groups or any(len(chunks) != len(leaves) for chunks in groups):
            raise _Bad("row groups or column chunks that do not match the schema")
        for rg, chunks in enumerate(groups):
            for j, leaf in enumerate(leaves):
                top = leaf.path.split(".")[0]
                if wanted is not None and top not in wanted:
                    continue
                start, compressed = chunks[j]
                end = start + compressed
                if start < 0 or end > len(view):
                    raise _Bad("a column chunk outside the file")
                width = _WIDTH.get(leaf.physical_type)
                if leaf.physical_type == "FIXED_LEN_BYTE_ARRAY":
                    width = max(int(leaf.length or 0), 1)
                dictionary = None
                for index, page in enumerate(_pages(view, start, end, pages_left)):
                    values = page["values"]
                    if page["type"] == _DICTIONARY_PAGE:
                        if index != 0:
                            raise _Bad("a dictionary page after the first page of a column chunk")
                        fixed += page["uncompressed"]
                        if width is None:
                            dictionary = _DictionaryChunk(rg, top, leaf.path, page["uncompressed"])
                            dictionary_chunks.append(dictionary)
                        continue
                    if page["type"] not in (_DATA_PAGE, _DATA_PAGE_V2):
                        continue  # index pages hold no values
                    if width is not None:
                        fixed += values * width
                        continue
                    encoding = page["encoding"]
                    if encoding in (_PLAIN_DICTIONARY, _RLE_DICTIONARY) and dictionary is not None:
                        dictionary.values += values
                    elif encoding in (_PLAIN, _DELTA_LENGTH):
                        fixed += page["uncompressed"] + 4 * values
                    else:  # DELTA_BYTE_ARRAY and anything else: a value is at most the page
                        fixed += values * (4 + page["uncompressed"])
    except _Bad as exc:
        raise EvalSuiteError(f"not a readable Parquet file ({exc})", source=source) from None
    total = fixed + sum(d.part for d in dictionary_chunks)
    if budget is not None and total > budget and fixed <= budget and dictionary_chunks:
        total = _measure_longest(data, dictionary_chunks, fixed, budget)
    size.bound = total
    for d in dictionary_chunks:
        size.dictionary_leaves[d.leaf] = size.dictionary_leaves.get(d.leaf, 0) + d.part
    return size


def _measure_longest(data, chunks: list[_DictionaryChunk], fixed: int, budget: int) -> int:
    """Measure the longest entry of dictionary pages, largest part first, until the bound is within
    ``budget`` (or every one is measured); returns the bound."""
    import pyarrow.parquet as pq

    reader = pq.ParquetFile(pa.BufferReader(pa.py_buffer(data)), read_dictionary=sorted({c.leaf for c in chunks}))
    total = fixed + sum(c.part for c in chunks)
    for chunk in sorted(chunks, key=lambda c: c.part, reverse=True):
        if total <= budget or chunk.values == 0:
            break
        before = chunk.part
        for batch in reader.iter_batches(batch_size=1, row_groups=[chunk.row_group], columns=[chunk.top]):
            lengths = [pc.max(pc.binary_length(d)).as_py() or 0 for d in _dictionaries(batch.column(0)) if len(d)]
            if lengths:  # no dictionary came with the first row: keep the page's bound
                chunk.longest = min(chunk.longest, max(lengths))
            break
        total += chunk.part - before
    return total


def _exact_size(array) -> int:
    """Bytes of ``array`` once its dictionaries are decoded (dictionary leaves: each index's entry
    length plus an offset; anything else: its buffers)."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary).to_numpy(zero_copy_only=False)
        indices = array.indices.drop_null().to_numpy(zero_copy_only=False)
        return int(lengths[indices].sum()) + 4 * len(array) if len(indices) else 4 * len(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _exact_size(array.values) + 8 * len(array)
    if pa.types.is_struct(kind):
        return sum(_exact_size(array.field(i)) for i in range(kind.num_fields)) + len(array)
    return array.nbytes


def _plain_type(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(kind):
        return kind.value_type
    if pa.types.is_list(kind):
        return pa.list_(pa.field(kind.value_field.name, _plain_type(kind.value_type), kind.value_field.nullable))
    if pa.types.is_large_list(kind):
        return pa.large_list(pa.field(kind.value_field.name, _plain_type(kind.value_type), kind.value_field.nullable))
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _plain_type(f.type), f.nullable) for f in kind])
    return kind


def read_within_budget(parquet, data, columns: list[str] | None, limits: ReadLimits, source: str) -> pa.Table:
    """Read ``columns`` of an opened ParquetFile only when they decode to at most ``limits.max_bytes``.

    The page-header bound first (:func:`decoded_size`); past the budget, dictionary columns are
    read as dictionaries and counted exactly; past it still, an EvalSuiteError naming the file.
    """
    import pyarrow.parquet as pq

    size = decoded_size(parquet, data, columns, source, budget=limits.max_bytes)
    if size.bound <= limits.max_bytes:
        return parquet.read(columns=columns)
    loose = sum(size.dictionary_leaves.values())
    if size.bound - loose > limits.max_bytes or not size.dictionary_leaves:
        raise _too_large(size.bound, limits, source)
    as_dictionaries = pq.ParquetFile(pa.BufferReader(pa.py_buffer(data)), read_dictionary=list(size.dictionary_leaves))
    table = as_dictionaries.read(columns=columns)
    exact = (size.bound - loose) + sum(_exact_size(chunk) for name in table.column_names
                                       for chunk in table.column(name).chunks
                                       if any(True for _ in _dictionaries(chunk)))
    if exact > limits.max_bytes:
        raise _too_large(exact, limits, source)
    columns_out = []
    for name in table.column_names:
        column = table.column(name)
        plain = _plain_type(column.type)
        columns_out.append(column.cast(plain) if plain != column.type else column)
    return pa.table(columns_out, names=table.column_names)


def _too_large(size: int, limits: ReadLimits, source: str) -> EvalSuiteError:
    return EvalSuiteError(f"the columns read decode to more than {size_text(limits.max_bytes)} (limit "
                          f"max_bytes={limits.max_bytes}), though the file is smaller: its pages are dictionary- or "
                          "run-length encoded; the file was not decoded", source=source, field="bytes",
                          value=f"up to {size:,} bytes")
