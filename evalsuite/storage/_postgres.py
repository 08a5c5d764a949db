"""The PostgreSQL backend of the workspace store, through psycopg 3: for hosts whose disk does not
last, or several app instances. psycopg is imported when such a store is opened, never before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ._model import StoreError, _redact_url, server_error
from ._schema import _FETCH_BLOB, _create_schema


class _PostgresBackend:
    """The workspace store in a PostgreSQL database (``schema``, or the connection's search_path)."""

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
            raise server_error("cannot connect to the workspace store", code="unavailable",
                               detail=f"PostgreSQL at {_redact_url(self.url)}: {str(exc).strip()}") from None
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
            cursor.execute(self._q(_FETCH_BLOB), (digest,))
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
                _create_schema(self, conn, int_type="BIGINT", real_type="DOUBLE PRECISION",
                               blob_type="BYTEA")
        except self._psycopg.Error as exc:
            raise server_error("cannot set up the workspace store", code="unavailable",
                               detail=f"PostgreSQL at {self.location}: {str(exc).strip()}") from None
        finally:
            conn.close()

    def database_error(self, exc: BaseException, doing: str) -> StoreError:
        """The StoreError for a psycopg error other than an OperationalError or InterfaceError."""
        # The server's message names tables and values, never the password; location hides it.
        errors = self._psycopg.errors
        if isinstance(exc, (errors.DataCorrupted, errors.IndexCorrupted)):
            return server_error(f"cannot {doing}: the workspace store reports damaged data", code="corrupt",
                                detail=f"PostgreSQL at {self.location}: {str(exc).strip()}")
        return server_error(f"cannot {doing}: the workspace store failed", code="unavailable",
                            detail=f"PostgreSQL at {self.location}: {str(exc).strip()}")

    @staticmethod
    def extra_checks(conn: Any) -> list[str]:
        return []
