"""The workspace operations of the store: save, open, delete and list workspaces (a mixin of
:class:`~evalsuite.storage.Store`, which supplies the connection, transaction and clock)."""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import shorten
from ._model import (
    MAX_DATASETS_PER_WORKSPACE,
    MAX_LISTED_IDS,
    _MAX_NAME_CHARS,
    DatasetRef,
    SavedWorkspace,
    StoreError,
    Workspace,
    WorkspaceSummary,
    _check_count,
    _check_days,
    _check_text,
    _check_token,
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


class WorkspaceOps:
    """Save, open, delete and list workspaces."""

    def save_workspace(self, name: str, datasets: Sequence[DatasetRef], *,
                       expires_in_days: float | None = None,
                       meta: Mapping[str, Any] | None = None, owner_id: str | None = None,
                       max_owned: int | None = None) -> SavedWorkspace:
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
        owner_id : str or None
            The signed-in user saving it (:func:`evalsuite.hosting.user_id`): they can list and
            delete it from any session without the token.
        max_owned : int or None
            Refuse when ``owner_id`` already keeps this many active workspaces (checked in the
            same transaction, so two sessions cannot both pass it).

        Returns
        -------
        SavedWorkspace
            ``workspace_id`` (for the link), ``owner_token`` (for deleting; shown once, kept only
            as a hash) and the ``workspace``.

        Raises
        ------
        StoreError
            ``"missing_dataset"`` when a reference's digest is not stored; ``"too_large"`` when the
            distinct datasets together exceed ``max_workspace_bytes``; ``"limit_reached"`` when the
            owner keeps ``max_owned`` workspaces; ``"invalid_argument"``; ``"unavailable"``.
            Nothing is written in any of these cases.
        """
        name = _check_text(name, "name", _MAX_NAME_CHARS)
        if owner_id is not None:
            owner_id = _check_text(owner_id, "owner_id", _MAX_NAME_CHARS)
        if max_owned is not None:
            max_owned = _check_count(max_owned, "max_owned", 10**9)
        if isinstance(datasets, (str, bytes)) or not isinstance(datasets, Sequence):
            raise StoreError("datasets is a list of DatasetRef", code="invalid_argument",
                             field="datasets", value=type(datasets).__name__)
        if len(datasets) > MAX_DATASETS_PER_WORKSPACE:  # before copying a huge sequence
            raise StoreError(f"a workspace holds at most {MAX_DATASETS_PER_WORKSPACE} datasets, "
                             f"not {len(datasets)}", code="invalid_argument", field="datasets", value=None)
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
                if owner_id is not None and max_owned is not None:
                    self._lock_quota(conn, owner_id)
                    held = self._count_owned(conn, owner_id)
                    if held >= max_owned:
                        from ..hosting import Limits, check_workspace_count

                        raise StoreError(check_workspace_count(Limits(workspaces_per_user=max_owned), held),
                                         code="limit_reached")
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
                self._sql(conn, "INSERT INTO evalsuite_workspaces (workspace_id, owner_token_sha256, owner_id, "
                                "name, meta_json, evalsuite_version, total_bytes, created_at, expires_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          (workspace_id, _token_hash(owner_token), owner_id, name, meta_text, version, total, now,
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
                              meta=json.loads(meta_text), evalsuite_version=version, owner_id=owner_id)
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
                                  "expires_at, deleted_at, deleted_reason, owner_id FROM evalsuite_workspaces "
                                  "WHERE workspace_id = ?", (workspace_id,)).fetchone()
            refs = self._sql(conn, "SELECT digest, kind, filename, system, format FROM "
                                   "evalsuite_workspace_datasets WHERE workspace_id = ? ORDER BY position",
                             (workspace_id,)).fetchall()
        if row is None:
            raise StoreError("no workspace with this id is stored here: the link may be mistyped, or "
                             "it was made on a server with another store", code="unknown_workspace",
                             field="workspace_id", value=workspace_id)
        name, meta_text, version, total, created_at, expires_at, deleted_at, reason, owner_id = row
        if deleted_at is not None:
            raise self._gone(workspace_id, deleted_at, reason, expires_at)
        if expires_at is not None and expires_at <= self._clock():
            raise self._gone(workspace_id, None, "expired", expires_at)
        return Workspace(
            workspace_id=workspace_id, name=name,
            datasets=tuple(DatasetRef(digest=r[0], kind=r[1], filename=r[2], system=r[3], format=r[4])
                           for r in refs),
            total_bytes=int(total), created_at=_utc(created_at), expires_at=_utc(expires_at),
            meta=json.loads(meta_text), evalsuite_version=version, owner_id=owner_id)

    def delete_workspace(self, workspace_id: str, owner_token: str | None = None, *,
                         owner_id: str | None = None) -> None:
        """Delete a workspace; its links then answer that it was deleted.

        The workspace's row stays as a tombstone without its name, metadata or references, so a
        link to it says "deleted" rather than "unknown". Datasets no other workspace refers to are
        removed in the same transaction (those put within the last ``orphan_grace_seconds`` are
        left for :meth:`purge_expired`, as another session may be about to use them). Deleting an
        already deleted workspace with its owner token does nothing.

        Parameters
        ----------
        workspace_id : str
        owner_token : str or None
            The token :meth:`save_workspace` returned with it.
        owner_id : str or None
            Instead of the token: the signed-in user who saved it.

        Raises
        ------
        StoreError
            ``"wrong_token"`` when neither ``owner_token`` nor ``owner_id`` is the workspace's
            (nothing changes);
            ``"malformed_id"``, ``"damaged_id"``, ``"unknown_workspace"``, ``"unavailable"``.
        """
        workspace_id = check_workspace_id(workspace_id)
        owner_token = _check_token(owner_token)
        if owner_id is not None and owner_id != "":
            owner_id = _check_text(owner_id, "owner_id", _MAX_NAME_CHARS)
        if owner_token is None and not owner_id:
            raise StoreError("the owner token is the text save_workspace returned",
                             code="wrong_token", field="owner_token", value=None)
        now = self._clock()
        with self._transaction(write=True, doing="delete a workspace") as conn:
            row = self._sql(conn, "SELECT owner_token_sha256, deleted_at, owner_id FROM evalsuite_workspaces "
                                  "WHERE workspace_id = ?", (workspace_id,)).fetchone()
            if row is None:
                raise StoreError("no workspace with this id is stored here", code="unknown_workspace",
                                 field="workspace_id", value=workspace_id)
            by_token = owner_token is not None and hmac.compare_digest(_token_hash(owner_token), row[0])
            # Compared as bytes: compare_digest refuses str with characters past ASCII.
            by_owner = bool(owner_id) and row[2] is not None and hmac.compare_digest(
                owner_id.encode("utf-8"), str(row[2]).encode("utf-8"))
            if not (by_token or by_owner):
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
        if not isinstance(workspace_ids, (list, tuple)) or len(workspace_ids) > MAX_LISTED_IDS:
            raise StoreError(f"workspace_ids is a list of at most {MAX_LISTED_IDS:,} workspace ids",
                             code="invalid_argument", field="workspace_ids",
                             value=len(workspace_ids) if isinstance(workspace_ids, (list, tuple)) else
                             type(workspace_ids).__name__)
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
                summaries.append(WorkspaceSummary(workspace_id=value if isinstance(value, str) else shorten(value),
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

    def _count_owned(self, conn: Any, owner_id: str) -> int:
        """Active (not deleted, not expired) workspaces of ``owner_id``, in the caller's transaction."""
        row = self._sql(conn, "SELECT COUNT(*) FROM evalsuite_workspaces WHERE owner_id = ? AND deleted_at IS NULL "
                              "AND (expires_at IS NULL OR expires_at > ?)", (owner_id, self._clock())).fetchone()
        return int(row[0])

    def owned_workspaces(self, owner_id: str) -> list[WorkspaceSummary]:
        """The active workspaces a signed-in user saved, newest first (for their Data page).

        Only the owner's own id lists them; nobody can list another user's workspaces.

        Returns
        -------
        list of WorkspaceSummary
        """
        owner_id = _check_text(owner_id, "owner_id", _MAX_NAME_CHARS)
        with self._transaction(write=False, doing="list a user's workspaces") as conn:
            ids = [row[0] for row in self._sql(
                conn, "SELECT workspace_id FROM evalsuite_workspaces WHERE owner_id = ? AND deleted_at IS NULL "
                      "AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC",
                (owner_id, self._clock())).fetchall()]
        return self.list_workspaces(ids) if ids else []
