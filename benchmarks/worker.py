"""Benchmark worker: evaluate one tool on one qrels/run pair in this process.

Usage::

    python benchmarks/worker.py TOOL QRELS RUN

TOOL is one of ``evalsuite``, ``pytrec_eval``, ``ranx``, ``pyarrow_parse`` or
``polars_parse``.
The worker imports the tool, reads the qrels and the run from their files,
computes the benchmark metrics and prints one JSON line on stdout::

    {"tool": ..., "import_s": ..., "read_qrels_s": ..., "read_run_s": ...,
     "read_s": ..., "compute_s": ..., "wall_s": ..., "rss_import_mib": ...,
     "peak_rss_mib": ..., "means": {"ndcg@10": ..., ...}, ...}

``wall_s`` is end to end from the files: from the start of reading the
qrels to the metric means in hand (imports excluded; they are in
``import_s``).  ``peak_rss_mib`` is the peak resident memory of this process
(see ``peak_rss_mib()``), so it includes the interpreter and the tool's
imports (``rss_import_mib`` is the same figure just after the imports).

``pyarrow_parse`` and ``polars_parse`` are not evaluators: they only parse
the run file with ``pyarrow.csv.read_csv`` or ``polars.read_csv``, the floor
for reading a run from text.  They report no metrics.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

# Canonical metric names (ranx's spelling), reported by every tool.
METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100", "hit_rate@10"]

REPO_ROOT = Path(__file__).resolve().parent.parent


class Tool(NamedTuple):
    """How to read and evaluate with one tool.

    ``read_qrels(path)`` and ``read_run(path)`` return the tool's own
    objects; ``compute(qrels, run)`` returns ``{canonical metric: mean}``.
    """

    read_qrels: Callable[[str], Any]
    read_run: Callable[[str], Any]
    compute: Callable[[Any, Any], dict]


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB.

    On Linux this is ``VmHWM`` from /proc/self/status, the high-water mark of
    this process's own memory.  ``ru_maxrss`` is not used there: across
    fork + exec Linux carries the parent's peak into the child's
    ``ru_maxrss``, so a worker started by a runner that holds 400 MiB
    would report at least 400 MiB.  Elsewhere fall back to ``ru_maxrss``.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return ru_maxrss_mib()


def ru_maxrss_mib() -> float:
    """``getrusage(RUSAGE_SELF).ru_maxrss`` in MiB (KiB on Linux, bytes on macOS)."""
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale / 1024


# --------------------------------------------------------------------------
# Tools.  Each loader imports its library and returns a Tool.
# --------------------------------------------------------------------------


def load_evalsuite() -> Tool:
    """EvalSuite, the project under test (installed, or from the source tree; another checkout's
    tree when ``EVALSUITE_BENCH_ROOT`` names it: the runner's ``--against``).

    ``import evalsuite`` is lazy (PEP 562), so the modules ``read_run`` and ``evaluate`` need
    (numpy, pyarrow, pandas and EvalSuite's readers and engine) are imported here too: they
    count in ``import_s``, not in the first read's time."""
    sys.path.append(os.environ.get("EVALSUITE_BENCH_ROOT") or str(REPO_ROOT))  # an installed evalsuite takes precedence
    import evalsuite as es
    import evalsuite.evaluation.engines  # noqa: F401
    import evalsuite.evaluation.local  # noqa: F401
    import evalsuite.io.run_files  # noqa: F401

    def compute(qrels, run):
        report = es.evaluate(qrels, run, metrics=METRICS)
        return {m: report.means[m] for m in METRICS}

    return Tool(es.read_qrels, es.read_run, compute)


# pytrec_eval (trec_eval) measure for each canonical metric.  trec_eval's
# recip_rank has no cutoff (pytrec_eval accepts "recip_rank.10" but ignores
# the 10), so mrr@10 is derived per query from recip_rank: RR@10 = RR when
# the first relevant doc is within the top 10 (RR >= 1/10), else 0.  That is
# exact and costs nothing, unlike evaluating a second, truncated run.
PYTREC_MEASURES = {
    "ndcg@10": "ndcg_cut_10",
    "map@100": "map_cut_100",
    "mrr@10": "recip_rank",
    "precision@10": "P_10",
    "recall@100": "recall_100",
    "hit_rate@10": "success_10",
}


def rr_at_10(rr: float) -> float:
    """Reciprocal rank cut at 10 from the uncut reciprocal rank."""
    return rr if rr * 10 >= 1 - 1e-9 else 0.0


def load_pytrec_eval() -> Tool:
    """pytrec_eval: parse with its own parse_qrel/parse_run, as users do (through gzip.open
    for a ``.gz`` file)."""
    import pytrec_eval

    def read(parse):
        def reader(path):
            import gzip

            with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
                return parse(f)

        return reader

    def compute(qrels, run):
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES.values()))
        per_query = evaluator.evaluate(run)
        n = len(per_query)
        means = {}
        for metric, measure in PYTREC_MEASURES.items():
            post = rr_at_10 if metric == "mrr@10" else float
            means[metric] = sum(post(q[measure]) for q in per_query.values()) / n
        return means

    return Tool(read(pytrec_eval.parse_qrel), read(pytrec_eval.parse_run), compute)


