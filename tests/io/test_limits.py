"""ReadLimits and the linear-time checks of evalsuite.io.limits (issue 29): many-member gzip in
linear work, integers bounded by digits, time and memory bounds for the API and the command line,
and no process-wide state changed by an import."""

from __future__ import annotations

import gzip
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import evalsuite as es
from evalsuite.io import limits as limits_module
from evalsuite.io.limits import BOUNDED, DEFAULT_LIMITS, ReadLimits, gunzip


class _CountingInflate:
    """The inflate module gunzip uses (ISA-L's or zlib), with decompressobj counting the bytes
    handed to and back from every inflater."""

    def __init__(self, module) -> None:
        self.module = module
        self.error = module.error
        self.fed = 0
        self.returned = 0
        self.members = 0

    def decompressobj(self, wbits):
        counter = self
        inner = self.module.decompressobj(wbits=wbits)
        counter.members += 1

        class Inflater:
            def decompress(self, data, max_length=0):
                counter.fed += len(data)
                return inner.decompress(data, max_length)

            @property
            def unconsumed_tail(self):
                return inner.unconsumed_tail

            @property
            def unused_data(self):
                counter.returned += len(inner.unused_data)
                return inner.unused_data

            @property
            def eof(self):
                return inner.eof

        return Inflater()


@pytest.fixture(params=["isal", "zlib"])
def inflate(request, monkeypatch):
    """Each gzip test with ISA-L's inflate (what requirements.txt installs) and with zlib (the
    fallback where isal has no wheel)."""
    if request.param == "zlib":
        monkeypatch.setattr(limits_module, "_inflate", zlib)
        monkeypatch.setattr(limits_module, "_INFLATE_ERRORS", (zlib.error,))
        monkeypatch.setattr(limits_module, "_FIRST_MEMBER_IN_ONE_CALL", False)
    return limits_module._inflate


def test_isal_inflates_gzip_where_installed():
    pytest.importorskip("isal")
    assert limits_module._inflate.__name__ == "isal.isal_zlib"


@pytest.mark.parametrize("members", [1_000, 20_000])
def test_many_member_gzip_is_read_with_work_linear_in_the_input(monkeypatch, inflate, members):
    """The work is counted, not timed: bytes given to zlib and handed back after a member's end stay
    within a small multiple of the file (they were the rest of the file for every member: quadratic).
    With ISA-L the first member is given the whole file once: one file more, still linear."""
    data = b"".join(gzip.compress(f"q{i} 0 d{i} 1\n".encode(), mtime=0) for i in range(members))
    counting = _CountingInflate(inflate)
    monkeypatch.setattr(limits_module, "_inflate", counting)
    out = gunzip(data, DEFAULT_LIMITS, "many.gz")
    assert out == b"".join(f"q{i} 0 d{i} 1\n".encode() for i in range(members))
    assert counting.members == members
    assert counting.fed <= 4 * len(data) and counting.returned <= 3 * len(data), (counting.fed, counting.returned)


def test_a_one_member_gzip_is_inflated_in_one_call_with_isal(monkeypatch):
    """One call, one output buffer: the text is in memory once (pieces joined at the end held it
    twice, the peak of reading a .gz run). The call is bounded by max_bytes all the same."""
    pytest.importorskip("isal")
    text = b"".join(f"q{i % 50} Q0 d{i} {i} {1 / (i + 1)} t\n".encode() for i in range(50_000))
    data = gzip.compress(text, mtime=0)
    calls = []

    class Recording(_CountingInflate):
        def decompressobj(self, wbits):
            inner = super().decompressobj(wbits)
            decompress = inner.decompress
            inner.decompress = lambda chunk, max_length=0: calls.append(max_length) or decompress(chunk, max_length)
            return inner

    monkeypatch.setattr(limits_module, "_inflate", Recording(limits_module._inflate))
    assert gunzip(data, DEFAULT_LIMITS, "one.gz") == text
    assert calls == [DEFAULT_LIMITS.max_bytes + 1]
    calls.clear()
    with pytest.raises(es.EvalSuiteError, match="max_bytes=100000"):
        gunzip(data, ReadLimits(max_bytes=100_000), "one.gz")
    assert calls == [100_001]


