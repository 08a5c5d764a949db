"""evaluate_records on the shipped sample records equals values computed independently from the sources.

LLMPerf's own summary files are the reference for latency percentiles and error rates; the raw
RAGTruth and LLMPerf files (sample_data/sources/) are the reference for success and failures.
"""

import importlib.util
import json
from collections import Counter, defaultdict

import numpy as np
import pytest

import evalsuite as es
from conftest import ROOT, SAMPLE

SOURCES = SAMPLE / "sources"


@pytest.fixture(scope="module")
def llmperf():
    return es.evaluate_records(es.read_records(SAMPLE / "rag" / "llmperf_requests.jsonl"))


@pytest.fixture(scope="module")
def ragtruth():
    # No failure_stage in the file: the stages are attributed from the judgements, as the dashboard does.
    return es.evaluate_records(es.with_attributed_failures(es.read_records(SAMPLE / "rag" / "ragtruth_qa.jsonl")))


def test_llmperf_latency_percentiles_equal_llmperf_summaries(llmperf):
    """LLMPerf's summaries are over successful requests: the same as the Latency page's
    "Successful requests only" (the records also carry the -100 failures' real latencies)."""
    from evalsuite import display

    table = display.latency_percentiles(llmperf.per_query, {"latency_ms": "end_to_end", "latency_ttft_ms": "ttft"},
                                        successful_only=True).set_index(["system", "stage"])
    summaries = sorted((SOURCES / "llmperf_latency" / "summary").glob("*.json"))
    assert len(summaries) == 19
    for path in summaries:
        summary = json.loads(path.read_text())
        for stage, key in (("end_to_end", "end_to_end_latency_s"), ("ttft", "ttft_s")):
            row = table.loc[(path.stem, stage)]
            assert row["mean"] == pytest.approx(summary[f"results_{key}_mean"] * 1000, rel=1e-12)
            for q in (50, 90, 95, 99):
                assert row[f"p{q}"] == pytest.approx(summary[f"results_{key}_quantiles_p{q}"] * 1000, rel=1e-12), (path.stem, stage, q)


def test_llmperf_success_rate_and_failures_equal_the_raw_requests(llmperf):
    for path in sorted((SOURCES / "llmperf_latency" / "individual").glob("*.json")):
        requests = json.loads(path.read_text())
        summary = json.loads((SOURCES / "llmperf_latency" / "summary" / path.name).read_text())
        score = llmperf.task_success[path.stem]
        failed = [r for r in requests if r["error_code"] is not None]
        assert score.params["n"] == len(requests)
        assert float(score) == pytest.approx(1 - summary["results_error_rate"], abs=1e-12)
        assert llmperf.failures[path.stem].params["n_failed"] == len(failed)
        # Stage mapping documented in sample_data/rag/README.md: -100 generation, 429 orchestration, else other.
        codes = Counter(r["error_code"] for r in failed)
        stages = llmperf.failures[path.stem].params["stages"]
        assert stages["generation"]["count"] == codes.get(-100, 0)
        assert stages["orchestration"]["count"] == codes.get(429, 0)
        assert stages["other"]["count"] == sum(n for c, n in codes.items() if c not in (-100, 429))


def test_ragtruth_success_and_failure_stage_equal_the_human_spans(ragtruth):
    answers = [json.loads(line) for line in (SOURCES / "ragtruth_qa" / "ragtruth_qa_responses.jsonl").read_text().splitlines()]
    by_model = defaultdict(list)
    for answer in answers:
        by_model[answer["model"]].append(answer)
    assert set(by_model) == set(ragtruth.task_success)
    for model, rows in by_model.items():
        clean = sum(1 for r in rows if not r["hallucination_spans"])
        assert float(ragtruth.task_success[model]) == pytest.approx(clean / len(rows), abs=1e-15)
        assert ragtruth.failures[model].params["stages"]["generation"]["count"] == len(rows) - clean


