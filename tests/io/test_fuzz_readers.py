"""Fuzzing the file readers (issue "No upload can take the server down").

Every reader (read_run, read_qrels, read_records, and read_judgement_table for calibration tables)
in every format it takes gets:

- VALID files written from Hypothesis-generated rows (ids with spaces, quotes, commas, '#',
  leading '=', digits, non-ASCII; scores as finite floats written with repr; small integer
  grades): the parse must be exactly what was written (EvalSuite's conventions: TREC splits on
  whitespace; CSV/TSV id cells are trimmed; a run is ordered by score descending then doc id
  descending; a duplicate (query, doc) is an error). These are also read in-process, and the
  in-process and isolated results must be equal.
- MUTATIONS of the real samples and of generated valid files (byte flips, truncation, hostile
  insertions, line edits, gzip wrappers): the outcome must be a parse of the right type that
  keeps the readers' invariants, or an EvalSuiteError with a message naming the file - never
  a ReaderStopped (the worker crashed, hung or blew its memory cap) and never another exception
  (the worker reports that as "the reader failed").
- Two differential checks on mutated files: a TREC file must read the same with a comment line
  in front (the fast Arrow path against the line-by-line path), and a JSONL file the same when
  a field forces the line-by-line reader (pyarrow's JSON reader against the json module).

Every input is read in a module-scoped ReaderPool (a worker process with a time limit and a
memory cap), so a crash or hang fails one example with a message instead of killing pytest.

Size: EVALSUITE_FUZZ_EXAMPLES (default 100) is the number of examples of each mutation test per
reader/format; the other tests scale with it. The default run reads about 4,800 inputs (a minute
on two cores); 460 reads about 20,000 (three minutes). Runs are derandomized (the same inputs
every time) and use no example database. ``pytest -s`` prints the inputs per reader/format.

Problems this fuzzing found (fixed since, in 9df5c5f) are kept as ordinary regression tests at
the end of this file.
"""

from __future__ import annotations

import collections
import gzip
import io
import re
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import evalsuite as es
from evalsuite import EvalSuiteError, ReaderStopped
from evalsuite.io.isolation import ReaderPool
from evalsuite.io.judgement_files import read_judgement_table
from evalsuite.io.judgement_table import JUDGEMENT_COLUMNS, JudgementTable

import fuzz_inputs as fz

pytestmark = pytest.mark.slow  # reader processes, fuzzing, large inputs: left out of the fast loop

TYPES = {"run": es.Run, "qrels": es.Qrels, "records": es.Records, "judgements": JudgementTable}


def _read_judgements(data, format=None, source_name=None):
    return read_judgement_table(data, format=format, source_name=source_name)


READERS = {"run": es.read_run, "qrels": es.read_qrels, "records": es.read_records, "judgements": _read_judgements}

# Inputs read, per (test, kind, format); outcomes per (kind, format, "parsed" | "refused").
COUNTS: collections.Counter = collections.Counter()
IN_PROCESS: collections.Counter = collections.Counter()
OUTCOMES: collections.Counter = collections.Counter()
PRINTED: list = []  # set when the last test has printed the table


def fuzz_settings(max_examples: int):
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example, HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def pool():
    readers = ReaderPool(workers=2, timeout_s=20, memory_bytes=2 * 1024**3)
    yield readers
    readers.close()
    if not PRINTED:  # the last test prints the table when it runs
        print("\n" + count_table())


def count_table() -> str:
    by_format = collections.Counter()
    for (_, kind, fmt), n in COUNTS.items():
        by_format[(kind, fmt)] += n
    lines = ["reader fuzzing: inputs read in the reader pool (parsed / refused), and in-process too"]
    for kind, fmt in fz.COMBOS:
        lines.append(f"  {kind:8s} {fmt:8s} {by_format[(kind, fmt)]:7d}  ({OUTCOMES[(kind, fmt, 'parsed')]} / "
                     f"{OUTCOMES[(kind, fmt, 'refused')]})  in-process {IN_PROCESS[(kind, fmt)]}")
    lines.append(f"  total             {sum(by_format.values()):7d}  in-process {sum(IN_PROCESS.values())}")
    by_test = collections.Counter()
    for (test, _, _), n in COUNTS.items():
        by_test[test] += n
    lines += [f"  {test}: {n}" for test, n in sorted(by_test.items())]
    return "\n".join(lines)


