"""Command line: ``python -m evalsuite QRELS RUN [-m METRIC ...] [-q] [--format table|csv|json]``.

The table format is trec_eval's (``measure<TAB>query|all<TAB>value``, 4 decimals), so its
output can be diffed against trec_eval's for the same measures. The CSV format is written by
:func:`evalsuite.display.safe_csv`, as every other CSV export of EvalSuite: a query id starting with
``= + - @``, a tab or a carriage return gets a leading single quote so that no spreadsheet runs it
as a formula; scores stay numbers.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from ._registry import TREC_FAMILY_CUTOFFS, TREC_PRINT_ORDER
from .errors import EvalSuiteError
from ._evaluate import evaluate
from .io import read_qrels, read_run
from ._validate import safe_csv

_FAMILY_CUTOFFS = TREC_FAMILY_CUTOFFS
# What trec_eval prints without -m, restricted to the measures EvalSuite computes.
DEFAULT_MEASURES = ("map", "recip_rank", *(f"P_{k}" for k in _FAMILY_CUTOFFS["P"]))


def expand_measures(names: list[str]) -> list[str]:
    """Expand trec_eval measure families: ``P`` -> P_5 ... P_1000, ``P.5,10`` -> P_5, P_10."""
    out: list[str] = []
    for name in names:
        family, dot, cutoffs = name.partition(".")
        if family in _FAMILY_CUTOFFS and (not dot or cutoffs):
            ks = cutoffs.split(",") if dot else [str(k) for k in _FAMILY_CUTOFFS[family]]
            out.extend(f"{family}_{k}" for k in ks)
        else:
            out.append(name)
    return list(dict.fromkeys(out))


_TREC_ORDER = TREC_PRINT_ORDER


def trec_order(names: list[str]) -> list[str]:
    """trec_eval's measures in trec_eval's printing order (cutoffs ascending), then the others as given.

    trec_eval prints measures in the order of its own table, whatever the order of ``-m``;
    following it makes the two outputs diffable line by line.
    """
    def rank(name: str):
        family, _, cutoff = name.rpartition("_") if name not in _TREC_ORDER else (name, "", "")
        if family in _TREC_ORDER and (not cutoff or cutoff.isdigit()):
            return (0, _TREC_ORDER.index(family), int(cutoff or 0))
        return (1, 0, 0)

    trec = sorted((n for n in names if rank(n)[0] == 0), key=rank)
    return trec + [n for n in names if rank(n)[0] == 1]


def _format_csv(report, per_query: bool) -> bytes:
    """``query_id`` and one float column per metric: a row per query with ``per_query``, then
    ``all`` with the means; as :func:`evalsuite.display.safe_csv` writes it (UTF-8, CRLF)."""
    metrics = list(report.scores)
    ids = [str(q) for q in report.per_query.index] if per_query else []
    columns = {"query_id": pd.Series([*ids, "all"], dtype=object)}
    for m in metrics:
        values = report.per_query[m].to_numpy(dtype=np.float64) if per_query else np.empty(0)
        columns[m] = np.append(values, float(report.scores[m]))
    return safe_csv(pd.DataFrame(columns))


def _write_bytes(data: bytes) -> None:
    """Write ``data`` to stdout as it is (no newline translation, whatever the locale)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # stdout replaced by a text-only stream
        sys.stdout.write(data.decode("utf-8"))
    else:
        buffer.write(data)
        buffer.flush()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalsuite",
        description="Evaluate a run against qrels and print what trec_eval prints for those measures.",
    )
    parser.add_argument("qrels", help="qrels file (TREC, CSV/TSV with header, JSON, JSONL, Parquet; .gz too)")
    parser.add_argument("run", help="run file (same formats)")
    parser.add_argument("-m", "--measure", action="append", default=None, metavar="METRIC",
                        help="metric: ranx style (ndcg@10, map@100, mrr@10, precision@10, recall@100, hit_rate@10) "
                        "or trec_eval (P_10, P.5,10, P, ndcg_cut.10, map, recip_rank); repeatable. "
                        "Default: map, recip_rank, P_5 ... P_1000")
    parser.add_argument("-q", "--per-query", action="store_true", help="also print a row per query")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="table: trec_eval's layout (default); csv: one column per metric, safe to open in a "
                        "spreadsheet (ids starting with = + - @ get a leading '); json: the whole report")
    parser.add_argument("-l", "--rel-level", type=float, default=1, help="minimum grade that counts as relevant (default 1)")
    parser.add_argument("--queries", choices=("qrels", "intersection"), default="qrels",
                        help="average over qrels queries, missing ones scoring 0 (default; trec_eval -c), "
                        "or only queries in both files (trec_eval without -c)")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="accepted for trec_eval compatibility: same as --queries qrels")
    parser.add_argument("--duplicates", choices=("error", "max"), default="error",
                        help="a doc listed twice for one query: error (default, like trec_eval) or keep the max")
    parser.add_argument("--format-run", dest="run_format", default=None, help="run file format if not detected")
    parser.add_argument("--format-qrels", dest="qrels_format", default=None, help="qrels file format if not detected")
    dask = parser.add_argument_group("Dask (runs larger than memory; pip install 'evalsuite[dask]', docs/scale.md)")
    dask.add_argument("--engine", choices=("local", "dask"), default="local",
                      help="local: this process (default); dask: a Dask cluster, the run may be a glob of shards "
                      "('run.*.trec.gz') or a Parquet folder; same numbers")
    dask.add_argument("--scheduler", default=None, metavar="ADDRESS",
                      help="Dask scheduler address (tcp://host:8786); implies --engine dask. Default: a LocalCluster")
    dask.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: Dask's choice)")
    dask.add_argument("--memory-limit", default=None, help="LocalCluster memory limit per worker, e.g. 4GiB")
    dask.add_argument("--partitions", type=int, default=None,
                      help="partitions of the shuffle by query id (default: one per shard, at least one per worker)")
    return parser


