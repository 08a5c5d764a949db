"""Options every subcommand that reads or writes files shares: the bounds of a read (the dashboard's,
when asked) and an output file that never replaces an input or, without ``--force``, anything."""

from __future__ import annotations

import argparse

from ..io.limits import BOUNDED, MIB, ReadLimits

__all__ = ["add_read_bounds", "read_limits", "add_output"]


def add_read_bounds(parser: argparse.ArgumentParser) -> None:
    """``--bounded``, ``--read-timeout S``, ``--read-memory-mb MB``: read every input in a worker
    process stopped past these bounds (``--bounded``: the dashboard's, 60 s and 6 GiB)."""
    group = parser.add_argument_group("bounds of a read (default: none, the files are read in this process)")
    group.add_argument("--bounded", action="store_true",
                       help=f"read each input in a worker process with the dashboard's bounds: {BOUNDED.timeout_s:g} s, "
                       f"{BOUNDED.memory_bytes // (1024 * MIB)} GiB resident")
    group.add_argument("--read-timeout", type=float, default=None, metavar="S",
                       help="seconds one input may take to read (implies a worker process)")
    group.add_argument("--read-memory-mb", type=int, default=None, metavar="MB",
                       help="resident memory a read may use, MiB, at least 256 (implies a worker process)")


def read_limits(args: argparse.Namespace) -> ReadLimits | None:
    """The ReadLimits the options ask for (None: the library's defaults, in-process).

    Raises EvalSuiteError for a bound out of range (a timeout <= 0, memory below 256 MiB)."""
    timeout = getattr(args, "read_timeout", None)
    memory = getattr(args, "read_memory_mb", None)
    if not getattr(args, "bounded", False) and timeout is None and memory is None:
        return None
    base = BOUNDED if getattr(args, "bounded", False) else ReadLimits()
    return ReadLimits(timeout_s=timeout if timeout is not None else base.timeout_s,
                      memory_bytes=memory * MIB if memory is not None else base.memory_bytes)


def add_output(parser: argparse.ArgumentParser, *, required: bool, what: str) -> None:
    """``-o/--output FILE`` (``what`` says what goes there) and ``--force``."""
    parser.add_argument("-o", "--output", required=required, default=None, metavar="FILE", help=what)
    parser.add_argument("--force", action="store_true",
                        help="replace the output file if it exists (never an input); without it an existing file "
                        "is refused before any work. The file is written beside it under a temporary name and "
                        "renamed into place")
