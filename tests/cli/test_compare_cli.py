"""``evalsuite compare``: the comparison gate's report and exit codes (0 passed, 1 regression, 2 bad input).

Which rows fail the gate is checked against the report's own table recomputed by hand (significant
and in the wrong direction for the metric), and the table's numbers are pinned against scipy and
ranx in test_compare.py.
"""

import json
import subprocess
import sys

import pytest
from conftest import CRANFIELD, ROOT, SAMPLE

import evalsuite as es
import evalsuite.cli as cli

QRELS, BM25, BM25L = CRANFIELD / "qrels.trec", CRANFIELD / "run_bm25.trec", CRANFIELD / "run_bm25l.trec"
FAST = ["--n-resamples", "2000"]


def gate(capsys, *args):
    code = cli.main(["compare", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_significant_regression_fails_the_build_in_a_real_process():
    result = subprocess.run([sys.executable, "-m", "evalsuite", "compare", str(QRELS), str(BM25), str(BM25L),
                             "-m", "ndcg@10", "-m", "map@100", *FAST], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert "run_bm25l is significantly worse than run_bm25 on both metrics (permutation, Holm, alpha 0.05)." \
        in result.stdout
    assert "gate: FAILED (significant-regression)" in result.stdout
    assert "run_bm25l on ndcg@10: 0.2726 vs 0.3599 (diff -0.0873" in result.stdout


def test_improvement_passes_and_never_only_reports(capsys):
    code, out, _ = gate(capsys, QRELS, BM25L, BM25, "-m", "ndcg@10", *FAST)
    assert code == 0 and "gate: passed" in out and "significantly better than run_bm25l" in out
    code, out, _ = gate(capsys, QRELS, BM25, BM25L, "-m", "ndcg@10", "--fail-on", "never", *FAST)
    assert code == 0 and "gate:" not in out and "significantly worse" in out


def _tiny_runs(tmp_path):
    """Ten queries; the system loses the relevant doc's top rank on one query only: worse, not significant."""
    qrels = tmp_path / "qrels.trec"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(10)))
    base = tmp_path / "base.trec"
    base.write_text("".join(f"q{i} Q0 d{i} 1 2.0 base\nq{i} Q0 x{i} 2 1.0 base\n" for i in range(10)))
    new = tmp_path / "new.trec"
    new.write_text("".join(f"q{i} Q0 {'x' if i == 0 else 'd'}{i} 1 2.0 new\nq{i} Q0 {'d' if i == 0 else 'x'}{i} 2 1.0 new\n"
                           for i in range(10)))
    return qrels, base, new


def test_any_regression_fails_on_a_worse_mean_that_is_not_significant(tmp_path, capsys):
    qrels, base, new = _tiny_runs(tmp_path)
    # mrr: 1.0 on every query for base; new 0.5 on q0: diff -0.05, exact sign-flip p = 1.0.
    code, out, _ = gate(capsys, qrels, base, new, "-m", "mrr")
    assert code == 0 and "not significantly different from base on mrr" in out
    code, out, _ = gate(capsys, qrels, base, new, "-m", "mrr", "--fail-on", "any-regression")
    assert code == 1 and "new on mrr: 0.9500 vs 1.0000 (diff -0.0500, p adj 1)" in out


def test_failing_rows_are_the_significant_rows_in_the_wrong_direction(capsys):
    three = [QRELS, BM25, BM25L, BM25]  # BM25 twice is refused: the same run given twice
    code, _, err = gate(capsys, *three, *FAST)
    assert code == 2 and "twice" in err
    report = es.compare(QRELS, {"run_bm25": BM25, "run_bm25l": BM25L}, n_resamples=2000)
    expected = report.table[(report.table["p_adjusted"] <= 0.05) & (report.table["diff"] < 0)]
    assert list(report.regressions()["metric"]) == list(expected["metric"]) == list(report.metrics)
    code, out, err = gate(capsys, QRELS, BM25, BM25L, "--format", "json", *FAST)
    rows = json.loads(out)["rows"]
    assert code == 1 and [r["metric"] for r in rows if r["significant"]] == list(expected["metric"])
    assert "gate: FAILED" in err and "significantly worse" in err


def test_records_gate_and_direction_of_latency(tmp_path, capsys):
    records = SAMPLE / "rag" / "ragtruth_qa.jsonl"
    report = es.compare_records(es.evaluate_records(es.read_records(records)), "faithfulness",
                                ["gpt-4-0613", "llama-2-7b-chat"])
    worse = bool(report.table["significant"].iloc[0] and report.table["diff"].iloc[0] < 0)
    code, out, _ = gate(capsys, "--records", records, "gpt-4-0613", "llama-2-7b-chat", "-m", "faithfulness")
    assert code == (1 if worse else 0) and "llama-2-7b-chat" in out
    # Latency: lower is better, so a slower system is the regression.
    rows = [{"system": s, "query_id": f"r{i}", "latency_ms": 100.0 + i + (50.0 if s == "slow" else 0.0)}
            for s in ("fast", "slow") for i in range(12)]
    path = tmp_path / "latency.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = gate(capsys, "--records", path, "fast", "slow", "-m", "latency_ms", *FAST)
    assert code == 1 and "slow is significantly worse than fast on latency_ms" in out
    code, out, _ = gate(capsys, "--records", path, "slow", "fast", "-m", "latency_ms", *FAST)
    assert code == 0 and "fast is significantly better than slow on latency_ms" in out


@pytest.mark.parametrize("args,message", [
    (["nope.trec", BM25, BM25L], "nope.trec"),
    ([QRELS, BM25, BM25L, "-m", "ndcg@ten"], "ndcg@ten"),
    ([QRELS, BM25, BM25L, "--alpha", "2"], "alpha"),
    (["--records", SAMPLE / "rag" / "ragtruth_qa.jsonl", "gpt-4-0613", "no-such-system"], "no-such-system"),
])
def test_bad_input_exits_2_with_the_value_named(capsys, args, message):
    code, _, err = gate(capsys, *args)
    assert code == 2 and message in err and "Traceback" not in err
