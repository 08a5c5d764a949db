"""The command line: ``evalsuite`` (the console script; also ``python -m evalsuite``) and its subcommands.

- ``evalsuite QRELS RUN [-m METRIC ...]``: :mod:`~evalsuite.cli.evaluate`, what trec_eval prints;
- ``evalsuite compare ...``: :mod:`~evalsuite.cli.compare`, the comparison report and a CI gate;
- ``evalsuite judge ...``: :mod:`~evalsuite.cli.judge`, fill the judgement columns of records;
- ``evalsuite ragas ...``: :mod:`~evalsuite.cli.ragas`, every RAGAS metric from raw records.

Each command's module has ``build_parser()`` (prog ``evalsuite <name>``) and ``main(argv)``, which
returns the exit code and writes ``evalsuite <name>: error: ...`` on stderr for bad input. The
subcommands are listed once, in ``_subcommands.py``.
"""

from __future__ import annotations

import importlib
import sys

from . import evaluate
from ._subcommands import SUBCOMMANDS

__all__ = ["main", "console"]


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 bad input; ``compare``: 1 a
    regression; ``judge``: 3 a budget stop, 130 interrupted).

    ``evalsuite compare QRELS BASELINE RUN...`` is the comparison gate (:mod:`evalsuite.cli.compare`),
    ``evalsuite judge RECORDS ...`` fills judgement columns (:mod:`evalsuite.cli.judge`),
    ``evalsuite ragas RECORDS ...`` judges and scores the RAGAS family (:mod:`evalsuite.cli.ragas`);
    anything else is ``evalsuite QRELS RUN ...`` (:mod:`evalsuite.cli.evaluate`). A qrels file
    literally named ``compare`` is given as ``./compare``.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in SUBCOMMANDS:
        return importlib.import_module(SUBCOMMANDS[argv[0]][0], __name__).main(argv[1:])
    return evaluate.main(argv)


def console() -> None:
    """The ``evalsuite`` command installed by ``pip install``: same as ``python -m evalsuite``."""
    sys.exit(main())
