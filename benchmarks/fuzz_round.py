"""The readers' fuzzing round at full size (issue 29): >= 20,000 inputs per reader (read_run,
read_qrels, read_records, read_judgement_table; every format each takes) through the reader pool,
as tests/io/test_fuzz_readers.py reads a seeded slice of them in CI; then the trace reader's round
(benchmarks/fuzz_traces.py) and the store's arguments (tests/storage/test_fuzz_store.py).
Prints the inputs per reader and format (parsed / refused) and the wall time; exits non-zero on any
stopped reader (crash, hang, memory cap), foreign exception or wrong parse (pytest's exit code).

    python benchmarks/fuzz_round.py                  # all three parts (about an hour on a busy 2-core machine)
    python benchmarks/fuzz_round.py --scale 200      # a smaller round
    python benchmarks/fuzz_round.py --only readers   # readers | traces | store
    python benchmarks/fuzz_round.py --only readers --kinds judgements   # one reader's 20,000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# EVALSUITE_FUZZ_EXAMPLES for the readers' file: at 1,800 it read 18,171 judgement tables (five
# formats: the fewest inputs of the four readers) in the pool, 3,634 per format; 2,000 gives each
# reader more than 20,000.
READERS_SCALE = 2000


def _pytest(path: str, scale: int, kinds: str | None = None) -> int:
    env = dict(os.environ, EVALSUITE_FUZZ_EXAMPLES=str(scale))
    if kinds:
        env["EVALSUITE_FUZZ_KINDS"] = kinds
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:randomly",
                            path], cwd=REPO, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=READERS_SCALE, help="EVALSUITE_FUZZ_EXAMPLES for the readers")
    parser.add_argument("--store-examples", type=int, default=20_000, help="generated store calls per function")
    parser.add_argument("--only", choices=["readers", "traces", "store"])
    parser.add_argument("--kinds", help="readers to fuzz, e.g. judgements,records (default: all four)")
    args = parser.parse_args()
    codes = {}
    if args.only in (None, "readers"):
        started = time.perf_counter()
        codes["readers"] = _pytest("tests/io/test_fuzz_readers.py", args.scale, args.kinds)
        print(f"readers: EVALSUITE_FUZZ_EXAMPLES={args.scale} in {time.perf_counter() - started:,.0f} s; "
              f"exit code {codes['readers']}", flush=True)
    if args.only in (None, "traces"):
        codes["traces"] = subprocess.call([sys.executable, str(REPO / "benchmarks" / "fuzz_traces.py")], cwd=REPO)
    if args.only in (None, "store"):
        started = time.perf_counter()
        env = dict(os.environ, EVALSUITE_STORE_FUZZ_EXAMPLES=str(args.store_examples))
        codes["store"] = subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                                          "tests/storage/test_fuzz_store.py"], cwd=REPO, env=env)
        print(f"store: {args.store_examples:,} calls per function in {time.perf_counter() - started:,.0f} s; "
              f"exit code {codes['store']}", flush=True)
    print("exit codes: " + ", ".join(f"{k} {v}" for k, v in codes.items()))
    return max(codes.values(), default=0)


if __name__ == "__main__":
    sys.exit(main())
