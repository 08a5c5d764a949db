"""Dashboard memory: parsed files are cached by bytes, not entries, shared by live sessions, and
released when the session that holds them removes them or ends (issue 16)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import evalsuite as es
from dashboard import loaders
from dashboard.loaders import ByteCache, approx_bytes

from .helpers import CRANFIELD, REPO, open_page


class Box:
    """A weakly referenceable object holding an array of a known size."""

    def __init__(self, n_bytes: int) -> None:
        self.values = np.zeros(n_bytes // 8)


# ----------------------------------------------------------------------------------------------
# approx_bytes


def test_approx_bytes_counts_the_buffers_of_a_run():
    run = es.read_run(CRANFIELD / "run_bm25.trec")
    buffers = (run.query_ids.nbytes + 64 * len(run.query_ids) * (run.query_ids.dtype == object)
               + run.offsets.nbytes + run.doc_ids.get_total_buffer_size() + run.doc_keys.nbytes + run.scores.nbytes)
    measured = approx_bytes(run)
    # The arrays plus a few small Python objects (name, source, warnings).
    assert buffers <= measured <= buffers + 4096


def test_approx_bytes_of_containers_and_arrow():
    table = pa.table({"a": pa.array(np.arange(1000, dtype=np.int64))})
    assert approx_bytes(table) == 8000
    assert approx_bytes({"x": np.zeros(100), "y": [np.zeros(50)]}) >= 800 + 400


# ----------------------------------------------------------------------------------------------
# ByteCache


def test_cache_is_bounded_by_bytes_not_entries():
    cache = ByteCache(max_bytes=3 * 8000)
    for i in range(10):
        cache.get(i, lambda: np.zeros(1000))  # 8,000 bytes each
    assert cache.keys() == [7, 8, 9]
    assert cache.held_bytes == 24_000
    cache.get(8, lambda: pytest.fail("8 is cached"))  # a hit makes 8 the most recent
    cache.get(10, lambda: np.zeros(1000))
    assert cache.keys() == [9, 8, 10]


def test_an_object_larger_than_the_budget_lives_only_while_someone_holds_it():
    cache = ByteCache(max_bytes=1000)
    held = cache.get("big", lambda: Box(80_000))
    assert cache.keys() == [] and cache.held_bytes == 0
    # While a session holds it, a second reader gets the same object, not a second parse.
    assert cache.get("big", lambda: pytest.fail("must not parse again")) is held
    ref = weakref.ref(held)
    del held
    gc.collect()
    assert ref() is None
    calls = []
    cache.get("big", lambda: calls.append(1) or Box(80_000))
    assert calls == [1]


def test_a_failed_computation_caches_nothing():
    cache = ByteCache(max_bytes=10_000)

    def fail():
        raise es.EvalSuiteError("bad line", source="x.trec", line=2)

    with pytest.raises(es.EvalSuiteError):
        cache.get("x", fail)
    assert cache.keys() == []
    assert cache.get("x", lambda: np.zeros(10)).shape == (10,)


# ----------------------------------------------------------------------------------------------
# Sessions


def _run_bytes(n_queries: int = 40, n_docs: int = 2000) -> bytes:
    rng = np.random.default_rng(16)
    lines = []
    for q in range(n_queries):
        scores = np.sort(rng.random(n_docs))[::-1]
        lines += [f"{q + 1} Q0 d{q}_{i} {i + 1} {s:.6f} mine\n" for i, s in enumerate(scores)]
    return "".join(lines).encode()


@pytest.fixture
def small_budget(monkeypatch):
    """The server's cache with a 1 MiB budget (the test's run is larger), restored afterwards."""
    monkeypatch.setenv("EVALSUITE_CACHE_MB", "1")
    loaders.parsed_cache.clear()
    yield
    monkeypatch.delenv("EVALSUITE_CACHE_MB")
    loaders.parsed_cache.clear()


def _holds_of(name: str) -> list:
    """The live sessions' holds that have a run read from ``name``."""
    return [hold for hold in list(loaders._HOLDS)
            if any(function == "read_run" and obj.source == name for (function, _), obj in hold.items())]