def shown(data: bytes, limit: int = 300) -> str:
    return f"{len(data)} bytes: {data[:limit]!r}{' ...' if len(data) > limit else ''}"


# ----------------------------------------------------------------------------------------------
# Reading and checking one input.


def read_in_pool(pool: ReaderPool, test: str, kind: str, fmt: str, data: bytes, name: str):
    """(result, None) or (None, EvalSuiteError); fails the example on a stopped or failed reader."""
    COUNTS[(test, kind, fmt)] += 1
    try:
        result = pool.read(kind, data, name, format=fmt)
    except ReaderStopped as stop:
        pytest.fail(f"{kind} reader, format {fmt}: the reader process was stopped ({stop.how}): {stop}\n"
                    f"input {shown(data)}", pytrace=False)
    except EvalSuiteError as error:
        check_error(error, kind, fmt, data, name)
        OUTCOMES[(kind, fmt, "refused")] += 1
        return None, error
    check_result(result, kind, fmt, data)
    OUTCOMES[(kind, fmt, "parsed")] += 1
    return result, None


def read_here(kind: str, fmt: str, data: bytes, name: str):
    """The same read in this process (valid and near-valid inputs only)."""
    IN_PROCESS[(kind, fmt)] += 1
    try:
        return READERS[kind](data, format=fmt, source_name=name), None
    except EvalSuiteError as error:
        return None, error


def check_error(error: EvalSuiteError, kind: str, fmt: str, data: bytes, name: str) -> None:
    message = str(error)
    assert isinstance(message, str) and message.strip(), f"{kind}/{fmt}: an error with an empty message"
    assert getattr(error, "reason", None) != "the reader failed", (
        f"{kind} reader, format {fmt}: an exception that is not an EvalSuiteError escaped the reader: {message}\n"
        f"input {shown(data)}")
    assert name in message, f"{kind}/{fmt}: the message does not name the file: {message!r}\ninput {shown(data)}"


def check_result(result, kind: str, fmt: str, data: bytes) -> None:
    """What every parse must keep, whatever the input."""
    assert isinstance(result, TYPES[kind]), f"{kind}/{fmt}: got a {type(result).__name__}"
    if kind == "judgements":
        table = result.table
        assert table.num_rows >= 1 and table.column_names[0] == "line"
        assert set(table.column_names[1:]) <= set(JUDGEMENT_COLUMNS) and "query_id" in table.column_names
        assert table.column("query_id").null_count == 0
        assert all(isinstance(q, str) and q for q in table.column("query_id").to_pylist()), f"judgements/{fmt}: an empty id"
        for name in ("judge_label", "human_label"):
            if name in table.column_names:
                assert set(table.column(name).to_pylist()) <= {0.0, 1.0, None}, f"judgements/{fmt}: a label not 0/1"
        for name in ("judge_score", "human_score"):
            if name in table.column_names:
                values = [v for v in table.column(name).to_pylist() if v is not None]
                assert all(np.isfinite(values)), f"judgements/{fmt}: a score that is not finite"
        if "item" in table.column_names:
            assert all(i >= 0 for i in table.column("item").to_pylist())
        return
    if kind == "records":
        table = result.table
        assert table.num_rows >= 1
        assert table.column("query_id").null_count == 0 and table.column("system").null_count == 0
        keys = list(zip(table.column("system").to_pylist(), table.column("query_id").to_pylist()))
        assert len(set(keys)) == len(keys), f"records/{fmt}: a (system, query_id) twice in a parse"
        assert all(isinstance(q, str) and q for _, q in keys), f"records/{fmt}: an empty or non-string query_id"
        return
    values = result.scores if kind == "run" else result.grades
    offsets = np.asarray(result.offsets)
    n = len(result)
    assert n >= 1 and result.n_queries >= 1
    assert offsets[0] == 0 and offsets[-1] == n and np.all(np.diff(offsets) >= 1), f"{kind}/{fmt}: bad offsets"
    assert values.shape == (n,) and np.all(np.isfinite(values)), f"{kind}/{fmt}: a value that is not finite"
    queries = result.query_ids.tolist()
    assert len(set(queries)) == len(queries) and all(isinstance(q, str) and q for q in queries)
    docs = result.doc_ids.to_pylist()
    assert all(isinstance(d, str) and d for d in docs), f"{kind}/{fmt}: an empty or missing doc id"
    if kind == "qrels":
        assert np.all(values == np.floor(values)), f"qrels/{fmt}: a grade that is not whole"
    for i in range(result.n_queries):
        lo, hi = int(offsets[i]), int(offsets[i + 1])
        group = docs[lo:hi]
        assert len(set(group)) == len(group), f"{kind}/{fmt}: a doc twice for query {queries[i]!r}"
        if kind == "run":
            for j in range(lo, hi - 1):
                a, b = values[j], values[j + 1]
                assert a > b or (a == b and docs[j].encode() > docs[j + 1].encode()), (
                    f"run/{fmt}: rows {j} and {j + 1} of query {queries[i]!r} out of order: "
                    f"({docs[j]!r}, {a!r}) before ({docs[j + 1]!r}, {b!r})")


