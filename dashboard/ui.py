"""What the pages share, in one import (``from dashboard import ui``): each helper lives in the
module that says what it does, and this module only hands them on.

- :mod:`dashboard.messages`: :func:`error_text`, :func:`show_error`, :func:`no_data`;
- :mod:`dashboard.downloads`: :func:`download_csv`, :func:`chart`, :func:`chart_with_selection`;
- :mod:`dashboard.url_binding`: :func:`bound`, :func:`pick`, :func:`forget_url_value`;
- :mod:`dashboard.page_data`: the session's runs, qrels and reports for a page, the metric names
  its pickers offer, the runs/records switch (:func:`pick_source`);
- :mod:`dashboard.text`: :func:`plain`, the one escaping rule for user text in markdown.

User text (file names, ids, questions, error messages) is shown with ``st.text``,
``st.dataframe``, ``st.error``/``st.warning`` bodies built from plain strings, or escaped with
:func:`plain` before it goes into markdown.
"""

from __future__ import annotations

from .downloads import chart, chart_with_selection, download_csv
from .messages import error_text, no_data, show_error
from .page_data import (
    cutoff_values, metric_names, pick_source, qrels_and_runs, rag_metrics, rag_summary, record_metrics, records_report,
    records_report_of, records_report_or_notice, rel_level, run_reports, runs_and_qrels_or_notice, trec_eval_name,
)
from .text import plain
from .url_binding import bound, forget_url_value, pick

__all__ = [
    "error_text", "show_error", "no_data", "download_csv", "chart", "chart_with_selection", "bound", "pick",
    "forget_url_value", "cutoff_values", "metric_names", "trec_eval_name", "rel_level", "qrels_and_runs", "run_reports",
    "records_report", "records_report_of", "runs_and_qrels_or_notice", "records_report_or_notice", "pick_source",
    "record_metrics", "rag_metrics", "rag_summary", "plain",
]
