"""The trace reader's fuzzing round at full size: >= 20,000 mutated trace files (OTLP JSON, OTLP
protobuf, Phoenix Parquet/CSV/JSONL; 4,000 per base) through the reader pool, as
tests/io/test_fuzz_traces.py reads them in CI at 60 per base. Prints the outcome counts and the
wall time; exits non-zero on any stopped reader or foreign exception (pytest's exit code).

    python benchmarks/fuzz_traces.py            # about 10 minutes on a busy 2-core machine
    python benchmarks/fuzz_traces.py --per-base 400
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-base", type=int, default=4000, help="mutated inputs per base file (5 bases)")
    args = parser.parse_args()
    # tests/fuzz_inputs.py: examples(60) scaled by EVALSUITE_FUZZ_EXAMPLES / 100.
    scale = max(1, round(args.per_base * 100 / 60))
    env = dict(os.environ, EVALSUITE_FUZZ_EXAMPLES=str(scale))
    started = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                            "tests/io/test_fuzz_traces.py"], cwd=REPO, env=env)
    print(f"{5 * round(60 * scale / 100):,} mutated inputs (+5 bases) in {time.perf_counter() - started:,.0f} s; "
          f"exit code {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
