"""The workspace store on SQLite and PostgreSQL: round trips, content addressing, concurrency,
crashes, ids, caps and the messages for every way a link can fail.

Every backend-dependent test runs on both backends. The PostgreSQL cases use the server named by
EVALSUITE_TEST_PG_URL (``scripts/ci_postgres.sh`` starts one and prints it), each test in a schema
of its own that is dropped afterwards; without that variable they skip, except under CI=true,
where they fail. Consistency is checked with SQL of the tests' own on the raw tables (and
``sha256`` of every stored byte), never only with the store's ``verify``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import queue
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from conftest import CRANFIELD, ROOT, SAMPLE
from evalsuite.errors import EvalSuiteError
from evalsuite.storage import (
    DatasetRef,
    StoreError,
    WORKSPACE_ID_PATTERN,
    check_workspace_id,
    new_workspace_id,
    open_store,
    open_store_from_config,
)

PG_URL = os.environ.get("EVALSUITE_TEST_PG_URL", "").strip()
IN_CI = os.environ.get("CI", "").lower() == "true"
BASE64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
DAY = 86400.0

QRELS = CRANFIELD / "qrels.trec"
RUN_BM25 = CRANFIELD / "run_bm25.trec"
RUN_BM25L = CRANFIELD / "run_bm25l.trec"
RECORDS = SAMPLE / "rag" / "ragtruth_qa.jsonl"


def _require_pg() -> str:
    if PG_URL:
        return PG_URL
    if IN_CI:
        pytest.fail("CI=true but EVALSUITE_TEST_PG_URL is not set: .ci/run must start PostgreSQL with "
                    "scripts/ci_postgres.sh and export the URL it prints")
    pytest.skip("PostgreSQL store tests need EVALSUITE_TEST_PG_URL: run "
                "`export EVALSUITE_TEST_PG_URL=$(bash scripts/ci_postgres.sh)`")


class Clock:
    """A clock the test moves by hand (seconds since the epoch)."""

    def __init__(self, now: float = 1_750_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Raw:
    """The store's tables read with plain SQL, outside the Store class."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.spec["url"].startswith("sqlite:"):
            conn = sqlite3.connect(self.spec["url"][len("sqlite:///"):])
            try:
                return conn.execute(sql, params).fetchall()
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(self.spec["url"], autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{self.spec["schema"]}"')
            return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
                    for row in conn.execute(sql.replace("?", "%s"), params).fetchall()]

    def execute(self, sql: str, params: tuple = (), timeout: float = 5.0) -> None:
        if self.spec["url"].startswith("sqlite:"):
            conn = sqlite3.connect(self.spec["url"][len("sqlite:///"):], timeout=timeout)
            with conn:
                conn.execute(sql, params)
            conn.close()
            return
        import psycopg

        with psycopg.connect(self.spec["url"], autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{self.spec["schema"]}"')
            conn.execute(sql.replace("?", "%s"), params)

    def count(self, table: str) -> int:
        return self.rows(f"SELECT COUNT(*) FROM {table}")[0][0]

    def assert_consistent(self) -> None:
        """No reference to a missing dataset, no dataset without all of its bytes, no half a save."""
        assert self.rows("SELECT r.workspace_id, r.digest FROM evalsuite_workspace_datasets r LEFT JOIN "
                         "evalsuite_datasets d ON d.digest = r.digest WHERE d.digest IS NULL") == []
        assert self.rows("SELECT d.digest FROM evalsuite_datasets d LEFT JOIN evalsuite_dataset_blobs b "
                         "ON b.digest = d.digest WHERE b.digest IS NULL") == []
        assert self.rows("SELECT b.digest FROM evalsuite_dataset_blobs b LEFT JOIN evalsuite_datasets d "
                         "ON d.digest = b.digest WHERE d.digest IS NULL") == []
        assert self.rows("SELECT w.workspace_id FROM evalsuite_workspaces w WHERE w.deleted_at IS NULL AND "
                         "NOT EXISTS (SELECT 1 FROM evalsuite_workspace_datasets r WHERE r.workspace_id = "
                         "w.workspace_id)") == []
        for digest, size, data in self.rows("SELECT d.digest, d.size_bytes, b.data FROM evalsuite_datasets d "
                                            "JOIN evalsuite_dataset_blobs b ON b.digest = d.digest"):
            assert len(data) == size and hashlib.sha256(data).hexdigest() == digest
        if self.spec["url"].startswith("sqlite:"):
            assert self.rows("PRAGMA integrity_check") == [("ok",)]


@pytest.fixture(params=["sqlite", "postgresql"])
def spec(request, tmp_path):
    """open_store arguments for a fresh, empty store of each backend."""
    if request.param == "sqlite":
        yield {"url": f"sqlite:///{tmp_path / 'store' / 'workspaces.db'}"}
        return
    url = _require_pg()
    schema = f"evalsuite_test_{uuid.uuid4().hex[:16]}"
    yield {"url": url, "schema": schema}
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(spec, clock):
    with open_store(**spec, clock=clock) as opened:
        yield opened


@pytest.fixture
def raw(spec):
    return Raw(spec)


def _error(fn, *args, **kwargs) -> StoreError:
    with pytest.raises(StoreError) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, EvalSuiteError) and isinstance(info.value, ValueError)
    return info.value


def _save_one(store, data: bytes = b"q1 0 d1 1\n", **kwargs):
    digest = store.put_dataset(data, kind="qrels", filename="qrels.trec")
    return store.save_workspace("one", [DatasetRef(digest, "qrels", "qrels.trec")], **kwargs)


