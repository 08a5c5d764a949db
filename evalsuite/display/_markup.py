"""User text in plotly figures: the one escaping rule of every chart label, hover text, title and
legend built from user data (system, query, metric, judge and judgement names, file names ...).

plotly draws a subset of HTML in every text it renders (``<b>``, ``<i>``, ``<br>``, ``<sup>``,
``<span style=...>``, ``<a href=... target=...>``) and resolves entities (``&lt;``), so a system
named ``<a href="https://x">Sign in again</a>`` would be a live link in a chart, on the page
and in the downloaded report. :func:`plotly_text` makes such text show exactly as written;
:func:`figure_caption` reads a figure's (escaped) title back as plain text for the report's HTML,
which escapes it again as HTML.
"""

from __future__ import annotations

import html

__all__ = ["plotly_text", "plotly_plain", "figure_caption"]


def plotly_text(value) -> str:
    """``value`` as text that plotly shows literally: ``&``, ``<`` and ``>`` as entities.

    ``&`` is escaped first, so an entity written in a name (``&lt;``) stays as written.

    Parameters
    ----------
    value : object
        Anything; ``str(value)`` is escaped.

    Returns
    -------
    str

    Examples
    --------
    >>> plotly_text('<a href="https://x.example">Sign in</a> & <b>bold</b>')
    '&lt;a href="https://x.example"&gt;Sign in&lt;/a&gt; &amp; &lt;b&gt;bold&lt;/b&gt;'
    >>> plotly_text("&lt;")
    '&amp;lt;'
    """
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plotly_plain(text: str) -> str:
    """The inverse of :func:`plotly_text`: the text a reader sees in the chart.

    >>> s = 'x <b> &amp; &lt;'
    >>> plotly_plain(plotly_text(s)) == s
    True
    """
    return html.unescape(str(text))


def figure_caption(figure, default: str = "Chart") -> str:
    """A figure's title as plain text (for a caption outside the chart), or ``default``.

    >>> import plotly.graph_objects as go
    >>> figure_caption(go.Figure(layout={"title": {"text": plotly_text("<b>x</b> per query")}}))
    '<b>x</b> per query'
    """
    title = getattr(getattr(getattr(figure, "layout", None), "title", None), "text", None)
    return plotly_plain(title) if title else default
