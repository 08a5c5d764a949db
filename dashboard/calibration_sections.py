"""Calibration on screen: the sample judgement tables, the figures of the Calibration page, and a
self-contained section for Compare (:func:`ppi_difference_section`).

Everything computed comes from :mod:`evalsuite.stats` (judgement tables, agreement, PPI); this
module only loads tables, draws plotly figures and writes Streamlit elements. User text (system,
judge and judgement names) goes into figures only through :func:`evalsuite.display.plotly_text`
(titles, category labels) and into markdown only through :func:`dashboard.text.plain`.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from evalsuite.stats import agreement, judgement_tables, system_means
from evalsuite.display import plotly_text
from evalsuite.errors import EvalSuiteError

from .constants import SAMPLE_DIR
from .text import plain

CALIBRATION_DIR = SAMPLE_DIR / "calibration"
SAMPLE_TABLES = ("ragtruth_claim_support.csv", "ares_labels.csv", "alce_utility.csv")
MAX_UPLOAD_BYTES = 64 * 2**20
ESTIMATORS = ("judge only", "human only", "PPI")
_COLOURS = {"judge only": "#d62728", "human only": "#7f7f7f", "PPI": "#1f77b4"}


@st.cache_data(show_spinner=False)
def sample_judgements() -> pd.DataFrame:
    """The shipped calibration samples (``sample_data/calibration``), one table."""
    parts = [judgement_tables.read_judgements(CALIBRATION_DIR / name) for name in SAMPLE_TABLES if (CALIBRATION_DIR / name).exists()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*judgement_tables.JUDGEMENT_COLUMNS, "line"])


def upload_limits():
    """The server's reader limits (:func:`dashboard.loaders.reader_limits`), at most MAX_UPLOAD_BYTES."""
    from dataclasses import replace

    from . import loaders

    limits = loaders.reader_limits()
    return replace(limits, max_bytes=min(limits.max_bytes, MAX_UPLOAD_BYTES))


@st.cache_data(show_spinner=False, max_entries=8)
def read_uploaded(name: str, data: bytes) -> pd.DataFrame:
    """An uploaded judgement table, read in the isolated reader pool with the server's limits, as
    every upload is (errors raise EvalSuiteError naming file, line, field, value)."""
    return judgement_tables.read_judgements(data, source_name=name, limits=upload_limits(), isolate=True)


def join_uploaded_labels(table: pd.DataFrame, name: str, data: bytes):
    """An uploaded human-label file joined onto ``table`` (read as :func:`read_uploaded` reads)."""
    return judgement_tables.join_human_labels(table, data, source_name=name, limits=upload_limits(), isolate=True)


def record_judgements(files) -> tuple[pd.DataFrame | None, list[tuple[str, str]]]:
    """Judgement tables from per-request record files whose judgement lists have a ``human_*``
    twin (``answer_claims_supported`` and ``human_answer_claims_supported``): one table, and the
    (file name, message) of each file that could not be used.

    ``files``: the session's record files (:class:`dashboard.session.StoredFile`)."""
    from . import loaders

    parts, problems = [], []
    for f in files:
        try:
            records = loaders.read_records(f.digest, f.name, f.data)
            columns = set(records.frame.columns)
            for column in sorted(columns):
                field = column[len("human_"):]
                if column.startswith("human_") and field in columns:
                    parts.append(judgement_tables.judgements_from_records(records, field, judge=f"{field} in {f.name}",
                                                             judgement=field))
        except Exception as exc:  # one bad file must not hide the others
            problems.append((f.name, str(exc) if isinstance(exc, EvalSuiteError) else type(exc).__name__))
    return (pd.concat(parts, ignore_index=True) if parts else None), problems


def too_small_note(n: int) -> str:
    """The sentence shown when an interval rests on fewer than MIN_LABELS human labels."""
    return (f"Only {n} human-labelled requests (fewer than {agreement.MIN_LABELS}): too few for PPI's normal "
            "interval, so the human-only interval (Clopper-Pearson or Wilson, valid at any n but wide) stands in its "
            "place. Label more requests.")


