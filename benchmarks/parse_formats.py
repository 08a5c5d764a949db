"""Parse time of read_run / read_qrels / read_records in every format, this tree beside another
checkout (issue 29: the id rule, the limits and the Parquet page walk must keep the readers' speed).

Writes one generated run (``--queries`` x ``--docs`` lines) and its qrels in TREC, CSV, TSV, JSON,
JSONL, Parquet and gzip-compressed CSV, and a records file in JSONL, CSV and Parquet, into a
temporary folder, then times each read in a fresh process per tree, trees alternating (A B A B ...)
``--rounds`` times; prints the median seconds of each and the ratio of the medians (this tree /
other). The per-process time includes nothing but the read (imports are done before the clock).

    python benchmarks/parse_formats.py --against /work/main --out benchmarks/results/parse_formats.md
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]

_TIMER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import evalsuite as es
from evalsuite.io import run_files, record_files  # noqa: F401  (imports outside the clock)
read = {"run": es.read_run, "qrels": es.read_qrels, "records": es.read_records}[sys.argv[2]]
started = time.perf_counter()
read(sys.argv[3], format=sys.argv[4])
print(time.perf_counter() - started)
"""


def write_files(folder: Path, queries: int, docs: int) -> list[tuple[str, str, Path]]:
    rng = np.random.default_rng(29)
    q = np.repeat([f"q{i}" for i in range(queries)], docs)
    d = np.array([f"doc{i}" for i in rng.integers(0, 50 * docs, size=queries * docs)])
    s = rng.random(queries * docs)
    rows = list(zip(q.tolist(), d.tolist(), s.tolist()))
    seen, run_rows = set(), []
    for row in rows:
        if (row[0], row[1]) not in seen:
            seen.add((row[0], row[1]))
            run_rows.append(row)
    qrels_rows = [(qq, dd, int(ss * 4)) for qq, dd, ss in run_rows[::10]]
    out = []
    for kind, table_rows, value in (("run", run_rows, "score"), ("qrels", qrels_rows, "relevance")):
        trec = folder / f"{kind}.trec"
        with trec.open("w") as handle:
            if kind == "run":
                handle.writelines(f"{a} Q0 {b} {i} {c!r} sys\n" for i, (a, b, c) in enumerate(table_rows))
            else:
                handle.writelines(f"{a} 0 {b} {c}\n" for a, b, c in table_rows)
        out.append((kind, "trec", trec))
        for fmt, sep in (("csv", ","), ("tsv", "\t")):
            path = folder / f"{kind}.{fmt}"
            with path.open("w", newline="") as handle:
                writer = csv.writer(handle, delimiter=sep, lineterminator="\n")
                writer.writerow(["query_id", "doc_id", value])
                writer.writerows(table_rows)
            out.append((kind, fmt, path))
        gz = folder / f"{kind}.csv.gz"
        gz.write_bytes(gzip.compress((folder / f"{kind}.csv").read_bytes(), compresslevel=1))
        out.append((kind, "csv", gz))
        jsonl = folder / f"{kind}.jsonl"
        with jsonl.open("w") as handle:
            handle.writelines(json.dumps({"query_id": a, "doc_id": b, value: c}) + "\n" for a, b, c in table_rows)
        out.append((kind, "jsonl", jsonl))
        document: dict = {}
        for a, b, c in table_rows:
            document.setdefault(a, {})[b] = c
        (folder / f"{kind}.json").write_text(json.dumps(document))
        out.append((kind, "json", folder / f"{kind}.json"))
        parquet = folder / f"{kind}.parquet"
        pq.write_table(pa.table({"query_id": [r[0] for r in table_rows], "doc_id": [r[1] for r in table_rows],
                                 value: [r[2] for r in table_rows]}), parquet)
        out.append((kind, "parquet", parquet))
    records = [{"query_id": f"q{i}", "question": f"question {i} " * 5, "answer": f"answer {i} " * 20,
                "contexts": [f"context {i}.{j} " * 30 for j in range(5)], "latency_ms": float(i % 997)}
               for i in range(queries * docs // 20)]
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out.append(("records", "jsonl", path))
    pq.write_table(pa.Table.from_pylist(records), folder / "records.parquet")
    out.append(("records", "parquet", folder / "records.parquet"))
    with (folder / "records.csv").open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["query_id", "question", "answer", "latency_ms"])
        writer.writerows([(r["query_id"], r["question"], r["answer"], r["latency_ms"]) for r in records])
    out.append(("records", "csv", folder / "records.csv"))
    return out


def time_once(tree: Path, kind: str, fmt: str, path: Path) -> float:
    done = subprocess.run([sys.executable, "-c", _TIMER, str(tree), kind, str(path), fmt], capture_output=True,
                          text=True, check=True, cwd=tree)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = [f"| reader | format | file | MB | this tree (s) | {args.against} (s) | ratio |", "|---|---|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as folder:
        for kind, fmt, path in write_files(Path(folder), args.queries, args.docs):
            mine, other = [], []
            for _ in range(args.rounds):
                mine.append(time_once(REPO, kind, fmt, path))
                other.append(time_once(args.against, kind, fmt, path))
            a, b = statistics.median(mine), statistics.median(other)
            row = f"| {kind} | {fmt} | {path.name} | {path.stat().st_size / 1e6:.1f} | {a:.3f} | {b:.3f} | {a / b:.2f} |"
            rows.append(row)
            print(row, flush=True)
    table = "\n".join(rows)
    print("\n" + table)
    if args.out:
        args.out.write_text(f"# Parse time by format (benchmarks/parse_formats.py, {args.queries:,} x {args.docs} run, "
                            f"median of {args.rounds}, trees alternating)\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
