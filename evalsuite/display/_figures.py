"""Plotly figures over the tables of :mod:`evalsuite.views` (no streamlit import).

Every builder takes DataFrames and returns a :class:`plotly.graph_objects.Figure`; the
dashboard shows them with ``st.plotly_chart`` and the HTML report can embed the same figures.
Distributions arrive pre-binned (see :func:`evalsuite.views.binned_histogram` and
:func:`evalsuite.views.ecdf_points`), so a figure never carries more than a few thousand points.
Every text from the data (system, query, metric, stage names) that plotly renders (labels, hover
text, titles, legends, category ticks) goes through :func:`~evalsuite.display.plotly_text`, so it
shows as written, never as markup (``tests/test_figure_markup.py`` walks every builder).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._markup import plotly_text as _text
from ._tables_ranking import difference_columns

__all__ = [
    "STAGE_COLORS",
    "metric_bars",
    "per_query_bars",
    "latency_histogram",
    "latency_ecdf",
    "failure_pie",
    "failure_bars",
    "difference_bars",
    "system_scatter",
    "quality_latency_scatter",
    "rate_by_latency",
    "value_range",
    "rag_metric_bars",
    "failure_mix_bars",


    "difference_heatmap",
    "pairwise_heatmap",
]

# One colour per failure stage, fixed so a stage looks the same in every chart.
STAGE_COLORS = {
    "retrieval": "#4c78a8",
    "evidence": "#f58518",
    "generation": "#e45756",
    "orchestration": "#72b7b2",
    "other": "#9d9d9d",
}
_LAYOUT = dict(margin=dict(l=10, r=10, t=40, b=10), template="plotly_white", height=380)


def _layout(fig: go.Figure, title: str, **extra) -> go.Figure:
    fig.update_layout(title=dict(text=_text(title), x=0, xanchor="left"), **{**_LAYOUT, **extra})
    return fig


def value_range(values, pad: float = 0.03) -> list[float]:
    """Axis range for metric values: ``[0, 1]`` when every finite value lies in it (the range of
    every ranking and RAG metric), else the values' own span; padded by ``pad`` of the span on
    both sides so points on the edges stay visible."""
    array = np.asarray(values, dtype=np.float64)
    array = array[np.isfinite(array)]
    if not array.size or (array.min() >= 0.0 and array.max() <= 1.0):
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(array.min()), float(array.max())
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    return [lo - pad * span, hi + pad * span]


def metric_bars(table: pd.DataFrame, metrics: Sequence[str]) -> go.Figure:
    """Grouped bars: one group per metric, one bar per system (``table`` indexed by system)."""
    fig = go.Figure()
    for system, row in table.iterrows():
        fig.add_bar(name=_text(system), x=[_text(m) for m in metrics], y=[row[m] for m in metrics],
                    hovertemplate="%{x}: %{y:.4f}<extra>" + _text(system) + "</extra>")
    fig.update_yaxes(title="mean", rangemode="tozero")
    return _layout(fig, "Mean per metric", barmode="group", legend_title_text="system")


def per_query_bars(table: pd.DataFrame, metric: str, query: str = "query_id", highlight: str | None = None) -> go.Figure:
    """One bar per query, sorted by value (highest first); ``highlight`` marks one query."""
    data = table[[query, metric]].sort_values(metric, ascending=False, kind="stable", na_position="last")
    ids = data[query].astype(str).map(_text).tolist()
    colors = ["#e45756" if highlight is not None and q == _text(highlight) else "#4c78a8" for q in ids]
    fig = go.Figure(go.Bar(x=ids, y=data[metric].to_numpy(), marker_color=colors,
                           hovertemplate="query %{x}: %{y:.4f}<extra></extra>"))
    fig.update_xaxes(title="query (sorted by value)", type="category", showticklabels=len(ids) <= 60)
    fig.update_yaxes(title=_text(metric), rangemode="tozero")
    return _layout(fig, f"{metric} per query ({len(ids)} queries)")


def latency_histogram(binned: pd.DataFrame, group: str = "system", unit: str = "ms", log: bool = False) -> go.Figure:
    """Histogram from pre-binned counts (:func:`evalsuite.views.binned_histogram`), share per group."""
    fig = go.Figure()
    for name, part in binned.groupby(group, sort=True) if group in binned else [(None, binned)]:
        widths = (part["right"] - part["left"]).to_numpy()
        fig.add_bar(x=part["center"].to_numpy() if log else part["left"].to_numpy(), y=part["share"].to_numpy(),
                    width=widths, offset=None if log else 0, name=_text(name) if name is not None else "all",
                    customdata=np.stack([part["left"], part["right"], part["count"]], axis=1),
                    hovertemplate="%{customdata[0]:.1f}-%{customdata[1]:.1f} " + unit
                    + ": %{customdata[2]} (%{y:.1%})<extra>%{fullData.name}</extra>", opacity=0.6)
    fig.update_xaxes(title=f"latency ({unit})", type="log" if log else "linear")
    fig.update_yaxes(title="share of requests", tickformat=".0%")
    return _layout(fig, "Latency distribution", barmode="overlay", legend_title_text=_text(group))


def latency_ecdf(points: pd.DataFrame, group: str = "system", unit: str = "ms", log: bool = False) -> go.Figure:
    """Step lines of the ECDF points (:func:`evalsuite.views.ecdf_points`), one per group."""
    fig = go.Figure()
    for name, part in points.groupby(group, sort=True) if group in points else [(None, points)]:
        fig.add_scatter(x=part["value"].to_numpy(), y=part["p"].to_numpy(), mode="lines", line_shape="hv",
                        name=_text(name) if name is not None else "all",
                        hovertemplate="%{x:.1f} " + unit + ": %{y:.1%}<extra>%{fullData.name}</extra>")
    fig.update_xaxes(title=f"latency ({unit})", type="log" if log else "linear")
    fig.update_yaxes(title="share of requests <= latency", tickformat=".0%", range=[0, 1.02])
    return _layout(fig, "Latency ECDF", legend_title_text=_text(group))


def failure_pie(stages: pd.DataFrame, title: str) -> go.Figure:
    """Pie of failed requests per stage (``stages``: columns stage, count, share; zero rows dropped)."""
    data = stages[stages["count"] > 0]
    fig = go.Figure(go.Pie(labels=[_text(s) for s in data["stage"]], values=data["count"].to_numpy(), sort=False,
                           marker=dict(colors=[STAGE_COLORS.get(s, "#bab0ac") for s in data["stage"]]),
                           customdata=[_text(s) for s in data["stage"]], textinfo="label+percent",
                           hovertemplate="%{label}: %{value} failed requests (%{percent})<extra></extra>"))
    return _layout(fig, title, height=340, showlegend=True)


def failure_bars(stages: pd.DataFrame, title: str) -> go.Figure:
    """Horizontal bars of failed requests per stage (same data and colours as :func:`failure_pie`).

    Bars can be clicked in Streamlit (a plotly selection event names the stage in ``label``);
    pie slices cannot, as plotly pies have no selection state.
    """
    data = stages[stages["count"] > 0].iloc[::-1]
    fig = go.Figure(go.Bar(y=[_text(s) for s in data["stage"]], x=data["count"].to_numpy(), orientation="h",
                           marker_color=[STAGE_COLORS.get(s, "#bab0ac") for s in data["stage"]],
                           text=[f"{c} ({s:.0%})" for c, s in zip(data["count"], data["share"])], textposition="auto",
                           hovertemplate="%{y}: %{x} failed requests<extra></extra>"))
    fig.update_xaxes(title="failed requests", rangemode="tozero")
    fig.update_yaxes(type="category")
    return _layout(fig, title, height=340, showlegend=False, clickmode="event+select")


def difference_bars(diff: pd.DataFrame, metric: str, names: tuple[str, str]) -> go.Figure:
    """Per-query ``diff = B - A`` bars, sorted as given (see :func:`evalsuite.views.per_query_difference`)."""
    data = diff[diff["diff"].notna()]
    colors = np.where(data["diff"] > 0, "#54a24b", np.where(data["diff"] < 0, "#e45756", "#9d9d9d"))
    ids = data["query_id"].astype(str).map(_text).tolist()
    fig = go.Figure(go.Bar(x=ids, y=data["diff"].to_numpy(), marker_color=colors,
                           hovertemplate="query %{x}: %{y:+.4f}<extra></extra>"))
    fig.update_xaxes(title="query (sorted by difference)", type="category", showticklabels=len(ids) <= 60)
    fig.update_yaxes(title=f"{_text(metric)}: {_text(names[1])} - {_text(names[0])}", zeroline=True)
    return _layout(fig, f"Per-query difference ({len(ids)} queries)")


def system_scatter(diff: pd.DataFrame, metric: str, names: tuple[str, str]) -> go.Figure:
    """Scatter of system A (x) against system B (y) per query, with the diagonal y = x.

    Both axes show the same range, the metric's (``[0, 1]`` padded, see :func:`value_range`),
    and keep a 1:1 scale by shrinking the plot area (``constrain="domain"``) rather than by
    stretching the ranges, so a wide container (the HTML report) does not show -1..2.
    """
    a, b = names
    col_a, col_b = difference_columns(a, b)
    data = diff[diff["diff"].notna()]
    x = data[col_a].to_numpy(dtype=np.float64)
    y = data[col_b].to_numpy(dtype=np.float64)
    colors = np.where(data["diff"] > 0, "#54a24b", np.where(data["diff"] < 0, "#e45756", "#9d9d9d"))
    fig = go.Figure(go.Scatter(x=x, y=y, mode="markers", marker=dict(color=colors, size=7, opacity=0.7),
                               text=data["query_id"].astype(str).map(_text).tolist(),
                               hovertemplate="query %{text}<br>A %{x:.4f}, B %{y:.4f}<extra></extra>"))
    axis = value_range(np.concatenate([x, y]))
    fig.add_scatter(x=axis, y=axis, mode="lines", line=dict(color="#888", dash="dot"), hoverinfo="skip",
                    showlegend=False)
    fig.update_xaxes(title=f"{_text(metric)}: {_text(a)} (A)", range=axis, constrain="domain", autorange=False)
    fig.update_yaxes(title=f"{_text(metric)}: {_text(b)} (B)", range=axis, scaleanchor="x", scaleratio=1,
                     constrain="domain", autorange=False)
    return _layout(fig, "A against B per query (above the diagonal: B better)", showlegend=False, height=420)


def _latency_label(column: str) -> str:
    """Axis words for a latency column: ``latency_ms`` -> "end-to-end latency", ``latency_ttft_ms``
    -> "ttft latency" (the unit is added by the caller, once)."""
    if column == "latency_ms":
        return "end-to-end latency"
    if column.startswith("latency_") and column.endswith("_ms"):
        return _text(f"{column[len('latency_'):-len('_ms')]} latency")
    return _text(column)


def quality_latency_scatter(data: pd.DataFrame, metric: str, latency: str = "latency_ms", unit: str = "ms") -> go.Figure:
    """Per-request quality (graded, e.g. faithfulness) against latency, one colour per system;
    the quality axis shows the metric's range (:func:`value_range`). For a 0/1 metric use
    :func:`rate_by_latency`."""
    fig = go.Figure()
    for name, part in data.groupby("system", sort=True):
        fig.add_scatter(x=part[latency].to_numpy(), y=part[metric].to_numpy(), mode="markers", name=_text(name),
                        text=part["query_id"].astype(str).map(_text).tolist(), marker=dict(size=6, opacity=0.6),
                        hovertemplate="request %{text}<br>%{x:.0f} " + unit + ", " + _text(metric)
                        + " %{y:.3f}<extra>%{fullData.name}</extra>")
    fig.update_xaxes(title=f"{_latency_label(latency)} ({unit})")
    fig.update_yaxes(title=_text(metric), range=value_range(data[metric].to_numpy(dtype=np.float64)), autorange=False)
    return _layout(fig, f"{metric} against latency per request", legend_title_text="system")


def rate_by_latency(table: pd.DataFrame, metric: str, latency: str = "latency_ms", unit: str = "ms",
                    group: str = "system") -> go.Figure:
    """Share of requests with ``metric`` = 1 per latency bin (from
    :func:`evalsuite.views.rate_by_latency_bin`), one line per system with its Wilson interval;
    each point sits at the middle of its bin, the hover gives the bin and its number of requests."""
    fig = go.Figure()
    for name, part in table.groupby(group, sort=True):
        middle = ((part["left"] + part["right"]) / 2).to_numpy()
        fig.add_scatter(
            x=middle, y=part["rate"].to_numpy(), mode="lines+markers", name=_text(name),
            error_y=dict(type="data", symmetric=False, array=(part["ci_high"] - part["rate"]).to_numpy(),
                         arrayminus=(part["rate"] - part["ci_low"]).to_numpy(), thickness=1),
            customdata=np.stack([part["left"], part["right"], part["n"], part["successes"]], axis=1),
            hovertemplate="%{customdata[0]:.0f}-%{customdata[1]:.0f} " + unit + ": %{y:.1%} ("
            + "%{customdata[3]} of %{customdata[2]})<extra>%{fullData.name}</extra>")
    fig.update_xaxes(title=f"{_latency_label(latency)} ({unit}), middle of the bin")
    fig.update_yaxes(title=f"share with {_text(metric)} = 1", tickformat=".0%", range=value_range([0.0, 1.0]),
                     autorange=False)
    return _layout(fig, f"{metric}: share of requests per latency bin (Wilson interval)", legend_title_text=group)


def rag_metric_bars(table: pd.DataFrame, metric: str) -> go.Figure:
    """Bars of one metric per system from :func:`evalsuite.views.rag_quality_table`, with the
    Wilson interval as error bars where the table has one (task success). Systems in the
    table's order (the RAG quality page's tables use the same)."""
    data = table[table["metric"] == metric]
    has_ci = data["ci_low"].notna().any()
    error = dict(type="data", symmetric=False, array=(data["ci_high"] - data["mean"]).to_numpy(),
                 arrayminus=(data["mean"] - data["ci_low"]).to_numpy()) if has_ci else None
    fig = go.Figure(go.Bar(x=data["system"].astype(str).map(_text).tolist(), y=data["mean"].to_numpy(), error_y=error,
                           customdata=np.stack([data["coverage"].to_numpy(), data["n_defined"].to_numpy()], axis=1),
                           hovertemplate="%{x}: %{y:.4f} (coverage %{customdata[0]:.0%}, n %{customdata[1]})<extra></extra>"))
    fig.update_yaxes(title=_text(metric), rangemode="tozero")
    fig.update_xaxes(type="category")
    return _layout(fig, f"{metric} per system" + (" (Wilson interval)" if has_ci else ""))


def failure_mix_bars(mix: pd.DataFrame, systems: Sequence[str]) -> go.Figure:
    """Grouped bars of each system's share of failed requests per stage, from
    :func:`evalsuite.display.failure_mix` (hover: the counts)."""
    fig = go.Figure()
    for system in systems:
        fig.add_trace(go.Bar(x=[_text(s) for s in mix["stage"]], y=mix[f"{system} share"].to_numpy(), name=_text(system),
                             customdata=mix[f"{system} count"].to_numpy(),
                             hovertemplate="%{x}: %{y:.0%} (%{customdata} failed requests)<extra>%{fullData.name}</extra>"))
    fig.update_yaxes(title="share of failed requests", tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(type="category", title="failure stage")
    return _layout(fig, "Failure mix: " + " vs ".join(map(str, systems)), height=340, barmode="group")


def pr_curve(table: pd.DataFrame) -> go.Figure:
    """The 11-point interpolated precision-recall curve, one line per system, overlaid
    (``table`` from :func:`evalsuite.display.pr_curve_table`)."""
    fig = go.Figure()
    for system, part in table.groupby("system", sort=False):
        fig.add_scatter(name=_text(system), x=part["recall"].tolist(), y=part["precision"].tolist(),
                        mode="lines+markers",
                        hovertemplate="recall %{x:.1f}: precision %{y:.4f}<extra>" + _text(system) + "</extra>")
    fig.update_xaxes(title="recall", range=[-0.02, 1.02], dtick=0.1)
    fig.update_yaxes(title="interpolated precision (mean over queries)", range=value_range(table["precision"]))
    return _layout(fig, "Precision-recall curve (11-point interpolated)", legend_title_text="system")


def difference_heatmap(diff: pd.DataFrame, metric: str, baseline: str) -> go.Figure:
    """Heat-map of per-query differences from the baseline: queries (rows) x systems (columns).

    ``diff`` is :func:`evalsuite.display.differences_from_baseline` (rows sorted by the mean
    difference, worst first, drawn top to bottom). Red is below the baseline, blue above, white
    equal; the colour scale is symmetric around 0. Query ids are shown as tick labels when there
    are at most 60 rows and always in the hover text (as text, never markup).
    """
    systems = [_text(c) for c in diff.columns]
    ids = [_text(q) for q in diff.index]
    z = diff.to_numpy(dtype=np.float64)
    finite = np.abs(z[np.isfinite(z)])
    bound = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    fig = go.Figure(go.Heatmap(z=z, x=systems, y=ids, colorscale="RdBu", zmid=0.0, zmin=-bound, zmax=bound,
                               colorbar=dict(title=dict(text="diff")), hoverongaps=False,
                               hovertemplate="query %{y}, %{x}: %{z:+.4f}<extra></extra>"))
    fig.update_yaxes(title=f"query ({len(ids)}, sorted by mean difference)", type="category", autorange="reversed",
                     showticklabels=len(ids) <= 60)
    fig.update_xaxes(title="system", type="category", side="top")
    return _layout(fig, f"{metric}: per-query difference from {baseline}",
                   height=min(900, max(380, 16 * len(ids) + 140)))


def pairwise_heatmap(diff: pd.DataFrame, significant: pd.DataFrame, metric: str) -> go.Figure:
    """Heat-map of every pair's difference in mean: row system minus column system.

    ``diff`` and ``significant`` are :func:`evalsuite.display.pairwise_differences`. Each cell is
    written with its value and ``*`` when the pair's difference is significant after correction;
    blue is the row above the column, red below, white equal (a symmetric scale around 0).
    """
    systems = [_text(c) for c in diff.columns]
    z = diff.to_numpy(dtype=np.float64)
    marks = significant.to_numpy(dtype=bool)
    text = [["" if not np.isfinite(v) else f"{v + 0.0:+.4f}" + ("*" if m else "") for v, m in zip(row, mrow)]
            for row, mrow in zip(z, marks)]
    finite = np.abs(z[np.isfinite(z)])
    bound = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    # A small matrix: plain lists (None where not compared) keep the figure's JSON readable.
    cells = [[float(v) if np.isfinite(v) else None for v in row] for row in z]
    fig = go.Figure(go.Heatmap(z=cells, x=systems, y=systems, text=text, texttemplate="%{text}", colorscale="RdBu",
                               zmid=0.0, zmin=-bound, zmax=bound, colorbar=dict(title=dict(text="row - column")),
                               hoverongaps=False, hovertemplate="%{y} - %{x}: %{z:+.4f}<extra></extra>"))
    fig.update_yaxes(title="system (row)", type="category", autorange="reversed")
    fig.update_xaxes(type="category", side="top")  # what the columns are is in the title: an axis title at the top overlaps it
    return _layout(fig, f"{metric}: difference in mean, row minus column, every pair (* significant after correction)",
                   height=min(900, max(380, 40 * len(systems) + 160)))
