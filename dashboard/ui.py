"""Small widgets shared by the pages: downloads, messages, pickers bound to the URL.

User text (file names, ids, questions, error messages) is shown with ``st.text``,
``st.dataframe``, ``st.error``/``st.warning`` bodies built from plain strings, or escaped with
:func:`plain` before it goes into markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd
import streamlit as st

import evalsuite as es
from evalsuite.views import safe_csv

from . import loaders, store, view
from .constants import RAG_ORDER

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: object) -> str:
    """``text`` with every markdown/HTML special character escaped, for use inside markdown."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def error_text(exc: BaseException) -> str:
    """The message to show for an exception: EvalSuite's own, or a plain one without traceback."""
    if isinstance(exc, es.EvalSuiteError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}); the rest of your data is untouched."


def show_error(exc: BaseException) -> None:
    """The exception's plain-text message in an error box (escaped: the box renders markdown)."""
    st.error(plain(error_text(exc)), icon=":material/error:")


def download_csv(frame: pd.DataFrame, file_name: str, key: str, label: str = "Download CSV", index: bool = False) -> None:
    """A download button with the table as spreadsheet-safe CSV (:func:`evalsuite.views.safe_csv`)."""
    st.download_button(label, data=safe_csv(frame, index=index), file_name=file_name, mime="text/csv", key=key,
                       icon=":material/download:", on_click="ignore")


def chart(figure, key: str, container=None) -> None:
    """Draw a plotly figure full width and record it as one of the view's charts (the report
    export embeds the charts of the current view, see :mod:`dashboard.view`)."""
    (container or st).plotly_chart(figure, key=key, width="stretch")
    view.add_figure(figure)


def chart_with_selection(figure, key: str, container=None, **kwargs):
    """:func:`chart` for a figure whose selection events the page reads (``on_select`` ...)."""
    event = (container or st).plotly_chart(figure, key=key, width="stretch", **kwargs)
    view.add_figure(figure)
    return event


def bound(widget, *args, key: str, **kwargs):
    """Call the Streamlit ``widget`` bound to the URL query parameter ``key`` and record its value
    as part of the view (a share link carries the value of every bound widget drawn, including
    values the URL does not show because they were the default when they were chosen)."""
    value = widget(*args, key=key, bind="query-params", **kwargs)
    view.add_bound(key, value)
    return value


def pick(label: str, options: Sequence, key: str, index: int = 0, container=None, **kwargs):
    """A selectbox bound to the URL query parameter ``key``; None (with nothing drawn) when empty."""
    options = list(options)
    if not options:
        return None
    return bound((container or st).selectbox, label, options, index=min(index, len(options) - 1), key=key, **kwargs)


def no_data(what: str, page_hint: str = "Upload files on the Data page, or load the sample data there.") -> None:
    st.info(f"{what} {page_hint}", icon=":material/info:")


def metric_names(bases, cutoffs) -> list[str]:
    """ranx-style names, e.g. ndcg@10, for every chosen metric and cutoff (the Overview page's
    columns, and the report's)."""
    return [f"{b}@{k}" for b in bases for k in sorted(cutoffs)]


def rel_level() -> int:
    return int(st.session_state.get("rel_level") or 1)


def qrels_and_runs():
    """(qrels StoredFile, parsed Qrels, {system: (StoredFile, Run)}) of the session; Nones if missing."""
    qrels_file = store.active_qrels()
    qrels = loaders.read_qrels(qrels_file.digest, qrels_file.name, qrels_file.data) if qrels_file else None
    runs = {system: (f, loaders.read_run(f.digest, f.name, f.data)) for system, f in store.runs().items()}
    return qrels_file, qrels, runs


def run_reports(metrics: Sequence[str]):
    """Evaluate every run of the session against the active qrels (cached by digests).

    Returns ``(reports, failures)``: ``{system: EvaluationReport}`` and ``{system: plain-text
    reason}`` for runs that could not be evaluated (e.g. no query in common with the qrels).
    """
    qrels_file, qrels, runs = qrels_and_runs()
    reports, failures = {}, {}
    if qrels is None:
        return reports, failures
    for system, (f, run) in runs.items():
        try:
            reports[system] = loaders.evaluate_run(qrels_file.digest, f.digest, tuple(metrics), float(rel_level()),
                                                   qrels, run)
        except es.EvalSuiteError as exc:
            failures[system] = f"{system} ({f.name}): {exc}"
    return reports, failures


def records_report(k: int = 10):
    """(Records, RecordsReport) of every records file of the session combined; (None, None) if none.

    Raises
    ------
    EvalSuiteError
        The files cannot be combined or evaluated.
    """
    return records_report_of(tuple(store.record_files()), int(k), float(rel_level()))


def records_report_of(parts: Sequence, k: int, rel_level: float):
    """:func:`records_report` for given records files (``StoredFile``s): no session needed, so
    the report export can call it when the download is clicked (cached by the files' digests)."""
    if not parts:
        return None, None
    parsed = tuple(loaders.read_records(f.digest, f.name, f.data) for f in parts)
    digests = tuple(f.digest for f in parts)
    records = parsed[0] if len(parsed) == 1 else loaders.concat_records(digests, parsed)
    report = loaders.evaluate_records(digests, int(k), float(rel_level), records)
    return records, report


def record_metrics(report) -> list[str]:
    """Quality columns of a records report's per-request table: ``report.metrics``, then
    ``success`` (1/0 per request) when the records have it."""
    extra = ["success"] if "success" in report.per_query.columns and "success" not in report.metrics else []
    return list(report.metrics) + extra


def rag_metrics(report) -> list[str]:
    """The quality metrics of a records report in display order (RAG_ORDER first), with
    ``success`` when the records have it."""
    available = list(report.metrics) + (["success"] if report.task_success and "success" not in report.metrics else [])
    return [m for m in RAG_ORDER if m in available] + [m for m in available if m not in RAG_ORDER]


def rag_summary(table: pd.DataFrame, metrics: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From :func:`evalsuite.views.rag_quality_table`: (system x metric means without all-empty
    metrics, the same with a ``<metric> coverage`` column per metric)."""
    wide = table.pivot(index="system", columns="metric", values="mean").reindex(columns=list(metrics))
    coverage = table.pivot(index="system", columns="metric", values="coverage").reindex(columns=list(metrics))
    wide = wide.dropna(axis=1, how="all")
    coverage = coverage[wide.columns].add_suffix(" coverage")
    return wide, wide.join(coverage)
