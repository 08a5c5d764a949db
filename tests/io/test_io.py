"""Every input format and its variants give the same run or qrels; ids are never altered."""

import gzip
import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es
from conftest import CRANFIELD, TREC

RUN_ROWS = [("007", "d1", 1, 2.5), ("007", "d02", 2, 1.5), ("10", "d1", 1, 0.25), ("10", "x#y", 2, -3.0)]
QRELS_ROWS = [("007", "d1", 2), ("007", "zz", 0), ("10", "x#y", 1)]


def _run_content(run: es.Run):
    return {q: list(zip(run.query(q)["doc_id"], run.query(q)["score"])) for q in run.query_ids}


def _qrels_content(qrels: es.Qrels):
    return {q: qrels.query(q) for q in qrels.query_ids}


EXPECTED_RUN = {"007": [("d1", 2.5), ("d02", 1.5)], "10": [("d1", 0.25), ("x#y", -3.0)]}
EXPECTED_QRELS = {"007": {"d1": 2.0, "zz": 0.0}, "10": {"x#y": 1.0}}


def _run_files():
    trec = "".join(f"{q} Q0 {d} {r} {s} tag\n" for q, d, r, s in RUN_ROWS)
    csv = "query_id,doc_id,rank,score\n" + "".join(f"{q},{d},{r},{s}\n" for q, d, r, s in RUN_ROWS)
    beir_tsv = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, _, s in RUN_ROWS)
    ranx_json = json.dumps({"007": {"d1": 2.5, "d02": 1.5}, "10": {"d1": 0.25, "x#y": -3.0}})
    jsonl = "".join(json.dumps({"qid": q, "docno": d, "score": s}) + "\n" for q, d, _, s in RUN_ROWS)
    frame = pd.DataFrame(RUN_ROWS, columns=["query_id", "doc_id", "rank", "score"])
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer)
    return {
        "run.trec": trec.encode(), "run.csv": csv.encode(), "run.tsv": beir_tsv.encode(),
        "run.json": ranx_json.encode(), "run.jsonl": jsonl.encode(), "run.parquet": buffer.getvalue(),
        "tabs_and_spaces.txt": trec.replace(" ", "\t").replace("\tQ0\t", "  Q0 \t").encode(),
        "crlf.trec": trec.replace("\n", "\r\n").encode(),
        "comments.trec": ("# a comment\n\n" + trec + "# trailing\n").encode(),
        "padded.trec": "".join(f"  {line}  \n" for line in trec.splitlines()).encode(),
    }


@pytest.mark.parametrize("filename", list(_run_files()))
def test_every_run_format_reads_the_same(filename, tmp_path):
    content = _run_files()[filename]
    path = tmp_path / filename
    path.write_bytes(content)
    assert _run_content(es.read_run(path)) == EXPECTED_RUN
    gz = tmp_path / (filename + ".gz")
    gz.write_bytes(gzip.compress(content))
    assert _run_content(es.read_run(gz)) == EXPECTED_RUN
    # No extension: detected from the content.
    assert _run_content(es.read_run(content)) == EXPECTED_RUN


def _qrels_files():
    trec = "".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS_ROWS)
    beir = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS_ROWS)
    csv = "qid,docid,relevance\n" + "".join(f"{q},{d},{g}\n" for q, d, g in QRELS_ROWS)
    ranx_json = json.dumps({"007": {"d1": 2, "zz": 0}, "10": {"x#y": 1}})
    jsonl = "".join(json.dumps({"query_id": q, "doc_id": d, "grade": g}) + "\n" for q, d, g in QRELS_ROWS)
    frame = pd.DataFrame(QRELS_ROWS, columns=["query_id", "doc_id", "grade"])
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer)
    return {"qrels.trec": trec.encode(), "qrels.tsv": beir.encode(), "qrels.csv": csv.encode(),
            "qrels.json": ranx_json.encode(), "qrels.jsonl": jsonl.encode(), "qrels.parquet": buffer.getvalue(),
            "grades_as_floats.trec": trec.replace(" 2\n", " 2.0\n").encode()}


@pytest.mark.parametrize("filename", list(_qrels_files()))
def test_every_qrels_format_reads_the_same(filename, tmp_path):
    content = _qrels_files()[filename]
    path = tmp_path / filename
    path.write_bytes(content)
    assert _qrels_content(es.read_qrels(path)) == EXPECTED_QRELS
    assert _qrels_content(es.read_qrels(io.BytesIO(content))) == EXPECTED_QRELS


def test_detect_format_from_extension_and_content():
    files = _run_files()
    assert es.detect_format(files["run.csv"], "x.csv") == "csv"
    assert es.detect_format(files["run.csv"], "") == "csv"
    assert es.detect_format(files["run.tsv"], "x.txt") == "tsv"
    assert es.detect_format(files["run.json"], "") == "json"
    assert es.detect_format(files["run.jsonl"], "") == "jsonl"
    assert es.detect_format(files["run.parquet"], "") == "parquet"
    assert es.detect_format(files["run.trec"], "") == "trec"


