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

Every problem raises :class:`StoreError`, an :class:`~evalsuite.errors.EvalSuiteError` whose
``code`` tells a program which case it is (``"deleted"``, ``"expired"``, ``"too_large"`` ...) and
whose message says it to a person. No module of ``evalsuite.storage`` imports streamlit.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ._model import (
    DEFAULT_ORPHAN_GRACE_SECONDS,
    MAX_DATASETS_PER_WORKSPACE,
    _MAX_FILENAME_CHARS,
    _MAX_NAME_CHARS,
    DatasetRef,
    PurgeResult,
    SavedWorkspace,
    StoreError,
    StoreUsage,
    Workspace,
    WorkspaceSummary,
    _check_days,
    _check_digest,
    _check_kind,
    _check_text,
    _evalsuite_version,
    _format_size,
    _meta_json,
    _token_hash,
    _utc,
    _when,
    check_workspace_id,
    new_workspace_id,
)
from ._schema import _GC_ORPHANS

__all__ = ["Store"]


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
