"""Saved workspaces: the session's files in the persistent store, and ``?ws=`` share links.

- :func:`~dashboard.workspace_store.get_store` (its own module): the store of this server process, opened once (``st.cache_resource``) with
  :func:`evalsuite.storage.open_store_from_config` (environment first, then the ``[evalsuite]``
  section of Streamlit secrets). A store that cannot be opened gives ``(None, message)``: the
  save and share controls show the message and the rest of the dashboard works.
- :func:`save_session`: every file of the session (its original bytes, under their SHA-256) and a
  workspace referring to them; the share link is the current page's URL with its query
  parameters (the view state the widgets are bound to) plus ``ws=<workspace id>``. Nothing else
  goes into a link: no data, nothing pickled or evaluated.
- :func:`open_from_url`: a session whose URL has ``ws=`` loads that workspace's files in place of
  the sample data, before the page draws its widgets (which then take their values from the
  URL). A bad, unknown, deleted or expired id leaves a plain message and the sample data.
- :func:`sync_url`: while the session's files are exactly a saved workspace's, the URL carries its
  ``ws`` (a reload or a copied address bar reopens the same view); after any change it does not.

The owner token of a workspace saved in this session stays in the session (to delete it from
the Data page) and is shown to the user once.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import streamlit as st

import evalsuite as es
from evalsuite.hosting import check_workspace_count
from evalsuite.storage import DatasetRef, SavedWorkspace, Store, StoreError, WorkspaceSummary, open_store_from_config
from evalsuite.storage import ENV_VARIABLES as _ENV_SETTINGS

from . import current_view, session
from .workspace_store import get_store
from .constants import (
    KEY_STARTED,
    KEY_WS_ACTIVE,
    KEY_WS_ATTEMPTED,
    KEY_WS_KNOWN,
    KEY_WS_PROBLEM,
    LOCAL_MAX_DATASET_MB,
    LOCAL_MAX_WORKSPACE_MB,
    MAX_FILENAME_CHARS,
    MAX_SYSTEM_CHARS,
    MAX_WORKSPACE_NAME_CHARS,
    SAMPLE_FILES,
    STORE_RETRY_SECONDS,
    WS_PARAM,
)
from .settings import _secrets_section
from .text import plain

MIB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# Session bookkeeping.


def known() -> dict[str, dict]:
    """{workspace id: {"name", "link", "token" (None unless saved here), "role"}} of this session."""
    return st.session_state.setdefault(KEY_WS_KNOWN, {})


def active() -> dict | None:
    """The workspace whose files the session holds unchanged, or None."""
    return st.session_state.get(KEY_WS_ACTIVE)


def fingerprint() -> tuple:
    """What a workspace reproduces: every file's kind, bytes, name and system, in order."""
    return tuple((f.kind, f.digest, f.name, f.system) for f in session.files().values())


@st.cache_resource(show_spinner=False)
def sample_digests() -> frozenset[str]:
    """SHA-256 of the sample files: a restored file with these bytes is marked as sample data
    (so it shows the Cranfield titles and "Clear sample data" removes it, as before saving)."""
    digests = set()
    for _, path, _ in SAMPLE_FILES:
        try:
            digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
        except OSError:
            pass
    return frozenset(digests)


def _link(params: list[tuple[str, str]], workspace_id: str) -> str:
    query = urlencode([(k, v) for k, v in params if k != WS_PARAM] + [(WS_PARAM, workspace_id)])
    base = st.context.url  # the page's URL in the browser, without its query
    if not base:  # no browser URL known (tests): a link relative to the app's root
        base = "/" + current_view.current().url_path
    return f"{base}?{query}"


def share_link(workspace_id: str) -> str:
    """The current page's URL with the value of every widget bound to the URL (the view state, as
    recorded by :func:`dashboard.url_binding.bound` during this run) and ``ws``: nothing else."""
    return _link(current_view.bound_params(), workspace_id)


def bare_link(workspace_id: str) -> str:
    """A link that opens the workspace on the current page with the page's defaults."""
    return _link([], workspace_id)