def _main_dask(args, measures: list[str], rel_level) -> int:
    """``--engine dask``: evaluate on a Dask cluster (Dask's progress bar on stderr), print as main() does."""
    from .distributed import evaluate_dask

    options = {k: v for k, v in (("n_workers", args.workers), ("memory_limit", args.memory_limit)) if v is not None}
    if args.workers is not None:
        options["threads_per_worker"] = 1
    try:
        report = evaluate_dask(args.qrels, args.run, measures, queries="qrels" if args.complete else args.queries,
                               rel_level=rel_level, scheduler=args.scheduler, partitions=args.partitions,
                               duplicates=args.duplicates, progress=True, cluster_options=options)
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    for warning in report.warnings:
        print(f"evalsuite: note: {warning}", file=sys.stderr)
    if args.format == "table":
        sys.stdout.write(report.to_trec_eval(per_query=args.per_query))
    elif args.format == "csv":
        _write_bytes(_format_csv(report, args.per_query))
    else:
        sys.stdout.write(report.to_json(indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 bad input)."""
    args = build_parser().parse_args(argv)
    rel_level = int(args.rel_level) if float(args.rel_level).is_integer() else args.rel_level
    if args.engine == "dask" or args.scheduler:
        try:
            measures = trec_order(expand_measures(args.measure) if args.measure else list(DEFAULT_MEASURES))
        except EvalSuiteError as exc:
            print(f"evalsuite: error: {exc}", file=sys.stderr)
            return 2
        return _main_dask(args, measures, rel_level)
    try:
        measures = trec_order(expand_measures(args.measure) if args.measure else list(DEFAULT_MEASURES))
        qrels = read_qrels(args.qrels, args.qrels_format, duplicates=args.duplicates)
        run = read_run(args.run, args.run_format, duplicates=args.duplicates)
        report = evaluate(qrels, run, measures, queries="qrels" if args.complete else args.queries, rel_level=rel_level)
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    for warning in report.warnings:
        print(f"evalsuite: note: {warning}", file=sys.stderr)
    if args.format == "table":
        sys.stdout.write(report.to_trec_eval(per_query=args.per_query))
    elif args.format == "csv":
        _write_bytes(_format_csv(report, args.per_query))
    else:
        sys.stdout.write(report.to_json(indent=2) + "\n")
    return 0


def console() -> None:
    """The ``evalsuite`` command installed by ``pip install``: same as ``python -m evalsuite``."""
    sys.exit(main())
