"""The "Download report" button: one self-contained HTML file of the current view.

The report (built with :func:`evalsuite.display.html_report`) holds

- the overview: mean per system with coverage, for the ranking runs (the Overview page's
  metrics and cutoffs, as last chosen in this session) and for the per-request records;
- the comparison of the Compare page's current selection (``ComparisonReport.to_dataframe()``;
  the page's defaults when it was not opened yet);
- the charts the current page shows (recorded by :func:`dashboard.downloads.chart`);
- the reproducibility stamp: EvalSuite version, metric definitions and conventions used, cutoffs,
  rel_level, query policy, test, correction, alpha, seed, the view's URL parameters and the
  SHA-256 of every input file.

What the report needs is captured while the page runs (:func:`report_spec`: the session's files,
the selections, the figures; nothing is parsed or evaluated then); the HTML is built only when the
button is clicked (Streamlit's deferred download, on another thread, without the session), from
the same cached parses, evaluations and comparisons the pages use (Streamlit's caches are global,
keyed by the files' digests), so the numbers are the ones on screen.
"""

from __future__ import annotations

import copy
import datetime as _dt
from dataclasses import dataclass, field

import streamlit as st

import evalsuite as es
from evalsuite import display
from evalsuite.display import InputFile, ReportSection, html_report

from . import current_view, loaders, messages, page_data, session, workspaces
from .constants import (
    COMPARE_DEFAULT_RECORD_METRICS,
    COMPARE_DEFAULT_RUN_METRICS,
    CORRECTIONS,
    DEFAULT_BASE_METRICS,
    DEFAULT_CUTOFFS,
    KEY_REPORT_COMPARE,
    KEY_REPORT_OVERVIEW,
    RECORDS_K,
    TESTS,
    WHOLE_LIST,
)


@dataclass(frozen=True)
class Comparison:
    """A Compare page selection: ``source`` "runs" or "records", ``systems`` (baseline, other, ...)."""

    source: str
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    test: str = TESTS[0]
    correction: str = CORRECTIONS[0]
    alpha: float = 0.05
    pairs: str = "baseline"


@dataclass(frozen=True)
class ReportSpec:
    """Everything the report is built from, captured during the script run."""

    page_title: str
    page_path: str
    view_params: tuple[tuple[str, str], ...]
    workspace: str | None
    files: tuple                        # every StoredFile of the session
    qrels: object | None                # the active qrels' StoredFile
    runs: tuple                         # ((system, StoredFile), ...)
    records: tuple                      # (StoredFile, ...) of the records files
    rel_level: int
    bases: tuple[str, ...]
    cutoffs: tuple                      # ints and "all" (the whole ranked list)
    comparison: Comparison | None
    figures: tuple = field(default=())  # ((caption, plotly Figure), ...)


def remember_overview(bases, cutoffs) -> None:
    """The Overview page's metric and cutoff choice, for reports made on any page."""
    st.session_state[KEY_REPORT_OVERVIEW] = (tuple(bases), tuple(k if k == WHOLE_LIST else int(k) for k in cutoffs))


def remember_comparison(comparison: Comparison) -> None:
    """The Compare page's selection, for reports made on any page."""
    st.session_state[KEY_REPORT_COMPARE] = comparison


def report_spec() -> ReportSpec:
    """Capture the current view (cheap: references to the session's files and the page's figures)."""
    current = current_view.current()
    bases, cutoffs = st.session_state.get(KEY_REPORT_OVERVIEW) or (DEFAULT_BASE_METRICS, DEFAULT_CUTOFFS)
    active = workspaces.active()
    return ReportSpec(
        page_title=current.title, page_path=current.url_path, view_params=tuple(current_view.bound_params()),
        workspace=active["name"] if active else None, files=tuple(session.files().values()),
        qrels=session.active_qrels(), runs=tuple(session.runs().items()),
        records=tuple(session.record_files()), rel_level=page_data.rel_level(), bases=tuple(bases),
        cutoffs=tuple(cutoffs), comparison=st.session_state.get(KEY_REPORT_COMPARE),
        figures=tuple(current.figures))


def download_button(container=None) -> None:
    """The "Download report" button; the HTML is built when it is clicked."""
    spec = report_spec()
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M")
    (container or st).download_button(
        "Download report", data=lambda: _quietly(build_report, spec), file_name=f"evalsuite-report-{spec.page_path or 'data'}-"
        f"{stamp}.html", mime="text/html", key="report_download", on_click="ignore", icon=":material/description:",
        help="One HTML file that opens without a network: the overview, the comparison and the charts of this "
             "view, with a reproducibility stamp (EvalSuite version, conventions, settings, SHA-256 of every input).")


