"""Generate seeded synthetic TREC run and qrels files for the benchmarks.

A size ``QxD`` means ``Q`` queries with ``D`` retrieved documents each, so
the run file has ``Q * D`` lines.  The data imitates an MS MARCO passage run:

* query ids are strings (``q`` followed by a number, e.g. ``q1048585``);
* doc ids are numeric strings drawn from a corpus of 8,841,823 passages,
  distinct within each query;
* scores are BM25-like, strictly decreasing within a query (no ties, so every
  tool must produce the same ranking), and the run is written already sorted
  by score per query, with ranks 1..D;
* qrels have 1 to 10 judged documents per query with grades 0..3, at least
  one of them relevant (grade >= 1); about two thirds of the judged
  documents are retrieved, at ranks skewed towards the top, the rest are not
  retrieved.

Every query of the qrels is in the run and vice versa.  The run lists the
queries in a random order; the qrels are sorted by query id, as qrels
files usually are.

Generation is vectorised with numpy and written with pyarrow's CSV writer in
chunks of about two million lines, so 20k x 1000 (20M lines) takes seconds.
A size is written once: if its files exist with the expected line counts
(recorded in a small ``.meta.json`` beside them) they are reused.

Usage::

    python benchmarks/generate.py 1kx100 10kx100 7kx1000 20kx1000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

# Generated files are large (20k x 1000 is 680 MiB, 100k x 1000 3.3 GiB): EVALSUITE_BENCH_DATA puts
# them on a scratch disk instead of benchmarks/data (git-ignored either way).
DATA_DIR = Path(os.environ.get("EVALSUITE_BENCH_DATA") or Path(__file__).resolve().parent / "data")
CORPUS_SIZE = 8_841_823  # passages in MS MARCO v1
QUERY_ID_SPACE = 1_200_000  # MS MARCO query ids are below this
SEED = 20240229
CHUNK_LINES = 2_000_000
RUN_TAG = "bm25"
FORMAT_VERSION = 1  # bump when the generated content changes

GRADE_PROBS = (0.4, 0.3, 0.2, 0.1)  # grades 0..3 of the non-first judgments
RETRIEVED_FRACTION = 0.7  # share of judged docs that appear in the run
RANK_SKEW = 3.0  # rank = floor(D * u**RANK_SKEW): judged docs near the top

CSV_OPTIONS = pa_csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")


@dataclass(frozen=True)
class Size:
    """A benchmark size: ``queries`` x ``docs`` documents per query."""

    queries: int
    docs: int

    @property
    def label(self) -> str:
        """Canonical label, e.g. ``7kx1000``."""
        q = f"{self.queries // 1000}k" if self.queries % 1000 == 0 else str(self.queries)
        return f"{q}x{self.docs}"

    @property
    def lines(self) -> int:
        """Number of lines of the run file."""
        return self.queries * self.docs


@dataclass(frozen=True)
class Dataset:
    """Paths of the generated files of one size."""

    size: Size
    run: Path
    qrels: Path
    meta: Path


def parse_size(text: str) -> Size:
    """Parse ``"7kx1000"``, ``"1.5kx100"``, ``"500x20"`` or ``"1mx10"``."""
    match = re.fullmatch(r"\s*([\d.]+)([km]?)\s*x\s*(\d+)\s*", text.lower())
    if not match:
        raise argparse.ArgumentTypeError(f"bad size {text!r}, expected e.g. 7kx1000")
    number, unit, docs = match.groups()
    queries = round(float(number) * {"": 1, "k": 1_000, "m": 1_000_000}[unit])
    if queries < 1 or int(docs) < 1:
        raise argparse.ArgumentTypeError(f"bad size {text!r}: both parts must be >= 1")
    return Size(queries, int(docs))


def dataset_paths(size: Size, data_dir: Path = DATA_DIR) -> Dataset:
    """Where the files of ``size`` live."""
    stem = data_dir / size.label
    return Dataset(
        size,
        stem.with_name(f"{size.label}.run.trec"),
        stem.with_name(f"{size.label}.qrels.trec"),
        stem.with_name(f"{size.label}.meta.json"),
    )


def count_lines(path: Path, block: int = 1 << 24) -> int:
    """Count newline characters of a file, reading it in large blocks."""
    count = 0
    with open(path, "rb") as f:
        while chunk := f.read(block):
            count += chunk.count(b"\n")
    return count


def is_complete(ds: Dataset) -> bool:
    """True if the files of ``ds`` exist and have the recorded line counts."""
    if not (ds.run.exists() and ds.qrels.exists() and ds.meta.exists()):
        return False
    meta = json.loads(ds.meta.read_text())
    return (
        meta.get("format_version") == FORMAT_VERSION
        and meta.get("seed") == SEED
        and meta.get("run_lines") == ds.size.lines
        and count_lines(ds.run) == ds.size.lines
        and count_lines(ds.qrels) == meta.get("qrels_lines")
    )


# --------------------------------------------------------------------------
# Vectorised generation of one chunk of queries
# --------------------------------------------------------------------------


def distinct_doc_ids(rng: np.random.Generator, n_queries: int, n_docs: int) -> np.ndarray:
    """Doc ids per query, distinct within each row, each row sorted ascending."""
    ids = np.sort(rng.integers(0, CORPUS_SIZE, (n_queries, n_docs)), axis=1)
    while True:
        dup = ids[:, 1:] == ids[:, :-1]
        if not dup.any():
            return ids
        ids[:, 1:][dup] = rng.integers(0, CORPUS_SIZE, int(dup.sum()))
        ids.sort(axis=1)


def descending_scores(rng: np.random.Generator, n_queries: int, n_docs: int) -> np.ndarray:
    """BM25-like scores, strictly decreasing along each row, 4 decimals.

    Consecutive scores differ by at least 0.001 before rounding to 4
    decimals, so they stay distinct once written and parsed back.
    """
    top = rng.uniform(15.0, 30.0, (n_queries, 1))
    scale = 0.5 * top / n_docs
    gaps = 0.001 + rng.exponential(1.0, (n_queries, n_docs - 1)) * scale
    drop = np.concatenate([np.zeros((n_queries, 1)), np.cumsum(gaps, axis=1)], axis=1)
    return np.round(top - drop, 4)


def in_rows(sorted_rows: np.ndarray, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Whether ``values[i]`` occurs in ``sorted_rows[rows[i]]`` (rows sorted)."""
    flat = (np.arange(len(sorted_rows))[:, None] * CORPUS_SIZE + sorted_rows).ravel()
    keys = rows * CORPUS_SIZE + values
    pos = np.minimum(np.searchsorted(flat, keys), len(flat) - 1)
    return flat[pos] == keys


