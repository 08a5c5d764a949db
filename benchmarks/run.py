"""Benchmark EvalSuite against pytrec_eval and ranx on generated TREC files.

One command::

    python benchmarks/run.py [--sizes 1kx100,10kx100,7kx1000,20kx1000] [--rounds 3]
                             [--shapes base,prefixed,...] [--ranx-shapes base]

For each size and each file shape (``shapes.py``: numeric ids, prefixed ids
with negative scores, MS MARCO v2 ids, scientific scores, tabs, ungrouped
lines, gzip) the runner generates (or reuses) a run and qrels file, then
runs every tool in its own fresh subprocess (``benchmarks/worker.py``):

* ranx first once as a throwaway warm-up with an empty numba cache, reported
  as "ranx (cold)": it includes numba's JIT compilation;
* then ``--rounds`` rounds, each running every tool once, in an order
  rotated by one tool each round, so no tool always runs first or last.
  ranx runs warm here: it loads its compiled code from the numba cache the
  warm-up filled.

It prints a plain-text table per size and writes ``results/latest.json``,
``results/latest.md`` and ``results/time_vs_lines.png``.  A tool whose
worker fails (e.g. evalsuite before it exists) is reported and skipped for
the rest of that size; the others go on.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from generate import DATA_DIR, Dataset, Size, count_lines, parse_size
from shapes import make_shape, parse_shapes
from worker import METRICS

BENCH_DIR = Path(__file__).resolve().parent
WORKER = BENCH_DIR / "worker.py"
RESULTS_DIR = BENCH_DIR / "results"
NUMBA_CACHE_DIR = DATA_DIR / "numba_cache"

DEFAULT_SIZES = "1kx100,10kx100,7kx1000,20kx1000"
TOOLS = ["evalsuite", "pytrec_eval", "ranx", "pyarrow_parse", "polars_parse"]
BEFORE = "evalsuite_before"  # EvalSuite from another checkout (--against), in the same rounds
PARSERS = ["pyarrow_parse", "polars_parse"]  # the parse floor: the fastest of these per file
EVALUATORS = ["evalsuite", "pytrec_eval", "ranx", BEFORE]  # tools that compute metrics
SUBJECT = "evalsuite"  # the tool the ratios are about
RANX_COLD = "ranx (cold)"
TOLERANCE = 1e-6
LIBRARIES = [
    "evalsuite", "numpy", "pyarrow", "polars", "ranx", "numba", "pytrec-eval-terrier", "matplotlib",
]
TIMED_FIELDS = [
    "wall_s",
    "read_s",
    "compute_s",
    "import_s",
    "proc_s",
    "peak_rss_mib",
    "rss_import_mib",
]


class WorkerError(RuntimeError):
    """A worker subprocess failed or printed no result."""


# --------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (or platform as a fallback)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def total_ram_gib() -> float | None:
    """Total memory in GiB from /proc/meminfo."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return None


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries involved (None if absent)."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """The repository's HEAD commit (read only), if available."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=BENCH_DIR, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def worker_baseline_rss_mib() -> float:
    """Peak RSS, in MiB, of a worker that imports no tool.

    A Python interpreter that imports worker.py and measures itself the way
    the workers do (``worker.peak_rss_mib``): the floor under every RSS figure.
    """
    code = (
        f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); "
        "import worker; print(worker.peak_rss_mib())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def machine_info() -> dict:
    """What the results were measured on."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": total_ram_gib(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "libraries": library_versions(),
        "worker_baseline_rss_mib": worker_baseline_rss_mib(),
        "git_commit": git_commit(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


# --------------------------------------------------------------------------
# Running workers
# --------------------------------------------------------------------------


AGAINST: Path | None = None  # the other checkout of --against


def worker_env(tool: str) -> dict[str, str]:
    """Environment of a worker; ranx gets the benchmark's own numba cache, the before tool the
    other checkout's tree."""
    env = dict(os.environ)
    if tool == "ranx":
        env["NUMBA_CACHE_DIR"] = str(NUMBA_CACHE_DIR)
    if tool == BEFORE:
        env["EVALSUITE_BENCH_ROOT"] = str(AGAINST)
    return env


