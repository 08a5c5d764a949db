"""Latency figures for many systems: small multiples of histograms and ECDFs (one panel per system,
the others drawn faintly behind in the ECDFs), and quality against latency per system with the
Pareto front highlighted and the points labelled. Every text from the data goes through
:func:`~evalsuite.display.plotly_text`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._figures import _layout
from ._markup import plotly_text as _text

__all__ = ["latency_histogram_grid", "latency_ecdf_grid", "quality_latency_pareto", "legend_below"]

_COLUMNS = 4
_PANEL_HEIGHT = 150
_FAINT = "rgba(150, 150, 150, 0.35)"
_COLOUR = "#4c78a8"
_FRONT = "#e45756"


def legend_below(fig: go.Figure, entries: int) -> go.Figure:
    """A horizontal legend under the plot, with room for its rows, so no entry is cut off."""
    rows = max(1, int(np.ceil(entries / 4)))
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", y=-0.18, yanchor="top"),
                      height=int(fig.layout.height or 380) + 22 * rows, margin=dict(b=40 + 22 * rows))
    return fig


def _grid(systems: Sequence[str], title: str, log: bool, unit: str, y_title: str):
    rows = max(1, int(np.ceil(len(systems) / _COLUMNS)))
    fig = make_subplots(rows=rows, cols=_COLUMNS, shared_xaxes="all", shared_yaxes="all",
                        subplot_titles=[_text(s) for s in systems], horizontal_spacing=0.03,
                        vertical_spacing=min(0.08, 0.35 / rows))
    fig.update_annotations(font_size=12)
    fig.update_xaxes(type="log" if log else "linear")
    for c in range(1, _COLUMNS + 1):
        fig.update_xaxes(title_text=f"latency ({unit})", row=rows, col=c)
    fig.update_yaxes(title_text=y_title, col=1)
    return _layout(fig, title, showlegend=False, height=_PANEL_HEIGHT * rows + 110), rows


def _cell(index: int) -> tuple[int, int]:
    return index // _COLUMNS + 1, index % _COLUMNS + 1


def latency_histogram_grid(binned: pd.DataFrame, systems: Sequence[str], unit: str = "ms", log: bool = False,
                           group: str = "system") -> go.Figure:
    """One histogram per system (share of its requests per bin), on a shared x axis.

    ``binned`` is :func:`evalsuite.display.binned_histogram` grouped by ``group``.
    """
    fig, _ = _grid(systems, "Latency distribution per system", log, unit, "share")
    for i, system in enumerate(systems):
        part = binned[binned[group] == system]
        row, col = _cell(i)
        fig.add_bar(x=part["center"].to_numpy() if log else part["left"].to_numpy(), y=part["share"].to_numpy(),
                    width=(part["right"] - part["left"]).to_numpy(), offset=None if log else 0,
                    marker_color=_COLOUR, name=_text(system),
                    customdata=np.stack([part["left"], part["right"], part["count"]], axis=1) if len(part) else None,
                    hovertemplate="%{customdata[0]:.1f}-%{customdata[1]:.1f} " + unit
                    + ": %{customdata[2]} (%{y:.1%})<extra>%{fullData.name}</extra>", row=row, col=col)
    fig.update_yaxes(tickformat=".0%")
    return fig


def latency_ecdf_grid(points: pd.DataFrame, systems: Sequence[str], unit: str = "ms", log: bool = False,
                      group: str = "system", faint_points: int = 100) -> go.Figure:
    """One ECDF panel per system, the system in colour over every other system in faint grey
    (each grey line thinned to ``faint_points`` points), so each panel compares one system with
    the field."""
    fig, _ = _grid(systems, "Latency ECDF per system (grey: the other systems)", log, unit, "share <=")
    faint = []
    for system in systems:
        part = points[points[group] == system]
        step = max(1, int(np.ceil(len(part) / faint_points)))
        faint.append(part.iloc[::step])
    for i, system in enumerate(systems):
        row, col = _cell(i)
        for j, other in enumerate(faint):
            if j != i:
                fig.add_scatter(x=other["value"].to_numpy(), y=other["p"].to_numpy(), mode="lines", line_shape="hv",
                                line=dict(color=_FAINT, width=1), hoverinfo="skip", row=row, col=col)
        part = points[points[group] == system]
        fig.add_scatter(x=part["value"].to_numpy(), y=part["p"].to_numpy(), mode="lines", line_shape="hv",
                        line=dict(color=_COLOUR, width=2), name=_text(system),
                        hovertemplate="%{x:.1f} " + unit + ": %{y:.1%}<extra>%{fullData.name}</extra>", row=row, col=col)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    return fig


def quality_latency_pareto(table: pd.DataFrame, metric: str, latency_label: str = "end-to-end latency",
                           unit: str = "ms", log: bool = False, labelled: Sequence[str] | None = None) -> go.Figure:
    """Each system as one point: median latency (x) against mean quality (y), the Pareto front
    (no other system is both faster and better) in red and joined by a line, each point labelled
    with its system when it is on the front or in ``labelled`` (default: every point).

    ``table`` is :func:`evalsuite.display.system_quality_latency`.
    """
    quality = f"{metric} mean"
    names = table["system"].astype(str).tolist()
    show = set(names) if labelled is None else set(map(str, labelled)) | set(table.loc[table["pareto"], "system"])
    fig = go.Figure()
    # Labels alternate above and below the points, in latency order, so neighbours do not overlap.
    position = pd.Series(["top center", "bottom center"] * (len(table) // 2 + 1), dtype=object)[:len(table)]
    position.index = table.index
    for on_front, colour, title in ((False, _COLOUR, "other systems"), (True, _FRONT, "Pareto front")):
        part = table[table["pareto"] == on_front]
        if part.empty:
            continue
        fig.add_scatter(textposition=position[part.index].tolist(),
            x=part["latency p50"].to_numpy(), y=part[quality].to_numpy(), name=title,
            mode="markers+text", marker=dict(size=11 if on_front else 9, color=colour,
                                             line=dict(width=1, color="white")),
            text=[_text(s) if s in show else "" for s in part["system"].astype(str)],
            textfont=dict(size=11, color=colour), customdata=np.stack([part["n"].to_numpy(),
                                                                       part["system"].astype(str).map(_text)], axis=1),
            hovertemplate="%{customdata[1]}: p50 %{x:.0f} " + unit + ", " + _text(metric)
            + " %{y:.3f} (n %{customdata[0]})<extra></extra>")
    front = table[table["pareto"]].sort_values("latency p50")
    if len(front) > 1:
        fig.add_scatter(x=front["latency p50"].to_numpy(), y=front[quality].to_numpy(), mode="lines",
                        line=dict(color=_FRONT, width=1, dash="dot"), line_shape="hv", hoverinfo="skip",
                        showlegend=False)
    fig.update_xaxes(title=f"{_text(latency_label)}, median per system ({unit})", type="log" if log else "linear")
    values = table[quality].to_numpy(dtype=np.float64)
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    pad = max(0.05, 0.12 * (hi - lo))
    fig.update_yaxes(title=f"{_text(metric)}, mean per system", range=[lo - pad, hi + pad])
    fig = _layout(fig, f"{metric} against latency per system ({len(table)} systems; red: the Pareto front)",
                  height=460)
    return legend_below(fig, 2)
