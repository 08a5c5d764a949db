"""A few idle database connections of a store, kept for reuse and handed to one thread at a time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._model import StoreError


class _Pool:
    """A few idle connections kept for reuse, handed to one thread at a time."""

    def __init__(self, backend: Any, max_idle: int = 4) -> None:
        self._backend = backend
        self._max_idle = max_idle
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self.closed = False

    @contextmanager
    def connection(self) -> Iterator[Any]:
        if self.closed:
            raise StoreError("this workspace store was closed", code="unavailable")
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._backend.connect()
        keep = False
        try:
            yield conn
            keep = True
        except StoreError:
            keep = True  # our own checks failed; the transaction was rolled back cleanly
            raise
        finally:
            if keep and not self.closed and self._backend.healthy(conn):
                with self._lock:
                    if len(self._idle) < self._max_idle:
                        self._idle.append(conn)
                        conn = None
            if conn is not None:
                try:
                    self._backend.close(conn)
                except Exception:  # closing a broken connection may fail too; it is gone either way
                    pass

    def close(self) -> None:
        self.closed = True
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            self._backend.close(conn)
