"""Fixtures of the Dask tests (tests/evaluation/test_distributed.py, test_records_dask.py), which
import them (not a conftest.py: the tests import the root conftest by name)."""

from __future__ import annotations

import sys
import types

import pytest


@pytest.fixture(scope="module")
def _plain_main():
    """Dask starts worker processes with multiprocessing's spawn, which re-runs the file of
    ``sys.modules["__main__"]`` in the child; after the Streamlit AppTests in the same session that
    is app.py. A bare __main__ for the module's clusters (a real program's own __main__ is fine).
    A module that starts Dask asks for it with ``pytest.mark.usefixtures("_plain_main")``."""
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    yield
    sys.modules["__main__"] = saved


@pytest.fixture(scope="module")
def client(_plain_main):
    """A local cluster of 2 single-thread worker processes, 1 GiB each, for the module."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit="1GiB") as cluster, distributed.Client(cluster) as c:
        yield c
