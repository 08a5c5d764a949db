"""What a page shows from the session's files: the runs and the active qrels, their evaluation
reports and the records report (cached by the files' digests), the metric names a page's pickers
offer, and the notice a page shows when something it needs is missing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import pandas as pd
import streamlit as st

import evalsuite as es
from evalsuite.display import metric_name

from . import loaders, session
from .constants import KEY_REL_LEVEL, RAG_ORDER, SOURCES, WHOLE_LIST
from .messages import no_data, show_error
from .url_binding import bound


def cutoff_values(cutoffs) -> list[int | None]:
    """The chosen cutoffs as numbers, ascending, then None for "all" (the whole ranked list)."""
    numeric = sorted({int(k) for k in cutoffs if k != WHOLE_LIST})
    return numeric + ([None] if WHOLE_LIST in cutoffs else [])


def metric_names(bases, cutoffs) -> list[str]:
    """ranx-style names, e.g. ndcg@10, for every chosen metric and cutoff; "all" gives the
    whole-list metric (``map``, ``ndcg``, ``mrr`` ...: trec_eval's ``map``, ``ndcg``,
    ``recip_rank``). The Overview page's columns, and the report's."""
    return list(dict.fromkeys(metric_name(b, k) for b in bases for k in cutoff_values(cutoffs)))


def trec_eval_name(metric: str) -> str | None:
    """trec_eval's name of a ranking metric (``map_cut_100``, ``map``, ``recip_rank``, ``set_P``
    ...), or None when trec_eval has none; for column help texts."""
    try:
        spec = es.parse_metric(metric)
    except es.EvalSuiteError:
        return None
    if spec.k is None and spec.base in ("precision", "recall"):
        return {"precision": "set_P", "recall": "set_recall"}[spec.base]
    return spec.trec_name


def rel_level() -> int:
    """The sidebar's "Relevant from grade" (a whole number from 1 to 100, see :func:`bound`)."""
    value = st.session_state.get(KEY_REL_LEVEL) or 1
    return int(value)


def qrels_and_runs():
    """(qrels StoredFile, parsed Qrels, {system: (StoredFile, Run)}) of the session; Nones if missing."""
    qrels_file = session.active_qrels()
    qrels = loaders.read_qrels(qrels_file.digest, qrels_file.name, qrels_file.data) if qrels_file else None
    runs = {system: (f, loaders.read_run(f.digest, f.name, f.data)) for system, f in session.runs().items()}
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
            reports[system] = loaders.evaluate_run(qrels_file.digest, f.digest, tuple(metrics), rel_level(),
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
    return records_report_of(tuple(session.record_files()), int(k), rel_level())


def runs_and_qrels_or_notice(no_qrels: str = "No qrels loaded."):
    """``(runs, active qrels file)`` for a ranking page, or None after the page says which is
    missing (``no_qrels`` is the message when no qrels file is loaded)."""
    runs = session.runs()
    if not runs:
        no_data("No run loaded.")
        return None
    qrels_file = session.active_qrels()
    if qrels_file is None:
        no_data(no_qrels)
        return None
    return runs, qrels_file


def records_report_or_notice(spinner: str | None = None):
    """:func:`records_report` for a page: ``(Records, RecordsReport)``, or None after the page
    says why not (the error as a message, or that no records are loaded).

    ``spinner``: text shown while the records are read and evaluated (plain text, no markdown).
    """
    try:
        with st.spinner(spinner) if spinner else contextlib.nullcontext():
            records, report = records_report()
    except Exception as exc:
        show_error(exc)
        return None
    if report is None:
        no_data("No per-request records loaded.")
        return None
    return records, report


def pick_source(key: str, runs_needed: int) -> bool:
    """The "ranking runs / per-request records" switch of the Per-query and Compare pages, bound
    to the URL under ``key``. Its default is ranking runs when ``runs_needed`` runs and a qrels
    are loaded (or no records are), else per-request records. Returns True for ranking runs."""
    runs_ready = len(session.runs()) >= runs_needed and session.active_qrels() is not None
    default = 0 if runs_ready or not session.record_files() else 1
    source = bound(st.radio, "Source", SOURCES, index=default, horizontal=True, key=key, label_visibility="collapsed")
    return source == SOURCES[0]


def records_report_of(parts: Sequence, k: int, rel_level: int):
    """:func:`records_report` for given records files (``StoredFile``s): no session needed, so
    the report export can call it when the download is clicked (cached by the files' digests)."""
    if not parts:
        return None, None
    parsed = tuple(loaders.read_records(f.digest, f.name, f.data) for f in parts)
    digests = tuple(f.digest for f in parts)
    records = parsed[0] if len(parsed) == 1 else loaders.concat_records(digests, parsed)
    # Failed requests without a given failure_stage get one by the rules of evalsuite.records.attribution.
    records = loaders.attributed_records(digests, int(rel_level), records)
    report = loaders.evaluate_records(digests, int(k), int(rel_level), records)
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
    """From :func:`evalsuite.display.rag_quality_table`: (system x metric means without all-empty
    metrics, the same with a ``<metric> coverage`` column per metric)."""
    systems = table["system"].drop_duplicates().tolist()  # the table's order (the chart's too), not sorted
    wide = table.pivot(index="system", columns="metric", values="mean").reindex(index=systems, columns=list(metrics))
    coverage = table.pivot(index="system", columns="metric", values="coverage").reindex(index=systems,
                                                                                         columns=list(metrics))
    wide = wide.dropna(axis=1, how="all")
    coverage = coverage[wide.columns].add_suffix(" coverage")
    return wide, wide.join(coverage)
