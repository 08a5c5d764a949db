"""Parquet's decoded size bounded before decoding (evalsuite.io._parquet_size, issue 29): dictionary
and run-length encoded bombs refused from their page headers, loose bounds counted exactly, repeated
column names refused, and the bound never below what pyarrow decodes."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es
from evalsuite.io._parquet_size import decoded_size

READERS = {"run": es.read_run, "qrels": es.read_qrels, "records": es.read_records,
           "traces": lambda data, format, source_name: es.read_traces(data, format="phoenix", source_name=source_name)}


def _parquet(table: pa.Table, **options) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)
    return sink.getvalue()


def _repeat(text: str, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([text]))


@pytest.mark.parametrize("kind", ["run", "qrels", "records", "traces"])
def test_a_dictionary_bomb_is_refused_before_decoding(kind):
    n = 2_000_000  # 2 million copies of a 2 KB id: 4 GB decoded, a few kilobytes of pages
    table = pa.table({"query_id": _repeat("q", n), "doc_id": _repeat("d" * 2000, n),
                      ("score" if kind != "qrels" else "grade"): pa.array(np.zeros(n))})
    data = _parquet(table)
    assert len(data) < 1_000_000
    reader = READERS[kind]
    with pytest.raises(es.EvalSuiteError, match="decode to more than") as info:
        reader(data, format="parquet", source_name="bomb.parquet")
    assert info.value.source == "bomb.parquet" and info.value.field == "bytes"


def test_a_nested_dictionary_bomb_is_refused():
    rows = 20_000  # each record: 200 copies of a 1 KB context (4 GB decoded)
    contexts = pa.ListArray.from_arrays(pa.array(np.arange(0, rows * 200 + 1, 200, dtype=np.int32)),
                                        _repeat("c" * 1000, rows * 200))
    data = _parquet(pa.table({"query_id": [f"q{i}" for i in range(rows)], "contexts": contexts}))
    with pytest.raises(es.EvalSuiteError, match="decode to more than"):
        es.read_records(data, format="parquet", source_name="nested.parquet")


def test_a_prefix_compressed_bomb_is_refused_and_a_small_one_read():
    n = 5_000  # DELTA_BYTE_ARRAY: each value repeats the 10 KB before it (50 MB decoded, 16 MiB allowed)
    long_values = pa.array(["x" * 10_000]).take(pa.array(np.zeros(n, dtype=np.int32)))
    data = _parquet(pa.table({"query_id": pa.array(["q"] * n), "doc_id": long_values, "score": np.zeros(n)}),
                    use_dictionary=False, column_encoding={"doc_id": "DELTA_BYTE_ARRAY"})
    assert len(data) < 1_000_000
    with pytest.raises(es.EvalSuiteError, match="decode to more than"):
        es.read_run(data, format="parquet", source_name="delta.parquet", duplicates="max",
                    limits=es.ReadLimits(max_bytes=16 << 20))
    small = _parquet(pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d12"], "score": [1.0, 2.0]}),
                     use_dictionary=False, column_encoding={"doc_id": "DELTA_BYTE_ARRAY"})
    assert es.read_run(small, format="parquet").query("q1")["doc_id"].tolist() == ["d12", "d1"]


def test_a_loose_dictionary_bound_is_counted_exactly_before_refusing():
    rows = 50_000  # one 100 KB answer among short ones: bound 5 GB, decoded a few MB
    answers = pa.concat_arrays([pa.array(["x" * 100_000]), pa.array([f"a{i % 100}" for i in range(rows - 1)])])
    table = pa.table({"query_id": [f"q{i}" for i in range(rows)], "answer": answers})
    data = _parquet(table)
    size = decoded_size(pq.ParquetFile(pa.BufferReader(data)), data, None, "r")
    assert size.bound > 2**31 and "answer" in size.dictionary_leaves
    records = es.read_records(data, format="parquet")
    assert records.table.column("answer").to_pylist() == answers.to_pylist()
    assert records.table.column("answer").type == pa.string()


@pytest.mark.parametrize("options", [{}, {"use_dictionary": False}, {"compression": "zstd"},
                                     {"data_page_version": "2.0"}, {"row_group_size": 7},
                                     {"use_dictionary": False, "column_encoding": {"s": "DELTA_LENGTH_BYTE_ARRAY"}},
                                     {"data_page_size": 64}])
def test_the_bound_is_never_below_the_decoded_size(options):
    rng = np.random.default_rng(3)
    n = 5_000
    table = pa.table({
        "s": pa.array([("id%d" % i) * int(rng.integers(1, 20)) for i in range(n)]),
        "i": pa.array(rng.integers(0, 100, n)), "f": pa.array(rng.random(n)), "b": pa.array(rng.random(n) > 0.5),
        "l": pa.array([[f"c{j}" for j in range(int(k))] for k in rng.integers(0, 5, n)], pa.list_(pa.string())),
    })
    data = _parquet(table, **options)
    size = decoded_size(pq.ParquetFile(pa.BufferReader(data)), data, None, "t")
    assert size.bound >= table.nbytes
    # budget 0: every dictionary's longest entry measured, the tightest bound there is
    measured = decoded_size(pq.ParquetFile(pa.BufferReader(data)), data, None, "t", budget=0)
    assert table.nbytes <= measured.bound <= size.bound
    only = decoded_size(pq.ParquetFile(pa.BufferReader(data)), data, ["f"], "t")
    assert n * 8 <= only.bound < size.bound


@pytest.mark.parametrize("kind", ["run", "qrels", "records"])
def test_a_repeated_column_name_is_an_error_not_a_keyerror(kind):
    table = pa.Table.from_arrays([pa.array(["q1"]), pa.array(["d1"]), pa.array(["d2"]), pa.array([1.0])],
                                 names=["query_id", "doc_id", "doc_id", "score" if kind != "qrels" else "grade"])
    with pytest.raises(es.EvalSuiteError, match="names column 'doc_id' more than once"):
        READERS[kind](_parquet(table), format="parquet", source_name="twice.parquet")


def test_a_damaged_page_header_is_named():
    data = bytearray(_parquet(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})))
    parquet = pq.ParquetFile(pa.BufferReader(bytes(data)))
    start = parquet.metadata.row_group(0).column(1).dictionary_page_offset
    data[start:start + 3] = b"\x0f\x0f\x0f"  # three field headers of an unknown Thrift type
    with pytest.raises(es.EvalSuiteError, match="not a readable Parquet file"):
        es.read_run(bytes(data), format="parquet", source_name="damaged.parquet")


def test_a_footer_pyarrow_metadata_aborts_on_is_an_error_not_a_crash():
    """Found by the reader fuzzing: pyarrow's ColumnChunkMetaData aborts the process on this footer's size
    statistics, so the page walk reads chunk offsets from the footer itself. In a child process: a
    regression would abort pytest."""
    path = Path(__file__).resolve().parents[1] / "data" / "parquet" / "size_statistics_mismatch.parquet"
    code = ("import sys, evalsuite as es\n"
            "for read in (es.read_run, es.read_qrels, es.read_records):\n"
            "    try:\n"
            f"        read(open({str(path)!r}, 'rb').read(), format='parquet', source_name='m.parquet')\n"
            "    except es.EvalSuiteError as error:\n"
            "        print('refused:', error)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("refused: m.parquet") == 3, done.stdout
