"""Every RAGAS metric from raw records (evalsuite/judges/ragas.py): the LLM judge against the loopback
server replaying recorded replies (tests/data/ragas/recorded_chat.json, made by
scripts/record_ragas_fixtures.py from word-overlap stand-ins, not a model), the embeddings from
the real MiniLM. What is checked is that each reply becomes the right column value and the
metrics' arithmetic on them, never that a verdict is right."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.judges import LLMJudge
from evalsuite.judges.ragas_needs import JUDGED_METRICS, coverage_of, critique_column
from evalsuite.judges.prompts import RAGAS_PROMPTS
from evalsuite.judges.ragas import RagasJudge, split_sentences

from judge_server import JudgeServer

DATA = Path(__file__).resolve().parents[1] / "data" / "ragas"
MODEL = "test-judge"
ASPECTS = {"concise": "The response answers in at most two sentences without filler."}


@pytest.fixture(scope="module")
def embedder():
    from evalsuite.judges.embedding import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture
def records():
    return es.read_records(DATA / "records.jsonl")


@pytest.fixture
def server():
    recordings = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    with JudgeServer(recordings=recordings) as srv:
        yield srv
        assert srv.unrecorded == [], "requests without a recorded response (rerun scripts/record_ragas_fixtures.py)"


def make(server, embedder, cache=":memory:", **options):
    llm = LLMJudge(MODEL, base_url=server.base_url, cache=cache, sleep=lambda s: None)
    options.setdefault("aspects", ASPECTS)
    options.setdefault("aspect_strictness", 3)
    return RagasJudge(llm, embedder, **options)


def col(judged, name):
    table = judged.records.table
    return dict(zip(table.column("query_id").to_pylist(), table.column(name).to_pylist()))


def test_every_metric_from_question_answer_contexts_reference(server, embedder, records):
    judged = make(server, embedder).judge(records)
    assert judged.done == 5 and judged.stats.missing == {}
    # Entities (recorded replies): r1 GN {France, Paris, Seine} all in CN; r2 GN {William Shakespeare,
    # Hamlet, 1600}, CN has 1599 and 1601 but not 1600.
    assert col(judged, "reference_entities_in_contexts")["r1"] == [True, True, True]
    assert col(judged, "reference_entities_in_contexts")["r2"] == [True, True, False]
    assert col(judged, "reference_entities_in_contexts")["r4"] == [False, False]  # no contexts: no entity found
    # Noncommittal: r2 by the recorded verdict, r3 (empty answer) by rule.
    assert col(judged, "answer_noncommittal")["r2"] == [True]
    assert col(judged, "answer_noncommittal")["r3"] == [True]
    assert col(judged, "generated_questions")["r3"] == []
    # Votes: three per aspect and request.
    assert all(len(v) == 3 for v in col(judged, critique_column("concise")).values())
    # Sentences: r1's first chunk is two sentences (pysbd), plus one of the second chunk.
    assert len(col(judged, "context_sentences_relevant")["r1"]) == 3
    assert col(judged, "context_useful_for_answer")["r4"] == []

    report = es.evaluate_records(judged.records)
    for metric in ("faithfulness", "context_precision", "context_recall", "context_relevance", "answer_correctness",
                   "answer_relevancy", "answer_similarity", "context_entity_recall", "context_utilization",
                   "context_relevancy", "critique_concise"):
        assert metric in report.metrics, metric
    per = report.per_query.set_index("query_id")
    assert per.loc["r1", "context_entity_recall"] == 1.0
    assert per.loc["r2", "context_entity_recall"] == pytest.approx(2 / 3)
    assert per.loc["r2", "answer_relevancy"] == 0.0 and per.loc["r3", "answer_relevancy"] == 0.0
    assert report.scores["rag"]["critique_concise"].params["convention"] == es.METRICS["aspect_critique"].convention


def test_answer_relevancy_similarities_are_minilm_cosines(server, embedder, records):
    judged = make(server, embedder, metrics=["answer_relevancy"]).judge(records)
    questions = col(judged, "generated_questions")["r1"]
    assert len(questions) == 3  # strictness 3
    vectors = embedder.embed(["What is the capital of France?", *questions])
    expected = [max(0.0, float(np.dot(vectors[0], v) / np.linalg.norm(vectors[0]) / np.linalg.norm(v)))
                for v in vectors[1:]]
    assert col(judged, "question_similarities")["r1"] == pytest.approx(expected, abs=1e-6)
    score = es.answer_relevancy([col(judged, "question_similarities")["r1"]])
    assert float(score) == pytest.approx(np.mean(expected), abs=1e-6)


def test_provenance_of_each_judged_value(server, embedder, records):
    judged = make(server, embedder, metrics=["context_entity_recall", "answer_relevancy"]).judge(records)
    prov = json.loads(col(judged, "judge_provenance")["r1"])
    entities = [p for p in prov if p["column"] == "reference_entities"]
    assert entities and entities[0]["model"] == MODEL and entities[0]["mode"] == "json_schema"
    assert entities[0]["prompt_version"] == RAGAS_PROMPTS["entities"].version
    sims = [p for p in prov if p["column"] == "question_similarities"]
    assert sims[0]["judge"] == "embedding" and "MiniLM" in sims[0]["model"]
    rules = json.loads(col(judged, "judge_provenance")["r3"])
    assert any(p["judge"] == "rule" and p["column"] == "generated_questions" for p in rules)


def test_rerun_answers_from_the_cache_and_stop_resumes(server, embedder, records, tmp_path):
    cache = tmp_path / "cache.sqlite"
    judge = make(server, embedder, cache=cache, metrics=["context_utilization"])

    def stop_after_first(done, total, stats):
        if done >= 1:
            judge.stop()

    first = judge.judge(records, progress=stop_after_first)
    assert first.done < 5
    calls = server.requests
    second = make(server, embedder, cache=cache, metrics=["context_utilization"]).judge(records)
    assert second.done == 5
    # What the first run asked is not asked again (one record may be decided by rule with no call,
    # so the first run can stop before any call: which record finishes first is up to the threads).
    assert second.stats.calls == server.requests - calls
    after_second = server.requests
    third = make(server, embedder, cache=cache, metrics=["context_utilization"]).judge(records)
    assert third.stats.calls == 0 and server.requests == after_second  # everything from the cache
    assert col(third, "context_useful_for_answer") == col(second, "context_useful_for_answer")


def test_estimate_and_coverage_before_the_run(server, embedder, records):
    judge = make(server, embedder)
    estimate = judge.estimate(records)
    assert estimate.requests > 20 and estimate.texts_to_embed > 0 and server.requests == 0
    info = coverage_of(records)
    assert set(info) == set(JUDGED_METRICS)
    assert info["context_entity_recall"]["records_with_fields"] == 5  # empty contexts still a list
    assert info["answer_relevancy"]["records_with_fields"] == 4  # r3's answer is empty


def test_judged_records_round_trip_through_jsonl(server, embedder, records, tmp_path):
    judged = make(server, embedder, metrics=["context_entity_recall", "aspect_critique", "context_relevancy"]).judge(records)
    path = tmp_path / "judged.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for row in judged.records.table.to_pylist():
            out.write(json.dumps(row) + "\n")
    again = es.evaluate_records(es.read_records(path))
    before = es.evaluate_records(judged.records)
    for metric in ("context_entity_recall", "critique_concise", "context_relevancy"):
        a, b = before.per_query[metric].tolist(), again.per_query[metric].tolist()
        assert all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b)), metric


def test_bad_settings():
    llm = LLMJudge(MODEL, base_url="http://127.0.0.1:9/v1", cache=":memory:")
    with pytest.raises(EvalSuiteError):
        RagasJudge(llm, metrics=["bleu"])
    with pytest.raises(EvalSuiteError):
        RagasJudge(llm, metrics=["aspect_critique"])  # no aspect
    with pytest.raises(EvalSuiteError) as info:
        RagasJudge(llm, aspects=ASPECTS, aspect_strictness=2)
    assert info.value.field == "aspect_strictness"
    with pytest.raises(EvalSuiteError):
        RagasJudge(llm, aspects={"not a name": "x"})
    with pytest.raises(EvalSuiteError):
        RagasJudge(None, metrics=["faithfulness"])
    RagasJudge(None, metrics=["answer_similarity"])  # embeddings only: no LLM needed


def test_sentences_split_by_pysbd():
    assert split_sentences("Dr. Smith arrived at 5 p.m. on Monday. He left.") == [
        "Dr. Smith arrived at 5 p.m. on Monday.", "He left."]
    assert split_sentences("  ") == []


def test_list_functions_take_texts_and_a_judge(server, embedder, records):
    rows = [{k: v for k, v in r.items() if k in ("question", "answer", "contexts", "reference")}
            for r in records.table.to_pylist()]
    judge = make(server, embedder)
    entity = es.context_entity_recall(texts=rows, judge=judge)
    # Recorded entities: r1 3/3, r2 2/3, r3 4/4, r4 (no contexts) 0/2, r5 GN {France, Paris} both in CN.
    assert entity.per_query.tolist() == pytest.approx([1.0, 2 / 3, 1.0, 0.0, 1.0])
    critique = es.aspect_critique(texts=rows, judge=judge)
    assert critique.params["criterion"] == "concise" and critique.params["judged"]["judgements"] > 0
    relevancy = es.answer_relevancy(texts=rows, judge=judge, compat="ragas")
    assert relevancy.per_query[1] == 0.0 and relevancy.params["compat"] == "ragas"  # r2: noncommittal
    with pytest.raises(EvalSuiteError):
        es.context_relevancy(texts=rows)  # a judge is needed
    with pytest.raises(EvalSuiteError):
        es.context_relevancy(texts=rows, judge=object())


def test_answer_similarity_alone_needs_no_llm(embedder, records):
    judged = RagasJudge(None, embedder, metrics=["answer_similarity"]).judge(records)
    assert judged.done == 5 and judged.stats.calls == 0
    row = records.table.to_pylist()[0]
    a, r = embedder.embed([row["answer"], row["reference"]])
    expected = float(np.dot(a, r) / np.linalg.norm(a) / np.linalg.norm(r))
    assert col(judged, "answer_similarity")["r1"] == pytest.approx(expected, abs=1e-6)
    assert col(judged, "answer_similarity")["r3"] == 0.0  # empty answer: by rule
    assert float(es.evaluate_records(judged.records).scores["bm25"]["answer_similarity"]) == pytest.approx(
        np.mean([col(judged, "answer_similarity")["r4"], col(judged, "answer_similarity")["r5"]]))
