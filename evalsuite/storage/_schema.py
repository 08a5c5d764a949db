"""The tables of the workspace store, the same on both backends, and the SQL the backends share.

A backend (:class:`~evalsuite.storage._sqlite._SQLiteBackend`,
:class:`~evalsuite.storage._postgres._PostgresBackend`) knows how to connect, run a statement,
open a transaction and fetch bytes. The Store calls only these, so both backends run the same SQL
text (with ``?`` placeholders).
"""

from __future__ import annotations

from typing import Any

from ._model import StoreError, server_error

SCHEMA_VERSION = 3  # 2: workspace owners, the judge-run audit log, daily usage; 3: labelling tasks and labels

# {int} {real} {blob} are the backend's types.
_TABLES = (
    """CREATE TABLE IF NOT EXISTS evalsuite_store_meta (
        key TEXT NOT NULL PRIMARY KEY,
        value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS evalsuite_datasets (
        digest TEXT NOT NULL PRIMARY KEY CHECK (length(digest) = 64),
        size_bytes {int} NOT NULL CHECK (size_bytes >= 0),
        created_at {real} NOT NULL,
        last_put_at {real} NOT NULL)""",
    # The bytes live apart from the row put_dataset touches, so touching never rewrites them.
    """CREATE TABLE IF NOT EXISTS evalsuite_dataset_blobs (
        digest TEXT NOT NULL PRIMARY KEY REFERENCES evalsuite_datasets (digest) ON DELETE CASCADE,
        data {blob} NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS evalsuite_workspaces (
        workspace_id TEXT NOT NULL PRIMARY KEY,
        owner_token_sha256 TEXT NOT NULL,
        owner_id TEXT,
        name TEXT NOT NULL,
        meta_json TEXT NOT NULL,
        evalsuite_version TEXT NOT NULL,
        total_bytes {int} NOT NULL,
        created_at {real} NOT NULL,
        expires_at {real},
        deleted_at {real},
        deleted_reason TEXT CHECK (deleted_reason IN ('owner', 'expired')))""",
    """CREATE TABLE IF NOT EXISTS evalsuite_workspace_datasets (
        workspace_id TEXT NOT NULL REFERENCES evalsuite_workspaces (workspace_id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        digest TEXT NOT NULL REFERENCES evalsuite_datasets (digest),
        kind TEXT NOT NULL CHECK (kind IN ('run', 'qrels', 'records')),
        filename TEXT NOT NULL,
        system TEXT,
        format TEXT,
        PRIMARY KEY (workspace_id, position))""",
    "CREATE INDEX IF NOT EXISTS evalsuite_workspace_datasets_digest "
    "ON evalsuite_workspace_datasets (digest)",
    "CREATE INDEX IF NOT EXISTS evalsuite_workspaces_expires_at ON evalsuite_workspaces (expires_at)",
    # Version 2. The audit log of judge runs: who, when, which model and endpoint (host and port,
    # never a key), requests, tokens, cost, outcome; "reserved" is the budget a running run holds.
    """CREATE TABLE IF NOT EXISTS evalsuite_judge_runs (
        run_id TEXT NOT NULL PRIMARY KEY,
        user_id TEXT NOT NULL,
        user_label TEXT NOT NULL,
        started_at {real} NOT NULL,
        updated_at {real} NOT NULL,
        finished_at {real},
        model TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('operator', 'typed')),
        records {int} NOT NULL,
        requests {int} NOT NULL DEFAULT 0,
        cache_hits {int} NOT NULL DEFAULT 0,
        prompt_tokens {int} NOT NULL DEFAULT 0,
        completion_tokens {int} NOT NULL DEFAULT 0,
        cost {real} NOT NULL DEFAULT 0,
        reserved {real} NOT NULL DEFAULT 0,
        outcome TEXT NOT NULL CHECK (outcome IN ('running', 'done', 'budget', 'cancelled', 'error', 'abandoned')),
        message TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS evalsuite_judge_runs_user ON evalsuite_judge_runs (user_id, started_at)",
    "CREATE INDEX IF NOT EXISTS evalsuite_judge_runs_started ON evalsuite_judge_runs (started_at)",
    # Bytes uploaded per user and UTC day (YYYY-MM-DD).
    """CREATE TABLE IF NOT EXISTS evalsuite_daily_usage (
        user_id TEXT NOT NULL,
        day TEXT NOT NULL,
        upload_bytes {int} NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, day))""",
    # One row per user (and '*' for everyone) that a limit check updates first: concurrent checks
    # of the same user wait for each other on that row, on both backends.
    """CREATE TABLE IF NOT EXISTS evalsuite_quota_locks (
        user_id TEXT NOT NULL PRIMARY KEY,
        checks {int} NOT NULL DEFAULT 0)""",
    # Version 3. Labelling tasks (a records file kept as a dataset, a judged metric, systems, how
    # the next record is chosen) and the labels people give in them, one row per record and labeller.
    """CREATE TABLE IF NOT EXISTS evalsuite_label_tasks (
        task_id TEXT NOT NULL PRIMARY KEY,
        name TEXT NOT NULL,
        owner_id TEXT,
        created_by TEXT NOT NULL,
        created_at {real} NOT NULL,
        digest TEXT NOT NULL REFERENCES evalsuite_datasets (digest),
        filename TEXT NOT NULL,
        judgement TEXT NOT NULL,
        systems_json TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('active', 'uniform')),
        seed {int} NOT NULL,
        meta_json TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS evalsuite_label_tasks_owner ON evalsuite_label_tasks (owner_id)",
    "CREATE INDEX IF NOT EXISTS evalsuite_label_tasks_digest ON evalsuite_label_tasks (digest)",
    """CREATE TABLE IF NOT EXISTS evalsuite_labels (
        task_id TEXT NOT NULL REFERENCES evalsuite_label_tasks (task_id) ON DELETE CASCADE,
        query_id TEXT NOT NULL,
        system TEXT NOT NULL,
        labeller_id TEXT NOT NULL,
        labeller TEXT NOT NULL,
        label INTEGER CHECK (label IN (0, 1)),
        labelled_at {real} NOT NULL,
        PRIMARY KEY (task_id, query_id, system, labeller_id))""",
)

