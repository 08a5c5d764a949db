"""The persistent workspace store: saved sets of uploaded datasets behind unguessable ids.

A *dataset* is the bytes of one uploaded file (a run, a qrels file or a file of per-request RAG
records), stored once under the SHA-256 of its bytes. A *workspace* is a named, ordered list of
references to datasets (each with its file name, system name and format), saved under a random
workspace id and guarded by an owner token that only its creator holds. A share link carries the
workspace id and the view state, never the data; opening it on any server that reaches the same
store gives back the same bytes, checked against their digests.

One small interface, two backends, chosen by :func:`open_store`:

- SQLite (the standard library's ``sqlite3``), a file in a data directory, created on first use:
  the default, nothing to install;
- PostgreSQL through psycopg 3 (imported only when asked for), selected by a
  ``postgresql://`` URL: for hosts whose disk does not last, or several app instances.

Guarantees (the tests in ``tests/test_store.py`` pin each on both backends):

- every write is one transaction: a dataset row and its full bytes, or a workspace row and all of
  its references (written after all of its datasets are stored), appear together or not at all,
  whether the writer crashes or another session writes at the same time;
- foreign keys make a workspace that points at a missing dataset impossible; a dataset is removed
  only when no workspace refers to it any more (and it was not just put, see
  ``orphan_grace_seconds``);
- bytes read back are checked against their SHA-256, so a damaged store is reported, never used;
  an error of the database itself (a damaged SQLite file, a failing server) is a
  :class:`StoreError` naming the store and the operation, never a raw ``sqlite3`` or psycopg error;
- workspace ids carry 192 random bits from :mod:`secrets` plus a 24-bit check, are validated by a
  strict pattern before any query, and every query is parameterised; owner tokens are kept only
  as their SHA-256; nothing is pickled or evaluated, metadata is JSON text;
- size caps per dataset and per workspace are enforced before anything is written.

Every problem raises :class:`StoreError`, an :class:`~evalsuite.errors.EvalSuiteError` whose
``code`` tells a program which case it is (``"deleted"``, ``"expired"``, ``"too_large"`` ...) and
whose message says it to a person. This module never imports streamlit.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import EvalSuiteError

__all__ = [
    "DATASET_KINDS",
    "DEFAULT_MAX_DATASET_BYTES",
    "DEFAULT_MAX_WORKSPACE_BYTES",
    "DatasetRef",
    "PurgeResult",
    "SavedWorkspace",
    "Store",
    "StoreError",
    "StoreUsage",
    "WORKSPACE_ID_PATTERN",
    "Workspace",
    "WorkspaceSummary",
    "check_workspace_id",
    "new_workspace_id",
    "open_store",
    "open_store_from_config",
]

DATASET_KINDS = ("run", "qrels", "records")

MIB = 1024 * 1024
DEFAULT_MAX_DATASET_BYTES = 50 * MIB
DEFAULT_MAX_WORKSPACE_BYTES = 200 * MIB
# PostgreSQL's bytea and SQLite's default SQLITE_MAX_LENGTH both stop near 1 GB.
HARD_MAX_DATASET_BYTES = 1_000_000_000
MAX_EXPIRY_DAYS = 3650
# A dataset no workspace refers to is kept this long after its last put_dataset, so a session
# that put it and is about to save a workspace referring to it never finds it gone.
DEFAULT_ORPHAN_GRACE_SECONDS = 600.0
MAX_DATASETS_PER_WORKSPACE = 500
MAX_META_BYTES = 64 * 1024
SQLITE_FILENAME = "workspaces.sqlite3"
SCHEMA_VERSION = 1

_ID_RANDOM_BYTES = 24  # 192 bits from secrets.token_bytes: the part nobody can guess
_ID_CHECK_BYTES = 3  # a check on those bits, so a changed or mistyped link is told apart
_ID_LENGTH = 4 * (_ID_RANDOM_BYTES + _ID_CHECK_BYTES) // 3  # 36 base64url characters, no padding
WORKSPACE_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{%d}" % _ID_LENGTH)
_DIGEST_PATTERN = re.compile(r"[0-9a-f]{64}")
_FORMAT_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.+-]{0,31}")
_SCHEMA_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
_MAX_NAME_CHARS = 200
# System names come from run tags, which can be long; keep them whole.
_MAX_SYSTEM_CHARS = 2000
_MAX_FILENAME_CHARS = 255


class StoreError(EvalSuiteError):
    """A workspace-store problem, with a message for a person and a ``code`` for a program.

    Attributes
    ----------
    code : str
        One of ``"invalid_argument"`` (a bad argument or setting), ``"malformed_id"`` (not shaped
        like a workspace id), ``"damaged_id"`` (shaped like one but failing its check: a changed or
        mistyped link), ``"unknown_workspace"``, ``"deleted"``, ``"expired"``, ``"wrong_token"``,
        ``"too_large"``, ``"unknown_dataset"``, ``"missing_dataset"`` (a workspace refers to a
        dataset that is not stored), ``"corrupt"`` (stored bytes do not match their digest, or the
        database itself is damaged: a SQLite file overwritten, cut short or not a SQLite database
        at all) or ``"unavailable"`` (the database cannot be reached or used).
    """

    def __init__(self, reason: str, *, code: str, **where: Any) -> None:
        self.code = code
        super().__init__(reason, **where)


# ----------------------------------------------------------------------------------------------
# Values.


@dataclass(frozen=True)
class DatasetRef:
    """One dataset of a workspace: which bytes, and how the dashboard reads them.

    Parameters
    ----------
    digest : str
        SHA-256 of the file's bytes, 64 lower-case hex digits, as returned by
        :meth:`Store.put_dataset`.
    kind : {"run", "qrels", "records"}
        What the file is.
    filename : str
        The uploaded file's name (1 to 255 characters, no control characters).
    system : str or None
        The system name shown for a run (or a label for a records file); None for qrels and for
        records files that name their systems in a ``system`` column.
    format : str or None
        The reader format (``"trec"``, ``"jsonl"``, ``"parquet"`` ...; one of
        :data:`evalsuite.io.FORMATS` for runs and qrels) or None (``""`` too) to detect it again.

    Raises
    ------
    StoreError
        ``code="invalid_argument"`` when a field is not of that form.
    """

    digest: str
    kind: str
    filename: str
    system: str | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", _check_digest(self.digest))
        object.__setattr__(self, "kind", _check_kind(self.kind))
        object.__setattr__(self, "filename", _check_text(self.filename, "filename", _MAX_FILENAME_CHARS))
        if self.system is not None:
            object.__setattr__(self, "system", _check_text(self.system, "system", _MAX_SYSTEM_CHARS))
        if self.format == "":
            object.__setattr__(self, "format", None)
        if self.format is not None and (
            not isinstance(self.format, str) or not _FORMAT_PATTERN.fullmatch(self.format)
        ):
            raise StoreError(
                "a format is a short lower-case name such as 'trec', 'jsonl' or 'parquet', or None",
                code="invalid_argument", field="format", value=self.format)


@dataclass(frozen=True)
class Workspace:
    """A saved workspace as :meth:`Store.load_workspace` returns it.

    Attributes
    ----------
    workspace_id : str
        The 36-character id in its share links.
    name : str
        The name its owner gave it.
    datasets : tuple of DatasetRef
        Its datasets in the order they were saved.
    total_bytes : int
        Bytes of its distinct datasets together.
    created_at : datetime
        When it was saved (UTC).
    expires_at : datetime or None
        When it stops opening (UTC), or None to keep it until its owner deletes it.
    meta : dict
        The JSON metadata saved with it (empty by default).
    evalsuite_version : str
        The EvalSuite version that saved it.
    """

    workspace_id: str
    name: str
    datasets: tuple[DatasetRef, ...]
    total_bytes: int
    created_at: datetime
    expires_at: datetime | None
    meta: dict = field(default_factory=dict)
    evalsuite_version: str = ""


@dataclass(frozen=True)
class SavedWorkspace:
    """What :meth:`Store.save_workspace` returns.

    Attributes
    ----------
    workspace_id : str
        Goes in the share link.
    owner_token : str
        Needed to delete the workspace. Shown once, kept by the creator (the dashboard keeps it in
        the browser session); the store keeps only its SHA-256. Never put it in a share link.
    workspace : Workspace
        The workspace as saved.
    """

    workspace_id: str
    owner_token: str
    workspace: Workspace


@dataclass(frozen=True)
class WorkspaceSummary:
    """One line of :meth:`Store.list_workspaces`: what became of a workspace id.

    Attributes
    ----------
    workspace_id : str
        The id asked about, as given.
    status : {"active", "deleted", "expired", "unknown", "invalid"}
        ``"invalid"`` for a value that is not a well-formed workspace id.
    name : str or None
        Its name while active (a deleted or expired workspace keeps no name).
    n_datasets, total_bytes : int
        Its datasets and their bytes while active, else 0.
    created_at, expires_at, deleted_at : datetime or None
        UTC times known for it.
    """

    workspace_id: str
    status: str
    name: str | None = None
    n_datasets: int = 0
    total_bytes: int = 0
    created_at: datetime | None = None
    expires_at: datetime | None = None
    deleted_at: datetime | None = None


@dataclass(frozen=True)
class StoreUsage:
    """What :meth:`Store.usage` returns: size of the store and its caps (bytes)."""

    backend: str
    location: str
    n_datasets: int
    dataset_bytes: int
    n_active_workspaces: int
    n_gone_workspaces: int
    max_dataset_bytes: int
    max_workspace_bytes: int
    default_expiry_days: float | None


@dataclass(frozen=True)
class PurgeResult:
    """What :meth:`Store.purge_expired` did."""

    expired_workspaces: int
    removed_datasets: int


# ----------------------------------------------------------------------------------------------
# Workspace ids.


def _id_check(body: bytes) -> bytes:
    return hashlib.sha256(b"evalsuite workspace id\x00" + body).digest()[:_ID_CHECK_BYTES]


def new_workspace_id() -> str:
    """A fresh workspace id: 192 random bits from :func:`secrets.token_bytes` and a 24-bit check.

    Returns
    -------
    str
        36 characters of the URL-safe base64 alphabet (``A-Z a-z 0-9 - _``, RFC 4648 section 5),
        no padding, safe in a URL query parameter as it is.
    """
    body = secrets.token_bytes(_ID_RANDOM_BYTES)
    return base64.urlsafe_b64encode(body + _id_check(body)).decode("ascii")


def check_workspace_id(value: Any) -> str:
    """Return ``value`` if it is a well-formed workspace id; raise :class:`StoreError` if not.

    Runs before any query: the pattern is a full match of 36 characters of ``A-Za-z0-9-_``, and
    the last 24 bits must be the check of the first 192.

    Raises
    ------
    StoreError
        ``code="malformed_id"`` when it is not text of that shape (a link cut short, with extra
        characters, or not a workspace link at all); ``code="damaged_id"`` when it has the shape
        but fails its check (a character changed or mistyped).
    """
    if not isinstance(value, str) or not WORKSPACE_ID_PATTERN.fullmatch(value):
        length = f"{len(value)} characters" if isinstance(value, str) else type(value).__name__
        raise StoreError(
            f"this is not a workspace id ({length}); a workspace id is {_ID_LENGTH} characters "
            "of A-Z, a-z, 0-9, '-' and '_'. Copy the whole share link again",
            code="malformed_id", field="workspace_id", value=value)
    raw = base64.urlsafe_b64decode(value.encode("ascii"))
    if not hmac.compare_digest(raw[_ID_RANDOM_BYTES:], _id_check(raw[:_ID_RANDOM_BYTES])):
        raise StoreError(
            "this workspace id fails its check: the link was changed or mistyped. "
            "Copy the whole share link again",
            code="damaged_id", field="workspace_id", value=value)
    return value


# ----------------------------------------------------------------------------------------------
# Argument checks and small helpers.


def _check_digest(value: Any) -> str:
    if isinstance(value, str) and _DIGEST_PATTERN.fullmatch(value.lower()):
        return value.lower()
    raise StoreError("a dataset digest is the SHA-256 of its bytes: 64 hex digits",
                     code="invalid_argument", field="digest", value=value)


def _check_kind(value: Any) -> str:
    if value in DATASET_KINDS and isinstance(value, str):
        return value
    raise StoreError(f"a dataset kind is one of {', '.join(DATASET_KINDS)}",
                     code="invalid_argument", field="kind", value=value)


def _check_text(value: Any, name: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise StoreError(f"{name} must be text", code="invalid_argument", field=name, value=value)
    # Kept exactly as given (a file named " q.trec " reopens under that name); only a name of
    # nothing but spaces is refused.
    text = value
    if not text.strip():
        raise StoreError(f"{name} is empty", code="invalid_argument", field=name, value=value)
    if len(text) > max_chars:
        raise StoreError(f"{name} is {len(text)} characters long; at most {max_chars} are kept",
                         code="invalid_argument", field=name, value=value)
    if _CONTROL_CHARACTERS.search(text):
        raise StoreError(f"{name} contains a control character (a line break, tab or NUL)",
                         code="invalid_argument", field=name, value=value)
    return text


def _check_days(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StoreError(f"{name} is a number of days or None", code="invalid_argument",
                         field=name, value=value)
    if not 0 < value <= MAX_EXPIRY_DAYS:
        raise StoreError(f"{name} must be more than 0 and at most {MAX_EXPIRY_DAYS} days",
                         code="invalid_argument", field=name, value=value)
    return float(value)


def _check_cap(value: Any, name: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= limit:
        raise StoreError(f"{name} is a number of bytes above 0 and at most {limit:,}",
                         code="invalid_argument", field=name, value=value)
    return value


def _meta_json(meta: Any) -> str:
    if meta is None:
        return "{}"
    if not isinstance(meta, Mapping):
        raise StoreError("meta is a dict of JSON values", code="invalid_argument", field="meta",
                         value=meta)
    try:
        text = json.dumps(dict(meta), allow_nan=False, ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"meta must hold only JSON values (text, numbers, lists, dicts): {exc}",
                         code="invalid_argument", field="meta", value=meta) from None
    if len(text.encode("utf-8")) > MAX_META_BYTES:
        raise StoreError(f"meta is {_format_size(len(text.encode('utf-8')))} as JSON; at most "
                         f"{_format_size(MAX_META_BYTES)} is kept", code="invalid_argument",
                         field="meta", value=None)
    return text


def _format_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < MIB:
        return f"{n / 1024:.1f} KiB ({n:,} bytes)"
    return f"{n / MIB:.1f} MiB ({n:,} bytes)"


def _utc(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=timezone.utc)


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _evalsuite_version() -> str:
    from .. import __version__  # late: the package imports this module's siblings first

    return __version__


def _redact_url(url: str) -> str:
    """The URL without its password (shown as ``***``) or query parameters (which may hold one:
    ``?password=``), for messages and :attr:`Store.location`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            host = parts.hostname or ""
            if parts.port is not None:
                host += f":{parts.port}"
            netloc = f"{parts.username or ''}:***@{host}"
    except ValueError:
        return "<unparseable URL>"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# ----------------------------------------------------------------------------------------------
