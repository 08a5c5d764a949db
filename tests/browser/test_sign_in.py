"""Sign-in end to end in Chromium against a local OpenID Connect provider on 127.0.0.1: every page
needs it, workspaces record their owner, a judge run on the operator's endpoint stops at the day's
budget with a clear message, and the audit log and ``evalsuite admin usage`` show the run."""

from __future__ import annotations

import subprocess
import sys

from evalsuite.hosting import user_id
from evalsuite.storage import open_store
from judge_server import JudgeServer
from oidc_provider import OIDCProvider, auth_section, sign_in, write_secrets

from .conftest import REPO, click_until_shown, free_port, screenshot, upload_file, wait_idle

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

RECORDS = REPO / "tests" / "data" / "ragas" / "records.jsonl"
OPERATOR_KEY = "sk-operator-signin-0123456789"


def _nav(tab, title: str) -> None:
    tab.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    wait_idle(tab)


def test_sign_in_owners_budget_and_audit_log(start_server, browser, tmp_path):
    data_dir = tmp_path / "data"
    port = free_port()
    with OIDCProvider() as idp, JudgeServer(scripted=True) as llm:
        secrets = write_secrets(tmp_path / "secrets.toml", {
            "evalsuite": {"sign_in": True, "judge_base_url": llm.base_url, "judge_model": "op-model",
                          "judge_api_key": OPERATOR_KEY, "judge_price_input": 40.0, "judge_price_output": 40.0,
                          "judge_daily_budget": 0.4},
            "auth": auth_section(idp, port)})
        server = start_server(env={"EVALSUITE_DATA_DIR": str(data_dir), "OPENAI_API_KEY": ""},
                              args=["--secrets.files", str(secrets)], port=port)
        alice = browser.new_context(viewport={"width": 1400, "height": 1000})
        tab = alice.new_page()
        tab.goto(server.url + "/compare")  # a deep link: it needs sign-in too
        tab.wait_for_selector("text=Sign in to use this dashboard", timeout=60_000)
        assert tab.locator('[data-testid="stSidebarNav"]').count() == 0
        assert tab.locator('[data-testid="stFileUploader"]').count() == 0
        screenshot(tab, "sign_in_required")
        sign_in(tab, "alice@example.com")
        wait_idle(tab)
        tab.wait_for_selector("text=Signed in as alice", timeout=30_000)

        # Her own data: upload records, save a workspace (owned by her).
        _nav(tab, "Data")
        tab.get_by_role("button", name="Clear all data").click()
        wait_idle(tab)
        upload_file(tab, "Per-request records", RECORDS)
        tab.wait_for_selector("text=records.jsonl: read as", timeout=60_000)
        wait_idle(tab)
        tab.get_by_role("textbox", name="Workspace name").first.fill("alice's answers")
        click_until_shown(tab, tab.get_by_role("button", name="Save and share").first, "Saved workspace")
        wait_idle(tab)

        # A judge run on the operator's endpoint stops at her day's budget, with a clear message.
        _nav(tab, "Judge")
        assert tab.get_by_role("textbox", name="Endpoint (OpenAI-compatible)").count() == 0
        tab.wait_for_selector("text=judge requests", timeout=60_000)
        tab.get_by_role("button", name="Start judging").click()
        tab.wait_for_selector("text=Stopped by the budget", timeout=180_000)
        wait_idle(tab)
        screenshot(tab, "sign_in_budget_stop")
        assert llm.authorization == {f"Bearer {OPERATOR_KEY}"}

        with open_store(data_dir=data_dir) as store:
            alice_id = user_id(idp.issuer, "alice@example.com")
            owned = store.owned_workspaces(alice_id)
            assert [w.name for w in owned] == ["alice's answers"]
            runs = store.judge_runs()
            assert [(r.user_id, r.user_label, r.outcome, r.origin) for r in runs] == [
                (alice_id, "alice@example.com", "budget", "operator")]
            assert 0 < runs[0].cost <= 0.4 and runs[0].requests == llm.requests and runs[0].reserved == 0
        usage = subprocess.run([sys.executable, "-m", "evalsuite", "admin", "usage", "--days", "1"], cwd=tmp_path,
                               env={"EVALSUITE_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
                               capture_output=True, text=True, timeout=120)
        assert usage.returncode == 0, usage.stderr
        line = next(row for row in usage.stdout.splitlines() if alice_id in row)
        assert "alice@example.com" in line and "budget 1" in line and OPERATOR_KEY not in usage.stdout

        # Another user sees none of it, and sign-out ends the session's access.
        bob = browser.new_context(viewport={"width": 1400, "height": 1000})
        other = bob.new_page()
        other.goto(server.url)
        sign_in(other, "bob@example.com")
        wait_idle(other)
        assert other.locator("text=alice's answers").count() == 0
        assert other.locator("text=records.jsonl").count() == 0
        bob.close()
        tab.get_by_role("button", name="Sign out").click()
        tab.get_by_role("button", name="End session").click()  # the provider's own sign-out page
        tab.wait_for_selector("text=Sign in to use this dashboard", timeout=60_000)
        screenshot(tab, "sign_in_after_sign_out")
        alice.close()
