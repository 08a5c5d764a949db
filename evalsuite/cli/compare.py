"""``evalsuite compare``: the comparison report on the command line, and a gate for CI.

::

    evalsuite compare QRELS BASELINE RUN [RUN ...] [-m METRIC ...] [--fail-on significant-regression]
    evalsuite compare --records RECORDS BASELINE SYSTEM [SYSTEM ...] [-m faithfulness ...]

prints :func:`evalsuite.compare`'s report (each run against the baseline) with a one-line verdict,
and exits 1 when a system is worse than the baseline on a named metric (significantly, by
default: ``--fail-on significant-regression``; ``any-regression`` fails on any mean that moved the
wrong way; ``never`` only reports). "Worse" follows the metric's direction (lower nDCG, higher
latency). Exit codes: 0 passed, 1 the gate failed, 2 bad input (the message names file, line,
field and value).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import EvalSuiteError
from ..io.output_files import check_output_path, write_bytes
from ._options import add_output, add_read_bounds, read_limits

FAIL_ON = ("significant-regression", "any-regression", "never")
EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    from ..stats.paired import CORRECTIONS, DEFAULT_COMPARE_METRICS, TESTS

    parser = argparse.ArgumentParser(
        prog="evalsuite compare",
        description="Compare runs with a baseline query by query (paired tests, bootstrap intervals, a correction "
                    "over the whole report) and fail when a system is worse than the baseline: a gate for CI. "
                    "Exit codes: 0 passed, 1 regression, 2 bad input.")
    parser.add_argument("qrels", metavar="QRELS", help="qrels file; with --records, the records file")
    parser.add_argument("baseline", metavar="BASELINE", help="the baseline run (with --records: the baseline system)")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="runs to compare with the baseline (with --records: "
                        "system names); a run is named by its file name without extension")
    parser.add_argument("-m", "--measure", action="append", default=None, metavar="METRIC",
                        help="metric (repeatable; trec_eval families such as P.5,10 expand). Default: "
                        f"{', '.join(DEFAULT_COMPARE_METRICS)}; with --records: every quality metric and success")
    parser.add_argument("--fail-on", choices=FAIL_ON, default="significant-regression",
                        help="significant-regression (default): exit 1 when a system is significantly worse than "
                        "the baseline on a named metric after correction; any-regression: when any mean is worse; "
                        "never: only report")
    parser.add_argument("--records", action="store_true",
                        help="QRELS is a per-request records file and BASELINE, RUN are system names in it")
    parser.add_argument("--test", choices=tuple(TESTS), default="permutation", help="paired test (default permutation)")
    parser.add_argument("--correction", choices=tuple(CORRECTIONS), default="holm",
                        help="multiple-comparison correction over the whole report (default holm)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every resample (default 0)")
    parser.add_argument("--n-resamples", type=int, default=10_000, help="resamples (default 10000)")
    parser.add_argument("-l", "--rel-level", type=float, default=1, help="minimum grade that counts as relevant")
    parser.add_argument("--format", choices=("table", "csv", "json", "latex"), default="table",
                        help="report format on stdout (default table); the verdict and the gate go to stderr "
                        "for csv, json and latex")
    add_output(parser, required=False, what="write the report to FILE instead of stdout (the verdict and the gate "
               "then go to stderr; never onto an input; an existing file only with --force)")
    add_read_bounds(parser)
    return parser


def _names(paths: list[str]) -> list[str]:
    """A system name per run: the file name without its extensions, or the path when two clash."""
    stems = []
    for p in paths:
        name = Path(p).name
        for suffix in (".gz", ".trec", ".txt", ".tsv", ".csv", ".json", ".jsonl", ".parquet", ".run"):
            name = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
        stems.append(name)
    return stems if len(set(stems)) == len(stems) else list(paths)


def _report(args):
    from ..stats.comparison import compare, compare_records
    from .evaluate import expand_measures

    rel_level = int(args.rel_level) if float(args.rel_level).is_integer() else args.rel_level
    options = dict(baseline=None, test=args.test, correction=args.correction, alpha=args.alpha, seed=args.seed,
                   n_resamples=args.n_resamples)
    measures = expand_measures(args.measure) if args.measure else None
    limits = read_limits(args)
    if args.records:
        from ..records.evaluation import evaluate_records
        from ..io.record_files import read_records

        records = evaluate_records(read_records(args.qrels, limits=limits))
        systems = [args.baseline, *args.runs]
        return compare_records(records, measures, systems, **options)
    names = _names([args.baseline, *args.runs])
    runs = dict(zip(names, [args.baseline, *args.runs]))
    if len(runs) < len(names):
        raise EvalSuiteError("the same run is given twice", field="RUN", value=args.baseline)
    kwargs = {} if measures is None else {"metrics": measures}
    qrels = args.qrels
    if limits is not None:  # read here, within the bounds asked for
        from ..io.run_files import read_qrels, read_run

        qrels = read_qrels(args.qrels, limits=limits)
        runs = {name: read_run(path, limits=limits) for name, path in runs.items()}
    return compare(qrels, runs, rel_level=rel_level, **kwargs, **options)


def main(argv: list[str]) -> int:
    """``evalsuite compare ...``; returns the exit code (0 passed, 1 regression, 2 bad input)."""
    args = build_parser().parse_args(argv)
    inputs = [args.qrels, args.baseline, *args.runs]
    try:
        if args.output is not None:  # refused before any work, not after it
            check_output_path(args.output, inputs=inputs, force=args.force, what="the report")
        report = _report(args)
        failing = (report.regressions(significant_only=args.fail_on == "significant-regression")
                   if args.fail_on != "never" else report.table.iloc[0:0])
    except EvalSuiteError as exc:
        print(f"evalsuite compare: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    verdict = report.verdict()
    if args.format == "table" and args.output is None:
        sys.stdout.write(report.to_text() + "\n\n" + verdict + "\n")
        gate_stream = sys.stdout
    else:
        if args.format == "table":
            text = report.to_text() + "\n\n" + verdict + "\n"
        elif args.format == "csv":
            text = report.to_csv()
        elif args.format == "latex":
            text = report.to_latex()
        else:
            text = json.dumps({"params": report.params, "verdict": verdict,
                               "rows": json.loads(report.table.to_json(orient="records"))}, indent=2, default=str) + "\n"
        if args.output is None:
            sys.stdout.write(text)
        else:
            try:
                write_bytes(text, args.output, inputs=inputs, force=args.force, what="the report")
            except EvalSuiteError as exc:
                print(f"evalsuite compare: error: {exc}", file=sys.stderr)
                return EXIT_BAD_INPUT
        print(verdict, file=sys.stderr)
        gate_stream = sys.stderr
    if args.fail_on == "never":
        return EXIT_OK
    what = "significantly worse than" if args.fail_on == "significant-regression" else "worse than"
    if len(failing):
        lines = [f"  {r.system} on {r.metric}: {r.mean_system:.4f} vs {r.mean_baseline:.4f} (diff {r.diff:+.4f}, "
                 f"p adj {r.p_adjusted:.4g})" for r in failing.itertuples(index=False)]
        print(f"gate: FAILED ({args.fail_on}): {what} the baseline {report.params['baseline']}:", *lines, sep="\n",
              file=gate_stream)
        return EXIT_REGRESSION
    print(f"gate: passed ({args.fail_on}): no system is {what} the baseline {report.params['baseline']} on "
          f"{', '.join(report.metrics)}", file=gate_stream)
    return EXIT_OK
