"""How a judge run ended, in one word, an exit code and a summary by cause: what ``evalsuite judge``,
``evalsuite ragas`` and the dashboard's run status all say.

A run that did nothing useful never reads as done: when every judgement it asked for is missing,
or more than ``max_missing`` of them (a share, default :data:`DEFAULT_MAX_MISSING`), it ends as
``missing``. Early stops keep their own words and codes.

=========  ==================  =============================================================
exit code  status              when
=========  ==================  =============================================================
0          done                every record judged, missing judgements within ``max_missing``
2          (error)             bad input or settings; the endpoint refused the key or the model
3          budget              stopped before the budget would be passed
4          missing             all judgements missing, or more than ``max_missing`` of them
5          endpoint failing    the circuit breaker opened (failures in a row, or no reply)
6          deadline            the run's deadline passed
130        interrupted         Ctrl-C (the page: Cancel)
=========  ==================  =============================================================

When several apply the one higher in this list wins: interrupted, budget, endpoint failing,
deadline, missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .run_control import STOP_REASONS

__all__ = ["Outcome", "run_outcome", "missing_share", "describe", "DEFAULT_MAX_MISSING", "EXIT_CODES"]

#: Share of the judgements asked for that may be missing in a run that ends as done.
DEFAULT_MAX_MISSING = 0.1
#: Exit code of each status.
EXIT_CODES = {"done": 0, "budget": 3, "missing": 4, "endpoint failing": 5, "deadline": 6, "interrupted": 130}
_PRECEDENCE = ("interrupted", "budget", "endpoint failing", "deadline")


@dataclass(frozen=True)
class Outcome:
    """How a run ended.

    Attributes
    ----------
    status : str
        ``done``, ``missing``, ``budget``, ``endpoint failing``, ``deadline`` or ``interrupted``.
    exit_code : int
        :data:`EXIT_CODES` of the status.
    message : str
        One sentence: why (for every status but done), in plain words.
    """

    status: str
    exit_code: int
    message: str


def missing_share(stats) -> float:
    """Missing judgements among those the run asked for (judgements a stop left unasked are not
    counted; rule-decided ones are not asked for); 0 when none was asked.

    Examples
    --------
    >>> from evalsuite.judges import JudgeStats
    >>> stats = JudgeStats(ok=9, missing={"timeout": 1, "interrupted": 5})
    >>> missing_share(stats)
    0.1
    """
    failed = sum(n for reason, n in stats.missing.items() if reason not in STOP_REASONS)
    asked = stats.ok + failed
    return failed / asked if asked else 0.0


def describe(counts: dict) -> str:
    """``"12 connection refused, 3 HTTP 500"``: counts by cause, largest first ("none" if empty).

    >>> describe({"HTTP 500": 3, "connection refused": 12})
    '12 connection refused, 3 HTTP 500'
    """
    items = sorted(((n, c) for c, n in counts.items() if n), key=lambda item: (-item[0], item[1]))
    return ", ".join(f"{n:,} {c}" for n, c in items) or "none"


def run_outcome(stats, max_missing: float = DEFAULT_MAX_MISSING) -> Outcome:
    """The outcome of a run from its :class:`~evalsuite.judges.JudgeStats`.

    Parameters
    ----------
    stats : JudgeStats
    max_missing : float
        Share (0..1) of the judgements asked for that may be missing for the run to be done.

    Returns
    -------
    Outcome

    Examples
    --------
    >>> from evalsuite.judges import JudgeStats
    >>> run_outcome(JudgeStats(ok=20, missing={"malformed": 1})).status
    'done'
    >>> outcome = run_outcome(JudgeStats(missing={"connection refused": 160}))
    >>> outcome.status, outcome.exit_code, outcome.message
    ('missing', 4, 'all 160 judgements asked for are missing (160 connection refused)')
    """
    if stats.stopped in _PRECEDENCE:
        status = stats.stopped
        why = stats.stop_message or {"interrupted": "interrupted", "budget": "the budget would be passed",
                                     "deadline": "the deadline passed"}.get(status, status)
        return Outcome(status, EXIT_CODES[status], why)
    failed = {reason: n for reason, n in stats.missing.items() if reason not in STOP_REASONS and n}
    total = sum(failed.values())
    if total and (stats.ok == 0 or missing_share(stats) > max_missing):
        asked = stats.ok + total
        what = (f"all {total:,} judgements asked for are missing" if stats.ok == 0 else
                f"{total:,} of {asked:,} judgements asked for are missing ({total / asked:.1%}, more than the "
                f"{max_missing:.0%} allowed)")
        return Outcome("missing", EXIT_CODES["missing"], f"{what} ({describe(failed)})")
    return Outcome("done", 0, "")
