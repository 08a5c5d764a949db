"""``evalsuite admin usage``: the audit log of a hosted dashboard's judge runs, per user or run by run.

Reads the workspace store the dashboard uses (``EVALSUITE_STORE_URL`` and the other store
settings of ``docs/hosting.md`` from the environment, else the ``[evalsuite]`` section of a
Streamlit secrets file: ``--secrets``, default ``.streamlit/secrets.toml`` when it exists) and
prints, for the chosen days, each user's runs, requests, cache hits, tokens and cost with the
runs' outcomes (``--runs``: one line per run). ``--format csv`` or ``json`` for programs.

Exit codes: 0 printed (also when there were no runs), 2 bad arguments or the store cannot be
opened.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import sys
from pathlib import Path

from ..errors import EvalSuiteError

__all__ = ["build_parser", "main", "usage_rows"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalsuite admin",
                                     description="Administration of a hosted dashboard's store.")
    sub = parser.add_subparsers(dest="command", required=True)
    usage = sub.add_parser("usage", help="judge runs per user (or run by run) from the audit log")
    usage.add_argument("--days", type=float, default=1.0,
                       help="runs started in the last N days (default 1); with --since, ignored")
    usage.add_argument("--since", help="runs started on or after this UTC date or time (2026-01-31 or 2026-01-31T12:00)")
    usage.add_argument("--user", help="only this user id (as the table shows it)")
    usage.add_argument("--runs", action="store_true", help="one line per run instead of one per user")
    usage.add_argument("--format", choices=("table", "csv", "json"), default="table")
    usage.add_argument("--secrets", help="a Streamlit secrets.toml with an [evalsuite] section "
                                         "(default .streamlit/secrets.toml when it exists)")
    return parser


def _secrets(path: str | None) -> dict:
    import tomllib

    candidate = Path(path) if path else Path(".streamlit") / "secrets.toml"
    if not candidate.exists():
        if path:
            raise EvalSuiteError("no such file", source=str(candidate))
        return {}
    try:
        return tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise EvalSuiteError(f"not a TOML file ({exc})", source=str(candidate)) from None


def _since(args, now: float) -> float:
    if args.since:
        try:
            when = dt.datetime.fromisoformat(args.since)
        except ValueError:
            raise EvalSuiteError("a date (2026-01-31) or time (2026-01-31T12:00), UTC", field="--since",
                                 value=args.since) from None
        return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()
    if not args.days > 0:
        raise EvalSuiteError("a number of days above 0", field="--days", value=args.days)
    return now - args.days * 86400.0


def usage_rows(runs, per_run: bool = False) -> list[dict]:
    """Rows of the usage table: one per user (runs, outcomes, requests, cache hits, tokens, cost,
    first and last start), or with ``per_run`` one per run, newest first.

    Parameters
    ----------
    runs : list of evalsuite.storage.JudgeRun
    per_run : bool

    Returns
    -------
    list of dict
    """
    def when(value):
        return value.strftime("%Y-%m-%d %H:%M:%S") if value else ""

    if per_run:
        return [{"started (UTC)": when(r.started_at), "user": r.user_id, "label": r.user_label, "model": r.model,
                 "endpoint": r.endpoint, "origin": r.origin, "records": r.records, "requests": r.requests,
                 "cache hits": r.cache_hits, "prompt tokens": r.prompt_tokens,
                 "completion tokens": r.completion_tokens, "cost": round(r.cost, 6), "outcome": r.outcome,
                 "finished (UTC)": when(r.finished_at), "message": r.message} for r in runs]
    users: dict[str, dict] = {}
    for r in sorted(runs, key=lambda r: r.started_at):
        row = users.setdefault(r.user_id, {"user": r.user_id, "label": r.user_label, "runs": 0, "outcomes": {},
                                           "requests": 0, "cache hits": 0, "prompt tokens": 0,
                                           "completion tokens": 0, "cost": 0.0, "first (UTC)": when(r.started_at)})
        row["runs"] += 1
        row["outcomes"][r.outcome] = row["outcomes"].get(r.outcome, 0) + 1
        for key, value in (("requests", r.requests), ("cache hits", r.cache_hits), ("prompt tokens", r.prompt_tokens),
                           ("completion tokens", r.completion_tokens), ("cost", r.cost)):
            row[key] += value
        row["last (UTC)"] = when(r.started_at)
        row["label"] = r.user_label or row["label"]
    out = []
    for row in sorted(users.values(), key=lambda row: -row["cost"]):
        row["outcomes"] = ", ".join(f"{k} {v}" for k, v in sorted(row["outcomes"].items()))
        row["cost"] = round(row["cost"], 6)
        out.append(row)
    return out


def _print(rows: list[dict], fmt: str, stream) -> None:
    if fmt == "json":
        json.dump(rows, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
        return
    if not rows:
        stream.write("no judge runs in this period\n" if fmt == "table" else "")
        return
    columns = list(rows[0])
    if fmt == "csv":
        from ..display import safe_csv
        import pandas as pd

        stream.write(safe_csv(pd.DataFrame(rows, columns=columns), index=False).decode("utf-8"))
        return
    texts = [[str(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(t[i]) for t in texts)) for i, c in enumerate(columns)]
    stream.write("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip() + "\n")
    for t in texts:
        stream.write("  ".join(v.ljust(w) for v, w in zip(t, widths)).rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run ``evalsuite admin ...``; returns the exit code."""
    args = build_parser().parse_args(argv)
    from ..storage import StoreError, open_store_from_config

    try:
        import time

        since = _since(args, time.time())
        store = open_store_from_config(_secrets(args.secrets))
    except (EvalSuiteError, StoreError) as exc:
        print(f"evalsuite admin: error: {exc}", file=sys.stderr)
        return 2
    with store:
        try:
            runs = store.judge_runs(since=since, user_id=args.user)
        except StoreError as exc:
            print(f"evalsuite admin: error: {exc}", file=sys.stderr)
            return 2
    rows = usage_rows(runs, per_run=args.runs)
    if args.format == "table":
        print(f"judge runs since {dt.datetime.fromtimestamp(since, dt.UTC):%Y-%m-%d %H:%M} UTC in {store.location}")
    _print(rows, args.format, sys.stdout)
    return 0
