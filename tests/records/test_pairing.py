"""Pairing requests across systems by query id, question text or request index (issue 30)."""

from __future__ import annotations

import pytest

import evalsuite as es
from evalsuite.records.pairing import request_keys


def _records():
    # Two systems asked the same three questions under ids of their own, in different orders; "a"
    # asked "Why?" twice.
    rows = [{"system": "a", "query_id": f"a-{i}", "question": q, "success": ok}
            for i, (q, ok) in enumerate([("Why?", True), ("How?", False), ("When?", True), ("Why?", False)])]
    rows += [{"system": "b", "query_id": f"b-{i}", "question": q, "success": ok}
             for i, (q, ok) in enumerate([("When?", False), ("Why?", True), ("How?", True), ("Why?", True)])]
    return es.Records.from_rows(rows)


def test_question_keys_pair_the_same_question_and_number_repeats():
    records = _records()
    keys = request_keys(records.frame, "question")
    frame = records.frame.assign(key=keys)
    a = frame[frame["system"] == "a"].set_index("key")["query_id"]
    b = frame[frame["system"] == "b"].set_index("key")["query_id"]
    pairs = {a[k]: b[k] for k in a.index if k in b.index}
    assert pairs == {"a-0": "b-1", "a-1": "b-2", "a-2": "b-0", "a-3": "b-3"}  # 2nd "Why?" with 2nd "Why?"


def test_compare_records_pairs_by_the_chosen_key():
    records = _records()
    report = es.evaluate_records(records)
    with pytest.raises(es.EvalSuiteError, match="overlap|common|paired"):
        es.compare_records(report, "success", n_resamples=100)
    by_question = es.compare_records(report, "success", n_resamples=100,
                                     pair_by=request_keys(records.frame, "question"))
    by_index = es.compare_records(report, "success", n_resamples=100, pair_by="request_index")
    # By question: b - a per pair = (1-1, 1-0, 0-1, 1-0) -> mean 0.25; by index: (0-1, 1-0, 1-1, 1-0) -> 0.25
    for result in (by_question, by_index):
        row = result.table.iloc[0]
        assert row["n_unpaired"] == 0
        assert float(row["mean_system"]) - float(row["mean_baseline"]) == pytest.approx(0.25)
    assert by_question.params["pair_by"] == "given keys" and by_index.params["pair_by"] == "request_index"