def judgments(
    rng: np.random.Generator, ranked: np.ndarray, sorted_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judged docs of a chunk: (query row, doc id, grade) arrays.

    ``ranked[i]`` holds the doc ids of query ``i`` in rank order and
    ``sorted_ids[i]`` the same ids sorted (for membership tests).
    """
    n_queries, n_docs = ranked.shape
    per_query = 1 + np.minimum(rng.poisson(2.5, n_queries), 9)
    row = np.repeat(np.arange(n_queries), per_query)
    first = np.concatenate([[0], np.cumsum(per_query)[:-1]])

    grade = rng.choice(len(GRADE_PROBS), size=len(row), p=GRADE_PROBS)
    grade[first] = rng.integers(1, 4, n_queries)  # every query has a relevant doc

    # Retrieved judged docs: a rank skewed to the top, distinct within a query.
    retrieved = rng.random(len(row)) < RETRIEVED_FRACTION
    rank = (n_docs * rng.random(len(row)) ** RANK_SKEW).astype(np.int64)
    key = row * n_docs + rank
    _, first_of_key = np.unique(key, return_index=True)
    unique_key = np.zeros(len(row), dtype=bool)
    unique_key[first_of_key] = True
    retrieved &= unique_key

    doc = np.empty(len(row), dtype=np.int64)
    doc[retrieved] = ranked[row[retrieved], rank[retrieved]]

    # Unretrieved judged docs: corpus ids absent from the query's run,
    # distinct within the query.
    todo = np.flatnonzero(~retrieved)
    while todo.size:
        doc[todo] = rng.integers(0, CORPUS_SIZE, todo.size)
        clash = in_rows(sorted_ids, row[todo], doc[todo])
        pair = row[todo] * CORPUS_SIZE + doc[todo]
        _, first_pair = np.unique(pair, return_index=True)
        repeated = np.ones(todo.size, dtype=bool)
        repeated[first_pair] = False
        todo = todo[clash | repeated]
    return row, doc, grade


def constant_column(value: str, n: int) -> pa.DictionaryArray:
    """A column repeating ``value`` ``n`` times, cheaply (dictionary encoded)."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), pa.array([value]))


RUN_SCHEMA = pa.schema(
    [
        ("qid", pa.string()),
        ("q0", pa.dictionary(pa.int8(), pa.string())),
        ("docid", pa.int64()),
        ("rank", pa.int32()),
        ("score", pa.string()),
        ("tag", pa.dictionary(pa.int8(), pa.string())),
    ]
)


def run_table(qids: pa.Array, ranked: np.ndarray, scores: np.ndarray) -> pa.Table:
    """The run lines of a chunk: ``qid Q0 docid rank score tag``."""
    n_queries, n_docs = ranked.shape
    n = n_queries * n_docs
    return pa.table(
        [
            qids.take(pa.array(np.repeat(np.arange(n_queries), n_docs))),
            constant_column("Q0", n),
            pa.array(ranked.ravel()),
            pa.array(np.tile(np.arange(1, n_docs + 1, dtype=np.int32), n_queries)),
            pc.cast(pa.array(scores.ravel()), pa.string()),
            constant_column(RUN_TAG, n),
        ],
        schema=RUN_SCHEMA,
    )


def qrels_table(qids: pa.Array, doc: np.ndarray, grade: np.ndarray) -> pa.Table:
    """The qrels lines ``qid 0 docid grade``, sorted by (qid, docid) as strings."""
    table = pa.table(
        {
            "qid": qids,
            "iter": constant_column("0", len(qids)),
            "docid": pc.cast(pa.array(doc), pa.string()),
            "grade": pa.array(grade.astype(np.int8)),
        }
    )
    return table.sort_by([("qid", "ascending"), ("docid", "ascending")])


def query_ids(rng: np.random.Generator, n_queries: int) -> pa.Array:
    """Distinct string query ids such as ``q1048585``, in random order."""
    space = max(QUERY_ID_SPACE, 2 * n_queries)
    numbers = rng.choice(space, n_queries, replace=False)
    return pc.binary_join_element_wise("q", pc.cast(pa.array(numbers), pa.string()), "")


def generate(size: Size, data_dir: Path = DATA_DIR, force: bool = False) -> Dataset:
    """Write the run and qrels of ``size`` unless they already exist."""
    ds = dataset_paths(size, data_dir)
    if not force and is_complete(ds):
        return ds
    if size.docs < 2:
        raise ValueError("need at least 2 docs per query")
    data_dir.mkdir(parents=True, exist_ok=True)
    ds.meta.unlink(missing_ok=True)

    rng = np.random.default_rng([SEED, size.queries, size.docs])
    qids = query_ids(rng, size.queries)
    per_chunk = max(1, CHUNK_LINES // size.docs)
    qrels_parts = []
    with pa_csv.CSVWriter(str(ds.run), RUN_SCHEMA, write_options=CSV_OPTIONS) as writer:
        for start in range(0, size.queries, per_chunk):
            chunk_qids = qids[start : start + per_chunk]
            n = len(chunk_qids)
            sorted_ids = distinct_doc_ids(rng, n, size.docs)
            ranked = rng.permuted(sorted_ids, axis=1)
            writer.write_table(run_table(chunk_qids, ranked, descending_scores(rng, n, size.docs)))
            row, doc, grade = judgments(rng, ranked, sorted_ids)
            qrels_parts.append((chunk_qids.take(pa.array(row)), doc, grade))

    qrels = qrels_table(
        pa.concat_arrays([p[0] for p in qrels_parts]),
        np.concatenate([p[1] for p in qrels_parts]),
        np.concatenate([p[2] for p in qrels_parts]),
    )
    pa_csv.write_csv(qrels, str(ds.qrels), write_options=CSV_OPTIONS)
    ds.meta.write_text(
        json.dumps(
            {
                "format_version": FORMAT_VERSION,
                "seed": SEED,
                "queries": size.queries,
                "docs_per_query": size.docs,
                "run_lines": size.lines,
                "qrels_lines": qrels.num_rows,
            },
            indent=2,
        )
    )
    return ds


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: generate the given sizes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="+", type=parse_size, help="e.g. 1kx100 7kx1000")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    args = parser.parse_args(argv)
    for size in args.sizes:
        t0 = time.perf_counter()
        ds = generate(size, args.data_dir, args.force)
        mb = ds.run.stat().st_size / 1e6
        print(
            f"{size.label}: {ds.run} ({mb:.1f} MB), {ds.qrels} [{time.perf_counter() - t0:.1f} s]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
