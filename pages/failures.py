"""Failures page: failure-stage pie per system with count and share per stage; clicking a stage
lists those requests with their error text.

Plotly pie slices send no selection event to Streamlit (a plotly pie has no selection state; tried
with Streamlit 1.67: the event is always empty), so the clickable target is a bar chart of the same
counts beside the pie; the stage picker below does the same from the keyboard."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import ui
from evalsuite import display
from evalsuite.records.attribution import ATTRIBUTION_RULES


def _clicked_stage(event) -> str | None:
    """The stage of the clicked pie slice (plotly selection event), or None."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    shown = st.session_state.get("failures_bar_stages") or []
    for point in points or []:
        if not isinstance(point, dict):
            continue
        if point.get("label"):
            return str(point["label"])
        index = point.get("point_index", point.get("point_number"))
        if isinstance(index, int) and 0 <= index < len(shown):
            return shown[index]
    return None


def _on_stage_click() -> None:
    # Runs before the page on the rerun a click causes: point the URL-bound stage picker at it.
    stage = _clicked_stage(st.session_state.get("failures_bars"))
    if stage:
        st.session_state["failures_stage"] = stage


def render() -> None:
    st.title("Failures")
    loaded = ui.records_report_or_notice()
    if loaded is None:
        return
    records, report = loaded
    table = report.failure_table
    if table.empty or "failure_stage" not in records.fields and "success" not in records.fields:
        st.warning("These records have no failure_stage or success field, so failures cannot be attributed.")
        return
    frame = records.frame
    attributed = (frame.loc[frame["failure_attributed"].fillna(False).astype(bool), "system"].value_counts()
                  if "failure_attributed" in frame else pd.Series(dtype=int))
    summary = [{"system": s, "requests": int(score.params.get("n", 0)),
                "failed": int(sum(v["count"] for v in score.params.get("stages", {}).values())),
                "of them attributed": int(attributed.get(s, 0)),
                "failure share": float(score)} for s, score in report.failures.items()]
    systems = [row["system"] for row in summary]
    # By default the system whose failures span the most stages (the first such): the view that
    # shows what stage attribution tells apart.
    spread = [int((table[table["system"] == s]["count"] > 0).sum()) for s in systems]
    system = ui.pick("System", systems, key="failures_system", index=spread.index(max(spread)) if spread else 0)
    st.subheader("Failures per system")
    st.dataframe(summary, hide_index=True, width="stretch",
                 column_config={"failure share": st.column_config.NumberColumn("failure share", format="%.3f")})
    ui.download_csv(pd.DataFrame(summary), "failures_per_system.csv", key="failures_summary_csv")
    stages = table[table["system"] == system][["stage", "count", "share"]].reset_index(drop=True)
    if stages["count"].sum() == 0:
        st.info(f"{ui.plain(system)} has no failed request.")
    else:
        left, right = st.columns(2)
        ui.chart(display.failure_pie(stages, f"Failed requests of {system} by stage"), key="failures_pie",
                 container=left)
        # Bars listed bottom-up in the figure: point i of the selection is the i-th of this list.
        st.session_state["failures_bar_stages"] = stages.loc[stages["count"] > 0, "stage"].tolist()[::-1]
        ui.chart_with_selection(display.failure_bars(stages, "Click a stage to list its requests"), key="failures_bars",
                                container=right, on_select=_on_stage_click, selection_mode="points")
    st.dataframe(stages, hide_index=True, width="stretch",
                 column_config={"share": st.column_config.NumberColumn("share of failed", format="%.3f")})
    ui.download_csv(table, "failure_stages.csv", key="failures_csv")
    stage_options = ["all stages"] + [s for s, n in zip(stages["stage"], stages["count"]) if n > 0]
    stage = ui.pick("Requests of stage (or click a bar above)", stage_options, key="failures_stage")
    failed = display.failed_requests(records.frame, system, None if stage == "all stages" else stage)
    failed = failed.rename(columns={"failure_attributed": "attributed",
                                    "failure_rule": "rule", "failure_reason": "reason"})
    st.subheader(f"Failed requests: {len(failed)}")
    st.caption("attributed = the stage was derived from the request's judgements by the rule shown (a failure_stage "
               "given in the file always wins and is not attributed); reason = the rule with this request's numbers.")
    st.dataframe(failed, hide_index=True, width="stretch")
    ui.download_csv(failed, f"failed_{system}.csv", key="failures_requests_csv")
    with st.expander("How stages are attributed (the rules, in the order they are tried)"):
        rules = pd.DataFrame([{"rule": rule, "stage": stage or ("by span kind" if rule == "span in error" else "as given"),
                               "when": text}
                              for rule, (stage, text) in ATTRIBUTION_RULES.items()])
        st.table(rules.set_index("rule"))  # a static table: a grid in a closed expander is never drawn
        st.caption("A request has failed when a failure_stage is given, when success is false, or - success unknown - "
                   "when it has an error text or a judgement that shows a problem (docs/records.md).")


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
