"""The dashboard's hosting rules through AppTest: sign-in switched on but not configured shows only
that message; a signed-in user's identity; the daily upload limit and the workspace limit per
session with their messages; the start-up warning about a key without an endpoint."""

from __future__ import annotations

import logging
from pathlib import Path

from streamlit.testing.v1 import AppTest

from .helpers import REPO, open_page, texts

RECORDS = (Path(__file__).resolve().parents[1] / "data" / "ragas" / "records.jsonl").read_bytes()


def test_sign_in_without_a_provider_shows_nothing_of_the_dashboard():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.secrets["evalsuite"] = {"sign_in": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    body = " ".join(texts([*at.error, *at.markdown, *at.info]))
    assert "Sign-in is required here but is not configured" in body
    assert not at.button and "data_files" not in at.session_state  # no page ran, no sample data loaded


def test_a_signed_in_user_is_named_in_the_sidebar_and_owns_what_they_save():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.secrets["evalsuite"] = {"sign_in": True}
    at.secrets["auth"] = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32,
                          "client_id": "c", "client_secret": "s",
                          "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
    at.user = {"is_logged_in": True, "email": "alice@example.com", "sub": "alice", "iss": "http://127.0.0.1:9"}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Signed in as alice@example.com" in t for t in texts(at.sidebar.caption))
    at.button(key="data_share_submit").click().run()
    from evalsuite.hosting import user_id
    from evalsuite.storage import open_store

    with open_store() as store:
        assert len(store.owned_workspaces(user_id("http://127.0.0.1:9", "alice"))) == 1


def test_the_daily_upload_limit_refuses_a_file_with_its_message(monkeypatch):
    monkeypatch.setenv("EVALSUITE_UPLOAD_MB_PER_DAY", "0.001")  # 1,048 bytes a day; the file is 1,346
    at = open_page("data", pending=[("records", "a.jsonl", RECORDS)], clear=True)
    problems = at.session_state["data_problems"]
    assert [name for name, _ in problems] == ["a.jsonl"]
    assert "daily upload limit is reached" in problems[0][1] and "upload_mb_per_day" in problems[0][1]
    assert not [f for f in at.session_state["data_files"].values() if f.kind == "records"]


def test_the_workspace_limit_per_session(monkeypatch):
    monkeypatch.setenv("EVALSUITE_WORKSPACES_PER_USER", "1")
    at = open_page("data")
    at.button(key="data_share_submit").click().run()
    assert at.session_state["ws_share_result"]
    at.button(key="data_share_result_done").click().run()
    at.button(key="data_share_submit").click().run()
    assert any("the most this dashboard stores per user" in t for t in texts(at.error))


def test_a_key_without_an_endpoint_is_named_in_the_log(monkeypatch, caplog):
    from dashboard import hosting

    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-sent")
    monkeypatch.delenv("EVALSUITE_JUDGE_BASE_URL", raising=False)
    hosting.log_startup_warnings.clear()
    with caplog.at_level(logging.WARNING, logger="evalsuite.dashboard"):
        warnings = hosting.log_startup_warnings()
    hosting.log_startup_warnings.clear()
    assert any("OPENAI_API_KEY" in w and "never sends this key" in w for w in warnings)
    assert "sk-never-sent" not in caplog.text and "OPENAI_API_KEY" in caplog.text
