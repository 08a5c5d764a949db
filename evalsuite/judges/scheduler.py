"""The LLM judge's request loop: every record's requests concurrent within the concurrency limit,
one call per distinct request, answers from the cache without a thread, and a run that stops
when asked within a bounded time, keeping what it judged.

A record is judged by a *flow*: a generator that yields lists of :class:`Ask` (the judgements it
needs next: the claims of the answer and of the reference together, then every verdict request
and every chunk at once) and receives their ``(value, Provenance)`` pairs, then returns the
record's columns. :class:`RequestLoop` drives many flows from one thread:

- an ask is answered from the cache at once (no thread, no lock held across records), else it
  joins the call of an identical request already in flight (*single-flight*: one call, counted
  once in cost), else a call is queued for one of ``concurrency`` sender threads;
- senders retry 408/429/5xx, timeouts and connection errors with backoff (waits end when the run
  stops), store every answered call in the cache at once (a kill loses nothing answered) and
  report each attempt to the :class:`~evalsuite.judges.run_control.RunControl` (circuit breaker,
  silence);
- the loop waits for replies in slices of 0.2 s: between them it checks the deadline and the
  endpoint's silence and reports progress, so a run shows life while it waits, and Ctrl-C
  (KeyboardInterrupt in this thread) or :meth:`RunControl.stop` is seen at once;
- when the run stops, no new call is sent; calls in flight get ``grace`` seconds to finish (their
  replies are cached; a budget stop waits for them all, as they are paid for), then are left to
  end on their own (daemon threads) and their judgements count as missing with the stop's reason.
  A record with any judgement a stop left unasked keeps its old columns (its answered calls are
  cached: a rerun resumes without repeating one).
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import EvalSuiteError
from ._base import Provenance
from .replies import reply_value
from .run_control import CHECK_SECONDS, GRACE_SECONDS, STOP_REASONS
from .transport import Failure, ModeRejected, backoff_wait

__all__ = ["Ask", "RequestLoop", "GRACE_SECONDS"]

_SLICE = CHECK_SECONDS  # seconds between checks while waiting for replies
_HEARTBEAT = 0.5      # seconds between progress reports while waiting
_STOPPED = tuple(f"missing: {reason}" for reason in STOP_REASONS)


@dataclass
class Ask:
    """One judgement a flow needs: a prompt, the texts it is filled with, and where it goes.

    Attributes
    ----------
    prompt : Prompt
    column : str
        The column (or intermediate) it fills, for the provenance.
    fields : dict
        The prompt's template fields.
    n_claims : int or None
        Verdicts expected (``verdicts`` prompts).
    index : int or None
        The chunk a per-chunk judgement is about.
    """

    prompt: Any
    column: str
    fields: dict
    n_claims: int | None = None
    index: int | None = None


class _Step:
    """A flow waiting for the answers of the asks it yielded."""

    __slots__ = ("row", "flow", "results", "left", "resolving")

    def __init__(self, row: int, flow, n: int) -> None:
        self.row, self.flow, self.results, self.left = row, flow, [None] * n, n
        self.resolving = True  # its asks are being resolved: the resolver advances it, not _settle


@dataclass
class _Call:
    """One distinct request queued or in flight, and the asks waiting for it."""

    key: str
    request: dict
    mode: str
    bound: float
    waiters: list = field(default_factory=list)  # (step, slot, ask, user message, provenance)
    admitted: bool = False  # the budget admitted it (its bound is reserved until its reply is read)


class RequestLoop:
    """Drives the flows of one run of ``judge`` (an :class:`~evalsuite.judges.LLMJudge`).

    Parameters
    ----------
    judge : LLMJudge
        Its cache, endpoint, modes, budget, retries, stats and run control.
    progress : callable or None
        ``progress(done, total, stats)`` after each record and every 0.5 s while waiting.
    total, offset : int
        Progress is reported as ``offset + done`` of ``total`` (a run in phases).
    grace : float
        Seconds calls in flight get after a stop.
    """

    def __init__(self, judge, progress: Callable | None = None, total: int | None = None, offset: int = 0,
                 grace: float = GRACE_SECONDS) -> None:
        self.judge = judge
        self.control = judge.control
        self.stats = judge.stats
        self.progress = progress
        self.total = total
        self.offset = offset
        self.grace = grace
        self.calls: dict[str, _Call] = {}
        self.replies: queue.SimpleQueue = queue.SimpleQueue()
        self.jobs: queue.SimpleQueue | None = None
        self.senders: list[threading.Thread] = []
        self.reserved = 0.0
        self.budget_lock = threading.Lock()
        self.error: BaseException | None = None
        self.mode_lock = threading.Lock()
        self.sequence = 0

    # -- the loop -------------------------------------------------------------------------------

    def run(self, rows: list, make_flow: Callable) -> list:
        """``[(columns, provenance) or None per row]``: None for a record a stop left unfinished."""
        n = len(rows)
        total = self.total if self.total is not None else n
        results: list = [None] * n
        self.done = 0
        window = max(64, 4 * self.judge.concurrency)  # records in progress: enough to keep every sender busy
        active = [0]
        next_row = 0
        stopped_at = None
        last_report = time.monotonic()

        def finished(row: int, value) -> None:
            active[0] -= 1
            self.done += 1
            if value is not None and not any(p.status.startswith(_STOPPED) for p in value[1]):
                results[row] = value
            if self.progress is not None:
                self.stats.in_flight, self.stats.waiting_s = self.control.waiting()
                self.progress(self.offset + self.done, total, self.stats)

        self._finished = finished
        try:
            while True:
                try:
                    while not self.control.stopped and active[0] < window and next_row < n:
                        row, next_row = next_row, next_row + 1
                        active[0] += 1
                        self._advance(_Step(row, make_flow(rows[row]), 0), None)
                    if active[0] == 0 and (next_row >= n or self.control.stopped):
                        break
                    if self.error is not None:
                        break
                    if self.control.stopped:
                        stopped_at = stopped_at or time.monotonic()
                        if not self.calls or (self.control.reason != "budget"
                                              and time.monotonic() - stopped_at >= self.grace):
                            self._abandon()
                            break  # what is still unfinished stays so (a flow an interrupt broke, say)
                    try:
                        item = self.replies.get(timeout=_SLICE)
                    except queue.Empty:
                        item = None
                    while item is not None:
                        self._reply(*item)
                        try:
                            item = self.replies.get_nowait()
                        except queue.Empty:
                            item = None
                    self.control.check()
                    now = time.monotonic()
                    if now - last_report >= _HEARTBEAT:
                        last_report = now
                        self._heartbeat(total)
                except KeyboardInterrupt:
                    if self.control.stopped and self.control.reason == "interrupted":
                        self._abandon()  # a second Ctrl-C: stop waiting for calls in flight
                        break
                    self.control.stop("interrupted")
        finally:
            self._close()
        if self.error is not None:
            raise self.error
        self.stats.in_flight, self.stats.waiting_s = 0, 0.0
        if self.control.stopped:
            self.stats.stopped = self.stats.stopped or self.control.reason
            self.stats.stop_message = self.stats.stop_message or self.control.message
        return results

    def _heartbeat(self, total: int) -> None:
        self.stats.in_flight, self.stats.waiting_s = self.control.waiting()
        if self.progress is not None:
            self.progress(self.offset + self.done, total, self.stats)

    def _advance(self, step: _Step, values) -> None:
        """Send ``values`` into the step's flow and resolve what it asks next, until it waits."""
        while True:
            try:
                asks = next(step.flow) if values is None else step.flow.send(values)
            except StopIteration as end:
                self._finished(step.row, end.value)
                return
            step = _Step(step.row, step.flow, len(asks))
            for slot, ask in enumerate(asks):
                self._resolve(step, slot, ask)
            step.resolving = False
            if step.left:
                return
            values = step.results

    def _settle(self, step: _Step, slot: int, value, prov: Provenance) -> None:
        step.results[slot] = (value, prov)
        step.left -= 1
        if step.left == 0 and not step.resolving:
            self._advance(step, step.results)

    # -- one ask --------------------------------------------------------------------------------

    def _resolve(self, step: _Step, slot: int, ask: Ask) -> None:
        judge = self.judge
        prov = Provenance(column=ask.column, judge="llm", model=judge.model, endpoint_host=judge.endpoint_host,
                          prompt_version=judge._version(ask.prompt), index=ask.index)
        # The request's key comes from the user message alone (the rest is the prompt's template):
        # a cache hit builds no request and no message list.
        self._try(step, slot, ask, ask.prompt.user.format(**ask.fields), prov)

    def _try(self, step, slot, ask, user: str, prov) -> None:
        judge = self.judge
        modes = judge.modes[judge._mode_index:]
        if not modes:
            return self._missing(step, slot, prov, "every output mode rejected")
        first = None
        for mode in modes:
            key = judge._key(ask.prompt, user, mode)
            first = first or key
            hit = judge.cache.get(key)
            if hit is not None:
                self._answer(step, slot, ask, hit, mode, key, prov, cached=True)
                return
        mode, key = modes[0], first
        call = self.calls.get(key)
        if call is not None:  # single-flight: the same request is in flight; its answer serves this ask too
            call.waiters.append((step, slot, ask, user, prov))
            return
        if self.control.stopped:
            return self._missing(step, slot, prov, self.control.reason or "interrupted")
        request = judge._request(ask.prompt, ask.prompt.messages(**ask.fields), mode)
        bound = judge._bound(request) if judge.budget is not None else 0.0
        call = self.calls[key] = _Call(key, request, mode, bound, [(step, slot, ask, user, prov)])
        self._send(call)

    def _answer(self, step, slot, ask, response, mode, key, prov, cached: bool, attempts: int = 1,
                shared: bool = False) -> None:
        """Read a reply (``cached``: from the cache, or ``shared`` with an identical call in flight)."""
        prov.mode, prov.request_hash, prov.cached = mode, key, cached
        prov.prompt_tokens, prov.completion_tokens = response.get("prompt_tokens"), response.get("completion_tokens")
        prov.latency_ms = response.get("latency_ms")
        if attempts > 1:
            prov.attempts = attempts
        value, reason = reply_value(ask.prompt, response, mode, ask.n_claims)
        self.stats.answered(reason is None, cached, shared)
        if reason is not None:
            return self._missing(step, slot, prov, reason)
        self._settle(step, slot, value, prov)

    def _missing(self, step, slot, prov: Provenance, reason: str) -> None:
        prov.status = f"missing: {reason}"
        self.stats.add_missing(reason)
        self._settle(step, slot, None, prov)

    # -- replies --------------------------------------------------------------------------------

    def _reply(self, call: _Call, kind: str, payload, attempts: int) -> None:
        if self.calls.get(call.key) is not call:
            return  # abandoned after a stop: its waiters were settled already
        del self.calls[call.key]
        judge = self.judge
        with self.budget_lock:  # the cost is known: the call's reservation is released at the same moment
            if call.admitted:
                self.reserved -= call.bound
            if kind == "ok":
                pt, ct = payload.get("prompt_tokens") or 0, payload.get("completion_tokens") or 0
                self.stats.add(prompt_tokens=pt, completion_tokens=ct, cost=judge._cost(pt, ct))
        if kind == "ok":
            for n, (step, slot, ask, _, prov) in enumerate(call.waiters):
                self._answer(step, slot, ask, payload, call.mode, call.key, prov, cached=n > 0, attempts=attempts,
                             shared=n > 0)
        elif kind == "mode":
            for step, slot, ask, user, prov in call.waiters:
                self._try(step, slot, ask, user, prov)
        elif kind == "failed":
            for step, slot, ask, _, prov in call.waiters:
                prov.mode, prov.request_hash, prov.attempts = call.mode, call.key, attempts
                self._missing(step, slot, prov, payload)
        elif kind == "error":
            self.error = payload
            self.control.stop("error", str(payload))
            self._abandon()
        else:  # "stopped": never sent
            for step, slot, ask, _, prov in call.waiters:
                self._missing(step, slot, prov, self.control.reason or "interrupted")

    def _abandon(self) -> None:
        """Settle every ask still waiting as missing with the stop's reason (the calls go on alone)."""
        reason = self.control.reason if self.control.reason in STOP_REASONS else "interrupted"
        while self.calls:
            key, call = next(iter(self.calls.items()))
            del self.calls[key]
            for step, slot, ask, _, prov in call.waiters:
                self._missing(step, slot, prov, reason)

    # -- the senders ----------------------------------------------------------------------------

    def _send(self, call: _Call) -> None:
        """Queue a call; the senders take the earliest record's calls first, so records finish in
        order (on a stop, the records judged so far are the first ones) while every sender is busy."""
        if self.jobs is None:
            self.jobs = queue.PriorityQueue()
            for i in range(self.judge.concurrency):
                thread = threading.Thread(target=self._sender, args=(self.jobs,), daemon=True,
                                          name=f"evalsuite-judge-{i}")
                thread.start()
                self.senders.append(thread)
        self.sequence += 1
        self.jobs.put((call.waiters[0][0].row, self.sequence, call))

    def _close(self) -> None:
        if self.jobs is not None:
            for _ in self.senders:
                self.sequence += 1
                self.jobs.put((float("inf"), self.sequence, None))
            self.jobs = None

    def _sender(self, jobs: queue.PriorityQueue) -> None:
        while True:
            call = jobs.get()[2]
            if call is None:
                return
            try:
                self.replies.put((call, *self._attempts(call)))
            except BaseException as exc:  # never a traceback from a thread: the loop reports it
                self.replies.put((call, "error", exc if isinstance(exc, EvalSuiteError) else
                                  EvalSuiteError(f"the judge's request failed ({type(exc).__name__}: {exc})"), 1))

    def _admit(self, call: _Call) -> bool:
        """Admit a call to the budget when a sender takes it: the cost so far, plus the most every
        admitted call not yet read and this one can cost, must stay within the budget (calls
        waiting in the queue reserve nothing, so a budget buys as many calls as it can)."""
        judge, control = self.judge, self.control
        with self.budget_lock:
            if control.stopped:
                return False
            if self.stats.cost + self.reserved + call.bound > judge.budget:
                control.stop("budget", "the next request could pass the budget")
                return False
            self.reserved += call.bound
            call.admitted = True
            return True

    def _attempts(self, call: _Call) -> tuple[str, Any, int]:
        """Send one call with its retries: ``(kind, payload, attempts)``."""
        judge, control, stats = self.judge, self.control, self.stats
        if judge.modes.index(call.mode) < judge._mode_index:
            return "mode", None, 0  # the mode was rejected while this call waited: ask again in the next one
        if judge.budget is not None and not self._admit(call):
            return "stopped", None, 0
        judge.endpoint.prepare()
        last = "failed"
        for attempt in range(judge.max_retries + 1):
            remaining = control.remaining()
            if remaining is not None and remaining <= 0:
                control.check()
            if control.stopped and control.reason != "budget":  # a call the budget admitted is still sent
                return ("stopped", None, attempt) if attempt == 0 else ("failed", last, attempt)
            ticket = control.sending()
            try:
                response = judge.endpoint.send(call.request, timeout=remaining)
            except ModeRejected:
                stats.add(calls=1)
                control.answered(ticket)  # the endpoint is alive; it only refuses this output mode
                with self.mode_lock:  # at once, so that no call waiting behind it is sent in that mode
                    judge._mode_index = max(judge._mode_index, judge.modes.index(call.mode) + 1)
                return "mode", None, attempt + 1
            except Failure as failure:
                stats.add(**({"calls": 1} if failure.reached else {"unreached": 1}))
                stats.add_failure(failure.cause)
                control.failed(failure.cause, ticket)
                last = failure.cause
                if not failure.retryable or attempt == judge.max_retries or (control.stopped and
                                                                             control.reason != "budget"):
                    return "failed", failure.cause, attempt + 1
                stats.add(retries=1)
                wait = backoff_wait(attempt, failure.wait, judge.backoff, judge.max_backoff)
                if judge._sleep is not None:
                    judge._sleep(wait)
                elif control.wait(wait):
                    return "failed", failure.cause, attempt + 1
                continue
            except EvalSuiteError as exc:
                stats.add(calls=1)
                control.failed("refused", ticket)
                return "error", exc, attempt + 1
            stats.add(calls=1)
            control.answered(ticket)
            response["mode"] = call.mode
            judge.cache.put(call.key, call.request, response)
            return "ok", response, attempt + 1
        raise AssertionError("unreachable")