# ----------------------------------------------------------------------------------------------
# Round trips.


def test_round_trip_of_every_dataset_kind_on_a_fresh_store_object(spec, raw):
    files = {"qrels": QRELS.read_bytes(), "bm25": RUN_BM25.read_bytes(), "bm25l": RUN_BM25L.read_bytes(),
             "records": RECORDS.read_bytes(),
             # Binary-safe: every byte value, and a gzip stream as uploads may be compressed.
             "gz": gzip.compress(RUN_BM25.read_bytes()[:50_000], mtime=0) + bytes(range(256))}
    with open_store(**spec) as first:
        digests = {
            "qrels": first.put_dataset(files["qrels"], kind="qrels", filename="qrels.trec"),
            "bm25": first.put_dataset(files["bm25"], kind="run", filename="run_bm25.trec"),
            "bm25l": first.put_dataset(files["bm25l"], kind="run", filename="run_bm25l.trec"),
            "records": first.put_dataset(files["records"], kind="records", filename="ragtruth_qa.jsonl"),
            "gz": first.put_dataset(files["gz"], kind="run", filename="run.trec.gz"),
        }
        refs = [
            DatasetRef(digests["qrels"], "qrels", "qrels.trec", format="trec"),
            DatasetRef(digests["bm25"], "run", "run_bm25.trec", system="BM25", format="trec"),
            DatasetRef(digests["bm25l"], "run", "run_bm25l.trec", system="BM25L"),
            DatasetRef(digests["records"], "records", "ragtruth_qa.jsonl", format="jsonl"),
            DatasetRef(digests["gz"], "run", "run.trec.gz", system="O'Brien; DROP TABLE x --"),
        ]
        saved = first.save_workspace("Cranfield  BM25 vs BM25L ", refs, meta={"note": "ü", "k": [1, 10]})
    for key, data in files.items():
        assert digests[key] == hashlib.sha256(data).hexdigest()

    # A new Store object is what a restarted server has.
    with open_store(**spec) as second:
        workspace = second.load_workspace(saved.workspace_id)
        assert workspace.datasets == tuple(refs)
        assert workspace.name == "Cranfield  BM25 vs BM25L "  # kept exactly as given
        assert workspace.meta == {"note": "ü", "k": [1, 10]}
        assert workspace.total_bytes == sum(len(b) for b in files.values())
        assert workspace.evalsuite_version and workspace.expires_at is None
        for key, data in files.items():
            assert second.get_dataset(digests[key]) == data
        assert second.verify() == []
    raw.assert_consistent()
    assert raw.count("evalsuite_datasets") == len(files)


def test_same_bytes_are_stored_once_and_kept_while_referenced(store, raw, clock):
    data = QRELS.read_bytes()
    first = store.put_dataset(data, kind="qrels", filename="qrels.trec")
    again = store.put_dataset(bytearray(data), kind="qrels", filename="renamed.qrels")
    assert first == again == hashlib.sha256(data).hexdigest()
    assert raw.count("evalsuite_datasets") == 1 and raw.count("evalsuite_dataset_blobs") == 1
    assert store.usage().n_datasets == 1 and store.usage().dataset_bytes == len(data)

    ref = DatasetRef(first, "qrels", "qrels.trec")
    a = store.save_workspace("a", [ref, ref])  # the same dataset twice counts once
    b = store.save_workspace("b", [ref])
    assert store.load_workspace(a.workspace_id).total_bytes == len(data)

    clock.advance(DAY)  # well past the grace period for unreferenced datasets
    store.delete_workspace(a.workspace_id, a.owner_token)
    assert store.get_dataset(first) == data  # b still refers to it
    store.delete_workspace(b.workspace_id, b.owner_token)
    assert raw.count("evalsuite_datasets") == 0 and raw.count("evalsuite_dataset_blobs") == 0
    assert _error(store.get_dataset, first).code == "unknown_dataset"
    raw.assert_consistent()


def test_unreferenced_dataset_is_kept_through_the_grace_period(store, raw, clock):
    digest = store.put_dataset(b"q1 Q0 d1 1 1.0 t\n", kind="run", filename="run.trec")
    clock.advance(store.orphan_grace_seconds - 1)
    assert store.purge_expired().removed_datasets == 0
    # A put refreshes the grace period: a session about to save must not find its dataset gone.
    store.put_dataset(b"q1 Q0 d1 1 1.0 t\n", kind="run", filename="run.trec")
    clock.advance(store.orphan_grace_seconds - 1)
    assert store.purge_expired().removed_datasets == 0
    store.save_workspace("kept", [DatasetRef(digest, "run", "run.trec")])
    clock.advance(DAY)
    assert store.purge_expired().removed_datasets == 0  # referenced
    assert raw.count("evalsuite_datasets") == 1


def test_an_orphan_left_by_an_unfinished_save_is_purged(store, raw, clock):
    store.put_dataset(b"orphan", kind="records", filename="r.jsonl")
    clock.advance(store.orphan_grace_seconds + 1)
    assert store.purge_expired().removed_datasets == 1
    assert raw.count("evalsuite_datasets") == 0 and raw.count("evalsuite_dataset_blobs") == 0


# ----------------------------------------------------------------------------------------------
# Ids.


