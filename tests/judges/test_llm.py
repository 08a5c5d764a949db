"""The LLM judge against a loopback OpenAI-shaped server replaying recorded responses by request
hash (tests/judge_server.py; an unrecorded request fails the test), with injected faults: the
retries, the cache, resuming, the budget stop, the concurrency bound, the output-mode fallback,
degenerate input decided without a call, and every fault ending as a counted missing judgement.
Verdict values come from the recordings (tests/data/judges/recorded_chat.json), never from a
model; what is checked is that the judge turns each reply into the right column value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.judges import JudgeCache, LLMJudge, PROMPTS, request_hash
from evalsuite.judges.llm import extract_json

from judge_server import JudgeServer

DATA = Path(__file__).resolve().parents[1] / "data" / "judges"
MODEL = "test-judge"  # the model id the recordings were made with


@pytest.fixture
def records():
    return es.read_records(DATA / "records.jsonl")


@pytest.fixture
def server():
    with JudgeServer() as srv:
        yield srv
        assert srv.unrecorded == [], "requests without a recorded response (rerun scripts/record_judge_fixtures.py)"


def make_judge(server, cache=":memory:", **options):
    options.setdefault("sleep", lambda s: None)
    return LLMJudge(MODEL, base_url=server.base_url, cache=cache, **options)


def column(judged, name):
    return dict(zip(judged.records.table.column("query_id").to_pylist(), judged.records.table.column(name).to_pylist()))


def provenance(judged):
    return dict(zip(judged.records.table.column("query_id").to_pylist(),
                    map(json.loads, judged.records.table.column("judge_provenance").to_pylist())))


def test_replayed_judgements_fill_the_record_columns(server, records):
    judged = make_judge(server, concurrency=4).judge(records)
    assert judged.done == 5 and judged.stats.missing == {}
    # The recorded replies: q1's second claim (40 million) is not in the contexts, nor in the reference.
    assert column(judged, "answer_claims")["q1"] == ["Paris is the capital of France.", "It has 40 million inhabitants."]
    assert column(judged, "answer_claims_supported")["q1"] == [True, False]
    assert column(judged, "answer_claims_in_reference")["q1"] == [True, False]
    assert column(judged, "context_useful")["q1"] == [True, False]
    assert column(judged, "context_relevant")["q1"] == [1.0, 0.0]
    # Every metric of the package works on the judged records unchanged.
    report = es.evaluate_records(judged.records)
    per = report.per_query.set_index(["system", "query_id"])
    assert per.loc[("rag", "q1"), "faithfulness"] == pytest.approx(0.5)
    assert per.loc[("rag", "q1"), "context_precision"] == pytest.approx(1.0)
    assert {"faithfulness", "context_recall", "context_precision", "context_relevance", "answer_correctness"} <= set(report.metrics)


def test_degenerate_input_is_decided_by_rule_without_a_call(server, records):
    judged = make_judge(server).judge(records)
    # q3: empty answer -> no answer claims, no call; every reference claim missing from the answer.
    assert column(judged, "answer_claims")["q3"] == [] and column(judged, "answer_claims_supported")["q3"] == []
    assert column(judged, "reference_claims_in_answer")["q3"] == [False]
    # q4: no contexts -> no claim can be supported, per-chunk lists empty; no call for them.
    assert column(judged, "answer_claims_supported")["q4"] == [False]
    assert column(judged, "context_useful")["q4"] == [] and column(judged, "context_relevant")["q4"] == []
    rules = [p for p in provenance(judged)["q3"] + provenance(judged)["q4"] if p["judge"] == "rule"]
    assert {p["status"] for p in rules} >= {"rule: empty answer: no claims", "rule: no contexts: no claim can be supported",
                                            "rule: empty answer: no claim can be supported", "rule: no contexts"}
    assert judged.stats.rule_decided == len(rules) == 6
    assert all(PROMPTS["answer_claims"].system != b["messages"][0]["content"] or "Berlin Wall" not in b["messages"][1]["content"]
               for b in server.bodies)


def test_provenance_per_judgement_and_no_key_anywhere(server, records, tmp_path):
    cache_path = tmp_path / "cache.sqlite3"
    judged = make_judge(server, cache=cache_path, api_key="sk-test-SECRET-0123").judge(records)
    assert server.authorization == {"Bearer sk-test-SECRET-0123"}
    entries = provenance(judged)["q1"]
    first = entries[0]
    assert first["judge"] == "llm" and first["model"] == MODEL and first["mode"] == "json_schema"
    assert first["endpoint_host"] == server.base_url.split("//")[1].split("/")[0]
    assert first["prompt_version"] == PROMPTS["answer_claims"].version and len(first["request_hash"]) == 64
    assert first["prompt_tokens"] > 0 and first["latency_ms"] > 0 and first["cached"] is False
    assert first["request_hash"] in server.hashes  # the server computed the same hash from the body
    blob = cache_path.read_bytes() + json.dumps(entries).encode() + judged.records.table.to_string().encode()
    assert b"SECRET" not in blob and b"sk-test" not in blob
    judge = make_judge(server, cache=":memory:", api_key="sk-test-SECRET-0123")
    assert "SECRET" not in repr(judge)
    server.inject("*", ["401"])
    with pytest.raises(EvalSuiteError) as err:
        judge.judge(records)
    assert "refused the API key" in str(err.value) and "SECRET" not in str(err.value)


def test_rerun_makes_no_call_and_replays_exactly(server, records, tmp_path):
    cache = tmp_path / "cache.sqlite3"
    first = make_judge(server, cache=cache).judge(records)
    sent = server.requests
    assert sent == first.stats.calls  # a request repeated within the run is answered from the cache
    assert first.stats.judgements == first.stats.calls + first.stats.cache_hits
    second = make_judge(server, cache=cache).judge(records)
    assert server.requests == sent and second.stats.calls == 0
    assert second.stats.cache_hits == second.stats.judgements == first.stats.judgements
    for name in ("answer_claims_supported", "context_useful", "reference_claims_in_answer"):
        assert column(first, name) == column(second, name)
    assert all(p["cached"] for p in provenance(second)["q1"])
    # The cache holds the canonical request, so any verdict can be replayed from it.
    key = provenance(second)["q1"][0]["request_hash"]
    with JudgeCache(cache) as opened:
        assert request_hash(opened.get_request(key)) == key


def test_retries_honour_retry_after_and_back_off_on_5xx(server, records):
    waits = []
    judge = make_judge(server, sleep=waits.append, max_retries=3,
                       judgements=["answer_claims_supported"])
    server.inject("answer_claims", ["429:0.2", "500"])
    judged = judge.judge(es.Records(records.table.slice(0, 1)))
    assert judged.stats.missing == {} and judged.stats.retries == 2
    assert judged.stats.calls == judged.stats.judgements + 2
    assert 0.2 <= waits[0] <= 0.22  # Retry-After honoured, plus at most 10% jitter
    assert 0 <= waits[1] <= 0.5 * 2  # full jitter of backoff x 2^1
    assert column(judged, "answer_claims_supported")["q1"] == [True, False]


@pytest.mark.parametrize("fault, reason", [
    ("malformed", "malformed"), ("length", "truncated"), ("empty", "no choices"), ("refusal", "refusal"),
])
def test_each_bad_reply_is_a_counted_missing_judgement(server, records, fault, reason):
    server.inject("answer_claims_supported", [fault])
    judged = make_judge(server, judgements=["answer_claims_supported"]).judge(es.Records(records.table.slice(0, 1)))
    assert judged.stats.missing == {reason: 1}
    assert column(judged, "answer_claims_supported")["q1"] == [None, None]  # None per claim: never a verdict
    status = [p["status"] for p in provenance(judged)["q1"] if p["column"] == "answer_claims_supported"]
    assert status == [f"missing: {reason}"]
    score = es.evaluate_records(judged.records).scores["rag"]["faithfulness"]
    assert score.params["coverage"] == 0 or str(score.params["coverage"]).startswith("0")  # nothing judged: undefined


def test_failed_after_retries_and_timeouts_are_missing_too(server, records):
    server.inject("answer_claims", ["500", "500", "500"])
    judged = make_judge(server, max_retries=2, judgements=["answer_claims_supported"]).judge(es.Records(records.table.slice(0, 1)))
    # Missing by cause; the attempts are counted by cause too, and the provenance says how many were made.
    assert judged.stats.missing == {"HTTP 500": 1} and judged.stats.retries == 2
    assert judged.stats.failures == {"HTTP 500": 3} and judged.stats.calls == 3
    assert column(judged, "answer_claims_supported")["q1"] is None  # no claims: the column is not judged
    claims = [p for p in provenance(judged)["q1"] if p["column"] == "answer_claims"]
    assert [(p["status"], p["attempts"]) for p in claims] == [("missing: HTTP 500", 3)]
    with JudgeServer(slow_seconds=1.5) as slow:
        slow.inject("answer_claims", ["delay"])
        judged = LLMJudge(MODEL, base_url=slow.base_url, cache=":memory:", timeout=0.5, max_retries=0,
                          judgements=["answer_claims_supported"]).judge(es.Records(records.table.slice(0, 1)))
        assert judged.stats.missing == {"timeout": 1} and judged.stats.calls == 1  # connected: it reached the server


def test_output_mode_falls_back_and_is_recorded(server, records):
    server.inject("*", ["400"])  # the endpoint rejects json_schema output once
    judge = make_judge(server, concurrency=1, judgements=["answer_claims_supported"])
    judged = judge.judge(es.Records(records.table.slice(0, 2)))
    modes = {p["mode"] for entries in provenance(judged).values() for p in entries if p["judge"] == "llm"}
    assert modes == {"json_object"} and judged.stats.missing == {}
    server.inject("*", ["400", "400"])
    judged = make_judge(server, concurrency=1, judgements=["answer_claims_supported"]).judge(es.Records(records.table.slice(0, 1)))
    assert {p["mode"] for p in provenance(judged)["q1"]} == {"text"}
    assert column(judged, "answer_claims_supported")["q1"] == [True, False]


def test_text_mode_extracts_json_tolerantly():
    assert extract_json('Here you go:\n```json\n{"claims": ["a"]}\n```') == {"claims": ["a"]}
    assert extract_json('{bad} then {"verdict": "no"}') == {"verdict": "no"}


def test_concurrency_is_bounded():
    rows = [{"query_id": f"q{i}", "question": f"What is item {i}?", "contexts": [f"Item {i} is a thing.", "Other text."]}
            for i in range(12)]
    with JudgeServer(scripted=True, delay=0.05) as srv:
        judged = LLMJudge(MODEL, base_url=srv.base_url, cache=":memory:", concurrency=3,
                          judgements=["context_relevant"]).judge(es.Records.from_rows(rows))
        assert judged.stats.judgements == 24 and 2 <= srv.max_in_flight <= 3


def test_interrupted_run_keeps_what_was_done_and_resumes(server, records, tmp_path):
    cache = tmp_path / "cache.sqlite3"
    judge = make_judge(server, cache=cache, concurrency=1)

    def interrupt(done, total, stats):
        if done == 2:
            raise KeyboardInterrupt

    partial = judge.judge(records, progress=interrupt)
    assert partial.stats.stopped == "interrupted" and partial.done == 2
    assert sum(v is not None for v in column(partial, "answer_claims_supported").values()) == 2
    first_calls = server.requests
    resumed = make_judge(server, cache=cache).judge(records)
    assert resumed.done == 5 and resumed.stats.cache_hits >= partial.stats.judgements
    assert server.requests - first_calls == resumed.stats.calls
    assert first_calls + resumed.stats.calls == make_judge(server, concurrency=1).judge(records).stats.calls  # none twice


def test_budget_stops_before_it_is_passed(server, records):
    judge = make_judge(server, concurrency=2, price_input=1.0, price_output=1.0, budget=0.003)
    judged = judge.judge(records)
    assert judged.stats.stopped == "budget" and 0 < judged.stats.cost <= 0.003
    assert judged.done < 5 and judged.stats.missing.get("budget", 0) >= 1
    sent = server.requests
    assert sent == judged.stats.calls
    # Records the budget stopped keep null columns; a rerun with a larger budget resumes them.
    assert any(v is None for v in column(judged, "answer_claims_supported").values())


def test_estimate_before_the_run(server, records):
    judge = make_judge(server, price_input=1.0, price_output=2.0)
    estimate = judge.estimate(records)
    judged = judge.judge(records)
    # One call per distinct request: the records repeat 3 requests, answered by the identical call in flight
    # (single-flight) or, if it has ended, from the cache; either way no second call.
    assert (estimate.requests, estimate.repeated) == (judged.stats.calls, judged.stats.cache_hits) == (33, 3)
    assert judged.stats.shared <= 3
    assert estimate.requests + estimate.repeated == judged.stats.judgements and estimate.cached == 0
    assert estimate.cost_max >= judged.stats.cost and estimate.cost > 0
    assert 0.5 <= estimate.prompt_tokens / judged.stats.prompt_tokens <= 1.5
    after = judge.estimate(records)
    assert after.cached > 0 and "already cached" in str(after)


def test_bad_settings_raise_evalsuite_errors():
    with pytest.raises(EvalSuiteError, match="field 'concurrency'"):
        LLMJudge("m", cache=":memory:", concurrency=0)
    with pytest.raises(EvalSuiteError, match="unknown judgement"):
        LLMJudge("m", cache=":memory:", judgements=["vibes"])
    with pytest.raises(EvalSuiteError, match="field 'budget'"):
        LLMJudge("m", cache=":memory:", budget=float("nan"))


def test_prompt_versions_are_hashes_of_the_prompt_text():
    versions = {name: p.version for name, p in PROMPTS.items()}
    assert len(set(versions.values())) == len(PROMPTS)
    assert all(len(v) == 12 for v in versions.values())


def test_importing_the_judges_loads_neither_openai_nor_onnxruntime():
    import subprocess
    import sys

    code = ("import sys, evalsuite, evalsuite.judges, evalsuite.judges.llm, evalsuite.judges.lexical; "
            "print(sorted(m for m in ('openai', 'onnxruntime', 'tokenizers', 'sacrebleu', 'httpx2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_fast_cache_key_is_the_request_hash():
    judge = LLMJudge(MODEL, cache=":memory:", seed=7)
    prompt = PROMPTS["context_useful"]
    fields = {"question": "Q \u00e9 \"quoted\" \u2028", "reference": "R\\", "chunk": "C\n\u0000\U0001f600"}
    messages = prompt.messages(**fields)
    for mode in ("json_schema", "json_object", "text"):
        key = judge._key(prompt, prompt.user.format(**fields), mode)
        assert key == request_hash(judge._request(prompt, messages, mode))


def test_empty_question_or_reference_leaves_per_chunk_judgements_unjudged(server):
    records = es.Records.from_rows([{"query_id": "e1", "question": " ", "answer": "", "reference": "",
                                     "contexts": ["Some passage."]}])
    judged = make_judge(server).judge(records)
    assert judged.stats.calls == 0  # an unrecorded call would also fail the server fixture
    assert column(judged, "context_useful")["e1"] is None and column(judged, "context_relevant")["e1"] is None
    assert column(judged, "answer_claims_supported")["e1"] == [] and column(judged, "reference_claims_supported")["e1"] == []
