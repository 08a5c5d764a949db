"""The command line prints what trec_eval prints, so the two can be diffed."""

import csv
import io
import json
import subprocess
import sys

import pytest

from conftest import CRANFIELD, ROOT, TREC, read_trec_eval_output

import evalsuite.cli as cli


def _run(*args):
    return subprocess.run([sys.executable, "-m", "evalsuite", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_default_output_equals_trec_eval_out_test():
    result = _run(TREC / "qrels.test", TREC / "results.test")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (TREC / "out.test").read_text()  # diff empty: every line, in trec_eval's order


def test_max_docs_per_query_flag():
    # -M 100: num_ret per query at most 100 (trec_eval -M100 -> out.test.aqcM).
    result = _run(TREC / "qrels.test", TREC / "results.trunc", "-c", "-q", "-M", "100", "-m", "num_ret", "-m", "P.5")
    expected = read_trec_eval_output(TREC / "out.test.aqcM")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    checked = 0
    for measure, query, value in rows:
        if measure.strip() in ("num_ret", "P_5"):
            assert value == expected[(measure.strip(), query)], (measure, query)
            checked += 1
    assert checked == 8 and expected[("num_ret", "all")] == "184"


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


def test_csv_ids_that_a_spreadsheet_would_run_are_quoted_and_scores_stay_numbers(tmp_path):
    formulas = ["=1+1", "+SUM(1)", "-2+3", "@A1", '=HYPERLINK("https://evil.example/x","y")']
    ids = [*formulas, "q-plain"]
    (tmp_path / "qrels.trec").write_text("".join(f"{q} 0 d1 1\n{q} 0 d2 0\n" for q in ids))
    # d1 first for even-numbered queries, second for the others: per-query values 1.0 and 0.5.
    (tmp_path / "run.trec").write_text("".join(
        f"{q} Q0 {first} 1 -1.5 sys\n{q} Q0 {second} 2 -2.5 sys\n"
        for i, q in enumerate(ids) for first, second in [("d1", "d2") if i % 2 == 0 else ("d2", "d1")]))
    result = _run(tmp_path / "qrels.trec", tmp_path / "run.trec", "-q", "-m", "recip_rank", "-m", "P_1",
                  "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["query_id", "recip_rank", "P_1"]
    by_id = {row[0]: row[1:] for row in rows[1:]}
    # Each formula id is written with a leading single quote, as evalsuite.display.safe_csv does.
    assert sorted(by_id) == sorted(["'" + q for q in formulas] + ["q-plain", "all"])
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    for i, q in enumerate(ids):
        cells = by_id["'" + q if q in formulas else q]
        assert [float(c) for c in cells] == ([1.0, 1.0] if i % 2 == 0 else [0.5, 0.0])
    assert [float(c) for c in by_id["all"]] == [0.75, 0.5]
    assert all(c[0].isdigit() for row in rows[1:] for c in row[1:])  # numbers, not quoted text


def test_bad_input_is_a_message_and_exit_code_2():
    result = _run(TREC / "results.test", TREC / "results.test")
    assert result.returncode == 2
    assert result.stderr.startswith("evalsuite: error: results.test, line 1") and "Traceback" not in result.stderr
    result = _run(TREC / "qrels.test", TREC / "results.test", "-m", "yaap")
    assert result.returncode == 2 and "unknown metric" in result.stderr


def test_measure_families_expand_like_trec_eval():
    assert cli.evaluate.expand_measures(["P"]) == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert cli.evaluate.expand_measures(["P.5,10", "ndcg@10", "P_5"]) == ["P_5", "P_10", "ndcg@10"]


def test_measures_print_in_trec_eval_order_whatever_the_m_order():
    result = _run(TREC / "qrels.test", TREC / "results.test", "-m", "ndcg_cut.10", "-m", "P.10,5", "-m", "map")
    expected = [line for line in (TREC / "out.test.a").read_text().splitlines()
                if line.split()[0] in {"runid", "num_q", "map", "P_5", "P_10", "ndcg_cut_10"}]
    assert result.stdout.splitlines() == expected


def test_measure_families_expand_as_trec_eval_reads_them():
    assert cli.evaluate.expand_measures(["iprec_at_recall..10,.5", "ndcg_cut.10,23.4", "Rprec_mult.5.0"]) == [
        "iprec_at_recall_0.10", "iprec_at_recall_0.50", "ndcg_cut_10", "ndcg_cut_23", "Rprec_mult_5.00"]
    official = cli.evaluate.expand_measures(["official"])
    assert official[:8] == ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    assert len(official) == 28  # out.test without runid and num_q
    expected = [line.split("\t")[0].strip() for line in (TREC / "out.test.a").read_text().splitlines()]
    # every line of out.test.a (relstring is printed per query only, with -q)
    assert cli.evaluate.trec_order(cli.evaluate.expand_measures(["all_trec"])) == [*expected[2:], "relstring"]


def test_relstring_is_printed_per_query_only():
    result = _run(TREC / "qrels.test", TREC / "results.test", "-m", "relstring.5", "-q")
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    # out.test.aq's relstring (10 docs) for these queries, cut to 5
    expected = read_trec_eval_output(TREC / "out.test.aq")
    shown = {q: v for m, q, v in rows if m.strip() == "relstring_5"}
    assert shown == {q: f"'{expected[('relstring', q)].strip(chr(39))[:5]}'" for q in ("301", "302", "303")}
    assert [m.strip() for m, q, _ in rows if q == "all"] == ["runid", "num_q"]
    result = _run(TREC / "qrels.test", TREC / "results.test", "-m", "relstring")
    assert [line.split("\t")[0].strip() for line in result.stdout.splitlines()] == ["runid", "num_q"]


def test_help_calls_itself_evalsuite_and_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: evalsuite ")
    for usage in ("evalsuite compare QRELS BASELINE RUN", "evalsuite judge RECORDS", "evalsuite ragas RECORDS"):
        assert usage in out
    for name in ("compare", "judge", "ragas"):  # each subcommand's own help names it the same way
        with pytest.raises(SystemExit):
            cli.main([name, "--help"])
        assert capsys.readouterr().out.startswith(f"usage: evalsuite {name} ")
