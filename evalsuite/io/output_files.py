"""Every file EvalSuite writes for a user goes through here: it never lands on an input, never
replaces an existing file unless asked (``force``), and is written to a temporary file beside it
and renamed into place, so an interrupted write never leaves half a file (or half a replaced one).

- :func:`check_output_path`: the checks, before any work (a judge run can take an hour; its output
  path is refused in the first second);
- :func:`atomic_output`: a temporary path in the output's folder that becomes the output when the
  block ends without an error (with ``force``: ``os.replace``; without: a hard link, which fails
  when a file appeared meanwhile, so nothing is ever overwritten by a race either).

:func:`evalsuite.io.record_files.write_records` (``evalsuite judge -o``, ``evalsuite ragas -o``),
the reports of ``evalsuite evaluate -o`` and ``evalsuite compare -o`` and
:meth:`evalsuite.ComparisonReport.to_csv` with a path use them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..errors import EvalSuiteError

__all__ = ["check_output_path", "atomic_output", "write_bytes"]


def _paths(inputs: Iterable) -> list[str]:
    """The inputs given as paths (bytes and file objects are not files that could be overwritten)."""
    out = []
    for item in inputs or ():
        if isinstance(item, (str, os.PathLike)):
            out.append(os.fspath(item))
    return out


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same resolved path, or (both existing) the same inode
    (a hard link, a bind mount)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output_path(path: str | os.PathLike, *, inputs: Sequence = (), force: bool = False,
                      suffixes: Sequence[str] | None = None, what: str = "the output") -> Path:
    """Refuse, before any work, an output path that would overwrite an input or an existing file.

    Parameters
    ----------
    path : str or PathLike
        Where the output goes.
    inputs : sequence
        The files the command reads (paths; bytes and file objects are ignored): the output must
        be none of them, by path or by inode (a hard link too), ``force`` or not.
    force : bool
        Replace a file that exists (an input never).
    suffixes : sequence of str, optional
        The extensions the writer can write (lower case, with the dot).
    what : str
        How messages name the output.

    Returns
    -------
    Path
        ``path`` as a Path.

    Raises
    ------
    EvalSuiteError
        Naming the path and field ``output``: an input, an existing file without ``force``, a
        folder, a folder that does not exist, an extension not in ``suffixes``.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> run = os.path.join(folder, "run.trec")
    >>> _ = open(run, "w").write("q1 Q0 d1 1 1.0 r\\n")
    >>> check_output_path(run, inputs=[run], force=True)
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: ...run.trec, field 'output': the output is an input of this command; write it elsewhere
    """
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise EvalSuiteError(f"{what} must be a file path", field="output", value=path)
    target = Path(path)
    shown = str(target)
    if suffixes is not None and target.suffix.lower() not in suffixes:
        raise EvalSuiteError(f"{what} must end in {' or '.join(suffixes)}", source=shown, field="output")
    for item in _paths(inputs):
        if _same_file(shown, item):
            raise EvalSuiteError(f"{what} is an input of this command; write it elsewhere", source=shown,
                                 field="output")
    if target.is_dir():
        raise EvalSuiteError(f"{what} is a folder; give a file name", source=shown, field="output")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise EvalSuiteError(f"the folder of {what} does not exist", source=shown, field="output")
    if (target.exists() or target.is_symlink()) and not force:
        raise EvalSuiteError(f"{what} exists already; pass --force (force=True) to replace it, or choose "
                             "another name", source=shown, field="output")
    return target


def _umask() -> int:
    """This process's umask, read without changing it (os.umask sets it: a race with other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, *, inputs: Sequence = (), force: bool = False,
                  suffixes: Sequence[str] | None = None, what: str = "the output") -> Iterator[str]:
    """A temporary path beside ``path`` to write to; it becomes ``path`` when the block ends.

    The checks of :func:`check_output_path` run first (and the existence check again at the end).
    Without ``force`` the temporary file is hard-linked to ``path``, which fails if a file
    appeared there meanwhile; with ``force`` it replaces it (``os.replace``, atomic on one file
    system). On an error in the block, or a failed rename, the temporary file is removed and
    ``path`` is untouched. The output gets the permissions a new file gets (the umask), not the
    temporary file's 0600.

    Raises
    ------
    EvalSuiteError
        As :func:`check_output_path`; and a file that cannot be written or renamed (naming the
        path and the system's reason).
    """
    target = check_output_path(path, inputs=inputs, force=force, suffixes=suffixes, what=what)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(descriptor)
    except OSError as exc:
        raise EvalSuiteError(f"cannot write {what} ({exc.strerror or exc})", source=str(target), field="output") from None
    try:
        yield str(temporary)
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        if force:
            os.replace(temporary, target)
        else:
            try:
                os.link(temporary, target)
            except FileExistsError:
                raise EvalSuiteError(f"{what} appeared while it was being written; nothing was replaced (pass "
                                     "--force to replace it)", source=str(target), field="output") from None
            except OSError:  # a file system without hard links: check once more, then rename
                if target.exists():
                    raise EvalSuiteError(f"{what} appeared while it was being written; nothing was replaced (pass "
                                         "--force to replace it)", source=str(target), field="output") from None
                os.replace(temporary, target)
    except OSError as exc:
        raise EvalSuiteError(f"cannot write {what} ({exc.strerror or exc})", source=str(target), field="output") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def write_bytes(data: bytes | str, path: str | os.PathLike, *, inputs: Sequence = (), force: bool = False,
                what: str = "the output") -> None:
    """Write ``data`` (text is written as UTF-8) to ``path`` through :func:`atomic_output`.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "report.csv")
    >>> write_bytes("metric,value\\nmap,0.5\\n", path)
    >>> write_bytes("again", path)
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: ...report.csv, field 'output': the output exists already; pass --force (force=True) to replace it, or choose another name
    >>> write_bytes("again\\n", path, force=True); open(path).read()
    'again\\n'
    """
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with atomic_output(path, inputs=inputs, force=force, what=what) as temporary:
        with open(temporary, "wb") as handle:
            handle.write(payload)
