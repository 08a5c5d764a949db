"""What the current script run shows: the page and its plotly figures, for the report export.

:func:`dashboard.shell.main` calls :func:`start` at the top of every run and :func:`set_page` once
the navigation knows the page; pages draw their charts with :func:`dashboard.downloads.chart`, which
records each figure here. The sidebar's "Download report" is drawn after the page, so it sees
every figure of the view. The registry is thread-local: each session's script runs in its own
thread, so two sessions never see each other's figures.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

_current = threading.local()


@dataclass
class RunView:
    """The current run's page (title, URL path), the figures drawn, in drawing order, and the
    values of the widgets bound to the URL ({query parameter: value})."""

    title: str = ""
    url_path: str = ""
    figures: list = field(default_factory=list)
    bound: dict = field(default_factory=dict)


def start() -> RunView:
    """Forget the previous run's page and figures."""
    _current.view = RunView()
    return _current.view


def current() -> RunView:
    view = getattr(_current, "view", None)
    return view if view is not None else start()


def set_page(title: str, url_path: str) -> None:
    view = current()
    view.title, view.url_path = title, url_path


def add_figure(figure) -> None:
    """Record a figure the page shows; its caption in the report is the figure's own title
    (plotly titles hold user text escaped by :func:`evalsuite.display.plotly_text`; the report
    escapes the caption again as HTML, so it is read back as plain text here)."""
    from evalsuite.display import figure_caption

    current().figures.append((figure_caption(figure, f"Chart {len(current().figures) + 1}"), figure))


def add_bound(key: str, value) -> None:
    """Record the value of the widget bound to the URL query parameter ``key``."""
    current().bound[key] = value


def url_values(value) -> list[str]:
    """A widget value as Streamlit reads it back from the URL: ``true``/``false``, one parameter
    per item of a list (an empty list as one empty value), anything else as ``str``."""
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value] or [""]
    return [""] if value is None else [str(value)]


def bound_params() -> list[tuple[str, str]]:
    """The view state: ``(query parameter, value)`` pairs of every bound widget drawn in this run."""
    return [(key, text) for key, value in current().bound.items() for text in url_values(value)]
