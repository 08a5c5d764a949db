"""Parsing and evaluation, cached by the SHA-256 digest of the input bytes.

The bytes are hashed once, when a file arrives (:func:`digest_of`); afterwards only the digest
string is hashed by Streamlit's caches, and the bytes or parsed objects travel in arguments
whose names start with ``_`` (which Streamlit does not hash).

Every uploaded file is parsed in a worker process (:mod:`evalsuite.isolation`): a file that
crashes the parser, runs past the time limit or the memory cap ends as an ``EvalSuiteError``
shown on the page, and the server and the other sessions never notice. The sample files shipped
in ``sample_data/`` (recognised by their SHA-256) are read in the server process, so a cold start
does not wait for the reader processes.

Parsed runs, qrels and records, and records reports, grow with the input (a 7-million-line run
is hundreds of MB), so they are not kept by entry count but by bytes, in :class:`ByteCache` (one
per server): up to ``EVALSUITE_CACHE_MB`` (default 256 MiB) of the most recently used ones stay
for any session to reuse. Beyond that an object lives only as long as a session uses it: each
session holds what its pages read in a session-scoped ``st.cache_resource`` (:func:`held`), which
Streamlit releases when the session's browser disconnects, or until the file is removed
(:func:`release`); two live sessions with the same file share one copy. The session's uploaded
bytes (``st.session_state``) go when Streamlit drops the session ``server.disconnectedSessionTTL``
seconds later (:func:`_reap_expired_sessions` makes that happen on time). EvalSuite's objects are never modified after
construction and the pages only read them. Evaluation reports and comparisons (a few rows per
query) use ``st.cache_data``, which hands every caller its own copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import streamlit as st

import evalsuite as es
from evalsuite.stats.comparison import compare as _compare, compare_per_query as _compare_per_query
from evalsuite.io.isolation import DEFAULT_MEMORY_BYTES, DEFAULT_TIMEOUT_S, DEFAULT_WORKERS, ReaderPool, set_default_pool

from .constants import SAMPLE_DOCS, SAMPLE_FILES


def digest_of(data: bytes) -> str:
    """SHA-256 hex digest of the bytes: the cache key of everything computed from them."""
    return hashlib.sha256(data).hexdigest()


# Every cached function below is keyed by every input that defines its numbers: the digests of
# the files (in order), the metrics, the cutoff k, rel_level, the systems and the test settings.
# Arguments whose names start with "_" are not hashed by Streamlit, so they must be determined by
# the hashed ones (objects parsed from those very digests), never carry anything of their own.


# Server settings of the readers (docs/hosting.md): environment variable, else the key of the
# [evalsuite] secrets section, else the default; (variable, secret, unit, type).
_POOL_SETTINGS = {
    "workers": ("EVALSUITE_READER_WORKERS", "reader_workers", 1, int),
    "spare": ("EVALSUITE_READER_SPARE", "reader_spare", 1, int),
    "timeout_s": ("EVALSUITE_READER_TIMEOUT_S", "reader_timeout_s", 1, float),
    "memory_bytes": ("EVALSUITE_READER_MEMORY_MB", "reader_memory_mb", 1 << 20, int),
}
_LIMIT_SETTINGS = {
    "max_bytes": ("EVALSUITE_READER_MAX_BYTES_MB", "reader_max_bytes_mb", 1 << 20, int),
    "max_rows": ("EVALSUITE_READER_MAX_ROWS", "reader_max_rows", 1, int),
    "max_line_bytes": ("EVALSUITE_READER_MAX_LINE_MB", "reader_max_line_mb", 1 << 20, int),
    "max_columns": ("EVALSUITE_READER_MAX_COLUMNS", "reader_max_columns", 1, int),
    "max_depth": ("EVALSUITE_READER_MAX_DEPTH", "reader_max_depth", 1, int),
}


def _settings(table: dict) -> dict:
    from .settings import _secrets_section  # the one place that reads Streamlit's secrets

    section = _secrets_section()
    values = {}
    for field, (variable, secret, unit, kind) in table.items():
        text = os.environ.get(variable, "").strip()
        where = f"environment variable {variable}"
        if not text and section.get(secret) not in (None, ""):
            text, where = str(section[secret]).strip(), f"secret evalsuite.{secret}"
        if text:
            try:
                values[field] = kind(text) * unit
            except ValueError:
                raise es.EvalSuiteError(f"must be a {'whole number' if kind is int else 'number'}",
                                        source="settings", field=where, value=text) from None
    return values


@st.cache_resource(show_spinner=False)
def start_readers() -> str | None:
    """Make the server's reader pool from its settings and start it in the background, once per
    server. Returns the settings problem, if any (the pool then keeps the defaults)."""
    try:
        pool = ReaderPool(**{"workers": DEFAULT_WORKERS, "timeout_s": DEFAULT_TIMEOUT_S,
                             "memory_bytes": DEFAULT_MEMORY_BYTES, **_settings(_POOL_SETTINGS)})
        problem = None
    except es.EvalSuiteError as exc:
        pool, problem = ReaderPool(), str(exc)
    set_default_pool(pool)
    pool.warm_up()
    return problem


@st.cache_resource(show_spinner=False)
def reader_limits() -> es.ReadLimits:
    """The limits every upload is read with: evalsuite's defaults, or the server's settings."""
    return es.ReadLimits(**_settings(_LIMIT_SETTINGS))


@st.cache_resource(show_spinner=False)
def _sample_digests() -> frozenset[str]:
    digests = set()
    for _, path, _ in SAMPLE_FILES:
        try:
            digests.add(digest_of(path.read_bytes()))
        except OSError:
            pass
    return frozenset(digests)


def _isolate(digest: str, data: bytes) -> bool:
    """Every file but the shipped samples (the digest is checked against the bytes themselves)."""
    return not (digest in _sample_digests() and digest_of(data) == digest)


# ----------------------------------------------------------------------------------------------
# Parsed files: bounded by bytes, held by the sessions that use them.

MIB = 1 << 20
DEFAULT_CACHE_BYTES = 256 * MIB


def approx_bytes(obj: Any, depth: int = 3) -> int:
    """Memory held by a parsed object, in bytes, as the sum of its arrays' buffers.

    numpy arrays count ``nbytes`` (object arrays 64 bytes more per element, for the strings
    they point to), pyarrow arrays and tables their buffers, pandas frames their columns; objects
    (Run, Qrels, Records, reports), dicts, lists and tuples the sum of their parts, ``depth``
    levels down; anything else :func:`sys.getsizeof`. An estimate for budgeting, not an audit.

    >>> import numpy as np
    >>> approx_bytes(np.zeros(1000))
    8000
    """
    if isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return sys.getsizeof(obj)
    nbytes = getattr(obj, "nbytes", None)
    if isinstance(nbytes, int) and hasattr(obj, "dtype"):  # numpy array or pandas Series
        dtype = getattr(obj, "dtype", None)
        return nbytes + (64 * len(obj) if getattr(dtype, "kind", None) == "O" else 0)
    if hasattr(obj, "get_total_buffer_size"):  # pyarrow Array, ChunkedArray, Table, RecordBatch
        return int(obj.get_total_buffer_size())
    if hasattr(obj, "memory_usage") and hasattr(obj, "columns"):  # pandas DataFrame
        usage = obj.memory_usage(index=True, deep=False)
        objects = sum(len(obj) for c in obj.columns if getattr(obj[c], "dtype", None) == object) \
            if obj.columns.is_unique else 0
        return int(usage.sum()) + 64 * objects
    if depth <= 0:
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(approx_bytes(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sys.getsizeof(obj) + sum(approx_bytes(v, depth - 1) for v in obj)
    fields = getattr(obj, "__dict__", None)
    if fields is not None:
        return sys.getsizeof(obj) + sum(approx_bytes(v, depth - 1) for v in fields.values())
    return sys.getsizeof(obj)


class ByteCache:
    """Objects computed from files, shared by a server's sessions and bounded by bytes.

    The ``max_bytes`` most recently used bytes of objects stay (least recently used dropped
    first; an object larger than ``max_bytes`` is never kept). Dropped objects that some
    session still holds remain reachable through a weak reference, so a second session reading
    the same file gets the same object, not a second copy. Each key is computed once at a time:
    a second caller of the same key waits for the first.

    Parameters
    ----------
    max_bytes : int
        Budget of the strongly held objects, in bytes (as :func:`approx_bytes` counts them).

    Examples
    --------
    >>> import numpy as np
    >>> cache = ByteCache(max_bytes=10_000)
    >>> a = cache.get(("run", "x"), lambda: np.zeros(1000))    # 8,000 bytes: kept
    >>> b = cache.get(("run", "y"), lambda: np.zeros(1000))    # the budget drops x
    >>> cache.keys(), cache.held_bytes
    ([('run', 'y')], 8000)
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = int(max_bytes)
        self.held_bytes = 0
        self._lru: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._computing: dict[Any, threading.Lock] = {}

    def keys(self) -> list:
        """Keys of the strongly held objects, least recently used first."""
        with self._lock:
            return list(self._lru)

    def _lookup(self, key):
        if key in self._lru:
            self._lru.move_to_end(key)
            return self._lru[key][0]
        return self._live.get(key)

    def get(self, key, compute: Callable[[], Any]) -> Any:
        """The object of ``key``: cached, or ``compute()`` (whose exceptions pass through, and
        nothing is cached then)."""
        with self._lock:
            value = self._lookup(key)
            if value is not None:
                return value
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                value = self._lookup(key)
            if value is not None:
                return value
            try:
                value = compute()
                self._put(key, value)
            finally:
                with self._lock:
                    self._computing.pop(key, None)
        return value

    def _put(self, key, value) -> None:
        size = approx_bytes(value)
        with self._lock:
            try:
                self._live[key] = value
            except TypeError:  # not weakly referenceable: only the budget keeps it
                pass
            if size > self.max_bytes:
                return
            self._lru[key] = (value, size)
            self.held_bytes += size
            while self.held_bytes > self.max_bytes:
                _, (_, dropped) = self._lru.popitem(last=False)
                self.held_bytes -= dropped

    def clear(self) -> None:
        """Forget every object (sessions keep what they hold)."""
        with self._lock:
            self._lru.clear()
            self._live = weakref.WeakValueDictionary()
            self.held_bytes = 0


