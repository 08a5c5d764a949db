"""Reading per-request records in every format and alias set; bad records name file, line, field, value."""

import csv
import gzip
import io
import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalsuite as es

ROWS = [
    {"query_id": "q1", "system": "A", "question": "who?", "answer": "me", "contexts": ["c1", "c2"],
     "context_useful": [True, False], "answer_claims_supported": [True, None, False], "success": True,
     "failure_stage": None, "latency_ms": 120.5, "latency_retrieval_ms": 20.0},
    {"query_id": "q2", "system": "A", "question": "what?", "answer": "it", "contexts": ["c3"],
     "context_useful": [True], "answer_claims_supported": [], "success": False,
     "failure_stage": "Retrieval", "latency_ms": 300.0, "latency_retrieval_ms": 250.0},
    {"query_id": "q1", "system": "B", "question": "who?", "answer": "you", "contexts": ["c1"],
     "context_useful": [False], "answer_claims_supported": [True], "success": True,
     "failure_stage": None, "latency_ms": 80.0},
]


def _check_content(records: es.Records):
    assert records.systems == ["A", "B"]
    table = records.table
    assert table.column("query_id").to_pylist() == ["q1", "q2", "q1"]
    assert table.column("answer_claims_supported").to_pylist() == [[True, None, False], [], [True]]
    assert table.column("latency_retrieval_ms").to_pylist() == [20.0, 250.0, None]
    report = es.evaluate_records(records)
    pq_ = report.per_query
    assert pq_["faithfulness"].tolist()[0] == 0.5 and math.isnan(pq_["faithfulness"].tolist()[1])
    assert report.scores["A"]["context_precision"] == 1.0  # [1, 0] -> 1.0, [1] -> 1.0
    assert float(report.task_success["A"]) == 0.5
    assert report.failures["A"].params["stages"]["retrieval"] == {"count": 1, "share": 1.0}
    lat = report.latency_table.set_index(["system", "stage"])
    assert lat.loc[("A", "end_to_end"), "mean"] == pytest.approx(210.25)
    assert lat.loc[("A", "retrieval"), "p50"] == pytest.approx(135.0)
    assert lat.loc[("B", "retrieval"), "n"] == 0


def _csv(rows, delimiter=","):
    buffer = io.StringIO()
    fields = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buffer, fieldnames=fields, delimiter=delimiter)
    writer.writeheader()
    for r in rows:
        writer.writerow({k: (json.dumps(v) if isinstance(v, list) else ("" if v is None else v)) for k, v in r.items()})
    return buffer.getvalue().encode()


def _files():
    jsonl = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
    parquet = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(ROWS), parquet)
    return {
        "records.jsonl": jsonl,
        "records.json": json.dumps(ROWS).encode(),
        "records.csv": _csv(ROWS),
        "records.tsv": _csv(ROWS, "\t"),
        "records.parquet": parquet.getvalue(),
        "records.jsonl.gz": gzip.compress(jsonl),
        "blank_lines.jsonl": b"\n" + jsonl.replace(b"\n", b"\n\n"),
    }


