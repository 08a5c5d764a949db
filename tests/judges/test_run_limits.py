"""A judge run you can leave running: every way an endpoint fails, against loopback servers
(tests/judge_server.py: nothing listening, a server that accepts and never answers, 400, 429 and
500 storms, a slow one), ends in bounded time with the outcome and exit code
:mod:`evalsuite.judges.outcome` documents; identical requests in flight share one call; a record's
requests go out together within the concurrency limit. Wall-time bounds are generous (the
machine is shared); the timeouts are short so that the file adds little to CI."""

from __future__ import annotations

import time

import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.judges import JudgeStats, LLMJudge, run_outcome
from evalsuite.judges.run_control import RunControl

from judge_server import JudgeServer, SilentServer, refused_port

MODEL = "test-judge"


def rows(n: int, *, same: bool = False):
    """``n`` records; with ``same`` every record asks the same questions of the same chunks."""
    out = []
    for i in range(n):
        k = 0 if same else i
        out.append({"query_id": f"q{i}", "question": f"What is item {k} made of?",
                    "answer": f"Item {k} is made of steel. It weighs {k} kg.",
                    "reference": f"Item {k} is made of steel and weighs {k} kg.",
                    "contexts": [f"Item {k} is a steel part.", f"It weighs {k} kg.", "Unrelated text."]})
    return es.Records.from_rows(out)


def judge_for(base_url: str, **options) -> LLMJudge:
    options.setdefault("cache", ":memory:")
    options.setdefault("sleep", lambda s: None)  # no backoff waits (the breaker counts attempts, not time)
    return LLMJudge(MODEL, base_url=base_url, **options)


def test_nothing_listening_opens_the_breaker_at_once_naming_the_endpoint():
    port = refused_port()
    judge = judge_for(f"http://127.0.0.1:{port}/v1", timeout=2, connect_timeout=1)
    started = time.monotonic()
    judged = judge.judge(rows(20))
    assert time.monotonic() - started < 30
    stats = judged.stats
    assert stats.stopped == "endpoint failing" and f"127.0.0.1:{port}" in stats.stop_message
    assert "connection refused" in stats.stop_message
    assert stats.calls == 0 and stats.unreached >= 10 and stats.failures == {"connection refused": stats.unreached}
    outcome = run_outcome(stats)
    assert (outcome.status, outcome.exit_code) == ("endpoint failing", 5)
    assert judged.done == 0  # nothing judged: every record keeps its old columns


def test_a_silent_endpoint_fails_in_under_a_minute_with_the_default_settings():
    """The bound the run keeps (no-reply window + one check + the grace), with the settings the
    command builds when given no flag; a real run with these defaults takes about 47 s: it is
    measured by ``python benchmarks/judges.py --parts silent``, not here."""
    from evalsuite.cli.judge import _build_judge, _settings, build_parser
    from evalsuite.judges.run_control import CHECK_SECONDS, GRACE_SECONDS, default_silence

    args = build_parser().parse_args(["r.jsonl", "--judge", "llm", "--model", MODEL, "--base-url",
                                      "http://127.0.0.1:9/v1", "--cache", ":memory:", "-o", "o.parquet"])
    judge = _build_judge("llm", _settings(args))
    assert (judge.timeout, judge.endpoint.connect_timeout, judge.control.breaker) == (30.0, 5.0, 10)  # as documented
    assert judge.control.silence == default_silence(judge.timeout) == 45.0
    assert judge.silent_endpoint_bound() == pytest.approx(45.0 + CHECK_SECONDS + GRACE_SECONDS) and judge.silent_endpoint_bound() < 60
    assert LLMJudge(MODEL, cache=":memory:").silent_endpoint_bound() == judge.silent_endpoint_bound()


def test_an_endpoint_that_accepts_and_never_answers_stops_the_run_in_seconds():
    with SilentServer() as silent:
        host = silent.base_url.split("/")[2]
        judge = judge_for(silent.base_url, timeout=1.0, connect_timeout=1.0, silence=1.5)
        judge.grace = 0.3
        seen = []
        started = time.monotonic()
        judged = judge.judge(rows(20), progress=lambda done, total, stats: seen.append((done, stats.in_flight)))
        elapsed = time.monotonic() - started
    assert elapsed < judge.silent_endpoint_bound() + 3  # the bound the defaults' test checks, plus a loaded machine
    stats = judged.stats
    assert stats.stopped == "endpoint failing" and host in stats.stop_message
    assert "timeout" in stats.stop_message or "no reply" in stats.stop_message
    assert stats.calls > 0 and stats.unreached == 0  # connected: the requests reached it
    assert any(in_flight for _, in_flight in seen)  # progress while waiting, before any record finished
    assert run_outcome(stats).exit_code == 5


def test_every_request_rejected_with_400_is_missing_and_exits_4():
    with JudgeServer(scripted=True) as server:
        server.inject("*", ["400"] * 100)
        judged = judge_for(server.base_url, judgements=["answer_claims_supported"]).judge(rows(3))
    stats = judged.stats
    assert stats.missing == {"HTTP 400": 3} and stats.ok == 0
    # json_schema and json_object were rejected (the mode fallback; a call still waiting when its mode was rejected
    # is not sent in it), then text: 5 to 9 requests, all of which reached it.
    assert 5 <= stats.calls <= 9 and stats.unreached == 0
    outcome = run_outcome(stats)
    assert (outcome.status, outcome.exit_code) == ("missing", 4) and "3 HTTP 400" in outcome.message


