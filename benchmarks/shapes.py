"""Run and qrels files of several shapes, derived from ``generate.py``'s output.

``generate.py`` writes one shape, a kind one: ``q``-prefixed query ids, numeric
doc ids, positive scores with 4 decimals, single spaces, the lines of a
query together.  Users bring other files.  Each shape here rewrites that
base run and its qrels in one respect (or the few that go together in the
wild), seeded, keeping everything that makes the tools comparable: the same
queries, the same documents per query, the same order within a query (score
transforms are strictly increasing, so no ties appear), and qrels whose ids
are rewritten the same way.

=============  ==============================================================
shape          what changes
=============  ==============================================================
base           nothing (``generate.py``'s own files)
numeric        query ids are numbers (``1048585``), as in MS MARCO v1/BEIR
prefixed       query ids ``q0``, ``q1`` ..; doc ids ``d`` + up to 8 digits;
               negative scores with 6 decimals (``-12.345678``)
msmarco_v2     doc ids as MS MARCO v2 passage ids
               (``msmarco_passage_41_45753370``, 28 characters), numeric
               query ids
scientific     scores in scientific notation (``2.3456780e-03``), as a
               dense retriever's float32 scores are often printed
tabs           fields separated by tabs (run and qrels)
ungrouped      the run's lines shuffled: a query's lines are not together
gzip           the base run gzip-compressed (``.run.trec.gz``)
strings        another generator's file: query ids ``topic-`` + 6 hex digits,
               doc ids 10 hex digits (not numbers, no common prefix), negative
               scores with 6 decimals, tag ``bm25-rm3``: about 51 bytes a line
               (356 MB at 7M lines; wider than issue 31's 268 MB file of this
               kind, so no kinder)
=============  ==============================================================

Usage::

    python benchmarks/shapes.py 2kx1000 7kx1000 [--shapes numeric,tabs]

writes ``benchmarks/data/<size>.<shape>.{run,qrels}.trec`` (``.run.trec.gz``
for gzip) once; files that exist with the recorded line counts are reused.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from generate import DATA_DIR, SEED, Dataset, Size, count_lines, generate, parse_size

SHAPES = ["base", "numeric", "prefixed", "msmarco_v2", "scientific", "tabs", "ungrouped", "gzip", "strings"]
SHAPES_VERSION = 1  # bump when a shape's content changes

RUN_NAMES = ["qid", "q0", "docid", "rank", "score", "tag"]
QRELS_NAMES = ["qid", "iter", "docid", "grade"]


def shape_paths(size: Size, shape: str, data_dir: Path = DATA_DIR) -> Dataset:
    """Where the files of ``size`` in ``shape`` live (``base``: generate.py's files)."""
    if shape == "base":
        from generate import dataset_paths

        return dataset_paths(size, data_dir)
    stem = f"{size.label}.{shape}"
    run_name = f"{stem}.run.trec.gz" if shape == "gzip" else f"{stem}.run.trec"
    return Dataset(
        size, data_dir / run_name, data_dir / f"{stem}.qrels.trec", data_dir / f"{stem}.meta.json"
    )


def read_trec(path: Path, names: list[str]) -> pa.Table:
    """A space-separated file of generate.py as a table of strings."""
    return pa_csv.read_csv(
        path,
        read_options=pa_csv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pa_csv.ParseOptions(delimiter=" ", quote_char=False),
        convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in names}),
    )


def write_trec(table: pa.Table, path: Path, delimiter: str = " ") -> None:
    """Write a table of strings as whitespace-separated lines, no header, no quotes."""
    options = pa_csv.WriteOptions(include_header=False, delimiter=delimiter, quoting_style="none")
    pa_csv.write_csv(table, str(path), write_options=options)


