"""Peak resident memory of ``read_qrels`` + ``read_run`` + ``evaluate`` in one process, against the
run file's size (issue 31's memory target: at most 2.5x the file).

    python benchmarks/read_memory.py QRELS RUN [--repo PATH]

``--repo`` imports EvalSuite from another checkout (a snapshot of main, for "before"); run the two
alternately and take the median. The peak is the kernel's high-water mark (``VmHWM`` in
``/proc/self/status``), so it includes the interpreter and the imports; ``VmRSS`` after each step
is printed too. Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100", "hit_rate@10"]


def status_mib(field: str) -> float:
    """``VmRSS`` or ``VmHWM`` of this process, MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args(argv)
    sys.path.insert(0, args.repo)
    import evalsuite as es

    steps = {"import": status_mib("VmRSS")}
    qrels = es.read_qrels(args.qrels)
    steps["read_qrels"] = status_mib("VmRSS")
    run = es.read_run(args.run)
    steps["read_run"] = status_mib("VmRSS")
    es.evaluate(qrels, run, METRICS)
    steps["evaluate"] = status_mib("VmRSS")
    peak = status_mib("VmHWM")
    file_mib = os.path.getsize(args.run) / (1 << 20)
    print(json.dumps({"repo": args.repo, "rss_after_mib": {k: round(v) for k, v in steps.items()},
                      "peak_mib": round(peak), "run_mib": round(file_mib, 1), "peak_per_file": round(peak / file_mib, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