def _opened_link(workspace_id: str) -> str:
    """The link a workspace was opened with (its URL as the browser sent it)."""
    return _link([(k, v) for k in st.query_params for v in st.query_params.get_all(k)], workspace_id)


def workspace_id_from(text: str) -> str:
    """A workspace id typed or pasted: the id itself, or a share link holding ``ws=``."""
    text = (text or "").strip()
    if "?" in text or "://" in text:
        found = parse_qs(urlsplit(text).query).get(WS_PARAM)
        if found:
            return found[-1].strip()
    return text


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB ({n:,} bytes)" if n >= MIB else f"{n:,} bytes"


def default_name(systems: list[str], stamp: str) -> str:
    """A workspace name from the first systems' names and a time stamp, shortened (with "...")
    to the MAX_WORKSPACE_NAME_CHARS the store keeps, the stamp always whole."""
    if not systems:
        return f"Workspace of {stamp}"
    listed = ", ".join(systems[:4]) + (" ..." if len(systems) > 4 else "")
    suffix = f" ({stamp})"
    room = MAX_WORKSPACE_NAME_CHARS - len(suffix)
    if len(listed) > room:
        listed = listed[: room - 3].rstrip() + "..."
    return listed + suffix


def _check_caps(store: Store, files: list) -> None:
    """Refuse before writing anything: a file over the per-dataset cap, all distinct files
    together over the per-workspace cap, or a system or file name longer than the store keeps
    (the store checks all of them again)."""
    for f in files:
        if f.system is not None and len(f.system) > MAX_SYSTEM_CHARS:
            raise StoreError(f"the system name of this run is {len(f.system):,} characters long; the workspace store "
                             f"keeps at most {MAX_SYSTEM_CHARS:,}. Give it a shorter name on the Data page (Name "
                             "systems) to save the session", code="invalid_argument", source=f.name[:MAX_FILENAME_CHARS])
        if len(f.name) > MAX_FILENAME_CHARS:
            raise StoreError(f"this file name is {len(f.name):,} characters long; the workspace store keeps at most "
                             f"{MAX_FILENAME_CHARS}. Upload it under a shorter name to save the session",
                             code="invalid_argument", source=f.name[:60] + "...")
        if len(f.data) > store.max_dataset_bytes:
            raise StoreError(f"this {f.kind} file is {_size(len(f.data))}; the workspace store keeps at most "
                             f"{_size(store.max_dataset_bytes)} per file (the app's max_dataset_mb setting), so "
                             "this session cannot be saved with it. Remove it on the Data page to save the rest",
                             code="too_large", source=f.name)
    total = sum({f.digest: len(f.data) for f in files}.values())
    if total > store.max_workspace_bytes:
        raise StoreError(f"the files of this session come to {_size(total)}; the workspace store keeps at most "
                         f"{_size(store.max_workspace_bytes)} per workspace (the app's max_workspace_mb setting). "
                         "Remove some files on the Data page to save the rest", code="too_large",
                         source="this session")


def _format_or_none(fmt: str | None) -> str | None:
    try:
        DatasetRef("0" * 64, "run", "x", format=fmt or None)
    except StoreError:
        return None  # not a reader format name: the reader detects it again on opening
    return fmt or None


# ----------------------------------------------------------------------------------------------
# Save, open, delete.


