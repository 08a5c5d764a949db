"""Widgets bound to the URL: a page's choices live in its query parameters, so a link reproduces the
view. A value from the URL that the widget cannot take is dropped before the widget reads it, and
each bound value is recorded for share links (:mod:`dashboard.current_view`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from . import current_view
from .text import plain


# Positional parameters of the widgets bound to the URL, as Streamlit names them.
_POSITIONAL = {
    "selectbox": ("label", "options", "index"),
    "radio": ("label", "options", "index"),
    "multiselect": ("label", "options", "default"),
    "select_slider": ("label", "options", "value"),
    "slider": ("label", "min_value", "max_value", "value", "step"),
    "number_input": ("label", "min_value", "max_value", "value", "step"),
    "text_input": ("label", "value", "max_chars"),
    "toggle": ("label", "value"),
    "checkbox": ("label", "value"),
}


_MAX_URL_TEXT = 500  # a text input bound to the URL without max_chars keeps at most this much


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _allowed_url_values(name: str, params: dict, values: list[str]) -> list[str] | None:
    """The URL values a widget may take (a subset of ``values``, in order), or None to drop them
    all. Numbers must be finite, in range and whole where the widget counts in whole steps;
    options must be the widget's own (as shown, ``format_func`` applied)."""
    if name in ("selectbox", "radio", "multiselect", "select_slider"):
        shown = params.get("format_func") or str
        options = {str(shown(o)) for o in params.get("options", ())}
        kept = [v for v in values if v in options]
        if name == "multiselect":
            return list(dict.fromkeys(kept)) or None  # duplicates dropped as well
        return kept if kept and len(kept) == len(values) else None
    if name in ("number_input", "slider"):
        default = params.get("value")
        count = len(default) if isinstance(default, (tuple, list)) else 1
        numbers = [_number(v) for v in values]
        if len(numbers) != count or any(n is None for n in numbers):
            return None
        low, high = params.get("min_value"), params.get("max_value")
        whole = all(isinstance(params.get(p), int) and not isinstance(params.get(p), bool)
                    for p in ("step", "min_value") if params.get(p) is not None) and params.get("step") is not None
        for n in numbers:
            if (low is not None and n < low) or (high is not None and n > high) or (whole and n != int(n)):
                return None
        if count == 2 and numbers[0] > numbers[1]:
            return None  # a reversed range would select nothing
        return values
    if name in ("toggle", "checkbox"):
        return values if len(values) == 1 and values[0].lower() in ("true", "false") else None
    if name == "text_input":
        limit = params.get("max_chars") or _MAX_URL_TEXT
        return values if len(values) == 1 and len(values[0]) <= limit else None
    return values


def _sanitise_url(widget, args: tuple, key: str, kwargs: dict) -> None:
    """Drop (or trim to the known options) the URL's value for ``key`` before the widget reads it.

    Streamlit seeds a bound widget from the URL the page was opened with; a value it cannot
    take (``rel_level=inf`` in an integer number input raises OverflowError inside Streamlit)
    would stop the whole page. Streamlit keeps that URL in its session's query-parameter state
    (``_initial_query_params``, read when a widget is first drawn) with no public way to edit
    it, so this reaches into it; the visible URL is corrected through ``remove_param``.
    """
    ctx = get_script_run_ctx()
    if ctx is None or key in st.session_state:
        # The widget exists already (or code set its value): Streamlit seeds it from the URL only
        # when it is first drawn, and the URL now holds the user's own current choice.
        return
    name = getattr(widget, "__name__", "")
    params = dict(zip(_POSITIONAL.get(name, ()), args)) | kwargs
    with ctx.session_state.query_params() as qp:
        raw = qp.get_initial_value(key)
        if raw is None:
            return
        values = [raw] if isinstance(raw, str) else [str(v) for v in raw]
        if values == [""]:
            allowed = values if name in ("multiselect", "text_input") else None
        else:
            allowed = _allowed_url_values(name, params, values)
        if allowed == values:
            return
        initial = getattr(qp, "_initial_query_params", None)
        dropped = [v for v in values if v not in (allowed or [])]
        label = params.get("label") or key
        shown = ", ".join(v[:40] for v in dropped[:5])
        st.toast(f"The link's {plain(label)} ({plain(shown)}) is not a value this page can take: "
                 + ("the default is shown." if allowed is None else "left out."), icon=":material/link_off:")
        if allowed is None:
            if isinstance(initial, dict):
                initial.pop(key, None)
            qp.remove_param(key)
        else:
            if isinstance(initial, dict):
                initial[key] = list(allowed)
            qp.set_corrected_value(key, list(allowed), "string_array_value")


def forget_url_value(key: str) -> None:
    """Drop the URL's value for ``key`` (the address bar's and the one Streamlit would seed the
    widget from when it is first drawn), so a value the code sets in session state wins."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    try:
        with ctx.session_state.query_params() as qp:
            initial = getattr(qp, "_initial_query_params", None)
            if isinstance(initial, dict):
                initial.pop(key, None)
            if key in qp:
                qp.remove_param(key)
    except AttributeError:  # Streamlit's internal query-parameter state changed
        st.query_params.pop(key, None)


def bound(widget, *args, key: str, **kwargs):
    """Call the Streamlit ``widget`` bound to the URL query parameter ``key`` and record its value
    as part of the view (a share link carries the value of every bound widget drawn, including
    values the URL does not show because they were the default when they were chosen).

    A URL value the widget cannot take (unknown option, a number that is not finite, out of
    range or not whole, an overlong text) is dropped first, so a tampered link shows the
    default instead of an error."""
    try:
        _sanitise_url(widget, args, key, kwargs)
    except AttributeError:  # Streamlit's internal query-parameter state changed: bind unchecked
        pass
    value = widget(*args, key=key, bind="query-params", **kwargs)
    current_view.add_bound(key, value)
    return value


def pick(label: str, options: Sequence, key: str, index: int = 0, container=None, **kwargs):
    """A selectbox bound to the URL query parameter ``key``; None (with nothing drawn) when empty."""
    options = list(options)
    if not options:
        return None
    return bound((container or st).selectbox, label, options, index=min(index, len(options) - 1), key=key, **kwargs)
