"""`evalsuite judge`: the sample RAGTruth records stripped of their judgement columns become judged
records against a local (loopback) endpoint, with the estimate first, cost, cache and provenance;
a rerun makes no call; Ctrl-C keeps what was done; the key only from the environment."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalsuite as es
from evalsuite.cli import main

from judge_server import JudgeServer, SilentServer, refused_port

REPO = Path(__file__).resolve().parents[2]


def default_sigint():
    """Ctrl-C's default in the child: a shell starts background jobs with SIGINT ignored, and a
    Python started so never raises KeyboardInterrupt (these tests then fail only when run in the
    background, e.g. under nohup)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
SAMPLE = REPO / "sample_data" / "rag" / "ragtruth_qa.jsonl"
MODEL = "test-judge"
N = 6  # the recorded sample records (scripts/record_judge_fixtures.py)


@pytest.fixture
def stripped(tmp_path):
    path = tmp_path / "ragtruth_stripped.jsonl"
    with open(SAMPLE, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
        for line in list(src)[:N]:
            row = json.loads(line)
            row.pop("answer_claims_supported")
            dst.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def run(args, capsys):
    code = main(["judge", *map(str, args)])
    return code, capsys.readouterr().err


def test_judge_sample_records_then_rerun_without_a_call(stripped, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EVALSUITE_JUDGE_API_KEY", "sk-env-SECRET-42")
    out, cache = tmp_path / "judged.parquet", tmp_path / "cache.sqlite3"
    with JudgeServer() as server:
        args = [stripped, "--judge", "llm", "--model", MODEL, "--base-url", server.base_url, "--cache", cache,
                "--judgements", "answer_claims_supported,context_relevant", "--price-input", "0.5",
                "--price-output", "1.5", "-o", out]
        code, err = run(args, capsys)
        assert code == 0, err
        assert server.unrecorded == []
        sent = server.requests
        # One call per distinct request: 6 claim and 6 verdict requests, and the 3 chunks of each of the two
        # questions once (the six systems answer two questions with the same contexts: 12 repeats).
        assert sent == 18 and f"{sent} requests sent to 127.0.0.1:" in err
        # The 12 repeats join the identical call in flight, or come from the cache once it has ended.
        from_cache, in_flight = map(int, re.search(r"30 judgements \((\d+) from the cache(?:, (\d+) by an identical "
                                                   r"request in flight)?\)", err).groups(default="0"))
        assert from_cache + in_flight == 12
        assert err.index("estimate: 18 judge requests (0 already cached, 12 repeats answered once)") < \
            err.index("judgements (")
        assert "wrote" in err and "cost 0.0" in err and "6 of 6 records judged" in err
        assert server.authorization == {"Bearer sk-env-SECRET-42"}
        code, err = run(args + ["--estimate-only"], capsys)
        assert code == 0 and "18 judge requests (12 already cached" in err  # claims and chunks: known before the run
        code, err = run(args, capsys)
        assert code == 2 and "exists already; pass --force" in err and server.requests == sent  # refused at once
        code, err = run(args + ["--force"], capsys)
        assert code == 0 and server.requests == sent and "0 requests sent" in err
    judged = es.read_records(out)
    assert "SECRET" not in out.read_bytes().decode("utf-8", "replace") and b"SECRET" not in cache.read_bytes()
    assert judged.table.column("answer_claims_supported").null_count == 0
    report = es.evaluate_records(judged)
    assert {"faithfulness", "context_relevance"} <= set(report.metrics)
    prov = json.loads(judged.table.column("judge_provenance")[0].as_py())
    assert {p["model"] for p in prov} == {MODEL} and all(p["cached"] for p in prov)
    assert all(p["endpoint_host"].startswith("127.0.0.1:") for p in prov)


def test_lexical_and_embedding_from_the_command_line(tmp_path, capsys):
    records = tmp_path / "r.jsonl"
    records.write_text('{"query_id": "q1", "answer": "Paris is the capital.", "reference": "The capital is Paris."}\n',
                       encoding="utf-8")
    code, err = run([records, "--judge", "lexical", "--similarity", "rouge_l", "-o", tmp_path / "lex.jsonl"], capsys)
    assert code == 0, err
    row = json.loads((tmp_path / "lex.jsonl").read_text(encoding="utf-8"))
    assert row["token_f1"] == 1.0 and row["answer_similarity"] == row["rouge_l"]
    code, err = run([records, "--judge", "embedding", "--cache", tmp_path / "c.sqlite3", "-o", tmp_path / "emb.parquet"], capsys)
    assert code == 0, err
    assert es.read_records(tmp_path / "emb.parquet").table.column("answer_similarity")[0].as_py() > 0.8


def test_bad_settings_are_messages_not_tracebacks(stripped, tmp_path, capsys):
    config = tmp_path / "judge.toml"
    config.write_text('[judge]\nmodel = "m"\napi_key = "sk-in-a-file"\n', encoding="utf-8")
    code, err = run([stripped, "--judge", "llm", "--config", config, "-o", tmp_path / "o.parquet"], capsys)
    assert code == 2 and "read only from the environment" in err and "sk-in-a-file" not in err
    code, err = run([stripped, "--judge", "llm", "-o", tmp_path / "o.parquet"], capsys)
    assert code == 2 and "needs a model" in err
    code, err = run([stripped, "--judge", "lexical", "-o", tmp_path / "o.csv"], capsys)
    assert code == 2 and ".parquet or .jsonl" in err
    config.write_text('[judge]\nmodel = "from-config"\nconcurrency = 2\n', encoding="utf-8")
    code, err = run([stripped, "--judge", "llm", "--config", config, "--base-url", "http://127.0.0.1:9/v1",
                     "--cache", tmp_path / "c.sqlite3", "--estimate-only", "-o", tmp_path / "o.parquet"], capsys)
    assert code == 0 and "estimate:" in err


def test_ctrl_c_keeps_what_was_done_and_a_rerun_resumes(stripped, tmp_path):
    out, cache = tmp_path / "judged.parquet", tmp_path / "cache.sqlite3"
    with JudgeServer(delay=0.3) as server:
        args = [sys.executable, "-m", "evalsuite", "judge", str(stripped), "--judge", "llm", "--model", MODEL,
                "--base-url", server.base_url, "--cache", str(cache), "--concurrency", "1",
                "--judgements", "answer_claims_supported,context_relevant", "-o", str(out)]
        env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        proc = subprocess.Popen(args, cwd=REPO, env=env, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_sigint)
        deadline = time.time() + 60
        while server.requests < 7 and time.time() < deadline:  # past the first record (5 requests)
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted; rerun the same command with --force" in err
        partial = es.read_records(out)
        done = partial.table.column("answer_claims_supported").to_pylist()
        assert 1 <= sum(v is not None for v in done) < N
        before = server.requests
        server.delay = 0.0
        finished = subprocess.run(args + ["--force"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert finished.returncode == 0, finished.stderr
        assert server.requests - before < 30 - 5  # answered calls came from the cache
        assert server.unrecorded == []
    assert es.read_records(out).table.column("answer_claims_supported").null_count == 0


def test_a_dead_endpoint_fails_in_seconds_with_exit_5_and_counts_no_request_as_sent(stripped, tmp_path, capsys):
    port = refused_port()
    started = time.monotonic()
    code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", f"http://127.0.0.1:{port}/v1",
                     "--cache", tmp_path / "c.sqlite3", "-o", tmp_path / "o.parquet"], capsys)  # default settings
    assert time.monotonic() - started < 60
    assert code == 5, err
    assert f"endpoint failing: 127.0.0.1:{port} failed" in err and "connection refused" in err
    assert re.search(r"0 requests sent to 127\.0\.0\.1:\d+ \(\d+ more could not connect\)", err)
    assert es.read_records(tmp_path / "o.parquet").table.num_rows == N  # written all the same (nothing judged)


def test_a_silent_endpoint_exits_5_after_the_silence_with_progress_meanwhile(stripped, tmp_path, capsys):
    with SilentServer() as silent:
        started = time.monotonic()
        code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", silent.base_url, "--timeout", "1",
                         "--cache", tmp_path / "c.sqlite3", "-o", tmp_path / "o.parquet"], capsys)
        assert time.monotonic() - started < 30
    assert code == 5, err
    assert "sent no reply for" in err and "waiting for" in err  # the progress said what it waited for


