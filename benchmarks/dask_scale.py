"""Benchmark of ``evalsuite --engine dask`` (a Dask LocalCluster) against the single-machine path.

For each size (``QxD``: Q queries x D docs, from ``generate.py``) the run is cut into gzip
shards of ``--shard-lines`` lines each (``benchmarks/data/<size>.shards/run.NN.trec.gz``; cut
at line boundaries, so a query's lines may fall in two shards), then:

* ``single``: ``python -m evalsuite QRELS RUN --format json -q`` on the whole, uncompressed run
  (only when the size is at most ``--single-max-lines``; above it the single-machine path does
  not fit the workers' memory budget and is not run);
* ``dask``: ``python -m evalsuite --engine dask --workers W --memory-limit M QRELS 'run.*.trec.gz'
  --format json -q``.

Each is one subprocess; its wall time is measured from outside, and the peak resident memory
of every process of its tree is sampled from ``VmHWM`` in ``/proc/PID/status`` every 0.2 s
(VmHWM is the kernel's own high-water mark, so a sample only misses what the last 0.2 s add).
For ``dask`` the worker processes (Dask's spawned children) are reported one by one, and the
client process (which hosts the scheduler and gathers the per-query table) apart. When both
ran, their JSON reports are compared: every per-query value and every mean must be equal
(``==`` on the floats as printed by ``repr``, i.e. bit for bit); the script exits 1 otherwise.

Usage::

    python benchmarks/dask_scale.py --sizes 20kx1000,100kx1000 --workers 2 --memory-limit 4GiB

Results go to ``benchmarks/results/dask_scale.json`` and a table to stdout.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import numpy as np  # noqa: E402

METRICS = ["-m", "map", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "P.10", "-m", "recall.1000"]


def shard(run: Path, folder: Path, shard_lines: int) -> list[Path]:
    """Cut ``run`` into gzip shards (level 1) of ``shard_lines`` lines; reused when complete."""
    done = folder / "done.json"
    if done.exists() and json.loads(done.read_text()).get("shard_lines") == shard_lines:
        return sorted(folder.glob("run.*.trec.gz"))
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("run.*.trec.gz"):
        old.unlink()
    paths, in_shard, out = [], 0, None
    with open(run, "rb") as source:
        rest = b""
        while True:
            block = source.read(1 << 26)
            if not block:
                break
            block = rest + block
            ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10) + 1  # a line's end offset
            rest = block[int(ends[-1]):] if ends.size else block
            start, used = 0, 0
            while used < ends.size:
                if out is None:
                    paths.append(folder / f"run.{len(paths):03d}.trec.gz")
                    out = gzip.open(paths[-1], "wb", compresslevel=1)
                take = min(shard_lines - in_shard, ends.size - used)
                end = int(ends[used + take - 1])
                out.write(block[start:end])
                start, used, in_shard = end, used + take, in_shard + take
                if in_shard == shard_lines:
                    out.close()
                    out, in_shard = None, 0
    if rest:
        raise SystemExit(f"{run}: the last line has no line break")
    if out is not None:
        out.close()
    done.write_text(json.dumps({"shard_lines": shard_lines, "shards": len(paths)}))
    return paths


def _hwm(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _tree(pid: int) -> list[int]:
    """The pids of ``pid``'s descendants (from /proc/*/stat)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, frontier = [], [pid]
    while frontier:
        nxt = [p for p, parent in parents.items() if parent in frontier]
        out += nxt
        frontier = nxt
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def measure(cmd: list[str]) -> dict:
    """Run ``cmd``; wall time, the peak RSS of the root and of each descendant, stdout."""
    peaks: dict[int, int] = {}
    kinds: dict[int, str] = {}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for pid in [proc.pid, *_tree(proc.pid)]:
                hwm = _hwm(pid)
                if hwm is not None:
                    peaks[pid] = max(peaks.get(pid, 0), hwm)
                    if pid not in kinds:
                        line = _cmdline(pid)
                        kinds[pid] = ("client" if pid == proc.pid else "tracker" if "resource_tracker" in line
                                      else "worker" if "spawn_main" in line else "other")
            stop.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    thread.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    gib = 1 << 30
    return {
        "wall_s": round(wall, 2),
        "client_peak_gib": round(peaks.get(proc.pid, 0) / gib, 3),
        "worker_peaks_gib": sorted((round(v / gib, 3) for p, v in peaks.items() if kinds.get(p) == "worker"),
                                   reverse=True),
        "stdout": out.decode(),
        "stderr_tail": err.decode()[-600:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20kx1000,100kx1000")
    parser.add_argument("--shard-lines", type=int, default=5_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="4GiB")
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--single-max-lines", type=int, default=20_000_000,
                        help="run the single-machine path only up to this many lines")
    parser.add_argument("--drop-whole", action="store_true",
                        help="delete a size's uncompressed run once sharded when it is above --single-max-lines")
    args = parser.parse_args(argv)
    results = []
    status = 0
    for text in args.sizes.split(","):
        size = generate.parse_size(text)
        t0 = time.perf_counter()
        ds = generate.dataset_paths(size)
        shards_done = (generate.DATA_DIR / f"{size.label}.shards" / "done.json").exists() and ds.qrels.exists()
        if not (shards_done and size.lines > args.single_max_lines):  # the whole run is needed
            ds = generate.generate(size)
        t_gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        shards = shard(ds.run, generate.DATA_DIR / f"{size.label}.shards", args.shard_lines)
        t_shard = time.perf_counter() - t0
        gz_bytes = sum(p.stat().st_size for p in shards)
        row = {"size": size.label, "lines": size.lines, "shards": len(shards), "shard_lines": args.shard_lines,
               "run_mib": round(ds.run.stat().st_size / (1 << 20), 1) if ds.run.exists() else None,
               "gzip_mib": round(gz_bytes / (1 << 20), 1), "generate_s": round(t_gen, 1),
               "shard_s": round(t_shard, 1)}
        print(f"{size.label}: {len(shards)} shards, {row['gzip_mib']} MiB gzip "
              f"(generate {t_gen:.0f} s, shard {t_shard:.0f} s)", flush=True)
        single = None
        if size.lines <= args.single_max_lines:
            single = measure([sys.executable, "-m", "evalsuite", str(ds.qrels), str(ds.run), *METRICS, "-q",
                              "--format", "json"])
            print(f"  single: {single['wall_s']} s, peak {single['client_peak_gib']} GiB", flush=True)
        elif args.drop_whole and ds.run.exists():
            ds.run.unlink()
        cmd = [sys.executable, "-m", "evalsuite", "--engine", "dask", "--workers", str(args.workers),
               "--memory-limit", args.memory_limit, str(ds.qrels), str(shards[0].parent / "run.*.trec.gz"),
               *METRICS, "-q", "--format", "json"]
        if args.partitions:
            cmd += ["--partitions", str(args.partitions)]
        dask = measure(cmd)
        print(f"  dask: {dask['wall_s']} s, workers peak {dask['worker_peaks_gib']} GiB, "
              f"client peak {dask['client_peak_gib']} GiB", flush=True)
        report = json.loads(dask.pop("stdout"))
        row["dask"] = dask
        row["n_queries"] = report["params"]["n_queries"]
        row["means"] = report["means"]
        if single is not None:
            local = json.loads(single.pop("stdout"))
            same = local["means"] == report["means"] and local["per_query"] == report["per_query"]
            row["single"] = single
            row["identical"] = same
            print(f"  per-query values and means identical to single machine: {same}", flush=True)
            status |= 0 if same else 1
        results.append(row)
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": {
        "cpus": os.cpu_count(), "python": platform.python_version(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30), 1)},
        "workers": args.workers, "memory_limit": args.memory_limit, "results": results}
    try:
        import dask as _dask
        out["machine"]["dask"] = _dask.__version__
        out["machine"]["distributed"] = importlib.metadata.version("distributed")
    except ImportError:
        pass
    path = HERE / "results" / "dask_scale.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