def ranked_rows(result) -> list[tuple[str, str, float]]:
    frame = result.to_dataframe()
    value = "score" if isinstance(result, es.Run) else "grade"
    return list(zip(frame["query_id"].tolist(), frame["doc_id"].tolist(), frame[value].tolist()))


def assert_same(a, b, what: str) -> None:
    """Two parses are the same object, bit for bit (ids, order, values, name, source, warnings)."""
    assert type(a) is type(b), what
    if isinstance(a, JudgementTable):
        assert a.table.equals(b.table), f"{what}: tables differ\n{a.table}\n{b.table}"
        assert (a.source, a.role, a.warnings) == (b.source, b.role, b.warnings), what
        return
    if isinstance(a, es.Records):
        assert a.table.schema == b.table.schema, f"{what}: schemas differ\n{a.table.schema}\n{b.table.schema}"
        assert a.table.equals(b.table), f"{what}: tables differ"
        assert (a.source, a.warnings, a.aliases, a.extra_columns) == (b.source, b.warnings, b.aliases, b.extra_columns), what
        return
    va, vb = (a.scores, b.scores) if isinstance(a, es.Run) else (a.grades, b.grades)
    assert a.query_ids.tolist() == b.query_ids.tolist(), f"{what}: query ids differ"
    assert np.array_equal(a.offsets, b.offsets), f"{what}: offsets differ"
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist(), f"{what}: doc ids differ"
    assert np.array_equal(a.doc_keys, b.doc_keys), f"{what}: doc keys differ"
    assert np.array_equal(np.asarray(va, np.float64).view(np.uint64), np.asarray(vb, np.float64).view(np.uint64)), \
        f"{what}: values differ"
    assert (a.name, a.source, a.warnings) == (b.name, b.source, b.warnings), what


def assert_expected(case: fz.Case, result) -> None:
    if case.kind == "judgements":
        table = result.table
        # the file's judgement columns, in JUDGEMENT_COLUMNS' order
        assert [c for c in table.column_names if c != "line"] == [c for c in JUDGEMENT_COLUMNS if c in case.rows]
        for column, expected in case.rows.items():
            actual = table.column(column).to_pylist()
            assert actual == expected, f"judgements/{case.fmt}: column {column!r} read as {actual!r}, written {expected!r}"
        return
    if case.kind == "records":
        table = result.table
        for column, expected in case.rows.items():
            actual = table.column(column).to_pylist() if column in table.column_names else [None] * table.num_rows
            assert actual == expected, f"records/{case.fmt}: column {column!r} read as {actual!r}, written {expected!r}"
        return
    actual = ranked_rows(result)
    for i, (got, want) in enumerate(zip(actual, case.rows)):
        assert got == want, f"{case.kind}/{case.fmt}: row {i} read as {got!r}, written {want!r}"
    assert len(actual) == len(case.rows), f"{case.kind}/{case.fmt}: {len(actual)} rows read, {len(case.rows)} written"
    if case.kind == "run":
        assert result.name == case.run_name, f"run/{case.fmt}: name {result.name!r}, expected {case.run_name!r}"
    else:
        for q in dict.fromkeys(r[0] for r in case.rows):
            assert result.query(q) == {d: g for qq, d, g in case.rows if qq == q}