# ----------------------------------------------------------------------------------------------
# Building the report (runs when the download is clicked; no session state is read here).


def _parsed(spec: ReportSpec):
    """(qrels StoredFile, Qrels, {system: (StoredFile, Run)}) from the parse caches."""
    qrels_file = spec.qrels
    qrels = loaders.read_qrels(qrels_file.digest, qrels_file.name, qrels_file.data)
    return qrels_file, qrels, {system: (f, loaders.read_run(f.digest, f.name, f.data)) for system, f in spec.runs}


def _overview_runs(spec: ReportSpec, settings: dict, conventions: dict) -> ReportSection | None:
    if spec.qrels is None or not spec.runs:
        return None
    qrels_file, qrels, runs = _parsed(spec)
    ks = page_data.cutoff_values(spec.cutoffs)
    metrics = page_data.metric_names(spec.bases, spec.cutoffs)
    judged = [display.metric_name("judged", k) for k in ks]
    settings["overview metrics"] = metrics
    settings["cutoffs"] = [WHOLE_LIST if k is None else k for k in ks]
    if not metrics:
        return ReportSection("Overview: ranking runs", note="No metric or cutoff chosen on the Overview page.")
    reports, failures = {}, []
    for system, (f, run) in runs.items():
        try:
            # The Overview page's exact call, so the cached evaluation is reused.
            reports[system] = loaders.evaluate_run(qrels_file.digest, f.digest, tuple(metrics + judged),
                                                   int(spec.rel_level), qrels, run)
        except es.EvalSuiteError as exc:
            failures.append(f"{system} ({f.name}): {exc}")
    if not reports:
        return ReportSection("Overview: ranking runs", note="No run could be evaluated. " + " ".join(failures))
    first = next(iter(reports.values()))
    conventions.update(first.conventions)
    settings["query policy"] = f"{first.params['queries']}: {first.conventions.get('queries', '')}"
    note = (f"Qrels {session.qrels_label(qrels_file)}. Relevant from grade {spec.rel_level}. Means over the qrels queries "
            "(trec_eval -c): a qrels query missing from a run scores 0; run queries without qrels are dropped.")
    if failures:
        note += " Not evaluated: " + " ".join(failures)
    table = display.overview_table(reports, metrics)
    return ReportSection("Overview: ranking runs", note=note, tables=[
        ("Mean per system, with coverage (what the means are over)", table),
        ("judged@k: share of the top k docs that have a judgement, averaged over the queries each run answered "
         "(a qrels query missing from a run has no docs to judge)", display.judged_table(reports, ks))])


def _records_report(spec: ReportSpec):
    return page_data.records_report_of(spec.records, RECORDS_K, int(spec.rel_level))


def _overview_records(spec: ReportSpec, settings: dict, conventions: dict) -> ReportSection | None:
    if not spec.records:
        return None
    _, report = _records_report(spec)
    settings["records: ranking cutoff k"] = RECORDS_K
    conventions.update({f"records: {k}": v for k, v in report.conventions.items()})
    metrics = page_data.rag_metrics(report)
    if not metrics:
        return ReportSection("Overview: per-request records",
                             note="These records have no field a quality metric needs.")
    _, summary = page_data.rag_summary(display.rag_quality_table(report, metrics), metrics)
    return ReportSection("Overview: per-request records", note=(
        "Each mean is over the requests where the metric is defined; coverage = defined / requests. A missing "
        "judgement is never read as False."), tables=[("Mean per system, with coverage", summary)])


def _default_comparison(spec: ReportSpec) -> Comparison | None:
    if spec.qrels is not None and len(spec.runs) >= 2:
        return Comparison("runs", (spec.runs[0][0], spec.runs[1][0]), COMPARE_DEFAULT_RUN_METRICS)
    if spec.records:
        _, report = _records_report(spec)
        if len(report.systems) >= 2:
            pair = (report.systems[0], report.systems[1])
            return Comparison("records", pair, tuple(_record_metrics_of(report, pair)[:COMPARE_DEFAULT_RECORD_METRICS]))
    return None


def _record_metrics_of(report, pair) -> list[str]:
    per_system = loaders.records_per_system(report, pair)
    return [m for m in page_data.record_metrics(report) if all(per_system[n][m].notna().any() for n in pair)]


