"""In every configuration of the table below (operator keys in secrets or the environment, with or
without an operator endpoint, hosted or local, sign-in on or off), a visitor-typed endpoint on a
loopback server never receives an operator key, in Chromium against a real ``streamlit run``.

Two OpenAI-shaped servers run on 127.0.0.1: the operator's endpoint and the visitor's. Where the
Judge page offers a typed endpoint the visitor judges on their own server (with their own key in
half the cases, none in the others: the case where a fallback to the environment would leak);
where the page offers the operator's endpoint, a run there must carry the operator's key to the
operator's server only. (tests/test_endpoints.py checks the same rules over every combination,
without a browser.)
"""

from __future__ import annotations

import pytest

from judge_server import JudgeServer
from oidc_provider import OIDCProvider, auth_section, sign_in, write_secrets

from .conftest import free_port, screenshot, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

OPERATOR_KEY = "sk-operator-routing-0123456789"
VISITOR_KEY = "sk-visitor-routing-abcdef"
NO_KEYS = {"OPENAI_API_KEY": "", "EVALSUITE_JUDGE_API_KEY": "", "EVALSUITE_JUDGE_BASE_URL": "",
           "EVALSUITE_JUDGE_MODEL": ""}

# (id, environment, [evalsuite] secrets, sign-in, typed endpoint offered, operator endpoint offered);
# "OPERATOR" in a value stands for the operator server's address.
CONFIGURATIONS = [
    ("local, OPENAI_API_KEY in the environment, no endpoint", {"OPENAI_API_KEY": OPERATOR_KEY}, {}, False, True, False),
    ("local, EVALSUITE_JUDGE_API_KEY, no endpoint", {"EVALSUITE_JUDGE_API_KEY": OPERATOR_KEY}, {}, False, True, False),
    ("local, judge_api_key secret and model, no endpoint", {}, {"judge_api_key": OPERATOR_KEY, "judge_model": "op"},
     False, True, False),
    ("local, judge_api_key secret with the operator endpoint", {},
     {"judge_api_key": OPERATOR_KEY, "judge_base_url": "OPERATOR", "judge_model": "op"}, False, True, True),
    ("hosted, key and endpoint in the environment",
     {"EVALSUITE_JUDGE_API_KEY": OPERATOR_KEY, "EVALSUITE_JUDGE_BASE_URL": "OPERATOR", "EVALSUITE_JUDGE_MODEL": "op"},
     {"hosted": True}, False, False, True),
    ("hosted, OPENAI_API_KEY only", {"OPENAI_API_KEY": OPERATOR_KEY}, {"hosted": True}, False, False, False),
    ("hosted, typed endpoints allowed, secrets key and endpoint", {},
     {"hosted": True, "judge_typed_endpoints": True, "judge_allow_private_endpoints": True,
      "judge_api_key": OPERATOR_KEY, "judge_base_url": "OPERATOR", "judge_model": "op"}, False, True, True),
    ("sign-in, OPENAI_API_KEY and the operator endpoint", {"OPENAI_API_KEY": OPERATOR_KEY},
     {"judge_base_url": "OPERATOR", "judge_model": "op"}, True, False, True),
    ("sign-in, typed endpoints allowed, judge_api_key without endpoint", {"OPENAI_API_KEY": OPERATOR_KEY},
     {"judge_api_key": OPERATOR_KEY, "judge_typed_endpoints": True, "judge_allow_private_endpoints": True},
     True, True, False),
]


def _judge_page(tab, url: str) -> None:
    """The Judge page in a new session on the sample records: faithfulness of one record per system."""
    tab.goto(url + "/judge?judge_metrics=faithfulness")
    wait_idle(tab)
    limit = tab.get_by_role("spinbutton", name="Records at most (the first of each chosen system)")
    limit.fill("1")
    limit.press("Enter")
    wait_idle(tab)


def _start_run(tab, expect: str = "replace it on every page") -> None:
    tab.wait_for_selector("text=judge requests", timeout=60_000)
    tab.get_by_role("button", name="Start judging").click()
    tab.wait_for_selector(f"text={expect}", timeout=120_000)
    wait_idle(tab)


@pytest.mark.parametrize("case", range(len(CONFIGURATIONS)), ids=[c[0] for c in CONFIGURATIONS])
def test_a_typed_endpoint_never_receives_an_operator_key(case, start_server, browser, tmp_path):
    name, environment, settings, signs_in, typed_offered, operator_offered = CONFIGURATIONS[case]
    with JudgeServer(scripted=True) as operator, JudgeServer(scripted=True) as visitor, OIDCProvider() as idp:
        fill = {k: (operator.base_url if v == "OPERATOR" else v) for k, v in settings.items()}
        env = {**NO_KEYS, **{k: (operator.base_url if v == "OPERATOR" else v) for k, v in environment.items()},
               "EVALSUITE_DATA_DIR": str(tmp_path / "data")}
        port = free_port()
        sections = {"evalsuite": {**fill, "sign_in": signs_in}}
        if signs_in:
            sections["auth"] = auth_section(idp, port)
        secrets = write_secrets(tmp_path / "secrets.toml", sections)
        server = start_server(env=env, args=["--secrets.files", str(secrets)], port=port)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        tab = context.new_page()
        if signs_in:
            tab.goto(server.url)
            sign_in(tab, "visitor@example.com")
        _judge_page(tab, server.url)
        endpoint_box = tab.get_by_role("textbox", name="Endpoint (OpenAI-compatible)")
        own_choice = tab.get_by_text("My own endpoint", exact=True)
        assert (own_choice.count() > 0) == (typed_offered and operator_offered)
        if own_choice.count():
            own_choice.click()
            wait_idle(tab)
        assert (endpoint_box.count() > 0) == typed_offered, name
        visitor_key = VISITOR_KEY if case % 2 == 0 else ""
        if typed_offered:
            endpoint_box.fill(visitor.base_url)
            endpoint_box.press("Enter")
            tab.get_by_role("textbox", name="Model").fill("visitor-model")
            tab.get_by_role("textbox", name="Model").press("Enter")
            key_box = tab.get_by_role("textbox", name="API key of your endpoint (optional)")
            key_box.fill(visitor_key)
            key_box.press("Enter")
            wait_idle(tab)
            _start_run(tab)
            screenshot(tab, f"key_routing_{case}_typed")
            assert visitor.requests > 0
            assert visitor.authorization == {f"Bearer {visitor_key or 'no-key'}"}, name
            assert operator.requests == 0
        if operator_offered:
            _judge_page(tab, server.url)  # a new session (the sample records again): the operator's endpoint
            if own_choice.count():
                tab.get_by_text("This dashboard's endpoint", exact=True).click()
                wait_idle(tab)
            _start_run(tab)
            screenshot(tab, f"key_routing_{case}_operator")
            assert operator.requests > 0 and operator.authorization == {f"Bearer {OPERATOR_KEY}"}, name
        if not typed_offered and not operator_offered:
            tab.wait_for_selector("text=No judge endpoint", timeout=30_000)
            screenshot(tab, f"key_routing_{case}_none")
        # Whatever happened, the visitor's server never saw the operator's key.
        assert all(OPERATOR_KEY not in a for a in visitor.authorization)
        assert OPERATOR_KEY not in tab.content()
        context.close()
