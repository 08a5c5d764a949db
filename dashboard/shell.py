"""The app's shared set-up and navigation, run on every script run whatever page is asked for.

``app.py`` calls :func:`main`, which builds :func:`st.navigation` over the ``pages/*.py`` files
and runs the page the URL asks for. Every page file ends with ``page_entry(render)``:

- run by :func:`main` (the normal case), it renders the page;
- run on its own, it calls :func:`main` first. That happens on a freshly started server, where
  Streamlit serves a deep link such as ``/compare`` in its legacy ``pages/`` mode and runs
  ``pages/compare.py`` without ``app.py``. :func:`main` then loads the sample data, builds the
  sidebar and the navigation (which switches Streamlit out of the legacy mode for good) and runs
  the page asked for, so a deep link shows the same app as a visit through ``/``.

Which case applies is known from a thread-local flag set while :func:`main` runs a page (each
session's script runs in its own thread), not from Streamlit internals.

Before the page: a share link's workspace is opened (``?ws=``, :mod:`dashboard.workspaces`) in
place of the sample data. After the page: the sidebar's "Save and share" and "Download report",
drawn last so that they see the page's bound widgets and charts (:mod:`dashboard.current_view`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import streamlit as st

import evalsuite

from . import current_view, hosting, judge_jobs, loaders, session, share, text, url_binding, workspaces
from .constants import KEY_QRELS, KEY_REL_LEVEL, PAGE_ICON, PAGES, REPO

_running = threading.local()


def _page(module: str, title: str, url_path: str, icon: str, default: bool) -> st.Page:
    return st.Page(REPO / "pages" / f"{module}.py", title=title, url_path=url_path, icon=icon, default=default)


def page_entry(render: Callable[[], None]) -> None:
    """Render a page when :func:`main` runs it; otherwise run :func:`main` (see the module doc)."""
    if getattr(_running, "page", False):
        render()
    else:
        main()


def _qrels_picker() -> None:
    """Which qrels the ranking pages use: always said, with a picker when there is a choice.

    The options are labels of name and SHA-256 start (:func:`session.qrels_label`), so two files
    of the same name differ, and the URL and share links carry a label that names the same
    bytes in any session.
    """
    qrels = session.qrels_files()
    if not qrels:
        st.caption("Qrels: none loaded")
        return
    labels = [session.qrels_label(f) for f in qrels]
    new = session.take_new_active_qrels()
    if len(qrels) == 1:
        st.caption("Qrels in use: " + text.plain(labels[0]),
                   help="The judgements of the Overview, Per-query and Compare pages (ranking runs)")
        return
    if new is not None:
        # A qrels file just uploaded becomes the active one (the Data page said so), over the
        # value an address bar or link may hold from before the upload.
        url_binding.forget_url_value(KEY_QRELS)
        st.session_state[KEY_QRELS] = session.qrels_label(new)
    elif KEY_QRELS not in st.session_state and st.query_params.get(KEY_QRELS) not in (None, *labels):
        # Links made by earlier versions name the qrels by file name or by SHA-256: the one
        # loaded file they name (if exactly one) is chosen, under its label.
        asked = st.query_params.get(KEY_QRELS)
        named = [f for f in qrels if asked in (f.digest, f.name)]
        if len(named) == 1:
            url_binding.forget_url_value(KEY_QRELS)
            st.session_state[KEY_QRELS] = session.qrels_label(named[0])
    if st.session_state.get(KEY_QRELS, labels[-1]) not in labels:
        del st.session_state[KEY_QRELS]  # the chosen qrels was removed: back to the newest, as session.active_qrels
    # A value set in session state (above, or by the user) must not meet a default index too.
    default = {} if KEY_QRELS in st.session_state else {"index": len(qrels) - 1}
    url_binding.bound(st.selectbox, "Qrels in use", labels, key=KEY_QRELS, **default,
             help="Judgements of the Overview, Per-query and Compare pages (ranking runs). A qrels file you "
             "upload becomes the active one.")


_REL_LEVEL_HELP = ("Minimum grade that counts as relevant (trec_eval -l, ranx rel_lvl). nDCG also gives the grades "
                   "below it no gain, as ranx does; trec_eval's -l leaves nDCG as it is, so above 1 its ndcg "
                   "differs from this page's (docs/conventions.md).")


def _sidebar() -> None:
    with st.sidebar:
        _qrels_picker()
        url_binding.bound(st.number_input, "Relevant from grade", min_value=1, max_value=100, value=1, step=1,
                 key=KEY_REL_LEVEL, help=_REL_LEVEL_HELP)
        st.caption("EvalSuite " + evalsuite.__version__)
        hosting.sidebar_identity()


def main() -> None:
    """Set up the session, build the navigation and run the page the URL asks for."""
    st.set_page_config(page_title="EvalSuite", page_icon=PAGE_ICON, layout="wide")
    hosting.log_startup_warnings()
    hosting.gate()  # with sign-in on, nothing below runs for a visitor who is not signed in
    reader_problem = loaders.start_readers()
    if reader_problem:
        st.warning(text.plain(f"The reader settings were not used (the defaults are): {reader_problem}"))
    current_view.start()
    # A share link (?ws=...) opens its workspace before the sample data would be loaded, and
    # before any page draws a widget, so the widgets find their options and take the URL's values.
    workspaces.open_from_url()
    session.start_session()
    session.process_pending()
    judge_jobs.collect_finished()  # a finished judging run's records join the session, whatever the page
    workspaces.sync_url()
    pages = [_page(*spec, default=(i == 0)) for i, spec in enumerate(PAGES)]
    # The first page is served at "/". Its file is also served at its own path (/data), hidden in
    # the navigation, so a deep link to it works like every other page's; the default page gets
    # another internal path because Streamlit tells pages apart by that path alone.
    module, title, url_path, icon = PAGES[0]
    pages[0] = _page(module, title, f"{url_path}_home", icon, default=True)
    pages.append(st.Page(REPO / "pages" / f"{module}.py", title=title, url_path=url_path, icon=icon,
                         visibility="hidden"))
    page = st.navigation(pages, position="sidebar")
    current_view.set_page(page.title, page.url_path)
    _sidebar()
    share.problem_banner()
    _running.page = True
    try:
        page.run()
    finally:
        _running.page = False
    share.sidebar_tools(page.url_path)
