"""The one id rule of every format (evalsuite.utils.ids, docs/conventions.md "Ids in every format"):
ASCII whitespace trimmed from both ends, every other character kept byte for byte; warnings when ids
differ only by invisible characters."""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es
from evalsuite.utils.ids import invisible_twins, trim_id, trim_id_array, visible_form

# Ids that the old CSV/TSV readers trimmed (Python's str.strip set) and TREC/JSON/Parquet kept.
KEPT = ["d1\u00a0", "\u2003d1", "d1\u1680", "\x1cd1", "d1\x1f", "\u3000d1\u3000", "d\u200b1", "d1\x85"]


def _qrels_in(fmt: str, rows: list[tuple[str, str, int]]) -> bytes:
    if fmt == "trec":
        return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        out = io.StringIO()
        import csv

        writer = csv.writer(out, delimiter=sep, lineterminator="\n")
        writer.writerow(["query_id", "doc_id", "relevance"])
        writer.writerows(rows)
        return out.getvalue().encode()
    if fmt == "json":
        doc: dict = {}
        for q, d, g in rows:
            doc.setdefault(q, {})[d] = g
        return json.dumps(doc).encode()
    if fmt == "jsonl":
        return "".join(json.dumps({"query_id": q, "doc_id": d, "relevance": g}) + "\n" for q, d, g in rows).encode()
    sink = io.BytesIO()
    pq.write_table(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                             "relevance": [r[2] for r in rows]}), sink)
    return sink.getvalue()


@pytest.mark.parametrize("fmt", ["trec", "csv", "tsv", "json", "jsonl", "parquet", "csv.gz"])
@pytest.mark.parametrize("doc", KEPT)
def test_unicode_spaces_and_controls_are_id_text_in_every_format(fmt, doc):
    plain = fmt.removesuffix(".gz")
    data = _qrels_in(plain, [("q1", doc, 1), ("q1", "d2", 0)])
    if fmt.endswith(".gz"):
        data = gzip.compress(data)
    qrels = es.read_qrels(data, format=plain, source_name=f"q.{plain}")
    assert qrels.query("q1") == {doc: 1.0, "d2": 0.0}


@pytest.mark.parametrize("fmt", ["csv", "tsv", "json", "jsonl", "parquet"])
def test_ascii_whitespace_around_an_id_is_trimmed_in_every_format(fmt):
    data = _qrels_in(fmt, [(" q1", "d1 ", 1), ("q1\t", "\x0bd2\x0c", 0)])
    assert es.read_qrels(data, format=fmt, source_name="q").query("q1") == {"d1": 1.0, "d2": 0.0}


def test_in_memory_ids_follow_the_rule_too():
    run = es.Run.from_dict({" q1": {"d1 ": 1.0, "d1\u00a0": 0.5}})
    assert run.query_ids.tolist() == ["q1"]
    assert run.query("q1")["doc_id"].tolist() == ["d1", "d1\u00a0"]


def test_an_id_of_only_ascii_whitespace_is_an_empty_id():
    with pytest.raises(es.EvalSuiteError, match="empty id"):
        es.read_qrels(b"query_id,doc_id,grade\nq1,  ,1\n", format="csv", source_name="q.csv")


@pytest.mark.parametrize("fmt, data", [
    ("csv", b"query_id,answer\n\xc2\xa0q1 ,a\n"),
    ("jsonl", b'{"query_id": "\\u00a0q1 ", "answer": "a"}\n'),
    ("json", b'[{"query_id": "\\u00a0q1 ", "answer": "a"}]'),
])
def test_records_ids_follow_the_rule(fmt, data):
    records = es.read_records(data, format=fmt, source_name="r")
    assert records.table.column("query_id").to_pylist() == ["\u00a0q1"]


def test_trim_id_array_keeps_the_column_when_nothing_needs_trimming():
    column = pa.array(["q1", "q\u00a02", "x y"])
    assert trim_id_array(column) is column
    chunked = pa.chunked_array([pa.array([" a", "b"]), pa.array(["c\t"])])
    assert trim_id_array(chunked).to_pylist() == ["a", "b", "c"]
    assert trim_id_array(pa.array([" a", "b"]).dictionary_encode()).to_pylist() == ["a", "b"]
    assert trim_id_array(pa.array([" a", "b"]).slice(1)).to_pylist() == ["b"]
    assert trim_id("\r\n d \x0b") == "d"


def test_visible_form_removes_only_invisible_characters():
    assert visible_form("a\u00a0b\u200bc\u2028d\x1fe\ufeff") == "abcde"
    assert visible_form("a b") == "a b" and visible_form("é") == "é"


def test_invisible_twins_within_and_across():
    assert invisible_twins(pa.array(["q1", "q2"])) == []
    assert invisible_twins(pa.array(["q1", "q1\u2060", "q1\u00a0"])) == [("q1\u00a0", "q1"), ("q1\u2060", "q1")]
    assert invisible_twins(pa.array(["d1", "x"]), pa.array(["d1\u200b"])) == [("d1", "d1\u200b")]
    assert invisible_twins(pa.array(["d1\u00a0"]), pa.array(["d1\u200b"])) == [("d1\u00a0", "d1\u200b")]
    assert invisible_twins(pa.array(["d1\u00a0"]), pa.array(["d1\u00a0"])) == []  # the same id: it matches
    assert invisible_twins(pa.array(["é"]), pa.array(["e"])) == []  # visible: not twins


def test_evaluate_warns_when_run_and_qrels_ids_differ_only_by_invisible_characters():
    qrels = es.read_qrels(b"q1 0 d1 1\nq1 0 d2 0\n")
    run = es.read_run("query_id,doc_id,score\nq1,d1\u00a0,1.0\nq1,d2,0.5\n".encode(), format="csv")
    report = es.evaluate(qrels, run, ["map"])
    assert float(report.scores["map"]) == 0.0
    assert any("'d1\\xa0' in the run, 'd1' in the qrels" in w for w in report.warnings), report.warnings
    clean = es.evaluate(qrels, es.read_run(b"q1 Q0 d1 1 1.0 r\n"), ["map"])
    assert not any("invisible" in w for w in clean.warnings)


def test_no_query_to_evaluate_names_the_invisible_difference():
    qrels = es.read_qrels(b"q1 0 d1 1\n")
    with pytest.raises(es.EvalSuiteError, match="only by invisible characters"):
        es.evaluate(qrels, es.read_run("q1\u200b Q0 d1 1 1.0 r\n".encode()), ["map"])


def test_a_reader_warns_about_two_query_ids_that_look_the_same():
    qrels = es.read_qrels("q1 0 d1 1\nq1\u200b 0 d2 0\n".encode())
    assert qrels.n_queries == 2
    assert any("invisible" in w for w in qrels.warnings)
