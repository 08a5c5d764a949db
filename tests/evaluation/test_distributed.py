"""engine="dask": the same per-query values and means as the single-machine path, bit for bit,
whatever the partitioning; errors naming shard and line; a worker killed mid-run changes nothing."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalsuite as es
from evalsuite.evaluation.distributed import evaluate_dask, shard_paths

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parents[2]
METRICS = ["ndcg@10", "ndcg_burges@10", "ndcg", "map@100", "map", "mrr@10", "mrr", "P_5", "precision@20",
           "recall_100", "hit_rate@10", "judged@10"]


# Dask spawns worker processes: a bare __main__ for them, and the module's cluster.
from dask_fixtures import _plain_main, client  # noqa: E402,F401  (fixtures)

pytestmark = pytest.mark.usefixtures("_plain_main")


def _seeded(seed: int = 17):
    """A run with ties (scores on a coarse grid), queries split over shards, run queries without
    qrels and qrels queries without run lines, graded qrels (0..3, some queries with no relevant)."""
    rng = np.random.default_rng(seed)
    run_rows = []
    for q in range(10, 130):
        docs = rng.choice(400, size=int(rng.integers(1, 60)), replace=False)
        for d in docs:
            run_rows.append((f"q{q}", f"D{d}", float(rng.integers(0, 8)) / 4))  # many ties
    qrels_rows = []
    for q in range(0, 120):
        docs = rng.choice(400, size=int(rng.integers(1, 25)), replace=False)
        for d in docs:
            qrels_rows.append((f"q{q}", f"D{d}", int(rng.choice([0, 0, 1, 2, 3]))))
    order = rng.permutation(len(run_rows))
    return [run_rows[i] for i in order], qrels_rows


def _write_shards(folder: Path, run_rows, n_shards: int, gz: bool = True) -> str:
    chunks = np.array_split(np.arange(len(run_rows)), n_shards)
    for i, rows in enumerate(chunks):
        text = "".join(f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in (run_rows[r] for r in rows))
        path = folder / f"run.{i:02d}.trec{'.gz' if gz else ''}"
        path.write_bytes(gzip.compress(text.encode(), mtime=0) if gz else text.encode())
    return str(folder / f"run.*.trec{'.gz' if gz else ''}")


def _write_qrels(folder: Path, qrels_rows) -> str:
    path = folder / "qrels.trec"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    return str(path)


def _single(tmp_path: Path, run_rows, qrels: str, **kwargs) -> es.EvaluationReport:
    path = tmp_path / "whole.trec"
    path.write_text("".join(f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in run_rows))
    return es.evaluate(qrels, str(path), METRICS, **kwargs)


def _assert_same(dask_report, single):
    pd.testing.assert_frame_equal(dask_report.per_query, single.per_query, check_exact=True)
    assert dask_report.per_query.index.tolist() == single.per_query.index.tolist()
    assert dask_report.means == single.means  # exact, not a tolerance
    for name, score in single.scores.items():
        assert np.array_equal(dask_report.scores[name].per_query, score.per_query)
        assert dask_report.scores[name].params["n_defined"] == score.params["n_defined"]
    assert dask_report.dropped_queries == single.dropped_queries
    assert dask_report.defaulted_queries == single.defaulted_queries
    assert dask_report.no_relevant_queries == single.no_relevant_queries
    assert dask_report.conventions == single.conventions


@pytest.mark.parametrize("partitions", [1, 2, 5, 13])
def test_sharded_gzip_run_gives_the_single_machine_numbers_for_any_partition_count(tmp_path, client, partitions):
    run_rows, qrels_rows = _seeded()
    pattern = _write_shards(tmp_path, run_rows, 4)
    qrels = _write_qrels(tmp_path, qrels_rows)
    single = _single(tmp_path, run_rows, qrels)
    assert single.defaulted_queries and single.dropped_queries and single.no_relevant_queries
    report = es.evaluate(qrels, pattern, METRICS, engine="dask", scheduler=client) if partitions == 1 else \
        evaluate_dask(qrels, pattern, METRICS, scheduler=client, partitions=partitions)
    _assert_same(report, single)
    assert report.params["engine"] == "dask" and report.params["run_name"] == "tag"


@pytest.mark.parametrize("queries,rel_level", [("intersection", 1), ("qrels", 2), ("intersection", 3)])
def test_query_policies_and_rel_level_match(tmp_path, client, queries, rel_level):
    run_rows, qrels_rows = _seeded(5)
    pattern = _write_shards(tmp_path, run_rows, 3, gz=False)
    qrels = _write_qrels(tmp_path, qrels_rows)
    single = _single(tmp_path, run_rows, qrels, queries=queries, rel_level=rel_level)
    report = evaluate_dask(qrels, pattern, METRICS, queries=queries, rel_level=rel_level, scheduler=client,
                           partitions=4)
    _assert_same(report, single)
    assert report.warnings == [w for w in single.warnings]


def test_parquet_folder_and_dask_dataframe_inputs(tmp_path, client, caplog):
    run_rows, qrels_rows = _seeded(8)
    qrels = _write_qrels(tmp_path, qrels_rows)
    single = _single(tmp_path, run_rows, qrels)
    frame = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    folder = tmp_path / "run.parquet"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_parquet(folder / f"part-{i}.parquet", index=False)
    _assert_same(evaluate_dask(qrels, str(folder), METRICS, scheduler=client, partitions=3), single)
    ddf = dd.from_pandas(frame, npartitions=4)
    with caplog.at_level(logging.INFO, logger="evalsuite.distributed"):
        _assert_same(evaluate_dask(qrels, ddf, METRICS, scheduler=client, partitions=2), single)
    progress = [r.getMessage() for r in caplog.records if r.name == "evalsuite.distributed"]
    assert progress == ["dask: 2 partitions, as asked (4 input partitions; 2 workers, 1.0 GiB per thread)",
                        "dask: 1/2 partitions evaluated", "dask: 2/2 partitions evaluated"]


def test_duplicate_across_shards_names_both_shards_and_lines(tmp_path, client):
    (tmp_path / "run.1.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "run.2.trec").write_text("q2 Q0 d1 1 2.0 t\n# a comment\nq1 Q0 d1 1 0.5 t\n")
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\n")
    with pytest.raises(es.EvalSuiteError) as info:
        evaluate_dask(str(qrels), str(tmp_path / "run.*.trec"), "P_5", scheduler=client, partitions=2)
    message = str(info.value)
    assert message.startswith("run.2.trec, line 3, field 'doc_id', value 'd1': doc 'd1' appears twice for query 'q1'")
    assert "(run.1.trec line 1 and run.2.trec line 3;" in message and "remove one of the lines" in message
    assert info.value.source == "run.2.trec" and info.value.line == 3
    # duplicates="max" keeps the higher score, as the single-machine reader does.
    report = evaluate_dask(str(qrels), str(tmp_path / "run.*.trec"), "P_5", scheduler=client, duplicates="max")
    assert report.per_query["P_5"].tolist() == [0.2, 0.2]


def test_bad_line_in_a_shard_names_the_shard_and_line(tmp_path, client):
    (tmp_path / "run.a.trec").write_text("q1 Q0 d1 1 2.0 t\n")
    (tmp_path / "run.b.trec.gz").write_bytes(gzip.compress(b"q1 Q0 d2 1 2.0 t\nq1 Q0 d3 1 abc t\n"))
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("q1 0 d1 1\n")
    with pytest.raises(es.EvalSuiteError) as info:
        evaluate_dask(str(qrels), str(tmp_path / "run.*"), "P_5", scheduler=client)
    assert str(info.value) == "run.b.trec.gz, line 2, field 'score', value 'abc': the score must be a number"


def test_no_common_query_and_bad_arguments(tmp_path, client):
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 t\n")
    (tmp_path / "qrels.trec").write_text("q9 0 d1 1\n")
    with pytest.raises(es.EvalSuiteError, match="no query to evaluate"):
        evaluate_dask(str(tmp_path / "qrels.trec"), str(tmp_path / "run.trec"), "P_5", scheduler=client)
    with pytest.raises(es.EvalSuiteError, match="no file matches"):
        shard_paths(tmp_path / "nothing.*.trec")
    with pytest.raises(es.EvalSuiteError, match="engine must be"):
        es.evaluate({}, {}, "P_5", engine="spark")


def _slow(part):
    time.sleep(0.4)
    return part


@pytest.mark.slow  # 8-14 s: a cluster of its own, a worker restarted
@pytest.mark.parametrize("shuffle_method", ["p2p", "tasks"])
def test_a_worker_killed_mid_run_gives_the_same_numbers(tmp_path, shuffle_method):
    run_rows, qrels_rows = _seeded(3)
    qrels = _write_qrels(tmp_path, qrels_rows)
    single = _single(tmp_path, run_rows, qrels)
    frame = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    ddf = dd.from_pandas(frame, npartitions=8).map_partitions(_slow)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        pids = c.run(os.getpid)
        victim, pid = sorted(pids.items())[0]
        out: dict = {}
        worker = threading.Thread(target=lambda: out.update(report=evaluate_dask(
            qrels, ddf, METRICS, scheduler=c, partitions=3, shuffle_method=shuffle_method)))
        worker.start()
        time.sleep(0.9)  # inside the 8 x 0.4 s of reading on 2 workers
        assert worker.is_alive(), "the run ended before the worker could be killed"
        os.kill(pid, signal.SIGKILL)
        worker.join(120)
        assert not worker.is_alive()
        assert pid not in c.run(os.getpid).values()  # the worker was killed (its nanny started another)
    _assert_same(out["report"], single)


def test_the_core_package_does_not_import_dask():
    code = "import sys, evalsuite, evalsuite.cli; print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_command_line_engine_dask(tmp_path):
    run_rows, qrels_rows = _seeded(11)
    pattern = _write_shards(tmp_path, run_rows, 3)
    qrels = _write_qrels(tmp_path, qrels_rows)
    (tmp_path / "whole.trec").write_text("".join(f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in run_rows))
    args = [qrels, "-m", "map", "-m", "ndcg_cut.10", "-m", "P.5,10", "-q"]
    local = subprocess.run([sys.executable, "-m", "evalsuite", args[0], str(tmp_path / "whole.trec"), *args[1:]],
                           cwd=REPO, capture_output=True, text=True, check=True)
    dask = subprocess.run([sys.executable, "-m", "evalsuite", "--engine", "dask", "--workers", "1", args[0], pattern,
                           *args[1:]], cwd=REPO, capture_output=True, text=True, check=True)
    assert dask.stdout == local.stdout
    assert "Completed" in dask.stderr or "%" in dask.stderr  # Dask's progress bar
    # How it partitioned and why: one worker with the machine's memory needs one partition.
    assert re.search(r"evalsuite: dask: 1 partition of about [0-9,]+ rows: 3 shards, about [0-9,]+ rows of [0-9]+ "
                     r"bytes in the shuffle; .* \(1 worker, [0-9.]+ GiB per thread\)", dask.stderr), dask.stderr


def test_a_large_plain_file_is_read_in_blocks_with_the_files_line_numbers(tmp_path, client):
    run_rows, qrels_rows = _seeded(21)
    qrels = _write_qrels(tmp_path, qrels_rows)
    single = _single(tmp_path, run_rows, qrels)
    whole = str(tmp_path / "whole.trec")
    size = os.path.getsize(whole)
    report = evaluate_dask(qrels, whole, METRICS, scheduler=client, block_bytes=size // 7, partitions=3)
    _assert_same(report, single)
    from evalsuite.evaluation.shards import pieces as cut

    pieces = cut([whole], size // 7)
    assert len(pieces) >= 7 and pieces[0][1] == 0 and pieces[-1][2] == size
    assert all(a[2] == b[1] for a, b in zip(pieces, pieces[1:]))  # contiguous, cut after a line break
    data = Path(whole).read_bytes()
    assert all(data[p[1] - 1:p[1]] == b"\n" for p in pieces[1:])
    # A bad score and a duplicate deep in the file: the file's own line numbers.
    lines = data.decode().splitlines(keepends=True)
    bad = lines.copy()
    bad[len(lines) - 5] = "q1 Q0 D1 1 abc tag\n"
    Path(whole).write_text("".join(bad))
    with pytest.raises(es.EvalSuiteError) as info:
        evaluate_dask(qrels, whole, "P_5", scheduler=client, block_bytes=size // 7)
    assert str(info.value) == f"whole.trec, line {len(lines) - 4}, field 'score', value 'abc': the score must be a number"
    q, d, _ = lines[3].split(" ")[0], lines[3].split(" ")[2], None
    dup = lines + [f"{q} Q0 {d} 1 9.5 tag\n"]
    Path(whole).write_text("".join(dup))
    with pytest.raises(es.EvalSuiteError) as info:
        evaluate_dask(qrels, whole, "P_5", scheduler=client, block_bytes=size // 7)
    assert f"(whole.trec line 4 and whole.trec line {len(dup)};" in str(info.value)
    assert info.value.line == len(dup)


def test_command_line_scheduler_address_connects_to_a_running_cluster(tmp_path, client, capsys):
    from evalsuite.cli import main

    run_rows, qrels_rows = _seeded(12)
    pattern = _write_shards(tmp_path, run_rows, 2)
    qrels = _write_qrels(tmp_path, qrels_rows)
    single = _single(tmp_path, run_rows, qrels)
    assert main(["--scheduler", client.scheduler.address, qrels, pattern, "-m", "map", "--format", "json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["means"]["map"] == single.means["map"]
    assert report["per_query"] == {q: {"map": v} for q, v in single.per_query["map"].items()}
    assert report["params"]["engine"] == "dask"
    assert main(["--scheduler", client.scheduler.address, qrels, str(tmp_path / "none.*.trec"), "-m", "map"]) == 2
    assert "none.*.trec: no file matches this pattern" in capsys.readouterr().err


def test_a_dask_dataframe_with_a_missing_id_or_a_nan_score_is_an_error_naming_the_partition(tmp_path, client):
    qrels = {"q1": {"d1": 1}}
    frame = pd.DataFrame({"query_id": ["q1", "q1", None], "doc_id": ["d1", "d2", "d3"], "score": [1.0, 0.5, 0.2]})
    with pytest.raises(es.EvalSuiteError, match="missing id"):
        evaluate_dask(qrels, dd.from_pandas(frame, npartitions=1), "P_5", scheduler=client)
    frame = pd.DataFrame({"qid": ["q1", "q1", "q1"], "docno": ["d1", "d2", "d3"], "score": [1.0, float("nan"), 0.2]})
    with pytest.raises(es.EvalSuiteError) as info:
        evaluate_dask(qrels, dd.from_pandas(frame, npartitions=1), "P_5", scheduler=client)
    assert str(info.value).startswith("run data frame partition 0, row 2, field 'score'")


def test_trec_eval_corpus_values_and_max_docs_match(tmp_path, client):
    # trec_eval's summed counts and geometric means, and -M, through the same report assembly.
    run_rows, qrels_rows = _seeded(23)
    pattern = _write_shards(tmp_path, run_rows, 3)
    qrels = _write_qrels(tmp_path, qrels_rows)
    names = ["num_ret", "num_rel_ret", "gm_map", "bpref", "P_5"]
    path = tmp_path / "whole.trec"
    path.write_text("".join(f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in run_rows))
    single = es.evaluate(qrels, str(path), names, max_docs=7)
    report = evaluate_dask(qrels, pattern, names, scheduler=client, partitions=3, max_docs=7)
    _assert_same(report, single)
    assert float(report.scores["num_ret"]) == float(single.per_query["num_ret"].sum())
    assert report.params["max_docs"] == 7 and report.to_trec_eval() == single.to_trec_eval()
