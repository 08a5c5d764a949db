"""The Compare page's failure-mix section (issue 15): how the share of failed requests per stage
shifts from one system to the other, with the stages given or attributed by
:func:`evalsuite.attribute_failures`. Self-contained so the Compare page calls it in one line."""

from __future__ import annotations

import streamlit as st

from evalsuite import display

from . import downloads, text


def show(report, pair) -> None:
    """Draw the failure mix of the two systems of ``pair`` (baseline first) from a records report;
    a short note instead when either system has no failure data or no failed request."""
    names = [str(n) for n in pair]
    st.subheader("Failure mix")
    missing = [n for n in names if n not in report.failures]
    if missing:
        st.caption(text.plain(f"No failure data for {', '.join(missing)}: its records have no success or "
                            "failure_stage field."))
        return
    mix = display.failure_mix(report, names)
    failed = {n: int(mix[f"{n} count"].sum()) for n in names}
    if not any(failed.values()):
        st.caption(text.plain(f"Neither {names[0]} nor {names[1]} has a failed request."))
        return
    downloads.chart(display.failure_mix_bars(mix, names), key="compare_failure_mix")
    st.caption(text.plain(f"Share of each system's failed requests per stage ({names[0]}: {failed[names[0]]:,} failed, "
                        f"{names[1]}: {failed[names[1]]:,}); shift = {names[1]} share - {names[0]} share. Stages are "
                        "given in the records or attributed from the judgements (Failures page: the rule per request)."))
    st.dataframe(mix, hide_index=True, width="stretch", key="compare_failure_mix_table",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                for c in mix.columns if c.endswith("share") or c == "shift"})
    downloads.download_csv(mix, "failure_mix.csv", key="compare_failure_mix_csv")
