"""Judge runs of the dashboard: a background thread per run, its progress kept in the session.

A run (:class:`JudgeJob`) lives in ``st.session_state`` under :data:`KEY_JOB`, so its progress
survives page switches: the thread updates the job object, and the Judge page reads it. The thread
uses no Streamlit call. When the run has finished, :func:`collect_finished` (called by the shell
on every page) puts the judged records into the session as a new version of the file: the
original :class:`~dashboard.session.StoredFile` (bytes untouched) is set aside under
:data:`KEY_ORIGINALS` and the judged records (Parquet bytes) take its place, so every page,
Compare and Save and share use them; :func:`restore_original` undoes it.

Which endpoint and key a run uses is decided by :mod:`evalsuite.judges.endpoints` (the operator's
endpoint with the operator's key; a typed endpoint, where the operator allows one, only with the
key typed in this session, through a connection that checks every address); :func:`build_judge`
only builds the judge for the :class:`~evalsuite.judges.endpoints.Endpoint` chosen. A run is
admitted and logged by the store (:meth:`evalsuite.storage.Store.begin_judge_run`: runs at once
and the day's budget per user, :mod:`evalsuite.hosting`); its budget is what is left, and its
counts and outcome go to the audit log (``evalsuite admin usage``).

Raw judge replies are shown only for requests a run of this session made (:func:`raw_output`),
never looked up from a hash that a records file claims.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

KEY_JOB = "judge_job"
KEY_ORIGINALS = "judge_originals"   # {judged file key: original StoredFile}
KEY_JOB_NOTICES = "judge_notices"
KEY_OWN_REPLIES = "judge_own_replies"  # {request hash: key of its reply in the judge cache} of this session's runs
KEY_FILE_PICKER = "judge_file"  # the Judge page's "Records file"
HEARTBEAT_SECONDS = 15.0


@dataclass
class JudgeJob:
    """One judging run.

    Attributes
    ----------
    file_key : str
        Session key of the records file judged.
    file_name : str
    metrics : list of str
    rows : list of int
        Row positions of the file's records that are judged.
    total, done : int
        Progress steps (records x phases) and steps done.
    status : str
        ``running``, ``cancelling``, ``done``, ``cancelled`` or ``error``.
    message : str
        Plain text: the error, or the run's summary.
    stats : dict
        The judge's counts (calls, cache hits, missing, cost ...), updated as it runs.
    estimate : str
    result : bytes or None
        The judged records as Parquet, once done.
    collected : bool
        The result has joined the session.
    """

    file_key: str
    file_name: str
    metrics: list
    rows: list
    judge: Any = field(repr=False, default=None)
    total: int = 0
    done: int = 0
    status: str = "running"
    message: str = ""
    stats: dict = field(default_factory=dict)
    estimate: str = ""
    result: bytes | None = field(repr=False, default=None)
    collected: bool = False
    outcome: str | None = None       # the audit log's outcome when it differs from the status ("budget")
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    thread: threading.Thread | None = field(repr=False, default=None)
    run_id: str | None = None        # its row in the store's audit log (None: not logged)
    budget: float | None = None      # the most it may spend (per-run and what is left of the day)
    replies: dict = field(repr=False, default_factory=dict)  # {request hash: reply's cache key}
    lexical: list = field(default_factory=list)  # lexical scores asked for
    changes: list = field(default_factory=list)  # per metric: its mean before and after, and the judges that filled it

    @property
    def running(self) -> bool:
        return self.status in ("running", "cancelling")

    def cancel(self) -> None:
        """Stop the run: calls in flight finish, no new call is sent; nothing joins the session."""
        if self.running and self.judge is not None:
            self.status = "cancelling"
            self.judge.stop()


def build_judge(endpoint, metrics, aspects, strictness: int, aspect_strictness: int, cache=None, options=None,
                owner: str | None = None, lexical=()):
    """A :class:`~evalsuite.judges.ragas.RagasJudge` for the page's metrics on ``endpoint``.

    Parameters
    ----------
    endpoint : evalsuite.judges.endpoints.Endpoint or None
        From :func:`evalsuite.judges.endpoints.choose_endpoint` (None when no metric needs the LLM).
    options : dict or None
        Prices, budget and concurrency a visitor entered for their own endpoint (the operator's
        come with ``endpoint``).
    owner : str or None
        The user a typed endpoint's replies are cached for (nobody else is served them).
    lexical : sequence of str
        Lexical scores to fill as well (:data:`~evalsuite.judges.lexical.LEXICAL_COLUMNS`; no endpoint).
    """
    from evalsuite.judges import JudgeCache, LLMJudge
    from evalsuite.judges.endpoints import guarded_http_client
    from evalsuite.judges.ragas import RagasJudge
    from evalsuite.metrics.registry import METRICS

    llm = None
    if any("llm" in METRICS[m].needs.judges for m in metrics):
        from evalsuite.errors import EvalSuiteError

        if endpoint is None:
            raise EvalSuiteError("these metrics need an LLM judge endpoint", field="endpoint")
        settings = {**(options or {}), **endpoint.options} if endpoint.origin == "operator" else dict(options or {})
        settings = {k: v for k, v in settings.items() if k in ("price_input", "price_output", "budget", "concurrency")
                    and v is not None}
        if "concurrency" in settings:
            settings["concurrency"] = int(settings["concurrency"])
        if cache is None:
            cache = JudgeCache(None)
            if endpoint.guarded:  # a visitor's own endpoint: its replies serve that visitor only
                cache = cache.scoped("owner", owner or "unknown")
        client = guarded_http_client(allow_private=endpoint.allow_private) if endpoint.guarded else None
        # The key is the endpoint's own: "" (not None) so the judge never falls back to the environment.
        llm = LLMJudge(endpoint.model, base_url=endpoint.base_url, api_key=endpoint.api_key or "", cache=cache,
                       http_client=client, **settings)
    ragas = RagasJudge(llm, None, metrics=metrics, aspects=aspects, strictness=strictness,
                       aspect_strictness=aspect_strictness) if metrics else None
    if not lexical:
        return ragas
    from evalsuite.judges.lexical import LexicalJudge

    return PageJudge(ragas, LexicalJudge(metrics=lexical))


class PageJudge:
    """The Judge page's run: the RAGAS metrics (:class:`~evalsuite.judges.ragas.RagasJudge`, LLM
    and embedding) and the lexical scores (:class:`~evalsuite.judges.lexical.LexicalJudge`, no
    model, no endpoint), one after the other, with one progress, one stop and one set of counts."""

    def __init__(self, ragas=None, lexical=None) -> None:
        self.ragas, self.lexical = ragas, lexical
        self.llm = getattr(ragas, "llm", None)
        self._stopped = False

    def estimate(self, records) -> str:
        parts = [str(self.ragas.estimate(records))] if self.ragas is not None else []
        if self.lexical is not None:
            parts.append(self.lexical.estimate(records))
        return "; ".join(parts)

    def stop(self) -> None:
        self._stopped = True
        if self.ragas is not None:
            self.ragas.stop()

    def judge(self, records, *, progress=None):
        from evalsuite.judges import JudgedRecords, JudgeStats, combine_rows

        stats, done, outcomes = JudgeStats(), len(records), []
        for judge in (self.ragas, self.lexical):
            if judge is None or self._stopped:
                continue
            result = judge.judge(records, progress=progress)
            records, done = result.records, min(done, result.done)
            outcomes.append(result.rows)
            stats.merge(result.stats)
        if self._stopped and stats.stopped is None:
            stats.stopped = "interrupted"
        rows = combine_rows(*outcomes)
        if rows is not None:  # finished by every judge that ran (a lexical judge's done skips records without a reference)
            done = sum(1 for outcome in rows if outcome is not None)
        return JudgedRecords(records, stats, done, rows)


def metric_changes(before, after, metrics, lexical) -> list[dict]:
    """Per metric: its mean over the judged records before the run and after it, the records it
    has a value for after, and the judges that filled it (plain values for a table)."""
    from evalsuite.metrics.registry import METRICS

    def means(records):
        import math

        out = {}
        try:
            from evalsuite.records.evaluation import evaluate_records

            report = evaluate_records(records)
            table = report.per_query
            for m in metrics:
                if m in table.columns:
                    value = table[m].astype(float).mean()
                    out[m] = (None if math.isnan(value) else float(value), int(table[m].notna().sum()))
        except Exception:  # no metric can be computed from these records (none was judged)
            pass
        for m in lexical:
            values = records.table.column(m).to_pylist() if m in records.table.column_names else []
            present = [v for v in values if v is not None]
            out[m] = (sum(present) / len(present) if present else None, len(present))
        return out

    old, new = means(before), means(after)
    rows = []
    for m in [*metrics, *lexical]:
        judges = "lexical" if m in lexical else ", ".join(METRICS[m].needs.judges) if m in METRICS else ""
        b, a = old.get(m, (None, 0)), new.get(m, (None, 0))
        rows.append({"metric": m, "before": b[0], "after": a[0], "records with a value after": a[1],
                     "judged by": judges})
    return rows


def _subset(records, rows):
    import evalsuite as es

    if len(rows) == len(records):
        return records
    import pyarrow as pa

    return es.Records(records.table.take(pa.array(rows, pa.int64())), source=records.source,
                      extra_columns=list(records.extra_columns))


def _merge(records, judged, rows):
    """The file's records with the judged rows' columns put back at their positions."""
    from evalsuite.judges import write_columns

    if len(rows) == len(records):
        return judged
    n = len(records)
    table, new = records.table, judged.table
    columns, types = {}, {}
    for name in new.column_names:
        if name in ("query_id", "system", "relevant_ids", "relevant_grades"):
            continue
        old = table.column(name).to_pylist() if name in table.column_names else [None] * n
        values = new.column(name).to_pylist()
        for j, i in enumerate(rows):
            old[i] = values[j]
        columns[name] = old
        types[name] = new.schema.field(name).type
    return write_columns(records, columns, None, types)


def _run(job: JudgeJob, records) -> None:
    """The thread's body: judge, merge, serialise; never touches Streamlit."""
    from evalsuite.io.record_files import write_records

    def progress(done, total, stats):
        job.done, job.total = done, total
        job.stats = stats.as_dict()

    heartbeat = threading.Thread(target=_heartbeat, args=(job,), daemon=True, name="evalsuite-judge-heartbeat")
    heartbeat.start()
    try:
        part = _subset(records, job.rows)
        result = job.judge.judge(part, progress=progress)
        job.stats = result.stats.as_dict()
        from evalsuite.judges import run_outcome

        outcome = run_outcome(result.stats)
        if result.stats.stopped == "budget" and job.status != "cancelling":
            job.status = "cancelled"
            job.message = (f"Stopped by the budget after {result.done} of {len(part)} records: this run could spend at "
                           f"most {job.budget if job.budget is not None else 0:.4f} (what was left of the judge budget) "
                           f"and spent {result.stats.cost:.4f}; nothing joined the session. The finished requests are "
                           "cached: a later run with budget left continues from them.")
            job.outcome = "budget"
            return
        if job.status == "cancelling" or result.stats.stopped:
            job.status = "cancelled"
            why = f": {outcome.message}" if outcome.message not in ("", outcome.status) else ""
            job.message = (f"Stopped ({result.stats.stopped or 'cancelled'}{why}) after {result.done} of {len(part)} "
                           "records; nothing joined the session. Starting again answers the finished calls from the "
                           "cache.")
            job.outcome = "error" if outcome.status == "endpoint failing" else None
            return
        if outcome.status == "missing" and not result.stats.ok:  # a run that did nothing useful is never done
            job.status, job.outcome = "error", "error"
            job.message = f"The run failed: {outcome.message}; nothing joined the session."
            return
        # Some judgements missing (malformed replies, refusals): the others are kept, paid for as they
        # are, and the message says how many are missing (the CLI's --max-missing decides its exit code).
        missing = result.stats.missing
        missing_note = (" (" + ", ".join(f"{n} {cause}" for cause, n in missing.items() if n) + ")"
                        if sum(missing.values()) else "")
        job.replies = _reply_keys(job.judge, result.records)
        job.changes = metric_changes(part, result.records, job.metrics, job.lexical)
        merged = _merge(records, result.records, job.rows)
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "judged.parquet"
            write_records(merged, path)
            job.result = path.read_bytes()
        s = result.stats
        unreached = f" ({s.unreached} more could not connect)" if s.unreached else ""
        judged = result.counts(len(part))
        job.message = (f"{judged}: {s.calls} requests sent{unreached}, "
                       f"{s.cache_hits} from the cache, {s.rule_decided} decided by rule, {sum(s.missing.values())} "
                       f"missing{missing_note}; cost {s.cost:.4f}")
        job.status = "done"
    except Exception as exc:  # shown as a message on the page, never a traceback
        from evalsuite.errors import EvalSuiteError

        job.status = "error"
        job.message = str(exc) if isinstance(exc, EvalSuiteError) else (
            f"the run failed ({type(exc).__name__}); " + traceback.format_exception_only(type(exc), exc)[-1].strip()[:300])
    finally:
        job.finished = time.monotonic()
        _report(job, final=True)


