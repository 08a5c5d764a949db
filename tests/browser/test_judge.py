"""One judging run in a real browser: the Judge page against a slow loopback server replaying
recorded replies (tests/data/ragas), its progress still there after a visit to another page, then
the judged records on RAG quality."""

from __future__ import annotations

import json

import pytest
from judge_server import JudgeServer

from .conftest import REPO, screenshot, table_rows, wait_idle, wait_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

DATA = REPO / "tests" / "data" / "ragas"


def test_one_judging_run(server, page):
    recordings = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    with JudgeServer(recordings=recordings, delay=1.0) as llm:
        page.goto(server.url)
        wait_idle(page)
        page.get_by_role("button", name="Clear all data").click()
        wait_idle(page)
        uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="Per-request records").first
        uploader.locator('input[type="file"]').set_input_files(
            files=[{"name": "answers.jsonl", "mimeType": "text/plain", "buffer": (DATA / "records.jsonl").read_bytes()}])
        page.wait_for_selector("text=answers.jsonl: read as", timeout=60_000)
        wait_idle(page)
        page.locator('[data-testid="stSidebarNav"] a', has_text="Judge").click()
        wait_idle(page)
        page.get_by_role("textbox", name="Endpoint (OpenAI-compatible)").fill(llm.base_url)
        page.get_by_role("textbox", name="Endpoint (OpenAI-compatible)").press("Enter")
        wait_idle(page)
        page.get_by_role("textbox", name="Model").fill("test-judge")
        page.get_by_role("textbox", name="Model").press("Enter")
        wait_idle(page)
        page.wait_for_selector("text=judge requests", timeout=60_000)
        page.get_by_role("button", name="Start judging").click()
        page.wait_for_selector("text=steps;", timeout=60_000)
        # Another page while it runs (each request takes 1 s), then back: the run went on and its progress is shown.
        page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
        wait_idle(page)
        page.locator('[data-testid="stSidebarNav"] a', has_text="Judge").click()
        page.wait_for_selector("text=steps;", timeout=60_000)
        # The progress line can be drawn before the Cancel button beside it: wait for the button
        # rather than sample it once (CI sampled it too early once).
        page.get_by_role("button", name="Cancel").wait_for(state="visible", timeout=30_000)
        assert page.get_by_role("button", name="Cancel").is_visible()
        page.wait_for_selector("text=waiting for a reply", timeout=30_000)  # said while it waits, between records
        screenshot(page, "judge_progress_after_a_page_switch")
        page.wait_for_selector("text=replace it on every page", timeout=180_000)
        wait_idle(page)
        screenshot(page, "judge_after_run")
        assert page.locator("text=What the run changed").count() == 1
        assert llm.unrecorded == []
        page.locator('[data-testid="stSidebarNav"] a', has_text="RAG quality").click()
        wait_idle(page)
        wait_tables(page)
        # The per-system table: one column per metric, computed from judgements the file did not have (the
        # grid draws only the columns in view, so the first ones are checked; AppTest checks them all).
        header = table_rows(page, 0)[0]
        assert {"context_precision", "context_recall", "faithfulness", "answer_correctness"} <= set(header), header
        last = page.locator('[data-testid="stDataFrame"]').count() - 1
        cells = {c for row in table_rows(page, last) for c in row}  # the long table (last): a row per system and metric
        assert {"answer_relevancy", "answer_similarity", "context_entity_recall", "context_relevancy",
                "context_utilization"} <= cells, sorted(cells)
        assert "0.8888888888888888" in cells  # rag's context entity recall: (3/3 + 2/3 + 4/4) / 3 (recorded entities)
        screenshot(page, "rag_quality_after_judging")