def case_strategy(kind: str, fmt: str):
    if kind == "judgements":
        return fz.judgement_case(fmt)
    return fz.records_case(fmt) if kind == "records" else fz.ranked_case(kind, fmt)


def test_the_harness_fails_an_example_on_a_stopped_or_failed_reader():
    """A stopped worker and an exception that escaped a reader each fail the example (with a message)."""
    stopping = ReaderPool(workers=1, timeout_s=0.001, memory_bytes=256 * 1024**2)
    try:
        with pytest.raises(pytest.fail.Exception, match="stopped \\(timeout\\)"):
            read_in_pool(stopping, "harness_self_check", "run", "trec", b"q1 Q0 d1 1 1.0 r\n" * 200_000, "slow.trec")
    finally:
        stopping.close()
    failed = EvalSuiteError("x.trec: the reader failed on this file (KeyError: 'x')", source="x.trec")
    failed.reason = "the reader failed"
    with pytest.raises(AssertionError, match="escaped the reader"):
        check_error(failed, "run", "trec", b"q1 Q0 d1 1 1.0 r\n", "x.trec")


# ----------------------------------------------------------------------------------------------
# The samples, in every format, are the bases of the mutations: they must parse.


@pytest.mark.parametrize("kind, fmt", fz.COMBOS)
def test_sample_bases_parse_in_the_pool_and_here_alike(pool, kind, fmt):
    bases = fz.bases(kind, fmt)
    assert bases
    for label, data in bases:
        name = f"base.{fz.EXTENSION[fmt]}"
        isolated, error = read_in_pool(pool, "sample_bases", kind, fmt, data, name)
        assert error is None, f"{label} as {fmt}: {error}"
        here, error = read_here(kind, fmt, data, name)
        assert error is None, f"{label} as {fmt} in-process: {error}"
        assert_same(here, isolated, f"{label} as {fmt}: in-process and isolated parses")


# ----------------------------------------------------------------------------------------------
# Valid files: the parse is what was written, in-process and isolated alike.


@pytest.mark.parametrize("kind, fmt", fz.COMBOS)
def test_valid_files_parse_correctly(pool, kind, fmt):
    @fuzz_settings(fz.examples(40))
    @given(case_strategy(kind, fmt))
    def check(case):
        isolated, error = read_in_pool(pool, "valid_files", kind, fmt, case.data, case.name)
        here, here_error = read_here(kind, fmt, case.data, case.name)
        if case.error is not None:
            assert error is not None, f"{kind}/{fmt}: a file with a duplicate was read without an error"
            assert case.error in str(error), f"{kind}/{fmt}: unexpected error {error}"
            assert here_error is not None and str(here_error) == str(error), (here_error, error)
            return
        assert error is None, f"{kind}/{fmt}: a valid file was refused: {error}"
        assert here_error is None, f"{kind}/{fmt}: a valid file was refused in-process: {here_error}"
        assert_expected(case, isolated)
        assert_same(here, isolated, f"{kind}/{fmt}: in-process and isolated parses")

    check()


# ----------------------------------------------------------------------------------------------
# Mutations: a parse or an EvalSuiteError, never a stopped or failed reader.


