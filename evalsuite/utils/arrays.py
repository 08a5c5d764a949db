"""Arrow arrays to numpy and gathers from chunked arrays, without the costs pyarrow's own calls carry.

Two measured costs (pyarrow 26, a 7-million-line run; ``benchmarks/README.md``, issue 31):

- ``Array.to_numpy`` goes through pyarrow's pandas conversion, which imports pandas on first
  use (0.25 s of a 1.7 s process) even for a float column. A column without nulls is a plain
  buffer, so :func:`numbers` and :func:`flags` read it with numpy directly.
- ``pa.array`` of a numpy array or a list imports pandas too (it asks whether the object is a
  pandas one); :func:`positions` and :func:`strings` build the same arrays from buffers.
- ``ChunkedArray.take`` of a string column joins every chunk first: 16,000 rows gathered
  from 7M MS MARCO v2 doc ids in 23 chunks took 0.43 s, the same rows chunk by chunk 0.003 s
  (:func:`take`).
- ``Array.take`` runs on one thread: a random permutation of 7M doc ids took 0.41-0.43 s, the
  same gather in two halves on two threads 0.21 s (:func:`gather_in_parts`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .parallel import parallel_map, workers

__all__ = ["numbers", "flags", "positions", "strings", "take", "gather_in_parts", "has_empty_strings"]


def numbers(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a numeric Arrow array without nulls as a numpy array (a view where possible).

    Parameters
    ----------
    array : pyarrow integer or floating-point Array or ChunkedArray, no nulls
        A chunked array's chunks are joined into one new numpy array.

    Returns
    -------
    numpy.ndarray, shape (len(array),)
        Of the matching numpy dtype (int32 for int32, float64 for double ...); read-only when
        it is a view of the Arrow buffer.

    Raises
    ------
    TypeError
        ``array`` is not of a fixed-width numeric type, or holds nulls (its buffer holds
        arbitrary values where the nulls are).

    Examples
    --------
    >>> numbers(pa.array([1.5, 2.0])).tolist()
    [1.5, 2.0]
    >>> numbers(pa.chunked_array([[1, 2], [3]], pa.int32())).tolist()
    [1, 2, 3]
    """
    if isinstance(array, pa.ChunkedArray):
        dtype = _numpy_dtype(array.type)
        if array.num_chunks == 1:
            return numbers(array.chunk(0))
        out = np.empty(len(array), dtype=dtype)
        at = 0
        for chunk in array.chunks:
            out[at:at + len(chunk)] = numbers(chunk)
            at += len(chunk)
        return out
    dtype = _numpy_dtype(array.type)
    if array.null_count:
        raise TypeError(f"{array.null_count} null(s) in a {array.type} array: no numpy view without a fill value")
    data = array.buffers()[1]
    if data is None or len(array) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _numpy_dtype(arrow_type: pa.DataType) -> np.dtype:
    if not (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)):
        raise TypeError(f"not a fixed-width numeric type: {arrow_type}")
    return np.dtype(arrow_type.to_pandas_dtype())


