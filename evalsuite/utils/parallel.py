"""A small shared thread pool for numpy and pyarrow work that releases the GIL.

Hashing ids and sorting keys spend their time in numpy kernels that release the GIL, so slices
of the work run on all cores from plain threads (no processes, nothing pickled).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_POOL: ThreadPoolExecutor | None = None


def workers() -> int:
    """Threads to use: the CPUs this process may run on, at most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def parallel_map(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]``, run on the shared pool when there is more than one item and CPU."""
    items = list(items)
    if len(items) < 2 or workers() < 2:
        return [fn(x) for x in items]
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="evalsuite")
    return list(_POOL.map(fn, items))