@pytest.mark.parametrize("kind, fmt", fz.COMBOS)
def test_mutated_sample_files(pool, kind, fmt):
    bases = fz.bases(kind, fmt)

    @fuzz_settings(fz.examples(100))
    @given(st.integers(0, len(bases) - 1), fz.mutations())
    def check(base, recipe):
        label, original = bases[base]
        note(f"base: {label}")
        read_in_pool(pool, "mutated_samples", kind, fmt, fz.apply(original, recipe), f"upload.{fz.EXTENSION[fmt]}")

    check()


@pytest.mark.parametrize("kind, fmt", fz.COMBOS)
def test_mutated_generated_files(pool, kind, fmt):
    @fuzz_settings(fz.examples(60))
    @given(case_strategy(kind, fmt), fz.mutations())
    def check(case, recipe):
        read_in_pool(pool, "mutated_generated", kind, fmt, fz.apply(case.data, recipe), case.name)

    check()


# ----------------------------------------------------------------------------------------------
# Differential checks on mutated files.

def _base_or_case(kind: str, fmt: str):
    bases = fz.bases(kind, fmt)
    small = [data for label, data in bases if "whole" not in label]
    return st.one_of(st.sampled_from(small), case_strategy(kind, fmt).map(lambda case: case.data))


@pytest.mark.parametrize("kind", fz.kinds("run", "qrels"))
def test_trec_comment_line_does_not_change_the_parse(pool, kind):
    """The fast path (Arrow) reads a TREC file without comments; one comment line sends it to the
    line-by-line reader. Both must give the same answer."""
    @fuzz_settings(fz.examples(80))
    @given(_base_or_case(kind, "trec"), fz.mutations(wraps=False))
    def check(original, recipe):
        data = fz.apply(original, recipe)
        assume(not data.startswith(b"\x1f\x8b"))  # gzip magic in front: not a TREC file any more
        plain, plain_error = read_in_pool(pool, "trec_comment_line", kind, "trec", data, f"f.{kind}")
        commented, commented_error = read_in_pool(pool, "trec_comment_line", kind, "trec", fz.with_comment_line(data),
                                                  f"f.{kind}")
        assert (plain_error is None) == (commented_error is None), (
            f"{kind}: without a comment line: {plain_error or 'parsed'}; with one: {commented_error or 'parsed'}\n"
            f"input {shown(data)}")
        if plain is not None:
            assert ranked_rows(plain) == ranked_rows(commented), f"{kind}: the rows differ\ninput {shown(data)}"
            assert plain.name == commented.name

    check()


@pytest.mark.parametrize("kind", fz.kinds("run", "qrels", "records"))
def test_jsonl_fast_and_slow_paths_agree(pool, kind):
    """pyarrow's JSON reader (fast path) and the json module (line by line) must agree."""
    @fuzz_settings(fz.examples(80))
    @given(_base_or_case(kind, "jsonl"), fz.mutations(wraps=False))
    def check(original, recipe):
        data = fz.apply(original, recipe)
        slow_data = fz.with_slow_path_field(data)
        assume(slow_data is not None)
        fast, fast_error = read_in_pool(pool, "jsonl_paths", kind, "jsonl", data, "f.jsonl")
        slow, slow_error = read_in_pool(pool, "jsonl_paths", kind, "jsonl", slow_data, "f.jsonl")
        assert (fast_error is None) == (slow_error is None), (
            f"{kind}: fast path: {fast_error or 'parsed'}; line by line: {slow_error or 'parsed'}\ninput {shown(data)}")
        if fast is None:
            return
        if kind == "records":
            table = slow.table.drop_columns(["zz_force_slow_path"])
            assert table.column_names == fast.table.column_names
            assert table.to_pylist() == fast.table.to_pylist(), f"records: the values differ\ninput {shown(data)}"
        else:
            assert ranked_rows(fast) == ranked_rows(slow), f"{kind}: the rows differ\ninput {shown(data)}"

    check()


# ----------------------------------------------------------------------------------------------
# Hand-made hostile inputs, in every reader and format.


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