def _held_run(name: str):
    runs = {id(obj): obj for hold in _holds_of(name) for (function, _), obj in hold.items()
            if function == "read_run" and obj.source == name}
    assert len(runs) == 1
    return next(iter(runs.values()))


def _end_session(hold) -> None:
    """What Streamlit does when a session's browser disconnects: clear its session caches."""
    from streamlit.runtime.caching.cache_resource_api import clear_session_cache

    clear_session_cache(hold.session_id)


def test_a_session_holds_its_run_and_lets_go_when_the_file_is_removed(small_budget):
    data = _run_bytes()
    at = open_page("data", pending=[("run", "mine.trec", data)])
    run = _held_run("mine.trec")
    assert approx_bytes(run) > 1 << 20  # over the budget: only the session keeps it
    ref = weakref.ref(run)
    del run
    gc.collect()
    assert ref() is not None
    key = next(k for k, f in at.session_state["data_files"].items() if f.name == "mine.trec")
    at.button(key=f"data_remove_{key}").click().run()
    assert not at.exception
    gc.collect()
    assert ref() is None


def test_the_data_of_a_session_that_ended_is_released(small_budget):
    data = _run_bytes()
    at = open_page("data", pending=[("run", "mine.trec", data)])
    holds = _holds_of("mine.trec")
    assert len(holds) == 1
    run = _held_run("mine.trec")
    ref = weakref.ref(run)
    # Another holder (as a second session would be) shares the object: the cache hands it out.
    slot = next(slot for slot, obj in holds[0].items() if obj is run)
    assert loaders.parsed_cache().get(slot, lambda: pytest.fail("parsed again")) is run
    del run
    _end_session(holds[0])
    gc.collect()
    assert ref() is None
    assert at.session_state["data_files"]  # the files stay in the session state for a reconnect


def test_files_read_are_dropped_from_the_upload_manager_and_others_kept(monkeypatch):
    from types import SimpleNamespace

    import streamlit.runtime.scriptrunner as scriptrunner
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from dashboard import session

    manager = MemoryUploadedFileManager("/upload")
    read, meanwhile = b"q1 Q0 d1 1 2.5 t\n" * 3, b"q1 0 d1 1\n" * 3
    manager.add_file("s1", UploadedFileRec(file_id="f1", name="run.trec", type="text/plain", data=read))
    manager.add_file("s1", UploadedFileRec(file_id="f2", name="qrels.trec", type="text/plain", data=meanwhile))
    ctx = SimpleNamespace(session_id="s1", uploaded_file_mgr=manager)
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda *args, **kwargs: ctx)
    session._forget_uploaded_files([("run.trec", bytes(bytearray(read)))])  # a copy of the bytes
    assert [r.file_id for r in manager.get_files("s1", ["f1", "f2"])] == ["f2"]


def test_an_upload_is_taken_as_the_upload_managers_own_bytes(monkeypatch):
    """getvalue() of the widget's file is a second copy in the server (a 250 MB upload was held twice
    while parsed, benchmarks/dashboard_memory.py): the Data page takes the manager's own object."""
    from types import SimpleNamespace

    import streamlit.runtime.scriptrunner as scriptrunner
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    from dashboard import session

    manager = MemoryUploadedFileManager("/upload")
    data = b"q1 Q0 d1 1 2.5 t\n" * 3
    record = UploadedFileRec(file_id="f1", name="run.trec", type="text/plain", data=data)
    manager.add_file("s1", record)
    widget_file = UploadedFile(UploadedFileRec(file_id="f1", name="run.trec", type="text/plain",
                                               data=bytes(bytearray(data))), None)  # a copy, as in the server
    ctx = SimpleNamespace(session_id="s1", uploaded_file_mgr=manager)
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda *args, **kwargs: ctx)
    assert session.upload_bytes(widget_file) is data
    # No manager (or not this file): the widget's bytes, equal.
    other = UploadedFile(UploadedFileRec(file_id="f9", name="x.trec", type="text/plain", data=b"abc"), None)
    assert session.upload_bytes(other) == b"abc"
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda *args, **kwargs: None)
    assert session.upload_bytes(widget_file) == data


