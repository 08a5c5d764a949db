"""RAG quality page: context precision, recall, relevance, faithfulness, answer correctness,
citations and task success (with its Wilson interval) per system, each with its coverage."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import ui
from evalsuite import display
from evalsuite.metrics.registry import LOWER_IS_BETTER


def _sources(table: pd.DataFrame, metrics) -> None:
    """Where each system's value of each metric comes from (decided per system: judgement lists
    when its records have them, else the file's own column, e.g. a RAGAS export's)."""
    shown = table[table["metric"] != "success"]
    if shown.empty:
        return
    sources = shown.pivot(index="system", columns="metric", values="source")
    sources = sources.reindex(index=shown["system"].drop_duplicates().tolist(),
                              columns=[m for m in metrics if m in sources.columns])
    st.caption("Source of each value, per system: computed from the judgement lists of that system's records, "
               "filled by a judge (which one, from the records' judge provenance), or given in its file (a RAGAS "
               "export's own column, say); decided for each system on its own records. - = no value for that system.")
    st.dataframe(sources.replace("none", "-"), width="stretch", key="rag_quality_sources")
    lower = [m for m in sources.columns if m in LOWER_IS_BETTER]
    if lower:
        st.caption("Lower is better for: " + ", ".join(ui.plain(m) for m in lower) + ".")


def render() -> None:
    st.title("RAG quality")
    loaded = ui.records_report_or_notice(spinner="Evaluating the per-request records")
    if loaded is None:
        return
    records, report = loaded
    metrics = ui.rag_metrics(report)
    if not metrics:
        st.warning("These records have no field a quality metric needs: judgement lists (answer_claims_supported, "
                   "context_useful, ...) or success. The Latency and Failures pages may still apply.")
        return
    table = display.rag_quality_table(report, metrics)
    judged = table[(table["metric"] != "success") & (table["coverage"] > 0)]["system"].unique().tolist()
    default = [s for s in report.systems if s in judged] or report.systems
    systems = ui.bound(st.multiselect, "Systems", report.systems, default=default, key="rag_quality_systems",
                       help="By default the systems with a judged quality metric")
    all_systems = table
    table = table[table["system"].isin(systems)]
    st.caption("Each mean is over the requests where the metric is defined; coverage = defined / requests. "
               "A judgement that is missing is never read as False.")
    wide, summary = ui.rag_summary(table, metrics)
    st.subheader("Per system")
    st.dataframe(summary, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in summary.columns})
    ui.download_csv(summary, "rag_quality.csv", key="rag_quality_csv", index=True)

    if "success" in metrics and report.task_success:
        st.subheader("Task success with its Wilson interval")
        success = table[table["metric"] == "success"][["system", "mean", "ci_low", "ci_high", "n_defined"]]
        # Systems in the order of the table above and of the chart (the order they were loaded in).
        success = success.rename(columns={"mean": "success rate", "n_defined": "requests"})
        success = success[success["requests"] > 0]  # systems whose records say nothing of success: not listed
        if success.empty:
            others = all_systems[(all_systems["metric"] == "success") & (all_systems["n_defined"] > 0)]["system"]
            names = [ui.plain(s) for s in others.unique()]
            st.info(f"None of the chosen systems has success values; {len(names)} other systems have: "
                    + ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
                    + ". Add them under Systems above.", icon=":material/info:")
        st.dataframe(success, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                    for c in ("success rate", "ci_low", "ci_high")})
        ui.download_csv(success, "task_success.csv", key="rag_quality_success_csv")

    _sources(table, metrics)
    # By default the metric most of the shown systems have a value for.
    options = list(wide.columns)
    defined = [int(wide[m].notna().sum()) for m in options]
    metric = ui.pick("Chart", options, key="rag_quality_metric", index=defined.index(max(defined)) if defined else 0)
    if metric:
        ui.chart(display.rag_metric_bars(table, metric), key="rag_quality_chart")
    st.subheader("Long table")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                                for c in table.columns if pd.api.types.is_float_dtype(table[c])})
    ui.download_csv(table, "rag_quality_long.csv", key="rag_quality_long_csv")
    for warning in report.warnings:
        st.text(warning)


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
