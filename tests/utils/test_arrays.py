"""evalsuite.utils.arrays against pyarrow's own conversions and gathers (the reference)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from evalsuite.utils import parallel
from evalsuite.utils.arrays import flags, gather_in_parts, has_empty_strings, numbers, take


def _chunked_strings(rng, n_chunks):
    return pa.chunked_array([[f"d{rng.integers(0, 10**6)}" for _ in range(rng.integers(0, 40))]
                             for _ in range(n_chunks)], pa.string())


@pytest.mark.parametrize("n_chunks", [0, 1, 2, 7])
def test_take_equals_pyarrows_take_for_any_order_and_repeats(n_chunks):
    rng = np.random.default_rng(n_chunks)
    for _ in range(50):
        values = _chunked_strings(rng, n_chunks)
        if len(values) == 0:
            assert take(values, np.zeros(0, dtype=np.int64)).to_pylist() == []
            continue
        rows = rng.integers(0, len(values), size=rng.integers(0, 3 * len(values)))
        expected = values.take(pa.array(rows, pa.int64())).to_pylist()
        got = take(values, rows)
        assert isinstance(got, pa.Array) and got.type == pa.string()
        assert got.to_pylist() == expected


def test_take_of_a_plain_array_and_a_sliced_chunk():
    values = pa.chunked_array([pa.array(["a", "b", "c", "d"]).slice(1), pa.array(["e"])])
    assert take(values, [3, 0, 2]).to_pylist() == ["e", "b", "d"]
    assert take(pa.array(["x", "y"]), [1, 1]).to_pylist() == ["y", "y"]


@pytest.mark.parametrize("rows", [[-1], [3]])
def test_take_refuses_positions_outside_the_array(rows):
    with pytest.raises(IndexError):
        take(pa.chunked_array([["a"], ["b", "c"]]), rows)


@pytest.mark.parametrize("arrow_type", [pa.int8(), pa.int32(), pa.int64(), pa.uint16(), pa.float32(), pa.float64()])
def test_numbers_equal_to_numpy_with_offsets_and_chunks(arrow_type):
    rng = np.random.default_rng(1)
    base = pa.array(rng.integers(0, 100, size=50)).cast(arrow_type)
    for array in (base, base.slice(7, 20), base.slice(50), pa.chunked_array([base.slice(3, 5), base.slice(40)], arrow_type)):
        expected = array.to_numpy() if isinstance(array, pa.ChunkedArray) else array.to_numpy(zero_copy_only=False)
        got = numbers(array)
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


def test_numbers_refuses_nulls_and_strings():
    with pytest.raises(TypeError, match="null"):
        numbers(pa.array([1.0, None]))
    with pytest.raises(TypeError, match="numeric"):
        numbers(pa.array(["1"]))


def test_flags_equal_to_the_boolean_values_at_every_offset():
    rng = np.random.default_rng(2)
    values = rng.random(41) < 0.5
    array = pa.array(values)
    for start in range(0, 41):
        for length in (0, 1, 8, 41 - start):
            piece = array.slice(start, length)
            assert flags(piece).tolist() == values[start:start + length].tolist()
    chunked = pa.chunked_array([array.slice(3, 9), array.slice(30)])
    assert flags(chunked).tolist() == values[3:12].tolist() + values[30:].tolist()


def test_flags_refuses_nulls_and_other_types():
    with pytest.raises(TypeError, match="null"):
        flags(pa.array([True, None]))
    with pytest.raises(TypeError, match="boolean"):
        flags(pa.array([1, 0]))


@pytest.mark.parametrize("n_workers", [1, 2, 8])
@pytest.mark.parametrize("n_rows", [0, 1, 5, 1000])
def test_gather_in_parts_equals_pyarrows_take(monkeypatch, n_workers, n_rows):
    """Split into up to ``n_workers`` parts once ``min_rows`` allows; pieces in order, each row once."""
    monkeypatch.setattr(parallel, "workers", lambda: n_workers)
    monkeypatch.setattr("evalsuite.utils.arrays.workers", lambda: n_workers)
    rng = np.random.default_rng(n_rows)
    values = pa.array([f"d{i}-{rng.integers(0, 99)}" for i in range(max(n_rows, 1))], pa.string())
    rows = rng.permutation(n_rows).astype(np.int32)
    got = gather_in_parts(values, rows, min_rows=2)
    assert got.type == pa.string()
    assert got.to_pylist() == values.take(pa.array(rows, pa.int32())).to_pylist()
    expected_parts = min(n_workers, max(1, n_rows // 2))
    assert (got.num_chunks if isinstance(got, pa.ChunkedArray) else 1) == expected_parts


@pytest.mark.parametrize("chunks, expected", [
    ([["d1", "d2"], [], ["d3"]], False),           # an empty chunk is not an empty string
    ([["d1", None], [None]], False),               # nor is a null
    ([["d1"], ["d2", "d3"], ["d4", ""]], True),    # in the last chunk
    ([[""]], True),
    ([[]], False),
])
def test_has_empty_strings_looks_at_every_chunk(chunks, expected):
    values = pa.chunked_array(chunks, pa.string())
    assert has_empty_strings(values) is expected
    assert has_empty_strings(values.combine_chunks()) is expected
    # The same answer as the lengths of the whole column at once.
    lengths = pc.binary_length(values).to_pylist()
    assert expected == (0 in lengths)