def test_ids_that_look_numeric_stay_strings():
    run = es.read_run(b"007 Q0 0042 1 1.0 t\n")
    assert run.query_ids.tolist() == ["007"]
    assert run.query("007")["doc_id"].tolist() == ["0042"]
    csv = es.read_run(b"query_id,doc_id,score\n007,0042,1.0\n", format="csv")
    assert csv.query("007")["doc_id"].tolist() == ["0042"]
    # JSONL with numbers as ids: written in decimal ("7"), never as 7.0.
    jsonl = es.read_qrels(b'{"query_id": 7, "doc_id": 42, "grade": 1}\n', format="jsonl")
    assert jsonl.query_ids.tolist() == ["7"] and jsonl.query("7") == {"42": 1.0}


def test_run_tag_becomes_the_name_unless_given():
    assert es.read_run(TREC / "results.test").name == "STANDARD"
    assert es.read_run(TREC / "results.test", name="mine").name == "mine"
    assert es.read_run(b"query_id,doc_id,score\nq,d,1\n", format="csv", source_name="bm25.csv").name == "bm25"


def test_interleaved_queries_are_grouped_and_ranked():
    run = es.read_run(b"a Q0 d1 1 1.0 t\nb Q0 d1 1 5.0 t\na Q0 d2 2 3.0 t\n")
    assert run.query_ids.tolist() == ["a", "b"]
    assert run.query("a")["doc_id"].tolist() == ["d2", "d1"]


# 7 queries of ~430 lines: each query sorted alone (_rank_order._score_order_within_queries);
# 70,000 of ~1: one sort of all scores, with query codes past 16 bits.
@pytest.mark.parametrize("n_queries", [7, 70_000])
def test_shuffled_run_with_ties_is_in_trec_eval_order(n_queries):
    """A run whose lines are shuffled, with many equal scores (0.0 and -0.0 among them), comes out
    in trec_eval's order: queries by first appearance, score descending, ties by doc id
    descending in byte order; checked against Python's own sort of the lines."""
    import random

    rng = random.Random(n_queries)
    scores = ["0.0", "-0.0", "1.5", "2", "-3.25", "1.50"]
    lines = [(f"q{q}", f"d{rng.randrange(1000)}", rng.choice(scores)) for q in range(n_queries)]  # every query
    lines += [(f"q{rng.randrange(min(n_queries, 50))}", f"d{rng.randrange(1000)}", rng.choice(scores)) for _ in range(3000)]
    lines = list({(q, d): (q, d, s) for q, d, s in lines}.values())  # one line per (query, doc)
    rng.shuffle(lines)
    from evalsuite.io._rank_order import _ROWS_PER_QUERY_SORTED_ALONE
    assert (len(lines) >= _ROWS_PER_QUERY_SORTED_ALONE * n_queries) == (n_queries == 7)  # both ways are tried
    text = "".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in lines).encode()
    first = {}
    for q, _, _ in lines:
        first.setdefault(q, len(first))
    # ASCII ids: Python's string order is byte order. Doc id descending, then (query, score) stably.
    expected = sorted(sorted(lines, key=lambda line: line[1], reverse=True), key=lambda line: (first[line[0]], -float(line[2])))
    run = es.read_run(text, source_name="shuffled.trec")
    assert run.query_ids.tolist() == list(first)
    got = list(zip(np.repeat(run.query_ids, run.counts).tolist(), run.doc_ids.to_pylist(), run.scores.tolist()))
    assert got == [(q, d, float(s)) for q, d, s in expected]


def test_long_queries_whose_scores_meet_at_the_boundary_stay_apart():
    """Two long queries (sorted one by one) where every score is equal: the tie-break by doc id
    works inside each query, never across the boundary between them."""
    import random

    lines = [f"{q} Q0 {q}{d:03d} 1 1.0 t\n" for q in ("a", "b") for d in range(300)]
    rest = lines[1:]
    random.Random(3).shuffle(rest)
    lines = lines[:1] + rest  # "a" appears first; across the boundary, "b" ids would sort first
    run = es.read_run("".join(lines).encode(), source_name="ties.trec")
    assert run.query_ids.tolist() == ["a", "b"]
    assert run.doc_ids.to_pylist() == [f"{q}{d:03d}" for q in ("a", "b") for d in reversed(range(300))]


@pytest.mark.parametrize("given", ["bytes", "path"])
def test_a_line_longer_than_pyarrows_block_is_read_again_in_larger_blocks(tmp_path, monkeypatch, given):
    """Blocks are 1 MiB; a 3 MiB doc id straddles two, so pyarrow is asked again with 16 MiB blocks
    (not the line-by-line reader), from a new stream of the file."""
    from evalsuite.io import _read_ranked

    data = b"q Q0 " + b"d" * (3 << 20) + b" 1 1.0 t\nq Q0 e 2 0.5 t\n"
    path = tmp_path / "long.trec"
    path.write_bytes(data)
    blocks = []
    read_csv = _read_ranked.pacsv.read_csv

    def spy(source, **options):
        blocks.append(options["read_options"].block_size)
        return read_csv(source, **options)

    monkeypatch.setattr(_read_ranked.pacsv, "read_csv", spy)
    run = es.read_run(data if given == "bytes" else path, source_name="long.trec")
    assert blocks == [1 << 20, 1 << 24]
    assert run.doc_ids.to_pylist() == ["d" * (3 << 20), "e"] and run.scores.tolist() == [1.0, 0.5]


