"""Compare page: a baseline and any number of systems. Above the table, a one-line verdict.
Two systems: the comparison report per metric, per-query differences, A against B, the two ranked
lists of one query, failure mix and latency. More: a systems x metrics table with significance
marks and a per-query heat-map (queries x systems, sorted by difference from the baseline)."""

from __future__ import annotations

import streamlit as st

from dashboard import export, loaders, query_planning, session, trec_sections, ui
from dashboard.constants import (
    COMPARE_DEFAULT_RECORD_METRICS,
    COMPARE_DEFAULT_RUN_METRICS,
    COMPARE_RUN_METRICS,
    CORRECTIONS,
    RANKED_LIST_DEPTH,
    RECORDS_K,
    TESTS,
)
from evalsuite import display
from evalsuite.records.pairing import request_keys

LIST_COLUMNS = ("rank", "doc_id", "label", "title", "score")


def _pick_systems(systems: list[str]) -> tuple[str, ...] | None:
    """The baseline (A), the system compared with it (B) and any more systems, baseline first."""
    if len(systems) < 2:
        ui.no_data(f"Comparing needs two systems; this session has {len(systems)}.")
        return None
    left, middle, right = st.columns(3)
    # A's default is the first system other than the one the URL asks for as B, so a link whose A
    # is gone (renamed, tampered) still opens on two different systems.
    asked_b = st.query_params.get("compare_b")
    a = ui.pick("System A (baseline)", systems, index=next(i for i, s in enumerate(systems) if s != asked_b),
                key="compare_a", container=left)
    # B's default is the first system other than A, so a link whose systems are gone (or name
    # only A) still opens on two different systems.
    b = ui.pick("System B", systems, index=next(i for i, s in enumerate(systems) if s != a), key="compare_b",
                container=middle)
    if a == b:
        st.warning("Pick two different systems.")
        return None
    # More systems against the same baseline; every system is an option, so changing A or B never
    # invalidates the choice (A and B themselves are left out below).
    more = ui.bound(right.multiselect, "Also compare with A", systems, default=[], key="compare_more",
                    placeholder="more systems (optional)")
    return (a, b, *[s for s in more if s not in (a, b)])


def _options() -> tuple[str, str, float]:
    with st.expander("Statistics: test and correction"):
        a, b, c = st.columns(3)
        test = ui.pick("Paired test", TESTS, key="compare_test", container=a)
        # Westfall-Young resamples the permutation test's own sign flips: offered with that test only.
        corrections = [c for c in CORRECTIONS if c != "westfall_young" or test == "permutation"]
        correction = ui.pick("Multiple-comparison correction", corrections, key="compare_correction", container=b,
                             help="westfall_young (step-down max-T over the sign flips) needs the permutation test")
        alpha = ui.bound(c.select_slider, "alpha", (0.01, 0.05, 0.1), value=0.05, key="compare_alpha")
    return test, correction, float(alpha)


PAIRS = {"each system against A": "baseline", "every pair": "all"}


def _pairs(systems: tuple[str, ...]) -> str:
    """Which comparisons to make: each system against the baseline, or (three systems or more)
    every pair."""
    if len(systems) < 3:
        return "baseline"
    choice = ui.bound(st.radio, "Compare", list(PAIRS), horizontal=True, key="compare_pairs")
    return PAIRS[choice]


def _verdict(report) -> None:
    """The report in one plain sentence, above the table."""
    st.markdown(f"**{ui.plain(report.verdict())}**")


def _downloads(report, names: tuple[str, ...]) -> None:
    stem = "_".join(names[:2]) + (f"_and_{len(names) - 2}_more" if len(names) > 2 else "")
    left, right = st.columns(2)
    with left:
        ui.download_csv(report.table, f"compare_{stem}.csv", key="compare_csv")
    with right:
        st.download_button("Download LaTeX", data=report.to_latex().encode("utf-8"), file_name=f"compare_{stem}.tex",
                           mime="text/x-tex", key="compare_latex", icon=":material/download:", on_click="ignore")


