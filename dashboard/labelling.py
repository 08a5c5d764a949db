"""The label loop's dashboard side: labelling tasks in the workspace store, who labels, the records
and judge values of a task, and the labels as the statistics of :mod:`evalsuite.stats.labelled_records`
read them. The Label page (``pages/label.py``) draws the widgets; the Calibration page reads the
active task through :func:`active_task` and :func:`task_data`.

The task in use is ``st.session_state[KEY_TASK]`` and the URL's ``label_task`` parameter (so a
reload, a second browser or a link opens the same task); the tasks this session made or opened are
listed from ``st.session_state[KEY_KNOWN]`` and, for a signed-in user, the tasks they own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from evalsuite import METRICS
from evalsuite.errors import EvalSuiteError
from evalsuite.stats import labelled_records
from evalsuite.stats.active import DEFAULT_MIX
from evalsuite.storage import LabelTask, StoreError

from . import hosting, loaders
from .constants import RECORDS_K
from .workspace_store import get_store

KEY_TASK = "label_task"              # the task in use (its id); also the URL parameter
KEY_KNOWN = "label_tasks_known"      # ids of the tasks this session made or opened
KEY_NAME = "label_labeller"          # the name typed by a labeller when sign-in is off
KEY_LAST = "label_last"              # (query_id, system, answer) of this session's last answer
JUDGED_KINDS = ("context", "answer")
QUESTIONS = {
    "faithfulness": "Is every statement of the answer supported by the contexts?",
    "context_relevance": "Are the retrieved contexts relevant to the question?",
    "context_precision": "Do the useful contexts come first?",
    "context_recall": "Do the contexts hold everything the reference answer says?",
    "answer_correctness": "Does the answer say what the reference answer says?",
    "answer_relevance": "Does the answer address the question?",
}


@dataclass(frozen=True)
class Labeller:
    """Who labels: ``id`` keys their labels in the store, ``name`` is shown."""

    id: str
    name: str


def labeller() -> Labeller | None:
    """The signed-in user (sign-in on), else the name typed on the Label page (None until typed)."""
    user = hosting.user()
    if user.signed_in:
        return Labeller(user.id, user.label or user.id)
    name = str(st.session_state.get(KEY_NAME) or "").strip()
    return Labeller(f"name:{name}", name) if name else None


def question_for(metric: str) -> str:
    """The yes/no question labellers answer for a judged metric."""
    if metric in QUESTIONS:
        return QUESTIONS[metric]
    entry = METRICS.get(metric)
    what = entry.summary if entry is not None else metric
    return f"Is this record good on {metric} ({what})?"


def judged_metrics(report) -> list[str]:
    """The judged RAG metrics of a records report (the registry's context and answer metrics that
    have a value for some record)."""
    per_query = report.per_query
    return [m for m in report.metrics if m in METRICS and METRICS[m].kind in JUDGED_KINDS
            and m in per_query.columns and per_query[m].notna().any()]


def file_report(f):
    """(Records, RecordsReport) of one session records file (cached by its digest)."""
    records = loaders.read_records(f.digest, f.name, f.data)
    return records, loaders.evaluate_records((f.digest,), RECORDS_K, 1, records)


def remember(task_id: str) -> None:
    """Make ``task_id`` the task in use, in the session and the URL."""
    known = st.session_state.setdefault(KEY_KNOWN, [])
    if task_id not in known:
        known.append(task_id)
    st.session_state[KEY_TASK] = task_id
    st.query_params[KEY_TASK] = task_id


def active_task() -> tuple[LabelTask | None, str | None]:
    """The task in use (from the URL first, then the session) and a plain-text problem, if any."""
    asked = st.query_params.get(KEY_TASK) or st.session_state.get(KEY_TASK)
    if not asked:
        return None, None
    store, error = get_store()
    if store is None:
        return None, f"The workspace store is unavailable, so labels cannot be read or written: {error}"
    try:
        task = store.label_task(asked)
    except StoreError as exc:
        return None, f"The labelling task of this link cannot be opened: {exc}"
    if st.session_state.get(KEY_TASK) != task.task_id or st.query_params.get(KEY_TASK) != task.task_id:
        remember(task.task_id)
    return task, None


def known_tasks() -> list[LabelTask]:
    """Tasks of this session and, signed in, the user's own."""
    store, _ = get_store()
    if store is None:
        return []
    user = hosting.user()
    try:
        return store.label_tasks(owner_id=user.id if user.signed_in else None,
                                 task_ids=st.session_state.get(KEY_KNOWN, []))
    except StoreError:
        return []