def _reply_keys(judge, records) -> dict:
    """{request hash: key of its reply in the judge cache} for the LLM requests of a run's records."""
    import json

    from evalsuite.judges import PROVENANCE_COLUMN

    llm = getattr(judge, "llm", None)
    scope = getattr(getattr(llm, "cache", None), "scope_key", None)
    if scope is None or PROVENANCE_COLUMN not in records.table.column_names:
        return {}
    keys = {}
    for text in records.table.column(PROVENANCE_COLUMN).to_pylist():
        for entry in json.loads(text) if text else []:
            if isinstance(entry, dict) and entry.get("judge") == "llm" and entry.get("request_hash"):
                keys[entry["request_hash"]] = scope(entry["request_hash"])
    return keys


def _report(job: JudgeJob, final: bool = False) -> None:
    """Write the run's counts (and, when ``final``, its outcome) to the audit log; never raises."""
    if job.run_id is None:
        return
    from .workspace_store import get_store

    store, _ = get_store()
    if store is None:
        return
    outcome = None
    if final:
        outcome = getattr(job, "outcome", None) or {"done": "done", "error": "error"}.get(job.status, "cancelled")
    try:
        store.report_judge_run(job.run_id, job.stats, outcome=outcome, message=job.message if final else "")
    except Exception:  # the log must never stop or fail a run
        pass