def save_session(name: str, expires_in_days: float | None, progress=None) -> tuple[SavedWorkspace, str]:
    """Store every file of the session and a workspace of them; return it and its share link.

    Parameters
    ----------
    name : str
        The workspace's name (1 to 200 characters).
    expires_in_days : float or None
        Days until its links stop opening it; None for the store's default (usually: until deleted).
    progress : callable or None
        Called with a plain-text label before each file is written.

    Raises
    ------
    StoreError
        The store is unavailable, a file or the whole is over a size cap (nothing written), or a
        setting is bad; the message says which.
    EvalSuiteError
        The session has no file to save.
    """
    store, error = get_store()
    if store is None:
        raise StoreError(f"saving is not available: {error}", code="unavailable")
    files = list(session.files().values())
    if not files:
        raise es.EvalSuiteError("this session has no file to save: upload runs, qrels or records, or load the "
                                "sample data, on the Data page", field="files")
    _check_caps(store, files)
    from . import hosting

    user, limits = hosting.user(), hosting.limits()
    owner = user.id if user.signed_in else None
    if limits.workspaces_per_user is not None:
        # Said before any byte is written; the store checks it again in the saving transaction.
        held = len(store.owned_workspaces(owner)) if owner else sum(
            1 for s in store.list_workspaces([i for i, e in known().items() if e.get("role") == "saved"])
            if s.status == "active")
        why = check_workspace_count(limits, held)
        if why:
            raise StoreError(why, code="limit_reached")
    refs = []
    for i, f in enumerate(files, start=1):
        if progress is not None:
            progress(f"Saving {f.name} ({len(f.data) / MIB:.1f} MiB), file {i} of {len(files)}")
        digest = store.put_dataset(memoryview(f.data), kind=f.kind, filename=f.name)  # bytes or HeldBytes
        refs.append(DatasetRef(digest, f.kind, f.name, system=f.system, format=_format_or_none(f.format)))
    saved = store.save_workspace(name, refs, expires_in_days=expires_in_days, owner_id=owner,
                                 max_owned=limits.workspaces_per_user if owner else None)
    link = share_link(saved.workspace_id)
    known()[saved.workspace_id] = {"name": saved.workspace.name, "link": link, "token": saved.owner_token,
                                   "role": "saved"}
    st.session_state[KEY_WS_ACTIVE] = {"id": saved.workspace_id, "name": saved.workspace.name,
                                       "fingerprint": fingerprint()}
    _set_url_workspace(saved.workspace_id)
    return saved, link


def _fetch(store: Store, workspace_id: str, status) -> tuple:
    """The workspace and every one of its files' bytes (checked against their SHA-256 by the store)."""
    workspace = store.load_workspace(workspace_id)
    fetched = []
    for i, ref in enumerate(workspace.datasets, start=1):
        status.update(label=f"Fetching {plain(ref.filename)} ({i} of {len(workspace.datasets)}) from the store")
        fetched.append((ref, store.get_dataset(ref.digest)))
    return workspace, fetched


def _replace_session_files(fetched: list, status) -> list[tuple[str, str]]:
    """Make the fetched files the session's (the samples included); returns the files that could
    not be read as ``[(file name, message)]`` (also added to the session's problems)."""
    session.clear(sample_only=False)
    st.session_state[KEY_STARTED] = True
    failed = []
    samples = sample_digests()
    for ref, data in fetched:
        status.update(label=f"Reading {plain(ref.filename)}")
        try:
            session.ingest(ref.kind, ref.filename, data, system=ref.system, sample=ref.digest in samples)
        except Exception as exc:  # one file that no longer reads must not lose the others
            failed.append((ref.filename, session.message_for(ref.filename, exc)))
    session.problems().extend(failed)
    return failed


def _reason(exc: BaseException) -> str:
    if isinstance(exc, StoreError) and exc.field == "workspace_id":
        return exc.reason  # without the id: the user knows which link they opened
    if isinstance(exc, es.EvalSuiteError):
        return str(exc)
    return f"the store failed ({type(exc).__name__})"


