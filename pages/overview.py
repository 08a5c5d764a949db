"""Overview page: headline metrics per system at chosen cutoffs, coverage, queries dropped or
scored 0 and why, and judged@k (holes in the qrels)."""

from __future__ import annotations

import streamlit as st

from dashboard import export, session, trec_sections, ui
from dashboard.constants import BASE_METRICS, CUTOFFS, DEFAULT_BASE_METRICS, DEFAULT_CUTOFFS, WHOLE_LIST, WHOLE_LIST_TREC
from evalsuite import display


def _trec_help(metric: str) -> str | None:
    name = ui.trec_eval_name(metric)
    return f"trec_eval: {name}" if name else None


def render() -> None:
    st.title("Overview")
    left, right = st.columns(2)
    bases = ui.bound(left.multiselect, "Metrics", BASE_METRICS, default=list(DEFAULT_BASE_METRICS),
                     key="overview_metrics")
    cutoffs = ui.bound(right.multiselect, "Cutoffs k", CUTOFFS, default=list(DEFAULT_CUTOFFS), key="overview_k",
                       help=f"{WHOLE_LIST} = no cutoff, the whole ranked list: trec_eval's "
                            + ", ".join(WHOLE_LIST_TREC.values()) + " (map@100 is trec_eval's map_cut_100, not map)")
    export.remember_overview(bases, cutoffs)
    loaded = ui.runs_and_qrels_or_notice("No qrels loaded: upload the judgements for your runs.")
    if loaded is None:
        return
    _, qrels_file = loaded
    if not bases or not cutoffs:
        st.info("Choose at least one metric and one cutoff.")
        return
    ks = ui.cutoff_values(cutoffs)
    metrics = ui.metric_names(bases, cutoffs)
    judged = [display.metric_name("judged", k) for k in ks]
    qrels_label = session.qrels_label(qrels_file)
    with st.spinner(f"Evaluating {len(session.runs())} run(s) against {ui.plain(qrels_label)}"):
        reports, failures = ui.run_reports(metrics + judged)
    for reason in failures.values():
        st.error(ui.plain(reason), icon=":material/error:")
    if failures and len(session.qrels_files()) > 1:
        st.info(f"{len(session.qrels_files())} qrels files are loaded and {ui.plain(qrels_label)} is in use: if a run "
                "belongs to other judgements, choose them in the sidebar (Qrels in use).", icon=":material/info:")
    if not reports:
        st.warning("No run could be evaluated against these qrels.")
        return

    st.caption(f"Qrels in use: {ui.plain(qrels_label)}. Relevant from grade {ui.rel_level()}. Means over the qrels "
               "queries (trec_eval -c): a qrels query missing from a run scores 0; run queries without qrels are "
               "dropped.")
    if None in ks:
        st.caption("No cutoff (all): the whole ranked list, as trec_eval's "
                   + ", ".join(f"{m} = {ui.plain(t)}" for m, t in WHOLE_LIST_TREC.items() if m in bases) + ".")
    table = display.overview_table(reports, metrics)
    st.subheader("Headline metrics")
    st.dataframe(table[metrics], width="stretch",
                 column_config={m: st.column_config.NumberColumn(m, format="%.4f", help=_trec_help(m)) for m in metrics})
    ui.chart(display.metric_bars(table, metrics), key="overview_bars")
    st.subheader("Coverage: what the means are over")
    # trec_eval's summary block (num_q, num_ret, num_rel, num_rel_ret) next to the coverage, so holes show.
    # Evaluated apart (cached apart from the picked metrics: they need whole rankings, so a new pick of
    # cutoffs does not pay for them again).
    trec_reports, _ = ui.run_reports(list(trec_sections.METRICS))
    trec_reports = {s: r for s, r in trec_reports.items() if s in reports}
    coverage = table.drop(columns=metrics).join(trec_sections.summary_columns(trec_reports))
    st.caption("num_q, num_ret, num_rel, num_rel_ret: trec_eval's summary lines (queries evaluated, docs retrieved, "
               "relevant docs in the qrels, relevant docs retrieved; sums over the queries).")
    st.dataframe(coverage, width="stretch", column_config={
        "coverage": st.column_config.ProgressColumn("coverage", format="percent", min_value=0.0, max_value=1.0)})
    # The download has what both tables show: the headline metrics, the coverage and trec_eval's summary.
    ui.download_csv(table.join(coverage[[c for c in coverage.columns if c not in table.columns]]), "overview.csv",
                    key="overview_csv", index=True)

    st.subheader("judged@k: share of the top k docs that have a judgement")
    st.caption("Averaged over the queries each run answered: a qrels query missing from a run has no docs that "
               "could lack a judgement (it is counted under Coverage above).")
    judged_table = display.judged_table(reports, ks)
    st.dataframe(judged_table, width="stretch",
                 column_config={j: st.column_config.NumberColumn(j, format="%.3f") for j in judged})
    ui.download_csv(judged_table, "judged.csv", key="overview_judged_csv", index=True)
    low = [s for s, row in judged_table.iterrows() if row[judged[0]] < 0.9]
    if low:
        where = "ranked lists" if ks[0] is None else f"top {ks[0]}"
        st.warning(f"{len(low)} system(s) have less than 90% of their {where} judged: unjudged docs count "
                   "as not relevant, so their scores are lower bounds.", icon=":material/warning:")

    st.subheader("Queries dropped or scored 0")
    system = ui.pick("System", list(reports), key="overview_system")
    accounting = display.query_accounting(reports[system])
    if accounting.empty:
        st.caption("Every run query was evaluated and every evaluated query has a relevant judged doc.")
    else:
        st.dataframe(accounting, hide_index=True, width="stretch")
        ui.download_csv(accounting, f"queries_{system}.csv", key="overview_accounting_csv")
    for warning in reports[system].warnings:
        st.text(warning)

    trec_sections.pr_curve_section(trec_reports, key="overview_pr")


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
