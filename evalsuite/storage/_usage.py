"""Usage kept in the store for a hosted dashboard: the audit log of judge runs (who, when, model,
endpoint, requests, tokens, cost, outcome), the budget a running run holds, and bytes uploaded per
user and day (a mixin of :class:`~evalsuite.storage.Store`).

Every check of a limit and the write it allows happen in one transaction that first updates the
user's row of ``evalsuite_quota_locks`` (and the row ``'*'`` for limits of all users together), so
concurrent sessions or app instances of the same user wait for each other there instead of both
passing a limit that only one of them may pass. The decisions themselves are those of
:mod:`evalsuite.hosting`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from collections.abc import Mapping
from typing import Any

from ..hosting import Limits, admit_judge_run, check_upload, utc_day_start
from ._model import (
    _MAX_NAME_CHARS, StoreError, _check_amount, _check_count, _check_run_id, _check_text, _short_text, _utc,
)

__all__ = ["JudgeRun", "STALE_RUN_SECONDS"]

# A running run reports at least every 15 s (the dashboard's heartbeat); one silent for longer
# than this was left by a server that stopped, and no longer counts as running.
STALE_RUN_SECONDS = 120.0
OUTCOMES = ("running", "done", "budget", "cancelled", "error", "abandoned")
_COLUMNS = ("run_id, user_id, user_label, started_at, updated_at, finished_at, model, endpoint, origin, records, "
            "requests, cache_hits, prompt_tokens, completion_tokens, cost, reserved, outcome, message")


@dataclass(frozen=True)
class JudgeRun:
    """One judge run of the audit log.

    Attributes
    ----------
    run_id : str
    user_id, user_label : str
        Who started it (:func:`evalsuite.hosting.user_id` or a session's id) and how they are shown
        (their e-mail address or name when signed in, ``anonymous`` otherwise).
    started_at, updated_at : datetime
    finished_at : datetime or None
    model, endpoint : str
        Model id and the endpoint's host and port (never a key or path).
    origin : {"operator", "typed"}
        The operator's endpoint, or one the visitor typed.
    records, requests, cache_hits, prompt_tokens, completion_tokens : int
    cost : float
        In the estimate's currency, from the operator's prices.
    reserved : float
        The budget held while it runs (0 once it ended).
    outcome : str
        ``running``, ``done``, ``budget`` (stopped by its budget), ``cancelled``, ``error`` or
        ``abandoned`` (the server stopped during the run; cost as of its last report).
    message : str
    """

    run_id: str
    user_id: str
    user_label: str
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    model: str
    endpoint: str
    origin: str
    records: int
    requests: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    reserved: float
    outcome: str
    message: str


def _day(seconds: float) -> str:
    return _utc(seconds).strftime("%Y-%m-%d")


class UsageOps:
    """The judge-run audit log, budgets held by running runs, and daily upload bytes."""

    def _lock_quota(self, conn: Any, user_id: str) -> None:
        """Wait for (and hold until the transaction ends) the quota row of ``user_id``."""
        self._sql(conn, "INSERT INTO evalsuite_quota_locks (user_id, checks) VALUES (?, 0) "
                        "ON CONFLICT (user_id) DO NOTHING", (user_id,))
        self._sql(conn, "UPDATE evalsuite_quota_locks SET checks = checks + 1 WHERE user_id = ?", (user_id,))

    def _abandon_stale_runs(self, conn: Any, now: float) -> None:
        self._sql(conn, "UPDATE evalsuite_judge_runs SET outcome = 'abandoned', finished_at = updated_at, "
                        "reserved = 0, message = 'the server stopped during the run; cost as of its last report' "
                        "WHERE outcome = 'running' AND updated_at < ?", (now - STALE_RUN_SECONDS,))

    def begin_judge_run(self, *, user_id: str, user_label: str, model: str, endpoint: str, origin: str,
                        records: int, limits: Limits | None = None, run_budget: float | None = None) -> tuple[str, float | None]:
        """Admit a judge run under ``limits`` and enter it in the audit log as running.

        In one transaction (holding the user's and everyone's quota rows): runs silent for more
        than :data:`STALE_RUN_SECONDS` are marked abandoned; the user's and all users' running runs
        and today's spend (cost of today's runs plus the budgets running runs hold, operator
        endpoint only) are counted; :func:`evalsuite.hosting.admit_judge_run` decides; an admitted
        run is written with the budget it may spend reserved.

        Parameters
        ----------
        user_id, user_label : str
        model, endpoint : str
            Model id and endpoint host:port.
        origin : {"operator", "typed"}
        records : int
            Records to judge.
        limits : Limits or None
            None: no limit (the run is only logged).
        run_budget : float or None
            The operator's per-run budget.

        Returns
        -------
        (str, float or None)
            The run id and the budget the run may spend (None: no limit).

        Raises
        ------
        StoreError
            ``"limit_reached"`` with the reason as message (nothing written);
            ``"invalid_argument"``; ``"unavailable"``.
        """
        user_id = _check_text(user_id, "user_id", _MAX_NAME_CHARS)
        user_label, model, endpoint = (_short_text(v, n) for v, n in ((user_label, "user_label"), (model, "model"),
                                                                        (endpoint, "endpoint")))
        records = _check_count(records, "records")
        if run_budget is not None:
            run_budget = _check_amount(run_budget, "run_budget")
        if limits is not None and not isinstance(limits, Limits):
            raise StoreError("limits is an evalsuite.hosting.Limits", code="invalid_argument", field="limits",
                             value=type(limits).__name__)
        if not isinstance(origin, str) or origin not in ("operator", "typed"):
            raise StoreError("origin is 'operator' or 'typed'", code="invalid_argument", field="origin",
                             value=origin if isinstance(origin, str) else type(origin).__name__)
        limits = limits or Limits(judge_runs_at_once=None, judge_runs_at_once_total=None)
        run_id = secrets.token_hex(12)
        now = self._clock()
        with self._transaction(write=True, doing="start a judge run") as conn:
            self._lock_quota(conn, "*")
            self._lock_quota(conn, user_id)
            self._abandon_stale_runs(conn, now)
            day = utc_day_start(now)
            counts = self._sql(conn, "SELECT COALESCE(SUM(CASE WHEN outcome = 'running' THEN 1 ELSE 0 END), 0), "
                                     "COALESCE(SUM(CASE WHEN outcome = 'running' AND user_id = ? THEN 1 ELSE 0 END), 0), "
                                     "COALESCE(SUM(CASE WHEN origin = 'operator' AND started_at >= ? THEN cost + reserved "
                                     "ELSE 0 END), 0), COALESCE(SUM(CASE WHEN origin = 'operator' AND started_at >= ? "
                                     "AND user_id = ? THEN cost + reserved ELSE 0 END), 0) FROM evalsuite_judge_runs "
                                     "WHERE outcome = 'running' OR started_at >= ?",
                               (user_id, day, day, user_id, day)).fetchone()
            running_total, running_user, spent_total, spent_user = int(counts[0]), int(counts[1]), float(counts[2]), \
                float(counts[3])
            decision = admit_judge_run(limits, operator=origin == "operator", run_budget=run_budget,
                                       running_user=running_user, running_total=running_total,
                                       spent_user=spent_user, spent_total=spent_total)
            if not decision.allowed:
                raise StoreError(decision.message, code="limit_reached")
            self._sql(conn, f"INSERT INTO evalsuite_judge_runs ({_COLUMNS}) VALUES "
                            "(?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, 0, 0, 0, 0, 0, ?, 'running', '')",
                      (run_id, user_id, user_label, now, now, model, endpoint, origin, records,
                       float(decision.budget or 0.0) if origin == "operator" else 0.0))
        return run_id, decision.budget

    def report_judge_run(self, run_id: str, stats: dict, *, outcome: str | None = None, message: str = "") -> None:
        """Write a run's counts (``stats``: requests or calls, cache_hits, prompt_tokens,
        completion_tokens, cost) as its heartbeat, or, with ``outcome``, as its end (the budget it
        held is released)."""
        if outcome is not None and (not isinstance(outcome, str) or outcome not in OUTCOMES[1:]):
            raise StoreError(f"outcome is one of {', '.join(OUTCOMES[1:])}", code="invalid_argument", field="outcome",
                             value=outcome if isinstance(outcome, str) else type(outcome).__name__)
        run_id = _check_run_id(run_id)
        message = _short_text(message, "message", 2000)
        if not isinstance(stats, Mapping):
            raise StoreError("stats is a mapping of counts (requests, cache_hits, prompt_tokens, completion_tokens, "
                             "cost)", code="invalid_argument", field="stats", value=type(stats).__name__)
        now = self._clock()
        values = (_check_count(stats.get("requests", stats.get("calls", 0)) or 0, "requests"),
                  _check_count(stats.get("cache_hits", 0) or 0, "cache_hits"),
                  _check_count(stats.get("prompt_tokens", 0) or 0, "prompt_tokens"),
                  _check_count(stats.get("completion_tokens", 0) or 0, "completion_tokens"),
                  _check_amount(stats.get("cost", 0.0) or 0.0, "cost"))
        with self._transaction(write=True, doing="record a judge run") as conn:
            if outcome is None:
                self._sql(conn, "UPDATE evalsuite_judge_runs SET requests = ?, cache_hits = ?, prompt_tokens = ?, "
                                "completion_tokens = ?, cost = ?, updated_at = ? WHERE run_id = ? AND outcome = 'running'",
                          (*values, now, run_id))
            else:
                self._sql(conn, "UPDATE evalsuite_judge_runs SET requests = ?, cache_hits = ?, prompt_tokens = ?, "
                                "completion_tokens = ?, cost = ?, updated_at = ?, finished_at = ?, reserved = 0, "
                                "outcome = ?, message = ? WHERE run_id = ?",
                          (*values, now, now, outcome, message, run_id))

    def judge_runs(self, *, since: float | None = None, user_id: str | None = None,
                   limit: int = 10_000) -> list[JudgeRun]:
        """The audit log, newest first: runs started at or after ``since`` (seconds since the epoch),
        of ``user_id`` if given, at most ``limit``."""
        where, params = ["1 = 1"], []
        if since is not None:
            where.append("started_at >= ?")
            params.append(_check_amount(since, "since", 1e11))
        if user_id is not None:
            where.append("user_id = ?")
            params.append(_check_text(user_id, "user_id", _MAX_NAME_CHARS))
        limit = _check_count(limit, "limit", 10**7)
        with self._transaction(write=False, doing="read the judge runs") as conn:
            rows = self._sql(conn, f"SELECT {_COLUMNS} FROM evalsuite_judge_runs WHERE {' AND '.join(where)} "
                                   "ORDER BY started_at DESC, run_id LIMIT ?", (*params, int(limit))).fetchall()
        return [JudgeRun(r[0], r[1], r[2], _utc(r[3]), _utc(r[4]), _utc(r[5]), r[6], r[7], r[8], int(r[9]), int(r[10]),
                         int(r[11]), int(r[12]), int(r[13]), float(r[14]), float(r[15]), r[16], r[17]) for r in rows]

    def record_upload(self, user_id: str, size: int, limits: Limits | None = None) -> int:
        """Count ``size`` uploaded bytes toward today's total of ``user_id``; return the new total.

        Raises
        ------
        StoreError
            ``"limit_reached"`` when they would pass ``limits.upload_bytes_per_day`` (nothing is
            counted then).
        """
        user_id = _check_text(user_id, "user_id", _MAX_NAME_CHARS)
        size = _check_count(size, "size")
        if limits is not None and not isinstance(limits, Limits):
            raise StoreError("limits is an evalsuite.hosting.Limits", code="invalid_argument", field="limits",
                             value=type(limits).__name__)
        day = _day(self._clock())
        with self._transaction(write=True, doing="count an upload") as conn:
            self._lock_quota(conn, user_id)
            row = self._sql(conn, "SELECT upload_bytes FROM evalsuite_daily_usage WHERE user_id = ? AND day = ?",
                            (user_id, day)).fetchone()
            used = int(row[0]) if row else 0
            why = check_upload(limits, used, int(size)) if limits is not None else None
            if why:
                raise StoreError(why, code="limit_reached")
            self._sql(conn, "INSERT INTO evalsuite_daily_usage (user_id, day, upload_bytes) VALUES (?, ?, ?) "
                            "ON CONFLICT (user_id, day) DO UPDATE SET upload_bytes = "
                            "evalsuite_daily_usage.upload_bytes + excluded.upload_bytes", (user_id, day, int(size)))
        return used + int(size)

    def uploaded_today(self, user_id: str) -> int:
        """Bytes ``user_id`` uploaded today (UTC)."""
        user_id = _check_text(user_id, "user_id", _MAX_NAME_CHARS)
        with self._transaction(write=False, doing="read the upload total") as conn:
            row = self._sql(conn, "SELECT upload_bytes FROM evalsuite_daily_usage WHERE user_id = ? AND day = ?",
                            (user_id, _day(self._clock()))).fetchone()
        return int(row[0]) if row else 0
