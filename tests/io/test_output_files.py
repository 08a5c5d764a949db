"""Every output path (evalsuite.io.output_files, issue 29): never onto an input, never over an
existing file without --force, written under a temporary name and renamed, so an interrupted write
leaves no half file; the commands and write_records use it."""

from __future__ import annotations

import os
import stat

import pytest

import evalsuite as es
from evalsuite.cli import main
from evalsuite.io.output_files import atomic_output, check_output_path, write_bytes
from evalsuite.io.record_files import check_output, write_records

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels.trec", tmp_path / "run.trec"
    qrels.write_bytes(QRELS)
    run.write_bytes(RUN)
    return qrels, run


def test_an_input_is_refused_by_path_link_and_symlink_force_or_not(files, tmp_path):
    qrels, run = files
    os.link(run, tmp_path / "hard.trec")
    (tmp_path / "soft.trec").symlink_to(run)
    for target in (run, tmp_path / "hard.trec", tmp_path / "soft.trec", tmp_path / "sub" / ".." / "run.trec"):
        for force in (False, True):
            with pytest.raises(es.EvalSuiteError, match="is an input of this command"):
                check_output_path(target, inputs=[qrels, run], force=force)
    assert run.read_bytes() == RUN


def test_an_existing_file_needs_force_and_other_paths_are_named(tmp_path):
    existing = tmp_path / "report.csv"
    existing.write_text("old")
    with pytest.raises(es.EvalSuiteError, match="exists already; pass --force"):
        check_output_path(existing)
    assert check_output_path(existing, force=True) == existing
    with pytest.raises(es.EvalSuiteError, match="is a folder"):
        check_output_path(tmp_path, force=True)
    with pytest.raises(es.EvalSuiteError, match="folder of the output does not exist"):
        check_output_path(tmp_path / "missing" / "x.csv")
    with pytest.raises(es.EvalSuiteError, match="must end in .parquet or .jsonl"):
        check_output(tmp_path / "x.csv")
    with pytest.raises(es.EvalSuiteError, match="must end in .csv"):
        check_output_path(tmp_path / "x.txt", suffixes=(".csv",))


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "judged.jsonl"
    target.write_text("the previous output\n")
    with pytest.raises(RuntimeError):
        with atomic_output(target, force=True) as temporary:
            with open(temporary, "w") as handle:
                handle.write("half a fi")
            raise RuntimeError("interrupted")
    assert target.read_text() == "the previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judged.jsonl"]


def test_a_file_that_appears_during_the_write_is_not_replaced(tmp_path):
    target = tmp_path / "out.csv"
    with pytest.raises(es.EvalSuiteError, match="appeared while it was being written"):
        with atomic_output(target) as temporary:
            with open(temporary, "w") as handle:
                handle.write("new")
            target.write_text("written by someone else meanwhile")
    assert target.read_text() == "written by someone else meanwhile"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_the_output_gets_the_permissions_of_a_new_file(tmp_path):
    old = os.umask(0o022)
    try:
        write_bytes(b"x", tmp_path / "a.txt")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644


def test_write_records_refuses_its_input_and_an_existing_file(tmp_path):
    source = tmp_path / "records.jsonl"
    source.write_text('{"query_id": "q1", "answer": "a"}\n')
    records = es.read_records(source)
    with pytest.raises(es.EvalSuiteError, match="is an input"):
        write_records(records, source, inputs=[source], force=True)
    assert source.read_text() == '{"query_id": "q1", "answer": "a"}\n'
    write_records(records, tmp_path / "out.parquet")
    with pytest.raises(es.EvalSuiteError, match="exists already"):
        write_records(records, tmp_path / "out.parquet")
    write_records(records, tmp_path / "out.parquet", force=True)
    assert es.read_records(tmp_path / "out.parquet").table.column("answer").to_pylist() == ["a"]


def test_judge_with_the_output_equal_to_its_input_exits_2_and_leaves_it(tmp_path, capsys):
    records = tmp_path / "records.jsonl"
    records.write_text('{"query_id": "q1", "answer": "the cat", "reference": "the cat"}\n')
    before = records.read_bytes()
    for extra in ([], ["--force"]):
        code = main(["judge", str(records), "--judge", "lexical", "-o", str(records), *extra])
        assert code == 2 and "is an input of this command" in capsys.readouterr().err
    assert records.read_bytes() == before
    out = tmp_path / "judged.jsonl"
    assert main(["judge", str(records), "--judge", "lexical", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["judge", str(records), "--judge", "lexical", "-o", str(out)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["judge", str(records), "--judge", "lexical", "-o", str(out), "--force", "--bounded"]) == 0


def test_evaluate_and_compare_write_reports_only_where_allowed(files, tmp_path, capsys):
    qrels, run = files
    report = tmp_path / "report.csv"
    assert main([str(qrels), str(run), "-m", "map", "--format", "csv", "-o", str(report)]) == 0
    assert report.read_text().splitlines()[0] == "query_id,map"
    assert main([str(qrels), str(run), "-m", "map", "-o", str(report)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main([str(qrels), str(run), "-m", "map", "-o", str(run), "--force"]) == 2
    assert "is an input" in capsys.readouterr().err and run.read_bytes() == RUN
    other = tmp_path / "other.trec"
    other.write_bytes(RUN.replace(b"2.0", b"0.5"))
    compared = tmp_path / "compare.json"
    code = main(["compare", str(qrels), str(run), str(other), "--format", "json", "-o", str(compared),
                 "--n-resamples", "200", "--fail-on", "never"])
    assert code == 0 and '"verdict"' in compared.read_text()
    assert main(["compare", str(qrels), str(run), str(other), "-o", str(other), "--force"]) == 2
    assert other.read_bytes() == RUN.replace(b"2.0", b"0.5")


def test_comparison_report_to_csv_with_a_path(files, tmp_path):
    qrels, run = files
    report = es.compare(str(qrels), {"a": str(run), "b": str(run)}, metrics=["map"], n_resamples=200)
    path = tmp_path / "table.csv"
    report.to_csv(path)
    assert path.read_text().startswith("metric,")
    with pytest.raises(es.EvalSuiteError, match="exists already"):
        report.to_csv(path)
    with pytest.raises(es.EvalSuiteError, match="is an input"):
        report.to_csv(run, inputs=[qrels, run], force=True)


def test_read_bounds_from_the_command_line(files, capsys):
    qrels, run = files
    assert main([str(qrels), str(run), "-m", "map", "--read-timeout", "30"]) == 0
    assert main([str(qrels), str(run), "-m", "map", "--read-memory-mb", "10"]) == 2
    assert "memory_bytes" in capsys.readouterr().err
