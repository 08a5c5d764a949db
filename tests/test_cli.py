"""The command line prints what trec_eval prints, so the two can be diffed."""

import json
import subprocess
import sys

from conftest import CRANFIELD, ROOT, TREC, read_trec_eval_output

import evalsuite.cli as cli


def _run(*args):
    return subprocess.run([sys.executable, "-m", "evalsuite", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_default_output_equals_trec_eval_lines_for_the_same_measures():
    result = _run(TREC / "qrels.test", TREC / "results.test")
    assert result.returncode == 0, result.stderr
    expected = [line for line in (TREC / "out.test").read_text().splitlines()
                if line.split()[0] in {"runid", "num_q", "map", "recip_rank"} or line.startswith("P_")]
    assert result.stdout.splitlines() == expected


def test_per_query_rows_with_dash_q_and_dash_c():
    result = _run(TREC / "qrels.test", TREC / "results.trunc", "-q", "-c", "-m", "map", "-m", "P.5,10", "-m", "ndcg_cut.10")
    assert result.returncode == 0
    expected = read_trec_eval_output(TREC / "out.test.aqc")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    measured = {(m.strip(), q): v for m, q, v in rows if m.strip() not in ("runid", "num_q")}
    assert measured and all(expected[key] == value for key, value in measured.items())
    assert {q for (_, q) in measured} == {"301", "302", "303", "all"}
    assert "after the run tag" in result.stderr  # the reader's note is shown, not silent


def test_csv_and_json_formats():
    csv_out = _run(CRANFIELD / "qrels.trec", CRANFIELD / "run_bm25.trec", "-m", "ndcg@10", "--format", "csv").stdout
    header, mean_row = csv_out.splitlines()
    assert header == "query_id,ndcg@10" and mean_row.startswith("all,0.3599")
    data = json.loads(_run(CRANFIELD / "qrels.trec", CRANFIELD / "run_bm25.trec", "-m", "map", "--format", "json").stdout)
    assert round(data["means"]["map"], 4) == 0.2877 and len(data["per_query"]) == 225


def test_bad_input_is_a_message_and_exit_code_2():
    result = _run(TREC / "results.test", TREC / "results.test")
    assert result.returncode == 2
    assert result.stderr.startswith("evalsuite: error: results.test, line 1") and "Traceback" not in result.stderr
    result = _run(TREC / "qrels.test", TREC / "results.test", "-m", "bpref")
    assert result.returncode == 2 and "unknown metric" in result.stderr


def test_measure_families_expand_like_trec_eval():
    assert cli.expand_measures(["P"]) == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert cli.expand_measures(["P.5,10", "ndcg@10", "P_5"]) == ["P_5", "P_10", "ndcg@10"]


def test_measures_print_in_trec_eval_order_whatever_the_m_order():
    result = _run(TREC / "qrels.test", TREC / "results.test", "-m", "ndcg_cut.10", "-m", "P.10,5", "-m", "map")
    expected = [line for line in (TREC / "out.test.a").read_text().splitlines()
                if line.split()[0] in {"runid", "num_q", "map", "P_5", "P_10", "ndcg_cut_10"}]
    assert result.stdout.splitlines() == expected
