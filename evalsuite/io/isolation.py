"""Parse untrusted files in worker processes, so that no file can crash, freeze or exhaust the caller.

A reader runs native code (pyarrow's CSV, JSON and Parquet readers, zlib) on bytes someone else
wrote. A bug there, or a file built to find one, can crash the process (a segmentation fault),
run for minutes or take all memory; in a server that is every user's session. Here the readers
run in a small pool of worker processes (``python -m evalsuite.io._reader_worker``):

- the caller watches each busy worker's resident memory (every 50 ms) and stops it past
  ``memory_bytes``; the worker also caps its own address space (``RLIMIT_AS``) at twice that
  plus 4 GiB, as a backstop (a tight address-space cap breaks thread start-up: pyarrow, numpy
  and the interpreter map 1.6 GiB of address space before reading anything);
- the caller waits at most ``timeout_s`` for a reply, then kills the worker;
- a worker that crashed, was killed or ran out of memory is replaced; the caller gets a
  :class:`~evalsuite.errors.ReaderStopped` (an :class:`EvalSuiteError`) naming the file and
  what happened;
- requests and replies are length-prefixed JSON frames on the worker's stdin/stdout; the file's
  bytes and the parsed result travel as files in a private folder (tmpfs where there is one):
  the worker memory-maps the input, and the result comes back as Arrow IPC streams that the
  caller memory-maps, never as pickled objects.

The library's readers parse in-process by default (``isolate=False``); the dashboard always
reads through here.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from typing import Any

from ..errors import EvalSuiteError, ReaderStopped
from ._held_bytes import _FOLDER_PREFIX, HeldBytes, hold_bytes, make_private_folder, private_folder_base
from ._transit import deserialise
from .limits import DEFAULT_MEMORY_BYTES, DEFAULT_TIMEOUT_S, MIB, check_limits, size_text

__all__ = ["read_isolated", "HeldBytes", "hold_bytes", "ReaderPool", "default_pool", "set_default_pool", "DEFAULT_TIMEOUT_S",
           "DEFAULT_MEMORY_BYTES", "DEFAULT_WORKERS"]

DEFAULT_WORKERS = 2

_STARTUP_S = 60.0  # a worker's imports on a loaded machine
_FRAME = struct.Struct("<Q")
_KINDS = ("run", "qrels", "records", "judgements", "traces", "latency_table")


# ----------------------------------------------------------------------------------------------
# Framing: an 8-byte little-endian length, then that many bytes.


def write_frame(stream, payload: bytes | memoryview) -> None:
    stream.write(_FRAME.pack(len(payload)))
    stream.write(payload)


def read_frame(stream) -> bytes | None:
    """One frame from a blocking binary stream; None at a clean end of stream."""
    head = stream.read(_FRAME.size)
    if not head:
        return None
    if len(head) != _FRAME.size:
        raise EOFError("stream ended inside a frame header")
    (size,) = _FRAME.unpack(head)
    body = stream.read(size)
    if len(body) != size:
        raise EOFError("stream ended inside a frame")
    return body


def error_fields(exc: EvalSuiteError) -> dict:
    """An EvalSuiteError as JSON-safe fields (the value as written when it is not JSON-safe)."""
    value = exc.value
    if not (value is None or isinstance(value, (str, bool, float)) or (isinstance(value, int) and abs(value) < 2**63)):
        from ..errors import shorten

        value = shorten(value, 200)
    elif isinstance(value, str) and len(value) > 200:
        value = value[:200]
    return {"message": str(exc), "reason": exc.reason, "source": exc.source, "line": exc.line, "field": exc.field,
            "value": value}


def rebuild_error(fields: dict) -> EvalSuiteError:
    """The EvalSuiteError :func:`error_fields` described, with the worker's message unchanged."""
    error = EvalSuiteError.__new__(EvalSuiteError)
    ValueError.__init__(error, str(fields.get("message", "")))
    error.reason = fields.get("reason") or ""
    error.source, error.line = fields.get("source"), fields.get("line")
    error.field, error.value = fields.get("field"), fields.get("value")
    return error


