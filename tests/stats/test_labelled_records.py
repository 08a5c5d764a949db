"""A labelling task's labels as statistics: the design follows the order and keeps the first label
of each record, the next record skips what the labeller answered, the per-system intervals are the
PPI and active estimators on the right subsets, and labeller agreement equals scikit-learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalsuite.stats import active, labelled_records, ppi

sklearn_metrics = pytest.importorskip("sklearn.metrics")
COLUMNS = ["query_id", "system", "labeller_id", "labeller", "label", "labelled_at"]


def _judged(m=80, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"query_id": [f"q{i // 2}" for i in range(m)], "system": ["A", "B"] * (m // 2),
                         "value": np.round(rng.random(m), 2)})


def _labels(plan, k, who="ann", start=0.0, label=lambda i: i % 3 != 0):
    rows = [(r.query_id, r.system, who, who.title(), float(label(i)), start + i) for i, r in
            enumerate(plan.head(k).itertuples())]
    return pd.DataFrame(rows, columns=COLUMNS)


@pytest.mark.parametrize("mode", ["uniform", "active"])
def test_design_order_first_labels_and_next_record(mode):
    judged = _judged()
    empty = pd.DataFrame(columns=COLUMNS)
    plan = labelled_records.design(judged, empty, mode, seed=4)
    weights = active.sampling_weights(judged["value"]) if mode == "active" else np.ones(len(judged))
    order, _ = active.labelling_order(weights, 4)
    assert list(zip(plan["query_id"], plan["system"])) == list(zip(judged["query_id"][order], judged["system"][order]))
    ann = _labels(plan, 10)
    bob = _labels(plan, 3, who="bob", start=100.0, label=lambda i: 1)
    plan = labelled_records.design(judged, pd.concat([ann, bob]), mode, seed=4, labeller_id="bob")
    assert plan["human_label"].head(10).tolist() == ann["label"].tolist()  # the first label given counts
    assert plan["labellers"].head(3).tolist() == [2, 2, 2] and plan["answered"].sum() == 3
    assert labelled_records.next_record(plan)["query_id"] == plan["query_id"][3]
    assert plan["inclusion"].notna().sum() == 10
    skipped = _labels(plan, 11, who="cat", start=200.0, label=lambda i: np.nan).tail(1)
    plan = labelled_records.design(judged, pd.concat([ann, skipped]), mode, seed=4, labeller_id="ann")
    assert bool(plan["skipped"].iloc[10]) and labelled_records.next_record(plan)["query_id"] == plan["query_id"][11]


def test_uniform_intervals_are_ppi_on_the_labelled_prefix_and_active_ones_the_active_estimator():
    judged = _judged(m=200)
    plan = labelled_records.design(judged, pd.DataFrame(columns=COLUMNS), "uniform", seed=1)
    plan = labelled_records.design(judged, _labels(plan, 120), "uniform", seed=1)
    table = labelled_records.task_intervals(plan, "uniform").set_index(["system", "estimator"])
    a = plan[plan["system"] == "A"]
    lab = a["inclusion"].notna()
    m = ppi.mean_intervals(a.loc[lab, "human_label"], a.loc[lab, "value"], a.loc[~lab, "value"])
    assert table.loc[("A", "PPI"), "estimate"] == pytest.approx(m["ppi"].estimate)
    assert table.loc[("A", "human only"), "high"] == pytest.approx(m["human"].high)
    plan = labelled_records.design(judged, pd.DataFrame(columns=COLUMNS), "active", seed=1)
    plan = labelled_records.design(judged, _labels(plan, 120), "active", seed=1)
    table = labelled_records.task_intervals(plan, "active").set_index(["system", "estimator"])
    b = plan[plan["system"] == "B"]
    iv = active.active_mean(b["value"], b["human_label"].where(b["inclusion"].notna()), b["inclusion"])
    assert (table.loc[("B", "active"), "low"], table.loc[("B", "active"), "high"]) == pytest.approx((iv.low, iv.high))
    assert table["low"].between(0, 1).all() and table["high"].between(0, 1).all()


def test_judgement_table_weights_and_labeller_agreement():
    judged = _judged()
    plan = labelled_records.design(judged, pd.DataFrame(columns=COLUMNS), "active", seed=2)
    ann = _labels(plan, 30)
    bob = _labels(plan, 30, who="bob", start=50.0, label=lambda i: i % 4 != 0)
    plan = labelled_records.design(judged, pd.concat([ann, bob]), "active", seed=2)
    table = labelled_records.judgement_table(plan, "faithfulness", "judge", threshold=0.5)
    labelled = table[table["human_label"].notna()]
    assert len(labelled) == 30
    assert labelled["weight"].to_numpy() == pytest.approx(1 / plan["inclusion"].dropna().to_numpy())
    assert (table["judge_label"] == (table["judge_score"] >= 0.5)).all()
    pairs = labelled_records.labeller_agreement(pd.concat([ann, bob]))
    row = pairs.iloc[0]
    assert row["n"] == 30
    assert row["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(ann["label"], bob["label"]))
    assert row["agreement"] == pytest.approx((ann["label"].to_numpy() == bob["label"].to_numpy()).mean())