def test_gzip_members_padding_and_damage_as_gzip_reads_them(inflate):
    one, two = gzip.compress(b"a" * 100_000, mtime=0), gzip.compress(b"b\n", mtime=0)
    assert gunzip(one + b"\x00\x00" + two + b"\x00", DEFAULT_LIMITS, "f") == b"a" * 100_000 + b"b\n"
    for piece in (1, 5, 4096):  # output in small pieces: zlib holds the rest between calls
        assert gunzip(one + two, DEFAULT_LIMITS, "f", piece=piece) == b"a" * 100_000 + b"b\n"
    with pytest.raises(es.EvalSuiteError, match="ends before the end"):
        gunzip(one + two[:-5], DEFAULT_LIMITS, "f")
    with pytest.raises(es.EvalSuiteError, match="not gzip"):
        gunzip(one + b"xx", DEFAULT_LIMITS, "f")
    with pytest.raises(es.EvalSuiteError, match="max_bytes"):
        gunzip(one, ReadLimits(max_bytes=1000), "f")
    damaged = bytearray(one)
    damaged[-6] ^= 0xFF  # the CRC: each inflater's own error becomes the reader's
    with pytest.raises(es.EvalSuiteError, match="not a valid gzip file"):
        gunzip(bytes(damaged), DEFAULT_LIMITS, "f")


def test_a_file_of_empty_members_reads_as_empty(inflate):
    # benchmarks/gzip_members.py times 10k, 100k and 1M members.
    data = gzip.compress(b"", mtime=0) * 1_000
    assert gunzip(data, DEFAULT_LIMITS, "f") == b""
    with pytest.raises(es.EvalSuiteError, match="the file is empty|no judgements"):
        es.read_qrels(data, source_name="empty.gz")


@pytest.mark.parametrize("kind, fmt, data", [
    ("run", "json", b'{"q": {"d": ' + b"9" * 5000 + b"}}"),
    ("qrels", "jsonl", b'{"query_id": "q", "doc_id": "d", "grade": 1}\n{"query_id": "q", "doc_id": "e", "grade": '
     + b"1" * 1001 + b"}\n"),
    ("records", "jsonl", b'{"query_id": "q1"}\n{"query_id": ' + b"7" * 2000 + b"}\n"),
    ("records", "json", b'[{"query_id": "q1", "latency_ms": ' + b"7" * 2000 + b"}]"),
])
def test_integers_longer_than_max_number_digits_are_named(kind, fmt, data):
    reader = {"run": es.read_run, "qrels": es.read_qrels, "records": es.read_records}[kind]
    error = pytest.raises(es.EvalSuiteError, reader, data, format=fmt, source_name="f").value
    assert error.field == "number" and "max_number_digits" in str(error)
    assert error.line == (2 if fmt == "jsonl" else 1)


def test_a_lower_number_limit_applies():
    data = b'[{"query_id": "q", "doc_id": 12345, "score": 1}]'
    assert es.read_run(data, format="json").query("q")["doc_id"].tolist() == ["12345"]
    with pytest.raises(es.EvalSuiteError, match="max_number_digits=4"):
        es.read_run(data, format="json", limits=ReadLimits(max_number_digits=4))


@pytest.mark.parametrize("field, value", [("timeout_s", 0), ("timeout_s", float("inf")), ("timeout_s", "60"),
                                          ("timeout_s", True), ("memory_bytes", 1024), ("memory_bytes", 2.5e9),
                                          ("max_number_digits", 0)])
def test_bounds_are_validated(field, value):
    with pytest.raises(es.EvalSuiteError, match=field):
        ReadLimits(**{field: value})


