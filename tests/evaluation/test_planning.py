"""The Dask engine's partition plan: row estimates from samples of the files, a partition count that
follows the workers' memory, and shuffle keys that spread queries evenly (evalsuite.evaluation.planning,
evalsuite.evaluation.shards)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalsuite.evaluation.planning import (
    PEAK_PER_FRAME_BYTE, TASK_SHARE, block_bytes_for, estimate_rows, plan_partitions,
)
from evalsuite.evaluation.shards import _partition_of, _read_shard, pieces

dd = pytest.importorskip("dask.dataframe")


def _lines(n_queries: int, per_query: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for q in rng.permutation(n_queries):
        docs = rng.choice(9_000_000, per_query, replace=False)
        scores = np.sort(rng.random(per_query))[::-1] * 30
        out += [f"q{1_000_000 + q} Q0 {d} {r + 1} {s:.4f} bm25\n" for r, (d, s) in enumerate(zip(docs, scores))]
    return out


def test_shuffle_keys_spread_queries_evenly_over_dasks_partitions():
    # Dask hashes the key again modulo the partition count. A key reduced modulo that count
    # (the first version) left a third of the partitions empty and tripled others.
    from dask.dataframe.shuffle import partitioning_index

    ids = pa.array([f"q{i}" for i in range(20_000)])
    keys = _partition_of(ids)
    assert keys.dtype == np.int32 and keys.min() >= 0
    for n in (20, 40):
        sizes = np.bincount(partitioning_index(pd.DataFrame({"_p": keys}), n), minlength=n)
        assert sizes.min() >= 0.8 * 20_000 / n and sizes.max() <= 1.2 * 20_000 / n, sizes
        reduced = np.bincount(partitioning_index(pd.DataFrame({"_p": keys % n}), n), minlength=n)
        assert (reduced == 0).sum() >= n // 5  # what the old key did
    # The same query gets the same key in every shard, whatever its neighbours.
    assert _partition_of(pa.array(["q7", "q1"]))[0] == keys[7]


def test_rows_are_estimated_from_a_sample_of_gzip_shards_blocks_and_parquet(tmp_path):
    lines = _lines(600, 100)
    for i in range(6):
        (tmp_path / f"run.{i}.trec.gz").write_bytes(gzip.compress("".join(lines[i * 10_000:(i + 1) * 10_000]).encode(),
                                                                  compresslevel=1))
    shards = sorted(str(p) for p in tmp_path.glob("run.*.trec.gz"))
    rows, frame_bytes, largest = estimate_rows(shards)
    assert abs(rows - 60_000) <= 0.05 * 60_000
    # The frame bytes a row: what a worker's frame of a whole shard measures.
    frame, _ = _read_shard(shards[0], 0, "run", None)
    assert frame_bytes == pytest.approx(frame.memory_usage(deep=True, index=False).sum() / len(frame), rel=0.05)
    assert largest == pytest.approx(len("".join(lines[:10_000])), rel=0.05)
    # Blocks of one plain file.
    whole = tmp_path / "whole.trec"
    whole.write_text("".join(lines))
    blocks = pieces([str(whole)], whole.stat().st_size // 5)
    assert len(blocks) >= 5
    assert abs(estimate_rows(blocks)[0] - 60_000) <= 0.05 * 60_000
    # Parquet: rows from the footers.
    folder = tmp_path / "pq"
    folder.mkdir()
    table = pa.table({"query_id": [ln.split()[0] for ln in lines], "doc_id": [ln.split()[2] for ln in lines],
                      "score": [float(ln.split()[4]) for ln in lines]})
    for i in range(3):
        pq.write_table(table.slice(i * 20_000, 20_000), folder / f"part-{i}.parquet")
    rows, frame_bytes, largest = estimate_rows(sorted(str(p) for p in folder.glob("*.parquet")))
    assert abs(rows - 60_000) <= 0.02 * 60_000 and 25 < frame_bytes < 60 and largest == 0
    # Nothing parses: no estimate (the engine then plans one partition per input).
    (tmp_path / "junk.trec").write_bytes(b"\x00\x01 not a run\n")
    assert estimate_rows([str(tmp_path / "junk.trec")])[:2] == (None, None)


def test_the_partition_count_follows_the_workers_memory():
    rows, frame_bytes = 100_000_000, 42.0
    plan = plan_partitions(None, 20, rows, frame_bytes, 4 << 30, 2, 2, 170 << 20, "shards")
    held = rows / plan.partitions * frame_bytes * PEAK_PER_FRAME_BYTE
    assert held <= TASK_SHARE * (4 << 30) < rows / (plan.partitions - 1) * frame_bytes * PEAK_PER_FRAME_BYTE
    assert plan.reason.startswith(f"{plan.partitions} partitions of about 3.1 million rows: 20 shards, about "
                                  "100.0 million rows of 42 bytes in the shuffle")
    assert "(2 workers, 4.0 GiB per thread)" in plan.reason and "warning" not in plan.reason
    # Half the memory per thread: twice the partitions.
    assert plan_partitions(None, 20, rows, frame_bytes, 2 << 30, 2, 2).partitions == 63  # ceil(31.3 x 2)
    # A small run: one partition per thread, not one per shard.
    small = plan_partitions(None, 50, 200_000, frame_bytes, 4 << 30, 2, 4)
    assert small.partitions == 4 and "at least one partition per thread" in small.reason
    # Asked for, or nothing known.
    assert plan_partitions(7, 20, rows, frame_bytes, 4 << 30, 2, 2).reason.startswith("7 partitions, as asked")
    unknown = plan_partitions(None, 6, None, None, 4 << 30, 2, 2, what="input partitions")
    assert unknown.partitions == 6 and "the input's size is unknown" in unknown.reason
    # A gzip shard too large to read on a worker is named (it cannot be cut).
    assert "warning: reading the largest input" in plan_partitions(None, 1, rows, frame_bytes, 1 << 30, 1, 1,
                                                                   1 << 30).reason


def test_blocks_of_a_plain_file_shrink_with_the_workers_memory():
    assert block_bytes_for(4 << 30, 128 << 20) == 128 << 20
    assert block_bytes_for(256 << 20, 128 << 20) == int((256 << 20) / 4 / 3.4)
    assert block_bytes_for(16 << 20, 128 << 20) == 8 << 20
    assert block_bytes_for(None, 128 << 20) == 128 << 20


def test_a_default_run_reports_its_plan(tmp_path: Path):
    import distributed

    from evalsuite.evaluation.distributed import evaluate_dask

    lines = _lines(300, 50, seed=3)
    for i in range(3):
        (tmp_path / f"run.{i}.trec.gz").write_bytes(gzip.compress("".join(lines[i * 5_000:(i + 1) * 5_000]).encode()))
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("".join(f"{ln.split()[0]} 0 {ln.split()[2]} 1\n" for ln in lines[::40]))
    plans = []
    with distributed.Client(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0",
                            memory_limit="2GiB") as client:
        report = evaluate_dask(str(qrels), str(tmp_path / "run.*.trec.gz"), ["map", "P_10"], scheduler=client,
                               on_plan=plans.append)
    (plan,) = plans
    # 15,000 rows of about 40 bytes x 4 fit 1/8 of 1 GiB per thread many times: one partition per thread.
    assert plan.partitions == 2 and 14_000 <= plan.rows <= 16_000
    assert report.params["partitions"] == 2 and report.params["partitions_reason"] == plan.reason
    assert plan.reason.startswith("2 partitions of about") and "3 shards" in plan.reason