@st.cache_resource(show_spinner=False)
def parsed_cache() -> ByteCache:
    """The server's cache of parsed files, with the budget of its settings (``EVALSUITE_CACHE_MB``
    or the secret ``evalsuite.cache_mb``; default 256 MiB)."""
    try:
        budget = _settings({"max_bytes": ("EVALSUITE_CACHE_MB", "cache_mb", MIB, int)}).get("max_bytes")
    except es.EvalSuiteError:
        budget = None
    return ByteCache(DEFAULT_CACHE_BYTES if budget is None else budget)


class SessionHold(dict):
    """One session's parsed objects, ``{(function, key): object}``, and the session's id."""

    def __init__(self, session_id: str | None) -> None:
        super().__init__()
        self.session_id = session_id

    # One hold is one session: compared and hashed by identity (kept in a WeakSet).
    __eq__ = object.__eq__
    __hash__ = object.__hash__


_HOLDS: weakref.WeakSet = weakref.WeakSet()  # every live session's hold (for tests and diagnostics)


def _release_hold(hold: SessionHold) -> None:
    """Streamlit ended the session (its browser disconnected): let go of its parsed objects, give
    pyarrow's freed memory back, and reap the session once Streamlit's reconnect window is over."""
    hold.clear()
    _release_arrow_memory()
    try:
        ttl = float(st.get_option("server.disconnectedSessionTTL"))
    except Exception:
        return
    timer = threading.Timer(ttl + 1.0, _reap_expired_sessions)
    timer.daemon = True
    timer.start()


