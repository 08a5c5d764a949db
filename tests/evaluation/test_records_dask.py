"""evaluate_records and attribute_failures on Dask: the single-machine report, number for number, on
records split over files whose per-system choices (given vs computed values, optional inputs,
columns a file lacks) can only be made right from all the files at once."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import evalsuite as es
from evalsuite.errors import EvalSuiteError
from evalsuite.evaluation.records_dask import attribute_failures_dask, evaluate_records_dask
from evalsuite.io.record_files import write_records
from evalsuite.records.table import concat_records

distributed = pytest.importorskip("distributed")


# Dask spawns worker processes: a bare __main__ for them, and the module's cluster.
from dask_fixtures import _plain_main, client  # noqa: E402,F401  (fixtures)

pytestmark = pytest.mark.usefixtures("_plain_main")


def _labels(rng, n, p_none=0.1):
    return [None if rng.random() < p_none else bool(rng.random() < 0.6) for _ in range(n)]


def _rows(seed: int = 5):
    """Three systems over 4 files: bm25 and dense with judgements (dense's answer_similarity only in
    file 0), ragas with given values only, bm25 with given faithfulness beside its judgements; file 3
    has no ranking lists and no retrieval latency at all."""
    rng = np.random.default_rng(seed)
    files = [[], [], [], []]
    for q in range(60):
        for system in ("bm25", "dense", "ragas"):
            shard = int(rng.integers(0, 4))
            row = {"query_id": f"q{q}", "system": system, "latency_ms": float(rng.lognormal(5, 0.7))}
            if rng.random() < 0.1:
                row["latency_ms"] = None
            if system == "ragas":
                row["faithfulness"] = None if rng.random() < 0.2 else float(rng.random())
                if shard in (0, 2) and row["faithfulness"] is not None and rng.random() < 0.7:  # a judge filled it
                    row["judge_provenance"] = json.dumps([{"column": "faithfulness", "judge": "llm",
                                                           "model": f"model-{shard}"}])
                row["success"] = bool(rng.random() < 0.7)
            else:
                n_ctx = int(rng.integers(1, 6))
                row["context_useful"] = _labels(rng, n_ctx)
                row["answer_claims_supported"] = _labels(rng, int(rng.integers(0, 5)))
                row["reference_claims_supported"] = _labels(rng, int(rng.integers(1, 4)), 0.0)
                row["answer_claims_in_reference"] = _labels(rng, int(rng.integers(1, 4)), 0.0)
                row["reference_claims_in_answer"] = _labels(rng, int(rng.integers(1, 4)), 0.0)
                row["success"] = None if rng.random() < 0.1 else bool(rng.random() < 0.6)
                if rng.random() < 0.2:
                    row["error"] = "ReadTimeout after 30 s"
                if rng.random() < 0.15:
                    row["failure_stage"] = "generation"
                if system == "dense" and shard == 0:
                    row["answer_similarity"] = float(rng.random())
                if system == "bm25":
                    row["faithfulness"] = float(rng.random())
                if shard != 3:
                    row["context_ids"] = [f"d{int(d)}" for d in rng.choice(30, n_ctx, replace=False)]
                    row["relevant_ids"] = {f"d{int(d)}": int(rng.integers(0, 3)) for d in rng.choice(30, 3, replace=False)}
                    row["latency_retrieval_ms"] = float(rng.lognormal(3, 0.5))
            files[shard].append(row)
    return files


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("records_shards")
    paths = []
    for i, rows in enumerate(_rows()):
        path = folder / f"part-{i}.parquet"
        write_records(es.Records.from_rows(rows, source=path.name), path)
        paths.append(str(path))
    return folder, paths


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _params_equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float):
            assert _same(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def test_records_report_equals_one_machine(client, shards, tmp_path):
    folder, paths = shards
    single = es.evaluate_records(concat_records([es.read_records(p) for p in paths]))
    plans = []
    dist = evaluate_records_dask(str(folder / "part-*.parquet"), scheduler=client, per_query_output=tmp_path / "pq",
                                 on_plan=plans.append)
    # the per-system choices that need every file: dense's similarity (file 0 only), given vs computed
    assert single.params["metric_sources"]["ragas"]["faithfulness"].startswith(
        "filled by the llm judge (model-0), the llm judge (model-2); ")  # judges named in two files, summed
    assert single.scores["dense"]["answer_correctness"].params["inputs"] == "with answer_similarity"
    assert any("bm25: faithfulness computed from its judgement lists" in w for w in single.warnings)
    assert dist.metrics == single.metrics and dist.systems == single.systems
    for system in single.systems:
        for metric in single.metrics:
            a, b = dist.scores[system][metric], single.scores[system][metric]
            assert _same(float(a), float(b)), (system, metric)
            _params_equal(a.params, b.params)
        assert float(dist.task_success[system]) == float(single.task_success[system])
        _params_equal(dist.task_success[system].params, single.task_success[system].params)
        assert float(dist.failures[system]) == float(single.failures[system])
        assert dist.failures[system].params == single.failures[system].params
    pd.testing.assert_frame_equal(dist.latency_table, single.latency_table, check_exact=True)
    pd.testing.assert_frame_equal(dist.failure_table, single.failure_table, check_exact=True)
    assert dist.warnings == single.warnings
    extra = {"engine", "partitions", "partitions_reason", "per_query_files"}
    assert {k: v for k, v in dist.params.items() if k not in extra} == {
        k: v for k, v in single.params.items()}
    assert dist.params["partitions"] == 4 and plans and plans[0].startswith("4 partitions, one per file")
    per_query = pd.concat([pd.read_parquet(p) for p in dist.params["per_query_files"]], ignore_index=True)
    pd.testing.assert_frame_equal(per_query, single.per_query, check_exact=True)
    assert list(dist.per_query.columns) == list(single.per_query.columns) and dist.per_query.empty
    # the corpus value is the exact mean of the defined values, rounded once
    values = single.scores["bm25"]["context_precision"].per_query
    assert float(single.scores["bm25"]["context_precision"]) == pytest.approx(np.nanmean(values), abs=1e-15)


def test_attribute_failures_equals_one_machine(client, shards, tmp_path):
    folder, paths = shards
    single = es.attribute_failures(concat_records([es.read_records(p) for p in paths]))
    counts = attribute_failures_dask(str(folder), tmp_path / "out", scheduler=client)
    parts = sorted((tmp_path / "out").glob("part-*.parquet"))
    got = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(got, single, check_exact=True, check_dtype=False)
    expected = single.astype(object).where(single.notna(), None).value_counts(
        ["system", "stage", "rule", "attributed"], dropna=False)
    assert {tuple(r[:4]): r[4] for r in counts.itertuples(index=False)} == {
        tuple(None if v != v else v for v in key): n for key, n in expected.items()}
    assert counts["count"].sum() == len(single)
    with pytest.raises(EvalSuiteError, match="new or empty"):
        attribute_failures_dask(str(folder), tmp_path / "out", scheduler=client)


def test_a_query_in_two_files_is_named(client, tmp_path):
    for i in range(2):
        write_records(es.Records.from_rows([{"query_id": "q1", "system": "a", "latency_ms": 10.0 + i},
                                               {"query_id": f"only{i}", "system": "a", "latency_ms": 1.0}],
                                              source=f"r{i}.parquet"), tmp_path / f"r{i}.parquet")
    with pytest.raises(EvalSuiteError, match=r"system 'a' has query_id 'q1' in more than one file "
                                             r"\(r0.parquet row 1 and r1.parquet row 1\)"):
        evaluate_records_dask(str(tmp_path / "r*.parquet"), scheduler=client)
