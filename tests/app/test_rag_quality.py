"""The RAG quality page: the numbers shown are evaluate_records()'s and the file's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from .helpers import RAG, open_page


def test_rag_quality_numbers_equal_evaluate_records(records_report):
    _, report = records_report
    at = open_page("rag_quality")
    summary = at.dataframe[0].value
    for system in summary.index:
        assert summary.loc[system, "faithfulness"] == pytest.approx(report.means[system]["faithfulness"], abs=1e-12)
    success = at.dataframe[1].value.set_index("system")
    for system, score in report.task_success.items():
        if system in success.index:
            assert success.loc[system, "success rate"] == pytest.approx(float(score), abs=1e-12)
            assert success.loc[system, "ci_low"] == pytest.approx(score.params["ci_low"], abs=1e-12)
            assert success.loc[system, "ci_high"] == pytest.approx(score.params["ci_high"], abs=1e-12)
    # Reference: the success share straight from the file.
    rows = [json.loads(line) for line in (RAG / "ragtruth_qa.jsonl").open()]
    gpt4 = [r["success"] for r in rows if r["system"] == "gpt-4-0613"]
    assert success.loc["gpt-4-0613", "success rate"] == pytest.approx(np.mean(gpt4), abs=1e-12)