@pytest.mark.parametrize("fault, code_wanted, cause", [("400", 4, "HTTP 400"), ("malformed", 4, "malformed")])
def test_all_judgements_missing_exits_4_with_the_cause(stripped, tmp_path, capsys, fault, code_wanted, cause):
    with JudgeServer() as server:
        server.inject("*", [fault] * 500)
        code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", server.base_url, "--judgements",
                         "answer_claims_supported", "--cache", tmp_path / "c.sqlite3", "-o", tmp_path / "o.parquet"],
                        capsys)
    assert code == code_wanted, err
    assert f"missing: all 6 judgements asked for are missing (6 {cause})" in err
    # All missing is never done, whatever --max-missing allows.
    with JudgeServer() as server:
        server.inject("*", [fault] * 500)
        code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", server.base_url, "--judgements",
                         "answer_claims_supported", "--max-missing", "1", "--cache", tmp_path / "d.sqlite3", "-o",
                         tmp_path / "o.parquet", "--force"], capsys)
    assert code == code_wanted, err


@pytest.mark.parametrize("max_missing, code_wanted", [(None, 0), ("0.01", 4)])
def test_missing_beyond_max_missing_exits_4(stripped, tmp_path, capsys, max_missing, code_wanted):
    # The recorded replies of the sample leave 1 of its 30 judgements missing (a malformed reply): 3.3 %.
    with JudgeServer() as server:
        extra = ["--max-missing", max_missing] if max_missing else []
        code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", server.base_url, "--judgements",
                         "answer_claims_supported,context_relevant", *extra, "--cache", tmp_path / "c.sqlite3",
                         "-o", tmp_path / "o.parquet"], capsys)
    assert code == code_wanted, err
    assert "missing judgements: 1 (1 malformed)" in err
    if code_wanted:
        assert "1 of 30 judgements asked for are missing (3.3%, more than the 1% allowed) (1 malformed)" in err