def flags(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow array without nulls as a numpy bool array (a new array: Arrow packs bits).

    Parameters
    ----------
    array : pyarrow BooleanArray or ChunkedArray of booleans, no nulls

    Returns
    -------
    numpy.ndarray of bool, shape (len(array),)

    Raises
    ------
    TypeError
        Not a boolean array, or one with nulls.

    Examples
    --------
    >>> flags(pa.array([True, False, True])).tolist()
    [True, False, True]
    >>> flags(pa.array([False] * 9 + [True]).slice(8)).tolist()  # an offset inside a byte
    [False, True]
    """
    if isinstance(array, pa.ChunkedArray):
        parts = [flags(chunk) for chunk in array.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
    if not pa.types.is_boolean(array.type):
        raise TypeError(f"not a boolean array: {array.type}")
    if array.null_count:
        raise TypeError(f"{array.null_count} null(s) in a boolean array")
    n = len(array)
    if n == 0:
        return np.zeros(0, dtype=bool)
    first, last = array.offset, array.offset + n
    packed = np.frombuffer(array.buffers()[1], dtype=np.uint8, count=(last + 7) // 8)
    return np.unpackbits(packed, bitorder="little")[first:last].astype(bool)


def positions(rows) -> pa.Array:
    """An integer Arrow array of ``rows`` (what ``pa.array(rows)`` gives for integers, without pandas).

    Parameters
    ----------
    rows : array-like of int, shape (m,)
        An int32 numpy array is wrapped as it is (a gather's indices need not be widened:
        a 7-million-row permutation would be copied to 56 MB of int64 first).

    Returns
    -------
    pyarrow.Array of int32 (for an int32 numpy array) or int64, length m, no nulls

    Examples
    --------
    >>> positions(np.array([3, 1], dtype=np.int32))
    <pyarrow.lib.Int32Array object at ...>
    [
      3,
      1
    ]
    """
    if isinstance(rows, np.ndarray) and rows.dtype == np.int32:
        values, arrow_type = np.ascontiguousarray(rows), pa.int32()
    else:
        values, arrow_type = np.ascontiguousarray(rows, dtype=np.int64), pa.int64()
    if values.ndim != 1:
        raise ValueError(f"positions must be one-dimensional, got shape {values.shape}")
    return pa.Array.from_buffers(arrow_type, values.size, [None, pa.py_buffer(values)])


def strings(values) -> pa.Array:
    """A string Arrow array of Python strings (``pa.array(values, pa.string())`` without pandas).

    Parameters
    ----------
    values : sequence of str, length m

    Returns
    -------
    pyarrow.Array of string (large_string past 2 GiB of text), length m, no nulls

    Raises
    ------
    UnicodeEncodeError
        A string that is not valid Unicode (a lone surrogate).
    TypeError
        An element that is not a str.

    Examples
    --------
    >>> strings(["q1", "", "é"]).to_pylist()
    ['q1', '', 'é']
    """
    encoded = [value.encode("utf-8") for value in values]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    total = int(lengths.sum())
    arrow_type, offset_type = (pa.string(), np.int32) if total < (1 << 31) else (pa.large_string(), np.int64)
    offsets = np.zeros(len(encoded) + 1, dtype=offset_type)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(arrow_type, len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def take(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``values[rows]`` as one Arrow array, gathered chunk by chunk from a chunked array.

    Parameters
    ----------
    values : pyarrow Array or ChunkedArray
    rows : array-like of int, shape (m,)
        Positions in ``values``, in any order, repeats allowed; each in ``[0, len(values))``.

    Returns
    -------
    pyarrow.Array, length m
        Of ``values``' type, one chunk.

    Raises
    ------
    IndexError
        A position outside ``[0, len(values))``.

    Examples
    --------
    >>> docs = pa.chunked_array([["d1", "d2"], ["d3"]])
    >>> take(docs, [2, 0, 2]).to_pylist()
    ['d3', 'd1', 'd3']
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= len(values)):
        raise IndexError(f"positions outside [0, {len(values)})")
    if not isinstance(values, pa.ChunkedArray):
        return values.take(positions(rows))
    if values.num_chunks == 0:
        return pa.array([], values.type)
    if values.num_chunks == 1:
        return values.chunk(0).take(positions(rows))
    bounds = np.cumsum([0] + [len(chunk) for chunk in values.chunks])
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    chunk_of = np.searchsorted(bounds, ordered, side="right") - 1
    cuts = np.searchsorted(chunk_of, np.arange(values.num_chunks + 1))
    parts = [values.chunk(c).take(positions(ordered[cuts[c]:cuts[c + 1]] - bounds[c]))
             for c in range(values.num_chunks) if cuts[c + 1] > cuts[c]]
    gathered = pa.concat_arrays(parts) if parts else pa.array([], values.type)
    if np.array_equal(order, np.arange(order.size)):
        return gathered
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    return gathered.take(positions(back))


def gather_in_parts(values: pa.Array, rows: np.ndarray, min_rows: int = 1 << 20) -> pa.Array | pa.ChunkedArray:
    """``values[rows]``, gathered in contiguous parts of ``rows`` on the shared thread pool
    (Arrow lets go of the GIL while it gathers).

    Parameters
    ----------
    values : pyarrow Array
        One chunk (a chunked array's ``take`` joins its chunks first: join them before).
    rows : numpy array of int, shape (m,)
        Positions in ``values``, each in ``[0, len(values))`` (Arrow raises ``IndexError`` on
        one outside).
    min_rows : int
        Fewer rows than this are gathered in one piece on this thread; a part is never smaller.

    Returns
    -------
    pyarrow.Array or ChunkedArray, length m
        Of ``values``' type; a chunked array of one chunk per part when it was split.

    Examples
    --------
    >>> docs = pa.array(["d1", "d2", "d3"])
    >>> gather_in_parts(docs, np.array([2, 0, 1]), min_rows=1).to_pylist()
    ['d3', 'd1', 'd2']
    """
    parts = min(workers(), max(1, rows.size // max(min_rows, 1)))
    if parts < 2:
        return values.take(positions(rows))
    return pa.chunked_array(parallel_map(lambda part: values.take(positions(part)), np.array_split(rows, parts)),
                            type=values.type)


def has_empty_strings(values: pa.Array | pa.ChunkedArray) -> bool:
    """Whether any string of ``values`` is empty, looked at one chunk at a time.

    The lengths of a whole 22M-line doc id column at once were 84 MiB beside the parsed table, at
    the top of the dashboard's reader's memory; a chunk's are the size of one parse block's.

    Parameters
    ----------
    values : pyarrow Array or ChunkedArray of string or binary
        Nulls are not looked at (``binary_length`` of a null is null).

    Returns
    -------
    bool
        True when some non-null value has length 0.

    Examples
    --------
    >>> has_empty_strings(pa.chunked_array([["d1", "d2"], ["d3"]]))
    False
    >>> has_empty_strings(pa.chunked_array([["d1"], ["", "d3"]]))
    True
    """
    import pyarrow.compute as pc

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    return any(len(chunk) and pc.min(pc.binary_length(chunk)).as_py() == 0 for chunk in chunks)
