"""The persistent cache of judge calls: SQLite, keyed by the hash of the canonical request.

A request is canonical when written as JSON with sorted keys, no spaces and UTF-8 text; it
holds what decides the answer (model, messages, output schema or mode, sampling, token cap) and
nothing else: no endpoint address, no key, no timeout. The same request always has the same
hash, so a rerun finds every answered call, an interrupted run resumes where it stopped and
any verdict can be replayed from the stored response.

A response is stored under the request's hash *within a scope* (:meth:`JudgeCache.scoped`): the
judges scope their cache by the endpoint (:func:`evalsuite.judges.endpoints.endpoint_identity`),
and the dashboard scopes a visitor's own endpoint by its owner too, so one endpoint's replies are
never served for another's (or another visitor's) request.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import EvalSuiteError

__all__ = ["canonical_json", "request_hash", "scoped_key", "JudgeCache", "ScopedCache", "default_cache_path"]

CACHE_FILENAME = "judge_cache.sqlite3"
# Responses (small, read on every lookup) and requests (large, read only to replay or audit) in
# two tables, so a lookup by hash touches few pages.
_SCHEMA = ("""
CREATE TABLE IF NOT EXISTS judge_calls (
    request_hash TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID
""", """
CREATE TABLE IF NOT EXISTS judge_requests (
    request_hash TEXT PRIMARY KEY,
    request TEXT NOT NULL
) WITHOUT ROWID
""")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces, non-ASCII kept: one text per value.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": ["é", 2.5]})
    '{"a":["é",2.5],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # a str alone: the same text as in canonical_json
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # the C scanner json.loads ends in


def _decode(text: str) -> Any:
    """``json.loads(text)`` for the cache's own canonical texts, without json.loads's Python
    layers around the C scanner (a replay decodes a stored response per judgement); any text the
    scanner does not take whole goes through json.loads.

    Examples
    --------
    >>> _decode('{"choices":1,"content":"{}"}'), _decode(' [1] ')
    ({'choices': 1, 'content': '{}'}, [1])
    """
    try:
        value, end = _SCAN(text, 0)
        if end == len(text):
            return value
    except StopIteration:
        pass
    return json.loads(text)


def messages_json(messages: list) -> str:
    """``canonical_json(messages)`` for chat messages of ``role`` and ``content`` strings, made
    without sorting each message's keys (a judge run makes one per judgement, cached or not).

    Examples
    --------
    >>> m = [{"role": "system", "content": "Judge."}, {"role": "user", "content": 'Is "é" a letter?\\n'}]
    >>> messages_json(m) == canonical_json(m)
    True
    """
    parts = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if len(message) != 2 or not isinstance(role, str) or not isinstance(content, str):
            return canonical_json(messages)
        parts.append('{"content":' + _ENCODE(content) + ',"role":' + _ENCODE(role) + "}")
    return "[" + ",".join(parts) + "]"


def request_hash(request: dict) -> str:
    """SHA-256 (hex) of the canonical JSON of a judge request.

    Parameters
    ----------
    request : dict
        What decides the answer: ``model``, ``messages``, ``response_format``, sampling
        (``temperature``, ``max_tokens``, ``seed`` ...) or, for embeddings, ``model`` and ``input``.
        Never the endpoint, the key or a timeout.

    Returns
    -------
    str
        64 hex digits.

    Examples
    --------
    >>> a = request_hash({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0})
    >>> a == request_hash({"temperature": 0, "messages": [{"content": "hi", "role": "user"}], "model": "m"})
    True
    >>> len(a)
    64
    """
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


def scoped_key(scope: tuple, key: str) -> str:
    """The key a response is stored under: ``key`` itself in the empty scope, else the SHA-256 of
    the canonical JSON of the scope's parts followed by ``key``.

    Examples
    --------
    >>> scoped_key((), "abc")
    'abc'
    >>> scoped_key(("endpoint", "http://a:80/v1"), "abc") == scoped_key(("endpoint", "http://b:80/v1"), "abc")
    False
    """
    if not scope:
        return key
    return hashlib.sha256(canonical_json([*scope, key]).encode("utf-8")).hexdigest()


def default_cache_path() -> Path:
    """``judge_cache.sqlite3`` in ``EVALSUITE_DATA_DIR`` (default ``~/.evalsuite``), as the workspace store."""
    directory = os.environ.get("EVALSUITE_DATA_DIR") or "~/.evalsuite"
    return Path(directory).expanduser() / CACHE_FILENAME


class JudgeCache:
    """Every judge call's request and response, on disk (SQLite), by request hash.

    Parameters
    ----------
    path : path, ":memory:" or None
        The SQLite file (created with its folder); None for :func:`default_cache_path`.

    Raises
    ------
    EvalSuiteError
        A file that is not a SQLite database or cannot be created.

    Notes
    -----
    Thread-safe (one connection behind a lock; WAL journal, so a second process can read while
    one writes). Responses are stored as the endpoint returned them (content, finish reason,
    token counts, the output mode), so a replay parses the verdict exactly as the first run did.
    Keys are never stored: requests hold no key by construction.

    Examples
    --------
    >>> cache = JudgeCache(":memory:")
    >>> key = request_hash({"model": "m", "input": "x"})
    >>> cache.get(key) is None
    True
    >>> cache.put(key, {"model": "m", "input": "x"}, {"content": "{}"})
    >>> cache.get(key), len(cache)
    ({'content': '{}'}, 1)
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        target = default_cache_path() if path is None else path
        self.path = str(target)
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(os.path.expanduser(self.path), check_same_thread=False, isolation_level=None)
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages
            self._conn.execute("PRAGMA mmap_size=268435456")
            for statement in _SCHEMA:
                self._conn.execute(statement)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise EvalSuiteError(f"cannot open the judge cache: {exc}", source=self.path, field="cache") from None
        self._lock = threading.Lock()
        self._memory: dict[str, str] | None = None

    def preload(self, max_rows: int = 500_000) -> bool:
        """Read every stored response into memory at once when there are at most ``max_rows``.

        A run that replays many cached calls then looks each up in a dict instead of SQLite
        (one sequential read instead of a random read per call). Returns whether it loaded.
        """
        with self._lock:
            if self._memory is not None:
                return True
            if self._conn.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0] > max_rows:
                return False
            self._memory = dict(self._conn.execute("SELECT request_hash, response FROM judge_calls"))
        return True

    def get(self, key: str) -> dict | None:
        """The stored response of request ``key``, or None."""
        memory = self._memory
        if memory is not None:
            text = memory.get(key)
            return None if text is None else _decode(text)
        with self._lock:
            row = self._conn.execute("SELECT response FROM judge_calls WHERE request_hash = ?", (key,)).fetchone()
        return None if row is None else _decode(row[0])

    def get_request(self, key: str) -> dict | None:
        """The stored canonical request of ``key`` (for replay and audit), or None."""
        with self._lock:
            row = self._conn.execute("SELECT request FROM judge_requests WHERE request_hash = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, request: dict, response: dict) -> None:
        """Store one answered call (the first answer of a request is kept)."""
        self._put(key, key, request, response)

    def _put(self, stored_key: str, key: str, request: dict, response: dict) -> None:
        """The response under ``stored_key`` (``key`` within a scope), the request under ``key``."""
        text = canonical_json(response)
        with self._lock:
            if self._memory is not None:
                self._memory.setdefault(stored_key, text)
            self._conn.execute("BEGIN")
            self._conn.execute("INSERT OR IGNORE INTO judge_calls VALUES (?, ?, ?)", (stored_key, text, time.time()))
            self._conn.execute("INSERT OR IGNORE INTO judge_requests VALUES (?, ?)", (key, canonical_json(request)))
            self._conn.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0]

    def scoped(self, *parts: str) -> "ScopedCache":
        """This cache seen within a scope (an endpoint, an owner): responses are stored and found
        under :func:`scoped_key`, so those of another scope are never found; the stored requests
        stay under their own hash (they hold no reply)."""
        return ScopedCache(self, tuple(str(p) for p in parts))

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "JudgeCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ScopedCache:
    """A :class:`JudgeCache` seen within a scope (see :meth:`JudgeCache.scoped`).

    ``get``, ``put`` and ``contains`` take the request's hash and use :func:`scoped_key`;
    ``scope_key`` gives the stored key of a request hash (to read a reply later, e.g. the
    dashboard's raw judge output). ``scoped`` narrows the scope further.

    Examples
    --------
    >>> cache = JudgeCache(":memory:")
    >>> a, b = cache.scoped("endpoint", "http://a:80/v1"), cache.scoped("endpoint", "http://b:80/v1")
    >>> a.put("h", {"model": "m"}, {"content": "A"})
    >>> a.get("h"), b.get("h"), cache.get("h")
    ({'content': 'A'}, None, None)
    >>> cache.get(a.scope_key("h")), a.get_request("h")
    ({'content': 'A'}, {'model': 'm'})
    """

    def __init__(self, base: JudgeCache, scope: tuple) -> None:
        self.base = base
        self.scope = scope
        self.path = base.path
        # canonical_json([*scope, key]) is this prefix, the key as JSON, and "]": the prefix is
        # hashed once, and each lookup goes on from a copy of that hash's state.
        self._prefix = hashlib.sha256((canonical_json(list(scope))[:-1] + ",").encode("utf-8")) if scope else None

    def scope_key(self, key: str) -> str:
        if self._prefix is None:
            return key
        digest = self._prefix.copy()
        digest.update((_ENCODE(key) + "]").encode("utf-8"))
        return digest.hexdigest()

    def scoped(self, *parts: str) -> "ScopedCache":
        return ScopedCache(self.base, (*self.scope, *(str(p) for p in parts)))

    def get(self, key: str) -> dict | None:
        return self.base.get(self.scope_key(key))

    def get_request(self, key: str) -> dict | None:
        return self.base.get_request(key)

    def put(self, key: str, request: dict, response: dict) -> None:
        self.base._put(self.scope_key(key), key, request, response)

    def preload(self, max_rows: int = 500_000) -> bool:
        return self.base.preload(max_rows)

    def __len__(self) -> int:
        return len(self.base)

    def close(self) -> None:
        self.base.close()