def test_deadline_exits_6_and_writes_what_was_judged(stripped, tmp_path, capsys):
    with JudgeServer(delay=0.5) as server:
        started = time.monotonic()
        code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", server.base_url, "--concurrency",
                         "1", "--deadline", "2", "--cache", tmp_path / "c.sqlite3", "-o", tmp_path / "o.parquet"], capsys)
        assert time.monotonic() - started < 2 + 10
    assert code == 6, err
    assert "deadline: the deadline of 2 s passed" in err
    assert es.read_records(tmp_path / "o.parquet").table.num_rows == N


@pytest.mark.parametrize("value", ["-0.1", "1.5", "nan"])
def test_max_missing_must_be_a_share(stripped, tmp_path, capsys, value):
    code, err = run([stripped, "--judge", "lexical", "--max-missing", value, "-o", tmp_path / "o.parquet"], capsys)
    assert code == 2 and "max_missing" in err


@pytest.mark.parametrize("phase", ["read", "estimate", "write"])
def test_ctrl_c_while_reading_estimating_or_writing_exits_130_within_2_s(stripped, tmp_path, phase):
    """Ctrl-C in the phases around the judging (tests/slow_phase.py holds one of them): 130 within
    2 s; before any judgement nothing is written and the command says so; while writing, the file
    is completed with every record judged; the cache keeps every answered call and a rerun
    repeats none."""
    from evalsuite.judges import JudgeCache

    out, cache = tmp_path / "judged.parquet", tmp_path / "cache.sqlite3"
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    with JudgeServer() as server:
        base = ["judge", str(stripped), "--judge", "llm", "--model", MODEL, "--base-url", server.base_url,
                "--cache", str(cache)]
        # Answered calls in the cache beforehand (the chunks' relevance), which the runs below must not repeat.
        assert main([*base, "--judgements", "context_relevant", "-o", str(tmp_path / "first.parquet")]) == 0
        cached = len(JudgeCache(cache))
        args = [*base, "--judgements", "answer_claims_supported,context_relevant", "-o", str(out)]
        proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "slow_phase.py"), phase, *args], cwd=REPO,
                                preexec_fn=default_sigint,
                                env=env, stderr=subprocess.PIPE, text=True)
        seen = []
        while not seen or seen[-1].strip() != f"phase {phase}":
            seen.append(proc.stderr.readline())
            assert seen[-1], "".join(seen)  # the phase began before the process ended
        signalled = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - signalled
        err = "".join(seen) + rest
        assert proc.returncode == 130, err
        assert stopped_in < 2 + 1, err  # 2 s, plus the interpreter's exit on a shared machine
        assert "Traceback" not in err
        sent = server.hashes[:]
        if phase == "write":
            assert "interrupted; rerun the same command with --force" in err
            judged = es.read_records(out)  # complete: every record judged and written
            assert judged.table.column("answer_claims_supported").null_count == 0
            assert len(JudgeCache(cache)) == len(set(sent))  # every answered call kept
            assert main([*args, "--force"]) == 0 and server.hashes == sent  # the rerun sends nothing
        else:
            what = {"read": "reading the records", "estimate": "the run was estimated"}[phase]
            assert f"interrupted while {what}, before any judgement; nothing was written" in err
            assert not out.exists() and len(JudgeCache(cache)) == cached and len(sent) == cached
            assert main(args) == 0  # nothing was written, so no --force
        assert len(server.hashes) == len(set(server.hashes))  # no answered call was sent again
        assert server.unrecorded == []


