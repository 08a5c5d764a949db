"""Small widgets shared by the pages: downloads, messages, pickers bound to the URL.

User text (file names, ids, questions, error messages) is shown with ``st.text``,
``st.dataframe``, ``st.error``/``st.warning`` bodies built from plain strings, or escaped with
:func:`plain` before it goes into markdown.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

import evalsuite as es
from evalsuite.display import metric_name, safe_csv

from . import loaders, session, view
from .constants import KEY_REL_LEVEL, RAG_ORDER, SOURCES, WHOLE_LIST
from .text import plain  # noqa: F401  (re-exported: pages escape user text with ui.plain)


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


# Positional parameters of the widgets bound to the URL, as Streamlit names them.
_POSITIONAL = {
    "selectbox": ("label", "options", "index"),
    "radio": ("label", "options", "index"),
    "multiselect": ("label", "options", "default"),
    "select_slider": ("label", "options", "value"),
    "slider": ("label", "min_value", "max_value", "value", "step"),
    "number_input": ("label", "min_value", "max_value", "value", "step"),
    "text_input": ("label", "value", "max_chars"),
    "toggle": ("label", "value"),
    "checkbox": ("label", "value"),
}
_MAX_URL_TEXT = 500  # a text input bound to the URL without max_chars keeps at most this much


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _allowed_url_values(name: str, params: dict, values: list[str]) -> list[str] | None:
    """The URL values a widget may take (a subset of ``values``, in order), or None to drop them
    all. Numbers must be finite, in range and whole where the widget counts in whole steps;
    options must be the widget's own (as shown, ``format_func`` applied)."""
    if name in ("selectbox", "radio", "multiselect", "select_slider"):
        shown = params.get("format_func") or str
        options = {str(shown(o)) for o in params.get("options", ())}
        kept = [v for v in values if v in options]
        if name == "multiselect":
            return list(dict.fromkeys(kept)) or None  # duplicates dropped as well
        return kept if kept and len(kept) == len(values) else None
    if name in ("number_input", "slider"):
        default = params.get("value")
        count = len(default) if isinstance(default, (tuple, list)) else 1
        numbers = [_number(v) for v in values]
        if len(numbers) != count or any(n is None for n in numbers):
            return None
        low, high = params.get("min_value"), params.get("max_value")
        whole = all(isinstance(params.get(p), int) and not isinstance(params.get(p), bool)
                    for p in ("step", "min_value") if params.get(p) is not None) and params.get("step") is not None
        for n in numbers:
            if (low is not None and n < low) or (high is not None and n > high) or (whole and n != int(n)):
                return None
        if count == 2 and numbers[0] > numbers[1]:
            return None  # a reversed range would select nothing
        return values
    if name in ("toggle", "checkbox"):
        return values if len(values) == 1 and values[0].lower() in ("true", "false") else None
    if name == "text_input":
        limit = params.get("max_chars") or _MAX_URL_TEXT
        return values if len(values) == 1 and len(values[0]) <= limit else None
    return values


def _sanitise_url(widget, args: tuple, key: str, kwargs: dict) -> None:
    """Drop (or trim to the known options) the URL's value for ``key`` before the widget reads it.

    Streamlit seeds a bound widget from the URL the page was opened with; a value it cannot
    take (``rel_level=inf`` in an integer number input raises OverflowError inside Streamlit)
    would stop the whole page. Streamlit keeps that URL in its session's query-parameter state
    (``_initial_query_params``, read when a widget is first drawn) with no public way to edit
    it, so this reaches into it; the visible URL is corrected through ``remove_param``.
    """
    ctx = get_script_run_ctx()
    if ctx is None or key in st.session_state:
        # The widget exists already (or code set its value): Streamlit seeds it from the URL only
        # when it is first drawn, and the URL now holds the user's own current choice.
        return
    name = getattr(widget, "__name__", "")
    params = dict(zip(_POSITIONAL.get(name, ()), args)) | kwargs
    with ctx.session_state.query_params() as qp:
        raw = qp.get_initial_value(key)
        if raw is None:
            return
        values = [raw] if isinstance(raw, str) else [str(v) for v in raw]
        if values == [""]:
            allowed = values if name in ("multiselect", "text_input") else None
        else:
            allowed = _allowed_url_values(name, params, values)
        if allowed == values:
            return
        initial = getattr(qp, "_initial_query_params", None)
        if allowed is None:
            if isinstance(initial, dict):
                initial.pop(key, None)
            qp.remove_param(key)
        else:
            if isinstance(initial, dict):
                initial[key] = list(allowed)
            qp.set_corrected_value(key, list(allowed), "string_array_value")


def forget_url_value(key: str) -> None:
    """Drop the URL's value for ``key`` (the address bar's and the one Streamlit would seed the
    widget from when it is first drawn), so a value the code sets in session state wins."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    try:
        with ctx.session_state.query_params() as qp:
            initial = getattr(qp, "_initial_query_params", None)
            if isinstance(initial, dict):
                initial.pop(key, None)
            if key in qp:
                qp.remove_param(key)
    except AttributeError:  # Streamlit's internal query-parameter state changed
        st.query_params.pop(key, None)


def bound(widget, *args, key: str, **kwargs):
    """Call the Streamlit ``widget`` bound to the URL query parameter ``key`` and record its value
    as part of the view (a share link carries the value of every bound widget drawn, including
    values the URL does not show because they were the default when they were chosen).

    A URL value the widget cannot take (unknown option, a number that is not finite, out of
    range or not whole, an overlong text) is dropped first, so a tampered link shows the
    default instead of an error."""
    try:
        _sanitise_url(widget, args, key, kwargs)
    except AttributeError:  # Streamlit's internal query-parameter state changed: bind unchecked
        pass
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
    # Failed requests without a given failure_stage get one by the rules of evalsuite.attribution.
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
    """From :func:`evalsuite.views.rag_quality_table`: (system x metric means without all-empty
    metrics, the same with a ``<metric> coverage`` column per metric)."""
    systems = table["system"].drop_duplicates().tolist()  # the table's order (the chart's too), not sorted
    wide = table.pivot(index="system", columns="metric", values="mean").reindex(index=systems, columns=list(metrics))
    coverage = table.pivot(index="system", columns="metric", values="coverage").reindex(index=systems,
                                                                                         columns=list(metrics))
    wide = wide.dropna(axis=1, how="all")
    coverage = coverage[wide.columns].add_suffix(" coverage")
    return wide, wide.join(coverage)
