"""The subcommands of ``evalsuite``, in one table: what :func:`evalsuite.cli.main` dispatches on and
what ``evalsuite --help`` lists."""

from __future__ import annotations

__all__ = ["SUBCOMMANDS", "subcommands_help"]

#: The first argument -> (module of this package whose ``main(argv)`` runs it, its arguments, what it does).
SUBCOMMANDS = {
    "compare": (".compare", "QRELS BASELINE RUN...", "runs against a baseline: paired tests, intervals; exit 1 on a regression"),
    "judge": (".judge", "RECORDS --judge llm|embedding|lexical -o OUT", "fill the judgement columns of per-request records"),
    "ragas": (".ragas", "RECORDS -o OUT", "every RAGAS metric from raw records: judge, write, summarise"),
    "admin": (".admin", "usage [--days N] [--user U] [--runs]", "a hosted dashboard's judge runs per user, from the store's audit log"),
}


def subcommands_help() -> str:
    """The subcommands as the end of ``evalsuite --help`` shows them.

    >>> print(subcommands_help().splitlines()[0])
    subcommands (evalsuite SUBCOMMAND --help for each one's options):
    """
    lines = ["subcommands (evalsuite SUBCOMMAND --help for each one's options):"]
    for name, (_, arguments, what) in SUBCOMMANDS.items():
        lines += [f"  evalsuite {name} {arguments}", f"      {what}"]
    lines.append("a qrels file named like a subcommand is given as ./NAME")
    return "\n".join(lines)
