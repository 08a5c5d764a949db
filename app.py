"""EvalSuite dashboard: ``streamlit run app.py``.

The pages are the scripts in ``pages/`` (layout and widgets only); :func:`dashboard.shell.main`
loads the sample data on a session's first visit, builds the navigation and runs the page the
URL asks for (a deep link on a freshly started server included).
"""

from dashboard.shell import main

main()
