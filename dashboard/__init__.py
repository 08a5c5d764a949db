"""Streamlit-only code of the EvalSuite dashboard: session store, cached loaders, URL-bound widgets,
saved workspaces and share links, and the report export.

It lives outside ``pages/`` on purpose: on a freshly started server Streamlit treats every
``pages/*.py`` file as a page of its legacy multipage mode, so a helper module there would be
listed and run as a page. Nothing here computes a metric; the numbers come from ``evalsuite``.

Modules: ``constants``; ``store`` (the session's files); ``loaders`` (parsing and evaluation,
cached by SHA-256); ``ui`` (shared widgets); ``view`` (what the current run shows); ``shell``
(navigation); ``workspaces`` (the persistent store, ``?ws=`` links); ``share`` (their widgets);
``export`` ("Download report").
"""