def _report_table(report, names: tuple[str, ...]) -> None:
    """One row per metric and system: 12 narrow columns that fit the page (the CSV has them all)."""
    if len(names) == 2:
        st.subheader(f"{ui.plain(names[1])} against {ui.plain(names[0])}")
    rows = display.comparison_rows(report)
    all_pairs = report.params["pairs"] == "all"
    order = [c for c in rows.columns if (c != "baseline" or all_pairs) and (c != "system" or len(names) > 2)]
    col_a, col_b = display.difference_columns(*names[:2]) if len(names) == 2 else ("mean A", "mean B")
    number = st.column_config.NumberColumn
    st.dataframe(rows, hide_index=True, width="stretch", column_order=order, column_config={
        "metric": st.column_config.TextColumn("metric", width="small"),
        "mean baseline": number(col_a, format="%.4f", width="small"),
        "mean system": number(col_b, format="%.4f", width="small"),
        "diff": number("diff", format="%+.4f", width="small", help="system - baseline"),
        "p": number("p", format="%.3g", width="small"), "p adj": number("p adj", format="%.3g", width="small"),
        "sig": st.column_config.TextColumn("sig", width="small", help="* : p adj <= alpha"),
        "effect": number("effect", format="%+.3f", width="small", help="Cohen's d of the differences"),
        "W/T/L": st.column_config.TextColumn("W/T/L", width="small", help="queries higher / tied / lower"),
        "n": number("n", format="%d", width="small", help="queries compared")})
    st.caption("  \n".join(ui.plain(str(d)) for d in report.describe()))  # one line each: test, interval, correction
    _downloads(report, names)
    dropped = report.table[(report.table["n_dropped_nan"] > 0) | (report.table["n_unpaired"] > 0)]
    for r in dropped.itertuples(index=False):
        st.text(f"{r.metric}, {r.system}: {r.n_dropped_nan} queries left out as undefined, {r.n_unpaired} unpaired")
    for warning in report.warnings:
        st.text(warning)


def _many_systems(report) -> None:
    """Systems x metrics with significance marks, then the per-query heat-map of one metric."""
    st.subheader("Systems x metrics")
    st.dataframe(display.systems_by_metrics(report), width="stretch")
    every_pair = report.params["pairs"] == "all"
    st.caption(f"Against the baseline {ui.plain(report.params['baseline'])}: ▲ significantly better, ▼ significantly "
               "worse (after correction); no mark: not significant. "
               + ("Every pair is in the table below, one row per metric and pair (baseline column: the pair's first "
                  "system)." if every_pair else "Every comparison is below, one row per metric and system."))
    _report_table(report, tuple(report.systems))
    metric = ui.pick("Heat-map metric", report.metrics, key="compare_heat_metric")
    if every_pair:
        pair_diff, pair_significant = display.pairwise_differences(report, metric)
        ui.chart(display.pairwise_heatmap(pair_diff, pair_significant, metric), key="compare_pair_heatmap")
    diff = display.differences_from_baseline(report, metric)
    ui.chart(display.difference_heatmap(diff, metric, report.params["baseline"]), key="compare_heatmap")
    ui.download_csv(diff.reset_index(), f"per_query_diff_{metric}.csv", key="compare_heat_csv")


def _differences(report, names: tuple[str, str]) -> list[str]:
    """Per-query difference chart and A-vs-B scatter; returns the query ids shown."""
    metric = ui.pick("Per-query metric", report.metrics, key="compare_metric")
    regressions = ui.bound(st.toggle, f"Regressions only (queries where {ui.plain(names[1])} is worse)",
                           key="compare_regressions")
    diff = display.per_query_difference(report.per_query[metric], *names)
    differences = diff["diff"].to_numpy(dtype=float)  # every query, for the plan below
    if regressions:
        diff = diff[diff["diff"] < 0].reset_index(drop=True)
    if diff.empty:
        st.info("No query to show." if not regressions else f"{ui.plain(names[1])} is worse on no query.")
        return []
    left, right = st.columns(2)
    ui.chart(display.difference_bars(diff, metric, names), key="compare_diff", container=left)
    ui.chart(display.system_scatter(diff, metric, names), key="compare_scatter", container=right)
    counts = diff["outcome"].value_counts()
    st.caption(f"{counts.get('B better', 0)} queries better, {counts.get('tie', 0)} tied, "
               f"{counts.get('B worse', 0)} worse for {ui.plain(names[1])} ({ui.plain(metric)}).")
    st.dataframe(diff, hide_index=True, width="stretch", height=260,
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                                for c in (*display.difference_columns(*names), "diff")})
    ui.download_csv(diff, f"per_query_diff_{metric}.csv", key="compare_diff_csv")
    query_planning.section(differences, metric, float(report.params["alpha"]))
    return diff["query_id"].tolist()