def _reap_expired_sessions() -> None:
    """Shut down the sessions whose reconnect window (``server.disconnectedSessionTTL``) is over.

    Streamlit keeps a disconnected session, with its ``st.session_state`` (here: the uploaded
    bytes) and its uploaded files, until its next write to the session storage: on a quiet server,
    for ever. This reaps them now and shuts them down, as Streamlit does for a session it does not
    keep. Best effort through Streamlit's internals (1.67): if they change, nothing happens.
    """
    try:
        from streamlit.runtime import Runtime

        manager = Runtime.instance()._session_mgr
        with manager._storage_lock:
            removed = manager._session_storage._cache.expire()
        for _, info in removed:
            info.session.shutdown()
    except Exception:
        return
    import gc

    gc.collect()
    _release_arrow_memory()


def _release_arrow_memory() -> None:
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except Exception:
        pass


@st.cache_resource(scope="session", on_release=_release_hold, show_spinner=False)
def _session_hold() -> SessionHold:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    hold = SessionHold(ctx.session_id if ctx is not None else None)
    _HOLDS.add(hold)
    return hold


def held() -> dict:
    """This session's parsed objects, ``{(function, key): object}`` (empty outside a session)."""
    try:
        return _session_hold()
    except Exception:  # no script run context: nothing to hold on to
        return {}


