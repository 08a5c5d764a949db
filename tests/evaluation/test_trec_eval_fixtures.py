"""EvalSuite against trec_eval's own regression fixtures (usnistgov/trec_eval test/, v10.0).

Each expected file is what trec_eval printed for the command in tests/data/trec_eval/SOURCE.md;
every measure EvalSuite implements is compared, per query and for 'all', at trec_eval's 4
decimals.
"""

import json
import re
import subprocess
import sys

import pytest

import evalsuite as es
from conftest import TREC, read_trec_eval_output

pytestmark = pytest.mark.reference  # compares with another tool (trec_eval's fixtures, ranx, pytrec_eval)

# trec_eval measures EvalSuite computes (others in the files, like bpref, are not ours).
SUPPORTED = re.compile(r"^(map|recip_rank|ndcg|P_\d+|recall_\d+|success_\d+|map_cut_\d+|ndcg_cut_\d+)$")


def _measures(expected, exclude=()):
    names = sorted({m for (m, _) in expected if SUPPORTED.match(m) and m not in exclude})
    assert names, "no supported measure found in the expected output"
    return names


def _compare(report, expected, measures, per_query=True):
    checked = 0
    for measure in measures:
        assert f"{report.means[measure]:.4f}" == expected[(measure, "all")], measure
        checked += 1
        if per_query:
            for qid, value in report.per_query[measure].items():
                assert f"{value:.4f}" == expected[(measure, qid)], (measure, qid)
                checked += 1
    return checked


def test_out_test_all_measures():
    """trec_eval qrels.test results.test -> out.test (default measures, 'all' rows)."""
    expected = read_trec_eval_output(TREC / "out.test")
    report = es.evaluate(es.read_qrels(TREC / "qrels.test"), es.read_run(TREC / "results.test"), _measures(expected))
    assert report.params["n_queries"] == int(expected[("num_q", "all")])
    assert report.params["run_name"] == expected[("runid", "all")]
    _compare(report, expected, _measures(expected), per_query=False)


def test_out_test_aq_per_query_all_trec():
    """trec_eval -m all_trec -q qrels.test results.test -> out.test.aq, per query and all."""
    expected = read_trec_eval_output(TREC / "out.test.aq")
    measures = _measures(expected)
    assert {"map", "recip_rank", "ndcg", "P_5", "success_10", "map_cut_1000", "ndcg_cut_10", "recall_100"} <= set(measures)
    report = es.evaluate(TREC / "qrels.test", TREC / "results.test", measures)
    assert _compare(report, expected, measures) == len(measures) * 4


def test_comments_in_qrels_give_same_output():
    """qrels.test.with-comments (comment lines, a docno containing '#') -> out.test too."""
    expected = read_trec_eval_output(TREC / "out.test")
    qrels = es.read_qrels(TREC / "qrels.test.with-comments")
    assert len(qrels) == 3681
    assert "CR#93E-1860" in qrels.query("301")
    report = es.evaluate(qrels, es.read_run(TREC / "results.test"), _measures(expected))
    _compare(report, expected, _measures(expected), per_query=False)


def test_truncated_run_with_qrels_wide_average_matches_dash_c():
    """trec_eval -c -q on results.trunc (query 302 missing, junk after the tag) -> out.test.aqc."""
    expected = read_trec_eval_output(TREC / "out.test.aqc")
    run = es.read_run(TREC / "results.trunc")
    assert "302" not in run.query_ids.tolist()
    assert any("after the run tag" in w for w in run.warnings)
    measures = _measures(expected)
    report = es.evaluate(TREC / "qrels.test", run, measures, queries="qrels")
    assert report.defaulted_queries == ["302"]
    assert _compare(report, expected, measures) == len(measures) * 4