HOSTILE_FILES = {
    "empty": b"",
    "whitespace": b" \n\t\r\n \n",
    "bom only": b"\xef\xbb\xbf",
    "nul bytes": b"\x00" * 4096,
    "latin-1": "q1 Q0 dé 1 1.0 r\nq1 0 dé 1\n".encode("latin-1"),
    "utf-16": "q1 Q0 d1 1 1.0 r\n".encode("utf-16"),
    "one huge line": b"q" * 3_000_000,
    "deep brackets": b"[" * 1_000_000,
    "deep objects": b'{"a":' * 200_000,
    "depth 64": b"[" * 64 + b"]" * 64,
    "depth 65": b"[" * 65 + b"]" * 65,
    "huge integer": b'{"q": {"d": ' + b"9" * 100_000 + b"}}\n",
    "1e400": b'{"query_id": "q", "doc_id": "d", "score": 1e400, "grade": 1e400, "latency_ms": 1e400}\n',
    "10**400": b'{"query_id": "q", "doc_id": "d", "score": ' + str(10**400).encode() + b', "latency_ms": '
               + str(10**400).encode() + b"}\n",
    "lone surrogate": b'{"query_id": "\\ud800", "doc_id": "d", "score": 1}\n',
    "null first line": b'null\n{"query_id": "q", "doc_id": "d", "score": 1}\n',
    "lines not objects": b"1\n[]\n\"x\"\ntrue\n",
    "20000 columns": (",".join(f"c{i}" for i in range(20_000)) + "\n").encode(),
    "csv header only": b"query_id,doc_id,score\n",
    "csv unterminated quote": b'query_id,doc_id,score\n"q1,d1,1\n',
    "tsv ragged": b"query_id\tdoc_id\tscore\nq1\td1\nq2\td2\t1\t5\n",
    "gzip empty": gzip.compress(b"", mtime=0),
    "gzip of zeros (limited)": gzip.compress(b"\x00" * (80 << 20), mtime=0),
    "gzip header only": gzip.compress(b"q1 0 d1 1\n", mtime=0)[:10],
    "parquet magic only": b"PAR1PAR1",
    "parquet truncated": _parquet(pa.table({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}))[:-9],
    "parquet nested ids": _parquet(pa.table({"query_id": [["q"]], "doc_id": [{"a": 1}], "score": [1.0]})),
    "parquet null ids": _parquet(pa.table({"query_id": pa.array([None], pa.string()), "doc_id": ["d"], "score": [1.0]})),
    "parquet nan score": _parquet(pa.table({"query_id": ["q"], "doc_id": ["d"], "score": [float("nan")],
                                            "grade": [float("inf")], "latency_ms": [float("nan")]})),
    "parquet 20000 columns": _parquet(pa.table({f"c{i}": [1] for i in range(20_000)})),
}
LIMITED = es.ReadLimits(max_bytes=64 << 20)


@pytest.mark.parametrize("label", list(HOSTILE_FILES))
@pytest.mark.parametrize("kind, fmt", fz.COMBOS)
def test_hostile_files_are_refused_or_read_never_crash(pool, kind, fmt, label):
    data = HOSTILE_FILES[label]
    COUNTS[("hostile_files", kind, fmt)] += 1
    name = f"hostile.{fz.EXTENSION[fmt]}"
    try:
        result = pool.read(kind, data, name, format=fmt, limits=LIMITED)
    except ReaderStopped as stop:
        pytest.fail(f"{kind}/{fmt} {label}: the reader process was stopped ({stop.how}): {stop}", pytrace=False)
    except EvalSuiteError as error:
        check_error(error, kind, fmt, data, name)
        OUTCOMES[(kind, fmt, "refused")] += 1
        if label == "gzip of zeros (limited)":
            assert "max_bytes" in str(error)
        return
    OUTCOMES[(kind, fmt, "parsed")] += 1
    check_result(result, kind, fmt, data)
    assert label not in ("empty", "whitespace", "bom only", "gzip empty", "depth 65", "lone surrogate",
                         "gzip of zeros (limited)", "20000 columns", "parquet 20000 columns"), f"{label} was read"