def test_cranfield_sample_reads_and_matches_published_reference():
    """SOURCE.md's reference (pytrec_eval-terrier 0.5.11) for the BM25 run on Cranfield."""
    report = es.evaluate(CRANFIELD / "qrels.trec", CRANFIELD / "run_bm25.trec", ["map", "ndcg_cut_10", "P_10", "recip_rank"])
    assert {k: round(v, 4) for k, v in report.means.items()} == {
        "map": 0.2877, "ndcg_cut_10": 0.3599, "P_10": 0.2342, "recip_rank": 0.5152}
    assert report.params["n_queries"] == 225


# ----------------------------------------------------------------------------------------------
# Tab-separated TREC files: read by pyarrow on the tab itself, without the normalising pass.


def _split_like_trec_eval(data: bytes) -> list[tuple[str, str, float]]:
    rows = []
    for line in data.decode().splitlines():
        fields = line.split()
        if fields:
            rows.append((fields[0], fields[2], float(fields[4])))
    return rows


@pytest.mark.parametrize("data", [
    b"q1\tQ0\td1\t1\t2.5\tbm25\nq1\tQ0\td2\t2\t-1.5e-3\tbm25\nq2\tQ0\td1\t1\t7\tbm25\n",
    b"q1\tQ0\td1\t1\t2.5\tbm25\r\nq2\tQ0\td1\t1\t7\tbm25\r\n",          # CRLF line ends
    b"q1\t\tQ0\td1\t1\t2.5\tbm25\nq2\tQ0\td1\t1\t7\tbm25\n",              # a run of tabs
    b"\tq1\tQ0\td1\t1\t2.5\tbm25\nq2\tQ0\td1\t1\t7\tbm25\t\n",            # leading, trailing tabs
])
def test_tab_separated_run_reads_as_a_whitespace_split(data):
    run = es.read_run(data, source_name="run.trec")
    got = sorted((q, d, s) for q in run.query_ids for d, s in run.query(q)[["doc_id", "score"]].itertuples(index=False))
    assert got == sorted(_split_like_trec_eval(data))
    assert run.name == "bm25"


def test_tab_separated_run_skips_the_normalising_pass(monkeypatch, tmp_path):
    import evalsuite.io._read_ranked as read_ranked

    def refuse(*args, **kwargs):
        raise AssertionError("a tab-separated file must not be normalised")

    monkeypatch.setattr(read_ranked, "_normalise_whitespace", refuse)
    path = tmp_path / "run.trec"
    path.write_bytes(b"q1\tQ0\td1\t1\t2.5\tbm25\nq1\tQ0\td2\t2\t1.5\tbm25\n")
    assert es.read_run(path).query("q1")["doc_id"].tolist() == ["d1", "d2"]
    qrels = tmp_path / "qrels.trec"
    qrels.write_bytes(b"q1\t0\td1\t1\nq1\t0\td2\t0\n")
    assert es.read_qrels(qrels).query("q1") == {"d1": 1.0, "d2": 0.0}
    # Tabs and spaces mixed still take the normalising pass.
    with pytest.raises(AssertionError, match="normalised"):
        es.read_run(b"q1\tQ0 d1\t1\t2.5\tbm25\n", source_name="run.trec")


def test_tab_separated_run_names_the_bad_line(tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(b"q1\tQ0\td1\t1\t2.5\tbm25\nq1\tQ0\td2\t2\tabc\tbm25\n")
    with pytest.raises(es.EvalSuiteError) as info:
        es.read_run(path)
    message = str(info.value)
    assert "run.trec" in message and "line 2" in message and "score" in message and "abc" in message


def test_a_runs_and_a_qrels_arrays_are_read_only_and_the_callers_stay_writable():
    """Runs and qrels are shared between sessions and caches, and an isolated read's numbers are
    views of a mapped file: writing into one fails the same way wherever it was read, and the
    arrays a caller hands to the constructor are not frozen with it."""
    run = es.read_run(b"q1 Q0 d1 1 0.5 x\nq1 Q0 d2 2 0.25 x\n", source_name="r.trec")
    qrels = es.read_qrels(b"q1 0 d1 2\n", source_name="q.trec")
    for array in (run.scores, run.doc_keys, qrels.grades, qrels.doc_keys):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
    scores = np.array([0.5, 0.25])
    built = es.Run(run.query_ids, run.offsets, run.doc_ids, run.doc_keys, scores)
    scores[0] = 1.0
    assert scores.flags.writeable and built.scores[0] == 1.0  # a view: the caller's array, not a copy
