"""64-bit keys for id strings, so runs and qrels are joined and checked with numpy, not dicts.

A key is a hash, so two different ids may share one. Every use of a key therefore verifies
matches on the strings themselves (cheap: only matched rows are compared) and falls back to an
exact join when a collision is found. Keys are an accelerator, never the source of truth.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .parallel import parallel_map
from .arrays import flags, take

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
# Odd 64-bit multiplier between the 8-byte words of a string.
_MULTIPLIER = _U64(0xD6E8FEB86659FD93)
# Longer ids are hashed one by one (see _slice_keys).
_LONG_ID = 256
# Rows hashed per step (in two threads): bounds the temporary arrays to a few MB whatever the run
# size (1 << 20 held about 190 MiB of them at once on a 7-million-line run: the peak of read_run).
_SLICE_ROWS = 1 << 18


# _KEEP[n]: a mask of the low n bytes of a little-endian word (n = 0..8).
_KEEP = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


def mix64(h: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """SplitMix64 finaliser: spreads every input bit over the whole 64-bit word.

    With ``out`` (which may be ``h`` itself) the result is written there, without temporaries
    beyond one shifted copy.
    """
    h = np.asarray(h, dtype=np.uint64)
    if out is None:
        out = h.copy()
    elif out is not h:
        np.copyto(out, h)
    shifted = np.empty_like(out)
    with np.errstate(over="ignore"):
        for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            np.right_shift(out, _U64(shift), out=shifted)
            np.bitwise_xor(out, shifted, out=out)
            if factor is not None:
                np.multiply(out, _U64(factor), out=out)
    return out


def _slice_keys(arr: pa.Array) -> np.ndarray:
    """Hash every string of one Arrow string array (no nulls) to a uint64.

    The string's bytes are read 8 at a time as little-endian words (an unaligned view of the
    data buffer, gathered at each string's offset), so a 7-digit id costs one gather and a
    45-byte MS MARCO v2.1 segment id six. The key starts from the length; each word is xored
    in, multiplied and xor-shifted; SplitMix64's finaliser (:func:`mix64`) ends it.
    """
    n = len(arr)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    off_type = np.int64 if arr.type == pa.large_string() else np.int32
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=off_type, count=n + 1, offset=arr.offset * np.dtype(off_type).itemsize)
    offsets = offsets.astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    size = last - first
    padded = np.zeros(size + 8, dtype=np.uint8)  # 8 zero bytes so a word never reads past the end
    if size:
        padded[:size] = np.frombuffer(buffers[2], dtype=np.uint8, count=size, offset=first)
    words = np.ndarray(shape=(size + 1,), dtype="<u8", buffer=padded, strides=(1,))
    lengths = np.diff(offsets)
    starts = offsets[:-1] - first
    h = lengths.astype(np.uint64) * _GOLDEN
    # Ids longer than _LONG_ID bytes are hashed one by one with BLAKE2b (they are rare, and the
    # word loop below costs one pass over all active rows per 8 bytes of the longest id).
    shortest, longest = int(lengths.min()), int(lengths.max())
    if shortest > 0 and longest <= _LONG_ID:
        active = np.arange(n)  # every row: the loop below then needs no gathers on its first word
    else:
        for row in np.flatnonzero(lengths > _LONG_ID).tolist():
            digest = hashlib.blake2b(padded[starts[row]:starts[row] + lengths[row]].tobytes(), digest_size=8).digest()
            h[row] = np.uint64(int.from_bytes(digest, "little"))
        active = np.flatnonzero((lengths > 0) & (lengths <= _LONG_ID))
    shifted = np.empty(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        j = 0
        while active.size:
            every = active.size == n  # the usual first words: no gathers through ``active``
            word = words[(starts if every else starts[active]) + j]
            if shortest - j < 8:  # some id ends in this word: zero the bytes past its end
                remaining = (lengths if every else lengths[active]) - j
                np.bitwise_and(word, _KEEP[np.minimum(remaining, 8)], out=word)
            # One multiply and one xor-shift per word, the full finaliser once at the end: a
            # multiply by an odd number and an xor-shift are each one-to-one, so two ids of one
            # length that differ in one word never share a key (mix64 on every word was half
            # the hash's time on MS MARCO v2's 27-byte ids).
            np.bitwise_xor(word, h if every else h[active], out=word)
            np.multiply(word, _MULTIPLIER, out=word)
            np.right_shift(word, _U64(29), out=shifted[:word.size])
            np.bitwise_xor(word, shifted[:word.size], out=word)
            if every:
                h = word
            else:
                h[active] = word
            j += 8
            if not every or shortest <= j:  # else every id has more bytes: all rows stay
                active = active[(lengths if every else lengths[active]) > j]
    return mix64(h, out=h)


def _slices(arr: pa.Array) -> list[pa.Array]:
    if arr.type not in (pa.string(), pa.large_string()):
        arr = arr.cast(pa.string())
    return [arr.slice(i, _SLICE_ROWS) for i in range(0, len(arr), _SLICE_ROWS)] or [arr]


def hash_bytes(value: bytes) -> np.uint64:
    """Key of one id given as UTF-8 bytes (the same function as :func:`string_keys`)."""
    return string_keys(pa.array([value.decode("utf-8")]))[0]


def string_keys(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Return a uint64 hash key per string of ``values`` (Arrow string array without nulls).

    Equal strings always give equal keys; different strings give different keys except with
    probability about 2**-64 per pair, which callers detect by comparing the strings.
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    slices = [piece for chunk in chunks for piece in _slices(chunk)]
    out = np.empty(sum(len(piece) for piece in slices), dtype=np.uint64)
    starts = np.cumsum([0] + [len(piece) for piece in slices[:-1]]).tolist()

    def fill(job: tuple[int, pa.Array]) -> None:
        # Each slice's keys straight into the result (a list of them, then joined, held the
        # keys twice).
        start, piece = job
        out[start:start + len(piece)] = _slice_keys(piece)

    parallel_map(fill, zip(starts, slices))
    return out


def pair_keys(group: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Combine a small integer group (query index) and a string key into one uint64 key."""
    with np.errstate(over="ignore"):
        return mix64(keys ^ mix64(group.astype(np.uint64) + _U64(0x632BE59BD9B4E019)))