# Schema version 1 -> 2: workspaces get an owner (the signed-in user who saved them, or NULL).
# 2 -> 3: only new tables (created above with the others).
_MIGRATIONS = {
    1: ("ALTER TABLE evalsuite_workspaces ADD COLUMN owner_id TEXT",),
    2: (),
}
_AFTER_MIGRATIONS = (
    "CREATE INDEX IF NOT EXISTS evalsuite_workspaces_owner ON evalsuite_workspaces (owner_id)",
)

# A dataset is kept while a workspace or a labelling task refers to it.
_GC_ORPHANS = (
    "DELETE FROM evalsuite_datasets WHERE last_put_at < ? AND NOT EXISTS "
    "(SELECT 1 FROM evalsuite_workspace_datasets r WHERE r.digest = evalsuite_datasets.digest) AND NOT EXISTS "
    "(SELECT 1 FROM evalsuite_label_tasks t WHERE t.digest = evalsuite_datasets.digest)"
)

_FETCH_BLOB = (
    "SELECT d.size_bytes, b.data FROM evalsuite_datasets d "
    "JOIN evalsuite_dataset_blobs b ON b.digest = d.digest WHERE d.digest = ?"
)


def _create_schema(backend: Any, conn: Any, *, int_type: str, real_type: str, blob_type: str) -> None:
    """Create the tables (if missing) in the caller's transaction, with the backend's column types,
    and record this schema version on first use; refuse a store made by a newer EvalSuite."""
    row = None
    if backend.execute(conn, _META_EXISTS[backend.name]).fetchone() is not None:
        row = backend.execute(conn, "SELECT value FROM evalsuite_store_meta "
                                    "WHERE key = 'schema_version'").fetchone()
    if row is not None and int(row[0]) > SCHEMA_VERSION:
        raise server_error(f"the workspace store was made by a newer EvalSuite (schema version {row[0]}, this one "
                           f"knows {SCHEMA_VERSION}); upgrade EvalSuite", code="unavailable",
                           detail=f"store at {backend.location}")
    for statement in _TABLES:
        backend.execute(conn, statement.replace("{int}", int_type).replace("{real}", real_type)
                        .replace("{blob}", blob_type))
    version = SCHEMA_VERSION if row is None else int(row[0])
    while version < SCHEMA_VERSION:  # an older store: bring it up to date in the same transaction
        for statement in _MIGRATIONS[version]:
            backend.execute(conn, statement)
        version += 1
    for statement in _AFTER_MIGRATIONS:
        backend.execute(conn, statement)
    backend.execute(conn, "INSERT INTO evalsuite_store_meta (key, value) VALUES ('schema_version', ?) "
                          "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))


_META_EXISTS = {
    "sqlite": "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'evalsuite_store_meta'",
    "postgresql": "SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = 'evalsuite_store_meta' "
                  "AND schemaname = ANY (current_schemas(false))",
}