def open_from_url() -> None:
    """Open the workspace named by the URL's ``ws`` once per session and id (see the module doc).

    On success the session's files are the workspace's (sample data included only if saved);
    on failure the session is untouched and :data:`KEY_WS_PROBLEM` holds the message.
    """
    workspace_id = st.query_params.get(WS_PARAM)
    if not workspace_id:
        return
    current = active()
    if workspace_id == st.session_state.get(KEY_WS_ATTEMPTED) or (current and current["id"] == workspace_id):
        return
    st.session_state[KEY_WS_ATTEMPTED] = workspace_id
    st.session_state.pop(KEY_WS_PROBLEM, None)
    store, error = get_store()
    if store is None:
        _problem(workspace_id, f"This shared workspace cannot be opened: {error}. Showing the sample data instead.")
        return
    slot = st.empty()
    try:
        with slot.status("Opening the shared workspace", expanded=False) as status:
            # Every byte is fetched before the session's files are touched.
            workspace, fetched = _fetch(store, workspace_id, status)
            failed = _replace_session_files(fetched, status)
            status.update(label=f"Opened workspace {plain(workspace.name)}: {len(fetched)} file(s)",
                          state="error" if failed else "complete")
    except Exception as exc:
        slot.empty()  # the message above the page says it
        _problem(workspace_id, f"This shared workspace cannot be opened: {_reason(exc)}. Showing the sample data "
                               "instead.")
        return
    entry = known().setdefault(workspace_id, {"token": None, "role": "opened"})
    entry.update(name=workspace.name, link=_opened_link(workspace_id))
    if failed:
        _problem(workspace_id, f"Workspace '{workspace.name}' opened, but {len(failed)} of its files could not be "
                               "read (see the Data page); the view may differ from the one shared.", level="warning")
        return
    st.session_state[KEY_WS_ACTIVE] = {"id": workspace_id, "name": workspace.name, "fingerprint": fingerprint()}


def _problem(workspace_id: str, message: str, level: str = "error") -> None:
    st.session_state[KEY_WS_PROBLEM] = {"id": workspace_id, "message": message, "level": level}


def problem() -> dict | None:
    """The message about the URL's workspace, while the URL still names it."""
    found = st.session_state.get(KEY_WS_PROBLEM)
    if found and st.query_params.get(WS_PARAM) == found["id"]:
        return found
    return None


def dismiss_problem() -> None:
    found = st.session_state.pop(KEY_WS_PROBLEM, None)
    if found and st.query_params.get(WS_PARAM) == found["id"]:
        del st.query_params[WS_PARAM]


def _set_url_workspace(workspace_id: str | None) -> None:
    current = st.query_params.get(WS_PARAM)
    if workspace_id is None:
        if current is not None:
            del st.query_params[WS_PARAM]
    elif current != workspace_id:
        st.query_params[WS_PARAM] = workspace_id


def sync_url() -> None:
    """Keep ``ws`` in the URL exactly while the session's files equal the active workspace's."""
    current = active()
    if current is None:
        return
    if current["fingerprint"] == fingerprint():
        _set_url_workspace(current["id"])
    else:
        st.session_state[KEY_WS_ACTIVE] = None
        if st.query_params.get(WS_PARAM) == current["id"]:
            _set_url_workspace(None)


def delete(workspace_id: str, owner_token: str | None) -> None:
    """Delete a workspace with its owner token (or, signed in, as its owner); the session keeps its files.

    Raises
    ------
    StoreError
        Wrong token, bad or unknown id, store unavailable (the message says which).
    """
    store, error = get_store()
    if store is None:
        raise StoreError(f"deleting is not available: {error}", code="unavailable")
    from . import hosting

    user = hosting.user()
    store.delete_workspace(workspace_id, owner_token or None, owner_id=user.id if user.signed_in else None)
    entry = known().get(workspace_id)
    if entry is not None:
        entry["token"] = None
    current = active()
    if current and current["id"] == workspace_id:
        st.session_state[KEY_WS_ACTIVE] = None
        _set_url_workspace(None)


def owned_ids() -> set[str]:
    """Ids of the active workspaces the signed-in user saved, in any session (empty without sign-in)."""
    from . import hosting

    user = hosting.user()
    store, _ = get_store()
    if store is None or not user.signed_in:
        return set()
    return {s.workspace_id for s in store.owned_workspaces(user.id)}


def summaries() -> list[WorkspaceSummary]:
    """Status of every workspace this session saved or opened, and (signed in) every workspace the
    user keeps (raises StoreError if unavailable)."""
    store, error = get_store()
    if store is None:
        raise StoreError(f"the workspace store is not available: {error}", code="unavailable")
    ids = list(known())
    ids += [i for i in sorted(owned_ids()) if i not in known()]
    return store.list_workspaces(ids)