# Schema. The same tables on both backends; {int} {real} {blob} are the backend's types.

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
)

_GC_ORPHANS = (
    "DELETE FROM evalsuite_datasets WHERE last_put_at < ? AND NOT EXISTS "
    "(SELECT 1 FROM evalsuite_workspace_datasets r WHERE r.digest = evalsuite_datasets.digest)"
)


def _schema_statements(int_type: str, real_type: str, blob_type: str) -> list[str]:
    return [s.replace("{int}", int_type).replace("{real}", real_type).replace("{blob}", blob_type)
            for s in _TABLES]


def _check_schema_version(row: Any, location: str) -> None:
    if row is not None and int(row[0]) > SCHEMA_VERSION:
        raise StoreError(f"the workspace store at {location} was made by a newer EvalSuite "
                         f"(schema version {row[0]}, this one knows {SCHEMA_VERSION}); upgrade EvalSuite",
                         code="unavailable")


# SQLite's primary result codes for a damaged file and for a file that is not a database.
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def _sqlite_damaged(exc: BaseException) -> bool:
    """Whether a sqlite3 error says the database file is damaged or is not a database at all.

    Python's sqlite3 raises those two (SQLITE_CORRUPT, SQLITE_NOTADB) as a plain
    :class:`sqlite3.DatabaseError`; ``sqlite_errorcode`` (Python 3.11+) tells them apart exactly.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return type(exc) is sqlite3.DatabaseError


def _sqlite_damaged_message(path: Path, exc: BaseException) -> str:
    return (f"the SQLite workspace store file {path} is damaged or is not a SQLite database "
            f"({str(exc).strip()}); restore it from a backup, or move it aside to start an empty store")


# ----------------------------------------------------------------------------------------------
# Backends: how to connect, run a statement, open a transaction and fetch bytes. The Store calls
# only these, so both backends run the same SQL text (with ? placeholders).


class _SQLiteBackend:
    name = "sqlite"

    def __init__(self, path: Path, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.operational_errors: tuple[type[BaseException], ...] = (sqlite3.OperationalError,)
        self.foreign_key_errors: tuple[type[BaseException], ...] = (sqlite3.IntegrityError,)
        # Every other error of the database (a damaged file above all) becomes a StoreError too.
        self.database_errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    @property
    def location(self) -> str:
        return str(self.path)

    def connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves. check_same_thread=False: the pool
        # hands a connection to one thread at a time, whichever thread that is.
        conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    @staticmethod
    def close(conn: sqlite3.Connection) -> None:
        conn.close()

    @staticmethod
    def healthy(conn: sqlite3.Connection) -> bool:
        return not conn.in_transaction

    def execute(self, conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(sql, params)

    def executemany(self, conn: sqlite3.Connection, sql: str, rows: list[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)

    def fetch_blob(self, conn: sqlite3.Connection, digest: str) -> tuple[int, bytes] | None:
        row = self.execute(conn, "SELECT d.size_bytes, b.data FROM evalsuite_datasets d "
                                 "JOIN evalsuite_dataset_blobs b ON b.digest = d.digest "
                                 "WHERE d.digest = ?", (digest,)).fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    @contextmanager
    def transaction(self, conn: sqlite3.Connection, *, write: bool) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the write lock up front (waiting up to the busy timeout), so two
        # writers queue instead of failing when a read lock would have to be upgraded.
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def initialise(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        conn = self.connect()
        try:
            # WAL: readers never block the writer; the setting is kept in the file.
            conn.execute("PRAGMA journal_mode = WAL")
            with self.transaction(conn, write=True):
                for statement in _schema_statements("INTEGER", "REAL", "BLOB"):
                    conn.execute(statement)
                conn.execute("INSERT INTO evalsuite_store_meta (key, value) VALUES ('schema_version', ?) "
                             "ON CONFLICT (key) DO NOTHING", (str(SCHEMA_VERSION),))
                _check_schema_version(conn.execute(
                    "SELECT value FROM evalsuite_store_meta WHERE key = 'schema_version'").fetchone(),
                    self.location)
        finally:
            conn.close()

    def database_error(self, exc: BaseException, doing: str) -> StoreError:
        """The StoreError for a sqlite3 error other than an OperationalError."""
        if _sqlite_damaged(exc):
            return StoreError(f"cannot {doing}: {_sqlite_damaged_message(self.path, exc)}", code="corrupt")
        return StoreError(f"cannot {doing}: the SQLite workspace store file {self.path} failed: "
                          f"{str(exc).strip()}", code="unavailable")

    def extra_checks(self, conn: sqlite3.Connection) -> list[str]:
        problems = []
        result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if result != ["ok"]:
            problems.append(f"SQLite integrity_check: {'; '.join(map(str, result))}")
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
            problems.append(f"row {rowid} of {table} refers to a missing row of {parent}")
        return problems


class _PostgresBackend:
    name = "postgresql"

    def __init__(self, url: str, schema: str | None) -> None:
        try:
            import psycopg
            from psycopg import sql as pgsql
        except ImportError:
            raise StoreError("a PostgreSQL store needs psycopg 3: pip install 'psycopg[binary]>=3.2'",
                             code="unavailable") from None
        self._psycopg = psycopg
        self._pgsql = pgsql
        self.url = url
        self.schema = schema
        self.operational_errors = (psycopg.OperationalError, psycopg.InterfaceError)
        self.foreign_key_errors = (psycopg.errors.ForeignKeyViolation,)
        self.database_errors = (psycopg.Error,)
        self._queries: dict[str, str] = {}

    @property
    def location(self) -> str:
        where = _redact_url(self.url)
        return f"{where} (schema {self.schema})" if self.schema else where

    def connect(self) -> Any:
        psycopg = self._psycopg
        # Defaults only: a connect_timeout or application_name in the URL wins.
        options = {key: value for key, value in (("connect_timeout", 10), ("application_name", "evalsuite"))
                   if key not in self.url}
        try:
            conn = psycopg.connect(self.url, autocommit=True, **options)
            # No server-side prepared statements: they break behind a transaction-mode pooler
            # (PgBouncer and the poolers of hosted PostgreSQL services), and save little here.
            conn.prepare_threshold = None
        except psycopg.Error as exc:
            # libpq's message names host, port and user, never the password; the URL may hold one.
            raise StoreError(f"cannot connect to the PostgreSQL workspace store at "
                             f"{_redact_url(self.url)}: {str(exc).strip()}", code="unavailable") from None
        if self.schema:
            conn.execute(self._pgsql.SQL("SET search_path TO {}").format(
                self._pgsql.Identifier(self.schema)))
        return conn

    @staticmethod
    def close(conn: Any) -> None:
        conn.close()

    def healthy(self, conn: Any) -> bool:
        return (not conn.closed and not conn.broken
                and conn.info.transaction_status == self._psycopg.pq.TransactionStatus.IDLE)

    def _q(self, sql: str) -> str:
        query = self._queries.get(sql)
        if query is None:
            if "%" in sql:
                raise AssertionError("a literal % in store SQL would be read as a placeholder")
            query = self._queries[sql] = sql.replace("?", "%s")
        return query

    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(self._q(sql), params)

    def executemany(self, conn: Any, sql: str, rows: list[Sequence[Any]]) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(self._q(sql), rows)

    def fetch_blob(self, conn: Any, digest: str) -> tuple[int, bytes] | None:
        # A binary cursor: bytea arrives as its bytes, not as hex text twice their size.
        with conn.cursor(binary=True) as cursor:
            cursor.execute(self._q("SELECT d.size_bytes, b.data FROM evalsuite_datasets d "
                                   "JOIN evalsuite_dataset_blobs b ON b.digest = d.digest "
                                   "WHERE d.digest = ?"), (digest,))
            row = cursor.fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    @contextmanager
    def transaction(self, conn: Any, *, write: bool) -> Iterator[None]:
        with conn.transaction():
            if not write:
                # One snapshot for every statement of a read, as SQLite gives.
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield

    def initialise(self) -> None:
        pgsql = self._pgsql
        # A fixed advisory-lock key serialises schema creation by app instances starting together.
        lock_key = int.from_bytes(hashlib.sha256(b"evalsuite store schema").digest()[:8], "big",
                                  signed=True)
        conn = self.connect()
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key,))
                if self.schema:
                    conn.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                        pgsql.Identifier(self.schema)))
                for statement in _schema_statements("BIGINT", "DOUBLE PRECISION", "BYTEA"):
                    conn.execute(statement)
                conn.execute("INSERT INTO evalsuite_store_meta (key, value) VALUES ('schema_version', %s) "
                             "ON CONFLICT (key) DO NOTHING", (str(SCHEMA_VERSION),))
                _check_schema_version(conn.execute(
                    "SELECT value FROM evalsuite_store_meta WHERE key = 'schema_version'").fetchone(),
                    self.location)
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot set up the PostgreSQL workspace store at {self.location}: "
                             f"{str(exc).strip()}", code="unavailable") from None
        finally:
            conn.close()

    def database_error(self, exc: BaseException, doing: str) -> StoreError:
        """The StoreError for a psycopg error other than an OperationalError or InterfaceError."""
        # The server's message names tables and values, never the password; location hides it.
        errors = self._psycopg.errors
        if isinstance(exc, (errors.DataCorrupted, errors.IndexCorrupted)):
            return StoreError(f"cannot {doing}: the PostgreSQL workspace store at {self.location} reports "
                              f"damaged data: {str(exc).strip()}", code="corrupt")
        return StoreError(f"cannot {doing}: the PostgreSQL workspace store at {self.location} failed: "
                          f"{str(exc).strip()}", code="unavailable")

    @staticmethod
    def extra_checks(conn: Any) -> list[str]:
        return []


class _Pool:
    """A few idle connections kept for reuse, handed to one thread at a time."""

    def __init__(self, backend: Any, max_idle: int = 4) -> None:
        self._backend = backend
        self._max_idle = max_idle
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self.closed = False

    @contextmanager
    def connection(self) -> Iterator[Any]:
        if self.closed:
            raise StoreError("this workspace store was closed", code="unavailable")
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._backend.connect()
        keep = False
        try:
            yield conn
            keep = True
        except StoreError:
            keep = True  # our own checks failed; the transaction was rolled back cleanly
            raise
        finally:
            if keep and not self.closed and self._backend.healthy(conn):
                with self._lock:
                    if len(self._idle) < self._max_idle:
                        self._idle.append(conn)
                        conn = None
            if conn is not None:
                try:
                    self._backend.close(conn)
                except Exception:  # closing a broken connection may fail too; it is gone either way
                    pass

    def close(self) -> None:
        self.closed = True
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            self._backend.close(conn)


# ----------------------------------------------------------------------------------------------
# The store.


class Store:
    """Datasets by content and workspaces by random id, in SQLite or PostgreSQL.

    Make one with :func:`open_store` (or :func:`open_store_from_config`). A Store is safe to share
    between threads (each call takes its own connection from a small pool) and between processes
    and app instances using the same database (each write is one transaction). Use it as a context
    manager or call :meth:`close`.

    Every method that reads or writes the database raises :class:`StoreError`, never a raw
    ``sqlite3`` or psycopg error: ``"corrupt"`` when the database is damaged (a SQLite file
    overwritten, cut short or not a SQLite database), ``"unavailable"`` for any other database
    failure; the message names the store (a PostgreSQL URL without its password) and what was
    being done.

    Attributes
    ----------
    backend : str
        ``"sqlite"`` or ``"postgresql"``.
    location : str
        The SQLite file, or the PostgreSQL URL with its password hidden.
    max_dataset_bytes, max_workspace_bytes : int
        The size caps.
    default_expiry_days : float or None
        Days a workspace is kept when :meth:`save_workspace` is given no ``expires_in_days``.
    orphan_grace_seconds : float
        How long a dataset that no workspace refers to is kept after its last put.
    """

    def __init__(self, backend: Any, *, max_dataset_bytes: int, max_workspace_bytes: int,
                 default_expiry_days: float | None, clock: Callable[[], float],
                 orphan_grace_seconds: float = DEFAULT_ORPHAN_GRACE_SECONDS) -> None:
        self._backend = backend
        self._pool = _Pool(backend)
        self._clock = clock
        self.max_dataset_bytes = max_dataset_bytes
        self.max_workspace_bytes = max_workspace_bytes
        self.default_expiry_days = default_expiry_days
        self.orphan_grace_seconds = orphan_grace_seconds

    @property
    def backend(self) -> str:
        return self._backend.name

    @property
    def location(self) -> str:
        return self._backend.location

    def __repr__(self) -> str:
        return f"<evalsuite Store {self.backend} at {self.location}>"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the pooled connections; the Store cannot be used afterwards."""
        self._pool.close()

    @contextmanager
    def _transaction(self, *, write: bool, doing: str, foreign_key_errors: bool = False) -> Iterator[Any]:
        """A connection in a transaction; every database error leaves as a :class:`StoreError`.

        ``doing`` says what the caller was doing, for the message. With ``foreign_key_errors``
        the backend's foreign-key violation is raised as it is, for the caller to handle.
        """
        try:
            with self._pool.connection() as conn, self._backend.transaction(conn, write=write):
                yield conn
        except self._backend.operational_errors as exc:
            raise StoreError(f"the workspace store at {self.location} cannot be used right now: "
                             f"{str(exc).strip()}", code="unavailable") from exc
        except self._backend.database_errors as exc:
            if foreign_key_errors and isinstance(exc, self._backend.foreign_key_errors):
                raise
            raise self._backend.database_error(exc, doing) from exc

    def _sql(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._backend.execute(conn, sql, params)

    # -- datasets ---------------------------------------------------------------------------

    def put_dataset(self, data: bytes | bytearray | memoryview, *, kind: str, filename: str) -> str:
        """Store a dataset's bytes once, under their SHA-256, and return that digest.

        Putting bytes that are already stored writes nothing but a timestamp (which keeps the
        dataset from being collected before a workspace refers to it).

        Parameters
        ----------
        data : bytes-like
            The file exactly as uploaded (compressed or not); it is stored and returned unchanged.
        kind : {"run", "qrels", "records"}
            What the file is (checked; used in messages).
        filename : str
            The uploaded file's name (used in messages; a workspace records it per reference).

        Returns
        -------
        str
            The SHA-256 of ``data``, 64 lower-case hex digits (FIPS 180-4, :mod:`hashlib`).

        Raises
        ------
        StoreError
            ``"too_large"`` when ``data`` exceeds ``max_dataset_bytes`` (nothing is written);
            ``"invalid_argument"`` for a bad kind, file name or data type; ``"unavailable"``.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StoreError("dataset data must be the file's bytes", code="invalid_argument",
                             field="data", value=type(data).__name__)
        data = bytes(data)
        kind = _check_kind(kind)
        filename = _check_text(filename, "filename", _MAX_FILENAME_CHARS)
        if len(data) > self.max_dataset_bytes:
            raise StoreError(f"this {kind} file is {_format_size(len(data))}; the store keeps at most "
                             f"{_format_size(self.max_dataset_bytes)} per dataset", code="too_large",
                             source=filename)
        digest = hashlib.sha256(data).hexdigest()
        now = self._clock()
        with self._transaction(write=True, doing="store a dataset") as conn:
            inserted = self._sql(conn, "INSERT INTO evalsuite_datasets (digest, size_bytes, created_at, "
                                       "last_put_at) VALUES (?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
                                 (digest, len(data), now, now)).rowcount == 1
            if inserted:
                self._sql(conn, "INSERT INTO evalsuite_dataset_blobs (digest, data) VALUES (?, ?)",
                          (digest, data))
            else:
                self._sql(conn, "UPDATE evalsuite_datasets SET last_put_at = ? WHERE digest = ? "
                                "AND last_put_at < ?", (now, digest, now))
        return digest

    def get_dataset(self, digest: str) -> bytes:
        """The bytes stored under ``digest``, checked against it.

        Returns
        -------
        bytes
            Exactly the bytes given to :meth:`put_dataset`.

        Raises
        ------
        StoreError
            ``"unknown_dataset"`` when nothing is stored under ``digest`` (never stored, or removed
            after the last workspace referring to it was deleted); ``"corrupt"`` when the stored
            bytes do not hash to ``digest`` (the database was changed outside EvalSuite or
            damaged) or the database itself is damaged; ``"invalid_argument"`` for a value that
            is not a SHA-256 hex digest; ``"unavailable"``.
        """
        digest = _check_digest(digest)
        with self._transaction(write=False, doing="read a dataset") as conn:
            found = self._backend.fetch_blob(conn, digest)
        if found is None:
            raise StoreError("no dataset with this SHA-256 is stored (it was never saved here, or "
                             "was removed after the last workspace using it was deleted)",
                             code="unknown_dataset", field="digest", value=digest)
        size, data = found
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            raise StoreError(f"the stored bytes of this dataset ({_format_size(len(data))}) do not match "
                             "its SHA-256: the store was changed outside EvalSuite or is damaged",
                             code="corrupt", field="digest", value=digest)
        return data

    # -- workspaces -------------------------------------------------------------------------

    def save_workspace(self, name: str, datasets: Sequence[DatasetRef], *,
                       expires_in_days: float | None = None,
                       meta: Mapping[str, Any] | None = None) -> SavedWorkspace:
        """Save a workspace referring to stored datasets; return its new id and owner token.

        Put every dataset with :meth:`put_dataset` first. The workspace row and all of its
        references are written in one transaction, so the workspace is either complete or absent.

        Parameters
        ----------
        name : str
            A name for people (1 to 200 characters, no control characters).
        datasets : sequence of DatasetRef
            1 to 500 references, in the order the dashboard lists them; the same digest may appear
            more than once (its bytes count once toward the cap).
        expires_in_days : float or None
            Days until links stop opening it (more than 0, at most 3650); None for the store's
            ``default_expiry_days`` (which may be None: kept until deleted).
        meta : dict or None
            JSON values kept with the workspace (at most 64 KiB as JSON).

        Returns
        -------
        SavedWorkspace
            ``workspace_id`` (for the link), ``owner_token`` (for deleting; shown once, kept only
            as a hash) and the ``workspace``.

        Raises
        ------
        StoreError
            ``"missing_dataset"`` when a reference's digest is not stored; ``"too_large"`` when the
            distinct datasets together exceed ``max_workspace_bytes``; ``"invalid_argument"``;
            ``"unavailable"``. Nothing is written in any of these cases.
        """
        name = _check_text(name, "name", _MAX_NAME_CHARS)
        if isinstance(datasets, (str, bytes)) or not isinstance(datasets, Sequence):
            raise StoreError("datasets is a list of DatasetRef", code="invalid_argument",
                             field="datasets", value=type(datasets).__name__)
        refs = list(datasets)
        if not refs:
            raise StoreError("a workspace needs at least one dataset", code="invalid_argument",
                             field="datasets", value=None)
        if len(refs) > MAX_DATASETS_PER_WORKSPACE:
            raise StoreError(f"a workspace holds at most {MAX_DATASETS_PER_WORKSPACE} datasets, "
                             f"not {len(refs)}", code="invalid_argument", field="datasets", value=None)
        for ref in refs:
            if not isinstance(ref, DatasetRef):
                raise StoreError("each dataset is a DatasetRef", code="invalid_argument",
                                 field="datasets", value=ref)
        days = _check_days(expires_in_days, "expires_in_days")
        if days is None:
            days = self.default_expiry_days
        meta_text = _meta_json(meta)
        digests = sorted({ref.digest for ref in refs})
        version = _evalsuite_version()
        workspace_id = new_workspace_id()
        owner_token = secrets.token_urlsafe(32)
        now = self._clock()
        expires_at = None if days is None else now + days * 86400.0
        try:
            with self._transaction(write=True, doing="save a workspace", foreign_key_errors=True) as conn:
                sizes: dict[str, int] = {}
                for start in range(0, len(digests), 200):
                    chunk = digests[start:start + 200]
                    rows = self._sql(conn, "SELECT digest, size_bytes FROM evalsuite_datasets WHERE digest "
                                           f"IN ({', '.join('?' * len(chunk))})", chunk).fetchall()
                    sizes.update((row[0], int(row[1])) for row in rows)
                missing = next((ref for ref in refs if ref.digest not in sizes), None)
                if missing is not None:
                    raise self._missing(missing)
                total = sum(sizes.values())
                if total > self.max_workspace_bytes:
                    raise StoreError(f"the datasets of this workspace come to {_format_size(total)}; the "
                                     f"store keeps at most {_format_size(self.max_workspace_bytes)} per "
                                     "workspace", code="too_large", source=f"workspace '{name}'")
                self._sql(conn, "INSERT INTO evalsuite_workspaces (workspace_id, owner_token_sha256, name, "
                                "meta_json, evalsuite_version, total_bytes, created_at, expires_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (workspace_id, _token_hash(owner_token), name, meta_text, version, total, now,
                           expires_at))
                self._backend.executemany(
                    conn, "INSERT INTO evalsuite_workspace_datasets (workspace_id, position, digest, kind, "
                          "filename, system, format) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(workspace_id, i, r.digest, r.kind, r.filename, r.system, r.format)
                     for i, r in enumerate(refs)])
        except self._backend.foreign_key_errors:
            # PostgreSQL only: a dataset was collected between our check and our insert; the
            # foreign key refused the reference and the transaction was rolled back.
            raise self._missing(refs[0], racing=True) from None
        workspace = Workspace(workspace_id=workspace_id, name=name, datasets=tuple(refs),
                              total_bytes=total, created_at=_utc(now), expires_at=_utc(expires_at),
                              meta=json.loads(meta_text), evalsuite_version=version)
        return SavedWorkspace(workspace_id=workspace_id, owner_token=owner_token, workspace=workspace)

    @staticmethod
    def _missing(ref: DatasetRef, racing: bool = False) -> StoreError:
        reason = ("a dataset of this workspace was removed while saving; put it again and save again"
                  if racing else
                  f"this {ref.kind} file is not in the store; put it with put_dataset before saving")
        return StoreError(reason, code="missing_dataset", source=ref.filename, field="digest",
                          value=ref.digest)

    def _gone(self, workspace_id: str, deleted_at: float | None, reason: str | None,
              expires_at: float | None) -> StoreError:
        if reason == "owner":
            return StoreError(f"this workspace was deleted by its owner on {_when(deleted_at)}; "
                              "its data is no longer kept", code="deleted", field="workspace_id",
                              value=workspace_id)
        return StoreError(f"this workspace expired on {_when(expires_at)} and can no longer be opened",
                          code="expired", field="workspace_id", value=workspace_id)

    def load_workspace(self, workspace_id: str) -> Workspace:
        """The workspace saved under ``workspace_id``, with its dataset references.

        Fetch each dataset's bytes with :meth:`get_dataset`.

        Raises
        ------
        StoreError
            ``"malformed_id"`` or ``"damaged_id"`` for a value that is not a valid id (no query is
            run); ``"unknown_workspace"`` for a valid id this store never saved; ``"deleted"`` when
            its owner deleted it; ``"expired"`` when its expiry has passed; ``"unavailable"``.
        """
        workspace_id = check_workspace_id(workspace_id)
        with self._transaction(write=False, doing="open a workspace") as conn:
            row = self._sql(conn, "SELECT name, meta_json, evalsuite_version, total_bytes, created_at, "
                                  "expires_at, deleted_at, deleted_reason FROM evalsuite_workspaces "
                                  "WHERE workspace_id = ?", (workspace_id,)).fetchone()
            refs = self._sql(conn, "SELECT digest, kind, filename, system, format FROM "
                                   "evalsuite_workspace_datasets WHERE workspace_id = ? ORDER BY position",
                             (workspace_id,)).fetchall()
        if row is None:
            raise StoreError("no workspace with this id is stored here: the link may be mistyped, or "
                             "it was made on a server with another store", code="unknown_workspace",
                             field="workspace_id", value=workspace_id)
        name, meta_text, version, total, created_at, expires_at, deleted_at, reason = row
        if deleted_at is not None:
            raise self._gone(workspace_id, deleted_at, reason, expires_at)
        if expires_at is not None and expires_at <= self._clock():
            raise self._gone(workspace_id, None, "expired", expires_at)
        return Workspace(
            workspace_id=workspace_id, name=name,
            datasets=tuple(DatasetRef(digest=r[0], kind=r[1], filename=r[2], system=r[3], format=r[4])
                           for r in refs),
            total_bytes=int(total), created_at=_utc(created_at), expires_at=_utc(expires_at),
            meta=json.loads(meta_text), evalsuite_version=version)

    def delete_workspace(self, workspace_id: str, owner_token: str) -> None:
        """Delete a workspace; its links then answer that it was deleted.

        The workspace's row stays as a tombstone without its name, metadata or references, so a
        link to it says "deleted" rather than "unknown". Datasets no other workspace refers to are
        removed in the same transaction (those put within the last ``orphan_grace_seconds`` are
        left for :meth:`purge_expired`, as another session may be about to use them). Deleting an
        already deleted workspace with its owner token does nothing.

        Parameters
        ----------
        workspace_id : str
        owner_token : str
            The token :meth:`save_workspace` returned with it.

        Raises
        ------
        StoreError
            ``"wrong_token"`` when ``owner_token`` is not the workspace's (nothing changes);
            ``"malformed_id"``, ``"damaged_id"``, ``"unknown_workspace"``, ``"unavailable"``.
        """
        workspace_id = check_workspace_id(workspace_id)
        if not isinstance(owner_token, str) or not owner_token:
            raise StoreError("the owner token is the text save_workspace returned",
                             code="wrong_token", field="owner_token", value=None)
        now = self._clock()
        with self._transaction(write=True, doing="delete a workspace") as conn:
            row = self._sql(conn, "SELECT owner_token_sha256, deleted_at FROM evalsuite_workspaces "
                                  "WHERE workspace_id = ?", (workspace_id,)).fetchone()
            if row is None:
                raise StoreError("no workspace with this id is stored here", code="unknown_workspace",
                                 field="workspace_id", value=workspace_id)
            if not hmac.compare_digest(_token_hash(owner_token), row[0]):
                raise StoreError("this owner token does not belong to this workspace; only the session "
                                 "that saved it can delete it", code="wrong_token", field="owner_token",
                                 value=None)
            if row[1] is not None:
                return
            self._sql(conn, "DELETE FROM evalsuite_workspace_datasets WHERE workspace_id = ?",
                      (workspace_id,))
            self._sql(conn, "UPDATE evalsuite_workspaces SET deleted_at = ?, deleted_reason = 'owner', "
                            "name = '', meta_json = '{}' WHERE workspace_id = ?", (now, workspace_id))
            self._sql(conn, _GC_ORPHANS, (now - self.orphan_grace_seconds,))

    def list_workspaces(self, workspace_ids: Sequence[str]) -> list[WorkspaceSummary]:
        """What became of each of these workspace ids, in the order given.

        The dashboard keeps the ids (and owner tokens) it saved in the browser session and lists
        them with this; the store offers no way to list workspaces it was not asked about.

        Returns
        -------
        list of WorkspaceSummary
            One per id, same order; status ``"invalid"`` for a value that is not a valid id.
        """
        if isinstance(workspace_ids, str):
            workspace_ids = [workspace_ids]
        ids = list(workspace_ids)
        valid = []
        for value in ids:
            try:
                valid.append(check_workspace_id(value))
            except StoreError:
                pass
        found: dict[str, tuple] = {}
        if valid:
            unique = sorted(set(valid))
            with self._transaction(write=False, doing="list workspaces") as conn:
                for start in range(0, len(unique), 200):
                    chunk = unique[start:start + 200]
                    marks = ", ".join("?" * len(chunk))
                    rows = self._sql(conn, "SELECT w.workspace_id, w.name, w.total_bytes, w.created_at, "
                                           "w.expires_at, w.deleted_at, w.deleted_reason, (SELECT COUNT(*) "
                                           "FROM evalsuite_workspace_datasets r WHERE r.workspace_id = "
                                           f"w.workspace_id) FROM evalsuite_workspaces w WHERE w.workspace_id "
                                           f"IN ({marks})", chunk).fetchall()
                    found.update((row[0], row) for row in rows)
        now = self._clock()
        summaries = []
        for value in ids:
            row = found.get(value) if isinstance(value, str) else None
            if row is None:
                status = "unknown" if value in valid else "invalid"
                summaries.append(WorkspaceSummary(workspace_id=value if isinstance(value, str) else repr(value),
                                                  status=status))
                continue
            _, name, total, created_at, expires_at, deleted_at, reason, n_refs = row
            if deleted_at is None and (expires_at is None or expires_at > now):
                summaries.append(WorkspaceSummary(value, "active", name, int(n_refs), int(total),
                                                  _utc(created_at), _utc(expires_at)))
            else:
                status = "deleted" if reason == "owner" else "expired"
                summaries.append(WorkspaceSummary(value, status, None, 0, 0, _utc(created_at),
                                                  _utc(expires_at), _utc(deleted_at)))
        return summaries

    # -- upkeep -----------------------------------------------------------------------------

    def purge_expired(self) -> PurgeResult:
        """Turn expired workspaces into tombstones and remove datasets nothing refers to.

        Cheap when there is nothing to do; call it when the app starts and now and then. A
        dataset is removed only when no workspace refers to it and it was last put more than
        ``orphan_grace_seconds`` ago (an unfinished save, a crashed writer, or a deleted or
        expired workspace leave such datasets).

        Returns
        -------
        PurgeResult
            How many workspaces expired now and how many datasets were removed.
        """
        now = self._clock()
        for attempt in range(2):
            try:
                # The last attempt turns a foreign-key violation into a StoreError too.
                with self._transaction(write=True, doing="purge expired workspaces",
                                       foreign_key_errors=attempt == 0) as conn:
                    expired = "deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?"
                    self._sql(conn, "DELETE FROM evalsuite_workspace_datasets WHERE workspace_id IN "
                                    f"(SELECT workspace_id FROM evalsuite_workspaces WHERE {expired})", (now,))
                    n_expired = self._sql(conn, "UPDATE evalsuite_workspaces SET deleted_at = ?, "
                                                "deleted_reason = 'expired', name = '', meta_json = '{}' "
                                                f"WHERE {expired}", (now, now)).rowcount
                    n_removed = self._sql(conn, _GC_ORPHANS, (now - self.orphan_grace_seconds,)).rowcount
                return PurgeResult(expired_workspaces=max(n_expired, 0), removed_datasets=max(n_removed, 0))
            except self._backend.foreign_key_errors:
                # PostgreSQL only: a workspace referring to an old orphan was saved meanwhile; the
                # foreign key kept the dataset and rolled us back. Once more sees that workspace.
                continue
        raise AssertionError("unreachable")

    def usage(self) -> StoreUsage:
        """How many datasets and bytes the store holds, how many workspaces, and its caps."""
        now = self._clock()
        with self._transaction(write=False, doing="measure the store") as conn:
            n_datasets, n_bytes = self._sql(conn, "SELECT COUNT(*), COALESCE(SUM(size_bytes), 0) "
                                                  "FROM evalsuite_datasets").fetchone()
            n_active, n_all = self._sql(conn, "SELECT COALESCE(SUM(CASE WHEN deleted_at IS NULL AND "
                                              "(expires_at IS NULL OR expires_at > ?) THEN 1 ELSE 0 END), 0), "
                                              "COUNT(*) FROM evalsuite_workspaces", (now,)).fetchone()
        return StoreUsage(backend=self.backend, location=self.location, n_datasets=int(n_datasets),
                          dataset_bytes=int(n_bytes), n_active_workspaces=int(n_active),
                          n_gone_workspaces=int(n_all) - int(n_active),
                          max_dataset_bytes=self.max_dataset_bytes,
                          max_workspace_bytes=self.max_workspace_bytes,
                          default_expiry_days=self.default_expiry_days)

    def verify(self) -> list[str]:
        """Check the whole store; return its problems in words (an empty list when sound).

        Checks that every reference points at a stored dataset, that every dataset has its bytes
        and they hash to its digest with the recorded size, that deleted workspaces keep no
        references and active ones have some; on SQLite also ``PRAGMA integrity_check`` and
        ``PRAGMA foreign_key_check``. Reads every stored byte: an administrator's tool, not for
        each page view.

        Raises
        ------
        StoreError
            ``"corrupt"`` when the database is too damaged to be read at all (a SQLite file that
            is not a database, cut short, or with a damaged page that a query has to read);
            ``"unavailable"``. Damage SQLite's checks find without failing a query is returned as
            a problem.
        """
        problems: list[str] = []
        with self._transaction(write=False, doing="verify the store") as conn:
            for wid, digest in self._sql(conn, "SELECT r.workspace_id, r.digest FROM "
                                               "evalsuite_workspace_datasets r LEFT JOIN evalsuite_datasets d "
                                               "ON d.digest = r.digest WHERE d.digest IS NULL").fetchall():
                problems.append(f"workspace {wid} refers to dataset {digest}, which is not stored")
            for (digest,) in self._sql(conn, "SELECT d.digest FROM evalsuite_datasets d LEFT JOIN "
                                             "evalsuite_dataset_blobs b ON b.digest = d.digest "
                                             "WHERE b.digest IS NULL").fetchall():
                problems.append(f"dataset {digest} has no bytes")
            for (wid,) in self._sql(conn, "SELECT DISTINCT r.workspace_id FROM evalsuite_workspace_datasets r "
                                          "JOIN evalsuite_workspaces w ON w.workspace_id = r.workspace_id "
                                          "WHERE w.deleted_at IS NOT NULL").fetchall():
                problems.append(f"deleted workspace {wid} still has dataset references")
            for (wid,) in self._sql(conn, "SELECT w.workspace_id FROM evalsuite_workspaces w WHERE "
                                          "w.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM "
                                          "evalsuite_workspace_datasets r WHERE r.workspace_id = "
                                          "w.workspace_id)").fetchall():
                problems.append(f"workspace {wid} has no datasets")
            digests = [row[0] for row in self._sql(conn, "SELECT digest FROM evalsuite_datasets "
                                                         "ORDER BY digest").fetchall()]
            problems.extend(self._backend.extra_checks(conn))
        for digest in digests:  # one blob in memory at a time
            with self._transaction(write=False, doing="verify the store") as conn:
                found = self._backend.fetch_blob(conn, digest)
            if found is not None and (len(found[1]) != found[0]
                                      or hashlib.sha256(found[1]).hexdigest() != digest):
                problems.append(f"dataset {digest}: its {len(found[1]):,} stored bytes do not match its "
                                f"digest or recorded size {found[0]:,}")
        return problems


# ----------------------------------------------------------------------------------------------
# Opening a store.


def open_store(url: str | None = None, *, data_dir: str | os.PathLike | None = None,
               schema: str | None = None,
               max_dataset_bytes: int = DEFAULT_MAX_DATASET_BYTES,
               max_workspace_bytes: int = DEFAULT_MAX_WORKSPACE_BYTES,
               default_expiry_days: float | None = None,
               orphan_grace_seconds: float = DEFAULT_ORPHAN_GRACE_SECONDS,
               clock: Callable[[], float] = time.time) -> Store:
    """Open (and on first use create) the workspace store.

    Parameters
    ----------
    url : str or None
        None for SQLite in ``data_dir``; ``sqlite:///relative/file.db`` or
        ``sqlite:////absolute/file.db`` (SQLAlchemy's spelling) for a given SQLite file;
        ``postgresql://user:password@host:port/database`` (or ``postgres://``, any libpq URI
        parameters such as ``?sslmode=require``) for PostgreSQL, which needs psycopg 3.
    data_dir : path or None
        Directory of the SQLite file ``workspaces.sqlite3`` when ``url`` is None; default the
        environment variable ``EVALSUITE_DATA_DIR``, else ``~/.evalsuite``. Created if missing.
    schema : str or None
        PostgreSQL only: a schema to keep the tables in (created if missing; lower-case letters,
        digits and ``_``); None for the connection's ``search_path`` (usually ``public``).
    max_dataset_bytes, max_workspace_bytes : int
        Size caps: bytes of one dataset, and of a workspace's distinct datasets together.
        Default 50 MiB and 200 MiB.
    default_expiry_days : float or None
        Days a workspace is kept when saved without ``expires_in_days``; None keeps it until
        its owner deletes it.
    orphan_grace_seconds : float
        How long a dataset that no workspace refers to is kept after it was last put (default
        600 s).
    clock : callable
        Seconds since the epoch, ``time.time`` by default; tests pass a controllable clock.

    Returns
    -------
    Store

    Raises
    ------
    StoreError
        ``"invalid_argument"`` for a URL of another kind or a bad setting; ``"unavailable"`` when
        the database cannot be reached, created or is of a newer schema; ``"corrupt"`` when the
        SQLite file is damaged or is not a SQLite database.
    """
    max_dataset_bytes = _check_cap(max_dataset_bytes, "max_dataset_bytes", HARD_MAX_DATASET_BYTES)
    max_workspace_bytes = _check_cap(max_workspace_bytes, "max_workspace_bytes", 2**53)
    default_expiry_days = _check_days(default_expiry_days, "default_expiry_days")
    if (isinstance(orphan_grace_seconds, bool) or not isinstance(orphan_grace_seconds, (int, float))
            or not 0 <= orphan_grace_seconds < math.inf):
        raise StoreError("orphan_grace_seconds is a number of seconds, 0 or more",
                         code="invalid_argument", field="orphan_grace_seconds", value=orphan_grace_seconds)
    if schema is not None and (not isinstance(schema, str) or not _SCHEMA_PATTERN.fullmatch(schema)):
        raise StoreError("a schema name is lower-case letters, digits and '_' (at most 63, not "
                         "starting with a digit)", code="invalid_argument", field="schema", value=schema)
    backend: Any
    if url is None or (isinstance(url, str) and url.startswith("sqlite:")):
        if schema is not None:
            raise StoreError("schema applies to a PostgreSQL store only", code="invalid_argument",
                             field="schema", value=schema)
        if url is None:
            directory = data_dir if data_dir is not None else (os.environ.get("EVALSUITE_DATA_DIR")
                                                               or "~/.evalsuite")
            path = Path(directory).expanduser() / SQLITE_FILENAME
        else:
            rest = url[len("sqlite:"):]
            if not rest.startswith("///") or len(rest) == 3 or rest[3:] == ":memory:":
                raise StoreError("a SQLite store URL is sqlite:///relative/file.db or "
                                 "sqlite:////absolute/file.db", code="invalid_argument",
                                 field="url", value=url)
            path = Path(rest[3:]).expanduser()
        backend = _SQLiteBackend(path.absolute())
    elif isinstance(url, str) and url.split("://", 1)[0] in ("postgresql", "postgres") and "://" in url:
        backend = _PostgresBackend(url, schema)
    else:
        shown = _redact_url(url) if isinstance(url, str) else url
        raise StoreError("a store URL starts with sqlite:///, postgresql:// or postgres://",
                         code="invalid_argument", field="url", value=shown)
    try:
        backend.initialise()
    except sqlite3.Error as exc:
        if _sqlite_damaged(exc):
            raise StoreError(f"cannot open the workspace store: {_sqlite_damaged_message(backend.path, exc)}",
                             code="corrupt") from None
        raise StoreError(f"cannot open the SQLite workspace store at {backend.location}: {exc}",
                         code="unavailable") from None
    except OSError as exc:
        raise StoreError(f"cannot create the workspace store directory for {backend.location}: "
                         f"{exc.strerror or exc}", code="unavailable") from None
    return Store(backend, max_dataset_bytes=max_dataset_bytes, max_workspace_bytes=max_workspace_bytes,
                 default_expiry_days=default_expiry_days, clock=clock,
                 orphan_grace_seconds=float(orphan_grace_seconds))


# Setting name -> (environment variable, key in the [evalsuite] section of Streamlit secrets).
_SETTINGS = {
    "url": ("EVALSUITE_STORE_URL", "store_url"),
    "schema": ("EVALSUITE_STORE_SCHEMA", "store_schema"),
    "data_dir": ("EVALSUITE_DATA_DIR", "data_dir"),
    "max_dataset_mb": ("EVALSUITE_MAX_DATASET_MB", "max_dataset_mb"),
    "max_workspace_mb": ("EVALSUITE_MAX_WORKSPACE_MB", "max_workspace_mb"),
    "default_expiry_days": ("EVALSUITE_DEFAULT_EXPIRY_DAYS", "default_expiry_days"),
}


def open_store_from_config(secrets: Mapping[str, Any] | None = None,
                           environ: Mapping[str, str] | None = None) -> Store:
    """Open the store a deployment is configured for, from environment variables or secrets.

    Each setting is read from its environment variable if set, else from the ``[evalsuite]``
    section of ``secrets`` (pass ``st.secrets``; a missing secrets file counts as empty), else
    its default (``docs/hosting.md`` has the same list for operators):

    - ``EVALSUITE_STORE_URL`` / ``store_url``: a store URL as :func:`open_store` takes
      (default: SQLite in the data directory);
    - ``EVALSUITE_STORE_SCHEMA`` / ``store_schema``: PostgreSQL schema (default: search_path);
    - ``EVALSUITE_DATA_DIR`` / ``data_dir``: SQLite directory (default ``~/.evalsuite``);
    - ``EVALSUITE_MAX_DATASET_MB`` / ``max_dataset_mb``: cap per dataset in MiB (default 50);
    - ``EVALSUITE_MAX_WORKSPACE_MB`` / ``max_workspace_mb``: cap per workspace in MiB (200);
    - ``EVALSUITE_DEFAULT_EXPIRY_DAYS`` / ``default_expiry_days``: days a workspace is kept
      when saved without an expiry (default: until deleted).

    Parameters
    ----------
    secrets : mapping or None
        ``st.secrets`` or any mapping with an ``"evalsuite"`` section.
    environ : mapping or None
        Environment variables; default ``os.environ``.

    Returns
    -------
    Store

    Raises
    ------
    StoreError
        As :func:`open_store`; a setting that is not a number names where it came from.
    """
    environ = os.environ if environ is None else environ
    section: Mapping[str, Any] = {}
    if secrets is not None:
        try:
            found = secrets.get("evalsuite") if hasattr(secrets, "get") else None
        except (FileNotFoundError, KeyError):  # Streamlit raises FileNotFoundError with no secrets.toml
            found = None
        if isinstance(found, Mapping):
            section = found

    def setting(name: str) -> tuple[Any, str]:
        env_name, key = _SETTINGS[name]
        if environ.get(env_name, "").strip():
            return environ[env_name].strip(), f"environment variable {env_name}"
        value = section.get(key)
        return (value.strip() if isinstance(value, str) else value), f"secrets [evalsuite] {key}"

    def number(name: str) -> float | None:
        value, where = setting(name)
        if value is None or value == "":
            return None
        try:
            result = float(value)
        except (TypeError, ValueError):
            raise StoreError("this setting must be a number", code="invalid_argument", source=where,
                             value=value) from None
        if not math.isfinite(result) or result <= 0:
            raise StoreError("this setting must be a number above 0", code="invalid_argument",
                             source=where, value=value)
        return result

    url, _ = setting("url")
    schema, _ = setting("schema")
    data_dir, _ = setting("data_dir")
    dataset_mb = number("max_dataset_mb")
    workspace_mb = number("max_workspace_mb")
    return open_store(
        url or None, data_dir=data_dir or None, schema=schema or None,
        max_dataset_bytes=DEFAULT_MAX_DATASET_BYTES if dataset_mb is None else int(dataset_mb * MIB),
        max_workspace_bytes=DEFAULT_MAX_WORKSPACE_BYTES if workspace_mb is None else int(workspace_mb * MIB),
        default_expiry_days=number("default_expiry_days"))