def _comparison(spec: ReportSpec, settings: dict) -> ReportSection | None:
    chosen = spec.comparison or _default_comparison(spec)
    if chosen is None:
        settings["comparison"] = "none (it needs two systems)"
        return None
    systems = tuple(chosen.systems)
    a, b = systems[0], ", ".join(systems[1:])
    if chosen.source == "runs":
        if spec.qrels is None or any(n not in dict(spec.runs) for n in systems):
            return ReportSection("Comparison", note=f"The Compare selection ({b} against {a}) is not in the data.")
        qrels_file, qrels, runs = _parsed(spec)
        # The Compare page's exact call, so the cached comparison is reused.
        report = loaders.compare_runs(qrels_file.digest, tuple((n, runs[n][0].digest) for n in systems),
                                      tuple(chosen.metrics), chosen.test, chosen.correction, float(chosen.alpha),
                                      int(spec.rel_level), qrels, {n: runs[n][1] for n in systems},
                                      chosen.pairs)
    else:
        _, records_report = _records_report(spec)
        if any(n not in records_report.systems for n in systems):
            return ReportSection("Comparison", note=f"The Compare selection ({b} against {a}) is not in the data.")
        # The Compare page's exact call (same key), so the cached comparison is reused.
        report = loaders.compare_records(tuple(f.digest for f in spec.records), RECORDS_K, int(spec.rel_level),
                                         systems, tuple(chosen.metrics), chosen.test, chosen.correction,
                                         float(chosen.alpha), records_report, chosen.pairs)
    p = report.params
    settings.update({
        "comparison": f"{b} against {a} (baseline), "
                      + ("ranking runs" if chosen.source == "runs" else "per-request records"),
        "comparison metrics": list(chosen.metrics), "test": p["test"], "correction": p["correction"],
        "alpha": p["alpha"], "seed": p["seed"], "resamples": p["n_resamples"],
        "interval": f"{p['confidence']:.0%} {p['ci']} bootstrap"})
    table = report.to_dataframe().set_index("metric")
    return ReportSection("Comparison", note=report.verdict() + " " + ". ".join(str(d) for d in report.describe()) + ".",
                         tables=[(f"{b} against {a}", table)])


def _untitled(figure):
    """A copy of a page's figure without its own title: the report prints the title once, as
    the chart's heading (the figure on the page keeps its title)."""
    figure = copy.deepcopy(figure)
    figure.update_layout(title=None, margin=dict(t=20))
    return figure


def _quietly(build, *args):
    """Run ``build`` (the deferred download, on a thread of Streamlit's server, not a script run)
    without the "missing ScriptRunContext" warning each cached loader it calls would log: about 25
    lines a click that say nothing to an operator."""
    import logging

    context_log = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = context_log.level
    context_log.setLevel(logging.ERROR)
    try:
        return build(*args)
    finally:
        context_log.setLevel(level)


def _guarded(build, title: str, *args) -> ReportSection | None:
    try:
        return build(*args)
    except Exception as exc:  # one part that fails must not lose the rest of the report
        return ReportSection(title, note=f"Could not be computed: {messages.error_text(exc)}")


def build_report(spec: ReportSpec, generated_at: str | None = None) -> bytes:
    """The HTML report of ``spec`` as UTF-8 bytes (see the module doc for what it holds)."""
    settings: dict = {"page": spec.page_title or spec.page_path,
                      "view (URL query parameters)": "&".join(f"{k}={v}" for k, v in spec.view_params) or "defaults",
                      "workspace": spec.workspace or "not saved",
                      "qrels": session.qrels_label(spec.qrels) if spec.qrels else "none",
                      "rel_level": spec.rel_level}
    conventions: dict = {}
    sections = [
        _guarded(_overview_runs, "Overview: ranking runs", spec, settings, conventions),
        _guarded(_overview_records, "Overview: per-request records", spec, settings, conventions),
        _guarded(_comparison, "Comparison", spec, settings),
    ]
    if spec.figures:
        sections.append(ReportSection(f"Charts of the view: {spec.page_title}",
                                      figures=[(caption, _untitled(figure)) for caption, figure in spec.figures]))
    inputs = [InputFile(f.kind + (f" ({f.system})" if f.system else ""), f.name, f.digest, len(f.data))
              for f in spec.files]
    if not spec.files:
        sections.append(ReportSection("No data", note="This session had no file loaded."))
    title = "EvalSuite report" + (f": {spec.workspace}" if spec.workspace else "")
    text = html_report(title, [s for s in sections if s is not None], inputs=inputs, settings=settings,
                       conventions=conventions, generated_at=generated_at)
    return text.encode("utf-8")