def _ranked_lists(runs: dict, qrels, names: tuple[str, str], queries: list[str]) -> None:
    st.subheader("Ranked lists of one query")
    query = ui.pick("Query", queries, key="compare_query")
    if query is None:
        return
    titles = loaders.cranfield_titles() if any(f.sample for f in session.qrels_files()) else None
    lists = [display.ranked_list_with_labels(runs[n], qrels, query, k=RANKED_LIST_DEPTH, rel_level=ui.rel_level(),
                                           titles=titles) for n in names]
    columns = st.columns(2)
    for column, name, ranked in zip(columns, names, lists):
        with column:
            st.text(f"{name}: top {len(ranked)} of query {query}")
            # Widths in pixels so that both lists fit side by side without a sideways scroll (the
            # title is cut; the CSV below has it whole).
            st.dataframe(ranked, hide_index=True, width="stretch", height=420, column_order=LIST_COLUMNS,
                         column_config={"rank": st.column_config.NumberColumn("rank", width=45),
                                        "doc_id": st.column_config.TextColumn("doc_id", width=70),
                                        "label": st.column_config.TextColumn("label", width=90),
                                        "title": st.column_config.TextColumn("title", width=170),
                                        "score": st.column_config.NumberColumn("score", format="%.3f", width=60)})
    both = display.side_by_side_lists(lists[0], lists[1], names)
    ui.download_csv(both, f"ranked_lists_{query}.csv", key="compare_lists_csv")


def _operations(names: tuple[str, str]) -> None:
    """Failure-stage mix and latency percentiles of both systems, when records have them."""
    try:
        _, report = ui.records_report()
    except Exception as exc:
        ui.show_error(exc)
        return
    if report is None or not any(n in report.systems for n in names):
        st.caption("No per-request records for these systems: no failure mix or latency to compare.")
        return
    st.subheader("Failures and latency")
    failures = report.failure_table[report.failure_table["system"].isin(names)]
    # Stages a system has no value for (n = 0, e.g. ttft of a system that does not stream) are left
    # out, as on the Latency page.
    latency = report.latency_table[report.latency_table["system"].isin(names) & (report.latency_table["n"] > 0)]
    latency = latency.reset_index(drop=True)
    left, right = st.columns(2)
    with left:
        if failures.empty:
            st.caption("No failure stages recorded for these systems.")
        else:
            mix = failures.pivot(index="stage", columns="system", values="count").reindex(columns=list(names))
            st.dataframe(mix, width="stretch")
            ui.download_csv(mix, "compare_failures.csv", key="compare_failures_csv", index=True)
    with right:
        if latency.empty:
            st.caption("No latency recorded for these systems.")
        else:
            st.dataframe(latency, hide_index=True, width="stretch",
                         column_config={c: st.column_config.NumberColumn(c, format="%.1f")
                                        for c in ("mean", "p50", "p90", "p95", "p99")})
            ui.download_csv(latency, "compare_latency.csv", key="compare_latency_csv")


def _compare_and_show(source: str, systems: tuple[str, ...], metrics, settings: tuple, compute,
                      pairs: str = "baseline"):
    """Run ``compute`` (a cached comparison) under a spinner, remember it for the report, show the
    verdict and the tables: for two systems the two-system views (returns the queries listed), for
    more the many-systems views (returns an empty list); None after an error message."""
    test, correction, alpha = settings
    try:
        others = ", ".join(ui.plain(s) for s in systems[1:])
        with st.spinner(f"Comparing {others} with {ui.plain(systems[0])} ({test} test)"):
            report = compute()
    except Exception as exc:
        ui.show_error(exc)
        return None
    export.remember_comparison(export.Comparison(source, tuple(systems), tuple(metrics), test, correction, alpha,
                                                 pairs))
    _verdict(report)
    if len(systems) > 2:
        _many_systems(report)
        return []
    _report_table(report, systems)
    return _differences(report, systems)


def _runs_view() -> None:
    qrels_file, qrels, runs = ui.qrels_and_runs()
    if qrels is None:
        ui.no_data("No qrels loaded.")
        return
    systems = _pick_systems(list(runs))
    if systems is None:
        return
    metrics = ui.bound(st.multiselect, "Metrics", COMPARE_RUN_METRICS, default=list(COMPARE_DEFAULT_RUN_METRICS),
                       key="compare_metrics")
    pairs = _pairs(systems)
    test, correction, alpha = _options()
    if not metrics:
        st.info("Choose at least one metric.")
        return
    queries = _compare_and_show("runs", systems, metrics, (test, correction, alpha), lambda: loaders.compare_runs(
        qrels_file.digest, tuple((n, runs[n][0].digest) for n in systems), tuple(metrics), test, correction, alpha,
        ui.rel_level(), qrels, {n: runs[n][1] for n in systems}, pairs), pairs)
    if queries is None or len(systems) > 2:
        return
    _ranked_lists({n: runs[n][1] for n in systems}, qrels, systems, queries)
    trec_sections.pr_curve_for(systems, key="compare_pr")  # A and B's 11-point precision-recall curves
    _operations(systems)


