"""Benchmark the judges (docs/judges.md), each next to its floor in the same run:

    python benchmarks/judges.py [--judgements 10000] [--cached 100000] [--pairs 1000]

1. LLM judge against the loopback OpenAI-shaped server of tests/judge_server.py (in its own
   process, word-overlap replies, 50 ms per response), 32 requests in flight: 10,000 judgements
   (context relevance, 5 chunks per record), next to the bare ``openai`` client sending the same
   10,000 requests from 32 threads, and the ideal 10,000 x 50 ms / 32.
   ``busy``: the same with a server answering in 0.5 s (``--busy-delay``): the share of the
   concurrency limit kept busy, ideal time / time taken (target >= 0.9).
2. 100,000 cached judgements replayed (the cache filled beforehand with the same responses),
   no request sent; next to the floor of one SQLite query reading the same rows (target: at most
   2x, and < 5 s), and the time of computing the 100,000 requests' cache keys alone (two SHA-256
   each, which the floor does not do and no replay can skip).
3. ``silent``: ``evalsuite judge`` with the default settings against an endpoint that accepts
   connections and never answers: the wall time to its exit (target < 60 s), next to the bound
   the run keeps (``LLMJudge.silent_endpoint_bound``: 46.7 s).
4. 1,000 answer/reference pairs embedded by the MiniLM judge (RAGTruth answers and their first
   retrieved passage, repeated to 1,000: each distinct text is embedded once), on all cores;
   next to the bare onnxruntime session run on the same pre-tokenised batches, in distinct tokens
   per second (target: >= 80 % of the session's throughput).

Results are printed and written to results/judges_<parts>.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import evalsuite as es  # noqa: E402
from evalsuite.judges import JudgeCache, LLMJudge, PROMPTS, request_hash  # noqa: E402


def serve(delay: float) -> None:
    from judge_server import JudgeServer

    with JudgeServer(scripted=True, delay=delay) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the parent closes the pipe


def start_server(delay: float):
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(delay)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def make_records(n_records: int, chunks: int, tag: str):
    rows = [{"query_id": f"{tag}{i}", "system": "bench", "question": f"What does item {i} of batch {tag} do?",
             "contexts": [f"Item {i} of batch {tag}, passage {c}: it does thing {c * 7 % 11}." for c in range(chunks)]}
            for i in range(n_records)]
    return es.Records.from_rows(rows)


def bench_llm(n: int, delay: float, concurrency: int) -> dict:
    proc, url = start_server(delay)
    try:
        records = make_records(n // 5, 5, "a")
        with tempfile.TemporaryDirectory() as tmp:
            judge = LLMJudge("bench-judge", base_url=url, cache=Path(tmp) / "c.sqlite3", concurrency=concurrency,
                             judgements=["context_relevant"])
            started = time.perf_counter()
            result = judge.judge(records)
            ours = time.perf_counter() - started
            assert result.stats.judgements == n and not result.stats.missing, result.stats
            retries = result.stats.retries
        # The floor: the bare openai client, same requests, same concurrency, no cache, no parsing.
        import openai

        client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
        other = make_records(n // 5, 5, "b")
        prompt = PROMPTS["context_relevant"]
        requests = [dict(model="bench-judge", messages=prompt.messages(question=q, chunk=c), temperature=0,
                         max_tokens=1024, response_format={"type": "json_schema", "json_schema": {
                             "name": prompt.name, "strict": True, "schema": prompt.schema}})
                    for q, ctx in zip(other.table.column("question").to_pylist(), other.table.column("contexts").to_pylist())
                    for c in ctx]
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda r: client.chat.completions.create(**r), requests))
        bare = time.perf_counter() - started
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return {"judgements": n, "concurrency": concurrency, "delay_s": delay, "evalsuite_s": ours, "bare_openai_s": bare,
            "retries": retries,
            "ideal_s": n * delay / concurrency}


def bench_busy(n: int, delay: float, concurrency: int) -> dict:
    """The share of the concurrency limit the LLM judge keeps busy against a slow server."""
    proc, url = start_server(delay)
    try:
        records = make_records(n // 5, 5, "busy")
        judge = LLMJudge("bench-judge", base_url=url, cache=":memory:", concurrency=concurrency,
                         judgements=["context_relevant"])
        judge.endpoint.prepare()  # importing openai is not the judge's request loop
        # Requests in flight over time, integrated: the share of the concurrency limit in use.
        import threading

        lock, state = threading.Lock(), {"n": 0, "last": 0.0, "area": 0.0}
        send = judge.endpoint.send

        def counted(request, timeout=None):
            with lock:
                now = time.perf_counter()
                state["area"] += state["n"] * (now - state["last"])
                state["last"], state["n"] = now, state["n"] + 1
            try:
                return send(request, timeout)
            finally:
                with lock:
                    now = time.perf_counter()
                    state["area"] += state["n"] * (now - state["last"])
                    state["last"], state["n"] = now, state["n"] - 1

        judge.endpoint.send = counted
        started = time.perf_counter()
        state["last"] = started
        result = judge.judge(records)
        ours = time.perf_counter() - started
        assert result.stats.ok == n and not result.stats.missing, result.stats
        retries = result.stats.retries
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    ideal = n * delay / concurrency
    return {"judgements": n, "concurrency": concurrency, "delay_s": delay, "evalsuite_s": ours, "ideal_s": ideal,
            "busy": state["area"] / (concurrency * ours), "ideal_over_taken": ideal / ours, "retries": retries}


def bench_cached(n: int) -> dict:
    from judge_server import scripted_reply

    records = make_records(n // 5, 5, "c")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.sqlite3"
        judge = LLMJudge("bench-judge", base_url="http://127.0.0.1:9/v1", cache=path, judgements=["context_relevant"])
        prompt = PROMPTS["context_relevant"]
        keys = []
        cache = JudgeCache(path)
        cache._conn.execute("BEGIN")
        for q, ctx in zip(records.table.column("question").to_pylist(), records.table.column("contexts").to_pylist()):
            for c in ctx:
                request = judge._request(prompt, prompt.messages(question=q, chunk=c), "json_schema")
                key = request_hash(request)
                keys.append(judge.cache.scope_key(key))  # stored under the endpoint's scope, as the judge keeps it
                cache._conn.execute("INSERT OR IGNORE INTO judge_calls VALUES (?, ?, ?)", (
                    keys[-1], json.dumps({"content": scripted_reply(request), "choices": 1, "finish_reason": "stop",
                                     "prompt_tokens": 80, "completion_tokens": 5, "latency_ms": 50.0}), 0.0))
                cache._conn.execute("INSERT OR IGNORE INTO judge_requests VALUES (?, ?)", (key, json.dumps(request)))
        cache._conn.execute("COMMIT")
        cache.close()
        started = time.perf_counter()
        result = judge.judge(records)
        ours = time.perf_counter() - started
        assert result.stats.calls == 0 and result.stats.cache_hits == n, result.stats
        judge.cache.base.close()
        import sqlite3

        conn = sqlite3.connect(path)
        started = time.perf_counter()
        rows = conn.execute("SELECT request_hash, response FROM judge_calls").fetchall()
        floor = time.perf_counter() - started
        conn.close()
        assert len(rows) == n
        # What any replay must do besides reading the rows: each request's key (its user message
        # filled in, the SHA-256 of the canonical request, then of the endpoint's scope and it).
        started = time.perf_counter()
        found = [judge.cache.scope_key(judge._key(prompt, prompt.user.format(question=q, chunk=c), "json_schema"))
                 for q, ctx in zip(records.table.column("question").to_pylist(),
                                   records.table.column("contexts").to_pylist()) for c in ctx]
        keys_s = time.perf_counter() - started
        assert found == keys
    return {"judgements": n, "evalsuite_s": ours, "sqlite_query_s": floor, "keys_only_s": keys_s}


def bench_silent() -> dict:
    """``evalsuite judge`` with the default settings against an endpoint that accepts connections
    and never answers (tests/judge_server.py's SilentServer): the wall time to its exit, next to
    the bound the run keeps (LLMJudge.silent_endpoint_bound) and the issue's minute."""
    from judge_server import SilentServer

    sample = REPO / "sample_data" / "rag" / "ragtruth_qa.jsonl"
    bound = LLMJudge("bench-judge", cache=":memory:").silent_endpoint_bound()
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    with SilentServer() as silent, tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "evalsuite", "judge", str(sample), "--judge", "llm", "--model",
                               "bench-judge", "--base-url", silent.base_url, "--cache", str(Path(tmp) / "c.sqlite3"),
                               "-o", str(Path(tmp) / "o.parquet")], cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
    assert done.returncode == 5 and "sent no reply for" in done.stderr, done.stderr
    return {"wall_s": wall, "bound_s": bound, "exit_code": done.returncode,
            "message": next(line for line in done.stderr.splitlines() if "sent no reply" in line)}


