"""Human labels in the store: labelling tasks and the labels people give in them (a mixin of
:class:`~evalsuite.storage.Store`).

A *labelling task* is a records file (stored once by its SHA-256, like a workspace's datasets), a
judged metric, the systems whose records are labelled, and how the next record is chosen (active
or uniform, with the seed that fixes the order for every labeller). It lives under a random id like
a workspace's, so a link opens it in any browser and on any server that reaches the same store.

A *label* is one person's yes (1), no (0) or skip (NULL) for one record (query id, system) of a
task, with who gave it and when. Each label is one transaction, written the moment it is given: a
reload, a second browser or a server restart loses nothing. A person's second answer for the same
record replaces the first (one row per task, record and labeller).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ._model import (
    _MAX_FILENAME_CHARS,
    _MAX_NAME_CHARS,
    _MAX_SYSTEM_CHARS,
    StoreError,
    _check_digest,
    _check_text,
    _meta_json,
    _utc,
    check_workspace_id,
    new_workspace_id,
)

__all__ = ["LABEL_MODES", "LabelTask", "Label"]

LABEL_MODES = ("active", "uniform")
_MAX_SYSTEMS = 1000
_MAX_QUERY_ID_CHARS = 2000
_TASK_COLUMNS = ("task_id, name, owner_id, created_by, created_at, digest, filename, judgement, systems_json, mode, "
                 "seed, meta_json")


@dataclass(frozen=True)
class LabelTask:
    """A labelling task as the store keeps it.

    Attributes
    ----------
    task_id : str
        The 36-character id in its links.
    name : str
    owner_id : str or None
        The signed-in user who made it (None when sign-in was off).
    created_by : str
        How its maker was shown (name or e-mail address).
    created_at : datetime
    digest, filename : str
        The records file: SHA-256 of its bytes (stored as a dataset) and its name.
    judgement : str
        The judged metric whose value is the judge's verdict (``faithfulness`` ...).
    systems : tuple of str
        The systems whose records are labelled.
    mode : {"active", "uniform"}
        Active statistical inference or a uniform random order.
    seed : int
        Seed of the order (the same for every labeller).
    meta : dict
        JSON values kept with it (the question asked, the mix of the sampling weights ...).
    """

    task_id: str
    name: str
    owner_id: str | None
    created_by: str
    created_at: datetime
    digest: str
    filename: str
    judgement: str
    systems: tuple[str, ...]
    mode: str
    seed: int
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Label:
    """One person's answer for one record of a task: ``label`` 1 (yes), 0 (no) or None (skipped)."""

    task_id: str
    query_id: str
    system: str
    labeller_id: str
    labeller: str
    label: int | None
    labelled_at: datetime


def check_task_id(value: Any) -> str:
    """``value`` if it is a well-formed task id (the workspace id format); :class:`StoreError` if not."""
    try:
        return check_workspace_id(value)
    except StoreError as exc:
        raise StoreError(exc.reason.replace("workspace", "labelling task").replace("share link", "task link"),
                         code=exc.code, field="task_id", value=value) from None