def _ppi_differences(pair) -> None:
    """Where the records hold human labels (``human_*`` twins of judgement lists), the difference
    of the two systems with its prediction-powered interval per judgement type
    (docs/calibration.md): the judge on every request, corrected by the labelled ones."""
    from dashboard import calibration_sections

    table, _ = calibration_sections.record_judgements(session.record_files())  # problems: shown on Calibration
    if table is None:
        return
    for judgement in sorted(table["judgement"].unique()):
        calibration_sections.ppi_difference_section(table, pair[0], pair[1], judgement)


PAIR_BY_LABELS = {"query_id": "query id", "question": "question text", "request_index": "request index within system"}


def _pair_by() -> str:
    """What pairs two systems' requests (records only): the query id, the question text (its
    hash) or the n-th request of each system."""
    labels = {v: k for k, v in PAIR_BY_LABELS.items()}
    choice = ui.bound(st.radio, "Pair requests by", list(labels), horizontal=True, key="compare_pair_by",
                      help="Query id: the records' own ids. Question text: the same question asked of each system. "
                           "Request index: the n-th request of each system in file order (LLMPerf's ids name the "
                           "system, so only their order pairs them).")
    return labels[choice]


def _records_view() -> None:
    loaded = ui.records_report_or_notice()
    if loaded is None:
        return
    records, report = loaded
    pair = _pick_systems(report.systems)
    if pair is None:
        return
    pair_by = _pair_by()
    try:
        keys = request_keys(records.frame, pair_by) if pair_by != "query_id" else None
    except Exception as exc:
        ui.show_error(exc)
        return
    per_system = loaders.records_per_system(report, pair, keys)
    shared = set(per_system[pair[0]].index)
    for name in pair[1:]:
        shared &= set(per_system[name].index)
    if not shared:
        st.warning(f"{', '.join(ui.plain(n) for n in pair)} have no request in common by "
                   f"{ui.plain(PAIR_BY_LABELS[pair_by])}: pair them by question text or by request index above (their "
                   "request ids may name the system, as LLMPerf's do).")
        if len(pair) == 2:
            from dashboard import failure_mix  # the failure mix needs no pairing

            failure_mix.show(report, pair)
        _operations(pair)
        return
    available = [m for m in ui.record_metrics(report) if all(per_system[n][m].notna().any() for n in pair)]
    if not available:
        st.warning(f"{', '.join(ui.plain(n) for n in pair)} share no quality metric with values (their records "
                   "have different fields).")
        return
    metrics = ui.bound(st.multiselect, "Metrics", available, default=available[:COMPARE_DEFAULT_RECORD_METRICS],
                       key="compare_record_metrics")
    pairs = _pairs(pair)
    test, correction, alpha = _options()
    if not metrics:
        st.info("Choose at least one metric.")
        return
    digests = tuple(f.digest for f in session.record_files())
    # Keyed by everything that defines the numbers: the files, k, rel_level, systems, settings.
    queries = _compare_and_show("records", pair, metrics, (test, correction, alpha), lambda: loaders.compare_records(
        digests, RECORDS_K, ui.rel_level(), pair, tuple(metrics), test, correction, alpha, report, pairs, pair_by,
        keys), pairs)
    if len(pair) == 2:
        from dashboard import failure_mix  # how the failure mix shifts between the two systems
        failure_mix.show(report, pair)
        _ppi_differences(pair)
    if queries is None or len(pair) > 2:
        return
    if queries:
        st.subheader("One request, both systems")
        query = ui.pick(f"Request ({PAIR_BY_LABELS[pair_by]})", queries, key="compare_query")
        frame = records.frame
        frame_keys = frame["query_id"].astype(str) if keys is None else keys.astype(str)
        columns = st.columns(2)
        for column, name in zip(columns, pair):
            row = frame[(frame["system"] == name) & (frame_keys == query)]
            with column:
                st.text(f"{name}, request {query}")
                if row.empty:
                    st.caption("No record.")
                    continue
                for field in ("question", "answer", "error"):
                    value = row.iloc[0].get(field) if field in row else None
                    if isinstance(value, str) and value:
                        st.text(f"{field}:")
                        st.code(value, language=None, wrap_lines=True)
    _operations(pair)


def render() -> None:
    st.title("Compare")
    if ui.pick_source("compare_source", runs_needed=2):
        _runs_view()
    else:
        _records_view()


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