# ----------------------------------------------------------------------------------------------
# Problems this fuzzing found, each a regression test now (they were xfail(strict=True) until the
# readers were fixed in 9df5c5f).


def _trec_outcome(kind: str, content: bytes):
    """The rows read, or the error's field and reason without its line numbers."""
    try:
        return ranked_rows(READERS[kind](content, format="trec", source_name="f.trec"))
    except EvalSuiteError as error:
        return f"error in {error.field}: " + re.sub(r"\d+", "N", error.reason)


@pytest.mark.parametrize("kind, data", [
    ("run", b'{"query_id": "2020-01-01", "doc_id": "d1", "score": 1.5}\n'),
    ("qrels", b'{"query_id": "q1", "doc_id": "2020-01-01 10:00:00", "relevance": 1}\n'),
    ("records", b'{"query_id": "2020-01-01", "answer": "a"}\n'),
    ("records", b'{"query_id": "q1", "question": "2020-01-01"}\n'),
])
def test_found_jsonl_date_strings_are_read_as_strings(kind, data):
    """pyarrow's JSON reader inferred timestamp[s] for strings like '2020-01-01'; the JSONL readers then
    refused a valid id or text field."""
    result = READERS[kind](data, format="jsonl", source_name="dates.jsonl")
    if kind == "records":
        assert "2020-01-01" in result.table.to_pylist()[0].values()
    else:
        row = ranked_rows(result)[0]
        assert row[0].startswith("2020-01-01") or row[1].startswith("2020-01-01")


@pytest.mark.parametrize("header", ["ID", "QID", "Request_ID"])
def test_found_records_big_integer_id_under_upper_case_header(header):
    """An integer id past 2**63 under a header matched only case-insensitively ('ID', 'QID') was refused."""
    data = b'{"' + header.encode() + b'": 123456789012345678901234, "answer": "a"}\n'
    records = es.read_records(data, format="jsonl", source_name="r.jsonl")
    assert records.table.column("query_id").to_pylist() == ["123456789012345678901234"]


@pytest.mark.parametrize("kind, data", [
    ("run", b"q1 Q0 d1 1 1.0 t\rq1 Q0 d2 1 2.0 t\n"),
    ("qrels", b"q1 0 d1 1\rq1 0 d2 1\n"),
    ("qrels", b"q1 0 d1 1\r\r\n"),
])
def test_found_trec_lone_cr_reads_the_same_with_a_comment_line(kind, data):
    """A CR not before a LF ended a line on the Arrow path but was part of a field on the line-by-line
    path (taken when the file has a comment line)."""
    assert _trec_outcome(kind, data) == _trec_outcome(kind, fz.with_comment_line(data))


@pytest.mark.parametrize("fmt, data", [
    ("jsonl", b'{"query_id": "a\\u0000"}\n{"query_id": "a\\u0000"}\n'),
    ("json", b'[{"query_id": "\\u0000"}, {"query_id": "\\u0000"}]'),
    ("csv", b"query_id\na\x00\na\x00\n"),
    ("jsonl", b'{"query_id": "q", "system": "s\\u0000"}\n{"query_id": "q", "system": "s\\u0000"}\n'),
])
def test_found_records_repeated_id_ending_in_nul(fmt, data):
    """A repeated (system, query_id) whose id ends in NUL raised IndexError, not the 'appears twice' error."""
    with pytest.raises(EvalSuiteError, match="appears twice"):
        es.read_records(data, format=fmt, source_name="r." + fmt)


def test_found_records_jsonl_big_integer_in_an_unknown_field_keeps_its_digits():
    """The JSONL fast path kept an unknown field holding an integer past int64 as float64 (digits lost)."""
    data = b'{"query_id": "q1", "tokens": 12345678901234567891}\n'
    value = es.read_records(data, format="jsonl", source_name="r.jsonl").table.column("tokens").to_pylist()[0]
    assert value in ("12345678901234567891", 12345678901234567891), value


