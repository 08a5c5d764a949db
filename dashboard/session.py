"""The session's data: every file the user uploaded (original bytes kept), keyed by its digest.

Uploads last for the browser session (``st.session_state``), and so do the objects parsed from
them (:func:`dashboard.loaders.held`): when the session ends, or a file is removed, its memory
is released (only the loaders' byte budget may keep recent ones for reuse). A file is read once
when it arrives, through the cached loaders, so a bad file is rejected with a plain message and never
enters the store; the rest of the session's data is untouched.

Files arrive through :data:`~dashboard.constants.KEY_PENDING` (a list of ``(kind, name,
bytes)``): the Data page's uploaders put the widget's files there, and tests put bytes there
directly (AppTest cannot click a file uploader); :func:`process_pending` reads them.
"""

from __future__ import annotations

import dataclasses
import os
import zlib
from dataclasses import dataclass

import streamlit as st

import evalsuite as es
from evalsuite.io.isolation import HeldBytes, hold_bytes

from . import loaders
from .constants import (KEY_FILES, KEY_NOTICES, KEY_PENDING, KEY_PROBLEMS, KEY_QRELS, KEY_QRELS_ACTIVATE,
                        KEY_STARTED, KINDS, MAX_SYSTEM_CHARS, SAMPLE_FILES)
from .text import plain


@dataclass(frozen=True)
class StoredFile:
    """One accepted file of the session.

    Attributes
    ----------
    kind : {"run", "qrels", "records"}
    name : str
        File name as uploaded.
    digest : str
        SHA-256 hex digest of ``data``.
    data : bytes
        The uploaded bytes, unchanged.
    format : str
        Format the reader used ("trec", "csv", "jsonl" ...; for a gzip file, its content's).
    system : str or None
        For a run: the system name shown on every page (editable on the Data page).
    sample : bool
        Part of the sample data (removed by "Clear sample data").
    """

    kind: str
    name: str
    digest: str
    data: bytes = dataclasses.field(repr=False)
    format: str = ""
    system: str | None = None
    sample: bool = False

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.digest}"


def files() -> dict[str, StoredFile]:
    """The session's files in upload order (created empty on first use)."""
    return st.session_state.setdefault(KEY_FILES, {})


def problems() -> list[tuple[str, str]]:
    return st.session_state.setdefault(KEY_PROBLEMS, [])


def of_kind(kind: str) -> list[StoredFile]:
    return [f for f in files().values() if f.kind == kind]


def runs() -> dict[str, StoredFile]:
    """{system name: run file}."""
    return {f.system: f for f in of_kind("run")}


def qrels_files() -> list[StoredFile]:
    return of_kind("qrels")


def qrels_label(f: StoredFile) -> str:
    """How a qrels file is named in pickers and captions: its file name and the start of its
    SHA-256, so two files of the same name (``qrels.trec`` of two collections) differ."""
    return f"{f.name} (sha256 {f.digest[:12]})"


def active_qrels() -> StoredFile | None:
    """The qrels chosen in the sidebar, by its label (name and SHA-256 start, see
    :func:`qrels_label`) or its SHA-256 (default: the most recently added)."""
    candidates = qrels_files()
    if not candidates:
        return None
    chosen = st.session_state.get(KEY_QRELS)
    for f in candidates:
        if chosen in (qrels_label(f), f.digest):
            return f
    return candidates[-1]


LATENCY_TABLE_FORMAT = "latency table"


def record_files() -> list[StoredFile]:
    """Records files (traces too), not the latency percentile tables uploaded with them."""
    return [f for f in of_kind("records") if not f.format.startswith(LATENCY_TABLE_FORMAT)]


def latency_table_files() -> list[StoredFile]:
    """Latency percentile tables (uploaded as records; recognised by content)."""
    return [f for f in of_kind("records") if f.format.startswith(LATENCY_TABLE_FORMAT)]


def start_session() -> None:
    """On a session's first run: load the sample data (once; "Clear" keeps it cleared)."""
    if st.session_state.get(KEY_STARTED):
        return
    st.session_state[KEY_STARTED] = True
    load_samples()


def load_samples() -> None:
    """Add the sample Cranfield runs and qrels and the RAG records to the session."""
    for kind, path, system in SAMPLE_FILES:
        try:
            data = path.read_bytes()
        except OSError:
            problems().append((path.name, "sample file not found; the sample data is incomplete"))
            continue
        try:
            ingest(kind, path.name, data, system=system, sample=True)
        except Exception as exc:  # a sample that does not read must not stop the app
            problems().append((path.name, message_for(path.name, exc)))


