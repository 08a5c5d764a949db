"""Regressions for problems an adversarial review found: each input once gave a wrong answer,
another exception type, a silent skip or a wrong line number."""

import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import evalsuite as es
from evalsuite.utils.keys import string_keys


def _error(fn, *args, **kwargs) -> es.EvalSuiteError:
    with pytest.raises(es.EvalSuiteError) as info:
        fn(*args, **kwargs)
    return info.value


def test_ids_sharing_a_key_prefix_are_joined_exactly():
    # These two ids share the top 40 bits of their keys, which the fast join compares.
    a, b = "doc759384", "doc1387507"
    keys = string_keys(pa.array([a, b]))
    assert keys[0] >> np.uint64(24) == keys[1] >> np.uint64(24) and keys[0] != keys[1]
    qrels = es.read_qrels(f"q1 0 {a} 1\nq1 0 {b} 0\nq2 0 x 1\n".encode(), source_name="q.trec")
    run = es.read_run(f"q1 Q0 {b} 1 2.0 r\nq1 Q0 {a} 2 1.0 r\nq2 Q0 x 1 1.0 r\n".encode(), source_name="r.trec")
    report = es.evaluate(qrels, run, ["P_1", "P_2", "recip_rank", "judged@2"])
    assert report.per_query.loc["q1"].tolist() == [0.0, 0.5, 0.5, 1.0]
    # q2 retrieved one doc, judged: judged@2 = 1 / min(2, 1) (ir_measures)
    assert report.per_query.loc["q2"].tolist() == [1.0, 0.5, 1.0, 1.0]


def test_a_very_long_id_does_not_stall_reading():
    ids = [f"d{i}" for i in range(100_000)] + ["x" * 5_000_000]
    start = time.perf_counter()
    keys = string_keys(pa.array(ids))
    assert time.perf_counter() - start < 5
    assert keys[-1] == string_keys(pa.array(["x" * 5_000_000]))[0]


@pytest.mark.parametrize("content, fmt, field", [
    (b'{"q1": {"d1": 1, "d1": 2}}', "json", "json"),                 # a doc given twice
    (b'{"q1": {"d1": 1}, "q1": {"d2": 1}}', "json", "json"),          # a query given twice
    (b"[" * 100_000 + b"]" * 100_000, "json", "json"),                # nesting past the recursion limit
    (b'{"q\\ud800": {"d1": 1}}', "json", "text"),                    # a lone surrogate in an id
    (b"query_id,doc_id,score,score\nq,d,1,2\n", "csv", "header"),      # a column named twice
])
def test_bad_json_and_csv_runs_are_evalsuite_errors(content, fmt, field):
    assert _error(es.read_run, content, format=fmt).field == field


def test_in_memory_inputs_that_once_escaped_as_other_exceptions():
    assert _error(es.Run.from_dict, {"q": {"a": 10**400}}).field == "q / a"
    frame = pd.DataFrame({"query_id": pd.array([1, None], dtype="Int64"), "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    assert "missing id" in str(_error(es.Run.from_dataframe, frame))
    for name in ("ndcg@9223372036854775808", "ndcg@" + "9" * 5000):
        assert _error(es.evaluate, {"q": {"a": 1}}, {"q": {"a": 1.0}}, [name]).field == "metric"
    assert _error(es.precision_at_k, [{"a"}], [["a"]], k=10**5000).field == "k"
    assert _error(es.faithfulness, pa.array([[1, 2]])).value == 2.0
    assert _error(es.faithfulness, pa.array([[0.5]])).value == 0.5


def test_line_numbers_count_blank_lines_and_quoted_newlines():
    csv = b'query_id,doc_id,score\nq1,d1,1\n\nq1,"d\n2",2\nq1,d1,3\n'
    err = _error(es.read_run, csv, format="csv", source_name="r.csv")
    assert "lines 2 and 6" in str(err)
    jsonl = b'{"qid": "q", "docno": "a", "score": 1}\n   \n{"qid": "q", "docno": "a", "score": 2}\n'
    assert "lines 1 and 3" in str(_error(es.read_run, jsonl, format="jsonl"))
    records = b'{"query_id": "1"}\n \n{"query_id": "2", "latency_ms": -1}\n'
    assert _error(es.read_records, records, format="jsonl").line == 3


def test_headerless_tsv_qrels_read_as_trec():
    qrels = es.read_qrels(b"1185869\t0\t0\t1\n1185868\t0\t16\t1\n", source_name="qrels.dev.tsv")
    assert qrels.query("1185869") == {"0": 1.0}


def test_graded_relevant_ids_with_different_keys_per_record():
    """Arrow reads {id: grade} objects as one struct over all keys, null where a row lacks one."""
    rows = (b'{"query_id":"1","context_ids":["a","b"],"relevant_ids":{"a":2}}\n'
            b'{"query_id":"2","context_ids":["a","b"],"relevant_ids":{"b":1}}\n')
    report = es.evaluate_records(es.read_records(rows, format="jsonl"), k=2)
    assert report.per_query["recall@2"].tolist() == [1.0, 1.0]
    assert report.per_query["mrr@2"].tolist() == [1.0, 0.5]


@pytest.mark.parametrize("content, fmt", [
    (b'[{"query_id": "1", "latency_ms": NaN}]', "json"),
    (b'[{"query_id": "1", "query_id": "2"}]', "json"),
    (b'[{"query_id": "\\ud800"}]', "json"),
    (b"query_id,success,success\n1,true,false\n", "csv"),
    (b'[{"query_id": "1", "retrieved2answer": [["Entailment", "Neutral"], ["Neutral"]]}]', "json"),
    (b'[{"query_id": "1", "retrieved2response": [5, null]}]', "json"),
    (b'[{"query_id": "1", "retrieved2response": ["Entailment"]}]', "json"),
    (b'[{"query_id": "1", "retrieved_context": [{"doc_id": null, "text": "t"}]}]', "json"),
])
def test_bad_records_are_evalsuite_errors(content, fmt):
    _error(es.read_records, content, format=fmt)


def test_records_csv_with_very_long_fields():
    answer = "word " * 60_000  # 300,000 characters, past the csv module's default field limit
    records = es.read_records(f"query_id,answer,success\n1,{answer},true\n".encode(), format="csv")
    assert records.table.column("answer").to_pylist() == [answer]
