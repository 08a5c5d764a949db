"""Downloads and charts: a table as spreadsheet-safe CSV, and a plotly figure drawn and recorded
as one of the view's charts (the report export embeds them, see :mod:`dashboard.current_view`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalsuite.display import safe_csv

from . import current_view


def download_csv(frame: pd.DataFrame, file_name: str, key: str, label: str = "Download CSV", index: bool = False) -> None:
    """A download button with the table as spreadsheet-safe CSV (:func:`evalsuite.display.safe_csv`)."""
    st.download_button(label, data=safe_csv(frame, index=index), file_name=file_name, mime="text/csv", key=key,
                       icon=":material/download:", on_click="ignore")


def chart(figure, key: str, container=None) -> None:
    """Draw a plotly figure full width and record it as one of the view's charts (the report
    export embeds the charts of the current view, see :mod:`dashboard.current_view`)."""
    (container or st).plotly_chart(figure, key=key, width="stretch")
    current_view.add_figure(figure)


def chart_with_selection(figure, key: str, container=None, **kwargs):
    """:func:`chart` for a figure whose selection events the page reads (``on_select`` ...)."""
    event = (container or st).plotly_chart(figure, key=key, width="stretch", **kwargs)
    current_view.add_figure(figure)
    return event