def load_ranx() -> Tool:
    """ranx: Qrels/Run.from_file and evaluate(make_comparable=True)."""
    import ranx

    def compute(qrels, run):
        means = ranx.evaluate(qrels, run, METRICS, make_comparable=True)
        return {m: float(means[m]) for m in METRICS}

    return Tool(
        lambda path: ranx.Qrels.from_file(path, kind="trec"),
        lambda path: ranx.Run.from_file(path, kind="trec"),
        compute,
    )


FLOOR_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]


def run_delimiter(path: str) -> str:
    """Tab if the run's first line has a tab, else space (the floor tools need one delimiter;
    the benchmark's files use one or the other throughout).  Reads the first line only, through
    gzip for a ``.gz`` file."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return "\t" if b"\t" in f.readline() else " "


def load_pyarrow_parse() -> Tool:
    """The floor: pyarrow.csv.read_csv of the run file alone, no metrics.

    Ids as strings, score as float64, on the file's delimiter; a ``.gz`` file is
    decompressed by pyarrow (it picks the codec from the extension).
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    types = {"qid": pa.string(), "q0": pa.string(), "docid": pa.string(), "rank": pa.int64(),
             "score": pa.float64(), "tag": pa.string()}

    def read_run(path):
        return pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=FLOOR_COLUMNS),
            parse_options=pa_csv.ParseOptions(delimiter=run_delimiter(path)),
            convert_options=pa_csv.ConvertOptions(column_types=types),
        )

    return Tool(lambda path: None, read_run, lambda qrels, run: {})


def load_polars_parse() -> Tool:
    """The other floor: polars.read_csv of the run file alone, no metrics.

    Ids as strings, score as float64, on the file's delimiter, no quoting; polars
    decompresses gzip itself.
    """
    import polars as pl

    schema = {"qid": pl.String, "q0": pl.String, "docid": pl.String, "rank": pl.Int64,
              "score": pl.Float64, "tag": pl.String}

    def read_run(path):
        return pl.read_csv(path, has_header=False, separator=run_delimiter(path), schema=schema,
                           quote_char=None)

    return Tool(lambda path: None, read_run, lambda qrels, run: {})


TOOLS: dict[str, Callable[[], Tool]] = {
    "evalsuite": load_evalsuite,
    "pytrec_eval": load_pytrec_eval,
    "ranx": load_ranx,
    "pyarrow_parse": load_pyarrow_parse,
    "polars_parse": load_polars_parse,
}


DISTRIBUTIONS = {
    "evalsuite": "evalsuite",
    "pytrec_eval": "pytrec-eval-terrier",
    "ranx": "ranx",
    "pyarrow_parse": "pyarrow",
    "polars_parse": "polars",
}


def library_version(tool_name: str) -> str:
    """Installed version of the library behind a tool.

    For evalsuite, which may be imported from the source tree without being
    installed, fall back to ``__version__`` and add where it was imported from.
    """
    try:
        version = importlib.metadata.version(DISTRIBUTIONS[tool_name])
    except importlib.metadata.PackageNotFoundError:
        version = getattr(sys.modules.get(tool_name), "__version__", "unknown")
    if tool_name == "evalsuite" and "evalsuite" in sys.modules:
        version += f" ({Path(sys.modules['evalsuite'].__path__[0])})"
    return version


def measure(tool_name: str, qrels_path: str, run_path: str) -> dict:
    """Import, read and evaluate with one tool; return the timings and means."""
    t0 = time.perf_counter()
    tool = TOOLS[tool_name]()
    t1 = time.perf_counter()
    rss_import = peak_rss_mib()

    qrels = tool.read_qrels(qrels_path)
    t2 = time.perf_counter()
    run = tool.read_run(run_path)
    t3 = time.perf_counter()
    means = tool.compute(qrels, run)
    t4 = time.perf_counter()

    return {
        "tool": tool_name,
        "version": library_version(tool_name),
        "import_s": t1 - t0,
        "read_qrels_s": t2 - t1,
        "read_run_s": t3 - t2,
        "read_s": t3 - t1,
        "compute_s": t4 - t3,
        "wall_s": t4 - t1,
        "rss_import_mib": rss_import,
        "peak_rss_mib": peak_rss_mib(),
        "ru_maxrss_mib": ru_maxrss_mib(),
        "means": means,
    }


def main(argv: list[str]) -> int:
    """Command line entry point."""
    if len(argv) != 3 or argv[0] not in TOOLS:
        print(__doc__, file=sys.stderr)
        print(f"tools: {', '.join(TOOLS)}", file=sys.stderr)
        return 2
    print(json.dumps(measure(*argv)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