def confusion_figure(row: pd.Series, title: str):
    """Heatmap of a 2x2 confusion matrix (rows: human label, columns: judge verdict)."""
    import plotly.graph_objects as go

    z = [[int(row["tn"]), int(row["fp"])], [int(row["fn"]), int(row["tp"])]]
    fig = go.Figure(go.Heatmap(z=z, x=["judge: no", "judge: yes"], y=["human: no", "human: yes"],
                               text=z, texttemplate="%{text}", colorscale="Blues", showscale=False,
                               hovertemplate="%{y}, %{x}: %{z}<extra></extra>"))
    fig.update_layout(title=plotly_text(title), height=320, margin=dict(l=90, r=10, t=50, b=40),
                      yaxis_autorange="reversed")
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def reliability_figure(table: pd.DataFrame, title: str):
    """Judge score (bin mean) against the human rate in the bin, Wilson bars, and the diagonal."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfectly calibrated",
                             line=dict(dash="dot", color="#999999")))
    fig.add_trace(go.Scatter(
        x=table["mean_score"], y=table["human_rate"], mode="markers+lines", name="judge",
        marker=dict(size=[max(6.0, min(24.0, 4 + math.sqrt(n))) for n in table["n"]]),
        error_y=dict(type="data", symmetric=False, array=table["ci_high"] - table["human_rate"],
                     arrayminus=table["human_rate"] - table["ci_low"]),
        customdata=table[["n"]], hovertemplate="judge score %{x:.3f}<br>human rate %{y:.3f}<br>n %{customdata[0]}"
                                                "<extra></extra>"))
    fig.update_layout(title=plotly_text(title), xaxis_title="judge score (mean in bin)",
                      yaxis_title="share labelled yes by people",
                      xaxis_range=[-0.02, 1.02], yaxis_range=[-0.02, 1.02], height=420,
                      margin=dict(l=70, r=10, t=50, b=50))
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def forest_figure(intervals: pd.DataFrame, title: str):
    """Per system, the three intervals (judge only, human only, PPI) as a forest plot, and the
    mean of every human label (held out) when the page hid some."""
    import plotly.graph_objects as go

    fig = go.Figure()
    systems = list(dict.fromkeys(intervals["system"]))
    for estimator in ESTIMATORS:
        part = intervals[intervals["estimator"] == estimator]
        fig.add_trace(go.Scatter(
            x=part["estimate"], y=[[plotly_text(s) for s in part["system"]], [estimator] * len(part)], mode="markers",
            name=estimator, marker=dict(color=_COLOURS[estimator], size=9),
            error_x=dict(type="data", symmetric=False, array=part["high"] - part["estimate"],
                         arrayminus=part["estimate"] - part["low"]),
            customdata=part[["n", "n_unlabelled"]],
            hovertemplate="%{x:.3f}<br>n labelled %{customdata[0]}, unlabelled %{customdata[1]}<extra></extra>"))
    held = intervals[intervals["estimator"] == "PPI"].dropna(subset=["held_out"])
    if len(held):
        fig.add_trace(go.Scatter(x=held["held_out"], y=[[plotly_text(s) for s in held["system"]], ["PPI"] * len(held)],
                                 mode="markers",
                                 name="all human labels (held out)", marker=dict(symbol="x", color="black", size=9),
                                 hovertemplate="mean of every human label %{x:.3f}<extra></extra>"))
    fig.update_layout(title=plotly_text(title), xaxis_title="system mean", height=max(320, 90 * len(systems) + 120),
                      margin=dict(l=220, r=10, t=50, b=50), yaxis_autorange="reversed",
                      xaxis_range=[-0.02, 1.02])  # a share: the axis shows its whole range and nothing past it
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def ppi_difference_section(judgements: pd.DataFrame, baseline: str, system: str, judgement: str | None = None,
                           tuned: bool = False, container=None) -> agreement.Interval | None:
    """Draw the prediction-powered interval of ``system - baseline`` (Compare's sign) for one
    judgement type, with what it rests on; return the interval (None when it cannot be computed).

    For the lead's Compare page: call it when a judgement table with human labels is loaded,
    e.g. ``ppi_difference_section(table, "bm25", "bm25l", "claim_support")``. It writes a
    subheader, the interval in a one-row table and a warning when the labels are too few.
    """
    box = container or st
    box.subheader("Difference with prediction-powered inference")
    try:
        iv = system_means.difference_interval(judgements, baseline, system, judgement, tuned=tuned)
    except EvalSuiteError as exc:
        box.info(f"No PPI interval of the difference: {plain(exc)}")
        return None
    table = pd.DataFrame([{"judgement": judgement or "", "baseline": baseline, "system": system,
                           "diff (system - baseline)": iv.estimate, "95% CI low": iv.low, "95% CI high": iv.high,
                           "human-labelled requests": iv.n, "judge-only requests": iv.n_unlabelled,
                           "method": iv.method}])
    box.dataframe(table, hide_index=True, width="stretch",
                  column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                                 for c in ("diff (system - baseline)", "95% CI low", "95% CI high")})
    if iv.note:
        box.info(f"PPI's normal interval is not shown ({plain(iv.note)}); the difference of the human labels stands "
                 "in its place.")
    box.caption("Prediction-powered inference (Angelopoulos et al., Science 2023): the judge's verdicts on every "
                "request, corrected by the human labels on the labelled ones. " +
                ("Paired: people labelled the same requests for both systems." if "paired" in iv.method
                 else "Independent: the two systems' labelled requests differ, so their intervals are combined "
                      "as independent (conservative when they share questions)."))
    if iv.too_small:
        box.warning(too_small_note(iv.n))
    return iv
