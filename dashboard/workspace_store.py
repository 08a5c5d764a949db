"""The workspace store of this server process: opened once from the environment and the
``[evalsuite]`` secrets (``st.cache_resource``), tried again after ``STORE_RETRY_SECONDS`` when it
could not be opened. Workspaces (:mod:`dashboard.workspaces`), the hosting limits
(:mod:`dashboard.hosting`) and the judge runs' audit log (:mod:`dashboard.judge_jobs`) all use it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import streamlit as st

from evalsuite.storage import ENV_VARIABLES as _ENV_SETTINGS
from evalsuite.storage import Store, StoreError, open_store_from_config

from .constants import LOCAL_MAX_DATASET_MB, LOCAL_MAX_WORKSPACE_MB, STORE_RETRY_SECONDS
from .settings import _secrets_section

__all__ = ["get_store"]


@dataclass(frozen=True)
class _Opened:
    store: Store | None
    error: str | None
    at: float


def _config() -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(environment settings, secrets settings) with the dashboard's local caps filled in.

    On SQLite (no PostgreSQL URL configured) the caps default to LOCAL_MAX_DATASET_MB and
    LOCAL_MAX_WORKSPACE_MB unless the environment or the secrets set them; they are filled in as
    secrets so the precedence stays environment > secrets > default.
    """
    section = _secrets_section()
    url = os.environ.get("EVALSUITE_STORE_URL", "").strip() or str(section.get("store_url") or "").strip()
    if not url.startswith(("postgresql:", "postgres:")):
        section.setdefault("max_dataset_mb", LOCAL_MAX_DATASET_MB)
        section.setdefault("max_workspace_mb", LOCAL_MAX_WORKSPACE_MB)
    env = tuple((name, os.environ.get(name, "")) for name in _ENV_SETTINGS)
    secrets = tuple(sorted((k, str(v)) for k, v in section.items() if isinstance(v, (str, int, float))))
    return env, secrets


@st.cache_resource(max_entries=4, show_spinner=False)
def _open(config) -> _Opened:
    env, secrets = config
    try:
        store = open_store_from_config({"evalsuite": dict(secrets)}, environ=dict(env))
    except StoreError as exc:
        return _Opened(None, str(exc), time.monotonic())
    except Exception as exc:  # e.g. a driver problem: say what, never a traceback
        return _Opened(None, f"the workspace store could not be opened ({type(exc).__name__})", time.monotonic())
    try:
        store.purge_expired()  # once per process: expired workspaces become tombstones
    except StoreError:
        pass  # opening and saving still work; the next start purges
    return _Opened(store, None, time.monotonic())


def get_store() -> tuple[Store | None, str | None]:
    """``(store, None)``, or ``(None, plain-text reason)`` when it cannot be opened (tried again
    after STORE_RETRY_SECONDS, so a database that comes back is picked up)."""
    config = _config()
    opened = _open(config)
    if opened.store is None and time.monotonic() - opened.at > STORE_RETRY_SECONDS:
        _open.clear(config)
        opened = _open(config)
    return opened.store, opened.error


