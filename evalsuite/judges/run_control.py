"""What bounds a judge run in time: the stop request (Ctrl-C, a page's Cancel, the budget), the
run's deadline, and the circuit breaker that stops a run whose endpoint is not answering.

:class:`RunControl` is shared by the thread that plans a run and the threads that send its
requests. The first reason to stop wins and is kept with a message in words:

- ``interrupted``: :meth:`RunControl.stop` (Ctrl-C, Cancel);
- ``budget``: the next request could pass the budget;
- ``deadline``: the run's deadline passed;
- ``endpoint failing``: the circuit breaker opened: ``breaker`` attempts in a row failed (no
  reply, or 408/429/5xx, or a rejected request) with no good reply in between, or requests
  were waiting and no reply came for ``silence`` seconds (an endpoint that accepts connections
  and never answers). The message names the endpoint and the causes.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
import time
from collections import Counter

__all__ = ["RunControl", "STOP_REASONS", "DEFAULT_BREAKER", "SILENCE_FACTOR", "CHECK_SECONDS", "GRACE_SECONDS",
           "default_silence", "silent_endpoint_bound", "deferred_interrupt"]

#: Why a run can stop before its end.
STOP_REASONS = ("interrupted", "budget", "deadline", "endpoint failing")
#: Failed attempts in a row that open the circuit breaker (default).
DEFAULT_BREAKER = 10
#: The no-reply window that opens the breaker, as a multiple of the per-request timeout (default).
SILENCE_FACTOR = 1.5
#: Seconds between the request loop's checks of the deadline and the silence while it waits.
CHECK_SECONDS = 0.2
#: Seconds calls in flight get to finish after a stop (Ctrl-C, Cancel, deadline, breaker).
GRACE_SECONDS = 1.5


def default_silence(timeout: float) -> float:
    """The no-reply window of a run whose requests wait ``timeout`` seconds for a reply: long
    enough for a slow reply to come, short enough that a silent endpoint fails in under a minute
    with the default timeout (30 s -> 45 s).

    Examples
    --------
    >>> default_silence(30.0)
    45.0
    """
    return SILENCE_FACTOR * float(timeout)


def silent_endpoint_bound(silence: float | None, grace: float = GRACE_SECONDS) -> float | None:
    """The most seconds a run waits on an endpoint that never answers (it accepts connections, or
    they time out) before it stops with ``endpoint failing``: the no-reply window, one check of
    the request loop, and the grace its calls in flight get. None when there is no window.

    Refused connections and error replies open the breaker sooner (after ``breaker`` attempts in
    a row); the per-request and connect timeouts only make attempts fail sooner: failed attempts
    do not restart the window, so they cannot make the run wait longer.

    Examples
    --------
    >>> silent_endpoint_bound(default_silence(30.0))
    46.7
    """
    return None if silence is None else round(silence + CHECK_SECONDS + grace, 3)


@contextlib.contextmanager
def deferred_interrupt():
    """Ctrl-C waits for the block to finish (assembling or writing the judged records: what was
    judged is never thrown away half-made); yields a list that holds True if it came meanwhile.
    Outside the main thread (no signal handler can be set there) it defers nothing."""
    caught: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


class RunControl:
    """Stop request, deadline and circuit breaker of one run (thread-safe).

    Parameters
    ----------
    host : str
        The endpoint's host and port (named in the breaker's message).
    deadline : float or None
        Seconds the run may take from :meth:`start`; None: no deadline.
    breaker : int or None
        Failed attempts in a row that stop the run (None: never).
    silence : float or None
        Seconds without any reply while requests wait that stop the run (None: never).
    clock : callable
        ``time.monotonic`` (tests pass their own).

    Examples
    --------
    >>> control = RunControl("127.0.0.1:9", breaker=2)
    >>> control.start()
    >>> control.failed("connection refused"); control.stopped
    False
    >>> control.failed("connection refused"); control.reason, control.message
    ('endpoint failing', '127.0.0.1:9 failed 2 requests in a row (2 connection refused)')
    """

    def __init__(self, host: str = "", *, deadline: float | None = None, breaker: int | None = DEFAULT_BREAKER,
                 silence: float | None = None, clock=time.monotonic) -> None:
        self.host = host
        self.deadline = deadline
        self.breaker = breaker
        self.silence = silence
        self._clock = clock
        self._event = threading.Event()
        self._lock = threading.Lock()
        self.reason: str | None = None
        self.message = ""
        self._ids = itertools.count()
        self._waiting: dict[int, float] = {}
        self._streak: Counter = Counter()
        self._silent_since: float | None = None
        self._last_event: float | None = None
        self.started: float | None = None
        self.ends: float | None = None

    # -- stopping ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the clock of the deadline (a run calls it when it begins)."""
        self.started = self._clock()
        self.ends = None if self.deadline is None else self.started + self.deadline

    def stop(self, reason: str = "interrupted", message: str = "") -> None:
        """Ask the run to stop (the first reason is kept)."""
        with self._lock:
            if self.reason is None:
                self.reason, self.message = reason, message
        self._event.set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the run stops first (then return True at once)."""
        return self._event.wait(max(0.0, seconds))

    def remaining(self) -> float | None:
        """Seconds to the deadline (None: none)."""
        return None if self.ends is None else self.ends - self._clock()

    def check(self) -> None:
        """Stop the run if its deadline passed or its endpoint stayed silent too long."""
        now = self._clock()
        if self.ends is not None and now >= self.ends:
            self.stop("deadline", f"the deadline of {self.deadline:g} s passed")
        with self._lock:
            silent = self._silent_since if self._waiting else None
            waiting = len(self._waiting)
        if self.silence is not None and silent is not None and now - silent >= self.silence:
            self.stop("endpoint failing", f"{self.host} sent no reply for {now - silent:.0f} s while "
                                          f"{waiting} requests waited")

    # -- attempts -----------------------------------------------------------------------------

    def sending(self) -> int:
        """An attempt is sent: its ticket (for :meth:`answered` / :meth:`failed`).

        The endpoint's silence is measured from the first attempt after its last usable reply
        (failed attempts and their retries do not restart it; an attempt after a long pause with
        nothing sent does)."""
        now = self._clock()
        with self._lock:
            ticket = next(self._ids)
            idle = not self._waiting and (self._last_event is None or self.silence is None
                                          or now - self._last_event >= self.silence)
            if self._silent_since is None or idle:
                self._silent_since = now
            self._waiting[ticket] = now
        return ticket

    def answered(self, ticket: int | None = None) -> None:
        """An attempt got a usable reply: the breaker's count and the silence start again."""
        now = self._clock()
        with self._lock:
            self._waiting.pop(ticket, None)
            self._streak.clear()
            self._silent_since = now if self._waiting else None
            self._last_event = now

    def failed(self, cause: str, ticket: int | None = None) -> None:
        """An attempt failed with ``cause``; the breaker opens after ``breaker`` in a row."""
        with self._lock:
            self._waiting.pop(ticket, None)
            self._last_event = self._clock()
            self._streak[cause] += 1
            count = sum(self._streak.values())
            causes = ", ".join(f"{n} {c}" for c, n in self._streak.most_common())
        if self.breaker is not None and count >= self.breaker:
            self.stop("endpoint failing", f"{self.host} failed {count} requests in a row ({causes})")

    def waiting(self) -> tuple[int, float]:
        """Attempts in flight and the age in seconds of the oldest."""
        now = self._clock()
        with self._lock:
            if not self._waiting:
                return 0, 0.0
            return len(self._waiting), now - min(self._waiting.values())
