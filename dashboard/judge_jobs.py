"""Judge runs of the dashboard: a background thread per run, its progress kept in the session.

A run (:class:`JudgeJob`) lives in ``st.session_state`` under :data:`KEY_JOB`, so its progress
survives page switches: the thread updates the job object, and the Judge page reads it. The thread
uses no Streamlit call. When the run has finished, :func:`collect_finished` (called by the shell
on every page) puts the judged records into the session as a new version of the file: the
original :class:`~dashboard.session.StoredFile` (bytes untouched) is set aside under
:data:`KEY_ORIGINALS` and the judged records (Parquet bytes) take its place, so every page,
Compare and Save and share use them; :func:`restore_original` undoes it.

Endpoint settings (:func:`endpoint_settings`): a hosted dashboard, one whose ``[evalsuite]``
secrets name a judge endpoint (``judge_base_url``) or set ``hosted = true``, uses only the
operator's endpoint, model and key from the secrets; a visitor cannot enter an address. Local
use may enter an endpoint and model; the key comes only from the environment
(``EVALSUITE_JUDGE_API_KEY`` / ``OPENAI_API_KEY``) or the secrets, never from a widget.
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
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    thread: threading.Thread | None = field(repr=False, default=None)

    @property
    def running(self) -> bool:
        return self.status in ("running", "cancelling")

    def cancel(self) -> None:
        """Stop the run: calls in flight finish, no new call is sent; nothing joins the session."""
        if self.running and self.judge is not None:
            self.status = "cancelling"
            self.judge.stop()


def secrets_settings() -> dict:
    """The ``[evalsuite]`` secrets section (empty without a secrets file)."""
    from .settings import _secrets_section  # the one place that reads Streamlit's secrets

    return dict(_secrets_section())


def is_hosted(secrets: dict | None = None) -> bool:
    """A hosted dashboard: the secrets name a judge endpoint or say ``hosted = true``."""
    secrets = secrets_settings() if secrets is None else secrets
    return bool(secrets.get("judge_base_url")) or str(secrets.get("hosted", "")).lower() in ("1", "true", "yes")


def endpoint_settings(entered: dict | None = None, secrets: dict | None = None) -> dict:
    """The LLM judge's settings: the operator's (secrets) on a hosted dashboard, else what was
    entered, else the environment. The key is never taken from ``entered``."""
    import os

    secrets = secrets_settings() if secrets is None else secrets
    out: dict = {}
    if is_hosted(secrets):
        out["base_url"] = secrets.get("judge_base_url")
        out["model"] = secrets.get("judge_model")
        out["api_key"] = secrets.get("judge_api_key")
        for key in ("price_input", "price_output", "budget", "concurrency"):
            if secrets.get(f"judge_{key}") is not None:
                out[key] = secrets[f"judge_{key}"]
        return out
    entered = {k: v for k, v in (entered or {}).items() if k != "api_key" and v not in (None, "")}
    out["base_url"] = entered.get("base_url") or os.environ.get("EVALSUITE_JUDGE_BASE_URL")
    out["model"] = entered.get("model") or os.environ.get("EVALSUITE_JUDGE_MODEL")
    out["api_key"] = secrets.get("judge_api_key")  # None: the judge reads the environment
    for key in ("price_input", "price_output", "budget", "concurrency"):
        if entered.get(key) is not None:
            out[key] = entered[key]
    return out


def build_judge(settings: dict, metrics, aspects, strictness: int, aspect_strictness: int, cache=None):
    """A :class:`~evalsuite.ragas_judge.RagasJudge` for the page's settings."""
    from evalsuite.errors import EvalSuiteError
    from evalsuite.judges import LLMJudge
    from evalsuite.judges.ragas import RagasJudge
    from evalsuite.metrics.registry import METRICS

    llm = None
    if any("llm" in METRICS[m].needs.judges for m in metrics):
        if not settings.get("model"):
            raise EvalSuiteError("the LLM judge needs a model" + (" (the operator's secrets name none)"
                                                                   if is_hosted() else ""), field="model")
        options = {k: settings[k] for k in ("price_input", "price_output", "budget", "concurrency") if k in settings}
        if "concurrency" in options:
            options["concurrency"] = int(options["concurrency"])
        llm = LLMJudge(settings["model"], base_url=settings.get("base_url"), api_key=settings.get("api_key"),
                       cache=cache, **options)
    return RagasJudge(llm, None, metrics=metrics, aspects=aspects, strictness=strictness,
                      aspect_strictness=aspect_strictness)


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

    try:
        part = _subset(records, job.rows)
        result = job.judge.judge(part, progress=progress)
        job.stats = result.stats.as_dict()
        if job.status == "cancelling" or result.stats.stopped:
            job.status = "cancelled"
            job.message = (f"Stopped ({result.stats.stopped or 'cancelled'}) after {result.done} of {len(part)} records; "
                           "nothing joined the session. Starting again answers the finished calls from the cache.")
            return
        merged = _merge(records, result.records, job.rows)
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "judged.parquet"
            write_records(merged, path)
            job.result = path.read_bytes()
        s = result.stats
        job.message = (f"{result.done} of {len(part)} records judged: {s.calls} requests sent, {s.cache_hits} from the "
                       f"cache, {s.rule_decided} decided by rule, {sum(s.missing.values())} missing; cost {s.cost:.4f}")
        job.status = "done"
    except Exception as exc:  # shown as a message on the page, never a traceback
        from evalsuite.errors import EvalSuiteError

        job.status = "error"
        job.message = str(exc) if isinstance(exc, EvalSuiteError) else (
            f"the run failed ({type(exc).__name__}); " + traceback.format_exception_only(type(exc), exc)[-1].strip()[:300])
    finally:
        job.finished = time.monotonic()


def start(job: JudgeJob, records) -> JudgeJob:
    """Start ``job`` on ``records`` in a background thread and keep it in the session."""
    current = st.session_state.get(KEY_JOB)
    if current is not None and current.running:
        raise RuntimeError("a judging run is already running")
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



def raw_output(request_hash: str) -> str | None:
    """The judge's raw reply to a request, from the judge cache (None when not cached here)."""
    from evalsuite.judges import JudgeCache

    try:
        hit = JudgeCache(None).get(request_hash)
    except Exception:
        return None
    if hit is None:
        return None
    if "content" in hit:
        return str(hit.get("content"))
    return "(an embedding vector)" if "embedding" in hit else str(hit)[:2000]
