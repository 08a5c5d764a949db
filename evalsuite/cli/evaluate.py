"""``evalsuite QRELS RUN [-m METRIC ...] [-q] [--format table|csv|json]`` (also ``python -m evalsuite``):
evaluate a run against qrels; the other subcommands are listed by ``evalsuite --help``.

The table format is trec_eval's (``measure<TAB>query|all<TAB>value``, 4 decimals), so its
output can be diffed against trec_eval's for the same measures. The CSV format is written by
:func:`evalsuite.display.safe_csv`, as every other CSV export of EvalSuite: a query id starting with
``= + - @``, a tab or a carriage return gets a leading single quote so that no spreadsheet runs it
as a formula; scores stay numbers.
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np

from ..metrics.registry import METRICS, TREC_FAMILY_CUTOFFS, TREC_OFFICIAL, TREC_PRINT_ORDER
from ..errors import EvalSuiteError
from ..evaluation.engines import evaluate
from ..io.output_files import check_output_path, write_bytes
from ..io.run_files import read_qrels, read_run
from ..utils.checks import safe_csv
from ._options import add_output, add_read_bounds, read_limits
from ._subcommands import subcommands_help

_FAMILY_CUTOFFS = TREC_FAMILY_CUTOFFS
# Families whose parameter is a real number, printed with 2 decimals (iprec_at_recall_0.10).
_REAL_FAMILIES = {m.trec_param for m in METRICS.values() if m.trec_param}


def _family_parameter(family: str, text: str) -> str:
    if family in _REAL_FAMILIES:
        try:
            return f"{float(text):.2f}"
        except ValueError:
            return text  # left for the metric parser to reject with its message
    whole = re.fullmatch(r"([0-9]+)\.[0-9]*", text)
    return whole.group(1) if whole else text  # trec_eval reads a cutoff with atol: ndcg_cut.23.4 is ndcg_cut_23


def expand_measures(names: list[str]) -> list[str]:
    """Expand trec_eval measure families: ``P`` -> P_5 ... P_1000, ``P.5,10`` -> P_5, P_10,
    ``iprec_at_recall..10,.5`` -> iprec_at_recall_0.10, iprec_at_recall_0.50; ``official`` is
    trec_eval's default set."""
    out: list[str] = []
    for name in names:
        if name == "official":
            out.extend(DEFAULT_MEASURES)
            continue
        if name == "all_trec":  # every trec_eval measure EvalSuite computes, with trec_eval's parameters
            out.extend(m for family in TREC_PRINT_ORDER for m in expand_measures([family]))
            out.append(RELSTRING)
            continue
        if name.startswith(f"{RELSTRING}."):  # relstring.20 -> relstring_20
            out.append(f"{RELSTRING}_{_family_parameter('', name.partition('.')[2])}")
            continue
        family, dot, cutoffs = name.partition(".")
        if family in _FAMILY_CUTOFFS and (not dot or cutoffs):
            ks = cutoffs.split(",") if dot else [str(k) for k in _FAMILY_CUTOFFS[family]]
            out.extend(f"{family}_{_family_parameter(family, k)}" for k in ks)
        else:
            out.append(name)
    return list(dict.fromkeys(out))


_TREC_ORDER = TREC_PRINT_ORDER

# trec_eval's relstring: per query, one character per top doc (its grade 0-9, '>' above 9, '-' not
# judged, '.' a negative grade: pooled but unjudged); printed after the P lines, only per query.
RELSTRING = "relstring"
RELSTRING_DEFAULT = 10
# What trec_eval prints without -m (its "official" set, the registry's TREC_OFFICIAL), in its order.
DEFAULT_MEASURES = tuple(expand_measures(list(TREC_OFFICIAL)))


def _relstring_length(name: str) -> int | None:
    """The length asked by ``relstring`` / ``relstring_20``, or None for another measure."""
    if name == RELSTRING:
        return RELSTRING_DEFAULT
    match = re.fullmatch(r"relstring_([0-9]{1,9})", name)
    return int(match.group(1)) if match else None


def relstrings(qrels, run, query_ids, length: int, max_docs: int | None = None) -> dict[str, str]:
    """trec_eval's relstring of each query: the grades of its top ``length`` docs as characters.

    Parameters
    ----------
    qrels : Qrels
    run : Run
    query_ids : sequence of str
        The evaluated queries (a query missing from the run gets ``''``).
    length : int
        Number of top docs (trec_eval's parameter, default 10).
    max_docs : int or None
        trec_eval -M: the ranking is cut there first.

    Returns
    -------
    dict of str -> str

    Examples
    --------
    >>> from evalsuite import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": -1, "d": 12}})
    >>> run = Run.from_dict({"q1": {"a": 5.0, "x": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}})
    >>> relstrings(qrels, run, ["q1", "q2"], 10)
    {'q1': '2-0.>', 'q2': ''}
    """
    in_run = set(run.query_ids.tolist())
    in_qrels = set(qrels.query_ids.tolist())
    out = {}
    for qid in query_ids:
        if qid not in in_run:
            out[qid] = ""
            continue
        grades = qrels.query(qid) if qid in in_qrels else {}
        docs = run.query(qid)["doc_id"].tolist()[: min(length, max_docs or length)]
        chars = []
        for doc in docs:
            grade = grades.get(doc)
            chars.append("-" if grade is None else "." if grade < 0 else ">" if grade > 9 else str(int(grade)))
        out[qid] = "".join(chars)
    return out


