"""Visitors see only their own data, in Chromium: a second browser context never sees the first one's
uploads, human labels or judge replies; a records file whose provenance claims another session's
request hashes shows no reply; and replies of a visitor's own endpoint are never served to a run on
the operator's endpoint (the judge cache is scoped by endpoint and, for typed endpoints, by owner)."""

from __future__ import annotations

import json

from judge_server import JudgeServer
from oidc_provider import write_secrets

from .conftest import screenshot, upload_file, wait_idle

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

POISON = "POISONED CLAIM FROM A VISITOR ENDPOINT"


def _poison(body: dict) -> str:
    if "verdicts" in body["messages"][1]["content"].lower() or "claims" not in body["messages"][0]["content"].lower():
        return json.dumps({"verdicts": ["no"] * 50})
    return json.dumps({"claims": [POISON]})


def _judge_once(tab, url: str, own_endpoint: str | None = None) -> str:
    """Judge faithfulness of one sample record per system; returns the run's summary message."""
    tab.goto(url + "/judge?judge_metrics=faithfulness")
    wait_idle(tab)
    limit = tab.get_by_role("spinbutton", name="Records at most (the first of each chosen system)")
    limit.fill("1")
    limit.press("Enter")
    wait_idle(tab)
    if own_endpoint:
        tab.get_by_text("My own endpoint", exact=True).click()
        wait_idle(tab)
        box = tab.get_by_role("textbox", name="Endpoint (OpenAI-compatible)")
        box.fill(own_endpoint)
        box.press("Enter")
        tab.get_by_role("textbox", name="Model").fill("op")  # the same model name as the operator's
        tab.get_by_role("textbox", name="Model").press("Enter")
        wait_idle(tab)
    tab.wait_for_selector("text=judge requests", timeout=60_000)
    tab.get_by_role("button", name="Start judging").click()
    tab.wait_for_selector("text=replace it on every page", timeout=120_000)
    wait_idle(tab)
    return tab.locator('[data-testid="stAlertContentInfo"]').last.inner_text()


def test_a_second_context_sees_nothing_of_the_first(start_server, browser, tmp_path):
    with JudgeServer(scripted=True) as operator, JudgeServer(reply=_poison) as poisoner:
        secrets = write_secrets(tmp_path / "secrets.toml", {"evalsuite": {
            "judge_base_url": operator.base_url, "judge_model": "op", "judge_api_key": "sk-operator-isolation"}})
        server = start_server(env={"EVALSUITE_DATA_DIR": str(tmp_path / "data"), "OPENAI_API_KEY": ""},
                              args=["--secrets.files", str(secrets)])
        first_context = browser.new_context(viewport={"width": 1400, "height": 1000})
        second_context = browser.new_context(viewport={"width": 1400, "height": 1000})
        first, second = first_context.new_page(), second_context.new_page()

        # The second visitor judges first, on a server of their own that lies.
        message = _judge_once(second, server.url, own_endpoint=poisoner.base_url)
        assert poisoner.requests > 0 and "requests sent" in message
        # The first visitor's run on the operator's endpoint is not served those replies: every request
        # goes to the operator's server.
        message = _judge_once(first, server.url)
        assert operator.requests > 0 and f"{operator.requests} requests sent, 0 from the cache" in message
        first.locator('[data-testid="stSidebarNav"] a', has_text="Per-query").click()
        wait_idle(first)
        assert POISON not in first.content()

        # The first visitor's own upload and human labels.
        first.locator('[data-testid="stSidebarNav"] a', has_text="Data").click()
        wait_idle(first)
        answers = tmp_path / "alice_answers.jsonl"
        answers.write_text(json.dumps({"query_id": "q-alice", "system": "alice-rag",
                                       "answer": "Private answer of alice."}) + "\n")
        upload_file(first, "Per-request records", answers)
        first.wait_for_selector("text=alice_answers.jsonl: read as", timeout=60_000)
        first.locator('[data-testid="stSidebarNav"] a', has_text="Calibration").click()
        wait_idle(first)
        first.get_by_text("Upload a judgement table").click()
        labels = tmp_path / "alice_labels.csv"
        labels.write_text("query_id,system,judgement,item,judge,judge_label,human_label\n"
                          + "".join(f"q{i},alice-labelled,support,0,j,{i % 2},{(i // 2) % 2}\n" for i in range(40)))
        first.locator('[data-testid="stFileUploader"]').first.locator('input[type="file"]').set_input_files(str(labels))
        first.wait_for_function("() => document.documentElement.outerHTML.includes('alice-labelled')", timeout=60_000)
        wait_idle(first)

        # A new visitor: none of it.
        third_context = browser.new_context(viewport={"width": 1400, "height": 1000})
        third = third_context.new_page()
        third.goto(server.url)
        wait_idle(third)
        assert "alice_answers.jsonl" not in third.content() and "ragtruth_qa.judged" not in third.content()
        third.locator('[data-testid="stSidebarNav"] a', has_text="Calibration").click()
        wait_idle(third)
        assert "alice-labelled" not in third.content()

        # A records file claiming the first visitor's request hashes: its provenance shows, no reply does.
        forged = tmp_path / "forged.jsonl"
        provenance = [{"column": "answer_claims", "judge": "llm", "model": "op", "request_hash": h, "status": "ok"}
                      for h in operator.hashes[:3]]
        forged.write_text(json.dumps({"query_id": "q1", "system": "forger", "answer": "x",
                                      "answer_claims_supported": [True],
                                      "judge_provenance": json.dumps(provenance)}) + "\n")
        third.locator('[data-testid="stSidebarNav"] a', has_text="Data").click()
        wait_idle(third)
        third.get_by_role("button", name="Clear all data").click()
        wait_idle(third)
        upload_file(third, "Per-request records", forged)
        third.wait_for_selector("text=forged.jsonl: read as", timeout=60_000)
        third.locator('[data-testid="stSidebarNav"] a', has_text="Per-query").click()
        wait_idle(third)
        third.wait_for_selector("text=provenance of the judged values", timeout=60_000)
        third.wait_for_selector("text=Raw judge replies are shown only in the browser session", timeout=30_000)
        assert third.get_by_text("Raw judge output of").count() == 0
        assert '{"claims"' not in third.content() and '"verdicts"' not in third.content()
        screenshot(third, "isolation_forged_provenance")
        for context in (first_context, second_context, third_context):
            context.close()