def bench_embedding(pairs: int, short: bool = False) -> dict:
    import numpy as np

    from evalsuite.judges.embedding import EmbeddingJudge, MiniLMEmbedder

    sample = es.read_records(REPO / "sample_data" / "rag" / "ragtruth_qa.jsonl")
    answers = sample.table.column("answer").to_pylist()
    passages = [c[0] for c in sample.table.column("contexts").to_pylist()]
    if short:  # a question and the first sentence of its answer: SQuAD-like lengths
        questions = sample.table.column("question").to_pylist()
        rows = [{"query_id": str(i), "answer": answers[i % len(answers)].split(". ")[0],
                 "reference": questions[i % len(questions)]} for i in range(pairs)]
    else:
        rows = [{"query_id": str(i), "answer": answers[i % len(answers)], "reference": passages[i % len(passages)]}
                for i in range(pairs)]
    records = es.Records.from_rows(rows)
    started = time.perf_counter()
    embedder = MiniLMEmbedder()
    load = time.perf_counter() - started
    started = time.perf_counter()
    result = EmbeddingJudge(embedder).judge(records)
    ours = time.perf_counter() - started
    assert result.records.table.column("answer_similarity").null_count == 0
    # The floor: the session alone on the same pre-tokenised batches (each distinct text once, sorted by
    # length, padded to the longest of each batch): tokenising and pooling are what EvalSuite adds.
    texts = list(dict.fromkeys([r["answer"] for r in rows] + [r["reference"] for r in rows]))
    batches = [feeds for _, feeds in embedder.batches(embedder.tokenize(texts))]
    started = time.perf_counter()
    for feeds in batches:
        embedder._session.run(None, feeds)
    floor = time.perf_counter() - started
    tokens = int(sum(int(b["attention_mask"].sum()) for b in batches))
    return {"pairs": pairs, "short": short, "texts": 2 * pairs, "distinct_texts": len(texts), "distinct_tokens": tokens,
            "load_s": load, "evalsuite_s": ours, "onnxruntime_only_s": floor, "threads": embedder.threads,
            "evalsuite_tokens_per_s": tokens / ours, "onnxruntime_tokens_per_s": tokens / floor}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--judgements", type=int, default=10_000)
    parser.add_argument("--cached", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--busy-judgements", type=int, default=640)
    parser.add_argument("--busy-delay", type=float, default=0.5)
    parser.add_argument("--parts", default="llm,busy,cached,silent,embedding_short,embedding",
                        help="comma-separated: llm, busy, cached, silent, embedding_short, embedding")
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve)
    parts = set(args.parts.split(","))
    rows = []
    if "llm" in parts:
        llm = bench_llm(args.judgements, args.delay, args.concurrency)
        print(f"LLM judge: {llm}", flush=True)
        rows.append(f"| {llm['judgements']:,} LLM judgements, {llm['concurrency']} in flight, server answers in "
                    f"{llm['delay_s'] * 1000:.0f} ms | {llm['evalsuite_s']:.1f} s | bare openai client "
                    f"{llm['bare_openai_s']:.1f} s (ideal {llm['ideal_s']:.1f} s) | "
                    f"{llm['evalsuite_s'] / llm['bare_openai_s']:.2f} | < 30 s |")
    if "busy" in parts:
        busy = bench_busy(args.busy_judgements, args.busy_delay, args.concurrency)
        print(f"LLM judge, slow server: {busy}", flush=True)
        rows.append(f"| {busy['judgements']:,} LLM judgements, {busy['concurrency']} in flight, server answers in "
                    f"{busy['delay_s']:.1f} s | {busy['evalsuite_s']:.2f} s; requests in flight on average "
                    f"{busy['busy']:.0%} of the limit | ideal (every place busy from start to end) "
                    f"{busy['ideal_s']:.2f} s | {busy['busy']:.2f} busy ({busy['ideal_over_taken']:.2f} ideal / taken) "
                    f"| >= 0.90 busy |")
    if "cached" in parts:
        cached = bench_cached(args.cached)
        print(f"cached replay: {cached}", flush=True)
        rows.append(f"| {cached['judgements']:,} cached judgements replayed | {cached['evalsuite_s']:.2f} s | "
                    f"one SQLite query reading the rows {cached['sqlite_query_s']:.2f} s (the requests' keys alone "
                    f"{cached['keys_only_s']:.2f} s) | "
                    f"{cached['evalsuite_s'] / cached['sqlite_query_s']:.2f} | <= 2 and < 5 s |")
    if "silent" in parts:
        silent = bench_silent()
        print(f"silent endpoint: {silent}", flush=True)
        rows.append(f"| `evalsuite judge` with the default settings against an endpoint that accepts and never answers "
                    f"(ragtruth_qa sample) | exit {silent['exit_code']} after {silent['wall_s']:.1f} s | the bound the "
                    f"run keeps {silent['bound_s']:.1f} s (no-reply window + one check + grace) | "
                    f"{silent['wall_s'] / 60:.2f} of a minute | < 60 s |")
    for short in (True, False):
        if ("embedding_short" if short else "embedding") not in parts:
            continue
        emb = bench_embedding(args.pairs, short=short)
        print(f"embedding (short={short}): {emb}", flush=True)
        what = "short pairs (question / first answer sentence)" if short else "RAGTruth answer / passage pairs"
        rows.append(f"| {emb['pairs']:,} {what} embedded, MiniLM int8, {emb['distinct_texts']:,} distinct texts, "
                    f"{emb['distinct_tokens']:,} distinct tokens, {emb['threads']} threads | "
                    f"{emb['evalsuite_s']:.2f} s, {emb['evalsuite_tokens_per_s']:,.0f} tokens/s (+ {emb['load_s']:.2f} s "
                    f"load) | onnxruntime alone on the same batches {emb['onnxruntime_only_s']:.2f} s, "
                    f"{emb['onnxruntime_tokens_per_s']:,.0f} tokens/s | "
                    f"{emb['evalsuite_tokens_per_s'] / emb['onnxruntime_tokens_per_s']:.2f} | >= 0.80 |")
    load = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?") \
        if os.path.exists("/proc/cpuinfo") else platform.processor()
    lines = [
        "# Judges benchmark", "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, {cpu}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"(the machine is shared). `python benchmarks/judges.py --parts {args.parts}`.", "",
        "| what | EvalSuite | floor | ratio | target |", "|---|---|---|---|---|", *rows, "",
    ]
    (BENCH / "results").mkdir(exist_ok=True)
    (BENCH / "results" / f"judges_{args.parts.replace(',', '_')}.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
