"""Latency page: distributions per system and stage (histogram and ECDF, pre-binned with numpy),
the percentile table, and quality against latency per request where both exist."""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.constants import ECDF_POINTS, HISTOGRAM_BINS, LATENCY_RATE_BINS, SCATTER_POINTS
from evalsuite import display


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

    stages = latency["stage"].drop_duplicates().tolist()
    with_latency = latency["system"].drop_duplicates().tolist()
    # Systems on a row of their own, all by default, so every chip is visible.
    systems = ui.bound(st.multiselect, "Systems", with_latency, default=with_latency, key="latency_systems")
    a, c = st.columns([4, 1], vertical_alignment="bottom")
    stage = ui.pick("Stage", stages, key="latency_stage", container=a)
    log = ui.bound(c.toggle, "Log scale", key="latency_log")
    column = _column(stage)
    frame = report.per_query[report.per_query["system"].isin(systems)][["system", column]]
    if frame[column].notna().sum() == 0:
        st.info("No latency values for this stage and these systems.")
    else:
        left, right = st.columns(2)
        binned = display.binned_histogram(frame, column, group="system", bins=HISTOGRAM_BINS, log=log)
        points = display.ecdf_points(frame, column, group="system", max_points=ECDF_POINTS)
        ui.chart(display.latency_histogram(binned, log=log), key="latency_hist", container=left)
        ui.chart(display.latency_ecdf(points, log=log), key="latency_ecdf", container=right)
        st.caption(f"{int(frame[column].notna().sum()):,} requests, drawn from {len(binned):,} bins and "
                   f"{len(points):,} ECDF points.")
        _left_out(report.per_query, column, None, systems, "latency_left_out")

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
    if display.is_binary(both[metric]):
        # A 0/1 metric (success) as a scatter puts every point on y = 0 or 1: show instead the share
        # of requests with 1 per latency bin (equal-count bins over all requests shown).
        rates = display.rate_by_latency_bin(both, metric, column, bins=LATENCY_RATE_BINS)
        ui.chart(display.rate_by_latency(rates, metric, column), key="latency_rate")
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
        ui.chart(display.quality_latency_scatter(shown, metric, column), key="latency_scatter")
        if sampled:
            st.caption(f"A seeded sample of {len(shown):,} of {len(both):,} requests.")
    ui.download_csv(both, "quality_latency.csv", key="latency_quality_csv", label="Download CSV (per request)")


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
