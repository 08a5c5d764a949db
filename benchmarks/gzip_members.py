"""Many-member gzip: decompression time against the number of members (issue 29).

For 10k, 100k and 1M members (each a one-line qrels member, and each an empty member, the shape of
the 3.2 MB file that took 13.8 s before), times ``evalsuite.io.limits.gunzip`` of this tree and,
with ``--against DIR``, the one of another checkout (main before the change: quadratic, so it is
timed up to ``--against-max`` members only), and ``gzip.decompress`` from the standard library as
the peer (itself quadratic in the number of members in Python 3.11, so timed up to
``--peer-max``, once past 10,000). Each figure is the median of ``--repeats`` runs, each in this process. Prints a
Markdown table; ``--out`` writes it to a file too.

    python benchmarks/gzip_members.py --against /work/main --out benchmarks/results/gzip_members.md
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import statistics
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evalsuite.io.limits import DEFAULT_LIMITS, gunzip  # noqa: E402


def _load_gunzip(checkout: Path):
    """``gunzip`` from another checkout's evalsuite/io/limits.py, loaded under another module name."""
    spec = importlib.util.spec_from_file_location("evalsuite.io._limits_other", checkout / "evalsuite" / "io" / "limits.py",
                                                  submodule_search_locations=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "evalsuite.io"
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.gunzip


def _member(payload: bytes) -> bytes:
    return gzip.compress(payload, mtime=0)


def files(members: int) -> dict[str, bytes]:
    empty = _member(b"")
    line = [_member(f"q{i % 1000} 0 d{i} 1\n".encode()) for i in range(min(members, 1000))]
    return {"empty members": empty * members,
            "one line each": b"".join(line[i % len(line)] for i in range(members))}


def expected_output(members: int, label: str) -> bytes:
    if label == "empty members":
        return b""
    lines = [f"q{i % 1000} 0 d{i} 1\n".encode() for i in range(min(members, 1000))]
    return b"".join(lines[i % len(lines)] for i in range(members))


def timed(fn, data: bytes, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn(data)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout whose gunzip to time too")
    parser.add_argument("--against-max", type=int, default=100_000, help="members at most for --against")
    parser.add_argument("--peer-max", type=int, default=100_000,
                        help="members at most for gzip.decompress (quadratic in members too: 128 s for 100,000)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    other = _load_gunzip(args.against) if args.against else None
    ours = lambda data: gunzip(data, DEFAULT_LIMITS, "many.gz")  # noqa: E731
    rows = ["| members | file | bytes | this tree (s) | µs per member | gzip.decompress (s) | ratio to gzip |"
            + (f" {args.against} (s) |" if other else ""),
            "|---:|---|---:|---:|---:|---:|---:|" + ("---:|" if other else "")]
    for members in args.members:
        for label, data in files(members).items():
            assert ours(data) == expected_output(members, label)
            mine = timed(ours, data, args.repeats)
            if members <= args.peer_max:
                peer = timed(gzip.decompress, data, 1 if members > 10_000 else args.repeats)
                row = (f"| {members:,} | {label} | {len(data):,} | {mine:.3f} | {mine / members * 1e6:.2f} | "
                       f"{peer:.3f} | {mine / peer:.3f} |")
            else:
                row = f"| {members:,} | {label} | {len(data):,} | {mine:.3f} | {mine / members * 1e6:.2f} | not timed | |"
            if other:
                if members <= args.against_max:
                    row += f" {timed(lambda d: other(d, DEFAULT_LIMITS, 'many.gz'), data, 1):.3f} |"
                else:
                    row += " not timed |"
            rows.append(row)
            print(row, flush=True)
    table = "\n".join(rows)
    print("\n" + table)
    if args.out:
        args.out.write_text(f"# Many-member gzip (benchmarks/gzip_members.py, median of {args.repeats})\n\n{table}\n"
                            f"\nzlib {zlib.ZLIB_RUNTIME_VERSION}, Python {sys.version.split()[0]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