@pytest.mark.parametrize("fault", ["500", "429"])
def test_a_storm_of_server_errors_opens_the_breaker(fault):
    with JudgeServer(scripted=True) as server:
        server.inject("*", [fault] * 1000)
        started = time.monotonic()
        judged = judge_for(server.base_url, breaker=10).judge(rows(20))
        assert time.monotonic() - started < 30
        sent = server.requests
    stats = judged.stats
    assert stats.stopped == "endpoint failing" and f"HTTP {fault}" in stats.stop_message
    assert stats.calls == sent and sent < 10 + 8  # the breaker's 10, plus what was in flight
    assert run_outcome(stats).exit_code == 5


def test_a_short_storm_is_retried_and_the_run_is_done():
    with JudgeServer(scripted=True) as server:
        server.inject("*", ["500", "429", "500"])
        judged = judge_for(server.base_url, concurrency=1).judge(rows(3))
    stats = judged.stats
    assert stats.retries == 3 and stats.missing == {} and stats.stopped is None
    assert stats.failures == {"HTTP 500": 2, "HTTP 429": 1} and judged.done == 3
    assert run_outcome(stats).exit_code == 0


def test_the_deadline_stops_a_slow_run_and_keeps_what_was_judged():
    with JudgeServer(scripted=True, delay=0.4) as server:
        judge = judge_for(server.base_url, concurrency=2, deadline=1.5)
        started = time.monotonic()
        judged = judge.judge(rows(30))
        elapsed = time.monotonic() - started
    assert elapsed < 1.5 + judge.grace + 5
    assert judged.stats.stopped == "deadline" and run_outcome(judged.stats).exit_code == 6
    assert 0 <= judged.done < 30
    supported = judged.records.table.column("answer_claims_supported").to_pylist()
    assert sum(v is not None for v in supported) == judged.done  # a stopped record keeps its old (empty) columns


def test_identical_requests_in_flight_share_one_call_counted_once():
    with JudgeServer(scripted=True, delay=0.3) as server:
        judge = judge_for(server.base_url, price_input=1.0, price_output=1.0)
        estimate = judge.estimate(rows(6, same=True))
        judged = judge.judge(rows(6, same=True))
        sent = server.requests
    one = rows(1)
    with JudgeServer(scripted=True) as alone:
        single = judge_for(alone.base_url, price_input=1.0, price_output=1.0).judge(es.Records(one.table))
    stats = judged.stats
    assert sent == stats.calls == single.stats.calls == estimate.requests  # six records, one record's calls
    assert stats.shared + (stats.cache_hits - stats.shared) == 5 * single.stats.judgements
    assert stats.cost == pytest.approx(single.stats.cost)  # counted once in cost
    assert estimate.repeated == 5 * estimate.requests
    assert judged.done == 6


def test_a_records_requests_go_out_together_within_the_limit():
    with JudgeServer(scripted=True, delay=0.3) as server:
        judged = judge_for(server.base_url, concurrency=4, judgements=["context_relevant"]).judge(rows(8))
        assert server.max_in_flight == 4  # 24 chunk requests, never more than 4 at once, 4 most of the time
    assert judged.done == 8 and judged.stats.calls == 24


def test_a_refused_key_stops_the_run_with_an_error_naming_the_host():
    with JudgeServer(scripted=True) as server:
        server.inject("*", ["401"] * 10)
        with pytest.raises(EvalSuiteError, match="refused the API key") as info:
            judge_for(server.base_url, api_key="sk-SECRET-7").judge(rows(2))
    assert "SECRET" not in str(info.value) and "127.0.0.1" in str(info.value)


def test_stop_from_another_thread_ends_the_run_within_the_grace():
    import threading

    with JudgeServer(scripted=True, delay=0.5) as server:
        judge = judge_for(server.base_url, concurrency=2)
        threading.Timer(0.8, judge.stop).start()
        started = time.monotonic()
        judged = judge.judge(rows(40))
        assert time.monotonic() - started < 0.8 + 2 + 1
    assert judged.stats.stopped == "interrupted" and run_outcome(judged.stats).exit_code == 130


@pytest.mark.parametrize("ok, failed, max_missing, status", [
    (0, 1, 0.5, "missing"), (90, 10, 0.1, "done"), (89, 11, 0.1, "missing"), (1, 99, 1.0, "done"),
])
def test_max_missing_share(ok, failed, max_missing, status):
    stats = JudgeStats(ok=ok, missing={"timeout": failed, "interrupted": 1000})  # a stop's unasked ones don't count
    assert run_outcome(stats, max_missing).status == status


def test_breaker_counts_failures_in_a_row_and_a_reply_resets_it():
    control = RunControl("example:1", breaker=3)
    control.start()
    control.failed("timeout"), control.failed("HTTP 500"), control.answered(), control.failed("timeout")
    assert not control.stopped
    control.failed("timeout"), control.failed("HTTP 503")
    assert control.reason == "endpoint failing" and control.message == (
        "example:1 failed 3 requests in a row (2 timeout, 1 HTTP 503)")


def test_silence_opens_the_breaker_only_while_requests_wait():
    now = [0.0]
    control = RunControl("example:1", silence=5, clock=lambda: now[0])
    control.start()
    now[0] = 100.0
    control.check()
    assert not control.stopped  # nothing was waiting
    ticket = control.sending()
    now[0] = 104.0
    control.check()
    assert not control.stopped
    control.answered(ticket)
    control.sending()
    now[0] = 109.5
    control.check()
    assert control.reason == "endpoint failing" and "no reply for 6 s" in control.message