def run_worker(tool: str, ds: Dataset, timeout: float) -> dict:
    """Run one worker subprocess; return its JSON result plus ``proc_s``."""
    cmd = [sys.executable, str(WORKER), "evalsuite" if tool == BEFORE else tool, str(ds.qrels), str(ds.run)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=worker_env(tool)
        )
    except subprocess.TimeoutExpired as exc:
        raise WorkerError(f"timed out after {timeout:.0f} s") from exc
    proc_s = time.perf_counter() - t0
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        stderr = proc.stderr.strip().splitlines()
        reason = stderr[-1] if stderr else f"no output (exit code {proc.returncode})"
        raise WorkerError(f"exit code {proc.returncode}: {reason}")
    result = json.loads(lines[-1])
    result["proc_s"] = proc_s
    return result


def text_bytes(path: Path) -> int:
    """Bytes of the file's text: its size, or for a ``.gz`` file its size uncompressed."""
    if path.suffix != ".gz":
        return path.stat().st_size
    import gzip

    total = 0
    with gzip.open(path, "rb") as f:
        while block := f.read(1 << 24):
            total += len(block)
    return total


def reset_numba_cache() -> None:
    """Empty the numba cache the ranx workers use, for a true cold start."""
    shutil.rmtree(NUMBA_CACHE_DIR, ignore_errors=True)
    NUMBA_CACHE_DIR.mkdir(parents=True, exist_ok=True)


def round_order(tools: list[str], round_index: int) -> list[str]:
    """The tools rotated left by ``round_index``."""
    shift = round_index % len(tools)
    return tools[shift:] + tools[:shift]


def benchmark_size(
    size: Size, tools: list[str], rounds: int, timeout: float, shape: str = "base",
    ranx_cold: bool = True,
) -> dict:
    """Generate the data of one size in one shape and run all its rounds (``ranx_cold``: empty
    the numba cache and time ranx's first, compiling run before the rounds)."""
    t0 = time.perf_counter()
    ds = make_shape(size, shape)
    count_lines(ds.run)  # read both files once so every tool finds them in the page cache
    count_lines(ds.qrels)
    print(
        f"\n== {size.label} {shape}: {size.lines:,} run lines, "
        f"{ds.run.stat().st_size / 2**20:.1f} MiB (data ready in {time.perf_counter() - t0:.1f} s)"
    )

    records, skipped = [], {}

    def attempt(tool: str, label: str, round_no: int | None) -> None:
        try:
            result = run_worker(tool, ds, timeout)
        except WorkerError as exc:
            skipped[label] = str(exc)
            print(f"  SKIP {label}: worker failed, {exc}")
            return
        result.update(tool=label, round=round_no)
        records.append(result)
        print(
            f"  {'cold' if round_no is None else f'round {round_no}':>8}  {label:<14}"
            f" wall {result['wall_s']:8.3f} s  process {result['proc_s']:8.3f} s"
            f"  peak RSS {result['peak_rss_mib']:7.0f} MiB"
        )

    if "ranx" in tools and ranx_cold:
        reset_numba_cache()
        attempt("ranx", RANX_COLD, None)
    for r in range(1, rounds + 1):
        for tool in round_order(tools, r - 1):
            if tool not in skipped and not (tool == "ranx" and RANX_COLD in skipped):
                attempt(tool, tool, r)

    return {
        "size": size.label,
        "shape": shape,
        "queries": size.queries,
        "docs_per_query": size.docs,
        "run_lines": size.lines,
        "qrels_lines": count_lines(ds.qrels),
        "run_file_mib": ds.run.stat().st_size / 2**20,
        "run_text_mib": text_bytes(ds.run) / 2**20,
        "records": records,
        "skipped": skipped,
    }


# --------------------------------------------------------------------------
# Summaries
# --------------------------------------------------------------------------


