"""Persistence: the workspace store behind share links (SQLite by default, PostgreSQL when configured).

A workspace is a named set of input files (kept byte for byte, once per SHA-256) and the view
that was shared. The store knows nothing of Streamlit: its configuration comes in as arguments
(:func:`open_store`) or as a mapping of settings and environment variables
(:func:`open_store_from_config`). ``docs/hosting.md`` describes the settings and the schema.

The modules, by job: ``_model`` (StoreError, the values, workspace ids, argument checks),
``_schema`` (the tables), ``_sqlite`` and ``_postgres`` (the backends), ``_store`` (the Store:
the operations over a backend) and ``_config`` (opening a store, the settings).
"""

from . import _config, _model, _store
from ._config import *  # noqa: F401,F403
from ._model import *  # noqa: F401,F403
from ._store import *  # noqa: F401,F403
from ._config import ENV_VARIABLES  # the environment variables the store reads (the dashboard lists them)

__all__ = sorted([*_model.__all__, *_store.__all__, *_config.__all__, "ENV_VARIABLES"])
