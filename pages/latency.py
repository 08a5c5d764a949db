"""Latency page: the percentile table (and given percentile tables beside it), distributions per
system and stage (histogram and ECDF, pre-binned with numpy: overlaid for a few systems, small
multiples for many; a log axis when the values span more than two decades), and quality against
latency: one point per system with the Pareto front, then per request for the chosen systems."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import loaders, session, ui
from dashboard.constants import ECDF_POINTS, HISTOGRAM_BINS, LATENCY_RATE_BINS, SCATTER_POINTS
from evalsuite import display
from evalsuite.stats.comparison_report import higher_is_better


def _column(stage: str) -> str:
    return "latency_ms" if stage == "end_to_end" else f"latency_{stage}_ms"


def _left_out(per_query, column: str, metric: str | None, systems, key: str) -> None:
    """Say how many requests the charts above leave out and why (failed requests carry no
    latency in many logs, e.g. LLMPerf's rate-limited ones), per system in a table."""
    table = display.latency_left_out(per_query, column, metric, systems)
    reasons = [c for c in table.columns if c.startswith("left out")]
    total = int(table[reasons].to_numpy().sum())
    failed_shown = int(table["failed shown"].sum())
    if total == 0:
        st.caption("No request of these systems is left out" + (f"; {failed_shown:,} failed requests with a latency "
                   "are counted." if failed_shown else "."))
        return
    parts = [f"{int(table[c].sum()):,} {c.removeprefix('left out: ')}" for c in reasons if table[c].sum()]
    st.caption(f"Left out of the chart{'s' if metric is None else ''} above: {total:,} requests ("
               + ui.plain("; ".join(parts)) + ")"
               + (f"; {failed_shown:,} failed requests with a latency are counted" if failed_shown else "")
               + ". Per system:")
    st.dataframe(table, hide_index=True, width="stretch", height=min(36 * (len(table) + 1) + 2, 260), key=key)


def render() -> None:
    st.title("Latency")
    loaded = ui.records_report_or_notice()
    if loaded is None:
        return
    records, report = loaded
    latency = report.latency_table[report.latency_table["n"] > 0].reset_index(drop=True)
    if latency.empty:
        st.warning("These records have no latency field (latency_ms or latency_<stage>_ms), so there is nothing to "
                   "show here.")
        return
    st.subheader("Percentiles")
    has_success = "success" in report.per_query.columns
    successful_only = has_success and ui.bound(
        st.toggle, "Successful requests only", key="latency_successful_only",
        help="Leave out failed requests that have a latency (LLMPerf's summaries are over successful requests only)")
    if successful_only:
        columns = {_column(stage): stage for stage in latency["stage"].drop_duplicates()}
        latency = display.latency_percentiles(report.per_query, columns, successful_only=True)
        latency = latency[latency["n"] > 0].reset_index(drop=True)
    st.caption("Linear interpolation between order statistics (numpy's default); unit as in the records. "
               + ("Over the successful requests only." if successful_only else
                  "Every request with a latency counts, failed ones too." if has_success else ""))
    st.dataframe(latency, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.1f")
                                for c in ("mean", "p50", "p90", "p95", "p99")})
    ui.download_csv(latency, "latency_percentiles.csv", key="latency_csv")

    _given_percentiles(report, successful_only)

    stages = latency["stage"].drop_duplicates().tolist()
    with_latency = latency["system"].drop_duplicates().tolist()
    # Systems on a row of their own, all by default, so every chip is visible.
    systems = ui.bound(st.multiselect, "Systems", with_latency, default=with_latency, key="latency_systems")
    a, c = st.columns([4, 1], vertical_alignment="bottom")
    stage = ui.pick("Stage", stages, key="latency_stage", container=a)
    # A log axis by default when the latencies span more than two decades (then most of a linear
    # axis is empty); the toggle switches it either way.
    columns = [_column(s) for s in stages]
    advised = display.log_axis_advised(report.per_query[columns].to_numpy().ravel())
    log = ui.bound(c.toggle, "Log scale", value=advised, key="latency_log",
                   help="On by default when the latencies span more than two decades")
    column = _column(stage)
    frame = report.per_query[report.per_query["system"].isin(systems)][["system", column]]
    if frame[column].notna().sum() == 0:
        st.info("No latency values for this stage and these systems.")
    else:
        _distributions(frame, column, [s for s in systems if s in set(frame.loc[frame[column].notna(), "system"])], log)
        _left_out(report.per_query, column, None, systems, "latency_left_out")
    _quality(report, column, systems, log)


def _distributions(frame, column: str, systems: list[str], log: bool) -> None:
    """Histogram and ECDF: overlaid for a few systems, one small panel per system for many."""
    binned = display.binned_histogram(frame, column, group="system", bins=HISTOGRAM_BINS, log=log)
    points = display.ecdf_points(frame, column, group="system", max_points=ECDF_POINTS)
    if len(systems) <= display.MANY_SYSTEMS:
        left, right = st.columns(2)
        ui.chart(display.legend_below(display.latency_histogram(binned, log=log), len(systems)), key="latency_hist",
                 container=left)
        ui.chart(display.legend_below(display.latency_ecdf(points, log=log), len(systems)), key="latency_ecdf",
                 container=right)
    else:
        st.caption(f"{len(systems)} systems: one panel each (more than {display.MANY_SYSTEMS} overlaid are a "
                   "tangle); every panel has the same axes, and each ECDF shows the other systems in grey.")
        ui.chart(display.latency_histogram_grid(binned, systems, log=log), key="latency_hist")
        ui.chart(display.latency_ecdf_grid(points, systems, log=log), key="latency_ecdf")
    st.caption(f"{int(frame[column].notna().sum()):,} requests, drawn from {len(binned):,} bins and "
               f"{len(points):,} ECDF points{'; log latency axis' if log else ''}.")