def tool_medians(records: list[dict]) -> dict[str, dict]:
    """Per tool, the median of each timed field over its runs."""
    by_tool: dict[str, list[dict]] = {}
    for rec in records:
        by_tool.setdefault(rec["tool"], []).append(rec)
    return {
        tool: {
            "runs": len(recs),
            **{f: statistics.median(r[f] for r in recs) for f in TIMED_FIELDS},
        }
        for tool, recs in by_tool.items()
    }


def wall_ratios(records: list[dict]) -> dict[str, float | None]:
    """Median over rounds of SUBJECT's wall time divided by each other tool's."""
    walls: dict[tuple, float] = {(r["tool"], r["round"]): r["wall_s"] for r in records}
    ratios = {}
    for other in [*TOOLS, BEFORE]:
        if other == SUBJECT:
            continue
        per_round = [
            walls[(SUBJECT, rnd)] / walls[(other, rnd)]
            for (tool, rnd) in walls
            if tool == other and rnd is not None and (SUBJECT, rnd) in walls
        ]
        ratios[other] = statistics.median(per_round) if per_round else None
    return ratios


def floor_eval_ratio(records: list[dict]) -> float | None:
    """Median over rounds of SUBJECT's wall time over the fastest parser's plus SUBJECT's own
    evaluation (its ``compute_s``) in that round: issue 31's "parse floor plus the evaluation"."""
    by_key: dict[tuple, dict] = {(r["tool"], r["round"]): r for r in records}
    per_round = []
    for rnd in sorted({r for (_, r) in by_key if r is not None}):
        floors = [by_key[(p, rnd)]["wall_s"] for p in PARSERS if (p, rnd) in by_key]
        if floors and (SUBJECT, rnd) in by_key:
            subject = by_key[(SUBJECT, rnd)]
            per_round.append(subject["wall_s"] / (min(floors) + subject["compute_s"]))
    return statistics.median(per_round) if per_round else None


def agreement(records: list[dict]) -> list[dict]:
    """Per metric, each evaluator's mean and whether they all agree.

    A tool whose means differ between its own runs gets the first run's means
    and the row notes it (the runs should be deterministic).
    """
    means: dict[str, dict] = {}
    unstable: set[str] = set()
    for rec in records:
        tool = "ranx" if rec["tool"] == RANX_COLD else rec["tool"]
        if tool not in EVALUATORS:
            continue
        if tool in means and any(
            abs(means[tool][m] - rec["means"][m]) > TOLERANCE for m in METRICS
        ):
            unstable.add(tool)
        means.setdefault(tool, rec["means"])
    rows = []
    for metric in METRICS:
        values = {tool: means[tool].get(metric) for tool in EVALUATORS if tool in means}
        present = [v for v in values.values() if v is not None]
        spread = max(present) - min(present) if len(present) >= 2 else None
        if spread is None:
            status = "n/a"
        elif spread <= TOLERANCE and None not in values.values() and not unstable:
            status = "OK"
        else:
            status = "FAIL"
        rows.append(
            {
                "metric": metric,
                "values": values,
                "max_diff": spread,
                "status": status,
                "unstable_tools": sorted(unstable),
            }
        )
    return rows


def floor_ratio(records: list[dict]) -> float | None:
    """Median over rounds of SUBJECT's wall time over the fastest parser's in that round."""
    walls: dict[tuple, float] = {(r["tool"], r["round"]): r["wall_s"] for r in records}
    per_round = []
    for rnd in sorted({r for (_, r) in walls if r is not None}):
        floors = [walls[(p, rnd)] for p in PARSERS if (p, rnd) in walls]
        if floors and (SUBJECT, rnd) in walls:
            per_round.append(walls[(SUBJECT, rnd)] / min(floors))
    return statistics.median(per_round) if per_round else None


def process_ratios(records: list[dict]) -> dict[str, float | None]:
    """Like ``wall_ratios`` but of whole processes (interpreter start and imports included)."""
    procs: dict[tuple, float] = {(r["tool"], r["round"]): r["proc_s"] for r in records}
    ratios = {}
    for other in EVALUATORS:
        per_round = [
            procs[(SUBJECT, rnd)] / procs[(other, rnd)]
            for (tool, rnd) in procs
            if other != SUBJECT and tool == other and rnd is not None and (SUBJECT, rnd) in procs
        ]
        ratios[other] = statistics.median(per_round) if per_round else None
    return ratios


