"""A large upload's bytes held once, in memory that the reader workers can map.

A server that keeps an uploaded file as ``bytes`` and reads it in a worker process holds it twice
while it is parsed: its own copy, and the copy handed to the worker in the transit folder (tmpfs
where there is one, which is memory). :class:`HeldBytes` keeps the one copy in a file of this
process's private folder on tmpfs, mapped read-only: the server reads it as bytes (``len``,
slices, the buffer protocol for hashing and writing), and :func:`evalsuite.io.isolation.read_isolated`
gives the worker that file's path, so the worker maps the same pages. The file is removed when
the object is garbage collected (its mapping stays valid until then), and the folder when the
process ends.
"""

from __future__ import annotations

import atexit
import mmap
import os
import shutil
import tempfile
import threading
import weakref

__all__ = ["HeldBytes", "hold_bytes"]

# The reader pool's transit folders and the held uploads' folder share this prefix, so that a
# crashed server's folders are all removed when the next pool starts (isolation).
_FOLDER_PREFIX = "evalsuite-readers-"
_folder: str | None = None
_lock = threading.Lock()


def private_folder_base() -> str:
    """Where :func:`make_private_folder` makes its folders: /dev/shm (tmpfs, memory) where it is
    writable, else the temporary folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def make_private_folder(kind: str = "") -> str:
    """A new folder of this process (mode 0700) on tmpfs where there is one, removed at exit.
    Returns its path; ``kind`` is a part of the name after the process id."""
    folder = tempfile.mkdtemp(prefix=f"{_FOLDER_PREFIX}{os.getpid()}-{kind}", dir=private_folder_base())
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _own_folder() -> str:
    global _folder
    with _lock:
        if _folder is None or not os.path.isdir(_folder):
            _folder = make_private_folder("held-")
        return _folder


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class HeldBytes(mmap.mmap):
    """Read-only bytes backed by a file in this process's private folder (made by :func:`hold_bytes`).

    Behaves as read-only ``bytes`` where EvalSuite uses a file's bytes: ``len``, indexing and
    slicing (slices are ``bytes``), ``find``, and the buffer protocol (``hashlib``,
    ``memoryview``, writing to a file). ``path`` is the file a reader worker maps.
    """

    path: str

    def __eq__(self, other) -> bool:  # by content, as bytes compare (mmap compares by identity)
        try:
            return memoryview(self) == memoryview(other)
        except TypeError:
            return NotImplemented

    __hash__ = None  # mutable in principle, as bytearray: not a dictionary key

    def __repr__(self) -> str:
        return f"HeldBytes({len(self):,} bytes)"


def hold_bytes(data: bytes, min_bytes: int = 16 << 20) -> bytes | HeldBytes:
    """``data`` as :class:`HeldBytes` when it is at least ``min_bytes`` long, else unchanged.

    Parameters
    ----------
    data : bytes
        The file's bytes. The caller drops its own reference afterwards, so that only the held
        copy remains.
    min_bytes : int
        Smaller files stay ``bytes`` (a file and a mapping per small upload buy nothing).

    Returns
    -------
    bytes or HeldBytes
        Equal to ``data`` byte for byte. ``data`` itself when the folder cannot take the file
        (a full tmpfs): holding it twice is then the lesser harm.

    Examples
    --------
    >>> held = hold_bytes(b"q1 Q0 d1 1 2.5 bm25\\n", min_bytes=1)
    >>> held[:2], len(held), held == b"q1 Q0 d1 1 2.5 bm25\\n", os.path.exists(held.path)
    (b'q1', 20, True, True)
    >>> hold_bytes(b"small") == b"small"
    True
    """
    if len(data) < max(min_bytes, 1):
        return data
    path = None
    try:
        fd, path = tempfile.mkstemp(dir=_own_folder())
        try:
            with os.fdopen(os.dup(fd), "wb") as sink:
                sink.write(data)
            held = HeldBytes(fd, len(data), prot=mmap.PROT_READ)
        finally:
            os.close(fd)
    except OSError:
        if path is not None:
            _unlink(path)
        return data
    held.path = path
    weakref.finalize(held, _unlink, path)
    return held