def _spy_on_reads(monkeypatch) -> list:
    """Every ReaderPool.read from now on, as (kind, no bytes given, path given)."""
    from evalsuite.io.isolation import ReaderPool

    paths = []
    real_read = ReaderPool.read

    def spy(self, kind, data, source_name, *, path=None, **options):
        paths.append((kind, data is None, path))
        return real_read(self, kind, data, source_name, path=path, **options)

    monkeypatch.setattr(ReaderPool, "read", spy)
    return paths


def test_a_large_run_is_held_once_where_the_readers_map_it(small_budget, monkeypatch):
    """A large upload kept as bytes was held twice while parsed: the server's copy and the copy in
    the reader's transit folder. It is kept as HeldBytes, whose file the reader maps; the run read
    from it equals the in-process read, and the file goes when the session lets go of it."""
    from dashboard import session
    from evalsuite.io.isolation import HeldBytes

    paths = _spy_on_reads(monkeypatch)
    monkeypatch.setattr(session, "HOLD_MIN_BYTES", 1)
    data = _run_bytes()
    at = open_page("data", pending=[("run", "mine.trec", data)])
    stored = next(f for f in at.session_state["data_files"].values() if f.name == "mine.trec")
    assert isinstance(stored.data, HeldBytes) and stored.data == data and stored.digest == loaders.digest_of(data)
    held_path = stored.data.path
    assert ("run", True, held_path) in paths  # the worker was given the held file, not a copy
    here = es.read_run(data, source_name="mine.trec")
    run = _held_run("mine.trec")
    assert np.array_equal(run.scores, here.scores) and run.doc_ids.to_pylist() == here.doc_ids.to_pylist()
    del run, stored
    key = next(k for k, f in at.session_state["data_files"].items() if f.name == "mine.trec")
    at.button(key=f"data_remove_{key}").click().run()
    assert not at.exception
    gc.collect()
    import os

    assert not os.path.exists(held_path)


@pytest.mark.parametrize("name, path, reader", [
    ("ragtruth_qa.jsonl", "sample_data/rag/ragtruth_qa.jsonl", es.read_records),
    ("phoenix_spans.parquet", "tests/data/traces/phoenix_spans.parquet", es.read_traces),  # the footer is read
])
def test_a_large_records_upload_is_held_once_too(monkeypatch, name, path, reader):
    """Records and traces uploads are held as HeldBytes like runs: the worker is given the held
    file, what it reads equals the in-process read of the same bytes, the format shown is the one
    detected from the bytes, and a label task stores the held bytes unchanged."""
    from dashboard import labelling, session
    from evalsuite.io.isolation import HeldBytes

    paths = _spy_on_reads(monkeypatch)
    monkeypatch.setattr(session, "HOLD_MIN_BYTES", 1)
    # Not a shipped sample's bytes (those are read in this process): the systems renamed.
    data = (REPO / path).read_bytes().replace(b'"system": "', b'"system": "held-')
    at = open_page("data", pending=[("records", name, data)], clear=True)
    assert not at.exception and not at.error
    stored = next(f for f in at.session_state["data_files"].values() if f.name == name)
    assert isinstance(stored.data, HeldBytes) and stored.data == data
    assert any(given and held == stored.data.path for _, given, held in paths)
    assert stored.format == session.format_used("records", name, data)
    read_here = reader(data, source_name=name)
    read_held = loaders.read_records(stored.digest, name, stored.data)
    assert read_held.table.equals(read_here.table)
    # A label task stores the file's bytes as uploaded (the store takes bytes or a memoryview).
    stored_bytes = {}

    class Store:
        def put_dataset(self, data, *, kind, filename):
            assert isinstance(data, (bytes, bytearray, memoryview))
            stored_bytes["data"] = bytes(data)
            raise labelling.StoreError("stop here", code="unavailable")

    monkeypatch.setattr(labelling, "get_store", lambda: (Store(), None))
    with pytest.raises(labelling.StoreError, match="stop here"):
        labelling.create_task(stored, "faithfulness", [], "single", 0, 0.5, "?")
    assert stored_bytes["data"] == data
