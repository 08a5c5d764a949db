"""64-bit keys for id strings, so runs and qrels are joined and checked with numpy, not dicts.

A key is a hash, so two different ids may share one. Every use of a key therefore verifies
matches on the strings themselves (cheap: only matched rows are compared) and falls back to an
exact join when a collision is found. Keys are an accelerator, never the source of truth.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_U64 = np.uint64
# Odd 64-bit multiplier for the polynomial string hash (odd, so invertible modulo 2**64).
_POLY = _U64((0x100000001B3 * 0x9E3779B1 | 1) & 0xFFFFFFFFFFFFFFFF)
_MAX_POWERS = 1 << 12


def _powers(n: int) -> np.ndarray:
    """Return ``_POLY ** arange(n)`` modulo 2**64."""
    out = np.empty(n, dtype=np.uint64)
    out[0] = 1
    with np.errstate(over="ignore"):
        if n > 1:
            out[1:] = _POLY
            out = np.cumprod(out, dtype=np.uint64)
    return out


_POW = _powers(_MAX_POWERS)


def mix64(h: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser: spreads every input bit over the whole 64-bit word."""
    h = np.asarray(h, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = h ^ (h >> _U64(30))
        h = h * _U64(0xBF58476D1CE4E5B9)
        h = h ^ (h >> _U64(27))
        h = h * _U64(0x94D049BB133111EB)
        h = h ^ (h >> _U64(31))
    return h


def _chunk_keys(arr: pa.Array) -> np.ndarray:
    """Hash every string of one Arrow string array (no nulls) to a uint64."""
    n = len(arr)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.type == pa.large_string():
        off_type = np.int64
    else:
        off_type = np.int32
    width = np.dtype(off_type).itemsize
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=off_type, count=n + 1, offset=arr.offset * width)
    first, last = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(buffers[2], dtype=np.uint8, count=last - first, offset=first) if last > first else np.empty(0, np.uint8)
    lengths = np.diff(offsets).astype(np.int64)
    starts = (offsets[:-1] - first).astype(np.int64)
    if len(data) == 0:
        return mix64(lengths.astype(np.uint64))
    if int(lengths.max()) > _MAX_POWERS:
        # Ids this long are unheard of; hash them one by one rather than grow the table.
        return np.fromiter(
            (hash_bytes(s.encode("utf-8")) for s in arr.to_pylist()), dtype=np.uint64, count=n
        )
    position = np.arange(len(data), dtype=np.int64) - np.repeat(starts, lengths)
    with np.errstate(over="ignore"):
        weighted = data.astype(np.uint64) * _POW[position]
        # reduceat needs valid, increasing start indices; empty strings (length 0) are given 0.
        nonempty = lengths > 0
        sums = np.zeros(n, dtype=np.uint64)
        if nonempty.all():
            sums = np.add.reduceat(weighted, starts)
        else:
            sums[nonempty] = np.add.reduceat(weighted, starts[nonempty])
        return mix64(sums ^ (lengths.astype(np.uint64) * _U64(0x9E3779B97F4A7C15)))


def hash_bytes(value: bytes) -> np.uint64:
    """Key of one id given as UTF-8 bytes (the same function as :func:`string_keys`)."""
    return string_keys(pa.array([value.decode("utf-8")]))[0]


def string_keys(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Return a uint64 hash key per string of ``values`` (Arrow string array without nulls).

    Equal strings always give equal keys; different strings give different keys except with
    probability about 2**-64 per pair, which callers detect by comparing the strings.
    """
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 0:
            return np.empty(0, dtype=np.uint64)
        return np.concatenate([_chunk_keys(c) for c in values.chunks])
    return _chunk_keys(values)


def pair_keys(group: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Combine a small integer group (query index) and a string key into one uint64 key."""
    with np.errstate(over="ignore"):
        return mix64(keys ^ mix64(group.astype(np.uint64) + _U64(0x632BE59BD9B4E019)))


def strings_equal(a: pa.Array | pa.ChunkedArray, a_idx: np.ndarray, b: pa.Array | pa.ChunkedArray, b_idx: np.ndarray) -> np.ndarray:
    """Elementwise ``a[a_idx] == b[b_idx]`` for two Arrow string arrays, as a numpy bool array."""
    if len(a_idx) == 0:
        return np.zeros(0, dtype=bool)
    left = a.take(pa.array(a_idx))
    right = b.take(pa.array(b_idx))
    left = left.combine_chunks() if isinstance(left, pa.ChunkedArray) else left
    right = right.combine_chunks() if isinstance(right, pa.ChunkedArray) else right
    if left.type != right.type:
        right = right.cast(left.type)
    return pc.equal(left, right).to_numpy(zero_copy_only=False)
