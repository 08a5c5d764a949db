"""Bad input raises EvalSuiteError naming the file, line, field and value; nothing is skipped."""


import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es
from conftest import TREC

GOOD = "q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2 1.0 tag\n"


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _error(fn, *args, **kwargs) -> es.EvalSuiteError:
    with pytest.raises(es.EvalSuiteError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("variant", ["plain", "tabs"])
def test_short_run_line_names_file_line_and_columns(tmp_path, variant):
    text = GOOD + "q1 Q0 d3 3 tag\n"
    if variant == "tabs":
        text = text.replace(" ", "\t")
    err = _error(es.read_run, _write(tmp_path, "run.trec", text))
    assert (err.source, err.line, err.field) == ("run.trec", 3, "columns")
    assert "6 columns" in str(err) and "run.trec, line 3" in str(err)


def test_non_numeric_score_names_the_value(tmp_path):
    err = _error(es.read_run, _write(tmp_path, "run.trec", GOOD + "q1 Q0 d3 3 abc tag\n"))
    assert (err.line, err.field, err.value) == (3, "score", "abc")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_non_finite_score_is_rejected(tmp_path, bad):
    err = _error(es.read_run, _write(tmp_path, "run.trec", GOOD + f"q1 Q0 d3 3 {bad} tag\n"))
    assert (err.line, err.field) == (3, "score")


def test_non_numeric_and_non_integer_grades(tmp_path):
    err = _error(es.read_qrels, _write(tmp_path, "q.trec", "q1 0 d1 1\nq1 0 d2 high\n"))
    assert (err.line, err.field, err.value) == (2, "grade", "high")
    err = _error(es.read_qrels, _write(tmp_path, "q.trec", "q1 0 d1 1\nq1 0 d2 1.5\n"))
    assert (err.line, err.field, float(err.value)) == (2, "grade", 1.5)
    assert "whole number" in str(err)


def test_qrels_given_as_run_and_run_given_as_qrels(tmp_path):
    err = _error(es.read_run, TREC / "qrels.test")
    assert "looks like a qrels file" in str(err) and err.line == 1
    err = _error(es.read_qrels, TREC / "results.test")
    assert "looks like a run file" in str(err) and err.line == 1


def test_empty_and_comment_only_files(tmp_path):
    assert "empty" in str(_error(es.read_run, _write(tmp_path, "e.trec", b"")))
    assert "no run lines" in str(_error(es.read_run, _write(tmp_path, "c.trec", "# only a comment\n\n")))
    assert "no judgements" in str(_error(es.read_qrels, _write(tmp_path, "c.trec", "# nothing\n")))


def test_undecodable_bytes_name_line_and_bytes(tmp_path):
    content = GOOD.encode() + "q1 Q0 caf\u00e9 3 0.5 tag\n".encode("latin-1")
    err = _error(es.read_run, _write(tmp_path, "latin1.trec", content))
    assert err.line == 3 and err.value == b"\xe9" and "UTF-8" in str(err)


@pytest.mark.parametrize("field", ["q0", "rank", "iteration"])
@pytest.mark.parametrize("variant", ["spaces", "tabs", "mixed"])
def test_undecodable_bytes_in_an_unused_field_are_still_an_error(tmp_path, field, variant):
    # The fast path skips converting Q0, rank and the qrels' iteration when the file is ASCII
    # with no two separators in a row; bytes outside ASCII there must still be checked.
    if field == "iteration":
        reader, lines = es.read_qrels, ["q1 0 d1 1", "q1 \xd10 d2 0"]
    else:
        reader = es.read_run
        bad = "q1 \xd10 d2 2 1.0 tag" if field == "q0" else "q1 Q0 d2 \xd1 1.0 tag"
        lines = ["q1 Q0 d1 1 2.0 tag", bad]
    text = "\n".join(lines) + "\n"
    if variant == "tabs":
        text = text.replace(" ", "\t")
    elif variant == "mixed":
        text = text.replace(" ", "\t", 1)
    err = _error(reader, _write(tmp_path, "f.trec", text.encode("latin-1")))
    assert err.line == 2 and err.value == b"\xd1" and "UTF-8" in str(err)


def test_duplicate_doc_in_run_names_query_doc_and_both_lines(tmp_path):
    path = _write(tmp_path, "dup.trec", GOOD + "q1 Q0 d1 3 0.5 tag\n")
    err = _error(es.read_run, path)
    assert "'d1'" in str(err) and "'q1'" in str(err) and "lines 1 and 3" in str(err)
    # What to do, for a reader in a browser (remove a line) and in code or on the command line.
    assert "remove one of the lines" in str(err) and "duplicates='max'" in str(err) and "--duplicates max" in str(err)
    run = es.read_run(path, duplicates="max")
    assert run.query("q1")["score"].tolist() == [2.0, 1.0]
    assert any("duplicate" in w for w in run.warnings)


def test_duplicate_judgement_in_qrels(tmp_path):
    path = _write(tmp_path, "dup.qrels", "q1 0 d1 1\nq2 0 d1 0\nq1 0 d1 2\n")
    err = _error(es.read_qrels, path)
    assert "lines 1 and 3" in str(err)
    assert es.read_qrels(path, duplicates="max").query("q1") == {"d1": 2.0}


def test_duplicate_in_list_api():
    err = _error(es.precision_at_k, [{"a"}], [["a", "b", "a"]], k=2)
    assert "ranks 1 and 3" in str(err) and err.field == "retrieved[0]"
    assert float(es.precision_at_k([{"a"}], [["a", "b", "a"]], k=2, duplicates="first")) == 0.5


@pytest.mark.parametrize("name", ["ndcg@0", "P_0", "precision@-1", "map@x", "ndcg@1.5", "relstring", "bpref@10", "recall@"])
def test_unknown_metric_or_bad_cutoff(name):
    err = _error(es.evaluate, {"q": {"d": 1}}, {"q": {"d": 1.0}}, [name])
    assert err.field == "metric" and err.value == name


@pytest.mark.parametrize("k", [0, -3, 2.5, True, "5"])
def test_bad_k_in_list_api(k):
    err = _error(es.precision_at_k, [{"a"}], [["a"]], k=k)
    assert err.field == "k"


@pytest.mark.parametrize("level", [0, -1, float("nan"), "2"])
def test_bad_rel_level(level):
    assert _error(es.precision_at_k, [{"a"}], [["a"]], k=1, rel_level=level).field == "rel_level"


def test_misaligned_and_misshapen_list_input():
    assert "aligned" in str(_error(es.mrr, [{"a"}, {"b"}], [["a"]]))
    assert _error(es.mrr, [{"a"}, {"b"}], ["a", "b"]).field == "retrieved[0]"  # a flat list of ids
    assert _error(es.ndcg_at_k, [{"a": float("nan")}], [["a"]]).field == "relevant[0]['a']"  # one name for the judgements
    assert _error(es.ndcg_at_k, [{"a": 1}], [["a"]], gains="log").field == "gains"


def test_no_common_queries_is_an_error_not_a_nan_table():
    err = _error(es.evaluate, {"1": {"d": 1}}, {"one": {"d": 1.0}}, ["map"])
    assert "none in common" in str(err)


def test_csv_errors_name_the_line(tmp_path):
    path = _write(tmp_path, "run.csv", "query_id,doc_id,score\nq1,d1,1.0\nq1,d2,oops\n")
    err = _error(es.read_run, path)
    assert (err.line, err.field, err.value) == (3, "score", "oops")
    path = _write(tmp_path, "run.csv", "query_id,doc_id,score\nq1,d1,1.0\nq1,d2\n")
    assert _error(es.read_run, path).line == 3
    path = _write(tmp_path, "run.csv", "query,passage,value\nq1,d1,1.0\n")
    err = _error(es.read_run, path)
    assert err.field == "header" and "doc id" in str(err)


def test_csv_qrels_with_rank_column_is_a_run(tmp_path):
    path = _write(tmp_path, "q.csv", "query_id,doc_id,rank,score\nq1,d1,1,1.0\n")
    assert "looks like a run" in str(_error(es.read_qrels, path))


def test_json_and_jsonl_errors(tmp_path):
    err = _error(es.read_run, _write(tmp_path, "run.json", '{"q1": {"d1": 1.0,\n "d2": }}'))
    assert err.line == 2 and "invalid JSON" in str(err)
    err = _error(es.read_run, _write(tmp_path, "run.json", '{"q1": {"d1": "high"}}'))
    assert err.field == "q1 -> d1" and err.value == "high"
    err = _error(es.read_run, _write(tmp_path, "run.jsonl", '{"qid": "q1", "docno": "d1", "score": 1}\n{"qid": "q1", "docno": "d2", "score": "x"}\n'))
    assert (err.line, err.field, err.value) == (2, "score", "x")
    err = _error(es.read_run, _write(tmp_path, "run.jsonl", '{"qid": "q1", "docno": "d1", "score": 1}\n{"qid": "q1",\n'))
    assert err.line == 2


def test_parquet_errors_name_the_row(tmp_path):
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", None], "score": [1.0, 2.0]})
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    err = _error(es.read_run, path)
    assert "row" in str(err) and err.field == "doc_id"
    _write(tmp_path, "broken.parquet", b"PAR1 not really")
    assert "Parquet" in str(_error(es.read_run, tmp_path / "broken.parquet"))


def test_bad_gzip_and_missing_file(tmp_path):
    assert "gzip" in str(_error(es.read_run, _write(tmp_path, "run.trec.gz", b"\x1f\x8bnot gzip")))
    assert "not found" in str(_error(es.read_run, tmp_path / "absent.trec"))


def test_unknown_format_argument():
    assert _error(es.read_run, GOOD.encode(), format="xml").field == "format"


def test_prefs_file_with_missing_topic_column():
    """trec_eval's malformed-input fixture prefs.rank20: 5 columns where a run needs 6."""
    err = _error(es.read_run, TREC / "prefs.rank20")
    assert err.line == 1 and err.field == "columns"


def test_extra_run_columns_are_reported_not_silent():
    run = es.read_run(TREC / "results.trunc")
    assert len(run) == 584
    assert run.warnings and "ignored" in run.warnings[0]
