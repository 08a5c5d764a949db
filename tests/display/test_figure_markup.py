"""Markup from user data never renders in a chart: every figure builder (evalsuite.display and the
Calibration page's) is walked with markup payloads in every user-data field (system, query, metric,
stage, group, judge and judgement names, titles), and every text plotly would render is checked
for tags and entities that are not the builder's own. The downloaded report is checked too."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalsuite import display
from evalsuite.display import difference_columns, figure_caption, html_report, plotly_text, ReportSection

# Tags plotly renders, an entity, a javascript: link and a data: link, in one name.
LINK = '<a href="https://evil.example/login" target="_blank">Sign in again</a>'
PAYLOADS = [f"{LINK}<b>bold</b>", "<i>x</i><br><sup>2</sup><span style='color:red'>r</span>&lt;&amp;",
            "<a href='javascript:alert(1)'>j</a><em>e</em>"]
A, B = "sys " + PAYLOADS[0], "sys " + PAYLOADS[1]
METRIC = "critique_" + PAYLOADS[2]
QUERIES = [f"q{i} " + PAYLOADS[i % 3] for i in range(4)]
OWN_TAGS = {"br", "extra", "/extra"}   # the builders' own hover templates
TAG = re.compile(r"<\s*(/?\s*[a-zA-Z]+)")


def strings(value):
    """Every string in a figure's JSON (data and layout, nested lists of multi-category axes)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)
    elif isinstance(value, np.ndarray) and value.dtype == object:
        for v in value.ravel():
            yield from strings(v)


def check(figure, shown: list[str]):
    texts = list(strings(figure.to_plotly_json()))
    for text in texts:
        tags = {t.replace(" ", "").lower() for t in TAG.findall(text)}
        assert tags <= OWN_TAGS, (tags - OWN_TAGS, text)
        assert "&lt;&amp;" not in text or "&amp;lt;&amp;amp;" in text  # an entity in a name stays as written
    joined = "\n".join(texts)
    for value in shown:  # the user text is there, escaped (shown as written, not dropped)
        assert plotly_text(value) in joined, value


def _stages():
    return pd.DataFrame({"stage": ["retrieval", PAYLOADS[0]], "count": [3, 1], "share": [0.75, 0.25]})


def _binned(group="system"):
    return pd.DataFrame({group: [A, A, B], "left": [0.0, 10.0, 0.0], "right": [10.0, 20.0, 10.0],
                         "center": [5.0, 15.0, 5.0], "share": [0.5, 0.5, 1.0], "count": [1, 1, 2]})


def _diff():
    col_a, col_b = difference_columns(A, B)
    return pd.DataFrame({"query_id": QUERIES, col_a: [0.1, 0.5, 0.2, 0.9], col_b: [0.3, 0.4, 0.2, 0.1],
                         "diff": [0.2, -0.1, 0.0, -0.8]})


CASES = {
    "metric_bars": lambda: (display.metric_bars(pd.DataFrame({METRIC: [0.4, 0.6]}, index=[A, B]), [METRIC]),
                            [A, B, METRIC]),
    "per_query_bars": lambda: (display.per_query_bars(pd.DataFrame({"query_id": QUERIES, METRIC: [0.1, 0.2, 0.3, 0.4]}),
                                                      METRIC, highlight=QUERIES[1]), [*QUERIES, METRIC]),
    "latency_histogram": lambda: (display.latency_histogram(_binned(), log=False), [A, B]),
    "latency_ecdf": lambda: (display.latency_ecdf(pd.DataFrame({"system": [A, B], "value": [1.0, 2.0], "p": [0.5, 1.0]}),
                                                  group="system"), [A, B]),
    "failure_pie": lambda: (display.failure_pie(_stages(), "Failures of " + A), [PAYLOADS[0], "Failures of " + A]),
    "failure_bars": lambda: (display.failure_bars(_stages(), "Failures of " + B), [PAYLOADS[0], "Failures of " + B]),
    "difference_bars": lambda: (display.difference_bars(_diff(), METRIC, (A, B)), [*QUERIES[:2], QUERIES[3], METRIC, A, B]),
    "system_scatter": lambda: (display.system_scatter(_diff(), METRIC, (A, B)), [*QUERIES, METRIC, A, B]),
    "quality_latency_scatter": lambda: (display.quality_latency_scatter(pd.DataFrame(
        {"system": [A, B, A, B], "query_id": QUERIES, "latency_" + PAYLOADS[1] + "_ms": [1.0, 2.0, 3.0, 4.0],
         METRIC: [0.1, 0.2, 0.3, 0.4]}), METRIC, latency="latency_" + PAYLOADS[1] + "_ms"), [A, B, *QUERIES, METRIC]),
    "rate_by_latency": lambda: (display.rate_by_latency(pd.DataFrame(
        {"system": [A, B], "left": [0.0, 0.0], "right": [10.0, 10.0], "rate": [0.5, 0.25], "ci_low": [0.1, 0.05],
         "ci_high": [0.9, 0.6], "n": [4, 4], "successes": [2, 1]}), METRIC), [A, B, METRIC]),
    "rag_metric_bars": lambda: (display.rag_metric_bars(pd.DataFrame(
        {"system": [A, B], "metric": [METRIC, METRIC], "mean": [0.4, 0.5], "ci_low": [np.nan, np.nan],
         "ci_high": [np.nan, np.nan], "coverage": [1.0, 0.5], "n_defined": [4, 2]}), METRIC), [A, B, METRIC]),
    "failure_mix_bars": lambda: (display.failure_mix_bars(pd.DataFrame(
        {"stage": ["retrieval", PAYLOADS[2]], f"{A} share": [0.5, 0.5], f"{A} count": [1, 1],
         f"{B} share": [1.0, 0.0], f"{B} count": [2, 0]}), [A, B]), [A, B, PAYLOADS[2]]),
    "pr_curve": lambda: (display.pr_curve(pd.DataFrame({"system": [A, A, B, B], "recall": [0.0, 1.0, 0.0, 1.0],
                                                        "precision": [1.0, 0.2, 0.9, 0.1]})), [A, B]),
    "difference_heatmap": lambda: (display.difference_heatmap(pd.DataFrame({B: [0.1, -0.2]}, index=QUERIES[:2]),
                                                              METRIC, A), [B, *QUERIES[:2], f"{METRIC}: per-query difference from {A}"]),
    "pairwise_heatmap": lambda: (display.pairwise_heatmap(pd.DataFrame([[np.nan, 0.1], [-0.1, np.nan]], index=[A, B], columns=[A, B]),
                                                          pd.DataFrame([[False, True], [True, False]], index=[A, B], columns=[A, B]),
                                                          METRIC), [A, B, METRIC]),
}
NOT_FIGURES = {"STAGE_COLORS", "value_range"}


