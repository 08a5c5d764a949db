"""``evalsuite admin usage``: the audit log per user and run by run, from the store of the settings
(environment, or the [evalsuite] section of a secrets file), CSV safe for spreadsheets, no key."""

from __future__ import annotations

import csv
import io
import json

from evalsuite.cli import main
from evalsuite.hosting import Limits
from evalsuite.storage import open_store


def _log(data_dir):
    with open_store(data_dir=data_dir) as store:
        for user, label, cost, outcome in (("oidc:a", "alice@example.com", 0.25, "done"),
                                           ("oidc:a", "alice@example.com", 0.5, "budget"),
                                           ("oidc:b", "=HYPERLINK(\"http://x\")", 0.1, "cancelled")):
            run, _ = store.begin_judge_run(user_id=user, user_label=label, model="m", endpoint="llm.example:443",
                                           origin="operator", records=3, limits=Limits(judge_runs_at_once=None))
            store.report_judge_run(run, {"calls": 10, "cache_hits": 1, "prompt_tokens": 100, "completion_tokens": 20,
                                         "cost": cost}, outcome=outcome)


def test_usage_per_user_and_per_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EVALSUITE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVALSUITE_STORE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    _log(tmp_path)
    assert main(["admin", "usage", "--format", "json"]) == 0
    rows = {r["user"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["oidc:a"]["runs"] == 2 and rows["oidc:a"]["cost"] == 0.75
    assert rows["oidc:a"]["outcomes"] == "budget 1, done 1" and rows["oidc:a"]["requests"] == 20
    assert main(["admin", "usage", "--runs", "--format", "csv", "--user", "oidc:b"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(table) == 1 and table[0]["outcome"] == "cancelled"
    assert table[0]["label"].startswith("'=")  # formula-safe
    assert main(["admin", "usage"]) == 0
    out = capsys.readouterr().out
    assert "alice@example.com" in out and "budget 1, done 1" in out


def test_the_store_of_a_secrets_file_and_bad_arguments(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("EVALSUITE_STORE_URL", raising=False)
    monkeypatch.delenv("EVALSUITE_DATA_DIR", raising=False)
    db = tmp_path / "store.db"
    (tmp_path / "secrets.toml").write_text(f'[evalsuite]\nstore_url = "sqlite:///{db}"\n')
    with open_store(f"sqlite:///{db}") as store:
        store.begin_judge_run(user_id="oidc:c", user_label="c", model="m", endpoint="h", origin="typed", records=1)
    assert main(["admin", "usage", "--secrets", str(tmp_path / "secrets.toml"), "--format", "json"]) == 0
    assert [r["user"] for r in json.loads(capsys.readouterr().out)] == ["oidc:c"]
    assert main(["admin", "usage", "--since", "yesterday", "--secrets", str(tmp_path / "secrets.toml")]) == 2
    assert "--since" in capsys.readouterr().err
    assert main(["admin", "usage", "--secrets", str(tmp_path / "missing.toml")]) == 2