def summarise(size_result: dict) -> dict:
    """Medians, ratios, memory per file size and agreement of one size."""
    records = size_result["records"]
    medians = tool_medians(records)
    subject = medians.get(SUBJECT)
    return {
        "medians": medians,
        "ratios": wall_ratios(records),
        "floor_ratio": floor_ratio(records),
        "floor_eval_ratio": floor_eval_ratio(records),
        "process_ratios": process_ratios(records),
        "subject_rss_per_file_mib": (
            subject["peak_rss_mib"] / size_result["run_text_mib"] if subject else None
        ),
        "agreement": agreement(records),
    }


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def fmt(value, digits: int = 3) -> str:
    """Format a number for a table; '-' for missing."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table with aligned columns."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def line(cells) -> str:
        return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths, strict=True))

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def markdown_table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(["---"] * len(headers)) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


TIME_HEADERS = [
    "size",
    "shape",
    "tool",
    "runs",
    "wall s",
    "read s",
    "compute s",
    "import s",
    "process s",
    "RSS after import MiB",
    "peak RSS MiB",
]
RATIO_HEADERS = [
    "size",
    "shape",
    "run lines",
    "run file MiB",
    f"{SUBJECT}/pytrec_eval",
    f"{SUBJECT}/ranx (warm)",
    f"{SUBJECT}/pyarrow_parse",
    f"{SUBJECT}/polars_parse",
    f"{SUBJECT}/fastest parse",
    f"{SUBJECT}/(fastest parse + its evaluate)",
    "process: /pytrec_eval",
    "process: /ranx (warm)",
    f"{SUBJECT}/before",
    "process: /before",
    f"{SUBJECT} peak RSS / file",
    "load (1 min)",
]
AGREE_HEADERS = ["size", "shape", "metric", *EVALUATORS, "max diff", "status"]


def time_rows(result: dict) -> list[list[str]]:
    """Rows of the timing table of one size."""
    medians = result["summary"]["medians"]
    order = [t for t in [*TOOLS, BEFORE, RANX_COLD] if t in medians]
    return [
        [
            result["size"],
            result.get("shape", "base"),
            tool,
            m["runs"],
            fmt(m["wall_s"]),
            fmt(m["read_s"]),
            fmt(m["compute_s"]),
            fmt(m["import_s"]),
            fmt(m["proc_s"]),
            fmt(m["rss_import_mib"], 0),
            fmt(m["peak_rss_mib"], 0),
        ]
        for tool, m in ((t, medians[t]) for t in order)
    ]


def ratio_row(result: dict) -> list[str]:
    """The ratio row of one size."""
    summary = result["summary"]
    ratios = summary["ratios"]
    return [
        result["size"],
        result.get("shape", "base"),
        f"{result['run_lines']:,}",
        fmt(result["run_file_mib"], 1),
        fmt(ratios.get("pytrec_eval")),
        fmt(ratios.get("ranx")),
        fmt(ratios.get("pyarrow_parse")),
        fmt(ratios.get("polars_parse")),
        fmt(summary.get("floor_ratio")),
        fmt(summary.get("floor_eval_ratio")),
        fmt(summary.get("process_ratios", {}).get("pytrec_eval")),
        fmt(summary.get("process_ratios", {}).get("ranx")),
        fmt(ratios.get(BEFORE)),
        fmt(summary.get("process_ratios", {}).get(BEFORE)),
        fmt(summary["subject_rss_per_file_mib"], 2),
        fmt((result.get("load_average") or [None])[0], 1),
    ]


def agreement_rows(result: dict) -> list[list[str]]:
    """Rows of the agreement table of one size."""
    rows = []
    for row in result["summary"]["agreement"]:
        values = [
            f"{v:.9f}" if v is not None else "-" for v in (row["values"].get(t) for t in EVALUATORS)
        ]
        spread = "-" if row["max_diff"] is None else f"{row['max_diff']:.1e}"
        status = row["status"]
        if row["unstable_tools"]:
            status += f" (unstable: {', '.join(row['unstable_tools'])})"
        rows.append([result["size"], result.get("shape", "base"), row["metric"], *values, spread, status])
    return rows


def print_size(result: dict) -> None:
    """Print the tables of one size."""
    print()
    print(text_table(TIME_HEADERS, time_rows(result)))
    print()
    print(text_table(RATIO_HEADERS, [ratio_row(result)]))
    print()
    print(text_table(AGREE_HEADERS, agreement_rows(result)))
    failed = [r["metric"] for r in result["summary"]["agreement"] if r["status"] == "FAIL"]
    if failed:
        where = f"{result['size']} {result.get('shape', 'base')}: {', '.join(failed)}"
        print(f"FAIL: metric means disagree beyond {TOLERANCE:g} on {where}")


def tool_versions(results: list[dict]) -> str:
    """Each tool's version as its workers reported it (evalsuite: with its path)."""
    versions: dict[str, set] = {}
    for result in results:
        for rec in result["records"]:
            versions.setdefault(rec["tool"], set()).add(rec.get("version"))
    return "; ".join(
        f"{tool} {', '.join(sorted(map(str, v)))}"
        for tool, v in versions.items()
        if tool != RANX_COLD
    )


