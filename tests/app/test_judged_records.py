"""Records judged by `evalsuite judge` (the RAGTruth sample stripped of its judgements, judged
against the loopback endpoint's recorded replies) load in the dashboard and every page shows them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import evalsuite as es
from evalsuite.judges import LLMJudge
from evalsuite.io.record_files import write_records

from .helpers import PAGES, RAG, open_page

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from judge_server import JudgeServer  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def judged_parquet(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("judged")
    rows = [json.loads(line) for line in list((RAG / "ragtruth_qa.jsonl").open(encoding="utf-8"))[:6]]
    for row in rows:
        row.pop("answer_claims_supported")
    records = es.Records.from_rows(rows, source="stripped.jsonl")
    with JudgeServer() as server:
        judged = LLMJudge("test-judge", base_url=server.base_url, cache=tmp / "c.sqlite3",
                          judgements=["answer_claims_supported", "context_relevant"]).judge(records)
        assert server.unrecorded == [] and judged.done == 6
    write_records(judged.records, tmp / "judged.parquet")
    return (tmp / "judged.parquet").read_bytes(), judged.records


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_judged_records(judged_parquet, page):
    data, records = judged_parquet
    at = open_page(page, pending=[("records", "judged.parquet", data)], clear=True)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page == "rag_quality":
        summary = at.dataframe[0].value
        report = es.evaluate_records(records)
        for system in summary.index:
            assert summary.loc[system, "faithfulness"] == pytest.approx(report.means[system]["faithfulness"], abs=1e-12,
                                                                        nan_ok=True)  # no claims: undefined
            assert summary.loc[system, "context_relevance"] == pytest.approx(report.means[system]["context_relevance"],
                                                                            abs=1e-12, nan_ok=True)
