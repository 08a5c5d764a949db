"""Per-request records on Dask: evaluate_records_dask on 10 million records in Parquet shards, and
the single-machine evaluate_records next to it on a sample that fits.

    python benchmarks/records_dask.py [--records 10000000] [--shard-records 250000]
        [--sample-records 1000000] [--workers 2] [--memory-limit 3GiB] [--rounds 3] [--big-rounds 1]

The records are ``records.py``'s synthetic ones (4 systems; judgement lists, success, failure
stages, two latency columns, context and relevant ids), written once as shards of
``--shard-records`` under ``$EVALSUITE_BENCH_DATA`` (default /tmp/evalsuite-records-dask). Each
measurement is a fresh subprocess:

- **single**: ``read_records`` of each sample shard, ``concat_records``, ``evaluate_records``;
  wall time of the three and peak RSS (``VmHWM``);
- **dask**: a LocalCluster of ``--workers`` processes (one thread each, ``--memory-limit``
  each) started first, then ``evaluate_records_dask`` of the shards' folder, timed; each
  worker's peak RSS (``VmHWM``, read in the worker with ``client.run``) and the client's.

On the sample the two reports' numbers must be equal (every mean, success rate and interval,
failure count and share, latency statistic, compared as exact floats); the script exits 1 if not.
Sample rounds alternate single and dask; the ratio is taken within each round, then the median.
Results go to ``results/records_dask.json`` and ``results/records_dask.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
sys.path.insert(0, str(BENCH))

from records import records_table  # noqa: E402

_SUMMARY = r"""
def summary(report):
    def num(x):
        return float(x).hex()
    return {
        "metrics": report.metrics,
        "scores": {s: {m: [num(v), v.params["n"], v.params["n_defined"]] for m, v in per.items()}
                   for s, per in report.scores.items()},
        "success": {s: [num(v), num(v.params["ci_low"]), num(v.params["ci_high"])] for s, v in report.task_success.items()},
        "failures": {s: [num(v), {k: [i["count"], num(i["share"])] for k, i in v.params["stages"].items()}]
                     for s, v in report.failures.items()},
        "latency": [[r[0], r[1], int(r[3]), *map(num, r[4:])] for r in report.latency_table.itertuples(index=False)],
        "warnings": report.warnings,
    }

def vmhwm():
    return next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
"""

_SINGLE = _SUMMARY + r"""
import glob, json, sys, time
import evalsuite as es
from evalsuite.records.table import concat_records
paths = sorted(glob.glob(sys.argv[1] + "/*.parquet"))
t0 = time.perf_counter()
records = concat_records([es.read_records(p) for p in paths])
t1 = time.perf_counter()
report = es.evaluate_records(records)
t2 = time.perf_counter()
print(json.dumps({"read_s": t1 - t0, "evaluate_s": t2 - t1, "wall_s": t2 - t0, "records": len(records),
                  "peak_mib": vmhwm(), "summary": summary(report)}))
"""

_DASK = _SUMMARY + r"""
import json, logging, sys, time
from distributed import Client, LocalCluster
from evalsuite.evaluation.records_dask import evaluate_records_dask
folder, workers, memory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if __name__ == "__main__":
    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        t1 = time.perf_counter()
        plans = []
        report = evaluate_records_dask(folder, scheduler=client, on_plan=plans.append)
        t2 = time.perf_counter()
        peaks = sorted(client.run(vmhwm).values())
    print(json.dumps({"cluster_s": t1 - t0, "wall_s": t2 - t1, "records": report.params["n_records"],
                      "worker_peak_mib": peaks, "client_peak_mib": vmhwm(), "plan": plans[0],
                      "summary": summary(report)}))
"""


def write_shards(folder: Path, n: int, per_shard: int, seed: int = 0) -> list[Path]:
    """n records as shards of per_shard (once; a folder with every shard is reused)."""
    folder.mkdir(parents=True, exist_ok=True)
    count = -(-n // per_shard)
    paths = [folder / f"part-{i:05d}.parquet" for i in range(count)]
    for i, path in enumerate(paths):
        if path.exists():
            continue
        size = min(per_shard, n - i * per_shard)
        pq.write_table(records_table(size, seed=seed + i, first_query=i * per_shard), path.with_suffix(".tmp"))
        os.replace(path.with_suffix(".tmp"), path)
    return paths


def sample_folder(folder: Path, paths: list[Path]) -> Path:
    """A folder of links to the first shards (the sample that fits one machine)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in paths:
        link = folder / path.name
        if not link.exists():
            link.symlink_to(path)
    return folder


