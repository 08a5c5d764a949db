"""Streamlit-only code of the EvalSuite dashboard: session store, cached loaders, URL-bound widgets,
saved workspaces and share links, and the report export.

It lives outside ``pages/`` on purpose: on a freshly started server Streamlit treats every
``pages/*.py`` file as a page of its legacy multipage mode, so a helper module there would be
listed and run as a page. Nothing here computes a metric; the numbers come from ``evalsuite``.

Modules, by what they hold:

- ``shell``: the navigation and the sidebar, run on every page; ``constants``: pages, session
  keys, defaults, sample files; ``settings``: the ``[evalsuite]`` secrets;
- ``session``: the session's files (original bytes kept); ``loaders``: parsing and evaluation,
  cached by SHA-256, and the reader processes; ``page_data``: what a page shows from the
  session's files;
- ``ui``: what the pages share, in one import, handed on from ``messages`` (errors and notices),
  ``downloads`` (CSV and charts), ``url_binding`` (widgets bound to the URL), ``page_data`` and
  ``text`` (escaping user text for markdown); ``current_view``: what the current script run
  shows (page, charts, bound values), for the report and share links;
- sections that pages draw in one call: ``trec_sections`` (trec_eval's summary and PR curve),
  ``calibration_sections`` (judgement tables, calibration figures, the PPI difference),
  ``failure_mix``;
- ``workspaces`` (the persistent store, ``?ws=`` links) and ``share`` (their widgets);
  ``export`` ("Download report"); ``judge_jobs`` (judge runs in the background).
"""