def strip_prefix(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Query ids without their one-letter prefix: ``q123`` -> ``123``."""
    return pc.utf8_slice_codeunits(column, 1)


def prefixed_ids(column: pa.ChunkedArray, prefix: str) -> tuple[pa.Array, pa.Array]:
    """Ids ``prefix`` + a dense number in order of first appearance."""
    encoded = column.combine_chunks().dictionary_encode()
    numbers = pc.cast(encoded.indices, pa.string())
    return pc.binary_join_element_wise(prefix, numbers, ""), encoded.dictionary


def remap(column: pa.ChunkedArray, old: pa.Array, new: pa.Array) -> pa.Array:
    """Replace each value found in ``old`` by the value at the same position of ``new``."""
    return new.take(pc.index_in(column, value_set=old))


def msmarco_v2_ids(docids: pa.ChunkedArray) -> pa.Array:
    """``msmarco_passage_BB_OOOOOOOO``: bundle 00..69 and an offset, a bijection of the number."""
    n = pc.cast(docids, pa.int64()).to_numpy(zero_copy_only=False)
    bundle = (n * 7919) % 70  # spread bundles; the pair (bundle, offset) stays unique per n
    offset = n * 5 + bundle % 5  # 8 or 9 digits, distinct because n is
    return pc.binary_join_element_wise(
        "msmarco_passage_",
        pc.utf8_lpad(pc.cast(pa.array(bundle), pa.string()), 2, "0"),
        "_",
        pc.cast(pa.array(offset), pa.string()),
        "",
    )


def scientific_text(values: np.ndarray) -> pa.Array:
    """Scores written as ``%.7e`` (8 significant digits, enough to keep 4-decimal BM25 distinct)."""
    return pa.array(np.char.mod("%.7e", values).astype(object), pa.string())


def hex_ids(column: pa.ChunkedArray, prefix: str, digits: int, salt: int) -> pa.Array:
    """``prefix`` + ``digits`` hex digits: a bijection (multiplication by an odd number modulo
    16**digits) of the number in ``column`` (after any leading letters), so distinct stay distinct."""
    n = pc.cast(pc.utf8_ltrim(column, characters="abcdefghijklmnopqrstuvwxyz"), pa.uint64()).to_numpy(zero_copy_only=False).astype(np.uint64)
    mixed = (n * np.uint64(0x9E3779B1 + 2 * salt) + np.uint64(salt)) % np.uint64(16 ** digits)
    return pa.array(np.char.mod(f"{prefix}%0{digits}x", mixed).astype(object), pa.string())


def transform(shape: str, run: pa.Table, qrels: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The run and qrels of ``shape`` from the base ones (all columns strings)."""
    if shape == "numeric":
        run = run.set_column(0, "qid", strip_prefix(run.column("qid")))
        qrels = qrels.set_column(0, "qid", strip_prefix(qrels.column("qid")))
    elif shape == "prefixed":
        new_q, old_q = prefixed_ids(run.column("qid"), "q")
        run = run.set_column(0, "qid", new_q)
        qrels = qrels.set_column(0, "qid", remap(qrels.column("qid"), old_q, new_q.unique()))
        # doc ids: 'd' + the number (up to 8 digits); scores: 1.37 * s - 50.123456, 6 decimals.
        run = run.set_column(2, "docid", pc.binary_join_element_wise("d", run.column("docid"), ""))
        qrels = qrels.set_column(
            2, "docid", pc.binary_join_element_wise("d", qrels.column("docid"), "")
        )
        score = pc.cast(run.column("score"), pa.float64()).to_numpy()
        text = np.char.mod("%.6f", np.round(score * 1.37 - 50.123456, 6)).astype(object)
        run = run.set_column(4, "score", pa.array(text, pa.string()))
    elif shape == "msmarco_v2":
        run = run.set_column(0, "qid", strip_prefix(run.column("qid")))
        qrels = qrels.set_column(0, "qid", strip_prefix(qrels.column("qid")))
        run = run.set_column(2, "docid", msmarco_v2_ids(run.column("docid")))
        qrels = qrels.set_column(2, "docid", msmarco_v2_ids(qrels.column("docid")))
    elif shape == "scientific":
        score = pc.cast(run.column("score"), pa.float64()).to_numpy()
        run = run.set_column(4, "score", scientific_text(score / 1000.0))
    elif shape == "ungrouped":
        order = np.random.default_rng([SEED, 7]).permutation(run.num_rows)
        run = run.take(pa.array(order))
    elif shape == "strings":
        run = run.set_column(0, "qid", hex_ids(run.column("qid"), "topic-", 6, 1))
        qrels = qrels.set_column(0, "qid", hex_ids(qrels.column("qid"), "topic-", 6, 1))
        run = run.set_column(2, "docid", hex_ids(run.column("docid"), "", 10, 2))
        qrels = qrels.set_column(2, "docid", hex_ids(qrels.column("docid"), "", 10, 2))
        score = pc.cast(run.column("score"), pa.float64()).to_numpy()
        text = np.char.mod("%.6f", np.round(score * 0.731 - 31.415926, 6)).astype(object)
        run = run.set_column(4, "score", pa.array(text, pa.string()))
        run = run.set_column(5, "tag", pa.array(np.full(run.num_rows, "bm25-rm3", dtype=object), pa.string()))
    elif shape not in ("tabs", "gzip"):
        raise ValueError(f"unknown shape {shape!r}")
    return run, qrels


def is_complete(ds: Dataset, run_lines: int) -> bool:
    """True if the shape's files exist as recorded."""
    if not (ds.run.exists() and ds.qrels.exists() and ds.meta.exists()):
        return False
    meta = json.loads(ds.meta.read_text())
    return meta.get("shapes_version") == SHAPES_VERSION and meta.get("run_lines") == run_lines and (
        ds.run.suffix == ".gz" or count_lines(ds.run) == run_lines
    )


def make_shape(size: Size, shape: str, data_dir: Path = DATA_DIR, force: bool = False) -> Dataset:
    """Write (or reuse) the run and qrels of ``size`` in ``shape``."""
    base = generate(size, data_dir)
    if shape == "base":
        return base
    ds = shape_paths(size, shape, data_dir)
    if not force and is_complete(ds, size.lines):
        return ds
    ds.meta.unlink(missing_ok=True)
    if shape == "gzip":
        with open(base.run, "rb") as src, gzip.open(ds.run, "wb", compresslevel=6) as dst:
            while block := src.read(1 << 24):
                dst.write(block)
        ds.qrels.write_bytes(base.qrels.read_bytes())
    else:
        run, qrels = transform(
            shape, read_trec(base.run, RUN_NAMES), read_trec(base.qrels, QRELS_NAMES)
        )
        delimiter = "\t" if shape == "tabs" else " "
        write_trec(run, ds.run, delimiter)
        write_trec(qrels, ds.qrels, delimiter)
    ds.meta.write_text(
        json.dumps(
            {"shapes_version": SHAPES_VERSION, "shape": shape, "seed": SEED, "run_lines": size.lines},
            indent=2,
        )
    )
    return ds


def parse_shapes(text: str) -> list[str]:
    """``"base,tabs"`` -> ``["base", "tabs"]``; ``"all"`` -> every shape."""
    if text.strip() == "all":
        return list(SHAPES)
    shapes = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")
    return shapes


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: write the given sizes in the given shapes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="+", type=parse_size, help="e.g. 2kx1000 7kx1000")
    parser.add_argument("--shapes", type=parse_shapes, default=list(SHAPES), help="default: all")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--force", action="store_true", help="rewrite even if present")
    args = parser.parse_args(argv)
    for size in args.sizes:
        for shape in args.shapes:
            t0 = time.perf_counter()
            ds = make_shape(size, shape, args.data_dir, args.force)
            mb = ds.run.stat().st_size / 1e6
            print(f"{size.label} {shape}: {ds.run} ({mb:.1f} MB) [{time.perf_counter() - t0:.1f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
