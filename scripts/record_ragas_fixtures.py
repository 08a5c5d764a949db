"""Record the chat responses the RAGAS-family judge tests replay (tests/data/ragas/recorded_chat.json).

The responses come from deterministic word-overlap stand-ins (tests/judge_server.py's
``scripted_reply`` for the LLM judge's own prompts, :func:`ragas_reply` below for
evalsuite/judges/prompts.py's RAGAS_PROMPTS), not from a model: the tests check the plumbing and arithmetic,
never the quality of verdicts. Rerun after changing a prompt (its hash changes, and the tests
fail loudly on the unrecorded requests):

    python scripts/record_ragas_fixtures.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import judge_server  # noqa: E402
from judge_server import JudgeServer, _words  # noqa: E402

import evalsuite as es  # noqa: E402
from evalsuite.judges import LLMJudge  # noqa: E402
from evalsuite.judges.prompts import RAGAS_PROMPTS  # noqa: E402
from evalsuite.judges.ragas import RagasJudge  # noqa: E402

MODEL = "test-judge"
OUT = REPO / "tests" / "data" / "ragas" / "recorded_chat.json"
ASPECTS = {"concise": "The response answers in at most two sentences without filler."}
_OWN = {p.system: name for name, p in RAGAS_PROMPTS.items()}


def _section(user: str, title: str) -> str:
    match = re.search(rf"(?ms)^{re.escape(title)}:\n(.*?)(?=\n\n[A-Z][a-z]+:\n|\n\n(?:Write|List|Reply|Vote) |\Z)", user)
    return match.group(1) if match else ""


def ragas_reply(body: dict) -> str | None:
    """A stand-in reply for this module's prompts (None: not one of them)."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    name = _OWN.get(system) or ("critique" if "Criterion " in system else None)
    if name is None:
        return None
    if name == "generated_questions":
        n = int(re.search(r"Write (\d+) questions", user).group(1))
        words = sorted(_words(_section(user, "Answer")))
        return json.dumps({"claims": [f"What does the answer say about {w}?" for w in words[:n]]})
    if name == "answer_noncommittal":
        answer = _section(user, "Answer").lower()
        return json.dumps({"verdict": "yes" if "don't know" in answer or "not sure" in answer else "no"})
    if name == "entities":
        text = _section(user, "Text")
        found = re.findall(r"\b(?:[A-Z][a-z]+(?: [A-Z][a-z]+)*|\d+)\b", text)
        return json.dumps({"claims": list(dict.fromkeys(e for e in found if e not in ("The", "It", "At")))})
    if name == "context_useful_for_answer":
        overlap = _words(_section(user, "Answer")) & _words(_section(user, "Passage"))
        return json.dumps({"verdict": "yes" if len(overlap) >= 2 else "no"})
    if name == "context_sentences_relevant":
        question = _words(_section(user, "Question"))
        lines = _section(user, "Sentences").splitlines()
        return json.dumps({"verdicts": ["yes" if len(question & _words(line)) >= 2 else "no" for line in lines]})
    answer = _section(user, "Response")
    return json.dumps({"verdict": "yes" if 0 < len(answer) <= 80 else "no"})


def main() -> None:
    original = judge_server.scripted_reply
    judge_server.scripted_reply = lambda body: ragas_reply(body) or original(body)
    records = es.read_records(REPO / "tests" / "data" / "ragas" / "records.jsonl")
    recorded: dict = {}
    with JudgeServer(scripted=True, record_into=recorded) as server:
        llm = LLMJudge(MODEL, base_url=server.base_url, cache=":memory:")
        RagasJudge(llm, embedder=_NoEmbedder(), aspects=ASPECTS, aspect_strictness=3).judge(records)
    OUT.write_text(json.dumps(dict(sorted(recorded.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(recorded)} responses -> {OUT.relative_to(REPO)}")


class _NoEmbedder:
    """Embeddings are not recorded (the tests run MiniLM): constant vectors while recording."""

    model_id = "none"

    def embed(self, texts):
        import numpy as np

        return np.ones((len(texts), 4))


if __name__ == "__main__":
    main()