@pytest.mark.parametrize("name", list(_files()))
def test_every_format_reads_the_same(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(_files()[name])
    _check_content(es.read_records(path))


@pytest.mark.parametrize("name", ["records.jsonl", "records.json", "records.tsv", "records.parquet", "records.csv"])
def test_records_format_is_detected_from_content_without_an_extension(name):
    data = _files()[name]
    expected = name.rsplit(".", 1)[1]
    assert es.detect_records_format(data, name) == expected
    assert es.detect_records_format(data, "upload") == expected  # no extension: the content decides
    _check_content(es.read_records(data))  # a buffer has no name: the same detection reads it


def test_ragas_new_and_old_names_and_deepeval_are_mapped():
    new = es.read_records(json.dumps([{"user_input": "q", "response": "a", "retrieved_contexts": ["c"],
                                       "reference": "r"}]).encode(), format="json")
    old = es.read_records(json.dumps([{"question": "q", "answer": "a", "contexts": ["c"], "ground_truth": "r"}]).encode(),
                          format="json")
    deepeval = es.read_records(json.dumps([{"input": "q", "actual_output": "a", "retrieval_context": ["c"],
                                            "expected_output": "r"}]).encode(), format="json")
    for records in (new, old, deepeval):
        assert records.table.select(["question", "answer", "contexts", "reference"]).to_pylist() == [
            {"question": "q", "answer": "a", "contexts": ["c"], "reference": "r"}]
        assert any("numbered" in w for w in records.warnings)  # no ids: rows numbered, and said so
    assert new.aliases == {"user_input": "question", "response": "answer", "retrieved_contexts": "contexts"}


def test_ragchecker_export_matches_its_own_metrics():
    """RAGChecker's per-record faithfulness and claim recall equal ours from its entailment lists."""
    path = "sample_data/sources/ragchecker/checking_outputs.json"
    records = es.read_records(path)
    report = es.evaluate_records(records)
    source = json.load(open(path))["results"]
    for row, original in zip(report.per_query.itertuples(), source):
        assert row.faithfulness == pytest.approx(original["metrics"]["faithfulness"], abs=1e-12)
        assert row.context_recall == pytest.approx(original["metrics"]["claim_recall"], abs=1e-12)
    assert records.table.column("context_ids").to_pylist()[0] == [c["doc_id"] for c in source[0]["retrieved_context"]]


def test_ranking_metrics_per_request_match_the_list_api():
    rows = [{"query_id": "a", "context_ids": ["d1", "d2", "d3"], "relevant_ids": {"d3": 2, "d9": 1}},
            {"query_id": "b", "context_ids": ["x", "y"], "relevant_ids": ["y"]},
            {"query_id": "c", "context_ids": ["x"], "relevant_ids": []},
            {"query_id": "d", "context_ids": ["x"]}]
    report = es.evaluate_records(es.Records.from_rows(rows), k=2)
    relevant = [{"d3": 2, "d9": 1}, {"y": 1}, {}]
    retrieved = [["d1", "d2", "d3"], ["x", "y"], ["x"]]
    expected = {"ndcg@2": es.ndcg_at_k(relevant, retrieved, k=2), "recall@2": es.recall_at_k(relevant, retrieved, k=2),
                "mrr@2": es.mrr(relevant, retrieved, k=2), "map@2": es.mean_average_precision_at_k(relevant, retrieved, k=2)}
    for name, score in expected.items():
        got = report.per_query[name].tolist()
        assert got[:3] == pytest.approx(score.per_query.tolist()), name
        assert math.isnan(got[3])  # no relevant_ids: undefined, not 0


def _error(content: bytes, fmt: str, name: str = "bad.jsonl") -> es.EvalSuiteError:
    with pytest.raises(es.EvalSuiteError) as info:
        es.read_records(content, format=fmt, source_name=name)
    return info.value


def _jsonl(*rows):
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_judgement_list_length_must_match_contexts():
    err = _error(_jsonl({"query_id": "1", "contexts": ["a", "b"], "context_useful": [True, False]},
                        {"query_id": "2", "contexts": ["a", "b"], "context_useful": [True]}), "jsonl")
    assert (err.source, err.line, err.field, err.value) == ("bad.jsonl", 2, "context_useful", [True])
    assert "contexts has 2" in str(err)


def test_grade_outside_unit_interval_and_bad_labels():
    err = _error(_jsonl({"query_id": "1", "contexts": ["a"], "context_relevant": [1.5]}), "jsonl")
    assert (err.line, err.field) == (1, "context_relevant") and "0..1" in str(err)
    err = _error(_jsonl({"query_id": "1", "answer_similarity": 0.5}, {"query_id": "2", "answer_similarity": 2}), "jsonl")
    assert (err.line, err.field, err.value) == (2, "answer_similarity", 2)
    err = _error(_jsonl({"query_id": "1", "answer_claims_supported": [True, "maybe"]}), "jsonl")
    assert (err.line, err.field) == (1, "answer_claims_supported")


def test_unknown_failure_stage_lists_the_allowed_ones():
    err = _error(_jsonl({"query_id": "1", "failure_stage": None}, {"query_id": "2", "failure_stage": "network"}), "jsonl")
    assert (err.line, err.field, err.value) == (2, "failure_stage", "network")
    assert "retrieval, evidence, generation, orchestration, other" in str(err)


def test_latency_must_be_a_finite_non_negative_number():
    err = _error(_jsonl({"query_id": "1", "latency_ms": 5}, {"query_id": "2", "latency_ms": "fast"}), "jsonl")
    assert (err.line, err.field, err.value) == (2, "latency_ms", "fast")
    err = _error(_jsonl({"query_id": "1", "latency_generation_ms": -3}), "jsonl")
    assert (err.field, err.value) == ("latency_generation_ms", -3)
    err = _error(b"query_id,latency_ms\n1,12\n2,slow\n", "csv", "bad.csv")
    assert (err.source, err.line, err.field, err.value) == ("bad.csv", 3, "latency_ms", "slow")


def test_csv_list_cells_must_be_json_lists():
    err = _error(b'query_id,contexts\n1,"[""a""]"\n2,a; b\n', "csv", "bad.csv")
    assert (err.line, err.field, err.value) == (3, "contexts", "a; b")


def test_invalid_json_line_and_duplicates():
    err = _error(b'{"query_id": "1"}\n{"query_id": \n', "jsonl")
    assert err.line == 2 and "invalid JSON" in str(err)
    err = _error(_jsonl({"query_id": "1", "system": "A"}, {"query_id": "2", "system": "A"}, {"query_id": "1", "system": "A"}), "jsonl")
    assert "lines 1 and 3" in str(err) and err.field == "query_id"
    err = _error(_jsonl({"query_id": "1", "context_ids": ["d", "e", "d"]}), "jsonl")
    assert err.field == "context_ids" and "twice" in str(err)


def test_parquet_errors_name_the_row():
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"query_id": "1", "latency_ms": 3.0}, {"query_id": "2", "latency_ms": -1.0}]), buffer)
    err = _error(buffer.getvalue(), "parquet", "bad.parquet")
    assert "row 2" in str(err) and err.field == "latency_ms"


