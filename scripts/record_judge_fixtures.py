"""Record the chat responses the judge tests replay (tests/data/judges/recorded_chat.json).

The responses come from the word-overlap stand-in of tests/judge_server.py (``scripted_reply``),
not from a model: the tests check the judge's protocol, caching and fault handling, never the
quality of verdicts. Rerun after changing a prompt (its hash changes, and the tests fail loudly
on the unrecorded requests):

    python scripts/record_judge_fixtures.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from judge_server import RECORDINGS, JudgeServer  # noqa: E402

import evalsuite as es  # noqa: E402
from evalsuite.judges import LLMJudge  # noqa: E402
from evalsuite.judges.llm import MODES  # noqa: E402

MODEL = "test-judge"
SAMPLE_ROWS = 6  # the first RAGTruth records, for the command-line test


def main() -> None:
    records = es.read_records(REPO / "tests" / "data" / "judges" / "records.jsonl")
    sample = es.Records(es.read_records(REPO / "sample_data" / "rag" / "ragtruth_qa.jsonl").table.slice(0, SAMPLE_ROWS))
    recorded: dict = {}
    with JudgeServer(scripted=True, record_into=recorded) as server:
        for mode in MODES:
            LLMJudge(MODEL, base_url=server.base_url, cache=":memory:", modes=(mode,)).judge(records)
        LLMJudge(MODEL, base_url=server.base_url, cache=":memory:").judge(sample)
    RECORDINGS.write_text(json.dumps(dict(sorted(recorded.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(recorded)} responses -> {RECORDINGS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