def _cached(function: str, key, compute: Callable[[], Any], keep_one: bool = False) -> Any:
    """``compute()`` through the server's :class:`ByteCache`, held by this session.

    ``keep_one``: the session holds only its latest object of ``function`` (derived objects,
    such as a records report per cutoff), else one per key (files, by digest).
    """
    mine = held()
    slot = (function, key)
    if slot in mine:
        return mine[slot]
    value = parsed_cache().get(slot, compute)
    if keep_one:
        for other in [s for s in mine if s[0] == function]:
            del mine[other]
    mine[slot] = value
    return value


def release(digests_in_use) -> None:
    """Let go of this session's parsed files whose digest is not in ``digests_in_use`` (after a
    file is removed or the data cleared), and of its derived objects; the memory goes back
    unless another session holds them or the cache's budget keeps them."""
    keep = set(digests_in_use)
    mine = held()
    for slot in list(mine):
        if not (slot[0] in _PER_FILE and slot[1] in keep):
            del mine[slot]
    _release_arrow_memory()


_PER_FILE = {"read_run", "read_qrels", "read_records", "read_latency_table"}


def _cached_by_digest(function):
    """``function(digest, name, _data)`` through :func:`_cached`, one object per digest; the
    uncached function stays reachable as ``__wrapped__`` (as with Streamlit's caches)."""
    def cached(digest: str, name: str, _data: bytes):
        return _cached(function.__name__, digest, lambda: function(digest, name, _data))

    cached.__name__, cached.__doc__, cached.__wrapped__ = function.__name__, function.__doc__, function
    return cached