def test_rel_level_2_matches_dash_l2_except_ndcg():
    """trec_eval -q -l2 qrels.rel_level results.test -> out.test.aql (graded, negative grades).

    trec_eval ignores -l for nDCG (it uses the grades as gains); EvalSuite follows ranx there,
    so the nDCG family is checked against ranx in test_reference_tools instead.
    """
    expected = read_trec_eval_output(TREC / "out.test.aql")
    measures = _measures(expected, exclude=())
    measures = [m for m in measures if not m.startswith("ndcg")]
    report = es.evaluate(TREC / "qrels.rel_level", TREC / "results.test", measures, rel_level=2)
    assert _compare(report, expected, measures) == len(measures) * 4


def test_ndcg_with_negative_grades_at_rel_level_1_matches_trec_eval():
    """At the default level, nDCG over graded qrels with -1 grades equals trec_eval's.

    The fixtures hold no nDCG output for qrels.rel_level without -l, so the reference is
    trec_eval's own code through pytrec-eval-terrier, on the same files.
    """
    pytest.importorskip("pytrec_eval")
    qrels = es.read_qrels(TREC / "qrels.rel_level")
    run = es.read_run(TREC / "results.test")
    q_dict = {q: {d: int(g) for d, g in qrels.query(q).items()} for q in qrels.query_ids}
    r_dict = {q: dict(zip(run.query(q)["doc_id"], run.query(q)["score"])) for q in run.query_ids}
    # A fresh process: pytrec_eval 0.5.11 can hang when a second evaluator in one process computes
    # nDCG over negative grades (see tests/evaluation/test_properties.py).
    code = ("import json, sys, pytrec_eval; q, r = json.load(sys.stdin); "
            "print(json.dumps(pytrec_eval.RelevanceEvaluator(q, {'ndcg', 'ndcg_cut.5,10'}).evaluate(r)))")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps([q_dict, r_dict]), capture_output=True,
                          text=True, timeout=120, check=True)
    ref = json.loads(done.stdout)
    report = es.evaluate(qrels, run, ["ndcg", "ndcg_cut_5", "ndcg_cut_10"])
    for qid in report.query_ids:
        for name in ("ndcg", "ndcg_cut_5", "ndcg_cut_10"):
            assert report.per_query.loc[qid, name] == pytest.approx(ref[qid][name], abs=1e-12)


def test_meas_params_cutoffs():
    """Odd cutoffs from out.test.meas_params: P_3, P_7, recall_20, ndcg_cut_23, success_2 ..."""
    expected = read_trec_eval_output(TREC / "out.test.meas_params")
    measures = _measures(expected)
    assert {"P_3", "P_7", "recall_2000", "ndcg_cut_23", "success_2"} <= set(measures)
    report = es.evaluate(TREC / "qrels.test", TREC / "results.test", measures)
    assert _compare(report, expected, measures) == len(measures) * 4


def test_rag_track_fixture_with_hash_in_docnos():
    """TREC 2024 RAG style ids ('2024-127266', docnos with '#'): out.comment.test.

    The run has 301 topics, the qrels 31: trec_eval scores the 31; so does the qrels default.
    """
    expected = read_trec_eval_output(TREC / "out.comment.test")
    run = es.read_run(TREC / "results.comment.test")
    assert run.n_queries == 301
    report = es.evaluate(TREC / "qrels.comment.test", run, _measures(expected))
    assert report.params["n_queries"] == int(expected[("num_q", "all")]) == 31
    assert len(report.dropped_queries) == 270
    _compare(report, expected, _measures(expected), per_query=False)


# ------------------------------------------------------------------------------------------------
# Every command of trec_eval's `quicktest` (tests/data/trec_eval/SOURCE.md), run through our command
# line with the same flags: each line we print must be one of trec_eval's, and every line of
# trec_eval's for a measure we compute must be printed.