@pytest.mark.parametrize("kind, data", [
    ("run", b"q1 Q0 d1\t 1 1.0 r\nq1 Q0 d2 2 0.5 r\n"),
    ("run", b"q1 Q0 d1 1 1.0 r\t\n"),
    ("qrels", b"q1 0 d1 1\n\tq1 0 d1 0\n"),
])
def test_found_trec_tab_next_to_a_space_is_whitespace(kind, data):
    """The Arrow (space-delimited) path kept a tab next to a space inside the field: doc 'd1\\t', query
    '\\tq1', run tag 'r\\t'."""
    outcome = _trec_outcome(kind, data)
    assert outcome == _trec_outcome(kind, fz.with_comment_line(data))
    if isinstance(outcome, str):  # the qrels case: the same judgement twice once the tab is whitespace
        assert "appears twice" in outcome
        return
    ids = [text for q, d, _ in outcome for text in (q, d)] + [READERS[kind](data, format="trec", source_name="f").name]
    assert not any(c.isspace() for text in ids for c in text), ids


@pytest.mark.parametrize("kind, data", [
    ("run", b'{"query_id": "q", "doc_id": "a", "score": 1}{"query_id": "q", "doc_id": "b", "score": 2}\n'),
    ("records", b'{"query_id": "a"}{"query_id": "b"}\n'),
    ("records", b'{"query_id": "a"} {"query_id": "b"}\n{"query_id": "b"}\n'),
])
def test_found_jsonl_two_objects_on_one_line(kind, data):
    """pyarrow read two objects on one line; the line-by-line reader refused the same line ('Extra data'),
    and rows after it got no or wrong line numbers in messages."""
    def outcome(content):
        try:
            READERS[kind](content, format="jsonl", source_name="f.jsonl")
            return "parsed"
        except EvalSuiteError as error:
            assert "None" not in str(error), f"a message without its line: {error}"
            return "refused"

    assert outcome(data) == outcome(fz.with_slow_path_field(data))


def test_found_csv_quoted_line_break_at_the_16_mib_block_boundary():
    """A quoted line break across pyarrow's 16 MiB block boundary (newlines_in_values=False) made a valid
    CSV 'could not be parsed as CSV'; 1,000 bytes earlier it read."""
    header = b"query_id,doc_id,score\n"
    newline_at = (1 << 24) - 1
    filler = b"q,d" + b"x" * (newline_at - 4 - len(header) - len(b"q,d,1\n")) + b",1\n"
    data = header + filler + b'q,"a\nb",2\n'
    assert data.index(b"a\nb") + 1 == newline_at
    assert es.read_run(data, format="csv", source_name="big.csv").query("q")["doc_id"].tolist()[0] == "a\nb"


# ----------------------------------------------------------------------------------------------


def test_zz_every_selected_fuzz_test_read_inputs(request):
    """Runs last: each selected fuzz test read inputs for its reader/format; prints the totals."""
    module = sys.modules[__name__]
    missing = []
    for item in request.session.items:
        if getattr(item, "module", None) is not module or not hasattr(item, "callspec"):
            continue
        params = item.callspec.params
        if params.get("kind") not in READERS or item.originalname.startswith("test_found_"):
            continue  # not a reader's test, or an empty parameter set (EVALSUITE_FUZZ_KINDS left its kinds out)
        test = {"test_sample_bases_parse_in_the_pool_and_here_alike": "sample_bases",
                "test_valid_files_parse_correctly": "valid_files", "test_mutated_sample_files": "mutated_samples",
                "test_mutated_generated_files": "mutated_generated",
                "test_trec_comment_line_does_not_change_the_parse": "trec_comment_line",
                "test_jsonl_fast_and_slow_paths_agree": "jsonl_paths",
                "test_hostile_files_are_refused_or_read_never_crash": "hostile_files"}[item.originalname]
        fmt = params.get("fmt") or ("trec" if test == "trec_comment_line" else "jsonl")
        if COUNTS[(test, params["kind"], fmt)] == 0:
            missing.append(item.nodeid)
    print("\n" + count_table())
    PRINTED.append(True)
    assert not missing, f"fuzz tests that read no input: {missing}"
