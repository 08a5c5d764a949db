"""Judgement tables and human-label files through the shared reader (evalsuite.io.judgement_files,
issue 29): the limits every reader checks, every format, the isolated pool, labels that must be
1/0, true/false, yes/no or empty, and the cases the adversarial round found."""

from __future__ import annotations

import gzip
import io
import json
import math
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es
from evalsuite.io.isolation import ReaderPool
from evalsuite.io.judgement_files import label_value, read_judgement_table
from evalsuite.stats.judgement_tables import join_human_labels, read_judgements

ROWS = [{"query_id": "q1", "system": "A", "judgement": "claim_support", "item": 0, "judge": "j", "judge_score": 0.9,
         "judge_label": 1, "human_label": 1},
        {"query_id": "q1", "system": "A", "judgement": "claim_support", "item": 1, "judge": "j", "judge_score": 0.2,
         "judge_label": 0, "human_label": None},
        {"query_id": "q2", "system": "B", "judgement": "claim_support", "item": 0, "judge": "j", "judge_score": 0.6,
         "judge_label": 1, "human_label": 0}]
COLUMNS = list(ROWS[0])


def _written(fmt: str, rows=ROWS) -> bytes:
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        lines = [sep.join(COLUMNS)] + [sep.join("" if r[c] is None else str(r[c]) for c in COLUMNS) for r in rows]
        return ("\n".join(lines) + "\n").encode()
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
    if fmt == "json":
        return json.dumps(rows).encode()
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


@pytest.fixture(scope="module")
def pool():
    readers = ReaderPool(workers=1, timeout_s=60)
    yield readers
    readers.close()


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "parquet", "csv.gz", "jsonl.gz"])
def test_every_format_reads_the_same_table(fmt):
    plain = fmt.removesuffix(".gz")
    data = _written(plain)
    if fmt.endswith(".gz"):
        data = gzip.compress(data)
    frame = read_judgements(data, source_name=f"t.{fmt}")
    assert frame["query_id"].tolist() == ["q1", "q1", "q2"] and frame["item"].tolist() == [0, 1, 0]
    assert frame["judge_label"].tolist() == [1.0, 0.0, 1.0]
    assert frame["human_label"].tolist()[0] == 1.0 and math.isnan(frame["human_label"].tolist()[1])
    assert frame["judge_score"].tolist() == [0.9, 0.2, 0.6]


def test_isolated_and_in_process_reads_are_equal(pool):
    data = _written("csv")
    here = read_judgement_table(data, source_name="t.csv")
    there = pool.read("judgements", data, "t.csv")
    assert here.table.equals(there.table) and (here.source, here.role, here.warnings) == (
        there.source, there.role, there.warnings)
    frame = read_judgements(data, source_name="t.csv", isolate=True)
    assert frame["judge_label"].tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("text", ["nan", "NaN", "maybe", "2", "0.5", "null", "none", "-1", "yes please", "[[maybe]]"])
def test_labels_other_than_1_0_true_false_yes_no_or_empty_are_errors(text):
    data = f"query_id,judge_label,human_label\nq1,1,1\nq2,0,{text}\n".encode()
    with pytest.raises(es.EvalSuiteError) as info:
        read_judgements(data, source_name="labels.csv")
    error = info.value
    assert (error.source, error.line, error.field, error.value) == ("labels.csv", 3, "human_label", text)
    assert "1/0, true/false or yes/no" in str(error)


@pytest.mark.parametrize("text, value", [("1", 1.0), ("0", 0.0), ("TRUE", 1.0), ("false", 0.0), ("Yes", 1.0),
                                         (" no ", 0.0), ("[[Yes]]", 1.0), ("[[No]]", 0.0), ("1.0", 1.0), ("", None)])
def test_accepted_label_spellings(text, value):
    frame = read_judgements(f"query_id,judge_label,human_label\nq1,1,{text}\n".encode())
    got = frame["human_label"].tolist()[0]
    assert (math.isnan(got) if value is None else got == value)


def test_json_label_values():
    rows = [{"query_id": f"q{i}", "judge_label": v, "human_label": v} for i, v in enumerate([True, False, 1, 0, None])]
    frame = read_judgements(json.dumps(rows).encode(), format="json")
    assert frame["human_label"].fillna(-1).tolist() == [1.0, 0.0, 1.0, 0.0, -1.0]
    for bad in (0.5, "nan", [1], {"a": 1}, 2):
        with pytest.raises(es.EvalSuiteError, match="human_label"):
            read_judgements(json.dumps([{"query_id": "q", "judge_label": 1, "human_label": bad}]).encode(), format="json")


