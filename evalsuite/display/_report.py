"""A self-contained HTML report: tables, plotly charts and a reproducibility stamp in one file.

The file needs no network to open: plotly.js is embedded once, inline, and there are no
external stylesheets, fonts or scripts. Every piece of user text (system names, query ids,
file names, captions) is HTML-escaped.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ._markup import figure_caption

__all__ = ["InputFile", "ReportSection", "html_report", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 hex digits (the content address used for inputs and the store)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class InputFile:
    """One input of the report: its role, shown name, SHA-256 and size in bytes."""

    kind: str
    name: str
    sha256: str
    size: int | None = None


@dataclass
class ReportSection:
    """A titled part of the report: an optional note, tables and plotly figures, in that order."""

    title: str
    note: str | None = None
    tables: Sequence[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: Sequence[tuple[str, Any]] = field(default_factory=list)


_STYLE = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2rem auto;
max-width:1100px;color:#1f2933;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #d9e2ec;
padding-bottom:.3rem}h3{font-size:1.02rem;margin:1.2rem 0 .4rem}
table{border-collapse:collapse;font-size:.86rem;margin:.4rem 0 1rem;display:block;overflow-x:auto}
th,td{border:1px solid #d9e2ec;padding:.25rem .5rem;text-align:right;white-space:nowrap}
th{background:#f0f4f8}td:first-child,th:first-child{text-align:left}
.note{color:#52606d;font-size:.9rem}.stamp td,.stamp th{text-align:left;white-space:normal}
code{font-size:.85em}
"""


def _table_html(frame: pd.DataFrame, float_format: str = "{:.4f}") -> str:
    shown = frame.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else float_format.format(v))
    return shown.to_html(escape=True, border=0, na_rep="")


def _stamp_rows(stamp: Mapping[str, Any]) -> str:
    rows = []
    for key, value in stamp.items():
        if isinstance(value, (dict, list, tuple)):
            text = json.dumps(value, indent=1, sort_keys=False, default=str)
            cell = f"<pre>{html.escape(text)}</pre>"
        else:
            cell = html.escape(str(value))
        rows.append(f"<tr><th>{html.escape(str(key))}</th><td>{cell}</td></tr>")
    return "<table class='stamp'>" + "".join(rows) + "</table>"


def html_report(title: str, sections: Sequence[ReportSection], *, inputs: Sequence[InputFile] = (),
                settings: Mapping[str, Any] | None = None, conventions: Mapping[str, str] | None = None,
                generated_at: str | None = None) -> str:
    """Render a report as one self-contained HTML document.

    Parameters
    ----------
    title : str
        Heading of the report (escaped).
    sections : sequence of ReportSection
        The content: per section a note, tables (pandas DataFrames, rendered with 4 decimals)
        and plotly figures (``plotly.graph_objects.Figure``).
    inputs : sequence of InputFile
        Every input file, listed in the stamp with its SHA-256.
    settings : mapping, optional
        What defines the numbers: cutoffs, rel_level, query policy, test, correction, alpha,
        seed... (listed in the stamp).
    conventions : mapping of str -> str, optional
        Metric definitions and conventions used (listed in the stamp).
    generated_at : str, optional
        Timestamp to print (default: now, UTC, ISO 8601).

    Returns
    -------
    str
        The HTML document. plotly.js is inlined once (about 4.6 MB), so the file opens offline.
    """
    from ..version import __version__

    generated_at = generated_at or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p class='note'>EvalSuite {html.escape(__version__)} &middot; generated {html.escape(generated_at)}</p>"]
    plotly_included = False
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.note:
            parts.append(f"<p class='note'>{html.escape(section.note)}</p>")
        for caption, frame in section.tables:
            parts.append(f"<h3>{html.escape(caption)}</h3>")
            parts.append(_table_html(frame))
        for caption, figure in section.figures:
            # A figure's own title holds plotly-escaped user text: read back as plain text first.
            parts.append(f"<h3>{html.escape(caption or figure_caption(figure))}</h3>")
            # plotly escapes the figure JSON for embedding in a <script> (it is data, not markup).
            parts.append(figure.to_html(full_html=False, include_plotlyjs=not plotly_included,
                                        config={"displaylogo": False, "responsive": True}))
            plotly_included = True
    stamp: dict[str, Any] = {"EvalSuite version": __version__, "generated (UTC)": generated_at}
    stamp.update(dict(settings or {}))
    parts.append("<h2>Reproducibility stamp</h2>")
    parts.append(_stamp_rows(stamp))
    if inputs:
        frame = pd.DataFrame([{"role": f.kind, "file": f.name, "bytes": f.size, "SHA-256": f.sha256} for f in inputs])
        parts.append("<h3>Input files</h3>")
        parts.append(frame.to_html(escape=True, border=0, index=False, na_rep=""))
    if conventions:
        frame = pd.DataFrame({"rule": list(conventions), "definition": list(conventions.values())})
        parts.append("<h3>Metric definitions and conventions</h3>")
        # Definitions are sentences: wrapped and left-aligned like the stamp, not one long line.
        parts.append(frame.to_html(escape=True, border=0, index=False, classes="stamp"))
    parts.append("</body></html>")
    return "\n".join(parts)
