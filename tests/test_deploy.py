"""The deployment recipe (deploy/) and docs/hosting.md say what the code does: the container's secure
defaults, the example secrets read as a hosted, signed-in dashboard whose key goes to its endpoint
only, and every hosting, judge and limit setting is in the guide's tables."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from evalsuite.hosting import SETTINGS as HOSTING_SETTINGS, hosting_settings
from evalsuite.judges.endpoints import SETTINGS as JUDGE_SETTINGS, choose_endpoint, judge_access

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
GUIDE = (REPO / "docs" / "hosting.md").read_text(encoding="utf-8")


def test_the_container_recipe_has_secure_defaults():
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert "EVALSUITE_HOSTED=true" in dockerfile and "USER evalsuite" in dockerfile
    assert re.search(r"HEALTHCHECK .*\n?.*_stcore/health", dockerfile)
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    db, app = compose["services"]["db"], compose["services"]["app"]
    assert "ports" not in db and "healthcheck" in db  # the database is reachable from the app only
    assert app["depends_on"]["db"]["condition"] == "service_healthy"
    assert all(str(p).startswith("127.0.0.1:") for p in app["ports"])  # behind a TLS proxy on the host
    assert app["environment"]["EVALSUITE_HOSTED"] == "true" and app["read_only"] is True
    assert {s["target"] for s in app["secrets"]} == {"/app/.streamlit/secrets.toml"}
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8")
    assert "deploy/secrets.toml" in ignored and "deploy/db_password.txt" in ignored


def test_the_example_secrets_make_a_hosted_signed_in_dashboard():
    secrets = tomllib.loads((DEPLOY / "secrets.example.toml").read_text(encoding="utf-8"))
    section = secrets["evalsuite"]
    settings = hosting_settings(section, {})
    assert settings.sign_in and settings.limits.judge_daily_budget and settings.limits.upload_bytes_per_day
    assert {"redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url"} <= set(secrets["auth"])
    access = judge_access(section, {"OPENAI_API_KEY": "sk-elsewhere"}, local=True)  # even behind a local proxy
    assert not access.typed_endpoints and not access.allow_private and not access.unused_key
    chosen = choose_endpoint(access)
    assert (chosen.origin, chosen.base_url, chosen.api_key) == ("operator", section["judge_base_url"],
                                                                 section["judge_api_key"])


def test_the_guide_lists_every_hosting_and_judge_setting():
    for variable, secret, *_ in HOSTING_SETTINGS.values():
        assert f"`{variable}`" in GUIDE and f"`{secret}`" in GUIDE, secret
    for variable, secret in JUDGE_SETTINGS.values():
        assert f"`{variable}`" in GUIDE and f"`{secret}`" in GUIDE, secret
    for name in ("OPENAI_API_KEY", "evalsuite admin usage", "Threat model", "Which key goes where"):
        assert name in GUIDE, name
