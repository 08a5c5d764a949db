"""The parse floor: ways to parse a TREC run with pyarrow and polars, in one process.

For each size and shape (``shapes.py``) it times, in this process, median of
``--rounds`` rounds in an order rotated each round:

=====================  ========================================================
variant                what
=====================  ========================================================
pyarrow                ``pyarrow.csv.read_csv`` as ``pyarrow_parse`` in the
                       worker: default 1 MiB blocks, ids string, score float64
pyarrow_b4M            the same with 4 MiB blocks
pyarrow_b16M           the same with 16 MiB blocks
pyarrow_es             EvalSuite's options: 16 MiB blocks, no quoting, query id
                       and tag dictionary-encoded, from a memory map
pyarrow_es_b4M         the same with 4 MiB blocks
pyarrow_str_cast       score read as a string, then ``pc.cast`` to float64
polars                 ``polars.read_csv``, ids string, score float64
polars_to_arrow        the same, then ``.to_arrow()`` (what EvalSuite would need)
evalsuite_parse        EvalSuite's TREC parse step alone (``_parse_trec``:
                       whitespace check, pyarrow, checks), no Run built
evalsuite_read_run     ``evalsuite.read_run`` end to end
=====================  ========================================================

Tab-separated files use a tab delimiter in the library variants; gzip files
are decompressed by the library (pyarrow: from the extension; polars: in
memory).  Every variant's scores are checked equal, bit for bit, to
Python's ``float`` of the text on a sample of lines (correct rounding), and
its ids to the text.

Usage::

    python benchmarks/parse_floor.py --sizes 2kx1000,7kx1000 --shapes all --rounds 3

writes ``results/parse_floor.json`` and ``results/parse_floor.md``.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from generate import parse_size
from shapes import make_shape, parse_shapes

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

NAMES = ["qid", "q0", "docid", "rank", "score", "tag"]
SAMPLE = 20_000  # lines checked against Python's float() per file


def delimiter_of(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return "\t" if b"\t" in f.readline() else " "


def arrow_types(score=pa.float64(), dictionary: bool = False) -> dict:
    ids = pa.dictionary(pa.int32(), pa.string()) if dictionary else pa.string()
    return {"qid": ids, "q0": pa.string(), "docid": pa.string(), "rank": pa.string(),
            "score": score, "tag": ids}


def pyarrow_reader(block_size: int | None = None, score=pa.float64(), es: bool = False):
    def read(path: str, delimiter: str):
        source = path if path.endswith(".gz") or not es else pa.memory_map(path)
        read_options = pa_csv.ReadOptions(column_names=NAMES, **({"block_size": block_size} if block_size else {}))
        parse_options = (
            pa_csv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False,
                                newlines_in_values=False, ignore_empty_lines=False)
            if es else pa_csv.ParseOptions(delimiter=delimiter)
        )
        convert = pa_csv.ConvertOptions(column_types=arrow_types(score, dictionary=es), null_values=[],
                                        strings_can_be_null=False, quoted_strings_can_be_null=False)
        table = pa_csv.read_csv(source, read_options=read_options, parse_options=parse_options,
                                convert_options=convert)
        if score != pa.float64():
            table = table.set_column(4, "score", pc.cast(table.column("score"), pa.float64()))
        return table.column("qid"), table.column("docid"), table.column("score")

    return read


def polars_reader(to_arrow: bool):
    import polars as pl

    schema = {"qid": pl.String, "q0": pl.String, "docid": pl.String, "rank": pl.String,
              "score": pl.Float64, "tag": pl.String}

    def read(path: str, delimiter: str):
        df = pl.read_csv(path, has_header=False, separator=delimiter, schema=schema, quote_char=None)
        if to_arrow:
            table = df.select("qid", "docid", "score").to_arrow()
            return table.column("qid"), table.column("docid"), table.column("score")
        return df["qid"], df["docid"], df["score"]

    return read


def evalsuite_parse(path: str, delimiter: str):
    from evalsuite.io._read_ranked import _parse_trec
    from evalsuite.io._reading import _load
    from evalsuite.io.limits import check_limits

    inp = _load(path)
    parsed = _parse_trec(inp, "run", check_limits(None))
    return parsed.query_ids, parsed.doc_ids, parsed.values


def evalsuite_read_run(path: str, delimiter: str):
    import evalsuite

    run = evalsuite.read_run(path)
    return None, None, run  # rows regrouped: checked by the runner's agreement, not here


VARIANTS = {
    "pyarrow": pyarrow_reader(),
    "pyarrow_b4M": pyarrow_reader(1 << 22),
    "pyarrow_b16M": pyarrow_reader(1 << 24),
    "pyarrow_es": pyarrow_reader(1 << 24, es=True),
    "pyarrow_es_b4M": pyarrow_reader(1 << 22, es=True),
    "pyarrow_str_cast": pyarrow_reader(1 << 24, score=pa.string(), es=True),
    "polars": polars_reader(False),
    "polars_to_arrow": polars_reader(True),
    "evalsuite_parse": evalsuite_parse,
    "evalsuite_read_run": evalsuite_read_run,
}


def to_numpy(column) -> np.ndarray:
    if isinstance(column, np.ndarray):
        return column
    if hasattr(column, "to_numpy") and not isinstance(column, (pa.Array, pa.ChunkedArray)):
        return column.to_numpy()  # polars
    return np.asarray(column.to_numpy() if isinstance(column, pa.ChunkedArray) else column.to_numpy(False))


def to_strings(column, rows: np.ndarray) -> list[str]:
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        return [str(v) for v in column.take(pa.array(rows)).to_pylist()]
    return [str(v) for v in column.gather(rows).to_list()]  # polars


def sample_lines(path: str, delimiter: str, n_lines: int) -> tuple[np.ndarray, list[list[str]]]:
    rows = np.sort(np.random.default_rng(1).choice(n_lines, min(SAMPLE, n_lines), replace=False))
    opener = gzip.open if path.endswith(".gz") else open
    wanted, out, k = set(rows.tolist()), [], 0
    with opener(path, "rt") as f:
        for i, line in enumerate(f):
            if i in wanted:
                out.append(line.rstrip("\n").split(delimiter))
                k += 1
    return rows, out


def check_exact(name: str, result, rows: np.ndarray, lines: list[list[str]]) -> str:
    """'exact' if ids and scores of the sampled lines are as written and as float() rounds."""
    qids, docids, scores = result
    if qids is None:
        return "n/a"
    values = to_numpy(scores)[rows]
    expected = np.array([float(f[4]) for f in lines])
    if not np.array_equal(values.view(np.int64), expected.view(np.int64)):
        bad = int(np.flatnonzero(values != expected)[0])
        return f"score differs at sampled line {rows[bad] + 1}: {values[bad]!r} != {expected[bad]!r}"
    if to_strings(qids, rows) != [f[0] for f in lines] or to_strings(docids, rows) != [f[2] for f in lines]:
        return "ids differ"
    return "exact"


def measure(path: str, rounds: int, variants: list[str]) -> dict:
    delimiter = delimiter_of(path)
    times: dict[str, list[float]] = {v: [] for v in variants}
    exact: dict[str, str] = {}
    sample = None
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[: r % len(variants)]
        for name in order:
            gc.collect()
            pa.default_memory_pool().release_unused()
            t0 = time.perf_counter()
            result = VARIANTS[name](path, delimiter)
            times[name].append(time.perf_counter() - t0)
            if name not in exact:
                if sample is None:
                    n = len(result[2]) if result[0] is not None else None
                    sample = sample_lines(path, delimiter, n) if n else None
                exact[name] = check_exact(name, result, *sample) if sample else "n/a"
            del result
    return {v: {"median_s": statistics.median(t), "times_s": t, "exact": exact[v]} for v, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2kx1000,7kx1000")
    parser.add_argument("--shapes", default="all")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "parse_floor")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    report = {"rounds": args.rounds, "results": []}
    for size in [parse_size(s) for s in args.sizes.split(",")]:
        for shape in parse_shapes(args.shapes):
            ds = make_shape(size, shape)
            res = measure(str(ds.run), args.rounds, variants)
            floor = min(res[v]["median_s"] for v in res if v.startswith(("pyarrow", "polars")))
            report["results"].append({"size": size.label, "shape": shape, "lines": size.lines,
                                      "file_mib": ds.run.stat().st_size / 2**20, "variants": res})
            print(f"{size.label} {shape}: " + ", ".join(
                f"{v} {r['median_s']:.3f} s ({r['median_s'] / floor:.2f}x{'' if r['exact'] in ('exact', 'n/a') else ' ' + r['exact']})"
                for v, r in res.items()), flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    header = ["size", "shape", *variants]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in report["results"]:
        lines.append("| " + " | ".join([r["size"], r["shape"]] + [
            f"{r['variants'][v]['median_s']:.3f}" + ("" if r["variants"][v]["exact"] in ("exact", "n/a") else " (inexact)")
            for v in variants]) + " |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
