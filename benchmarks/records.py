"""Benchmark the per-request records path: read_records + evaluate_records on N synthetic records.

    python benchmarks/records.py [--records 1000000] [--rounds 3]

The generator (seeded, numpy-vectorised, written once to benchmarks/data/) makes records of 4
systems with judgement lists (context_useful x5, answer and reference claims, some None),
success, failure_stage, two latency columns and context_ids/relevant_ids for per-request
ranking metrics, as Parquet and as JSONL. Each measurement runs in a fresh subprocess and
reports read and evaluate time and peak memory (VmHWM); the median over rounds is printed and
written to results/records.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
DATA = BENCH / "data"
RESULTS = BENCH / "results"
STAGES = np.array(["retrieval", "evidence", "generation", "orchestration", "other"])


def _lists(rng: np.random.Generator, n: int, low: int, high: int, p_true: float, p_none: float) -> pa.ListArray:
    lengths = rng.integers(low, high + 1, n)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    values = rng.random(offsets[-1]) < p_true
    mask = rng.random(offsets[-1]) < p_none
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, mask=mask))


def records_table(n: int, seed: int = 0, first_query: int = 0) -> pa.Table:
    """n synthetic records (4 systems, query ids from ``first_query // 4``; n a multiple of 4 keeps
    a query's four systems together)."""
    rng = np.random.default_rng(seed)
    systems = np.array(["rag_a", "rag_b", "rag_c", "rag_d"])[np.arange(n) % 4]
    success = rng.random(n) < 0.85
    stage = np.where(success, None, STAGES[rng.integers(0, 5, n)])
    # Five distinct retrieved ids per record (same base, residues 0..4 mod 5) and two distinct
    # relevant ids: one of them retrieved at a random rank, the other usually not.
    base = rng.integers(0, 10_000, n)
    retrieved = (base[:, None] * 5 + np.arange(5)).ravel()
    first = rng.integers(0, 5, n)
    second = (first + 1 + rng.integers(0, 4, n)) % 5
    relevant = np.stack([base * 5 + first, rng.integers(0, 10_000, n) * 5 + second], axis=1).ravel()
    context_ids = pa.ListArray.from_arrays(pa.array(np.arange(0, 5 * n + 1, 5, dtype=np.int32)), pa.array(retrieved).cast(pa.string()))
    relevant_ids = pa.ListArray.from_arrays(pa.array(np.arange(0, 2 * n + 1, 2, dtype=np.int32)), pa.array(relevant).cast(pa.string()))
    table = pa.table({
        "query_id": pa.array((first_query + np.arange(n)) // 4).cast(pa.string()),
        "system": pa.array(systems),
        "context_ids": context_ids,
        "relevant_ids": relevant_ids,
        "context_useful": _lists(rng, n, 5, 5, 0.4, 0.02),
        "answer_claims_supported": _lists(rng, n, 1, 8, 0.8, 0.02),
        "reference_claims_supported": _lists(rng, n, 1, 6, 0.7, 0.0),
        "success": pa.array(success),
        "failure_stage": pa.array(stage, pa.string()),
        "latency_ms": pa.array(rng.lognormal(7, 0.5, n)),
        "latency_retrieval_ms": pa.array(rng.lognormal(4, 0.4, n)),
    })
    return table


def generate(n: int, seed: int = 0) -> tuple[Path, Path]:
    """Write n synthetic records as Parquet and JSONL (once); return both paths."""
    DATA.mkdir(parents=True, exist_ok=True)
    parquet, jsonl = DATA / f"records_{n}.parquet", DATA / f"records_{n}.jsonl"
    if parquet.exists() and jsonl.exists():
        return parquet, jsonl
    table = records_table(n, seed)
    pq.write_table(table, parquet)
    with open(jsonl, "w") as handle:
        for batch in table.to_batches(max_chunksize=100_000):
            for row in batch.to_pylist():
                handle.write(json.dumps(row) + "\n")
    return parquet, jsonl


_WORKER = r"""
import json, sys, time
t0 = time.perf_counter()
import evalsuite as es
t1 = time.perf_counter()
records = es.read_records(sys.argv[1])
t2 = time.perf_counter()
report = es.evaluate_records(records)
t3 = time.perf_counter()
peak = next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"import_s": t1 - t0, "read_s": t2 - t1, "evaluate_s": t3 - t2, "total_s": t3 - t1,
                  "peak_rss_mib": peak, "records": len(records), "metrics": report.metrics}))
"""


def measure(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _WORKER, str(path)], capture_output=True, text=True, check=True,
                          cwd=BENCH.parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    paths = generate(args.records)
    print(f"data ready in {time.perf_counter() - start:.1f} s: {', '.join(str(p) for p in paths)}")
    rows = []
    for path in paths:
        runs = [measure(path) for _ in range(args.rounds)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("read_s", "evaluate_s", "total_s", "peak_rss_mib")}
        size_mib = path.stat().st_size / 2**20
        rows.append((path.suffix.lstrip("."), runs[0]["records"], size_mib, med, runs[0]["metrics"]))
        print(f"{path.name}: read {med['read_s']:.2f} s, evaluate {med['evaluate_s']:.2f} s, "
              f"total {med['total_s']:.2f} s, peak {med['peak_rss_mib']:.0f} MiB ({size_mib:.0f} MiB file)")
    RESULTS.mkdir(exist_ok=True)
    lines = ["| format | records | file MiB | read s | evaluate_records s | total s | peak RSS MiB |",
             "|---|---|---|---|---|---|---|"]
    for fmt, n, size, med, _ in rows:
        lines.append(f"| {fmt} | {n:,} | {size:.0f} | {med['read_s']:.2f} | {med['evaluate_s']:.2f} | "
                     f"{med['total_s']:.2f} | {med['peak_rss_mib']:.0f} |")
    lines.append("")
    lines.append(f"Metrics computed per request: {', '.join(rows[0][4])}; median of {args.rounds} fresh processes.")
    (RESULTS / "records.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