def create_task(f, metric: str, systems: list[str], mode: str, seed: int, threshold: float, question: str) -> LabelTask:
    """Store the records file and a task over it; make it the task in use.

    Raises
    ------
    StoreError
        The store refused it (size caps, unavailable ...).
    """
    store, error = get_store()
    if store is None:
        raise StoreError(f"the workspace store is unavailable: {error}", code="unavailable")
    user = hosting.user()
    who = labeller()
    digest = store.put_dataset(memoryview(f.data), kind="records", filename=f.name)  # bytes or HeldBytes
    task = store.create_label_task(
        f"{metric} of {f.name}", digest=digest, filename=f.name, judgement=metric, systems=systems, mode=mode,
        seed=int(seed), created_by=(who.name if who else user.label) or "anonymous",
        owner_id=user.id if user.signed_in else None,
        meta={"question": question, "threshold": float(threshold), "mix": DEFAULT_MIX})
    remember(task.task_id)
    return task


@dataclass
class TaskData:
    """What a page needs of a task: its records, the judged values, the labels and the design."""

    task: LabelTask
    records: pd.DataFrame      # the records file's rows of the task's systems
    labels: pd.DataFrame       # one row per record and labeller (module doc of labelled_records)
    plan: pd.DataFrame         # labelled_records.design
    undefined: int             # records whose metric is undefined (left out)


def _labels_frame(labels) -> pd.DataFrame:
    rows = [{"query_id": lab.query_id, "system": lab.system, "labeller_id": lab.labeller_id, "labeller": lab.labeller,
             "label": math.nan if lab.label is None else float(lab.label), "labelled_at": lab.labelled_at.timestamp()}
            for lab in labels]
    return pd.DataFrame(rows, columns=["query_id", "system", "labeller_id", "labeller", "label", "labelled_at"])


def task_data(task: LabelTask, who: Labeller | None = None) -> TaskData:
    """Read the task's records (from the store, by digest), their judged values and the labels.

    Raises
    ------
    EvalSuiteError
        The records cannot be read, or the metric is not in them.
    """
    store, error = get_store()
    if store is None:
        raise EvalSuiteError(f"the workspace store is unavailable: {error}")
    data = store.get_dataset(task.digest)
    records = loaders.read_records(task.digest, task.filename, data)
    report = loaders.evaluate_records((task.digest,), RECORDS_K, 1, records)
    per_query = report.per_query
    if task.judgement not in per_query.columns:
        raise EvalSuiteError("the records of this task have no such judged metric", field="judgement",
                             value=task.judgement)
    judged = per_query[per_query["system"].astype(str).isin(task.systems)][["query_id", "system", task.judgement]]
    judged = judged.rename(columns={task.judgement: "value"})
    labels = _labels_frame(store.labels(task.task_id))
    plan = labelled_records.design(judged, labels, task.mode, task.seed, float(task.meta.get("mix", DEFAULT_MIX)),
                                   labeller_id=who.id if who else None)
    frame = records.frame
    frame = frame[frame["system"].astype(str).isin(task.systems)] if "system" in frame.columns else frame
    return TaskData(task, frame, labels, plan, int(judged["value"].isna().sum()))


def answer(task_id: str, query_id: str, system: str, label: int | None) -> None:
    """Write the current labeller's answer for a record (a button's callback: the next record
    shows on the rerun that follows)."""
    who = labeller()
    store, error = get_store()
    if who is None or store is None:
        st.session_state[KEY_LAST] = ("error", error or "type your name first")
        return
    try:
        store.put_label(task_id, query_id, system, labeller_id=who.id, labeller=who.name, label=label)
    except StoreError as exc:
        st.session_state[KEY_LAST] = ("error", str(exc))
        return
    st.session_state[KEY_LAST] = ("ok", (query_id, system, label))