def test_every_figure_builder_has_a_case():
    builders = {name for name in display._FIGURES if name not in NOT_FIGURES}
    assert builders == set(CASES), builders ^ set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_markup_in_user_data_renders_as_text(name):
    figure, shown = CASES[name]()
    check(figure, shown)


def test_latency_groups_by_a_user_column():
    figure = display.latency_histogram(_binned(group=PAYLOADS[1]), group=PAYLOADS[1])
    check(figure, [A, B, PAYLOADS[1]])


def _calibration_figures():
    from dashboard import calibration_sections as cv

    intervals = pd.DataFrame([{"system": s, "estimator": e, "estimate": 0.5, "low": 0.4, "high": 0.6, "n": 10,
                               "n_unlabelled": 90, "held_out": 0.55 if e == "PPI" else np.nan}
                              for s in (A, B) for e in cv.ESTIMATORS])
    reliability = pd.DataFrame({"mean_score": [0.2, 0.8], "human_rate": [0.3, 0.7], "ci_low": [0.1, 0.5],
                                "ci_high": [0.5, 0.9], "n": [10, 10]})
    confusion = pd.Series({"tn": 5, "fp": 1, "fn": 2, "tp": 7})
    return {
        "forest_figure": (cv.forest_figure(intervals, f"{METRIC}: system means"), [A, B, f"{METRIC}: system means"]),
        "reliability_figure": (cv.reliability_figure(reliability, "Reliability of " + A), ["Reliability of " + A]),
        "confusion_figure": (cv.confusion_figure(confusion, "Confusion of " + B), ["Confusion of " + B]),
    }


def test_the_calibration_figures():
    for figure, shown in _calibration_figures().values():
        check(figure, shown)


def test_the_report_shows_the_payloads_as_text():
    figures = [CASES[name]()[0] for name in sorted(CASES)] + [f for f, _ in _calibration_figures().values()]
    page = html_report("Report of " + A, [ReportSection(
        "Section " + B, note="note " + PAYLOADS[2], tables=[("table " + A, pd.DataFrame({A: [1.0]}, index=[B]))],
        figures=[(figure_caption(f), f) for f in figures] + [("", figures[0])])])
    # Outside the charts (headings, notes, tables) the payloads are HTML-escaped text: no tag of theirs.
    head, *scripts = page.split("<script")
    for raw in ("<a href", "<b>bold", "<i>x", "<span style", "<sup>", "<em>"):
        assert raw not in head, raw
    assert "&lt;a href=&quot;https://evil.example/login&quot;" in head
    # In the charts' JSON (plotly writes "<" as \u003c and "/" as \u002f) every payload tag is an entity.
    calls = [part[part.index("Plotly.newPlot("):] for part in scripts if "Plotly.newPlot(" in part]
    assert len(calls) == len(figures) + 1
    charts = "".join(calls).replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u002f", "/")
    assert charts.count('&lt;a href=\\"https://evil.example/login\\"') >= len(figures)
    assert not re.search(r'<a\s+href=\\?"https://evil', charts)
    for raw in ("<b>bold", "<i>x", "<span style", "<sup>", "<em>"):
        assert raw not in charts, raw