def clear(sample_only: bool) -> None:
    """Remove the sample files (``sample_only``) or every file, and the list of problems."""
    kept = {k: f for k, f in files().items() if sample_only and not f.sample}
    st.session_state[KEY_FILES] = kept
    st.session_state[KEY_PROBLEMS] = []
    loaders.release(f.digest for f in kept.values())


def remove(key: str) -> None:
    """Remove a file from the session and let go of what was parsed from it."""
    files().pop(key, None)
    loaders.release(f.digest for f in files().values())


def rename_run(key: str, system: str) -> str | None:
    """Give a run a new system name; returns a plain-text problem instead when it is taken,
    empty or longer than the workspace store keeps (MAX_SYSTEM_CHARS)."""
    system = system.strip()
    store = files()
    if key not in store:
        return None
    if not system:
        return "a system name cannot be empty"
    if len(system) > MAX_SYSTEM_CHARS:
        return f"a system name can be at most {MAX_SYSTEM_CHARS:,} characters long (this one has {len(system):,})"
    if any(f.system == system and k != key for k, f in store.items() if f.kind == "run"):
        return f"another run is already named {system!r}"
    store[key] = dataclasses.replace(store[key], system=system)
    return None


def _unique_system(name: str) -> str:
    taken = set(runs())
    if name not in taken:
        return name
    i = 2
    while f"{name} ({i})" in taken:
        i += 1
    return f"{name} ({i})"


def message_for(name: str, exc: Exception) -> str:
    """The plain-text message for a file that could not be read (names the file)."""
    if isinstance(exc, es.EvalSuiteError):
        text = str(exc)
        return text if name in text else f"{name}: {text}"
    return f"{name}: could not be read ({type(exc).__name__}); check that it is a {', '.join(es.FORMATS)} file"


def format_used(kind: str, name: str, data: bytes) -> str:
    """The format the reader picks for this file when none is given: the same detection on the
    same bytes (the content of a gzip file, whose name may have no inner extension)."""
    head = loaders.content_head(data)
    inner = name[:-3] if name.lower().endswith(".gz") else name
    if kind == "records":
        content = loaders.content_kind(name, data)
        if content == "traces":
            whole = data if data[:2] != b"\x1f\x8b" else head
            return f"{es.detect_traces_format(whole, inner)} traces"
        if content == "latency_table":
            return f"{LATENCY_TABLE_FORMAT} ({es.detect_latency_table(head, inner)})"
        return es.detect_records_format(head, inner)
    return es.detect_format(head, inner)


def ingest(kind: str, name: str, data: bytes, system: str | None = None, sample: bool = False) -> StoredFile:
    """Read one file and add it to the session.

    Raises
    ------
    EvalSuiteError
        The file cannot be read (the message names file, line, field and value).
    """
    if kind not in KINDS:
        raise es.EvalSuiteError(f"unknown kind of file; use one of {', '.join(KINDS)}", field="kind", value=kind)
    data = data if isinstance(data, HeldBytes) else bytes(data)
    digest = loaders.digest_of(data)
    key = f"{kind}:{digest}"
    store = files()
    if key in store:
        return store[key]
    if kind == "run":
        run = loaders.read_run(digest, name, data)
        system = _unique_system(system or run.name or os.path.splitext(name)[0] or "run")
    elif kind == "qrels":
        loaders.read_qrels(digest, name, data)
    elif loaders.content_kind(name, data) == "latency_table":
        loaders.read_latency_table(digest, name, data)
    else:
        records = loaders.read_records(digest, name, data)
        taken = {s for f in record_files() for s in loaders.read_records(f.digest, f.name, f.data).systems}
        clash = sorted(taken & set(records.systems))
        if clash:
            raise es.EvalSuiteError(f"system {clash[0]!r} is already in another records file; "
                                    "give each file its own system names", source=name, field="system",
                                    value=clash[0])
    stored = StoredFile(kind=kind, name=name, digest=digest, data=data, format=format_used(kind, name, data),
                        system=system, sample=sample)
    store[key] = stored
    return stored