def markdown_report(report: dict) -> str:
    """The markdown results page."""
    m = report["machine"]
    libs = ", ".join(f"{k} {v}" for k, v in m["libraries"].items() if v)
    results = report["sizes"]
    lines = [
        "# EvalSuite benchmark results",
        "",
        f"`{report['command']}` on {m['date']}"
        + (f", commit `{m['git_commit'][:10]}`" if m.get("git_commit") else "")
        + f"; {report['rounds']} timed round(s) per size.",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores",
        f"- RAM: {fmt(m['ram_gib'], 1)} GiB",
        f"- Python {m['python']} ({m['platform']})",
        f"- Libraries: {libs}",
        f"- Tools as the workers imported them: {tool_versions(results)}",
        f"- Worker baseline peak RSS: {m['worker_baseline_rss_mib']:.1f} MiB (Python "
        "interpreter + worker.py, no tool imported; included in every RSS figure below)",
        "",
        "## Times (median over rounds)",
        "",
        "wall = end to end from the files (read + compute, imports excluded); "
        "process = the whole worker subprocess (interpreter start, imports, exit). "
        f"`{RANX_COLD}` is one run with an empty numba cache (JIT compilation included).",
        "",
        markdown_table(TIME_HEADERS, [row for r in results for row in time_rows(r)]),
        "",
        f"## {SUBJECT} relative to the others",
        "",
        "Ratio of wall times within each round, median over rounds (below 1: "
        f"{SUBJECT} is faster). Fastest parse: the faster of pyarrow_parse and polars_parse in "
        "each round. Process: whole worker processes (start-up and imports included). "
        "Peak RSS / file is MiB of memory per MiB of run file (for gzip, of the file "
        "uncompressed).",
        "",
        markdown_table(RATIO_HEADERS, [ratio_row(r) for r in results]),
        "",
        f"## Agreement of the metric means (tolerance {TOLERANCE:g})",
        "",
        markdown_table(AGREE_HEADERS, [row for r in results for row in agreement_rows(r)]),
        "",
    ]
    skipped = [
        (f"{r['size']} {r.get('shape', 'base')}", tool, why)
        for r in results
        for tool, why in r["skipped"].items()
    ]
    if skipped:
        lines += ["## Skipped", ""] + [f"- {s}, {t}: {w}" for s, t, w in skipped] + [""]
    lines += ["![wall time against run lines](time_vs_lines.png)", ""]
    return "\n".join(lines)