def group_keys(group: np.ndarray, keys: np.ndarray, n_groups: int) -> np.ndarray:
    """One uint64 per (group, string key) that sorts by group first.

    With fewer than 2**24 groups the group index fills the top 24 bits and the string key's
    top 40 bits the rest, so rows that are grouped already (a run's queries, a record's list
    items) stay nearly sorted: sorting and searching them is cheap and cache-friendly. Two
    different strings of one group share a key with odds about 2**-40, which callers detect by
    comparing the strings. With more groups it falls back to :func:`pair_keys`.
    """
    if n_groups < (1 << 24):
        return (group.astype(np.uint64) << _U64(40)) | (keys >> _U64(24))
    return pair_keys(group, keys)


def strings_equal(a: pa.Array | pa.ChunkedArray, a_idx: np.ndarray, b: pa.Array | pa.ChunkedArray, b_idx: np.ndarray) -> np.ndarray:
    """Elementwise ``a[a_idx] == b[b_idx]`` for two Arrow string arrays, as a numpy bool array."""
    if len(a_idx) == 0:
        return np.zeros(0, dtype=bool)
    # Chunk by chunk: ChunkedArray.take joins every chunk of a string column first (0.43 s for
    # the 16,000 judged rows of a 7M-line MS MARCO v2 run, 0.003 s this way).
    left = take(a, a_idx)
    right = take(b, b_idx)
    if left.type != right.type:
        right = right.cast(left.type)
    return flags(pc.equal(left, right))