def test_bounded_limits_read_in_a_worker_with_the_dashboards_defaults():
    assert (BOUNDED.timeout_s, BOUNDED.memory_bytes) == (60.0, 6 * 1024**3)
    assert BOUNDED.bounded and not DEFAULT_LIMITS.bounded
    assert BOUNDED.in_process() == DEFAULT_LIMITS
    run = es.read_run(b"q1 Q0 d1 1 1.0 r\n", limits=BOUNDED, source_name="r.trec")
    assert run.name == "r" and len(run) == 1


@pytest.mark.slow  # a worker process reads for the time limit
def test_a_time_bound_stops_a_long_read_in_the_api():
    with pytest.raises(es.ReaderStopped, match="longer than 0.2 s") as info:
        es.read_qrels(b"q1 0 d1 1\n" * 4_000_000, limits=ReadLimits(timeout_s=0.2), source_name="big.qrels")
    assert info.value.how == "timeout"


def test_importing_evalsuite_leaves_the_csv_field_limit_alone():
    code = ("import csv, importlib, pkgutil, evalsuite\n"
            "for m in pkgutil.walk_packages(evalsuite.__path__, 'evalsuite.'):\n"
            "    if m.name.endswith('__main__'): continue\n"
            "    try: importlib.import_module(m.name)\n"
            "    except ImportError: pass\n"
            "print(csv.field_size_limit())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "131072"


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_long_csv_fields_are_read_in_a_fresh_process_and_the_limit_restored(fmt):
    sep = "," if fmt == "csv" else "\t"
    code = ("import csv, evalsuite as es\n"
            f"data = ('query_id{sep}answer\\nq1{sep}' + 'x' * 300000 + '\\n').encode()\n"
            f"records = es.read_records(data, format='{fmt}')\n"
            "print(len(records.table.column('answer')[0].as_py()), csv.field_size_limit())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["300000", "131072"]


def test_long_csv_fields_in_trace_and_latency_tables_in_a_fresh_process():
    """Phoenix's CSV spans export and the latency tables read CSV too: a field past the csv module's
    default 131,072 characters is read (no process-wide limit raised at import any more)."""
    spans = Path(__file__).resolve().parents[1] / "data" / "traces" / "phoenix_spans.csv"
    code = ("import csv, evalsuite as es\n"
            "from evalsuite.io.latency_tables import read_latency_table\n"
            f"text = open({str(spans)!r}).read()\n"
            "lines = text.split('\\n')\n"
            "root = next(i for i, line in enumerate(lines) if ',rag_request,CHAIN,' in line and ',OK,' in line)\n"
            "answer = lines[root].split(',')[11]\n"
            "lines[root] = lines[root].replace(',' + answer + ',', ',' + 'x' * 300000 + ',', 1)\n"
            "records = es.read_traces('\\n'.join(lines).encode(), source_name='spans.csv', format='phoenix')\n"
            "longest = max(len(a or '') for a in records.table.column('answer').to_pylist())\n"
            "table = read_latency_table(b'system,stage,p50,p90,p99\\n' + b'y' * 300000 + b',total,1,2,3\\n',\n"
            "                           source_name='latency.csv')\n"
            "print(longest, len(table.table.loc[0, 'system']), csv.field_size_limit())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["300000", "300000", "131072"]


def test_traces_and_latency_tables_read_in_a_worker_when_bounded(monkeypatch):
    """limits with a time or memory bound send every reader to a worker, traces and latency tables too."""
    from evalsuite.io import isolation
    from evalsuite.io.latency_tables import read_latency_table

    calls = []
    monkeypatch.setattr(isolation, "read_isolated", lambda kind, *a, **k: calls.append(kind))
    es.read_traces(b"{}", limits=BOUNDED, source_name="t.jsonl")
    read_latency_table(b"system,stage,p50,p90,p99\n", limits=BOUNDED, source_name="l.csv")
    assert calls == ["traces", "latency_table"]
