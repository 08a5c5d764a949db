"""``evalsuite ragas``: coverage and estimate first, the judged records written, the summary printed;
against the loopback server replaying tests/data/ragas/recorded_chat.json, embeddings from the
recorded-free loopback /v1/embeddings endpoint (values not asserted)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalsuite as es
from evalsuite.cli import main
from evalsuite.metrics.registry import JUDGED_METRICS

from judge_server import JudgeServer

DATA = Path(__file__).resolve().parents[1] / "data" / "ragas"
REPO = Path(__file__).resolve().parents[2]


def default_sigint():
    """Ctrl-C's default in the child: a shell starts background jobs with SIGINT ignored, and a
    Python started so never raises KeyboardInterrupt (these tests then fail only when run in the
    background, e.g. under nohup)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def server():
    recordings = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    with JudgeServer(recordings=recordings) as srv:
        yield srv
        assert srv.unrecorded == []


def test_every_metric_from_the_command_line(server, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "judged.jsonl"
    code = main(["ragas", str(DATA / "records.jsonl"), "-o", str(out), "--model", "test-judge", "--base-url",
                 server.base_url, "--embedding-model", "hash-embed", "--embedding-base-url", server.base_url,
                 "--aspect", "concise=The response answers in at most two sentences without filler.",
                 "--aspect-strictness", "3", "--cache", str(tmp_path / "c.sqlite")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "context_entity_recall: needs reference, contexts; 5 of 5 records have them" in captured.err
    assert "estimate: about" in captured.err
    lines = [line.split("\t") for line in captured.out.splitlines()[1:]]
    metrics = {m for _, m, _, _ in lines}
    # Every metric judged is printed (the registry's judged metrics; the aspect under its column name).
    assert metrics == {*(m for m in JUDGED_METRICS if m != "aspect_critique"), "critique_concise"}
    judged = es.read_records(out)
    report = es.evaluate_records(judged)
    assert report.per_query.set_index("query_id").loc["r2", "context_entity_recall"] == pytest.approx(2 / 3)
    # factual_correctness as printed is, per system, the list function of the judged claim lists.
    printed = {(system, m): (float(mean), float(coverage)) for system, m, mean, coverage in lines}
    for system in judged.systems:
        table = judged.for_system(system).table
        expected = es.factual_correctness(table.column("answer_claims_in_reference").to_pylist(),
                                          table.column("reference_claims_in_answer").to_pylist())
        assert printed[system, "factual_correctness"] == (pytest.approx(float(expected), abs=5e-5),
                                                          pytest.approx(expected.params["coverage"], abs=5e-4))


def test_estimate_only_sends_nothing(server, tmp_path, capsys):
    code = main(["ragas", str(DATA / "records.jsonl"), "-o", str(tmp_path / "x.parquet"), "--model", "m",
                 "--base-url", server.base_url, "--metrics", "context_utilization", "--estimate-only",
                 "--cache", str(tmp_path / "c.sqlite")])
    assert code == 0 and server.requests == 0
    assert "context_utilization: needs question, answer, contexts; 4 of 5"  # r3: empty answer in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--aspect", "nodefinition"], "NAME=DEFINITION"),
    (["--metrics", "bleu"], "unknown metric"),
    (["--aspect-strictness", "2", "--aspect", "a=b"], "odd"),
])
def test_bad_settings_exit_2(tmp_path, capsys, extra, message):
    code = main(["ragas", str(DATA / "records.jsonl"), "-o", str(tmp_path / "x.parquet"), "--model", "m",
                 "--base-url", "http://127.0.0.1:9/v1", "--cache", str(tmp_path / "c.sqlite"), *extra])
    assert code == 2 and message in capsys.readouterr().err


def test_budget_stop_exits_3_and_a_rerun_resumes(server, tmp_path, capsys):
    base = ["ragas", str(DATA / "records.jsonl"), "-o", str(tmp_path / "x.jsonl"), "--model", "test-judge",
            "--base-url", server.base_url, "--metrics", "context_utilization", "--cache", str(tmp_path / "c.sqlite"),
            "--price-input", "1000", "--price-output", "1000"]
    # At 1000 per million tokens a request reserves about 1.5 (its bytes + 1024 output tokens) and costs about
    # 0.3: one request at a time, 2.0 buys a few of the 6 (one per chunk of r1, r2, r3, r5), not all.
    code = main([*base, "--budget", "2.0", "--concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 3 and "budget" in err, err
    sent = server.requests
    assert 0 < sent < 6
    assert main(base) == 2  # the output exists now: refused without --force
    assert main([*base, "--force"]) == 0  # no budget: the rest is judged, the answered calls come from the cache
    assert server.requests == 6


@pytest.mark.parametrize("phase, metrics", [("base", "faithfulness"), ("own LLM", "context_utilization"),
                                            ("embeddings", "answer_similarity")])
def test_ctrl_c_in_each_phase_stops_in_seconds_writes_and_a_rerun_repeats_no_call(tmp_path, phase, metrics,
                                                                                   monkeypatch):
    recordings = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    out = tmp_path / "judged.jsonl"
    with JudgeServer(recordings=recordings, delay=0.4, embed_delay=5.0) as server:
        args = [sys.executable, "-m", "evalsuite", "ragas", str(DATA / "records.jsonl"), "-o", str(out), "--model",
                "test-judge", "--base-url", server.base_url, "--metrics", metrics, "--concurrency", "1",
                "--embedding-model", "hash-embed", "--embedding-base-url", server.base_url,
                "--cache", str(tmp_path / "c.sqlite")]
        env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        proc = subprocess.Popen(args, cwd=REPO, env=env, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_sigint)
        deadline = time.monotonic() + 60
        busy = (lambda: server.embeddings >= 1) if phase == "embeddings" else (lambda: server.requests >= 2)
        while not busy() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        signalled = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - signalled
        assert proc.returncode == 130, err
        assert stopped_in < 2 + 2, err  # 2 s, plus the interpreter's exit on a shared machine
        assert "interrupted; rerun the same command with --force" in err and "Traceback" not in err
        assert es.read_records(out).table.num_rows == 5  # what was judged is written
        first = set(server.hashes)
        server.delay = server.embed_delay = 0.0
        for name in [k for k in os.environ if "API_KEY" in k]:
            monkeypatch.delenv(name)
        assert main([*args[3:], "--force"]) == 0  # the rerun in this process (a second interpreter start adds nothing to test)
        assert not first & set(server.hashes[len(first):])  # no answered call is sent again
        assert len(server.hashes) == len(set(server.hashes))