def test_empty_and_useless_files():
    assert "empty" in str(_error(b"", "jsonl"))
    records = es.read_records(_jsonl({"query_id": "1", "question": "only text"}), format="jsonl")
    with pytest.raises(es.EvalSuiteError) as info:
        es.evaluate_records(records)
    assert "no field any metric can use" in str(info.value)


def test_unknown_columns_are_kept_and_system_defaults_to_file_name(tmp_path):
    path = tmp_path / "my_rag_v2.jsonl"
    path.write_bytes(_jsonl({"query_id": "1", "success": True, "cost_usd": 0.002}))
    records = es.read_records(path)
    assert records.systems == ["my_rag_v2"]
    assert records.table.column("cost_usd").to_pylist() == [0.002]
    assert "cost_usd" in records.extra_columns


def test_concat_records_keeps_systems_apart():
    a = es.Records.from_rows([{"query_id": "1", "success": True}], system="A")
    b = es.Records.from_rows([{"query_id": "1", "success": False}], system="B")
    both = es.concat_records([a, b])
    assert both.systems == ["A", "B"]
    report = es.evaluate_records(both)
    assert float(report.task_success["A"]) == 1.0 and float(report.task_success["B"]) == 0.0
    with pytest.raises(es.EvalSuiteError):
        es.concat_records([a, a])


