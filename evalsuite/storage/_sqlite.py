"""The SQLite backend of the workspace store: a file in a data directory (the standard library's
``sqlite3``), created on first use; the default, nothing to install.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._model import StoreError, server_error
from ._schema import _FETCH_BLOB, _create_schema

SQLITE_FILENAME = "workspaces.sqlite3"

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
    """For the operator's log: the file and what SQLite said."""
    return (f"the SQLite file {path} is damaged or is not a SQLite database ({str(exc).strip()}); restore it "
            "from a backup, or move it aside to start an empty store")


class _SQLiteBackend:
    """The workspace store in the SQLite file ``path``."""

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
        row = self.execute(conn, _FETCH_BLOB, (digest,)).fetchone()
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
        """Create the directory (OSError if it cannot be made) and the tables, if missing.

        A sqlite3 error leaves as a StoreError: ``"corrupt"`` for a damaged file or one that is not
        a SQLite database, ``"unavailable"`` for any other.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            conn = self.connect()
            try:
                # WAL: readers never block the writer; the setting is kept in the file.
                self._set_wal(conn)
                with self.transaction(conn, write=True):
                    _create_schema(self, conn, int_type="INTEGER", real_type="REAL", blob_type="BLOB")
            finally:
                conn.close()
        except sqlite3.Error as exc:
            if _sqlite_damaged(exc):
                raise self.database_error(exc, "open the workspace store") from None
            raise server_error("cannot open the workspace store", code="unavailable",
                               detail=f"SQLite file {self.location}: {exc}") from None

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL, waiting up to the busy timeout for other processes: SQLite
        answers "database is locked" at once, without its busy handler, when another connection
        holds a lock while the journal mode changes (two servers creating one store at once)."""
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def database_error(self, exc: BaseException, doing: str) -> StoreError:
        """The StoreError for a sqlite3 error other than an OperationalError."""
        if _sqlite_damaged(exc):
            return server_error(f"cannot {doing}: the workspace store is damaged; its operator must restore it",
                                code="corrupt", detail=_sqlite_damaged_message(self.path, exc))
        return server_error(f"cannot {doing}: the workspace store failed", code="unavailable",
                            detail=f"SQLite file {self.path}: {str(exc).strip()}")

    def extra_checks(self, conn: sqlite3.Connection) -> list[str]:
        problems = []
        result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if result != ["ok"]:
            problems.append(f"SQLite integrity_check: {'; '.join(map(str, result))}")
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
            problems.append(f"row {rowid} of {table} refers to a missing row of {parent}")
        return problems