def _heartbeat(job: JudgeJob) -> None:
    """Report the run's counts every HEARTBEAT_SECONDS while it runs (a silent run counts as
    abandoned after a while: evalsuite.storage.STALE_RUN_SECONDS)."""
    while job.run_id is not None and job.finished is None:
        time.sleep(HEARTBEAT_SECONDS)
        if job.finished is None:
            _report(job)


def admit(job: JudgeJob, endpoint, user) -> None:
    """Admit ``job`` under the deployment's limits and log it (the store's audit log); sets the
    run's budget to what it may spend.

    Raises
    ------
    EvalSuiteError
        A limit is reached (the message says which and when it renews), or a daily budget is
        set but the store that counts it is unavailable.
    """
    from evalsuite.errors import EvalSuiteError
    from evalsuite.judges import endpoint_host

    from . import hosting
    from .workspace_store import get_store

    limits = hosting.limits()
    llm = getattr(job.judge, "llm", None)
    if llm is None or endpoint is None:
        return  # no endpoint: nothing is spent (lexical and bundled-embedding metrics only)
    store, error = get_store()
    if store is None:
        if limits.judge_daily_budget is not None or limits.judge_daily_budget_total is not None:
            raise EvalSuiteError(f"judging is limited by a daily budget here and the store that counts it is "
                                 f"unavailable ({error}); try again later", field="budget")
        return
    run_budget = llm.budget if endpoint.origin == "operator" else None
    job.run_id, budget = store.begin_judge_run(
        user_id=user.id, user_label=user.label, model=endpoint.model,
        endpoint=endpoint_host(endpoint.base_url) or "", origin=endpoint.origin, records=len(job.rows),
        limits=limits, run_budget=run_budget)
    if endpoint.origin == "operator":
        job.budget = budget
        llm.budget = budget