def _with_relstrings(text: str, name: str | None, strings: dict[str, str], drop: str | None = None) -> str:
    """trec_eval's table with a ``name`` line in each query's block, after its P lines (none when
    ``name`` is None), and without the ``drop`` lines (a measure computed only to list the queries)."""
    after = _TREC_ORDER.index("P")

    def late(measure: str) -> bool:
        family = measure if measure in _TREC_ORDER else measure.rpartition("_")[0]
        return family not in _TREC_ORDER or _TREC_ORDER.index(family) > after

    out: list[str] = []
    block: list[tuple[str, str]] = []  # (measure, line) of the current query

    def flush() -> None:
        if block:
            qid = block[0][1].split("\t")[1]
            at = next((i for i, (m, _) in enumerate(block) if late(m)), len(block))
            lines = [line for _, line in block]
            if name is not None:
                lines.insert(at, f"{name:<22}\t{qid}\t'{strings.get(qid, '')}'")
            out.extend(line for line in lines if line.split("\t")[0].strip() != drop)
            block.clear()

    current = None
    for line in text.splitlines():
        measure, qid = (part.strip() for part in line.split("\t")[:2])
        if qid == "all":
            flush()
            current = None
            if measure != drop:
                out.append(line)
            continue
        if qid != current:
            flush()
            current = qid
        block.append((measure, line))
    flush()
    return "\n".join(out) + "\n"


def trec_order(names: list[str]) -> list[str]:
    """trec_eval's measures in trec_eval's printing order (cutoffs ascending), then the others as given.

    trec_eval prints measures in the order of its own table, whatever the order of ``-m``;
    following it makes the two outputs diffable line by line.
    """
    def rank(name: str):
        family, _, cutoff = name.rpartition("_") if name not in _TREC_ORDER else (name, "", "")
        if family in _TREC_ORDER and (not cutoff or cutoff.isdigit()):
            return (0, _TREC_ORDER.index(family), int(cutoff or 0))
        if family in _TREC_ORDER and family in _REAL_FAMILIES:
            try:
                return (0, _TREC_ORDER.index(family), float(cutoff))
            except ValueError:
                pass
        return (1, 0, 0)

    trec = sorted((n for n in names if rank(n)[0] == 0), key=rank)
    return trec + [n for n in names if rank(n)[0] == 1]


def _format_csv(report, per_query: bool) -> bytes:
    """``query_id`` and one float column per metric: a row per query with ``per_query``, then
    ``all`` with the means; as :func:`evalsuite.display.safe_csv` writes it (UTF-8, CRLF)."""
    metrics = list(report.scores)
    import pandas as pd  # here, not at the top: the trec_eval table (the default) needs no pandas

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
        prog="evalsuite",
        description="Evaluate a run against qrels and print what trec_eval prints for those measures.",
        epilog=subcommands_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("qrels", help="qrels file (TREC, CSV/TSV with header, JSON, JSONL, Parquet; .gz too)")
    parser.add_argument("run", help="run file (same formats)")
    parser.add_argument("-m", "--measure", action="append", default=None, metavar="METRIC",
                        help="metric: ranx style (ndcg@10, map@100, mrr@10, precision@10, recall@100, hit_rate@10) "
                        "or trec_eval (P_10, P.5,10, P, ndcg_cut.10, map, recip_rank, bpref, official); repeatable. "
                        "Default: trec_eval's (num_ret ... map, gm_map, Rprec, bpref, recip_rank, "
                        "iprec_at_recall_0.00 ... 1.00, P_5 ... P_1000)")
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
    parser.add_argument("-M", dest="max_docs", type=int, default=None, metavar="N",
                        help="evaluate only the top N docs of each query (trec_eval -M)")
    parser.add_argument("--duplicates", choices=("error", "max"), default="error",
                        help="a doc listed twice for one query: error (default, like trec_eval) or keep the max")
    parser.add_argument("--format-run", dest="run_format", default=None, help="run file format if not detected")
    parser.add_argument("--format-qrels", dest="qrels_format", default=None, help="qrels file format if not detected")
    add_output(parser, required=False, what="write the report to FILE instead of stdout (never onto an input; an "
               "existing file only with --force)")
    add_read_bounds(parser)
    dask = parser.add_argument_group("Dask (runs larger than memory; pip install 'evalsuite[dask]', docs/scale.md)")
    dask.add_argument("--engine", choices=("local", "dask"), default="local",
                      help="local: this process (default); dask: a Dask cluster, the run may be a glob of shards "
                      "('run.*.trec.gz') or a Parquet folder; same numbers")
    dask.add_argument("--scheduler", default=None, metavar="ADDRESS",
                      help="Dask scheduler address (tcp://host:8786); implies --engine dask. Default: a LocalCluster")
    dask.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: Dask's choice)")
    dask.add_argument("--memory-limit", default=None, help="LocalCluster memory limit per worker, e.g. 4GiB")
    dask.add_argument("--partitions", type=int, default=None,
                      help="partitions of the shuffle by query id (default: planned from the files' sizes and the "
                      "workers' memory, so that evaluating one holds at most 1/8 of a worker thread's memory; the "
                      "plan and its reason are printed on stderr)")
    return parser


