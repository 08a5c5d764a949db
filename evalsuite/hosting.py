"""The operator's rules of a hosted dashboard: sign-in, and limits and budgets per user.

Nothing here imports Streamlit: the dashboard reads the settings (:func:`hosting_settings`) and asks
these functions, and the workspace store (:mod:`evalsuite.storage`) applies the same decisions
inside its transactions, so two sessions (or two app instances) never both pass a limit that only
one of them may pass. ``docs/hosting.md`` lists every setting.

Who a *user* is: with sign-in on, the identity the OpenID Connect provider vouches for
(:func:`user_id`: issuer and subject); with sign-in off, the browser session (every limit is then
per session). Judge spend is counted in the estimate's currency, from the operator's price table
(``judge_price_input`` and ``judge_price_output``, per million tokens), per UTC day; runs on a
visitor's own endpoint (typed, with their own key) cost the operator nothing and count only
toward the runs at once.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import EvalSuiteError

__all__ = ["HostingSettings", "Limits", "Admission", "hosting_settings", "admit_judge_run", "check_upload",
           "check_workspace_count", "user_id", "session_user_id", "SETTINGS", "utc_day_start"]

MIB = 1024 * 1024

# name: (environment variable, [evalsuite] secret, kind, default, meaning); docs/hosting.md has the same table.
SETTINGS: dict[str, tuple[str, str, str, Any, str]] = {
    "sign_in": ("EVALSUITE_SIGN_IN", "sign_in", "flag", False,
                "every page needs sign-in with the OpenID Connect provider of the [auth] secrets"),
    "sign_in_provider": ("EVALSUITE_SIGN_IN_PROVIDER", "sign_in_provider", "text", None,
                         "the [auth.<name>] provider to use when several are configured"),
    "judge_daily_budget": ("EVALSUITE_JUDGE_DAILY_BUDGET", "judge_daily_budget", "number", None,
                           "judge spend per user per UTC day on the operator's endpoint (estimate's currency)"),
    "judge_daily_budget_total": ("EVALSUITE_JUDGE_DAILY_BUDGET_TOTAL", "judge_daily_budget_total", "number", None,
                                 "judge spend of all users together per UTC day"),
    "judge_runs_at_once": ("EVALSUITE_JUDGE_RUNS_AT_ONCE", "judge_runs_at_once", "whole", 1,
                           "judge runs one user may have running at the same time"),
    "judge_runs_at_once_total": ("EVALSUITE_JUDGE_RUNS_AT_ONCE_TOTAL", "judge_runs_at_once_total", "whole", 4,
                                 "judge runs of all users running at the same time"),
    "upload_mb_per_day": ("EVALSUITE_UPLOAD_MB_PER_DAY", "upload_mb_per_day", "number", None,
                          "MiB one user may upload per UTC day"),
    "workspaces_per_user": ("EVALSUITE_WORKSPACES_PER_USER", "workspaces_per_user", "whole", None,
                            "workspaces one user may keep stored (active)"),
}


@dataclass(frozen=True)
class Limits:
    """Limits per user (per session without sign-in); None means no limit.

    Attributes
    ----------
    judge_daily_budget, judge_daily_budget_total : float or None
        Judge spend per user, and of all users, per UTC day, in the estimate's currency.
    judge_runs_at_once, judge_runs_at_once_total : int or None
        Judge runs running at the same time, per user and in all.
    upload_bytes_per_day : int or None
        Bytes one user may upload per UTC day.
    workspaces_per_user : int or None
        Active workspaces one user may keep.
    """

    judge_daily_budget: float | None = None
    judge_daily_budget_total: float | None = None
    judge_runs_at_once: int | None = 1
    judge_runs_at_once_total: int | None = 4
    upload_bytes_per_day: int | None = None
    workspaces_per_user: int | None = None


@dataclass(frozen=True)
class HostingSettings:
    """Sign-in and limits, as :func:`hosting_settings` read them."""

    sign_in: bool = False
    sign_in_provider: str | None = None
    limits: Limits = Limits()


def _value(kind: str, raw: Any, where: str):
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if kind == "text":
        return str(raw).strip()
    if kind == "flag":
        text = str(raw).strip().lower()
        if isinstance(raw, bool) or text in ("true", "false", "1", "0", "yes", "no", "on", "off"):
            return raw if isinstance(raw, bool) else text in ("true", "1", "yes", "on")
        raise EvalSuiteError("must be true or false", source="settings", field=where, value=raw)
    try:
        number = float(raw) if kind == "number" else int(str(raw).strip())
    except (TypeError, ValueError):
        raise EvalSuiteError(f"must be a {'number' if kind == 'number' else 'whole number'}", source="settings",
                             field=where, value=raw) from None
    if not math.isfinite(number) or number < 0:
        raise EvalSuiteError("must be a number 0 or more", source="settings", field=where, value=raw)
    return number


def hosting_settings(secrets: Mapping[str, Any] | None = None,
                     environ: Mapping[str, str] | None = None) -> HostingSettings:
    """Sign-in and the limits from the environment, else the ``[evalsuite]`` secrets, else the defaults.

    Parameters
    ----------
    secrets : mapping or None
        The ``[evalsuite]`` section of Streamlit's secrets.
    environ : mapping or None
        Default ``os.environ``.

    Returns
    -------
    HostingSettings

    Raises
    ------
    EvalSuiteError
        A value of the wrong kind, naming the setting.

    Examples
    --------
    >>> s = hosting_settings({"sign_in": True, "judge_daily_budget": 0.5, "upload_mb_per_day": "20"}, {})
    >>> s.sign_in, s.limits.judge_daily_budget, s.limits.upload_bytes_per_day, s.limits.judge_runs_at_once
    (True, 0.5, 20971520, 1)
    >>> hosting_settings({}, {"EVALSUITE_JUDGE_RUNS_AT_ONCE": "many"})
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: settings, field 'EVALSUITE_JUDGE_RUNS_AT_ONCE', value 'many': must be a whole number
    """
    secrets = secrets or {}
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for name, (variable, secret, kind, default, _) in SETTINGS.items():
        if str(environ.get(variable, "")).strip():
            value = _value(kind, environ[variable], variable)
        else:
            value = _value(kind, secrets.get(secret), f"evalsuite.{secret}")
        values[name] = default if value is None else value
    upload = values["upload_mb_per_day"]
    limits = Limits(judge_daily_budget=values["judge_daily_budget"],
                    judge_daily_budget_total=values["judge_daily_budget_total"],
                    judge_runs_at_once=values["judge_runs_at_once"] or None,
                    judge_runs_at_once_total=values["judge_runs_at_once_total"] or None,
                    upload_bytes_per_day=None if upload is None else int(upload * MIB),
                    workspaces_per_user=values["workspaces_per_user"])
    return HostingSettings(sign_in=bool(values["sign_in"]), sign_in_provider=values["sign_in_provider"],
                           limits=limits)


def user_id(issuer: str | None, subject: str | None) -> str:
    """The id of a signed-in user: ``oidc:`` and the first 32 hex digits of the SHA-256 of issuer
    and subject (stable for the same account, equal for no two providers' accounts).

    Examples
    --------
    >>> user_id("http://127.0.0.1:9400", "alice@example.com")[:5], len(user_id("i", "s"))
    ('oidc:', 37)
    >>> user_id("a", "b") == user_id("a", "c")
    False
    """
    if not subject:
        raise EvalSuiteError("the provider's identity token names no subject", field="sub")
    digest = hashlib.sha256(f"{issuer or ''}\n{subject}".encode("utf-8")).hexdigest()
    return f"oidc:{digest[:32]}"


def session_user_id(session_id: str) -> str:
    """The id of an anonymous visitor: their browser session (``session:`` and a hash of its id).

    >>> session_user_id("abc")[:8]
    'session:'
    """
    return "session:" + hashlib.sha256(str(session_id).encode("utf-8")).hexdigest()[:32]


def utc_day_start(now: float) -> float:
    """Seconds since the epoch of the UTC midnight before ``now`` (the day budgets count from).

    >>> utc_day_start(86400 * 3 + 5)
    259200.0
    """
    return float(math.floor(now / 86400.0) * 86400)


@dataclass(frozen=True)
class Admission:
    """The decision on starting a judge run.

    Attributes
    ----------
    allowed : bool
    message : str
        Why not (plain text for the page), or empty.
    budget : float or None
        The most the run may spend (what is left of the day's budgets, and the operator's per-run
        budget), or None for no limit. The run reserves it until it ends.
    """

    allowed: bool
    message: str = ""
    budget: float | None = None


def _money(x: float) -> str:
    return f"{x:.4f}"


def admit_judge_run(limits: Limits, *, operator: bool, run_budget: float | None, running_user: int,
                    running_total: int, spent_user: float, spent_total: float) -> Admission:
    """May a user start a judge run now, and with what budget?

    Parameters
    ----------
    limits : Limits
    operator : bool
        The run uses the operator's endpoint (it spends the operator's money; a typed endpoint's
        run only counts toward the runs at once).
    run_budget : float or None
        The operator's per-run budget (``judge_budget``).
    running_user, running_total : int
        Runs running now, of this user and of all users.
    spent_user, spent_total : float
        Spent today (finished runs' cost plus running runs' reservations), by this user and by all.

    Returns
    -------
    Admission

    Examples
    --------
    >>> limits = Limits(judge_daily_budget=1.0, judge_runs_at_once=1)
    >>> admit_judge_run(limits, operator=True, run_budget=0.5, running_user=0, running_total=0,
    ...                 spent_user=0.8, spent_total=0.8)
    Admission(allowed=True, message='', budget=0.2)
    >>> admit_judge_run(limits, operator=True, run_budget=None, running_user=0, running_total=0,
    ...                 spent_user=1.0, spent_total=1.0).message
    "today's judge budget is used up: 1.0000 of 1.0000 spent (judge_daily_budget); it renews at 00:00 UTC"
    >>> admit_judge_run(limits, operator=False, run_budget=None, running_user=1, running_total=1,
    ...                 spent_user=0, spent_total=0).message
    'a judge run of yours is already running (at most 1 at once: judge_runs_at_once); wait for it or cancel it'
    """
    if limits.judge_runs_at_once is not None and running_user >= limits.judge_runs_at_once:
        return Admission(False, f"a judge run of yours is already running (at most {limits.judge_runs_at_once} at "
                                "once: judge_runs_at_once); wait for it or cancel it")
    if limits.judge_runs_at_once_total is not None and running_total >= limits.judge_runs_at_once_total:
        return Admission(False, f"{running_total} judge runs are running on this dashboard, its most at once "
                                "(judge_runs_at_once_total); try again in a few minutes")
    if not operator:
        return Admission(True, budget=None)
    budget = run_budget
    for limit, spent, name, whose in ((limits.judge_daily_budget, spent_user, "judge_daily_budget", "today's"),
                                      (limits.judge_daily_budget_total, spent_total, "judge_daily_budget_total",
                                       "this dashboard's daily")):
        if limit is None:
            continue
        left = limit - spent
        if left <= 1e-12:
            return Admission(False, f"{whose} judge budget is used up: {_money(spent)} of {_money(limit)} spent "
                                    f"({name}); it renews at 00:00 UTC")
        budget = left if budget is None else min(budget, left)
    if budget is not None:
        budget = round(budget, 12)
    return Admission(True, budget=budget)


def check_upload(limits: Limits, used_today: int, size: int) -> str | None:
    """Why an upload of ``size`` bytes is refused (None when it may be read).

    >>> check_upload(Limits(upload_bytes_per_day=10 * MIB), 9 * MIB, 2 * MIB)
    'the daily upload limit is reached: 9.0 MiB of 10.0 MiB uploaded today and this file is 2.0 MiB (upload_mb_per_day); it renews at 00:00 UTC'
    >>> check_upload(Limits(), 10**12, 1) is None
    True
    """
    cap = limits.upload_bytes_per_day
    if cap is None or used_today + size <= cap:
        return None
    return (f"the daily upload limit is reached: {used_today / MIB:.1f} MiB of {cap / MIB:.1f} MiB uploaded today "
            f"and this file is {size / MIB:.1f} MiB (upload_mb_per_day); it renews at 00:00 UTC")


def check_workspace_count(limits: Limits, stored: int) -> str | None:
    """Why one more workspace may not be saved (None when it may).

    >>> check_workspace_count(Limits(workspaces_per_user=3), 3)
    'you keep 3 workspaces, the most this dashboard stores per user (workspaces_per_user); delete one on the Data page first'
    """
    cap = limits.workspaces_per_user
    if cap is None or stored < cap:
        return None
    return (f"you keep {stored} workspaces, the most this dashboard stores per user (workspaces_per_user); "
            "delete one on the Data page first")
