"""The judge cache: canonical request hashes, persistence across processes, thread safety."""

import hashlib
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evalsuite.errors import EvalSuiteError
from evalsuite.judges import JudgeCache, canonical_json, request_hash
from evalsuite.judges._cache import default_cache_path

REPO = Path(__file__).resolve().parents[2]


def test_request_hash_is_sha256_of_canonical_json():
    request = {"model": "m", "messages": [{"role": "user", "content": "Ça va?"}], "temperature": 0}
    text = '{"messages":[{"content":"Ça va?","role":"user"}],"model":"m","temperature":0}'
    assert canonical_json(request) == text
    assert request_hash(request) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert request_hash({**request, "temperature": 0.0}) != request_hash({**request, "max_tokens": 5})


def test_cache_persists_across_processes(tmp_path):
    path = tmp_path / "sub" / "cache.sqlite3"
    with JudgeCache(path) as cache:
        cache.put("k1", {"model": "m"}, {"content": "{\"verdict\": \"yes\"}", "prompt_tokens": 3})
        cache.put("k1", {"model": "m"}, {"content": "other"})  # the first answer is kept
    code = f"from evalsuite.judges import JudgeCache; c = JudgeCache({str(path)!r}); print(c.get('k1')['content'], len(c))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.split() == ['{"verdict":', '"yes"}', "1"]


def test_cache_is_thread_safe(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite3")

    def work(start):
        for i in range(start, start + 200):
            cache.put(f"k{i}", {"i": i}, {"i": i})
            assert cache.get(f"k{i}") == {"i": i}

    threads = [threading.Thread(target=work, args=(n * 200,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 800


def test_not_a_database_raises_an_evalsuite_error(tmp_path):
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(EvalSuiteError, match="cannot open the judge cache"):
        JudgeCache(bad)


def test_default_path_is_in_the_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("EVALSUITE_DATA_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "judge_cache.sqlite3"


def test_preloaded_cache_answers_as_sqlite_does(tmp_path):
    path = tmp_path / "c.sqlite3"
    with JudgeCache(path) as cache:
        cache.put("a", {"r": 1}, {"content": "A"})
    cache = JudgeCache(path)
    assert cache.preload() is True
    assert cache.get("a") == {"content": "A"} and cache.get("b") is None
    cache.put("b", {"r": 2}, {"content": "B"})
    assert cache.get("b") == {"content": "B"} and JudgeCache(path).get("b") == {"content": "B"}
    assert JudgeCache(path).preload(max_rows=1) is False  # too many rows: lookups stay in SQLite


def test_a_cache_file_of_the_stored_layout_replays_without_a_call(tmp_path):
    """A file written as earlier releases wrote it (this DDL, keys by the documented definition:
    SHA-256 of the canonical request, then of the endpoint scope and it) is read as it is: the
    replay's fast keys are the same keys, and every verdict comes from the file."""
    import sqlite3

    import evalsuite as es
    from evalsuite.judges import LLMJudge, PROMPTS
    from evalsuite.judges._cache import scoped_key
    from evalsuite.judges.endpoints import endpoint_identity

    url = "http://127.0.0.1:9/v1"  # nothing listens there: a lookup that missed would fail the run
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE judge_calls (request_hash TEXT PRIMARY KEY, response TEXT NOT NULL, "
                 "created REAL NOT NULL) WITHOUT ROWID")
    conn.execute("CREATE TABLE judge_requests (request_hash TEXT PRIMARY KEY, request TEXT NOT NULL) WITHOUT ROWID")
    reference = LLMJudge("m", base_url=url, cache=":memory:", judgements=["context_relevant"])
    prompt = PROMPTS["context_relevant"]
    replies = {"Paris is in France.": '{"verdict": "yes"}', "Bananas are yellow.": '{"verdict": "no"}' + " " * 80}
    for chunk, content in replies.items():
        request = reference._request(prompt, prompt.messages(question="Where is Paris?", chunk=chunk), "json_schema")
        key = request_hash(request)
        conn.execute("INSERT INTO judge_calls VALUES (?, ?, 0)", (
            scoped_key(("endpoint", endpoint_identity(url)), key),
            canonical_json({"content": content, "choices": 1, "finish_reason": "stop", "prompt_tokens": 9,
                            "completion_tokens": 3, "latency_ms": 5.0})))
        conn.execute("INSERT INTO judge_requests VALUES (?, ?)", (key, canonical_json(request)))
    conn.commit()
    conn.close()
    records = es.Records.from_rows([{"query_id": "q", "question": "Where is Paris?",
                                     "contexts": list(replies)}])
    judged = LLMJudge("m", base_url=url, cache=path, judgements=["context_relevant"], breaker=1).judge(records)
    stats = judged.stats
    assert (stats.calls, stats.unreached, stats.cache_hits, stats.ok) == (0, 0, 2, 2), stats
    assert judged.records.table.column("context_relevant").to_pylist() == [[True, False]]


def test_a_remembered_reading_is_never_shared_between_judgements():
    from evalsuite.judges import PROMPTS
    from evalsuite.judges.replies import reply_value

    response = {"choices": 1, "content": '{"verdicts": ["yes", "no"]}'}
    first, _ = reply_value(PROMPTS["answer_claims_supported"], response, "json_schema", 2)
    first.append("changed by its caller")
    assert reply_value(PROMPTS["answer_claims_supported"], response, "json_schema", 2) == ([True, False], None)
    assert reply_value(PROMPTS["answer_claims_supported"], response, "json_schema", 3) == (None, "malformed")