def start(job: JudgeJob, records, endpoint=None, user=None) -> JudgeJob:
    """Admit ``job`` (:func:`admit`), start it on ``records`` in a background thread and keep it
    in the session.

    Raises
    ------
    EvalSuiteError
        A limit stops it (nothing started).
    """
    current = st.session_state.get(KEY_JOB)
    if current is not None and current.running:
        raise RuntimeError("a judging run is already running")
    if user is None:
        from . import hosting

        user = hosting.user()
    admit(job, endpoint, user)
    job.total = len(job.rows)
    st.session_state[KEY_JOB] = job
    job.thread = threading.Thread(target=_run, args=(job, records), daemon=True, name="evalsuite-judge")
    job.thread.start()
    return job


def current() -> JudgeJob | None:
    return st.session_state.get(KEY_JOB)


def judged_name(name: str) -> str:
    """The judged version's file name: ``answers.jsonl`` -> ``answers.judged.parquet``.

    >>> judged_name("answers.jsonl.gz"), judged_name("x.judged.parquet")
    ('answers.judged.parquet', 'x.judged.parquet')
    """
    stem = name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".tsv", ".parquet", ".pq"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    if stem.endswith(".judged"):
        stem = stem[: -len(".judged")]
    return f"{stem}.judged.parquet"