def test_workspace_ids_are_unguessable():
    ids = [new_workspace_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    for value in ids:
        assert len(value) == 36 and set(value) <= BASE64URL and check_workspace_id(value) == value
    # 192 random bits: each bit of the random part is set in about half of the ids (binomial
    # n=1000, p=1/2: sd 15.8, so 400..600 fails by chance with probability ~1e-9 per bit). A
    # counter, a clock or a short seed leaves many bits constant.
    import base64

    bodies = [base64.urlsafe_b64decode(v)[:24] for v in ids]
    ones = [sum((body[i // 8] >> (i % 8)) & 1 for body in bodies) for i in range(192)]
    assert all(400 <= n <= 600 for n in ones), ones


def test_saved_ids_and_owner_tokens_are_fresh_random_values(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        saved = [_save_one(store) for _ in range(50)]
    assert len({s.workspace_id for s in saved}) == 50 and len({s.owner_token for s in saved}) == 50
    for s in saved:
        assert WORKSPACE_ID_PATTERN.fullmatch(s.workspace_id)
        assert len(s.owner_token) >= 43 and set(s.owner_token) <= BASE64URL  # 256 bits
        assert s.owner_token not in s.workspace_id


@pytest.mark.parametrize("make", [
    lambda v: v[:-1], lambda v: v + "A", lambda v: v + "\n", lambda v: " " + v, lambda v: v[:20],
    lambda v: v[:-1] + "=", lambda v: v[:-1] + "+", lambda v: v[:-1] + "/", lambda v: v[:-1] + "\u0410",
    lambda v: v[:-1] + "\uff21", lambda v: "' OR '1'='1' --" + v[15:], lambda v: "", lambda v: None,
    lambda v: v.encode(), lambda v: 12345,
], ids=["short", "long", "newline", "space", "half", "pad", "plus", "slash", "cyrillic", "fullwidth",
        "sql", "empty", "none", "bytes", "int"])
def test_near_miss_ids_are_rejected_before_any_query(make, tmp_path):
    bad = make(new_workspace_id())
    assert _error(check_workspace_id, bad).code == "malformed_id"
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        def no_query(*args, **kwargs):
            raise AssertionError("a query ran for a malformed id")

        store._pool.connection = no_query
        err = _error(store.load_workspace, bad)
        assert err.code == "malformed_id" and "Copy the whole share link again" in str(err)
        assert _error(store.delete_workspace, bad, "token").code == "malformed_id"


def test_every_single_character_change_is_caught_by_the_check():
    value = new_workspace_id()
    alphabet = sorted(BASE64URL)
    for position in range(len(value)):
        replacement = alphabet[(alphabet.index(value[position]) + 1 + position) % 64]
        tampered = value[:position] + replacement + value[position + 1:]
        err = _error(check_workspace_id, tampered)
        assert err.code == "damaged_id" and "changed or mistyped" in str(err)


# ----------------------------------------------------------------------------------------------
# What a link says when it cannot open.


def test_tampered_unknown_deleted_and_expired_ids_give_clear_messages(store, clock):
    saved = _save_one(store)
    value = saved.workspace_id
    flipped = value[:10] + ("A" if value[10] != "A" else "B") + value[11:]
    assert _error(store.load_workspace, flipped).code == "damaged_id"

    err = _error(store.load_workspace, new_workspace_id())
    assert err.code == "unknown_workspace" and "no workspace with this id" in str(err)

    expiring = _save_one(store, expires_in_days=2)
    clock.advance(2 * DAY - 1)
    assert store.load_workspace(expiring.workspace_id).expires_at is not None
    clock.advance(1)
    err = _error(store.load_workspace, expiring.workspace_id)
    assert err.code == "expired" and "expired on 2025-06-17 15:06 UTC" in str(err)

    store.delete_workspace(value, saved.owner_token)
    err = _error(store.load_workspace, value)
    assert err.code == "deleted" and "was deleted by its owner on 2025-06-17 15:06 UTC" in str(err)
    assert err.field == "workspace_id" and err.value == value


def test_expiry_purge_keeps_a_tombstone_and_frees_the_data(store, raw, clock):
    expiring = _save_one(store, b"short-lived\n", expires_in_days=1)
    lasting = _save_one(store, b"long-lived\n")
    assert store.load_workspace(lasting.workspace_id).expires_at is None
    clock.advance(DAY + 1)
    result = store.purge_expired()
    assert (result.expired_workspaces, result.removed_datasets) == (1, 1)
    assert _error(store.load_workspace, expiring.workspace_id).code == "expired"
    assert store.load_workspace(lasting.workspace_id).datasets[0].digest == hashlib.sha256(b"long-lived\n").hexdigest()
    name, meta, reason = raw.rows("SELECT name, meta_json, deleted_reason FROM evalsuite_workspaces "
                                  "WHERE workspace_id = ?", (expiring.workspace_id,))[0]
    assert (name, meta, reason) == ("", "{}", "expired")
    assert store.purge_expired().expired_workspaces == 0
    raw.assert_consistent()


def test_default_expiry_and_invalid_expiry_values(spec, clock):
    with open_store(**spec, clock=clock, default_expiry_days=7) as store:
        saved = _save_one(store)
        assert (saved.workspace.expires_at - saved.workspace.created_at).total_seconds() == 7 * DAY
        shorter = _save_one(store, expires_in_days=0.5)
        assert (shorter.workspace.expires_at - shorter.workspace.created_at).total_seconds() == DAY / 2
        for bad in (0, -1, float("nan"), float("inf"), True, "3", 3651):
            assert _error(_save_one, store, expires_in_days=bad).code == "invalid_argument"
    assert _error(open_store, **spec, default_expiry_days=0).code == "invalid_argument"


def test_list_workspaces_reports_what_became_of_each_id(store, clock):
    active = _save_one(store)
    deleted = _save_one(store)
    store.delete_workspace(deleted.workspace_id, deleted.owner_token)
    expired = _save_one(store, expires_in_days=1)
    clock.advance(DAY)
    unknown = new_workspace_id()
    summaries = store.list_workspaces([active.workspace_id, deleted.workspace_id, "nope",
                                       expired.workspace_id, unknown, active.workspace_id])
    assert [s.status for s in summaries] == ["active", "deleted", "invalid", "expired", "unknown", "active"]
    assert summaries[0].name == "one" and summaries[0].n_datasets == 1 and summaries[0].total_bytes == 10
    assert summaries[1].name is None and summaries[1].deleted_at is not None
    assert store.list_workspaces([]) == []


# ----------------------------------------------------------------------------------------------
# Owner token.


def test_only_the_owner_token_deletes_and_it_is_stored_only_as_a_hash(store, raw):
    saved = _save_one(store)
    for wrong in ("x" * 43, saved.owner_token[:-1], saved.owner_token + "A", ""):
        err = _error(store.delete_workspace, saved.workspace_id, wrong)
        assert err.code == "wrong_token" and saved.owner_token not in str(err)
    assert _error(store.delete_workspace, saved.workspace_id, None).code == "wrong_token"
    assert store.load_workspace(saved.workspace_id).name == "one"
    assert _error(store.delete_workspace, new_workspace_id(), saved.owner_token).code == "unknown_workspace"

    row = raw.rows("SELECT * FROM evalsuite_workspaces WHERE workspace_id = ?", (saved.workspace_id,))[0]
    assert saved.owner_token not in [str(v) for v in row]
    assert hashlib.sha256(saved.owner_token.encode()).hexdigest() in row

    store.delete_workspace(saved.workspace_id, saved.owner_token)
    store.delete_workspace(saved.workspace_id, saved.owner_token)  # again: nothing to do
    assert _error(store.delete_workspace, saved.workspace_id, "x" * 43).code == "wrong_token"
    assert _error(store.load_workspace, saved.workspace_id).code == "deleted"
    raw.assert_consistent()


# ----------------------------------------------------------------------------------------------
# Size caps and bad arguments.


def test_size_caps_hold_and_write_nothing(spec, raw):
    with open_store(**spec, max_dataset_bytes=1000, max_workspace_bytes=2500) as store:
        err = _error(store.put_dataset, b"x" * 1001, kind="run", filename="big.trec")
        assert err.code == "too_large" and err.source == "big.trec"
        assert "1001 bytes" in str(err) and "1000 bytes per dataset" in str(err)
        assert raw.count("evalsuite_datasets") == 0

        a = store.put_dataset(b"a" * 1000, kind="run", filename="a.trec")  # exactly the cap
        b = store.put_dataset(b"b" * 1000, kind="run", filename="b.trec")
        c = store.put_dataset(b"c" * 1000, kind="run", filename="c.trec")
        refs = [DatasetRef(d, "run", f"{d[:4]}.trec") for d in (a, b, c)]
        err = _error(store.save_workspace, "too big", refs)
        assert err.code == "too_large" and "2.9 KiB (3,000 bytes)" in str(err) and "2.4 KiB (2,500 bytes)" in str(err)
        assert raw.count("evalsuite_workspaces") == 0 and raw.count("evalsuite_workspace_datasets") == 0
        # Repeated references to one dataset count once.
        assert store.save_workspace("fits", [refs[0], refs[1], refs[0]]).workspace.total_bytes == 2000


def test_mib_caps_from_environment_and_secrets(tmp_path):
    secrets = {"evalsuite": {"store_url": f"sqlite:///{tmp_path / 'from_secrets.db'}",
                             "max_dataset_mb": 1, "max_workspace_mb": "3", "default_expiry_days": 30}}
    with open_store_from_config(secrets, environ={}) as store:
        assert store.location == str(tmp_path / "from_secrets.db")
        assert (store.max_dataset_bytes, store.max_workspace_bytes) == (1024 * 1024, 3 * 1024 * 1024)
        assert store.default_expiry_days == 30
        assert _error(store.put_dataset, b"x" * (1024 * 1024 + 1), kind="run", filename="r").code == "too_large"
    # The environment wins over secrets.
    env = {"EVALSUITE_DATA_DIR": str(tmp_path / "env dir" / "nested"), "EVALSUITE_MAX_DATASET_MB": "0.5"}
    secrets["evalsuite"].pop("store_url")
    with open_store_from_config(secrets, environ=env) as store:
        assert store.location == str(tmp_path / "env dir" / "nested" / "workspaces.sqlite3")
        assert store.max_dataset_bytes == 512 * 1024 and store.max_workspace_bytes == 3 * 1024 * 1024
    assert (tmp_path / "env dir" / "nested" / "workspaces.sqlite3").is_file()
    err = _error(open_store_from_config, None, environ={**env, "EVALSUITE_MAX_WORKSPACE_MB": "lots"})
    assert err.source == "environment variable EVALSUITE_MAX_WORKSPACE_MB" and err.value == "lots"

    class NoSecretsFile:
        def get(self, key, default=None):
            raise FileNotFoundError("no secrets.toml")  # what st.secrets does without one

    with open_store_from_config(NoSecretsFile(), environ={"EVALSUITE_DATA_DIR": str(tmp_path / "d")}) as store:
        assert store.backend == "sqlite" and store.max_dataset_bytes == 50 * 1024 * 1024


def test_default_data_dir_comes_from_the_environment_and_is_created(tmp_path, monkeypatch):
    target = tmp_path / "a" / "b"
    monkeypatch.setenv("EVALSUITE_DATA_DIR", str(target))
    with open_store() as store:
        _save_one(store)
    assert (target / "workspaces.sqlite3").is_file()


def test_the_hosting_guide_lists_the_settings_the_store_reads():
    """One list of settings (evalsuite/storage/_config.py): the dashboard imports its environment
    variables, open_store_from_config's docstring is made from it, and docs/hosting.md's table for
    operators names the same variables and secrets, in the same order."""
    from evalsuite.storage._config import ENV_VARIABLES, SETTINGS

    guide = (ROOT / "docs" / "hosting.md").read_text(encoding="utf-8")
    section = guide.split("\n## Settings\n", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(EVALSUITE_[A-Z_]+)` \| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert rows == [(setting.env, setting.key) for setting in SETTINGS.values()]
    assert ENV_VARIABLES == tuple(env for env, _ in rows)
    for setting in SETTINGS.values():
        assert f"``{setting.env}`` / ``{setting.key}``: {setting.meaning}" in open_store_from_config.__doc__


def test_bad_arguments_are_named(store):
    digest = store.put_dataset(b"x", kind="run", filename="r.trec")
    for kwargs, field in [({"digest": "abc"}, "digest"), ({"kind": "judgements"}, "kind"),
                          ({"filename": "a\nb"}, "filename"), ({"filename": "a\x00b"}, "filename"),
                          ({"filename": " "}, "filename"), ({"system": "x" * 2001}, "system"),
                          ({"format": "TREC!"}, "format")]:
        args = {"digest": digest, "kind": "run", "filename": "r.trec", **kwargs}
        err = _error(DatasetRef, **args)
        assert (err.code, err.field) == ("invalid_argument", field)
    ref = DatasetRef(digest.upper(), "run", "r.trec", format="")
    assert ref.digest == digest and ref.format is None
    assert _error(store.put_dataset, "text", kind="run", filename="r").code == "invalid_argument"
    assert _error(store.put_dataset, b"x", kind="docs", filename="r").field == "kind"
    assert _error(store.save_workspace, "empty", []).code == "invalid_argument"
    assert _error(store.save_workspace, "", [ref]).field == "name"
    assert _error(store.save_workspace, "x", [ref], meta={"s": {1, 2}}).field == "meta"
    assert _error(store.save_workspace, "x", [ref], meta={"v": float("nan")}).field == "meta"
    # issue 29: meta nested 5,000 deep raised RecursionError; every size is bounded with a StoreError
    deep: object = "x"
    for _ in range(5_000):
        deep = {"k": deep}
    assert _error(store.save_workspace, "x", [ref], meta=deep).field == "meta"
    assert _error(store.save_workspace, "x", [ref], meta={"k": [0] * 20_000}).field == "meta"
    assert _error(store.save_workspace, "x", [ref], meta={"k": "y" * 70_000}).field == "meta"
    assert _error(store.list_workspaces, ["a" * 36] * 1_001).code == "invalid_argument"
    assert _error(store.save_workspace, "x", [(digest, "run", "r.trec")]).field == "datasets"
    never_put = DatasetRef(hashlib.sha256(b"never").hexdigest(), "qrels", "q.trec")
    err = _error(store.save_workspace, "x", [ref, never_put])
    assert err.code == "missing_dataset" and err.source == "q.trec" and "put it with put_dataset" in str(err)
    assert _error(store.get_dataset, "zz").code == "invalid_argument"


def test_bad_store_urls_never_show_a_password(tmp_path):
    for url in ("mysql://user:hunter2@db/x", "sqlite://relative.db", "sqlite:///:memory:", "sqlite:///",
                "/plain/path.db", 42):
        err = _error(open_store, url)
        assert err.code == "invalid_argument" and "hunter2" not in str(err)
    assert _error(open_store, f"sqlite:///{tmp_path}/x.db", schema="s").code == "invalid_argument"
    assert _error(open_store, "postgresql://u:p@127.0.0.1/db", schema="Bad-Name").field == "schema"
    assert _error(open_store, f"sqlite:///{tmp_path}/x.db", max_dataset_bytes=0).code == "invalid_argument"


def test_unreachable_postgresql_is_reported_without_its_password():
    pytest.importorskip("psycopg")
    err = _error(open_store, "postgresql://someone:hunter2@127.0.0.1:1/nothing?connect_timeout=2")
    assert err.code == "unavailable" and "hunter2" not in str(err) and "hunter2" not in err.detail
    # Where the store is goes to the operator (the log, err.detail), never into the message.
    assert "someone:***@127.0.0.1:1" in err.detail and "127.0.0.1" not in str(err)
    err = _error(open_store, "postgresql://127.0.0.1:1/nothing?user=someone&password=hunter2")
    assert err.code == "unavailable" and "hunter2" not in str(err) and "hunter2" not in err.detail


def test_a_dataset_removed_while_saving_is_refused_not_left_dangling(store, raw, spec):
    digest = store.put_dataset(b"d", kind="run", filename="r.trec")
    execute, outcome = store._backend.execute, {}

    def delete_from_another_session(conn, sql, params=()):
        result = execute(conn, sql, params)
        if sql.startswith("SELECT digest, size_bytes FROM evalsuite_datasets"):
            try:
                raw.execute("DELETE FROM evalsuite_datasets WHERE digest = ?", (digest,), timeout=0.2)
                outcome["deleted"] = True
            except sqlite3.OperationalError as exc:
                outcome["blocked"] = str(exc)
        return result

    store._backend.execute = delete_from_another_session
    if spec["url"].startswith("sqlite:"):
        # The save holds SQLite's write lock from its first statement: the delete must wait.
        saved = store.save_workspace("x", [DatasetRef(digest, "run", "r.trec")])
        assert outcome == {"blocked": "database is locked"}
        assert store.get_dataset(saved.workspace.datasets[0].digest) == b"d"
    else:
        # PostgreSQL lets the delete commit; the foreign key then refuses the reference.
        err = _error(store.save_workspace, "x", [DatasetRef(digest, "run", "r.trec")])
        assert outcome == {"deleted": True}
        assert err.code == "missing_dataset" and "removed while saving" in str(err)
        assert raw.count("evalsuite_workspaces") == 0
    raw.assert_consistent()


def test_tampered_stored_bytes_are_detected(store, raw):
    data = RUN_BM25.read_bytes()[:10_000]
    digest = store.put_dataset(data, kind="run", filename="run.trec")
    raw.execute("UPDATE evalsuite_dataset_blobs SET data = ? WHERE digest = ?", (data[:-1] + b"X", digest))
    err = _error(store.get_dataset, digest)
    assert err.code == "corrupt" and "do not match its SHA-256" in str(err)
    assert any(digest in problem for problem in store.verify())


def _sqlite_path(spec: dict) -> Path:
    return Path(spec["url"][len("sqlite:///"):])


def _fill(store) -> tuple[str, str, str]:
    """A dataset big enough for overflow pages and a workspace using it: digest, id, token."""
    digest = store.put_dataset(RUN_BM25.read_bytes()[:30_000], kind="run", filename="run.trec")
    saved = store.save_workspace("w", [DatasetRef(digest, "run", "run.trec", system="BM25")])
    return digest, saved.workspace_id, saved.owner_token


def _every_operation(store, digest: str, workspace_id: str, token: str) -> dict:
    return {
        "put_dataset": lambda: store.put_dataset(b"q9 0 d9 1\n", kind="qrels", filename="new.trec"),
        "get_dataset": lambda: store.get_dataset(digest),
        "save_workspace": lambda: store.save_workspace("again", [DatasetRef(digest, "run", "run.trec")]),
        "load_workspace": lambda: store.load_workspace(workspace_id),
        "list_workspaces": lambda: store.list_workspaces([workspace_id]),
        "delete_workspace": lambda: store.delete_workspace(workspace_id, token),
        "purge_expired": store.purge_expired,
        "usage": store.usage,
        "verify": store.verify,
    }


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    rng = random.Random(how)
    page_size = int.from_bytes(data[16:18], "big")
    if how == "random bytes over the header":
        data[:100] = rng.randbytes(100)
    elif how == "cut short after the first page":
        del data[page_size + 100:]
    elif how == "overwritten with text":
        data = bytearray(b"this is not a database\n" * 100)
    elif how == "first page zeroed after the header":
        data[100:page_size] = bytes(page_size - 100)
    else:
        raise AssertionError(how)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["random bytes over the header", "cut short after the first page",
                                 "overwritten with text", "first page zeroed after the header"])
def test_a_damaged_sqlite_file_is_a_store_error_from_every_operation(tmp_path, how):
    spec = {"url": f"sqlite:///{tmp_path / 'store' / 'workspaces.db'}"}
    path = _sqlite_path(spec)
    with open_store(**spec) as healthy:
        digest, workspace_id, token = _fill(healthy)
    intact = path.read_bytes()
    assert not Path(f"{path}-wal").exists()  # all of it is in the file we damage
    with open_store(**spec) as store:  # opened while the file was sound
        _damage(path, how)
        for name, operation in _every_operation(store, digest, workspace_id, token).items():
            err = _error(operation)
            assert err.code == "corrupt", (name, str(err))
            assert "damaged" in str(err) and str(path) not in str(err), (name, str(err))
            assert str(path) in err.detail, (name, err.detail)
            assert isinstance(err.__cause__, sqlite3.DatabaseError)
        err = _error(open_store, **spec)
        assert err.code == "corrupt" and str(path) in err.detail and "damaged" in str(err)
        assert str(tmp_path) not in str(err)
        # The failures left no broken connection behind: with the file restored, the same Store works.
        path.write_bytes(intact)
        assert hashlib.sha256(store.get_dataset(digest)).hexdigest() == digest
        assert store.load_workspace(workspace_id).datasets[0].system == "BM25"
        assert store.verify() == []
        store.delete_workspace(workspace_id, token)
        assert store.list_workspaces([workspace_id])[0].status == "deleted"


def test_a_garbage_page_under_the_dataset_bytes_is_a_store_error(tmp_path):
    spec = {"url": f"sqlite:///{tmp_path / 'workspaces.db'}"}
    path = _sqlite_path(spec)
    with open_store(**spec) as healthy:
        digest, workspace_id, _ = _fill(healthy)
    (root,), = Raw(spec).rows("SELECT rootpage FROM sqlite_master WHERE name = 'evalsuite_dataset_blobs'")
    assert not Path(f"{path}-wal").exists()  # all of it is in the file we damage
    with open_store(**spec) as store:
        data = bytearray(path.read_bytes())
        page_size = int.from_bytes(data[16:18], "big")
        # 0xff is no b-tree page type, so SQLite cannot mistake the page for a valid one.
        data[(root - 1) * page_size:root * page_size] = b"\xff" + random.Random(7).randbytes(page_size - 1)
        path.write_bytes(bytes(data))
        for operation in (lambda: store.get_dataset(digest), store.verify):
            err = _error(operation)
            assert err.code == "corrupt" and str(path) in err.detail and str(path) not in str(err)
        assert store.load_workspace(workspace_id).name == "w"  # what lives elsewhere still reads


def test_a_database_error_other_than_a_lost_connection_is_a_store_error(store, raw, spec):
    digest, workspace_id, _ = _fill(store)
    raw.execute("DROP TABLE evalsuite_dataset_blobs")  # changed outside EvalSuite
    err = _error(store.get_dataset, digest)
    assert err.code == "unavailable" and store.location in err.detail and store.location not in str(err)
    assert "evalsuite_dataset_blobs" in err.detail
    if "@" in spec["url"]:
        from urllib.parse import urlsplit

        password = urlsplit(spec["url"]).password
        # The location hides the password; what it shows (user, database, schema) may contain
        # the same text, as on the CI server, where user and password are both evalsuite_test.
        assert not password or (f":{password}@" not in store.location
                                and password not in err.detail.replace(store.location, ""))
    assert store.load_workspace(workspace_id).name == "w"


def test_a_healthy_store_still_works_through_every_operation(store, raw):
    digest, workspace_id, token = _fill(store)
    results = {name: operation() for name, operation in _every_operation(store, digest, workspace_id, token).items()}
    assert hashlib.sha256(results["get_dataset"]).hexdigest() == digest
    assert results["load_workspace"].workspace_id == workspace_id
    assert results["list_workspaces"][0].status == "active"
    assert results["verify"] == []
    assert store.load_workspace(results["save_workspace"].workspace_id).name == "again"
    assert store.list_workspaces([workspace_id])[0].status == "deleted"
    raw.assert_consistent()


# ----------------------------------------------------------------------------------------------
# Several writers, and writers that die.

CHILD = r'''
import json, os, sys, time
from evalsuite.storage import DatasetRef, open_store

args = json.loads(sys.argv[1])
store = open_store(args["url"], schema=args.get("schema"))
say = lambda *parts: print(*parts, flush=True)

if args["mode"] == "writer":
    shared = b"shared qrels\n" * 20000
    say("ready")
    while not os.path.exists(args["go"]):
        time.sleep(0.001)
    for i in range(args["n"]):
        t0 = time.time()
        own = (f"{args['name']} {i}\n" * 20000).encode()
        refs = [DatasetRef(store.put_dataset(shared, kind="qrels", filename="shared.qrels"), "qrels", "shared.qrels"),
                DatasetRef(store.put_dataset(own, kind="run", filename=f"{i}.trec"), "run", f"{i}.trec", system=args["name"])]
        saved = store.save_workspace(f"{args['name']} {i}", refs)
        say(json.dumps({"id": saved.workspace_id, "t0": t0, "t1": time.time()}))

elif args["mode"] in ("pause_in_save", "pause_in_put"):
    backend = store._backend
    execute, executemany = backend.execute, backend.executemany
    digest = store.put_dataset(b"kept\n" * 1000, kind="qrels", filename="kept.qrels")

    def pause(what):
        say(what)
        time.sleep(60)  # killed here, inside the open transaction

    def spy_execute(conn, sql, params=()):
        result = execute(conn, sql, params)
        if sql.startswith("INSERT INTO evalsuite_workspaces "):
            say("id", params[0])
        if sql.startswith("INSERT INTO evalsuite_dataset_blobs") and args["mode"] == "pause_in_put":
            pause("paused in put " + params[0])
        return result

    def spy_executemany(conn, sql, rows):
        executemany(conn, sql, rows)
        pause("paused in save")

    backend.execute, backend.executemany = spy_execute, spy_executemany
    if args["mode"] == "pause_in_put":
        store.put_dataset(os.urandom(2_000_000), kind="run", filename="killed.trec")
    else:
        store.save_workspace("killed", [DatasetRef(digest, "qrels", "kept.qrels")])

elif args["mode"] == "loop":
    i = 0
    while True:
        data = os.urandom(3_000_000)
        digest = store.put_dataset(data, kind="run", filename=f"{i}.trec")
        saved = store.save_workspace(f"loop {i}", [DatasetRef(digest, "run", f"{i}.trec")])
        say(json.dumps({"id": saved.workspace_id, "digest": digest}))
        i += 1
'''


def _start_child(tmp_path: Path, spec: dict, **args) -> subprocess.Popen:
    script = tmp_path / "store_child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), json.dumps({**spec, **args})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # A thread reads the child's lines as they come: a select on the pipe would miss lines that
    # already sit in the reader's buffer.
    proc.lines = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            proc.lines.put(line.strip())
        proc.lines.put(None)

    proc.pump = threading.Thread(target=pump, daemon=True)
    proc.pump.start()
    return proc


def _line(proc: subprocess.Popen, timeout: float = 30.0) -> str:
    try:
        line = proc.lines.get(timeout=timeout)
    except queue.Empty:
        proc.kill()
        pytest.fail(f"child printed nothing for {timeout} s")
    if line is None:
        proc.wait()
        pytest.fail(f"child ended (exit {proc.returncode}): {proc.stderr.read()[-2000:]}")
    return line


def _rest(proc: subprocess.Popen, timeout: float = 60.0) -> list[str]:
    """The child's remaining lines once it exits; fails if it exits non-zero."""
    proc.wait(timeout=timeout)
    proc.pump.join(timeout=10)
    lines = []
    while (line := proc.lines.get_nowait()) is not None:
        lines.append(line)
    assert proc.returncode == 0, proc.stderr.read()[-2000:]
    proc.stderr.close()
    return lines


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    proc.pump.join(timeout=10)
    proc.stderr.close()


def test_two_processes_saving_at_once_with_shared_datasets(spec, tmp_path, raw):
    go = tmp_path / "go"
    n = 12
    # Neither process finds the store made: they also race to create it.
    children = [_start_child(tmp_path, spec, mode="writer", name=name, n=n, go=str(go)) for name in "AB"]
    for child in children:
        assert _line(child) == "ready"
    go.touch()
    results = {}
    for name, child in zip("AB", children):
        results[name] = [json.loads(line) for line in _rest(child)]
        assert len(results[name]) == n
    # They really wrote at the same time: their write windows overlap.
    a, b = results["A"], results["B"]
    assert a[0]["t0"] < b[-1]["t1"] and b[0]["t0"] < a[-1]["t1"]

    shared = hashlib.sha256(b"shared qrels\n" * 20000).hexdigest()
    with open_store(**spec) as store:
        for name, saved in results.items():
            for i, entry in enumerate(saved):
                workspace = store.load_workspace(entry["id"])
                assert workspace.name == f"{name} {i}"
                assert workspace.datasets[0].digest == shared
                assert store.get_dataset(workspace.datasets[1].digest) == (f"{name} {i}\n" * 20000).encode()
    assert raw.count("evalsuite_workspaces") == 2 * n
    assert raw.count("evalsuite_datasets") == 1 + 2 * n  # the shared one once
    assert Counter(d for (d,) in raw.rows("SELECT digest FROM evalsuite_workspace_datasets"))[shared] == 2 * n
    raw.assert_consistent()


@pytest.mark.parametrize("mode", ["pause_in_save", "pause_in_put"])
def test_writer_killed_inside_its_transaction_leaves_nothing_half_written(spec, tmp_path, raw, mode):
    with open_store(**spec) as store:
        before = _save_one(store, b"before\n")
        child = _start_child(tmp_path, spec, mode=mode)
        line = _line(child)
        if mode == "pause_in_save":
            assert line.startswith("id ")
            killed_id = line.split()[1]
            assert _line(child) == "paused in save"
        else:
            assert line.startswith("paused in put ")
            killed_digest = line.split()[-1]
        _kill(child)

        raw.assert_consistent()
        if mode == "pause_in_save":
            # The workspace row and its references were written but never committed.
            assert _error(store.load_workspace, killed_id).code == "unknown_workspace"
            assert raw.count("evalsuite_workspace_datasets") == 1
        else:
            assert _error(store.get_dataset, killed_digest).code == "unknown_dataset"
            assert raw.rows("SELECT COUNT(*) FROM evalsuite_dataset_blobs WHERE digest = ?", (killed_digest,)) == [(0,)]
        # Later writes work, through this Store and a new one.
        assert store.load_workspace(before.workspace_id).name == "one"
        after = _save_one(store, b"after\n")
        assert store.get_dataset(after.workspace.datasets[0].digest) == b"after\n"
    with open_store(**spec) as reopened:
        assert reopened.verify() == []
        assert reopened.load_workspace(after.workspace_id).name == "one"
    raw.assert_consistent()


def test_writer_killed_at_a_random_moment_leaves_the_store_consistent(spec, tmp_path, raw):
    rng = random.Random(20240611)
    committed = []
    for _ in range(2):
        child = _start_child(tmp_path, spec, mode="loop")
        committed.append(json.loads(_line(child)))
        time.sleep(rng.uniform(0.0, 0.15))  # somewhere inside the next put or save
        _kill(child)
        raw.assert_consistent()
    with open_store(**spec) as store:
        for entry in committed:
            assert store.load_workspace(entry["id"]).datasets[0].digest == entry["digest"]
            assert hashlib.sha256(store.get_dataset(entry["digest"])).hexdigest() == entry["digest"]
        assert store.verify() == []
        _save_one(store, b"later\n")
    raw.assert_consistent()


def test_one_store_shared_by_threads(store, raw):
    errors = []

    def work(n):
        try:
            for i in range(10):
                saved = _save_one(store, f"thread {n} {i % 3}\n".encode())
                assert store.load_workspace(saved.workspace_id).name == "one"
        except Exception as exc:  # surfaced below, with the thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert raw.count("evalsuite_workspaces") == 40 and raw.count("evalsuite_datasets") == 12
    raw.assert_consistent()


def test_sqlite_store_created_while_another_process_holds_a_lock_waits_for_it(tmp_path):
    # SQLite refuses a journal-mode change at once ("database is locked", no busy handler) while
    # another connection holds a lock: two servers creating one store at the same moment hit it.
    from evalsuite.storage._sqlite import _SQLiteBackend

    path = tmp_path / "store" / "workspaces.db"
    path.parent.mkdir()
    other = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE elsewhere (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO elsewhere VALUES (1)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        started = time.monotonic()
        _SQLiteBackend(path, busy_timeout_s=10).initialise()
        assert time.monotonic() - started >= 0.25  # it waited for the lock, then went on
    finally:
        release.join()
        other.close()
    conn = sqlite3.connect(str(path))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