def test_a_record_whose_every_judgement_is_missing_is_counted_apart(stripped, tmp_path, capsys):
    # One at a time, earliest record first: the first request (the first record's claims) gets a
    # malformed reply, so that record has no claims and no verdict: every judgement missing.
    with JudgeServer() as server:
        server.inject("answer_claims", ["malformed"])
        code, err = run([stripped, "--judge", "llm", "--model", MODEL, "--base-url", server.base_url, "--concurrency",
                         "1", "--judgements", "answer_claims_supported", "--max-missing", "0.5",
                         "--cache", tmp_path / "c.sqlite3", "-o", tmp_path / "o.parquet"], capsys)
    assert code == 0, err
    assert "evalsuite judge: 5 of 6 records judged, 1 with every judgement missing;" in err
    judged = es.read_records(tmp_path / "o.parquet").table
    assert judged.column("answer_claims_supported").to_pylist()[0] is None


@pytest.mark.parametrize("command", ["judge", "ragas"])
def test_records_with_claim_triples_are_written_when_the_endpoint_fails(command, tmp_path, capsys):
    """RAGChecker's sample gives answer_claims as subject-relation-object triples; a run that judged
    none of its records (a dead endpoint) wrote them into the judge's list-of-strings column and
    ended in ArrowTypeError with no output. Now: exit 5, the file written, the triples as text, and
    the summary's records adding up (0 judged, 2 not finished)."""
    ragchecker = REPO / "sample_data" / "rag" / "ragchecker_examples.jsonl"
    triples = es.read_records(ragchecker).table.column("answer_claims").to_pylist()
    out = tmp_path / "o.parquet"
    args = [command, str(ragchecker), *(["--judge", "llm"] if command == "judge" else []), "--model", MODEL,
            "--base-url", f"http://127.0.0.1:{refused_port()}/v1", "--cache", str(tmp_path / "c.sqlite3"),
            "-o", str(out)]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 5, err
    if command == "judge":
        assert "0 of 2 records judged, 2 not finished;" in err
    claims = es.read_records(out).table.column("answer_claims").to_pylist()
    assert claims == [[" ".join(t) for t in row] for row in triples]


@pytest.mark.parametrize("command", ["judge", "ragas"])
def test_ctrl_c_as_the_judging_ends_still_writes_the_records_and_exits_130(command, tmp_path, capsys, monkeypatch):
    """A SIGINT that lands after the judge returned, while the progress line is closed: the judged
    records are written and summed up, then exit 130 (it escaped main() as a traceback, with no
    output file, when the progress was closed before the write's deferral began)."""
    import evalsuite.cli.judge as judge_cli

    real_close = judge_cli._Progress.close
    sent = []

    def close(self):
        real_close(self)
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(judge_cli._Progress, "close", close)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"query_id": f"q{i}", "system": "s", "question": "q", "answer": "a b c",
                                          "reference": "a b d"}) + "\n" for i in range(20)), encoding="utf-8")
    out = tmp_path / "o.parquet"
    if command == "judge":
        args = ["judge", str(source), "--judge", "lexical", "--metrics", "token_f1", "-o", str(out)]
    else:  # nothing for an endpoint to do: the LLM metrics lack their fields, and the similarity is lexical-free
        args = ["ragas", str(source), "--metrics", "answer_correctness", "--model", MODEL, "--base-url",
                f"http://127.0.0.1:{refused_port()}/v1", "--cache", str(tmp_path / "c.sqlite3"), "-o", str(out)]
    code = main(args)
    err = capsys.readouterr().err
    assert sent and out.exists(), err
    assert code == 130, err
    assert f"wrote {out}" in err and "records judged" in err
