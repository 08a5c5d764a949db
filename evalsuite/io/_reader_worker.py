"""The worker process of :mod:`evalsuite.io.isolation`: read files sent on stdin, reply on stdout.

Run as ``python -m evalsuite.io._reader_worker ADDRESS_SPACE_BYTES``. It caps its own address space,
says it is ready, then answers requests one at a time until stdin closes. Each request is a
JSON frame (kind, name, the path of the file, limits, reader options, and where to write the
result); each reply is a JSON frame, with the result written as Arrow IPC files beside it. Only the caller ever writes to this process, but nothing it receives
is unpickled or evaluated: the header is JSON and the file is parsed by the readers.
"""

from __future__ import annotations

import json
import os
import resource
import sys


def _cap_memory(memory_bytes: int) -> None:
    """Limit this process's address space: a backstop; the caller watches resident memory."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):  # not allowed here: the caller still watches resident memory
        pass


def _answer(request: dict):
    from .run_files import read_qrels, read_run
    from .limits import ReadLimits
    from .record_files import read_records

    limits = ReadLimits(**request["limits"])
    source = request["path"]
    options = dict(request.get("options") or {})
    kind = request["kind"]
    if kind == "run":
        return read_run(source, source_name=request["name"], limits=limits, **options)
    if kind == "qrels":
        return read_qrels(source, source_name=request["name"], limits=limits, **options)
    if kind == "judgements":
        from .judgement_files import read_judgement_table

        return read_judgement_table(source, source_name=request["name"], limits=limits, **options)
    if kind == "latency_table":
        from .latency_tables import read_latency_table

        return read_latency_table(source, source_name=request["name"], limits=limits, **options)
    if kind == "traces":
        from .traces import read_traces

        return read_traces(source, source_name=request["name"], limits=limits, **options)
    return read_records(source, source_name=request["name"], limits=limits, **options)


def _give_memory_back() -> None:
    """Return the freed memory of a parse to the system (Arrow's pool and the C heap keep it for
    reuse otherwise): an idle worker kept about twice the file it had parsed, beside the caller
    holding the result, at the top of the dashboard's peak during an upload."""
    import gc

    import pyarrow as pa

    gc.collect()
    pa.default_memory_pool().release_unused()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def main() -> None:
    _cap_memory(int(sys.argv[1]))
    try:
        # Below the server: a large upload being parsed never slows the pages other users see.
        os.nice(5)
    except OSError:
        pass
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames on the real stdout
    import pyarrow as pa

    # The C heap, not Arrow's mimalloc: mimalloc kept about 100 MiB of a 7M-line run's parse after
    # release_unused (RssAnon 320 against 218 MiB once parsed, peak 373 against 321), memory the
    # server's host held while it mapped the result; malloc_trim gives the heap's back.
    pa.set_memory_pool(pa.system_memory_pool())
    from ..errors import EvalSuiteError
    from ._transit import serialise
    from .isolation import error_fields, read_frame, write_frame
    # The readers and what they load (pyarrow, pandas) are imported before saying ready: the
    # imports are paid once, outside the first file's time limit (`import evalsuite` is lazy).
    from . import judgement_files, record_files, run_files, traces  # noqa: F401

    def reply(header: dict) -> None:
        write_frame(stdout, json.dumps(header).encode("utf-8"))
        stdout.flush()

    reply({"ready": True})
    while True:
        frame = read_frame(stdin)
        if frame is None:
            return
        request = json.loads(frame)
        try:
            result = _answer(request)
            header, parts = serialise(result, request["output"], release=_give_memory_back)
            result = None
            _give_memory_back()  # before the reply: the caller maps the result while this one idles
            reply({"ok": True, "result": header, "parts": parts})
        except MemoryError:
            # Past the cap: this process may be in a poor state, so it is replaced.
            reply({"ok": False, "memory": True, "recycle": True})
            return
        except EvalSuiteError as exc:
            message = str(exc)
            memory = "not enough memory" in message
            reply({"ok": False, "error": error_fields(exc), "memory": memory, "recycle": memory})
            if memory:
                return
        except Exception as exc:  # a reader bug: say so, name the file, and start afresh
            reply({"ok": False, "recycle": True,
                   "error": {"message": f"{request.get('name')}: the reader failed on this file "
                                        f"({type(exc).__name__}: {str(exc)[:200]})",
                             "reason": "the reader failed", "source": request.get("name")}})
            return


if __name__ == "__main__":
    main()
