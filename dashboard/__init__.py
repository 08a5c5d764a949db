"""Streamlit-only code of the EvalSuite dashboard: session store, cached loaders, URL-bound widgets.

It lives outside ``pages/`` on purpose: on a freshly started server Streamlit treats every
``pages/*.py`` file as a page of its legacy multipage mode, so a helper module there would be
listed and run as a page. Nothing here computes a metric; the numbers come from ``evalsuite``.
"""
