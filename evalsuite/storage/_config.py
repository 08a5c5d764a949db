"""Opening the workspace store: :func:`open_store` from arguments, :func:`open_store_from_config`
from environment variables and secrets, and :data:`SETTINGS`, the one list of those settings.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ._model import (
    DEFAULT_MAX_DATASET_BYTES,
    DEFAULT_MAX_WORKSPACE_BYTES,
    DEFAULT_ORPHAN_GRACE_SECONDS,
    HARD_MAX_DATASET_BYTES,
    MIB,
    _SCHEMA_PATTERN,
    StoreError,
    _check_cap,
    _check_days,
    _redact_url,
    server_error,
)
from ._postgres import _PostgresBackend
from ._sqlite import SQLITE_FILENAME, _SQLiteBackend
from ._store import Store

__all__ = ["open_store", "open_store_from_config"]

DEFAULT_DATA_DIR = "~/.evalsuite"


class _Setting(NamedTuple):
    env: str  # environment variable
    key: str  # key in the [evalsuite] section of Streamlit secrets
    meaning: str  # for open_store_from_config's docstring
    default: str  # in words, for the same


# The store's settings, by the name open_store_from_config reads them under. The only list: the
# dashboard imports ENV_VARIABLES and open_store_from_config's docstring is made from it;
# docs/hosting.md has the same table for operators (tests/test_storage.py compares the two).
SETTINGS: dict[str, _Setting] = {
    "url": _Setting("EVALSUITE_STORE_URL", "store_url", "a store URL as :func:`open_store` takes",
                    "SQLite in the data directory"),
    "schema": _Setting("EVALSUITE_STORE_SCHEMA", "store_schema", "PostgreSQL schema", "search_path"),
    "data_dir": _Setting("EVALSUITE_DATA_DIR", "data_dir", "SQLite directory", f"``{DEFAULT_DATA_DIR}``"),
    "max_dataset_mb": _Setting("EVALSUITE_MAX_DATASET_MB", "max_dataset_mb", "cap per dataset in MiB",
                               f"{DEFAULT_MAX_DATASET_BYTES // MIB}"),
    "max_workspace_mb": _Setting("EVALSUITE_MAX_WORKSPACE_MB", "max_workspace_mb", "cap per workspace in MiB",
                                 f"{DEFAULT_MAX_WORKSPACE_BYTES // MIB}"),
    "default_expiry_days": _Setting("EVALSUITE_DEFAULT_EXPIRY_DAYS", "default_expiry_days",
                                    "days a workspace is kept when saved without an expiry", "until deleted"),
}
# The environment variables among them, for a caller that caches on their values (the dashboard).
ENV_VARIABLES = tuple(setting.env for setting in SETTINGS.values())


def open_store(url: str | None = None, *, data_dir: str | os.PathLike | None = None,
               schema: str | None = None,
               max_dataset_bytes: int = DEFAULT_MAX_DATASET_BYTES,
               max_workspace_bytes: int = DEFAULT_MAX_WORKSPACE_BYTES,
               default_expiry_days: float | None = None,
               orphan_grace_seconds: float = DEFAULT_ORPHAN_GRACE_SECONDS,
               clock: Callable[[], float] = time.time) -> Store:
    """Open (and on first use create) the workspace store.

    Parameters
    ----------
    url : str or None
        None for SQLite in ``data_dir``; ``sqlite:///relative/file.db`` or
        ``sqlite:////absolute/file.db`` (SQLAlchemy's spelling) for a given SQLite file;
        ``postgresql://user:password@host:port/database`` (or ``postgres://``, any libpq URI
        parameters such as ``?sslmode=require``) for PostgreSQL, which needs psycopg 3.
    data_dir : path or None
        Directory of the SQLite file ``workspaces.sqlite3`` when ``url`` is None; default the
        environment variable ``EVALSUITE_DATA_DIR``, else ``~/.evalsuite``. Created if missing.
    schema : str or None
        PostgreSQL only: a schema to keep the tables in (created if missing; lower-case letters,
        digits and ``_``); None for the connection's ``search_path`` (usually ``public``).
    max_dataset_bytes, max_workspace_bytes : int
        Size caps: bytes of one dataset, and of a workspace's distinct datasets together.
        Default 50 MiB and 200 MiB.
    default_expiry_days : float or None
        Days a workspace is kept when saved without ``expires_in_days``; None keeps it until
        its owner deletes it.
    orphan_grace_seconds : float
        How long a dataset that no workspace refers to is kept after it was last put (default
        600 s).
    clock : callable
        Seconds since the epoch, ``time.time`` by default; tests pass a controllable clock.

    Returns
    -------
    Store

    Raises
    ------
    StoreError
        ``"invalid_argument"`` for a URL of another kind or a bad setting; ``"unavailable"`` when
        the database cannot be reached, created or is of a newer schema; ``"corrupt"`` when the
        SQLite file is damaged or is not a SQLite database.
    """
    max_dataset_bytes = _check_cap(max_dataset_bytes, "max_dataset_bytes", HARD_MAX_DATASET_BYTES)
    max_workspace_bytes = _check_cap(max_workspace_bytes, "max_workspace_bytes", 2**53)
    default_expiry_days = _check_days(default_expiry_days, "default_expiry_days")
    if (isinstance(orphan_grace_seconds, bool) or not isinstance(orphan_grace_seconds, (int, float))
            or not 0 <= orphan_grace_seconds < math.inf):
        raise StoreError("orphan_grace_seconds is a number of seconds, 0 or more",
                         code="invalid_argument", field="orphan_grace_seconds", value=orphan_grace_seconds)
    if schema is not None and (not isinstance(schema, str) or not _SCHEMA_PATTERN.fullmatch(schema)):
        raise StoreError("a schema name is lower-case letters, digits and '_' (at most 63, not "
                         "starting with a digit)", code="invalid_argument", field="schema", value=schema)
    backend: Any
    if url is None or (isinstance(url, str) and url.startswith("sqlite:")):
        if schema is not None:
            raise StoreError("schema applies to a PostgreSQL store only", code="invalid_argument",
                             field="schema", value=schema)
        if url is None:
            directory = data_dir if data_dir is not None else (os.environ.get(SETTINGS["data_dir"].env)
                                                               or DEFAULT_DATA_DIR)
            path = Path(directory).expanduser() / SQLITE_FILENAME
        else:
            rest = url[len("sqlite:"):]
            if not rest.startswith("///") or len(rest) == 3 or rest[3:] == ":memory:":
                raise StoreError("a SQLite store URL is sqlite:///relative/file.db or "
                                 "sqlite:////absolute/file.db", code="invalid_argument",
                                 field="url", value=url)
            path = Path(rest[3:]).expanduser()
        backend = _SQLiteBackend(path.absolute())
    elif isinstance(url, str) and url.split("://", 1)[0] in ("postgresql", "postgres") and "://" in url:
        backend = _PostgresBackend(url, schema)
    else:
        shown = _redact_url(url) if isinstance(url, str) else url
        raise StoreError("a store URL starts with sqlite:///, postgresql:// or postgres://",
                         code="invalid_argument", field="url", value=shown)
    try:
        backend.initialise()  # a database error leaves as a StoreError
    except OSError as exc:
        raise server_error("cannot create the workspace store's directory", code="unavailable",
                           detail=f"for {backend.location}: {exc.strerror or exc}") from None
    return Store(backend, max_dataset_bytes=max_dataset_bytes, max_workspace_bytes=max_workspace_bytes,
                 default_expiry_days=default_expiry_days, clock=clock,
                 orphan_grace_seconds=float(orphan_grace_seconds))


def open_store_from_config(secrets: Mapping[str, Any] | None = None,
                           environ: Mapping[str, str] | None = None) -> Store:
    """Open the store a deployment is configured for, from environment variables or secrets.

    Each setting is read from its environment variable if set, else from the ``[evalsuite]``
    section of ``secrets`` (pass ``st.secrets``; a missing secrets file counts as empty), else
    its default (the list below is made from ``SETTINGS``; ``docs/hosting.md`` has the same one
    for operators):

    {settings}

    Parameters
    ----------
    secrets : mapping or None
        ``st.secrets`` or any mapping with an ``"evalsuite"`` section.
    environ : mapping or None
        Environment variables; default ``os.environ``.

    Returns
    -------
    Store

    Raises
    ------
    StoreError
        As :func:`open_store`; a setting that is not a number names where it came from.
    """
    environ = os.environ if environ is None else environ
    section: Mapping[str, Any] = {}
    if secrets is not None:
        try:
            found = secrets.get("evalsuite") if hasattr(secrets, "get") else None
        except (FileNotFoundError, KeyError):  # Streamlit raises FileNotFoundError with no secrets.toml
            found = None
        if isinstance(found, Mapping):
            section = found

    def setting(name: str) -> tuple[Any, str]:
        env_name, key = SETTINGS[name].env, SETTINGS[name].key
        if environ.get(env_name, "").strip():
            return environ[env_name].strip(), f"environment variable {env_name}"
        value = section.get(key)
        return (value.strip() if isinstance(value, str) else value), f"secrets [evalsuite] {key}"

    def number(name: str) -> float | None:
        value, where = setting(name)
        if value is None or value == "":
            return None
        try:
            result = float(value)
        except (TypeError, ValueError):
            raise StoreError("this setting must be a number", code="invalid_argument", source=where,
                             value=value) from None
        if not math.isfinite(result) or result <= 0:
            raise StoreError("this setting must be a number above 0", code="invalid_argument",
                             source=where, value=value)
        return result

    url, _ = setting("url")
    schema, _ = setting("schema")
    data_dir, _ = setting("data_dir")
    dataset_mb = number("max_dataset_mb")
    workspace_mb = number("max_workspace_mb")
    return open_store(
        url or None, data_dir=data_dir or None, schema=schema or None,
        max_dataset_bytes=DEFAULT_MAX_DATASET_BYTES if dataset_mb is None else int(dataset_mb * MIB),
        max_workspace_bytes=DEFAULT_MAX_WORKSPACE_BYTES if workspace_mb is None else int(workspace_mb * MIB),
        default_expiry_days=number("default_expiry_days"))


def _settings_doc() -> str:
    """The bullet list of :data:`SETTINGS` for open_store_from_config's docstring."""
    lines = [f"- ``{s.env}`` / ``{s.key}``: {s.meaning} (default: {s.default})" for s in SETTINGS.values()]
    return ";\n    ".join(lines) + "."


if open_store_from_config.__doc__:  # None under python -OO
    open_store_from_config.__doc__ = open_store_from_config.__doc__.replace("{settings}", _settings_doc())