def _build_script():
    spec = importlib.util.spec_from_file_location("build_sample_data", ROOT / "scripts" / "build_sample_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ragtruth_faithfulness_equals_span_free_sentence_share(ragtruth):
    """Per model: mean over answers of (sentences no human span touches / sentences), from the raw spans."""
    split_sentences = _build_script().split_sentences
    answers = [json.loads(line) for line in (SOURCES / "ragtruth_qa" / "ragtruth_qa_responses.jsonl").read_text().splitlines()]
    shares = defaultdict(list)
    for answer in answers:
        sentences = split_sentences(answer["response"])
        spans = [(s["start"], s["end"]) for s in answer["hallucination_spans"]]
        clean = [not any(start < end_s and end > start_s for start, end in spans) for start_s, end_s in sentences]
        shares[answer["model"]].append(sum(clean) / len(clean))
    for model, values in shares.items():
        score = ragtruth.scores[model]["faithfulness"]
        assert float(score) == pytest.approx(np.mean(values), abs=1e-12)
        assert score.params["coverage"] == 1.0
    # No span at all <=> faithfulness 1.0, answer by answer.
    pq = ragtruth.per_query
    assert ((pq["faithfulness"] == 1.0) == (pq["success"] == 1.0)).all()


def test_ragchecker_human_systems_have_no_judgements_to_score():
    records = es.read_records(SAMPLE / "rag" / "ragchecker_human_systems.jsonl")
    assert len(records.systems) == 8 and len(records) == 448
    with pytest.raises(es.EvalSuiteError):
        es.evaluate_records(records)


def test_llmperf_failures_with_a_real_latency_keep_it(llmperf):
    """The -100 failures (response too short) ran: their end-to-end latency is in the records."""
    for path in sorted((SOURCES / "llmperf_latency" / "individual").glob("bedrock_*.json")):
        requests = json.loads(path.read_text())
        mine = llmperf.per_query[llmperf.per_query["system"] == path.stem]
        expected = [r["end_to_end_latency_s"] * 1000 if r["error_code"] in (None, -100) else None for r in requests]
        got = [None if v != v else v for v in mine["latency_ms"].tolist()]
        assert got == pytest.approx(expected, rel=1e-12)
        assert sum(r["error_code"] == -100 for r in requests) == int(((mine["success"] == 0) & mine["latency_ms"].notna()).sum())


def test_ares_sample_failures_are_attributed_from_its_human_labels():
    """ares_judge_examples.jsonl: a passage labelled irrelevant is a retrieval failure; a relevant
    passage with an answer labelled unfaithful is a generation failure (ARES's labels, read here
    straight from the TSV files)."""
    import csv

    expected = {}
    for path in sorted((SOURCES / "ares_fewshot").glob("*_few_shot_prompt_for_judge_scoring.tsv")):
        dataset = path.name.split("_")[0]
        with path.open(encoding="utf-8", newline="") as f:
            for index, row in enumerate(csv.DictReader(f, delimiter="\t")):
                if row["Context_Relevance_Label"] == "[[No]]":
                    expected[f"{dataset}-{index}"] = "retrieval"
                elif row["Answer_Faithfulness_Label"] == "[[No]]" or row["Answer_Relevance_Label"] == "[[No]]":
                    expected[f"{dataset}-{index}"] = "generation"
                else:
                    expected[f"{dataset}-{index}"] = None
    frame = es.attribute_failures(es.read_records(SAMPLE / "rag" / "ares_judge_examples.jsonl"))
    assert dict(zip(frame["query_id"], frame["stage"])) == expected
    assert sorted(v for v in expected.values() if v) == ["generation"] * 12 + ["retrieval"] * 12
    assert frame["attributed"].sum() == 24


def test_the_dashboard_samples_fail_at_several_stages_for_real_reasons():
    from dashboard.constants import SAMPLE_FILES

    parts = [es.read_records(path) for kind, path, _ in SAMPLE_FILES if kind == "records"]
    frame = es.attribute_failures(es.concat_records(parts))
    counts = frame[frame["failed"]].groupby(["stage", "attributed"]).size().to_dict()
    # ARES: 12 retrieval, 12 generation; RAGChecker examples: 1 evidence, 1 generation (wrong answer);
    # RAGTruth: 259 generation (human hallucination spans); LLMPerf (given): 146 generation, 392
    # orchestration, 1 other.
    assert counts == {("retrieval", True): 12, ("evidence", True): 1, ("generation", True): 12 + 1 + 259,
                      ("generation", False): 146, ("orchestration", False): 392, ("other", False): 1}
