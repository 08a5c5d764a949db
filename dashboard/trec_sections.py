"""trec_eval's views on the dashboard: the summary block (num_q, num_ret, num_rel, num_rel_ret) and
the 11-point interpolated precision-recall curve, shared by the Overview and Compare pages."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import evalsuite as es
from dashboard import downloads, loaders, messages, page_data
from evalsuite import display

# What a report needs for these views (added to the metrics a page evaluates anyway).
METRICS = (*display.TREC_SUMMARY_METRICS, *display.PR_CURVE_METRICS)


def summary_columns(reports: Mapping[str, es.EvaluationReport]):
    """trec_eval's summary lines per system (num_q, num_ret, num_rel, num_rel_ret), indexed by system,
    so holes (queries or relevant docs a run misses) show next to the coverage."""
    return display.trec_summary_table(reports)


def pr_curve_section(reports: Mapping[str, es.EvaluationReport], key: str) -> None:
    """The 11-point interpolated precision-recall curve of each system, overlaid, with its CSV."""
    st.subheader("Precision-recall curve")
    table = display.pr_curve_table(reports)
    st.caption("Interpolated precision at recall 0, 0.1, ..., 1 (trec_eval 10's iprec_at_recall), averaged over the "
               "qrels queries. As trec_eval 10 does, level r is read at the j-th relevant doc with j = round(r x R) "
               "(R = relevant docs of the query), so with few relevant docs neighbouring levels share a value; "
               "trec_eval 9, pytrec_eval and ir_measures take j = int(r x R + 0.9) (docs/conventions.md).")
    downloads.chart(display.pr_curve(table), key=f"{key}_chart")
    downloads.download_csv(table, "pr_curve.csv", key=f"{key}_csv")


def pr_curve_for(names, key: str) -> None:
    """:func:`pr_curve_section` for the named runs of the session (the Compare page's A and B)."""
    qrels_file, qrels, runs = page_data.qrels_and_runs()
    if qrels is None:
        return
    reports = {}
    for name in names:
        if name not in runs:
            continue
        f, run = runs[name]
        try:
            reports[name] = loaders.evaluate_run(qrels_file.digest, f.digest, METRICS,  # shared with the Overview
                                                 page_data.rel_level(), qrels, run)
        except es.EvalSuiteError as exc:
            messages.show_error(exc)
    if reports:
        pr_curve_section(reports, key)
