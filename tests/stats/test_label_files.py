"""Label files: a task's labels written as CSV (spreadsheet-safe) and JSONL read back the same, in the
columns the Calibration page's human-label upload joins, and bad files named by file, line, field
and value."""

from __future__ import annotations



import pandas as pd
import pytest

from evalsuite import EvalSuiteError
from evalsuite.display import safe_csv
from evalsuite.stats import judgement_tables, label_files

LABELS = pd.DataFrame({"query_id": ["q1", "q2", "q1", "=1+1"], "system": ["A", "A", "A", "B"],
                       "labeller": ["Ann", "Ann", "Bob", "Ann"], "label": [1.0, 0.0, 0.0, 1.0],
                       "labelled_at": [10.0, 20.0, 30.0, 40.0]})


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_round_trip(fmt):
    table = label_files.labels_table(LABELS, "faithfulness")
    assert table["query_id"].tolist() == ["q1", "q2", "=1+1"]  # one row per record: the first label
    data = safe_csv(table) if fmt == "csv" else label_files.to_jsonl(table)
    back = label_files.read_label_file(data, source_name=f"labels.{fmt}")
    if fmt == "csv":
        assert b"'=1+1" in data  # formula-safe: a spreadsheet shows it as text
        back["query_id"] = back["query_id"].str.lstrip("'")
    assert back[["query_id", "system", "human_label", "labeller"]].values.tolist() == [
        ["q1", "A", 1.0, "Ann"], ["q2", "A", 0.0, "Ann"], ["=1+1", "B", 1.0, "Ann"]]
    # The Calibration page's human-label upload joins the same file onto a judgement table.
    judged = judgement_tables.read_judgements(b"query_id,system,judgement,judge_label\nq1,A,faithfulness,1\n"
                                              b"q2,A,faithfulness,1\n")
    joined, counts = judgement_tables.join_human_labels(judged, label_files.to_jsonl(table))
    assert joined["human_label"].tolist() == [1.0, 0.0] and counts["matched"] == 2


def test_every_labeller_keeps_both_answers():
    table = label_files.labels_table(LABELS, "faithfulness", every_labeller=True)
    assert table[["query_id", "labeller", "human_label"]].values.tolist()[:3] == [
        ["q1", "Ann", 1], ["q2", "Ann", 0], ["q1", "Bob", 0]]
    assert table["labelled_at"].iloc[0] == "1970-01-01T00:00:10Z"


def test_bad_files_are_named():
    with pytest.raises(EvalSuiteError) as err:
        label_files.read_label_file(b"query_id,system,human_label\nq1,A,1\nq2,A,maybe\n", source_name="l.csv")
    assert (err.value.source, err.value.line, err.value.field, err.value.value) == ("l.csv", 3, "human_label", "maybe")
    with pytest.raises(EvalSuiteError) as err:
        label_files.read_label_file(b"query_id,system,item,human_label\nq1,A,2,1\n", source_name="l.csv")
    assert (err.value.line, err.value.field) == (2, "item")
    with pytest.raises(EvalSuiteError) as err:
        label_files.read_label_file(b"query_id,system,human_label\nq1,A,1\nq1,A,0\n", source_name="l.csv")
    assert err.value.line == 3
    with pytest.raises(EvalSuiteError) as err:
        label_files.read_label_file(b"query_id,human_label\nq1,1\n", source_name="l.csv")
    assert err.value.field == "system"
    with pytest.raises(EvalSuiteError, match="human_label"):
        label_files.read_label_file(b"query_id,system\nq1,A\n")
    assert label_files.to_jsonl(pd.DataFrame({"a": []})) == b""