def plot(report: dict, path: Path) -> bool:
    """Log-log plot of median wall time against run lines, one line per tool (base shape, or
    the first shape measured when base was not)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -r benchmarks/requirements.txt)")
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    shapes = [r.get("shape", "base") for r in report["sizes"]]
    shown = "base" if "base" in shapes else shapes[0]
    for tool in [*TOOLS, RANX_COLD]:
        points = sorted(
            (r["run_lines"], r["summary"]["medians"][tool]["wall_s"])
            for r in report["sizes"]
            if tool in r["summary"]["medians"] and r.get("shape", "base") == shown
        )
        if points:
            x, y = zip(*points, strict=True)
            ax.plot(x, y, "--" if tool == RANX_COLD else "-", marker="o", label=tool)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("run lines")
    ax.set_ylabel("wall time from files, s (median)")
    ax.set_title(f"{shown} shape; {report['machine']['cpu']}, {report['machine']['cores']} cores")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_results(report: dict, results_dir: Path) -> None:
    """Write latest.json, latest.md and the plot."""
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "latest.json").write_text(json.dumps(report, indent=2) + "\n")
    (results_dir / "latest.md").write_text(markdown_report(report))
    plot(report, results_dir / "time_vs_lines.png")


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        help=f"comma-separated QxD sizes (default {DEFAULT_SIZES})",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per size (default 3)")
    parser.add_argument(
        "--shapes",
        default="base",
        help="comma-separated file shapes of shapes.py, or 'all' (default base)",
    )
    parser.add_argument(
        "--ranx-shapes",
        default=None,
        help="shapes ranx runs on (default: all of --shapes); ranx is slow",
    )
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600,
        help="seconds before a worker is killed (default 3600)",
    )
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="another checkout of EvalSuite, run as the tool evalsuite_before in the same rounds "
        "(before/after ratios within a round)",
    )
    parser.add_argument(
        "--ranx-cold-every-shape",
        action="store_true",
        help="empty the numba cache and time a cold ranx run for every shape (default: for the "
        "first shape of each size; the later shapes' warm rounds use the same compiled code)",
    )
    args = parser.parse_args(argv)
    args.sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    try:
        args.shapes = parse_shapes(args.shapes)
        args.ranx_shapes = (
            args.shapes if args.ranx_shapes is None else parse_shapes(args.ranx_shapes)
        )
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(args.tools) - set(TOOLS)
    if unknown or args.rounds < 1:
        parser.error(f"unknown tools {sorted(unknown)}" if unknown else "--rounds must be >= 1")
    args.tools = [t for t in TOOLS if t in args.tools]  # canonical order
    if args.against is not None:
        if not (args.against / "evalsuite" / "__init__.py").is_file():
            parser.error(f"--against {args.against}: no evalsuite package there")
        args.tools.append(BEFORE)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit code 1 if the metric means disagree."""
    args = parse_args(argv)
    global AGAINST
    AGAINST = args.against.resolve() if args.against is not None else None
    report = {
        "command": " ".join(
            ["python", "benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])]
        ),
        "rounds": args.rounds,
        "tools": args.tools,
        "shapes": args.shapes,
        "against": str(AGAINST) if AGAINST else None,
        "load_average_start": os.getloadavg(),
        "metrics": METRICS,
        "machine": machine_info(),
        "sizes": [],
    }
    for size in args.sizes:
        ranx_cold = True
        for shape in args.shapes:
            # ranx.Run.from_file reads no gzip: it skips that shape.
            tools = [
                t
                for t in args.tools
                if t != "ranx" or (shape in args.ranx_shapes and shape != "gzip")
            ]
            result = benchmark_size(size, tools, args.rounds, args.timeout, shape,
                                    ranx_cold=ranx_cold or args.ranx_cold_every_shape)
            ranx_cold = ranx_cold and "ranx" not in tools
            result["load_average"] = os.getloadavg()
            result["summary"] = summarise(result)
            report["sizes"].append(result)
            print_size(result)
            write_results(report, args.results_dir)  # after each one, so partial runs leave results
    print(f"\nwrote {args.results_dir}/latest.json, latest.md, time_vs_lines.png")
    failed = any(r["status"] == "FAIL" for s in report["sizes"] for r in s["summary"]["agreement"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
