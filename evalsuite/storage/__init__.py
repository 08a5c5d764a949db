"""Persistence: the workspace store behind share links (SQLite by default, PostgreSQL when configured).

A workspace is a named set of input files (kept byte for byte, once per SHA-256) and the view
that was shared. The store knows nothing of Streamlit: its configuration comes in as arguments
(:func:`open_store`) or as a mapping of settings and environment variables
(:func:`open_store_from_config`). ``docs/hosting.md`` describes the settings and the schema.

The modules, by job: ``_model`` (StoreError, the values, workspace ids, argument checks),
``_schema`` (the tables), ``_sqlite`` and ``_postgres`` (the backends), ``_pool`` (reused
connections), ``_store`` (the Store: transactions, datasets and upkeep over a backend), with its
operations on workspaces in ``_workspaces`` and on usage (the judge-run audit log, budgets held,
daily uploads) in ``_usage``, on labelling tasks and human labels in ``_labels``, and ``_config``
(opening a store, the settings).
"""

from . import _config, _labels, _model, _store, _usage
from ._config import *  # noqa: F401,F403
from ._labels import *  # noqa: F401,F403
from ._model import *  # noqa: F401,F403
from ._store import *  # noqa: F401,F403
from ._usage import *  # noqa: F401,F403
from ._config import ENV_VARIABLES  # the environment variables the store reads (the dashboard lists them)

__all__ = sorted([*_model.__all__, *_store.__all__, *_config.__all__, *_usage.__all__, *_labels.__all__,
                  "ENV_VARIABLES"])
