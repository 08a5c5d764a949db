"""One test per class of failure an adversarial review found (issue: "No upload can take the server
down"): native crashes, quadratic time, unbounded memory, other exception types escaping, and a
silent wrong answer. Inputs that once crashed the process are read in a worker process here, so
a regression fails the test (as a ReaderStopped) instead of killing pytest.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es
from evalsuite.io._reading import is_number_text, repeated_name
from evalsuite.io.isolation import ReaderPool
from evalsuite.io.limits import json_depth_error

pytestmark = pytest.mark.slow  # reader processes, fuzzing, large inputs: left out of the fast loop


@pytest.fixture(scope="module")
def pool():
    # A generous time limit: it only turns a hang (a regression to quadratic time) into a failure.
    readers = ReaderPool(workers=2, timeout_s=60, memory_bytes=2 * 1024**3)
    yield readers
    readers.close()


def _refused(pool, kind, data, fmt=None, **options) -> es.EvalSuiteError:
    with pytest.raises(es.EvalSuiteError) as info:
        pool.read(kind, data, f"upload.{fmt or 'txt'}", format=fmt, **options)
    error = info.value
    assert not isinstance(error, es.ReaderStopped), f"the reader crashed, hung or ran out of memory: {error}"
    return error


# 1. Native crashes in pyarrow's JSON reader -------------------------------------------------

@pytest.mark.parametrize("kind", ["run", "qrels", "records"])
@pytest.mark.parametrize("data, field", [
    (b"null\n", "line"),                                                       # a first line `null`
    (b'null\n{"qid": "q", "docno": "d", "score": 1}\n', "line"),
    (b'{"query_id": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n", "json"),       # nested 10,000 deep
    (b"[" * 10_000 + b"]" * 10_000 + b"\n", "json"),
])
def test_jsonl_that_crashed_pyarrow_is_an_error_naming_the_line(pool, kind, data, field):
    error = _refused(pool, kind, data, "jsonl")
    assert error.line == 1 and error.field == field


def test_a_json_problem_on_the_first_jsonl_line_names_line_1():
    error = pytest.raises(es.EvalSuiteError, es.read_records, b'{"query_id": "a", "query_id": "b"}\n',
                          format="jsonl").value
    assert error.line == 1 and "twice" in error.reason


def test_format_detection_of_a_deeply_nested_first_line():
    data = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n{}\n"
    assert es.detect_format(data, "upload.txt") == "json"  # not one object per line: the reader then says why


def test_nesting_is_measured_outside_strings_and_escapes():
    limits = es.ReadLimits(max_depth=3)
    deep_text = json.dumps({"a": "[[[[[[", "b": "\\\"[[[[", "c": [[1]]}).encode()  # depth 3 outside strings
    assert json_depth_error(deep_text, limits, "x", per_line=True) is None
    assert json_depth_error(b'{"a": [[[1]]]}\n', limits, "x", per_line=True).line == 1
    # Each JSONL line starts at depth 0; a JSON document does not.
    assert json_depth_error(b'{"a": [1]}\n{"b": [[2]]}\n', limits, "x", per_line=True) is None
    assert json_depth_error(b'[[\n[[1]]]]', limits, "x", per_line=False).line == 2


# 2. Linear time ---------------------------------------------------------------------------

def test_number_check_refuses_long_non_numbers_quickly():
    # The old pattern backtracked quadratically: 40 KB took half a minute, 1 MB would take hours.
    assert not is_number_text("1" * 1_000_000 + "x")
    assert not is_number_text("1." + "1" * 1_000_000 + "e")
    for text in ("1", "-1.5", "+.5", "1.", "2e-3", "1E+10"):
        assert is_number_text(text), text
    for text in ("", ".", "e5", "1e", "nan", "inf", "1_0", "--1", "1.2.3", "0x10"):
        assert not is_number_text(text), text


@pytest.mark.parametrize("fmt, kind", [("csv", "run"), ("trec", "run"), ("tsv", "qrels")])
def test_a_long_score_that_is_not_a_number_is_named(pool, fmt, kind):
    value = "9" * 1_000_000 + "x"
    if fmt == "trec":
        data = f"q1 Q0 d1 1 {value} tag\n".encode()
    elif fmt == "csv":
        data = f"query_id,doc_id,score\nq1,d1,{value}\n".encode()
    else:
        data = f"query_id\tdoc_id\tgrade\nq1\td1\t{value}\n".encode()
    error = _refused(pool, kind, data, fmt)
    assert error.line == (1 if fmt == "trec" else 2) and error.field in ("score", "grade")


def test_repeated_header_found_by_a_set():
    names = [f"c{i}" for i in range(60_000)] + ["c17"]
    assert repeated_name(names) == "c17"
    assert repeated_name(["b", "a", "b", "a"]) == "a"  # the first in sorted order, as before
    assert repeated_name(["query_id", "doc_id"]) is None


def test_wide_headers_are_refused_by_the_column_limit(pool):
    header = ",".join(["query_id", "doc_id", "score"] + [f"c{i}" for i in range(60_000)])
    error = _refused(pool, "run", (header + "\n").encode(), "csv")
    assert error.field == "columns" and error.line == 1
    header = ",".join(["query_id", "doc_id", "score"] + [f"c{i}" for i in range(60_000)] + ["c5"])
    error = _refused(pool, "run", (header + "\n").encode(), "csv", limits=es.ReadLimits(max_columns=100_000))
    assert error.field == "header" and "'c5'" in error.reason
    records = ",".join(["query_id"] + [f"c{i}" for i in range(20_000)])
    assert _refused(pool, "records", (records + "\n").encode(), "csv").field == "columns"


# 3. Bounded memory ------------------------------------------------------------------------

def _gzip_of_zeros(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join([packer.compress(block) for _ in range(size >> 20)] + [packer.flush()])


def test_gzip_bomb_stops_at_the_byte_limit(pool):
    bomb = _gzip_of_zeros(512 << 20)  # 512 MiB of zeros in about 0.5 MB
    assert len(bomb) < 1 << 20
    limits = es.ReadLimits(max_bytes=32 << 20)
    error = _refused(pool, "run", bomb, None, limits=limits)
    assert error.field == "bytes" and "max_bytes=33554432" in error.reason
    with pytest.raises(es.EvalSuiteError, match="expands past"):
        es.read_run(bomb, limits=limits)  # in-process too: decompression stops at the limit
    assert _refused(pool, "records", bomb, "jsonl", limits=limits).field == "bytes"


def test_gzip_members_and_damage():
    run = b"q1 Q0 d1 1 2.0 t\n"
    two_members = gzip.compress(run) + gzip.compress(b"q1 Q0 d2 2 1.0 t\n") + b"\x00\x00"
    assert len(es.read_run(two_members, source_name="r.trec.gz")) == 2
    with pytest.raises(es.EvalSuiteError, match="ends before"):
        es.read_run(gzip.compress(run)[:-12], source_name="r.trec.gz")
    with pytest.raises(es.EvalSuiteError, match="not gzip"):
        es.read_run(gzip.compress(run) + b"garbage", source_name="r.trec.gz")


def test_parquet_rows_are_checked_in_the_footer_before_reading(pool, tmp_path):
    rows = 2_000_000
    table = pa.table({"query_id": pa.array(np.zeros(rows, dtype=np.int64)),
                      "doc_id": pa.array(np.zeros(rows, dtype=np.int64)), "score": pa.array(np.zeros(rows))})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    data = buffer.getvalue()
    assert len(data) < 200_000  # a small file of many rows
    limits = es.ReadLimits(max_rows=1_000_000)
    for kind in ("run", "records"):
        error = _refused(pool, kind, data, "parquet", limits=limits)
        assert error.field == "rows" and error.value == rows


def test_lines_longer_than_the_limit_are_named():
    limits = es.ReadLimits(max_line_bytes=1024)
    data = b"q1 Q0 d1 1 1.0 t\n" * 200 + b"q1 Q0 " + b"x" * 5000 + b" 2 1.0 t\n"
    error = pytest.raises(es.EvalSuiteError, es.read_run, data, limits=limits).value
    assert error.line == 201 and error.field == "line"
    # A line just under the limit, even straddling the check's blocks, passes.
    fine = b"".join(b"q1 Q0 d%d 1 1.0 t\n" % i for i in range(3)) + b"q1 Q0 " + b"y" * 1000 + b" 2 1.0 t\n"
    assert len(es.read_run(fine, limits=limits)) == 4


def test_limits_are_validated():
    with pytest.raises(es.EvalSuiteError, match="max_rows"):
        es.ReadLimits(max_rows=0)
    with pytest.raises(es.EvalSuiteError, match="limits"):
        es.read_run(b"q1 Q0 d1 1 1.0 t\n", limits={"max_rows": 1})


# 4. Only EvalSuiteError escapes -----------------------------------------------------------

BIG = "1" + "0" * 400  # a JSON integer past float range


@pytest.mark.parametrize("kind, data, fmt", [
    ("run", f'{{"q1": {{"d1": {BIG}}}}}'.encode(), "json"),
    ("run", f'{{"qid": "q1", "docno": "d1", "score": {BIG}}}\n'.encode(), "jsonl"),
    ("qrels", f'{{"q1": {{"d1": {BIG}}}}}'.encode(), "json"),
    ("qrels", f'[{{"qid": "q1", "docno": "d1", "grade": {BIG}}}]'.encode(), "json"),
    ("records", f'{{"query_id": "q1", "latency_ms": {BIG}}}\n'.encode(), "jsonl"),
    ("records", f'{{"query_id": "q1", "faithfulness": {BIG}}}\n'.encode(), "jsonl"),
    ("records", f'[{{"query_id": "q1", "answer_claims_supported": [{BIG}]}}]'.encode(), "json"),
])
def test_integers_past_float_range_are_evalsuite_errors(kind, data, fmt):
    reader = {"run": es.read_run, "qrels": es.read_qrels, "records": es.read_records}[kind]
    with pytest.raises(es.EvalSuiteError) as info:
        reader(data, format=fmt)
    assert info.value.field is not None


def test_integers_wider_than_64_bits_in_unknown_record_columns_do_not_escape():
    for fmt, data in (("jsonl", f'{{"query_id": "q1", "note": {BIG}}}\n'), ("jsonl", '{"query_id": "q1", "note": [1]}\n'
                      f'{{"query_id": "q2", "note": "{BIG}"}}\n'), ("json", f'[{{"query_id": "q1", "note": {2**70}}}]')):
        records = es.read_records(data.encode(), format=fmt)
        assert records.table.column("query_id").to_pylist()[0] == "q1" and "note" in records.extra_columns


def test_deeply_nested_value_in_a_message_does_not_recurse():
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(es.EvalSuiteError) as info:
        es.Records.from_rows([{"query_id": nested}])
    assert "nested too deeply to print" in str(info.value)


@pytest.mark.parametrize("fmt, data", [
    ("csv", "query_id,doc_id,score\nq1,d0,1\nq1,d1,1.5\x1c\n"),
    ("tsv", "query_id\tdoc_id\tscore\nq1\td0\t1\nq1\td1\t\x1f2.5\n"),
    ("jsonl", '{"qid": "q1", "docno": "d0", "score": "1"}\n{"qid": "q1", "docno": "d1", "score": "\\u001c2.5"}\n'),
])
def test_control_characters_around_a_score_are_named(fmt, data):
    # str.strip removes \x1c..\x1f, float() and pyarrow do not: such a cell is not a number.
    error = pytest.raises(es.EvalSuiteError, es.read_run, data.encode(), format=fmt).value
    assert (error.line, error.field) == (3 if fmt != "jsonl" else 2, "score")
    assert es.read_run(b"query_id,doc_id,score\nq1,d1, 1.5\t\n", format="csv").scores.tolist() == [1.5]


def test_non_utf8_names_and_values():
    key = b'{"qid": "q1", "docno": "d1", "score": 1, "\xff": 2}\n'
    error = pytest.raises(es.EvalSuiteError, es.read_run, key, format="jsonl").value
    assert error.field == "bytes" and error.line == 1
    assert pytest.raises(es.EvalSuiteError, es.read_records, b'{"query_id": "q1", "\xff": 2}\n',
                         format="jsonl").value.field == "bytes"
    # Invalid UTF-8 inside a Parquet string column is refused when read, not on a later page.
    bad = pa.array([b"q\xff", b"q2"], pa.binary()).view(pa.string())
    table = pa.table({"query_id": bad, "doc_id": pa.array(["d1", "d2"]), "score": pa.array([1.0, 2.0])})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    for reader in (es.read_run, es.read_records):
        with pytest.raises(es.EvalSuiteError, match="Parquet"):
            reader(buffer.getvalue(), format="parquet")


# 5. No silent wrong answer ----------------------------------------------------------------

def test_csv_cells_with_spaces_after_the_commas_match_the_qrels():
    qrels = es.read_qrels(b"q1 0 d1 1\nq1 0 d2 1\n", source_name="qrels.trec")
    plain = es.read_run(b"query_id,doc_id,score\nq1,d1,2.0\nq1,d3,1.5\nq1,d2,1.0\n", format="csv")
    spaced = es.read_run(b"query_id, doc_id, score\nq1, d1, 2.0\n q1 ,d3 , 1.5\nq1,\td2,1.0\n", format="csv")
    assert spaced.doc_ids.to_pylist() == plain.doc_ids.to_pylist() == ["d1", "d3", "d2"]
    assert es.evaluate(qrels, spaced, ["map"]).means["map"] == es.evaluate(qrels, plain, ["map"]).means["map"] > 0
    spaced_qrels = es.read_qrels(b"query_id,doc_id,grade\nq1, d1, 1\nq1, d2,1\n", format="csv")
    assert spaced_qrels.query("q1") == {"d1": 1.0, "d2": 1.0}
    records = es.read_records(b"query_id,latency_ms\n q1 ,120\n", format="csv")
    assert records.table.column("query_id").to_pylist() == ["q1"]


def test_deep_jsonl_given_by_path_is_checked_for_nesting(tmp_path):
    # A file larger than the 64 KiB read ahead is memory-mapped; its nesting is still checked first.
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b'{"qid": "q", "docno": "d", "score": 1}\n' * 3000 + b'{"qid": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n")
    for reader in (es.read_run, es.read_records):
        error = pytest.raises(es.EvalSuiteError, reader, path).value
        assert error.field == "json" and error.line == 3001


@pytest.mark.parametrize("line_end", [b"\r\n", b"\n"])
def test_a_tab_separated_run_file_read_by_path(tmp_path, line_end):
    # A file past 64 KiB read by path: the separator check scans a memory map, which has no count(),
    # so a tab-separated file with CRLF line ends raised AttributeError (found by the reader fuzzing).
    lines = [f"q{q}\tQ0\td{d}\t{d}\t{3 - d}.5\tr".encode() for q in range(2500) for d in (1, 2)]
    path = tmp_path / "tabs.run"
    path.write_bytes(line_end.join(lines) + line_end)
    assert path.stat().st_size > 65536
    run = es.read_run(path)
    ranked = run.query("q7")
    assert ranked["doc_id"].tolist() == ["d1", "d2"] and ranked["score"].tolist() == [2.5, 1.5]
    assert len(run) == 5000
