"""Messages on a page: an exception as a plain-text error box (never a traceback), and the notice
that data is missing. User text goes into markdown only through :func:`dashboard.text.plain`.
"""

from __future__ import annotations

import streamlit as st

import evalsuite as es

from .text import plain


def error_text(exc: BaseException) -> str:
    """The message to show for an exception: EvalSuite's own, or a plain one without traceback."""
    if isinstance(exc, es.EvalSuiteError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}); the rest of your data is untouched."


def show_error(exc: BaseException) -> None:
    """The exception's plain-text message in an error box (escaped: the box renders markdown)."""
    st.error(plain(error_text(exc)), icon=":material/error:")


def no_data(what: str, page_hint: str = "Upload files on the Data page, or load the sample data there.") -> None:
    st.info(f"{what} {page_hint}", icon=":material/info:")
