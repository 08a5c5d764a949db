"""The reader pool: same results as in-process reading, and a crash, a hang or a memory blow-up in
a worker becomes a ReaderStopped while the caller and the pool carry on."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import evalsuite as es
from evalsuite.io.isolation import ReaderPool

pytestmark = pytest.mark.slow  # reader processes, fuzzing, large inputs: left out of the fast loop

REPO = Path(__file__).resolve().parents[2]
SAMPLES = {
    "run": ["sample_data/cranfield/run_bm25.trec", "sample_data/cranfield/run_bm25l.trec"],
    "qrels": ["sample_data/cranfield/qrels.trec"],
    "records": ["sample_data/rag/ragtruth_qa.jsonl", "sample_data/rag/ragchecker_examples.jsonl",
                "sample_data/rag/llmperf_requests.jsonl"],
}


def big_run(lines: int) -> bytes:
    """A TREC run of ``lines`` lines (1,000 docs per query), made with numpy in well under a second."""
    q = np.arange(lines) // 1000
    d = np.arange(lines) % 1000
    rows = np.char.add(np.char.add(np.char.add("q", q.astype(str)), " Q0 d"), d.astype(str))
    return ("\n".join(np.char.add(rows, " 1 0.5 t").tolist()) + "\n").encode()


@pytest.fixture(scope="module")
def pool():
    readers = ReaderPool(workers=2, timeout_s=60)
    yield readers
    readers.close()


def _same_ranked(a, b) -> None:
    assert type(a) is type(b)
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.doc_keys, b.doc_keys)
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist()
    values = (a.scores, b.scores) if isinstance(a, es.Run) else (a.grades, b.grades)
    assert np.array_equal(*values)
    # The same arrays wherever the file was read: dtypes, and read-only (a Run is never modified;
    # the isolated read's numbers are views of the reader's mapped file).
    for x, y in ((a.doc_keys, b.doc_keys), values):
        assert x.dtype == y.dtype and not x.flags.writeable and not y.flags.writeable
    assert (a.name, a.source, a.warnings) == (b.name, b.source, b.warnings)


@pytest.mark.parametrize("kind, path", [(k, p) for k, paths in SAMPLES.items() for p in paths])
def test_isolated_reading_equals_in_process_reading(pool, kind, path):
    data = (REPO / path).read_bytes()
    reader = {"run": es.read_run, "qrels": es.read_qrels, "records": es.read_records}[kind]
    here = reader(data, source_name=Path(path).name)
    there = pool.read(kind, data, Path(path).name)
    by_path = reader(REPO / path, isolate=True)
    if kind == "records":
        for other in (there, by_path):
            assert other.table.equals(here.table)
            assert (other.warnings, other.aliases, other.extra_columns) == (here.warnings, here.aliases,
                                                                           here.extra_columns)
    else:
        _same_ranked(here, there)
        _same_ranked(here, by_path)
        # The isolated read's numbers are views of the reader's mapped file, not copies of it
        # (a copy held them twice at once: +110 MiB in the server at 7M lines).
        for array in (there.doc_keys, there.scores if kind == "run" else there.grades):
            while isinstance(array.base, np.ndarray):
                array = array.base
            assert array.base is not None, "the numbers were copied out of the reader's file"


def test_errors_come_back_as_the_in_process_error(pool):
    data = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 abc t\n"
    with pytest.raises(es.EvalSuiteError) as here:
        es.read_run(data, source_name="results.test")
    with pytest.raises(es.EvalSuiteError) as there:
        pool.read("run", data, "results.test")
    assert not isinstance(there.value, es.ReaderStopped)
    assert str(there.value) == str(here.value)
    assert (there.value.line, there.value.field, there.value.value) == (2, "score", "abc")


def test_a_killed_worker_is_a_crash_and_the_pool_carries_on():
    pool = ReaderPool(workers=1, timeout_s=60)
    try:
        pool.read("qrels", b"q1 0 d1 1\n", "warm.qrels")
        (worker,) = pool._idle
        data = big_run(3_000_000)

        def crash() -> None:
            time.sleep(0.3)
            os.kill(worker.process.pid, signal.SIGSEGV)

        killer = threading.Thread(target=crash)
        killer.start()
        with pytest.raises(es.ReaderStopped) as info:
            pool.read("run", data, "big.trec")
        killer.join()
        assert info.value.how == "crashed" and "SIGSEGV" in str(info.value) and info.value.source == "big.trec"
        assert len(pool.read("qrels", b"q1 0 d1 1\n", "after.qrels")) == 1  # a new worker took its place
    finally:
        pool.close()


def test_a_read_past_the_time_limit_is_stopped():
    pool = ReaderPool(workers=1, timeout_s=0.2)
    try:
        with pytest.raises(es.ReaderStopped) as info:
            pool.read("run", big_run(3_000_000), "slow.trec")
        assert info.value.how == "timeout" and "0.2 s" in str(info.value)
        assert len(pool.read("qrels", b"q1 0 d1 1\n", "after.qrels")) == 1
    finally:
        pool.close()


def test_a_read_past_the_memory_cap_is_stopped():
    pool = ReaderPool(workers=1, timeout_s=60, memory_bytes=256 * 1024**2)
    try:
        with pytest.raises(es.ReaderStopped) as info:
            pool.read("run", big_run(3_000_000), "large.trec")
        assert info.value.how == "memory" and "256.0 MiB" in str(info.value)
        assert len(pool.read("qrels", b"q1 0 d1 1\n", "after.qrels")) == 1
    finally:
        pool.close()


def test_requests_beyond_the_pool_wait_for_a_free_worker():
    pool = ReaderPool(workers=1, timeout_s=60)
    results: list = []
    try:
        threads = [threading.Thread(target=lambda i=i: results.append(
            len(pool.read("qrels", f"q{i} 0 d1 1\nq{i} 0 d2 0\n".encode(), f"{i}.qrels")))) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [2] * 6 and pool._count == 1
    finally:
        pool.close()


def _alive_pids(pool: ReaderPool) -> list[int]:
    with pool._lock:
        return [w.process.pid for w in pool._idle if w.alive()]


def test_idle_workers_beyond_the_spare_are_stopped():
    # Two reads at once use both workers; given back, one stays started and the other stops
    # (each idle worker is about 75 MiB of the host's memory).
    pool = ReaderPool(workers=2, timeout_s=60, spare=1)
    started = threading.Barrier(2)
    try:
        pool.warm_up()
        deadline = time.monotonic() + 60
        while not _alive_pids(pool) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # a second worker would have been started by now
        assert len(_alive_pids(pool)) == 1 and pool._count == 1
        held = []
        real_take = pool._take

        def take_and_hold(deadline):
            worker = real_take(deadline)
            held.append(worker.process)
            started.wait(timeout=60)  # both workers taken before either is given back
            return worker

        pool._take = take_and_hold
        results: list = []
        threads = [threading.Thread(target=lambda i=i: results.append(
            len(pool.read("qrels", f"q{i} 0 d1 1\n".encode(), f"{i}.qrels")))) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [1, 1] and len({process.pid for process in held}) == 2
        assert len(_alive_pids(pool)) == 1 and pool._count == 1
        stopped = [process for process in held if process.pid not in _alive_pids(pool)]
        assert len(stopped) == 1 and stopped[0].poll() is not None
    finally:
        pool.close()


def test_pool_settings_are_checked():
    for bad in ({"workers": 0}, {"timeout_s": 0}, {"memory_bytes": 1024}, {"workers": 2, "spare": 3},
                {"spare": -1}, {"spare": True}):
        with pytest.raises(es.EvalSuiteError):
            ReaderPool(**bad)
    pool = ReaderPool(workers=1)
    with pytest.raises(es.EvalSuiteError, match="kind"):
        pool.read("table", b"x", "x")
    pool.close()


def test_transit_folders_of_ended_processes_are_removed(tmp_path, monkeypatch):
    import subprocess
    import sys

    import evalsuite.io.isolation as isolation

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"evalsuite-readers-{int(ended.stdout)}-abc"
    stale.mkdir()
    (stale / "leftover.in").write_bytes(b"x")
    mine = tmp_path / f"evalsuite-readers-{os.getpid()}-def"
    mine.mkdir()
    isolation._remove_folders_of_ended_processes(str(tmp_path))
    assert not stale.exists() and mine.exists()


def test_a_file_the_transit_folder_cannot_take_leaves_nothing_behind(tmp_path):
    """A full temporary space (a file-size limit stands in for a full tmpfs): a named error, and no
    partial copy of the upload left in the transit folder (it held memory until the server ended)."""
    script = """
