"""Persistence: the workspace store behind share links (SQLite by default, PostgreSQL when configured).

A workspace is a named set of input files (kept byte for byte, once per SHA-256) and the view
that was shared. The store knows nothing of Streamlit: its configuration comes in as arguments
(:func:`open_store`) or as a mapping of settings and environment variables
(:func:`open_store_from_config`). ``docs/hosting.md`` describes the settings and the schema.
"""

from ._store import *  # noqa: F401,F403
from ._store import __all__