# ----------------------------------------------------------------------------------------------
# The caller's side: a pool of workers.


def _package_root() -> str:
    """The folder that holds the ``evalsuite`` package (this file is ``evalsuite/io/isolation.py``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, memory_bytes: int) -> None:
        env = dict(os.environ)
        root = _package_root()
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # glibc's heap for the parse (the worker's Arrow pool is the C heap): blocks of 256 KiB and
        # more mapped on their own and returned when freed, in at most two arenas. A 7M-line run's
        # parse peaked at 292-293 MiB against 320-327 MiB with glibc's defaults, at the same speed.
        env.setdefault("MALLOC_MMAP_THRESHOLD_", str(256 * 1024))
        env.setdefault("MALLOC_ARENA_MAX", "2")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "evalsuite.io._reader_worker", str(2 * int(memory_bytes) + 4 * 1024 * MIB)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=root, close_fds=True,
            start_new_session=True,  # a Ctrl-C of the server's terminal is not the worker's business
        )
        self.ready = False
        self.buffer = bytearray()  # bytes read from the worker beyond the last whole frame

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        try:
            self.process.kill()
        except OSError:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _remove_folders_of_ended_processes(base: str) -> None:
    """Remove the transit folders that pools of processes no longer running left behind."""
    for folder in glob.glob(os.path.join(glob.escape(base), _FOLDER_PREFIX + "*")):
        pid = os.path.basename(folder)[len(_FOLDER_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass  # alive (or not ours to ask about): leave it


class _Stopped(Exception):
    def __init__(self, how: str, detail: str = "") -> None:
        super().__init__(how)
        self.how, self.detail = how, detail


class ReaderPool:
    """A few worker processes that parse files with a time limit and a memory cap.

    Parameters
    ----------
    workers : int
        Processes at most (default 2); a request waits for a free one up to its timeout.
    timeout_s : float
        Seconds one file may take, from the request to the parsed result (default 60).
    memory_bytes : int
        Resident memory a worker may use, in bytes (default 6 GiB): a worker past it is stopped
        and the file refused.
    spare : int
        Idle workers kept started, at most (default 1, from 0 to ``workers``): each holds about
        75 MiB (an interpreter and the readers' imports), so a worker given back beyond these is
        stopped and a request that finds none idle starts one (about a second).

    Examples
    --------
    >>> pool = ReaderPool(workers=1)
    >>> pool.read("qrels", b"q1 0 d1 1\\n", "qrels.trec").query("q1")
    {'d1': 1.0}
    >>> pool.close()
    """

    def __init__(self, workers: int = DEFAULT_WORKERS, timeout_s: float = DEFAULT_TIMEOUT_S,
                 memory_bytes: int = DEFAULT_MEMORY_BYTES, spare: int = 1) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise EvalSuiteError("the number of reader workers must be a whole number >= 1", field="workers",
                                 value=workers)
        if not (isinstance(timeout_s, (int, float)) and timeout_s > 0):
            raise EvalSuiteError("the reader timeout must be a number of seconds > 0", field="timeout_s", value=timeout_s)
        if isinstance(memory_bytes, bool) or not isinstance(memory_bytes, int) or memory_bytes < 256 * MIB:
            raise EvalSuiteError("the reader memory cap must be at least 256 MiB (in bytes)", field="memory_bytes",
                                 value=memory_bytes)
        if isinstance(spare, bool) or not isinstance(spare, int) or not 0 <= spare <= workers:
            raise EvalSuiteError(f"the number of spare reader workers must be a whole number from 0 to {workers}",
                                 field="spare", value=spare)
        self.size, self.timeout_s, self.memory_bytes = workers, float(timeout_s), memory_bytes
        # A second idle worker was 74 MiB of the dashboard's peak during an upload (the other
        # worker parsing it), for a wait that only two reads at once would save.
        self.spare = spare
        self._idle: list[_Worker] = []
        self._count = 0
        self._lock = threading.Condition()
        self._closed = False
        self._dir: str | None = None

    # Workers are taken from the idle list, used by one thread, and given back (or replaced).
    def _take(self, deadline: float) -> _Worker:
        with self._lock:
            while True:
                if self._closed:
                    raise EvalSuiteError("the reader pool is closed")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        return worker
                    self._count -= 1
                    worker.kill()
                if self._count < self.size:
                    self._count += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Stopped("busy")
                self._lock.wait(min(left, 1.0))
        try:
            return _Worker(self.memory_bytes)
        except OSError as exc:
            with self._lock:
                self._count -= 1
                self._lock.notify()
            raise EvalSuiteError(f"could not start a reader process ({exc})") from None

    def _give_back(self, worker: _Worker, healthy: bool) -> None:
        with self._lock:
            if healthy and worker.alive() and not self._closed and len(self._idle) < self.spare:
                self._idle.append(worker)
            else:
                self._count -= 1
                worker.kill()
            self._lock.notify()

    def warm_up(self) -> None:
        """Start the spare workers now (in the background), so the first upload does not wait for one."""
        def start() -> None:
            while True:
                with self._lock:
                    if self._closed or self._count >= self.size or len(self._idle) >= self.spare:
                        return
                    self._count += 1
                try:
                    worker = _Worker(self.memory_bytes)
                except OSError:
                    with self._lock:
                        self._count -= 1
                    return
                try:
                    self._await_ready(worker, time.monotonic() + _STARTUP_S)
                    started = True
                except (_Stopped, ValueError):
                    started = False
                self._give_back(worker, started)
                if not started:
                    return

        threading.Thread(target=start, name="evalsuite-reader-warm-up", daemon=True).start()

    def _await_ready(self, worker: _Worker, deadline: float) -> None:
        if worker.ready:
            return
        header = self._receive(worker, deadline)
        if json.loads(header).get("ready") is not True:
            raise _Stopped("crashed", "the reader process did not start")
        worker.ready = True

    def _receive(self, worker: _Worker, deadline: float, memory_cap: int | None = None) -> bytes:
        """One frame from the worker, watching the clock and the worker's memory while waiting."""
        fd = worker.process.stdout.fileno()
        buffer = worker.buffer
        size = None
        while True:
            if size is None and len(buffer) >= _FRAME.size:
                (size,) = _FRAME.unpack_from(buffer)
            if size is not None and len(buffer) >= _FRAME.size + size:
                frame = bytes(buffer[_FRAME.size:_FRAME.size + size])
                del buffer[:_FRAME.size + size]
                return frame
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Stopped("timeout")
            ready, _, _ = select.select([fd], [], [], min(left, 0.05))
            if not ready:
                if _resident_bytes(worker.process.pid) > (memory_cap or self.memory_bytes):
                    raise _Stopped("memory")
                continue
            want = (_FRAME.size + size - len(buffer)) if size is not None else _FRAME.size
            piece = os.read(fd, max(1 << 16, min(want, 1 << 24)))
            if not piece:
                raise _Stopped("crashed")
            buffer += piece

    def read(self, kind: str, data: bytes | None, source_name: str, *, path: str | None = None, **options) -> Any:
        """Parse ``data`` (or the file at ``path``) as ``kind`` (one of ``_KINDS``) in a worker.

        ``options`` are the reader's keyword arguments (format, limits, name, duplicates,
        system, failure_stages). Returns what the in-process reader returns; raises what it
        raises, or :class:`ReaderStopped` when the worker crashed, timed out or passed its cap.
        """
        if kind not in _KINDS:
            raise EvalSuiteError(f"unknown kind of file; use one of {', '.join(_KINDS)}", field="kind", value=kind)
        limits = check_limits(options.pop("limits", None))
        # The read's own bounds (ReadLimits.timeout_s, memory_bytes) where it has them, else the pool's.
        timeout_s = float(limits.timeout_s) if limits.timeout_s is not None else self.timeout_s
        memory_cap = limits.memory_bytes if limits.memory_bytes is not None else self.memory_bytes
        deadline = time.monotonic() + timeout_s
        # Bytes go to the worker as a file in a private folder (on tmpfs where there is one), which
        # it memory-maps as it does any file given by path; results come back the same way.
        prefix = os.path.join(self._folder(), secrets.token_hex(12))
        if path is None:
            path = prefix + ".in"
            try:
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
                    handle.write(data)
            except OSError as exc:  # a full tmpfs: no partial copy is left to hold memory
                with contextlib.suppress(OSError):
                    os.unlink(path)
                raise EvalSuiteError(f"could not hand the file to a reader process ({exc.strerror or exc}); "
                                     "the server's temporary space may be full", source=source_name,
                                     field="file", value=f"{len(data):,} bytes") from None
        request = {"kind": kind, "name": source_name, "path": path, "output": prefix,
                   "limits": asdict(limits.in_process()), "options": options}
        worker = None
        healthy = False
        try:
            worker = self._take(deadline)
            # Starting a worker (imports) does not count against the file's time.
            self._await_ready(worker, time.monotonic() + _STARTUP_S)
            deadline = time.monotonic() + timeout_s
            try:
                write_frame(worker.process.stdin, json.dumps(request).encode("utf-8"))
                worker.process.stdin.flush()
            except (BrokenPipeError, OSError):
                raise _Stopped("crashed") from None
            reply = json.loads(self._receive(worker, deadline, memory_cap))
            if reply.get("ok"):
                healthy = True
                return deserialise(reply["result"], prefix, int(reply["parts"]))
            healthy = not reply.get("recycle")
            if reply.get("memory"):
                raise _Stopped("memory")
            raise rebuild_error(reply["error"])
        except _Stopped as stop:
            raise self._stopped(stop, worker, source_name, timeout_s, memory_cap) from None
        finally:
            if worker is not None:
                self._give_back(worker, healthy)
            for leftover in glob.glob(glob.escape(prefix) + ".*"):
                try:
                    os.unlink(leftover)  # a mapped file stays readable until its arrays are freed
                except OSError:
                    pass

    def _folder(self) -> str:
        """This pool's private folder for files in transit (made on first use, mode 0700)."""
        with self._lock:
            if self._dir is None or not os.path.isdir(self._dir):
                _remove_folders_of_ended_processes(private_folder_base())
                # tmpfs is memory: the folder goes when this process ends (or, after a crash, when
                # the next pool starts and finds its process gone).
                self._dir = make_private_folder()
            return self._dir

    def _stopped(self, stop: _Stopped, worker: _Worker | None, name: str, timeout_s: float | None = None,
                 memory_cap: int | None = None) -> EvalSuiteError:
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        limit = size_text(self.memory_bytes if memory_cap is None else memory_cap)
        if stop.how == "timeout":
            return ReaderStopped(f"reading took longer than {timeout_s:g} s and was stopped; the file is too large "
                                 "or too complex for this server (try a smaller file, or raise the time limit)",
                                 how="timeout", source=name)
        if stop.how == "memory":
            return ReaderStopped(f"reading needed more than {limit} of memory and was stopped; the file is too large "
                                 "for this server (try a smaller file, or raise the memory cap)", how="memory",
                                 source=name)
        if stop.how == "busy":
            return ReaderStopped(f"all {self.size} readers were busy with other files for {timeout_s:g} s; "
                                 "try again in a moment", how="timeout", source=name)
        detail = ""
        if worker is not None:
            try:
                code = worker.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None and code < 0:
                try:
                    detail = f" (signal {signal.Signals(-code).name})"
                except ValueError:
                    detail = f" (signal {-code})"
            elif code is not None:
                detail = f" (exit code {code})"
        return ReaderStopped(f"the reader process crashed on this file{detail}; nothing else was affected. The file "
                             "is damaged or in a shape the parser cannot take: check its format", how="crashed",
                             source=name)

    def close(self) -> None:
        """Stop every idle worker; busy ones stop when given back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._lock.notify_all()
        for worker in idle:
            worker.kill()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


_DEFAULT_POOL: ReaderPool | None = None
_DEFAULT_LOCK = threading.Lock()


def _env_number(name: str, default, cast):
    text = os.environ.get(name)
    if not text:
        return default
    try:
        return cast(text)
    except ValueError:
        raise EvalSuiteError("not a number", source="environment", field=name, value=text) from None


def default_pool() -> ReaderPool:
    """The process-wide pool, made on first use from ``EVALSUITE_READER_WORKERS``,
    ``EVALSUITE_READER_TIMEOUT_S`` and ``EVALSUITE_READER_MEMORY_MB`` (else the defaults)."""
    global _DEFAULT_POOL
    with _DEFAULT_LOCK:
        if _DEFAULT_POOL is None or _DEFAULT_POOL._closed:
            _DEFAULT_POOL = ReaderPool(
                workers=_env_number("EVALSUITE_READER_WORKERS", DEFAULT_WORKERS, int),
                timeout_s=_env_number("EVALSUITE_READER_TIMEOUT_S", DEFAULT_TIMEOUT_S, float),
                memory_bytes=_env_number("EVALSUITE_READER_MEMORY_MB", DEFAULT_MEMORY_BYTES // MIB, int) * MIB,
            )
        return _DEFAULT_POOL


def set_default_pool(pool: ReaderPool) -> None:
    """Make ``pool`` the one :func:`default_pool` returns (a server configures its own); the
    previous default pool is closed."""
    global _DEFAULT_POOL
    if not isinstance(pool, ReaderPool):
        raise EvalSuiteError("expected a ReaderPool", field="pool", value=type(pool).__name__)
    with _DEFAULT_LOCK:
        previous, _DEFAULT_POOL = _DEFAULT_POOL, pool
    if previous is not None and previous is not pool:
        previous.close()


def read_isolated(kind: str, path_or_buffer, source_name: str | None = None, *, pool: ReaderPool | None = None,
                  **options):
    """Read a run, qrels or records file in a worker process (see the module's description).

    Parameters
    ----------
    kind : {"run", "qrels", "records", "judgements", "traces", "latency_table"}
        Which reader: :func:`evalsuite.read_run`, :func:`evalsuite.read_qrels`,
        :func:`evalsuite.read_records`,
        :func:`evalsuite.io.judgement_files.read_judgement_table` (judgement tables and human
        labels), :func:`evalsuite.read_traces` or
        :func:`evalsuite.io.latency_tables.read_latency_table`. A new reader joins with its kind
        here, a branch of the worker's ``_answer`` and of :func:`serialise` / :func:`deserialise`.
    path_or_buffer : path, bytes or binary file object
        The file. A path is opened by the worker; bytes are sent to it, except
        :class:`HeldBytes`, whose file the worker maps.
    source_name : str, optional
        Name to show in messages.
    pool : ReaderPool, optional
        Default: :func:`default_pool`.
    **options
        The reader's other keyword arguments (``format``, ``limits``, ``name``, ``duplicates``,
        ``system``, ``failure_stages``).

    Returns
    -------
    Run, Qrels or Records
        Equal to what the in-process reader returns for the same file.

    Raises
    ------
    EvalSuiteError
        What the reader raises for bad input; :class:`ReaderStopped` (a subclass) when the
        worker crashed, ran past the time limit or the memory cap, and the file is not read.

    Examples
    --------
    >>> read_isolated("run", b"q1 Q0 d1 1 2.5 bm25\\n", "run.trec").name
    'bm25'
    """
    pool = pool or default_pool()
    limits = check_limits(options.get("limits"))
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(path_or_buffer))
        return pool.read(kind, None, source_name or os.path.basename(path), path=path, **options)
    from ._reading import _shown_name, buffer_bytes

    name = source_name or _shown_name(path_or_buffer)
    if isinstance(path_or_buffer, HeldBytes) and os.path.exists(path_or_buffer.path):
        # The worker maps the very file that holds the bytes: no second copy in transit.
        return pool.read(kind, None, name, path=path_or_buffer.path, **options)
    return pool.read(kind, buffer_bytes(path_or_buffer, limits, name), name, **options)