def test_label_value_in_records_lists():
    import numpy as np

    assert label_value(np.True_) == 1.0 and label_value(np.float64(0.0)) == 0.0
    with pytest.raises(es.EvalSuiteError, match="value 'nan'"):
        label_value("nan", "records", 4, "human_answer_claims_supported")


def test_a_label_file_joins_and_refuses_bad_labels():
    table = read_judgements(_written("csv"), source_name="t.csv")
    joined, counts = join_human_labels(table, b"query_id,system,item,human_label\nq1,A,1,yes\nq3,A,0,no\n",
                                       source_name="labels.csv")
    assert joined["human_label"].tolist()[1] == 1.0 and counts == {"matched": 1, "unmatched": 1,
                                                                   "first_unmatched_line": 3}
    with pytest.raises(es.EvalSuiteError, match="labels.csv, line 2, field 'human_label', value 'maybe'"):
        join_human_labels(table, b"query_id,human_label\nq1,maybe\n", source_name="labels.csv")
    with pytest.raises(es.EvalSuiteError, match="human_label or human_score column is required"):
        join_human_labels(table, b"query_id,judge_label\nq1,1\n", source_name="labels.csv")


# ----------------------------------------------------------------------------------------------
# What the adversarial round found (issue 29): each is an EvalSuiteError naming the file now.


def test_sixty_thousand_columns_are_refused_at_the_header(pool):
    header = ",".join(["query_id", "judge_label"] + [f"c{i}" for i in range(60_000)])
    data = (header + "\n" + ",".join(["q1", "1"] + ["x"] * 60_000) + "\n").encode()
    for read in (lambda: read_judgements(data, source_name="wide.csv"),
                 lambda: pool.read("judgements", data, "wide.csv")):
        with pytest.raises(es.EvalSuiteError, match="max_columns") as info:
            read()
        assert not isinstance(info.value, es.ReaderStopped) and info.value.source == "wide.csv"


@pytest.mark.parametrize("label, data, field", [
    ("deep JSON", b'{"query_id": "q1", "judge_label": 1, "x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n", "json"),
    ("10^400", b'{"query_id": "q1", "judge_score": ' + str(10**400).encode() + b"}\n", "judge_score"),
    ("5,000 digits", b'{"query_id": "q1", "judge_score": ' + b"7" * 5000 + b"}\n", "number"),
    ("10^400 item", b'{"query_id": "q1", "judge_label": 1, "item": ' + str(10**400).encode() + b"}\n", "item"),
])
def test_hostile_values_are_errors_naming_file_line_and_field(pool, label, data, field):
    for read in (lambda: read_judgements(data, source_name="hostile.jsonl"),
                 lambda: pool.read("judgements", data, "hostile.jsonl")):
        with pytest.raises(es.EvalSuiteError) as info:
            read()
        error = info.value
        assert not isinstance(error, es.ReaderStopped), label
        assert (error.source, error.line, error.field) == ("hostile.jsonl", 1, field), (label, str(error))
        assert "the reader failed" not in str(error)


def test_a_field_longer_than_the_csv_modules_default_limit_reads_in_a_fresh_process():
    code = ("import csv\nfrom evalsuite.stats.judgement_tables import read_judgements\n"
            "t = read_judgements(('query_id,judge_label,note\\nq1,1,' + 'y' * 300000 + '\\n').encode())\n"
            "print(len(t), csv.field_size_limit())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "131072"]


def test_repeated_header_and_repeated_key_name_their_lines():
    with pytest.raises(es.EvalSuiteError, match="names column 'judge_label' more than once"):
        read_judgements(b"query_id,judge_label,judge_label\nq1,1,0\n")
    with pytest.raises(es.EvalSuiteError, match="appears twice") as info:
        read_judgements(b"query_id,item,judge_label\nq1,0,1\nq2,0,1\nq1,0,0\n", source_name="t.csv")
    assert info.value.line == 4 and "first on line 2" in str(info.value)


def test_ids_follow_the_one_id_rule():
    frame = read_judgements("query_id,system,judge_label\n q1 ,\u00a0A,1\n".encode())
    assert frame["query_id"].tolist() == ["q1"] and frame["system"].tolist() == ["\u00a0A"]


def test_limits_apply_and_bound_reads_in_a_worker():
    data = _written("csv")
    with pytest.raises(es.EvalSuiteError, match="max_rows"):
        read_judgements(data, limits=es.ReadLimits(max_rows=2))
    assert len(read_judgements(data, limits=es.ReadLimits(timeout_s=60))) == 3
    with pytest.raises(es.EvalSuiteError, match="max_bytes"):
        read_judgements(data, max_bytes=10)