def _given_percentiles(report, successful_only: bool) -> None:
    """Percentile tables uploaded with the records (LLMPerf summaries ...): given beside computed."""
    files = session.latency_table_files()
    if not files:
        return
    st.subheader("Given percentiles beside computed")
    tables = []
    for f in files:
        try:
            given = loaders.read_latency_table(f.digest, f.name, f.data)
        except Exception as exc:
            ui.show_error(exc)
            continue
        tables.append(given.table.assign(source=f"{f.name} ({given.tool})"))
    if not tables:
        return
    given = pd.concat(tables, ignore_index=True)
    computed = report.latency_table
    if successful_only or "success" in report.per_query.columns:
        computed = display.latency_percentiles(
            report.per_query, {_column(s): s for s in computed["stage"].drop_duplicates()},
            successful_only=successful_only)
    both = display.given_and_computed(given, computed)
    st.caption("Summaries read from percentile tables (never as requests), beside the same statistics computed "
               "from the loaded requests of the same system and stage (diff = computed - given; ms). "
               + ("Computed over the successful requests only, as LLMPerf summarises." if successful_only else
                  "Computed over every request with a latency; LLMPerf summarises the successful ones only "
                  "(switch on \"Successful requests only\" above)." if "success" in report.per_query.columns else ""))
    st.dataframe(both, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.2f") for c in both.columns
                                if c.split(" ")[0] in ("mean", "p50", "p90", "p95", "p99")})
    ui.download_csv(both, "latency_given_and_computed.csv", key="latency_given_csv")


def _quality(report, column: str, systems: list[str], log: bool) -> None:
    st.subheader("Quality against latency")
    candidates = ui.record_metrics(report)
    has_latency = report.per_query[column].notna()
    metrics = [m for m in candidates if (report.per_query[m].notna() & has_latency).any()]
    if not metrics:
        st.info(f"No request has a quality value next to its {ui.plain(column)}: the records with latencies carry no "
                "judgements or success, or the other way round.")
        return
    metric = ui.pick("Quality metric", metrics, key="latency_metric")
    both = display.quality_vs_latency(report.per_query, metric, column)
    both = both[both["system"].isin(systems)]
    if both.empty:
        st.info(f"No request of these systems has both {ui.plain(metric)} and {ui.plain(column)}: the records that have one lack the other.")
        return
    _left_out(report.per_query, column, metric, systems, "latency_quality_left_out")
    higher = higher_is_better(metric)
    per_system = display.system_quality_latency(both, metric, column, higher_is_better=higher)
    default = display.pick_shown(per_system["system"].tolist(), per_system)
    shown_systems = ui.bound(st.multiselect, f"Systems to label and draw per request (at most {display.MANY_SYSTEMS} "
                             "read well; the Pareto front is always labelled)", per_system["system"].tolist(),
                             default=default, key="latency_request_systems")
    system_log = log and display.log_axis_advised(per_system["latency p50"], decades=1)  # medians: denser
    ui.chart(display.quality_latency_pareto(per_system, metric, _latency_words(column), log=system_log,
                                            labelled=None if len(per_system) <= 8 else shown_systems),
             key="latency_pareto")
    st.caption(f"One point per system: the median {ui.plain(_latency_words(column))} and the mean {ui.plain(metric)} over "
               "its requests with both values. Red: the Pareto front - no other system is both faster and "
               + ("better" if higher else "lower (lower is better here)") + ".")
    st.dataframe(per_system, hide_index=True, width="stretch", height=min(36 * (len(per_system) + 1) + 2, 300),
                 column_config={"latency p50": st.column_config.NumberColumn("latency p50", format="%.1f"),
                                f"{metric} mean": st.column_config.NumberColumn(f"{metric} mean", format="%.3f")})
    both = both[both["system"].isin(shown_systems)]
    if both.empty:
        st.info("Choose systems to see their requests.")
        return
    if display.is_binary(both[metric]):
        # A 0/1 metric (success) as a scatter puts every point on y = 0 or 1: show instead the share
        # of requests with 1 per latency bin (equal-count bins over all requests shown).
        rates = display.rate_by_latency_bin(both, metric, column, bins=LATENCY_RATE_BINS)
        figure = display.legend_below(display.rate_by_latency(rates, metric, column), len(shown_systems))
        if log and display.log_axis_advised(both[column]):
            figure.update_xaxes(type="log")
        ui.chart(figure, key="latency_rate")
        st.caption(f"{ui.plain(metric)} is 0 or 1 per request: each point is the share of requests with 1 among those in a "
                   f"latency bin (bins at the latency quantiles of the {len(both):,} requests shown, so of about equal "
                   "request counts; the n column gives each bin's), with its "
                   "Wilson interval.")
        st.dataframe(rates, hide_index=True, width="stretch", height=260,
                     column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                    for c in ("rate", "ci_low", "ci_high")})
        ui.download_csv(rates, "rate_by_latency.csv", key="latency_rate_csv", label="Download CSV (rate per bin)")
    else:
        shown, sampled = display.sample_rows(both, SCATTER_POINTS)
        figure = display.legend_below(display.quality_latency_scatter(shown, metric, column), len(shown_systems))
        if log and display.log_axis_advised(shown[column]):
            figure.update_xaxes(type="log")
        ui.chart(figure, key="latency_scatter")
        if sampled:
            st.caption(f"A seeded sample of {len(shown):,} of {len(both):,} requests.")
    ui.download_csv(both, "quality_latency.csv", key="latency_quality_csv", label="Download CSV (per request)")


def _latency_words(column: str) -> str:
    if column == "latency_ms":
        return "end-to-end latency"
    return f"{column[len('latency_'):-len('_ms')]} latency"


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