def upload_bytes(item) -> bytes:
    """The bytes of an uploader's file, as the very object Streamlit's upload manager holds when it
    can be found: ``getvalue()`` hands out a second copy in the server (a 250 MB upload was held
    twice while it was parsed). Best effort through Streamlit's in-memory upload manager, else
    ``getvalue()``."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        storage = getattr(getattr(ctx, "uploaded_file_mgr", None), "file_storage", None)
        record = storage.get(ctx.session_id, {}).get(item.file_id) if storage is not None else None
        if record is not None and type(record.data) is bytes and len(record.data) == item.size:
            return record.data
    except Exception:
        pass
    return item.getvalue()


def queue(kind: str, name: str, data: bytes) -> None:
    """Add a file to the pending list that :func:`process_pending` reads."""
    st.session_state.setdefault(KEY_PENDING, []).append((kind, name, bytes(data)))


# Uploads from this size up (every kind) are kept as HeldBytes (memory the reader workers map), not as bytes.
HOLD_MIN_BYTES = 16 << 20


def process_pending() -> list[tuple[str, str]]:
    """Read every pending file, with a status box saying which file is being read.

    A qrels file read here becomes the active one (the sidebar picker is pointed at it before
    it is drawn, see :func:`take_new_active_qrels`) and a notice says so, naming the qrels it
    replaces.

    Returns the problems of this batch: ``[(file name, plain-text message)]`` (also appended
    to the session's list of problems). A good file is added even when another fails.
    """
    pending = st.session_state.get(KEY_PENDING) or []
    st.session_state[KEY_PENDING] = []
    batch: list[tuple[str, str]] = []
    notices = st.session_state.setdefault(KEY_NOTICES, [])
    if not pending:
        return batch
    # Streamlit's upload manager holds its own copy of each file (the widget hands out another):
    # dropped before reading, not after, so a large upload is not held twice while it is parsed.
    _forget_uploaded_files([(name, data) for _, name, data in pending])
    names, count = [name for _, name, _ in pending], len(pending)
    with st.status(f"Reading {count} file(s)", expanded=False) as status:
        while pending:
            # Taken off the list and, when large, moved into memory the readers map (HeldBytes):
            # nothing else refers to the bytes, so the server holds one copy while they are parsed.
            kind, name, data = pending.pop(0)
            data = hold_bytes(data, HOLD_MIN_BYTES)
            # The label renders markdown: the file name is escaped.
            status.update(label=f"Reading {plain(name)} ({len(data) / (1 << 20):.1f} MiB) as {kind}")
            try:
                from . import hosting

                hosting.count_upload(len(data))  # the daily upload limit (upload_mb_per_day), per user
                before = len(files())
                previous = active_qrels()
                stored = ingest(kind, name, data)
                if len(files()) == before:
                    notices.append(f"{name}: the same bytes were already loaded as {stored.name}")
                elif stored.format.startswith(LATENCY_TABLE_FORMAT):
                    notices.append(f"{name}: read as a {stored.format}, a summary of requests, not requests: the "
                                   "Latency page shows it beside the percentiles computed from the requests")
                elif stored.format.endswith(" traces"):
                    notices.append(f"{name}: read as {stored.format}, one record per trace")
                else:
                    notices.append(f"{name}: read as {stored.format or 'detected'} {kind}"
                                   + (f", system {stored.system!r}" if stored.system else ""))
                if kind == "qrels" and (previous is None or previous.digest != stored.digest):
                    # An uploaded qrels becomes the active one, also when its bytes were loaded before.
                    st.session_state[KEY_QRELS_ACTIVATE] = stored.digest
                    notices.append(
                        f"{qrels_label(stored)} is now the active qrels of the ranking pages"
                        + (f", in place of {qrels_label(previous)}; choose the qrels in the sidebar"
                           if previous is not None else "") + ".")
            except Exception as exc:
                batch.append((name, message_for(name, exc)))
        status.update(label=f"Read {count - len(batch)} of {count} file(s)",
                      state="error" if batch else "complete")
    # A file uploaded again (corrected, or failing anew) replaces what was said of it before.
    again = set(names)
    problems()[:] = [p for p in problems() if p[0] not in again] + batch
    return batch


def _forget_uploaded_files(read: list[tuple[str, bytes]]) -> None:
    """Drop the files about to be read from Streamlit's upload manager: the session's store keeps the
    bytes it needs (the uploaders get new keys, so those files are never asked for again), and
    Streamlit would otherwise keep a reference to every upload for as long as the session exists.

    Only the manager's records with the name and the very content of a file read here are
    dropped (``read``: ``[(name, bytes)]``; the content is compared, as the widget may hand out a
    copy), so a file uploaded meanwhile is kept.
    Best effort through Streamlit's in-memory upload manager; with another manager nothing happens.
    """
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        manager = getattr(ctx, "uploaded_file_mgr", None)
        storage = getattr(manager, "file_storage", None)
        if not read or storage is None or not hasattr(manager, "remove_file"):
            return
        for file_id, record in list(storage.get(ctx.session_id, {}).items()):
            if any(record.name == name and len(record.data) == len(data) and record.data == data
                   for name, data in read):
                manager.remove_file(ctx.session_id, file_id)
    except Exception:
        pass


def take_new_active_qrels() -> StoredFile | None:
    """The qrels file uploaded since the last call (to make it the active one), or None."""
    digest = st.session_state.pop(KEY_QRELS_ACTIVATE, None)
    return next((f for f in qrels_files() if f.digest == digest), None)