@_cached_by_digest
def read_run(digest: str, name: str, _data: bytes) -> es.Run:
    return es.read_run(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


@_cached_by_digest
def read_qrels(digest: str, name: str, _data: bytes) -> es.Qrels:
    return es.read_qrels(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


def content_head(data: bytes, limit: int = 65536) -> bytes:
    """The first ``limit`` bytes of the file's content, as the readers see it: un-gzipped (by
    magic number, as :mod:`evalsuite.io` does) and without a UTF-8 byte-order mark."""
    head = data
    if data[:2] == b"\x1f\x8b":
        # Member after member, as gzip.decompress reads them (an empty first member is legal).
        head, rest = b"", data
        try:
            while rest[:2] == b"\x1f\x8b" and len(head) < limit:
                member = zlib.decompressobj(16 + zlib.MAX_WBITS)
                head += member.decompress(rest, limit - len(head))
                if not member.eof:
                    break  # the limit is reached (or the file is cut short)
                rest = member.unused_data
        except zlib.error:
            pass
    if head[:3] == b"\xef\xbb\xbf":
        head = head[3:]
    return head[:limit]


def content_kind(name: str, data: bytes) -> str:
    """What a file uploaded as records holds, by its content: "traces" (OTLP, Phoenix's spans
    export), "latency_table" (a percentile table) or "records". Only bytes are compared (the
    parsers run in the reader processes)."""
    head = content_head(data)
    inner = name[:-3] if name.lower().endswith(".gz") else name
    whole = data if data[:2] != b"\x1f\x8b" else head  # a Parquet footer is at the end of the file
    if es.detect_traces_format(whole, inner) is not None:
        return "traces"
    if es.detect_latency_table(head, inner) is not None:
        return "latency_table"
    return "records"


@_cached_by_digest
def read_records(digest: str, name: str, _data: bytes):
    if content_kind(name, _data) == "traces":
        return es.read_traces(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())
    return es.read_records(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


@_cached_by_digest
def read_latency_table(digest: str, name: str, _data: bytes):
    return es.read_latency_table(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


def concat_records(digests: tuple[str, ...], _parts: tuple):
    return _cached("concat_records", digests, lambda: es.concat_records(list(_parts)), keep_one=True)


@st.cache_data(max_entries=64, show_spinner=False)
def evaluate_run(qrels_digest: str, run_digest: str, metrics: tuple[str, ...], rel_level: int,
                 _qrels: es.Qrels, _run: es.Run) -> es.EvaluationReport:
    return es.evaluate(_qrels, _run, list(metrics), rel_level=rel_level)


def attributed_records(digests: tuple[str, ...], rel_level: int, _records):
    """The records with each failed request's stage given or attributed (es.with_attributed_failures)."""
    return _cached("attributed_records", (digests, rel_level),
                   lambda: es.with_attributed_failures(_records, rel_level=rel_level), keep_one=True)


def evaluate_records(digests: tuple[str, ...], k: int, rel_level: int, _records):
    return _cached("evaluate_records", (digests, k, rel_level),
                   lambda: es.evaluate_records(_records, k=k, rel_level=rel_level), keep_one=True)


@st.cache_data(max_entries=32, show_spinner=False)
def compare_runs(qrels_digest: str, runs: tuple[tuple[str, str], ...], metrics: tuple[str, ...], test: str,
                 correction: str, alpha: float, rel_level: int, _qrels: es.Qrels, _runs: dict,
                 pairs: str = "baseline"):
    """``runs``: ((system, digest), ...) with the baseline first; ``_runs``: {system: Run};
    ``pairs``: "baseline" (each system against the first) or "all"."""
    return _compare(_qrels, dict(_runs), metrics=list(metrics), test=test, correction=correction, alpha=alpha,
                      baseline=runs[0][0], rel_level=rel_level, pairs=pairs)


def records_per_system(report, systems, keys=None) -> dict:
    """{system: its rows of a records report's per-request table, indexed by query id}, or by
    ``keys`` (one pairing key per row, :func:`evalsuite.records.pairing.request_keys`; rows
    without one left out)."""
    per_query = report.per_query
    if keys is not None:
        per_query = per_query.assign(query_id=list(keys))
        per_query = per_query[per_query["query_id"].notna()]
    return {n: per_query[per_query["system"] == n].set_index("query_id") for n in systems}


@st.cache_data(max_entries=32, show_spinner=False)
def compare_records(digests: tuple[str, ...], k: int, rel_level: int, systems: tuple[str, ...],
                    metrics: tuple[str, ...], test: str, correction: str, alpha: float, _report,
                    pairs: str = "baseline", pair_by: str = "query_id", _keys=None):
    """Compare two systems of a records report on its per-request values.

    ``_report`` is :func:`evaluate_records` of exactly (``digests``, ``k``, ``rel_level``): the
    per-request values are taken from it here, so they cannot differ from what the key says;
    ``_keys`` are the pairing keys ``pair_by`` gives on the same records.
    """
    per_system = records_per_system(_report, systems, _keys if pair_by != "query_id" else None)
    return _compare_per_query({n: per_system[n][list(metrics)] for n in systems}, metrics=list(metrics), test=test,
                              correction=correction, alpha=alpha, baseline=systems[0], pairs=pairs)


@st.cache_resource(show_spinner=False)
def cranfield_titles() -> dict[str, str]:
    """{doc id: title} of the Cranfield sample collection (empty if the file is missing)."""
    titles: dict[str, str] = {}
    try:
        with open(SAMPLE_DOCS, encoding="utf-8") as handle:
            for line in handle:
                doc = json.loads(line)
                titles[str(doc["doc_id"])] = str(doc.get("title", "")).strip()
    except (OSError, ValueError, KeyError):
        return {}
    return titles