import glob, os, resource, signal
from evalsuite.errors import EvalSuiteError
from evalsuite.io.isolation import ReaderPool
pool = ReaderPool(workers=1)
folder = pool._folder()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
try:
    pool.read("run", b"q1 Q0 d1 1 1.0 run\\n" * 200000, "upload.trec")
except EvalSuiteError as exc:
    print("error:", exc)
print("left:", len(glob.glob(os.path.join(folder, "*"))))
"""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "error: upload.trec" in done.stdout and "temporary space" in done.stdout, done.stdout + done.stderr
    assert "left: 0" in done.stdout, done.stdout


def test_held_bytes_are_read_from_their_own_file_and_errors_name_the_upload(pool):
    """HeldBytes (a large upload kept once, in memory the workers map) reach the worker as the path
    of their file: the read equals the in-process one, and a message names the upload, never the
    server's file."""
    from evalsuite.io.isolation import hold_bytes, read_isolated

    data = (REPO / "sample_data/cranfield/run_bm25.trec").read_bytes()
    held = hold_bytes(data, min_bytes=1)
    assert held == data and held is not data
    _same_ranked(es.read_run(data, source_name="run_bm25.trec"),
                 read_isolated("run", held, "run_bm25.trec", pool=pool))
    bad = hold_bytes(data + b"q1 Q0 d1 1 high x\n", min_bytes=1)
    with pytest.raises(es.EvalSuiteError) as caught:
        read_isolated("run", bad, "bad.trec", pool=pool)
    assert "bad.trec" in str(caught.value) and bad.path not in str(caught.value)
    assert os.path.basename(bad.path) not in str(caught.value)