def _check_label(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    raise StoreError("a label is 1 (yes), 0 (no) or None (skipped)", code="invalid_argument", field="label",
                     value=value)


def _task(row: Sequence[Any]) -> LabelTask:
    return LabelTask(row[0], row[1], row[2], row[3], _utc(row[4]), row[5], row[6], row[7],
                     tuple(json.loads(row[8])), row[9], int(row[10]), json.loads(row[11]))


class LabelOps:
    """Labelling tasks and their labels."""

    def create_label_task(self, name: str, *, digest: str, filename: str, judgement: str, systems: Sequence[str],
                          mode: str, seed: int, created_by: str, owner_id: str | None = None,
                          meta: dict | None = None) -> LabelTask:
        """Save a labelling task over a records file already stored with :meth:`put_dataset`.

        Parameters
        ----------
        name : str
            For people (1 to 200 characters, no control characters).
        digest, filename : str
            The records file's SHA-256 (from :meth:`put_dataset`) and name.
        judgement : str
            The judged metric.
        systems : sequence of str
            1 to 1,000 systems, no repeats.
        mode : {"active", "uniform"}
        seed : int >= 0
        created_by : str
            How its maker is shown.
        owner_id : str or None
            The signed-in user making it.
        meta : dict or None
            JSON values (at most 64 KiB as JSON).

        Returns
        -------
        LabelTask
            With its new random ``task_id``.

        Raises
        ------
        StoreError
            ``"missing_dataset"`` when the records file is not stored; ``"invalid_argument"``;
            ``"unavailable"``.
        """
        name = _check_text(name, "name", _MAX_NAME_CHARS)
        digest = _check_digest(digest)
        filename = _check_text(filename, "filename", _MAX_FILENAME_CHARS)
        judgement = _check_text(judgement, "judgement", _MAX_NAME_CHARS)
        created_by = _check_text(created_by, "created_by", _MAX_NAME_CHARS)
        if owner_id is not None:
            owner_id = _check_text(owner_id, "owner_id", _MAX_NAME_CHARS)
        if isinstance(systems, str) or not isinstance(systems, Sequence) or not 0 < len(systems) <= _MAX_SYSTEMS:
            raise StoreError(f"systems is a list of 1 to {_MAX_SYSTEMS} names", code="invalid_argument",
                             field="systems", value=systems)
        systems = [_check_text(s, "system", _MAX_SYSTEM_CHARS) for s in systems]
        if len(set(systems)) != len(systems):
            raise StoreError("a system appears twice", code="invalid_argument", field="systems", value=systems)
        if mode not in LABEL_MODES:
            raise StoreError(f"mode is one of {', '.join(LABEL_MODES)}", code="invalid_argument", field="mode",
                             value=mode)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**62:
            raise StoreError("seed is an integer >= 0", code="invalid_argument", field="seed", value=seed)
        meta_text = _meta_json(meta)
        task_id = new_workspace_id()
        now = self._clock()
        with self._transaction(write=True, doing="save a labelling task") as conn:
            if self._sql(conn, "SELECT 1 FROM evalsuite_datasets WHERE digest = ?", (digest,)).fetchone() is None:
                raise StoreError("the records file of this task is not stored: put it first", code="missing_dataset",
                                 field="digest", value=digest)
            self._sql(conn, f"INSERT INTO evalsuite_label_tasks ({_TASK_COLUMNS}) VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (task_id, name, owner_id, created_by, now, digest, filename, judgement,
                       json.dumps(systems, ensure_ascii=False), mode, seed, meta_text))
        return LabelTask(task_id, name, owner_id, created_by, _utc(now), digest, filename, judgement, tuple(systems),
                         mode, seed, json.loads(meta_text))

    def label_task(self, task_id: str) -> LabelTask:
        """The task saved under ``task_id``.

        Raises
        ------
        StoreError
            ``"malformed_id"`` / ``"damaged_id"`` for a value that is not a task id;
            ``"unknown_task"`` when none is saved under it; ``"unavailable"``.
        """
        task_id = check_task_id(task_id)
        with self._transaction(write=False, doing="open a labelling task") as conn:
            row = self._sql(conn, f"SELECT {_TASK_COLUMNS} FROM evalsuite_label_tasks WHERE task_id = ?",
                            (task_id,)).fetchone()
        if row is None:
            raise StoreError("no labelling task is saved under this id (check the link)", code="unknown_task",
                             field="task_id", value=task_id)
        return _task(row)

    def label_tasks(self, *, owner_id: str | None = None, task_ids: Iterable[str] = ()) -> list[LabelTask]:
        """Tasks owned by ``owner_id`` and tasks of the given ids (ids that are malformed or unknown
        are left out), newest first."""
        ids = []
        for value in task_ids:
            try:
                ids.append(check_task_id(value))
            except StoreError:
                continue
        if owner_id is None and not ids:
            return []
        where, params = [], []
        if owner_id is not None:
            where.append("owner_id = ?")
            params.append(owner_id)
        if ids:
            where.append(f"task_id IN ({', '.join('?' * len(ids))})")
            params.extend(ids)
        with self._transaction(write=False, doing="list labelling tasks") as conn:
            rows = self._sql(conn, f"SELECT {_TASK_COLUMNS} FROM evalsuite_label_tasks WHERE {' OR '.join(where)} "
                                   "ORDER BY created_at DESC, task_id", params).fetchall()
        return [_task(r) for r in rows]

    def put_label(self, task_id: str, query_id: str, system: str, *, labeller_id: str, labeller: str,
                  label: int | None) -> Label:
        """Write one person's answer for one record, now (replacing their earlier answer for it).

        Parameters
        ----------
        task_id : str
        query_id, system : str
            The record.
        labeller_id, labeller : str
            Who answers (the signed-in user's id, or the name typed) and how they are shown.
        label : 1, 0, True, False or None
            Yes, no, or skipped.

        Returns
        -------
        Label

        Raises
        ------
        StoreError
            ``"unknown_task"``; ``"invalid_argument"`` (a system not in the task, a bad label or
            text); ``"unavailable"``.
        """
        return self.put_labels(task_id, [(query_id, system, label)], labeller_id=labeller_id, labeller=labeller)[0]

    def put_labels(self, task_id: str, rows: Sequence[tuple[str, str, int | None]], *, labeller_id: str,
                   labeller: str) -> list[Label]:
        """:meth:`put_label` for many records of one labeller in one transaction (an import):
        ``rows`` of ``(query_id, system, label)``; all are written or none."""
        task = self.label_task(task_id)
        labeller_id = _check_text(labeller_id, "labeller_id", _MAX_NAME_CHARS)
        labeller = _check_text(labeller, "labeller", _MAX_NAME_CHARS)
        checked = []
        for query_id, system, label in rows:
            query_id = _check_text(query_id, "query_id", _MAX_QUERY_ID_CHARS)
            if system not in task.systems:
                raise StoreError("this system is not one of the task's", code="invalid_argument", field="system",
                                 value=system)
            checked.append((query_id, system, _check_label(label)))
        now = self._clock()
        with self._transaction(write=True, doing="save a label") as conn:
            for query_id, system, label in checked:
                self._sql(conn, "INSERT INTO evalsuite_labels (task_id, query_id, system, labeller_id, labeller, label, "
                                "labelled_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, query_id, system, "
                                "labeller_id) DO UPDATE SET label = excluded.label, labeller = excluded.labeller, "
                                "labelled_at = excluded.labelled_at",
                          (task.task_id, query_id, system, labeller_id, labeller, label, now))
        return [Label(task.task_id, q, s, labeller_id, labeller, lab, _utc(now)) for q, s, lab in checked]

    def labels(self, task_id: str) -> list[Label]:
        """Every label of a task, in the order they were given."""
        task_id = check_task_id(task_id)
        with self._transaction(write=False, doing="read labels") as conn:
            rows = self._sql(conn, "SELECT task_id, query_id, system, labeller_id, labeller, label, labelled_at FROM "
                                   "evalsuite_labels WHERE task_id = ? ORDER BY labelled_at, query_id, system, "
                                   "labeller_id", (task_id,)).fetchall()
        return [Label(r[0], r[1], r[2], r[3], r[4], None if r[5] is None else int(r[5]), _utc(r[6])) for r in rows]