QUICKTEST = [
    # (trec_eval's flags, qrels, run, expected output, our extra flags)
    ([], "qrels.test", "results.test", "out.test", []),
    ([], "qrels.test.with-comments", "results.test", "out.test", []),
    ([], "qrels.comment.test", "results.comment.test", "out.comment.test", []),
    (["-m", "all_trec"], "qrels.test", "results.test", "out.test.a", []),
    (["-m", "all_trec", "-q"], "qrels.test", "results.test", "out.test.aq", []),
    (["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc", "out.test.aqc", []),
    (["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc", "out.test.aqcM", []),
    # trec_eval ignores -l for nDCG; EvalSuite follows ranx there (see test_rel_level_2...).
    (["-m", "all_trec", "-m", "relstring.20", "-q", "-l2"], "qrels.rel_level", "results.test", "out.test.aql",
     ["no-ndcg"]),
    (["-q"], "qrels.test", "results.test", "out.test.meas_params", []),
]
# Fixtures of measures EvalSuite does not compute: preference judgements (-R prefs, qrels_prefs),
# judgement groups (-R qrels_jg) and z-scores (-Z).
NOT_COMPUTED = ["out.test.prefs", "out.test.qrels_prefs", "out.test.qrels_jg", "out.test.aqZ"]


def _ours(name: str) -> bool:
    """Whether EvalSuite computes trec_eval's measure ``name`` under that very name."""
    if name == "relstring" or name.startswith("relstring_"):
        return True  # the command line's per-query string (evalsuite.cli.evaluate.relstrings)
    try:
        return es.parse_metric(name).trec_name == name
    except es.EvalSuiteError:
        return False


def _lines(text: str) -> list[tuple[str, str, str]]:
    return [tuple(part.strip() for part in line.split("\t")) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("flags, qrels, run, expected_file, extra", QUICKTEST, ids=[f"{c[3]}-{c[1]}" for c in QUICKTEST])
def test_trec_eval_quicktest_fixture(flags, qrels, run, expected_file, extra, capsys):
    from evalsuite.cli import main

    expected = _lines((TREC / expected_file).read_text())
    wanted = [m for m in dict.fromkeys(m for m, _, _ in expected) if _ours(m)]
    def gains(m: str) -> bool:  # trec_eval's graded-gain measures ignore -l; EvalSuite's follow it (as ranx)
        return m.startswith(("ndcg", "Rndcg")) or m in ("G", "rbp")

    if "no-ndcg" in extra:
        wanted = [m for m in wanted if not gains(m)]
    assert wanted, "a fixture listed here must hold measures we compute"
    ours_flags = list(flags)  # -m all_trec, -q, -c, -M100, -l2 as trec_eval takes them
    if expected_file == "out.test.meas_params":
        ours_flags += [arg for m in wanted for arg in ("-m", m)]
    assert main([*ours_flags, str(TREC / qrels), str(TREC / run)]) == 0
    text = capsys.readouterr().out
    printed = _lines(text)
    if "no-ndcg" in extra:
        printed = [line for line in printed if not gains(line[0])]
    header = {"runid", "num_q"}
    # trec_eval prints runid and num_q only when they are asked for (-m official, all_trec); we always do.
    printed = [line for line in printed if line[0] not in header or any(e[0] == line[0] for e in expected)]
    expected_set = set(expected)
    assert [line for line in printed if line not in expected_set] == []
    missing = [line for line in expected if (line[0] in wanted or line[0] in header) and line not in set(printed)]
    assert missing == []
    if expected_file != "out.test.meas_params" and "no-ndcg" not in extra:
        # trec_eval's own output, byte for byte (out.test, out.test.a, out.test.aq, aqc, aqcM ...)
        assert text == (TREC / expected_file).read_text()


def test_default_output_is_trec_eval_out_test_byte_for_byte():
    """`python -m evalsuite qrels.test results.test` with no -m prints trec_eval's out.test exactly."""
    done = subprocess.run([sys.executable, "-m", "evalsuite", str(TREC / "qrels.test"), str(TREC / "results.test")],
                          capture_output=True, text=True, timeout=120, cwd=str(TREC.parents[2]))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (TREC / "out.test").read_text()


@pytest.mark.parametrize("expected_file", NOT_COMPUTED)
def test_fixtures_we_do_not_compute_hold_none_of_our_measures(expected_file):
    names = {m for m, _, _ in _lines((TREC / expected_file).read_text())} - {"runid", "num_q", "relstring"}
    assert not [m for m in names if _ours(m)]
