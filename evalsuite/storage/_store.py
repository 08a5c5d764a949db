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

Guarantees (the tests in ``tests/test_storage.py`` pin each on both backends):

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

For a hosted dashboard the store also keeps who saved a workspace (its owner, with sign-in), the
audit log of judge runs and the bytes uploaded per user and day, and applies the per-user limits of
:mod:`evalsuite.hosting` in the same transactions as the writes they allow (``_usage``).

The Store's operations are spread over modules by idea: datasets, transactions and upkeep here,
workspaces in ``_workspaces``, usage in ``_usage``, labelling tasks and human labels in
``_labels``, the connection pool in ``_pool``.

Every problem raises :class:`StoreError`, an :class:`~evalsuite.errors.EvalSuiteError` whose
``code`` tells a program which case it is (``"deleted"``, ``"expired"``, ``"too_large"`` ...) and
whose message says it to a person. No module of ``evalsuite.storage`` imports streamlit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ._model import (
    DEFAULT_ORPHAN_GRACE_SECONDS,
    _MAX_FILENAME_CHARS,
    PurgeResult,
    StoreError,
    StoreUsage,
    _check_digest,
    _check_kind,
    _check_text,
    _format_size,
    server_error,
)
from ._pool import _Pool
from ._labels import LabelOps
from ._schema import _GC_ORPHANS
from ._usage import UsageOps
from ._workspaces import WorkspaceOps

__all__ = ["Store"]


class Store(WorkspaceOps, UsageOps, LabelOps):
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
            raise server_error("the workspace store cannot be used right now", code="unavailable",
                               detail=f"{self.location}: {str(exc).strip()}") from exc
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