def test_broken_json_reader_chunks_are_rebuilt_from_their_lines():
    """pyarrow 26's JSON reader returns list<bool> chunks whose offsets overrun their values
    when the lists hold nulls; such chunks are found and rebuilt from their own lines."""
    import pyarrow.json as pajson

    from evalsuite.io._reading import valid_table as _valid_table

    rng = np.random.default_rng(0)

    def labels(n):
        return [None if rng.random() < 0.02 else bool(rng.random() < 0.5) for _ in range(n)]

    rows = [{"a": labels(5), "b": labels(int(rng.integers(1, 9)))} for _ in range(3000)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    table = pajson.read_json(pa.BufferReader(data), read_options=pajson.ReadOptions(block_size=8192))
    try:
        table.validate(full=True)
    except pa.ArrowInvalid:
        pass  # the upstream bug, reproduced (pyarrow 26.0.1); a fixed pyarrow skips the repair
    repaired = _valid_table(table, data)
    assert repaired.column("a").to_pylist() == [r["a"] for r in rows]
    assert repaired.column("b").to_pylist() == [r["b"] for r in rows]


def test_per_request_ranking_metrics_match_the_list_api_on_random_records():
    rng = np.random.default_rng(7)
    rows, relevant, retrieved = [], [], []
    for i in range(400):
        docs = [f"d{d}" for d in rng.choice(60, size=int(rng.integers(1, 15)), replace=False)]
        grades = {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(60, size=int(rng.integers(1, 8)), replace=False)}
        rows.append({"query_id": str(i), "context_ids": docs, "relevant_ids": grades})
        relevant.append(grades)
        retrieved.append(docs)
    report = es.evaluate_records(es.Records.from_rows(rows), k=5, rel_level=2)
    expected = {"ndcg@5": es.ndcg_at_k(relevant, retrieved, k=5, rel_level=2),
                "map@5": es.mean_average_precision_at_k(relevant, retrieved, k=5, rel_level=2),
                "mrr@5": es.mrr(relevant, retrieved, k=5, rel_level=2),
                "precision@5": es.precision_at_k(relevant, retrieved, k=5, rel_level=2),
                "recall@5": es.recall_at_k(relevant, retrieved, k=5, rel_level=2),
                "hit_rate@5": es.hit_rate_at_k(relevant, retrieved, k=5, rel_level=2)}
    for name, score in expected.items():
        assert np.max(np.abs(report.per_query[name].to_numpy() - score.per_query)) < 1e-12, name


RAGAS_EXPORT = (b'user_input,retrieved_contexts,response,reference,faithfulness,answer_relevancy,context_recall\n'
                b'q1,"[""c1""]",a1,r1,1.0,0.9,nan\n'
                b'q2,"[""c2""]",a2,r2,0.5,0.8,1.0\n')


def test_a_ragas_score_export_is_evaluated_with_its_own_values():
    report = es.evaluate_records(es.read_records(RAGAS_EXPORT, format="csv", source_name="ragas.csv"))
    scores = report.scores["ragas"]
    assert float(scores["faithfulness"]) == 0.75 and scores["faithfulness"].params["source"] == "given in the file"
    assert float(scores["answer_relevancy"]) == pytest.approx(0.85)
    # NaN in the export: undefined for that request, counted in the coverage.
    assert float(scores["context_recall"]) == 1.0 and scores["context_recall"].params["coverage"] == 0.5
    assert report.params["given_metrics"] == ["context_recall", "faithfulness", "answer_relevancy"]


def test_judgement_lists_take_precedence_over_a_given_column():
    rows = [{"query_id": "1", "answer_claims_supported": [True, False], "faithfulness": 0.9}]
    report = es.evaluate_records(es.Records.from_rows(rows))
    assert float(report.scores["records"]["faithfulness"]) == 0.5
    assert any("not used" in w for w in report.warnings)
    with pytest.raises(es.EvalSuiteError) as info:
        es.read_records(json.dumps([{"query_id": "1", "faithfulness": 1.5}]).encode(), format="json")
    assert info.value.field == "faithfulness"


def test_a_trec_run_given_as_records_is_refused_with_a_hint():
    with pytest.raises(es.EvalSuiteError) as info:
        es.read_records(b"301\tQ0\tFR940202-2-00150\t104\t2.129133\tSTANDARD\n", source_name="results.test")
    assert "looks like a TREC run or qrels file" in str(info.value) and info.value.line == 1


# ----------------------------------------------------------------------------------------------
# RAGAS results as RAGAS's docs save them: result.to_pandas().to_csv(path) (issue 15).

def _ragas_frame():
    # The columns RAGAS >= 0.2 writes: the EvaluationDataset's, then one per metric (Metric.name;
    # some versions add the mode, as in factual_correctness(mode=f1)); NaN where a score failed.
    return pd.DataFrame({
        "user_input": ["Who wrote Emma?", "When did it appear?"],
        "retrieved_contexts": [["Emma is a novel by Jane Austen.", "It's set in 'Highbury'."], ["Published 1815."]],
        "response": ["Jane Austen.", "In 1816."],
        "reference": ["Jane Austen", "December 1815"],
        "faithfulness": [1.0, 0.5],
        "llm_context_precision_with_reference": [0.9999999999, 1.0],
        "context_recall": [1.0, float("nan")],
        "factual_correctness(mode=f1)": [1.0, 0.0],
        "semantic_similarity": [0.95, 0.7],
        "context_entity_recall": [0.5, 1.0],
        "noise_sensitivity(mode=relevant)": [0.0, 0.5],
        "harmfulness": [0, 0],  # an AspectCritic: a user's own criterion, kept but not used
    })


def test_a_ragas_csv_with_python_list_cells_and_the_pandas_index_reads():
    data = _ragas_frame().to_csv().encode()  # the index too, as RAGAS's docs do it
    assert data.startswith(b",user_input,") and b",['Published 1815.']," in data  # Python reprs, not JSON
    records = es.read_records(data, format="csv", source_name="ragas_result.csv")
    assert records.table.column("contexts").to_pylist() == [
        ["Emma is a novel by Jane Austen.", "It's set in 'Highbury'."], ["Published 1815."]]
    assert records.extra_columns == ["harmfulness"]  # the index column is not kept
    assert any("pandas index" in w for w in records.warnings)
    assert records.aliases["factual_correctness(mode=f1)"] == "factual_correctness"
    assert records.aliases["noise_sensitivity(mode=relevant)"] == "noise_sensitivity"
    assert records.aliases["llm_context_precision_with_reference"] == "context_precision"
    assert records.aliases["semantic_similarity"] == "answer_similarity"
    report = es.evaluate_records(records)
    scores = report.scores["ragas_result"]
    # Each value as the file gives it: the mean over the requests where it is defined.
    expected = {"faithfulness": 0.75, "context_precision": (0.9999999999 + 1) / 2, "context_recall": 1.0,
                "factual_correctness": 0.5, "answer_similarity": 0.825, "context_entity_recall": 0.75,
                "noise_sensitivity": 0.25}
    for metric, value in expected.items():
        assert float(scores[metric]) == pytest.approx(value, abs=1e-12), metric
        assert scores[metric].params["source"] == "given in the file"
    assert scores["context_recall"].params["coverage"] == 0.5
    assert "lower is better" in scores["noise_sensitivity"].params["convention"]


@pytest.mark.parametrize("fmt", ["csv_no_index", "json_columns", "json_records", "json_split", "jsonl", "parquet"])
def test_a_ragas_result_in_every_pandas_format_reads_the_same(fmt):
    frame = _ragas_frame()
    data = {"csv_no_index": lambda: frame.to_csv(index=False),
            "json_columns": lambda: frame.to_json(),  # pandas' default orient
            "json_records": lambda: frame.to_json(orient="records"),
            "json_split": lambda: frame.to_json(orient="split"),
            "jsonl": lambda: frame.to_json(orient="records", lines=True)}.get(fmt)
    if data is None:
        buffer = io.BytesIO()
        frame.set_index(pd.Index([5, 7])).to_parquet(buffer)  # a non-default index is stored as a column
        raw = buffer.getvalue()
    else:
        raw = data().encode()
    records = es.read_records(raw, source_name="ragas_result")
    assert records.table.column("contexts").to_pylist()[1] == ["Published 1815."]
    assert records.extra_columns == ["harmfulness"]
    scores = es.evaluate_records(records).scores["ragas_result"]
    assert float(scores["factual_correctness"]) == 0.5 and float(scores["faithfulness"]) == 0.75


def test_python_list_cells_are_read_without_evaluating_anything():
    ok = es.read_records(b'query_id,answer_claims_supported,contexts\n1,"[True, None, False]","[\'a\', \'b\', \'c\']"\n',
                         format="csv")
    assert ok.table.column("answer_claims_supported").to_pylist() == [[True, None, False]]
    for cell in ("[__import__('os').system('true')]", "[open('x')]", "[1 + 1]", "[['a']]", "[{'a': 1}]", "(1, 2)",
                 "[x for x in 'ab']", "['a'] * 3"):
        data = ('query_id,contexts\n1,"' + cell.replace('"', '""') + '"\n').encode()
        err = _error(data, "csv", "bad.csv")
        assert (err.line, err.field, err.value) == (2, "contexts", cell), cell


def test_given_scores_are_decided_per_system_not_by_the_other_files():
    """A RAGAS file's own faithfulness stays when records with judgement lists are loaded too."""
    ragas = es.read_records(_ragas_frame().to_csv().encode(), format="csv", source_name="ragas_result.csv")
    judged = es.Records.from_rows([{"query_id": "q1", "answer_claims_supported": [True, False], "faithfulness": 0.9},
                                   {"query_id": "q2", "answer_claims_supported": [True]}], system="judged")
    alone = es.evaluate_records(ragas).scores["ragas_result"]["faithfulness"]
    both = es.evaluate_records(es.concat_records([judged, ragas]))
    assert float(both.scores["ragas_result"]["faithfulness"]) == float(alone) == 0.75
    assert both.scores["ragas_result"]["faithfulness"].params["source"] == "given in the file"
    # The judged system: (1/2 + 1) / 2 from its lists; its own 0.9 is not used, and that is said.
    assert float(both.scores["judged"]["faithfulness"]) == 0.75
    assert both.scores["judged"]["faithfulness"].params["source"] == "computed from the judgements"
    assert both.params["metric_sources"]["judged"]["faithfulness"] == "computed from the judgements"
    assert both.params["metric_sources"]["ragas_result"]["faithfulness"] == "given in the file"
    assert both.params["metric_sources"]["judged"]["factual_correctness"] == "none"
    assert any(w.startswith("judged: faithfulness computed") for w in both.warnings)


def test_files_that_keep_an_unused_column_with_different_types_combine():
    # RAGChecker's answer_claims are [subject, relation, object] triplets, RAGAS-style ones sentences:
    # the column is kept, not used, so the combined records hold it as text (JSON for the triplets).
    triplets = es.Records.from_rows([{"query_id": "q1", "answer_claims": [["a", "is", "b"]], "success": True}],
                                    system="ragchecker")
    sentences = es.Records.from_rows([{"query_id": "q1", "answer_claims": ["A is B."], "success": False}],
                                     system="mine")
    both = es.concat_records([triplets, sentences])
    assert both.table.column("answer_claims").to_pylist() == ['[["a", "is", "b"]]', '["A is B."]']
    assert float(es.evaluate_records(both).task_success["ragchecker"]) == 1.0


def test_systems_given_as_numbers_or_a_dictionary_are_evaluated_as_their_names():
    """A Records table built by hand with integer (or dictionary-encoded) systems: every record
    counts under the system's name as text, as the readers would give it (they fell out of every
    sum before: NaN with n = 0)."""
    import pyarrow as pa

    from evalsuite import evaluate_records
    from evalsuite.records.table import Records

    base = pa.table({"query_id": ["q1", "q2", "q3"], "system": ["1", "1", "2"],
                     "answer_claims_supported": [[True, False], [True], [False]]})
    expected = {s: float(v["faithfulness"]) for s, v in evaluate_records(Records(base)).scores.items()}
    assert expected == {"1": 0.75, "2": 0.0}
    for column in (pa.array([1, 1, 2]), pa.array(["1", "1", "2"]).dictionary_encode()):
        report = evaluate_records(Records(base.set_column(1, "system", column)))
        assert {s: float(v["faithfulness"]) for s, v in report.scores.items()} == expected
        assert {s: v["faithfulness"].params["n"] for s, v in report.scores.items()} == {"1": 2, "2": 1}