def file_label(stored) -> str:
    """How the Judge page's "Records file" names a stored file: its name and digest's start."""
    return f"{stored.name} (sha256 {stored.digest[:12]})"


def collect_finished() -> None:
    """Put a finished run's records into the session in place of the file it judged (any page)."""
    from . import session

    job = current()
    if job is None or job.status != "done" or job.collected or job.result is None:
        return
    job.collected = True
    files = session.files()
    original = files.pop(job.file_key, None)
    try:
        stored = session.ingest("records", judged_name(job.file_name), job.result)
    except Exception as exc:
        if original is not None:
            files[job.file_key] = original
        job.status, job.message = "error", session.message_for(job.file_name, exc)
        return
    originals = st.session_state.setdefault(KEY_ORIGINALS, {})
    if original is not None:
        originals[stored.key] = originals.pop(job.file_key, original)
    st.session_state.setdefault(KEY_OWN_REPLIES, {}).update(job.replies)
    # The Judge page's "Records file" stays on the file just judged (its label changed with its digest).
    st.session_state[KEY_FILE_PICKER] = file_label(stored)
    st.session_state.setdefault(KEY_JOB_NOTICES, []).append(
        f"{job.file_name}: the judged records ({stored.name}) replace it on every page; the original file is kept "
        "unchanged and can be restored on the Judge page.")


def restore_original(judged_key: str) -> bool:
    """Put the original file back in place of its judged version."""
    from . import session

    original = st.session_state.get(KEY_ORIGINALS, {}).pop(judged_key, None)
    if original is None:
        return False
    files = session.files()
    files.pop(judged_key, None)
    files[original.key] = original
    return True



def own_request(request_hash) -> bool:
    """A request one of this session's judge runs made (its reply may be shown here)."""
    return isinstance(request_hash, str) and request_hash in st.session_state.get(KEY_OWN_REPLIES, {})


def raw_output(request_hash: str) -> str | None:
    """The judge's raw reply to a request a run of this session made, from the judge cache; None
    for any other hash (a records file's provenance never opens another session's replies)."""
    from evalsuite.judges import JudgeCache

    key = st.session_state.get(KEY_OWN_REPLIES, {}).get(request_hash) if isinstance(request_hash, str) else None
    if key is None:
        return None
    try:
        hit = JudgeCache(None).get(key)
    except Exception:
        return None
    if hit is None:
        return None
    if "content" in hit:
        return str(hit.get("content"))
    return "(an embedding vector)" if "embedding" in hit else str(hit)[:2000]
