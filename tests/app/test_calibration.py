"""Calibration page: opens on the calibration samples (real human labels), the agreement table
equals scikit-learn on the sample file, the three intervals per system, the n-too-small warning,
uploads (a judgement table, a separate human-label file, a bad file) and escaping of user text."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from .helpers import REPO, autolinks, open_page, texts

sklearn_metrics = pytest.importorskip("sklearn.metrics")

SAMPLE = REPO / "sample_data" / "calibration"


def _frame(at, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a {column!r} column")


def test_opens_on_ragtruth_claim_support_and_matches_scikit_learn():
    at = open_page("calibration")
    assert not at.error, texts(at.error)
    assert at.selectbox(key="calibration_judgement").value == "claim_support"
    assert any("lexical judge" in t for t in texts(at.caption)), "the page says which judge produced the values"
    agree = _frame(at, "kappa")
    pooled = agree[agree["system"] == "all systems"].iloc[0]
    raw = pd.read_csv(SAMPLE / "ragtruth_claim_support.csv", dtype={"query_id": str})
    assert pooled["n"] == len(raw) == 5667
    human, judge = raw["human_label"].astype(int), raw["judge_label"].astype(int)
    assert pooled["accuracy"] == pytest.approx(sklearn_metrics.accuracy_score(human, judge))
    assert pooled["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(human, judge))
    assert pooled["precision"] == pytest.approx(sklearn_metrics.precision_score(human, judge))
    assert pooled["recall"] == pytest.approx(sklearn_metrics.recall_score(human, judge))
    (tn, fp), (fn, tp) = sklearn_metrics.confusion_matrix(human, judge).tolist()
    assert (pooled["tp"], pooled["fp"], pooled["fn"], pooled["tn"]) == (tp, fp, fn, tn)
    assert set(agree["system"]) == {"all systems", *raw["system"]}

    intervals = _frame(at, "estimator")
    assert len(intervals) == 6 * 3 and set(intervals["estimator"]) == {"judge only", "human only", "PPI"}
    ppi = intervals[intervals["estimator"] == "PPI"]
    assert (ppi["n"] <= 40).all() and (ppi["n_unlabelled"] > 80).all()
    # held_out = the mean over requests of the share of supported sentences, from the file itself
    per_request = raw.groupby(["system", "query_id"])["human_label"].mean().groupby("system").mean()
    assert ppi.set_index("system")["held_out"].to_dict() == pytest.approx(per_request.to_dict())
    assert len(at.get("plotly_chart")) == 3  # confusion matrix, reliability plot, forest plot
    assert any(df.value.columns[0] == "judgement" and "diff (system - baseline)" in df.value.columns
               for df in at.dataframe)


def test_all_labels_make_human_only_the_held_out_mean_and_few_labels_warn():
    at = open_page("calibration")
    at.number_input(key="calibration_budget").set_value(139).run()
    intervals = _frame(at, "estimator")
    human = intervals[intervals["estimator"] == "human only"].set_index("system")["estimate"]
    raw = pd.read_csv(SAMPLE / "ragtruth_claim_support.csv", dtype={"query_id": str})
    per_request = raw.groupby(["system", "query_id"])["human_label"].mean().groupby("system").mean()
    assert human.to_dict() == pytest.approx(per_request.to_dict())
    assert any("every request is labelled" in t for t in texts(at.info))
    at.number_input(key="calibration_budget").set_value(10).run()
    assert any("fewer than 30" in t for t in texts(at.warning))
    at.radio(key="calibration_method").set_value("PPI++ (tuned)").run()
    assert not at.exception and not at.error


def test_switching_to_ares_shows_too_small_for_seven_examples():
    at = open_page("calibration", query={"calibration_judgement": "context_relevance"})
    assert at.selectbox(key="calibration_judgement").value == "context_relevance"
    agree = _frame(at, "kappa")
    assert (agree.loc[agree["system"] != "all systems", "n"] == 7).all()
    assert any("Fewer than 30 labelled items" in t for t in texts(at.warning))


TABLE = ("query_id,system,judgement,item,judge,judge_score,judge_label,human_label\n"
         + "".join(f"q{i},{s},claim_support,0,my judge,{(i % 5) / 4},{int(i % 5 >= 2)},\n"
                   for i in range(60) for s in ("sys http://evil.example", "B")))
LABELS = "query_id,system,human_label\n" + "".join(f"q{i},B,{int(i % 3 > 0)}\n" for i in range(40)) + "q999,B,1\n"


def test_uploaded_table_and_human_label_file_are_joined():
    at = open_page("calibration")
    at.session_state["calibration_table_kept"] = ("mine.csv", TABLE.encode())
    at.session_state["calibration_labels_kept"] = ("labels.csv", LABELS.encode())
    at.run()
    assert not at.exception and not at.error, texts(at.error)
    assert any("40 label rows of labels.csv joined; 1 matched no judged item (first: line 42)" in t
               for t in texts(at.caption))
    agree = _frame(at, "kappa")
    pooled = agree[agree["system"] == "all systems"].iloc[0]
    assert pooled["n"] == 40
    for element in (*at.markdown, *at.caption, *at.warning, *at.info):
        assert not autolinks(element.value), element.value


def test_bad_upload_is_a_message_naming_file_line_field_value():
    at = open_page("calibration")
    bad = TABLE.replace("q7,B,claim_support,0,my judge,0.5,1,", "q7,B,claim_support,0,my judge,0.5,maybe,")
    at.session_state["calibration_table_kept"] = ("mine.csv", bad.encode())
    at.run()
    assert not at.exception
    assert texts(at.error) == ["mine.csv, line 17, field 'judge_label', value 'maybe': a label must be 1/0, "
                               "true/false or yes/no (empty = not labelled)"]


def test_records_with_human_twin_lists_become_a_judgement_table():
    data = "".join(
        '{"query_id": "q%d", "system": "S", "answer_claims_supported": [true, %s], '
        '"human_answer_claims_supported": [true, %s]}\n' % (i, "true" if i % 3 else "false", "true" if i % 4 else "false")
        for i in range(50)).encode()
    at = open_page("calibration", clear=True, pending=[("records", "judged.jsonl", data)])
    assert not at.exception and not at.error, texts(at.error)
    assert at.selectbox(key="calibration_judgement").value == "answer_claims_supported"
    agree = _frame(at, "kappa")
    pooled = agree[agree["system"] == "all systems"].iloc[0]
    judge = [v for i in range(50) for v in (1, 1 if i % 3 else 0)]
    human = [v for i in range(50) for v in (1, 1 if i % 4 else 0)]
    assert pooled["n"] == 100
    assert pooled["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(human, judge))


# ------------------------------------------------------------------------------------------------
# Every value on the page lies in its range (issue 28: kappa 1.269, PPI 1.048, a lower bound of
# -0.116 and a forest axis to 1.5 were shown on the shipped labels)
# ------------------------------------------------------------------------------------------------

SIGNED = ("kappa", "spearman", "kendall", "diff")  # columns whose range is [-1, 1]
COUNTS = ("n", "dropped", "tp", "fp", "fn", "tn", "n_unlabelled", "labels_for_half_width", "labels_for_target",
          "human-labelled requests", "judge-only requests")


def _range_of(column: str):
    if column in COUNTS:
        return 0, float("inf")
    if column.startswith(SIGNED) or column.startswith("95% CI"):
        return -1, 1
    return 0, 1


def _walk(at) -> int:
    """Check every numeric cell of every table and the forest plots' axes; return the cells seen."""
    seen = 0
    for df in at.dataframe:
        frame = df.value
        for column in frame.columns:
            values = pd.to_numeric(frame[column], errors="coerce") if frame[column].dtype != bool else None
            if values is None or values.notna().sum() == 0:
                continue
            low, high = _range_of(str(column))
            bad = values[(values < low - 1e-12) | (values > high + 1e-12)]
            assert bad.empty, f"{column}: {bad.tolist()} outside [{low}, {high}]"
            seen += int(values.notna().sum())
        for est, lo, hi in (("estimate", "low", "high"), ("accuracy", "accuracy_low", "accuracy_high"),
                            ("kappa", "kappa_low", "kappa_high"), ("precision", "precision_low", "precision_high"),
                            ("recall", "recall_low", "recall_high")):
            if {est, lo, hi} <= set(frame.columns):
                ok = frame[[est, lo, hi]].dropna()
                assert ((ok[lo] <= ok[est] + 1e-12) & (ok[est] <= ok[hi] + 1e-12)).all(), ok
                assert (ok[hi] - ok[lo] > 0).all() or est == "estimate", "a zero-width interval"
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        axis = spec["layout"].get("xaxis", {}).get("range")
        if axis is not None and spec["layout"].get("xaxis", {}).get("title", {}).get("text") == "system mean":
            assert axis == [-0.02, 1.02]
    return seen


def test_every_cell_of_the_page_on_the_shipped_labels_is_in_its_range():
    at = open_page("calibration")
    kinds = list(at.selectbox(key="calibration_judgement").options)
    assert len(kinds) == 5  # RAGTruth, ARES x 3, ALCE
    seen = 0
    for kind in kinds:
        at.selectbox(key="calibration_judgement").set_value(kind).run()
        top = at.number_input(key="calibration_budget").max
        for budget in sorted({5, 40, top} & set(range(0, int(top) + 1))):
            at.number_input(key="calibration_budget").set_value(budget).run()
            for method in ("PPI", "PPI++ (tuned)"):
                at.radio(key="calibration_method").set_value(method).run()
                assert not at.exception and not at.error, texts(at.error)
                seen += _walk(at)
    assert seen > 7_000  # every numeric cell of every table, 30 views