def run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO)
    if done.returncode:
        raise RuntimeError(done.stderr[-4000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--shard-records", type=int, default=250_000)
    parser.add_argument("--sample-records", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="3GiB")
    parser.add_argument("--rounds", type=int, default=3, help="single vs dask rounds on the sample")
    parser.add_argument("--big-rounds", type=int, default=1, help="dask rounds on all the records")
    args = parser.parse_args(argv)
    base = Path(os.environ.get("EVALSUITE_BENCH_DATA") or "/tmp/evalsuite-records-dask")
    start = time.perf_counter()
    shards = write_shards(base / f"records_{args.records}_{args.shard_records}", args.records, args.shard_records)
    n_sample = max(1, args.sample_records // args.shard_records)
    sample = sample_folder(base / f"sample_{args.records}_{args.shard_records}_{n_sample}", shards[:n_sample])
    disk = sum(p.stat().st_size for p in shards) / 2**20
    print(f"{len(shards)} shards, {disk:.0f} MiB, ready in {time.perf_counter() - start:.1f} s", flush=True)
    dask_args = (str(args.workers), args.memory_limit)
    out = {"records": args.records, "shards": len(shards), "shard_records": args.shard_records, "disk_mib": disk,
           "workers": args.workers, "memory_limit": args.memory_limit, "sample": [], "big": []}
    equal = True
    for i in range(args.rounds):
        pair = {}
        order = ("single", "dask") if i % 2 == 0 else ("dask", "single")
        for kind in order:
            pair[kind] = run(_SINGLE, str(sample)) if kind == "single" else run(_DASK, str(sample), *dask_args)
        same = pair["single"]["summary"] == pair["dask"]["summary"]
        equal &= same
        pair["equal"] = same
        pair["ratio"] = pair["dask"]["wall_s"] / pair["single"]["wall_s"]
        for kind in ("single", "dask"):
            pair[kind].pop("summary")
        out["sample"].append(pair)
        print(f"sample round {i + 1}: single {pair['single']['wall_s']:.1f} s (peak {pair['single']['peak_mib']:.0f} "
              f"MiB), dask {pair['dask']['wall_s']:.1f} s (workers {pair['dask']['worker_peak_mib']} MiB), "
              f"dask / single {pair['ratio']:.2f}, equal: {same}", flush=True)
    for i in range(args.big_rounds):
        big = run(_DASK, str(shards[0].parent), *dask_args)
        big.pop("summary")
        out["big"].append(big)
        print(f"all records, round {i + 1}: {big['records']:,} records in {big['wall_s']:.1f} s; worker peaks "
              f"{big['worker_peak_mib']} MiB, client {big['client_peak_mib']:.0f} MiB; plan: {big['plan']}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "records_dask.json").write_text(json.dumps(out, indent=1) + "\n")
    med = statistics.median
    lines = ["| run | records | wall s (median) | peak RSS MiB per worker (max) | client peak MiB | dask / single |",
             "|---|---|---|---|---|---|"]
    if out["sample"]:
        s = out["sample"]
        lines.append(f"| single machine (sample) | {s[0]['single']['records']:,} | {med(p['single']['wall_s'] for p in s):.1f} "
                     f"| {max(p['single']['peak_mib'] for p in s):.0f} (one process) | - | - |")
        lines.append(f"| dask (sample) | {s[0]['dask']['records']:,} | {med(p['dask']['wall_s'] for p in s):.1f} | "
                     f"{max(max(p['dask']['worker_peak_mib']) for p in s):.0f} | "
                     f"{max(p['dask']['client_peak_mib'] for p in s):.0f} | {med(p['ratio'] for p in s):.2f} |")
    if out["big"]:
        b = out["big"]
        lines.append(f"| dask (all) | {b[0]['records']:,} | {med(r['wall_s'] for r in b):.1f} | "
                     f"{max(max(r['worker_peak_mib']) for r in b):.0f} | {max(r['client_peak_mib'] for r in b):.0f} | - |")
    lines.append("")
    lines.append(f"{len(shards)} Parquet shards of {args.shard_records:,} records ({disk:.0f} MiB); {args.workers} workers "
                 f"x 1 thread x {args.memory_limit}; sample reports equal: {equal}.")
    (RESULTS / "records_dask.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
