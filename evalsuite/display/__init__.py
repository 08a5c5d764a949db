"""Presentation: tables shaped for display, plotly figures and the self-contained HTML report.

Pure functions over EvalSuite's results (every number comes from the evaluation package); the
dashboard and the report show what they return. Nothing here imports streamlit. The figures need
plotly (``pip install evalsuite[dashboard]``), which is loaded on first use of a figure, so the
tables and the report work without it.
"""

from __future__ import annotations

from ._markup import figure_caption, plotly_plain, plotly_text
from ._report import InputFile, ReportSection, html_report, sha256_hex
from ._tables_comparison import *  # noqa: F401,F403
from ._tables_comparison import __all__ as _COMPARISON_TABLES
from ._tables_ranking import *  # noqa: F401,F403  (the tables' __all__)
from ._tables_ranking import __all__ as _RANKING_TABLES
from ._tables_records import *  # noqa: F401,F403
from ._tables_records import __all__ as _RECORDS_TABLES
from ._latency import *  # noqa: F401,F403
from ._latency import __all__ as _LATENCY_TABLES

_TABLES = [*_RANKING_TABLES, *_COMPARISON_TABLES, *_RECORDS_TABLES, *_LATENCY_TABLES]

_FIGURES = ("STAGE_COLORS", "metric_bars", "per_query_bars", "latency_histogram", "latency_ecdf", "failure_pie",
            "failure_bars", "difference_bars", "system_scatter", "quality_latency_scatter", "rate_by_latency",
            "value_range", "rag_metric_bars", "failure_mix_bars", "pr_curve", "difference_heatmap", "pairwise_heatmap")

# Figures for many systems (small multiples, the Pareto chart) live in their own module.
_LATENCY_FIGURES = ("latency_histogram_grid", "latency_ecdf_grid", "quality_latency_pareto", "legend_below")

__all__ = [*_TABLES, *_FIGURES, *_LATENCY_FIGURES, "InputFile", "ReportSection", "html_report", "sha256_hex",
           "plotly_text", "plotly_plain", "figure_caption"]


def __getattr__(name: str):
    # Figures import plotly: only when one is asked for.
    if name in _FIGURES:
        from . import _figures

        return getattr(_figures, name)
    if name in _LATENCY_FIGURES:
        from . import _figures_latency

        return getattr(_figures_latency, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