def _main_dask(args, measures: list[str], rel_level) -> int:
    """``--engine dask``: evaluate on a Dask cluster (Dask's progress bar on stderr), print as main() does."""
    from ..evaluation.distributed import evaluate_dask

    options = {k: v for k, v in (("n_workers", args.workers), ("memory_limit", args.memory_limit)) if v is not None}
    if args.workers is not None:
        options["threads_per_worker"] = 1
    try:
        report = evaluate_dask(args.qrels, args.run, measures, queries="qrels" if args.complete else args.queries,
                               rel_level=rel_level, scheduler=args.scheduler, partitions=args.partitions,
                               duplicates=args.duplicates, progress=True, cluster_options=options,
                               max_docs=args.max_docs,
                               on_plan=lambda plan: print(f"evalsuite: dask: {plan.reason}", file=sys.stderr, flush=True))
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    return _write_report(report, args)


def _write_report(report, args, table: str | None = None) -> int:
    """Print the report's warnings on stderr and the report on stdout, or into ``--output``, in the
    chosen format (``table``: trec_eval's text, if the caller made it already); returns 0, or 2 when
    the output cannot be written."""
    for warning in report.warnings:
        print(f"evalsuite: note: {warning}", file=sys.stderr)
    if args.format == "table":
        data = report.to_trec_eval(per_query=args.per_query) if table is None else table
    elif args.format == "csv":
        data = _format_csv(report, args.per_query)
    else:
        data = report.to_json(indent=2) + "\n"
    if args.output is None:
        if isinstance(data, bytes):
            _write_bytes(data)
        else:
            sys.stdout.write(data)
        return 0
    try:
        write_bytes(data, args.output, inputs=[args.qrels, args.run], force=args.force, what="the report")
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str]) -> int:
    """``evalsuite QRELS RUN ...``: evaluate and print; returns the exit code (0 ok, 2 bad input)."""
    args = build_parser().parse_args(argv)
    rel_level = int(args.rel_level) if float(args.rel_level).is_integer() else args.rel_level
    try:
        measures = trec_order(expand_measures(args.measure) if args.measure else list(DEFAULT_MEASURES))
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.output is not None:  # refused before any work, not after it
            check_output_path(args.output, inputs=[args.qrels, args.run], force=args.force, what="the report")
        limits = read_limits(args)
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    if args.engine == "dask" or args.scheduler:
        return _main_dask(args, measures, rel_level)
    try:
        # relstring.20 replaces all_trec's relstring (trec_eval keeps one, with the parameter given)
        relstring = max((m for m in measures if _relstring_length(m) is not None), key=lambda m: m != RELSTRING,
                        default=None)
        measures = [m for m in measures if _relstring_length(m) is None]
        only_relstring = relstring is not None and not measures
        qrels = read_qrels(args.qrels, args.qrels_format, duplicates=args.duplicates, limits=limits)
        run = read_run(args.run, args.run_format, duplicates=args.duplicates, limits=limits)
        report = evaluate(qrels, run, measures or ["num_ret"], queries="qrels" if args.complete else args.queries,
                          rel_level=rel_level, max_docs=args.max_docs)
    except EvalSuiteError as exc:
        print(f"evalsuite: error: {exc}", file=sys.stderr)
        return 2
    table = None
    if args.format == "table" and relstring is not None:  # trec_eval prints relstring per query only
        strings = relstrings(qrels, run, report.query_ids, _relstring_length(relstring), args.max_docs) \
            if args.per_query else {}
        table = _with_relstrings(report.to_trec_eval(per_query=args.per_query), relstring if args.per_query else None,
                                 strings, drop="num_ret" if only_relstring else None)
    return _write_report(report, args, table)
