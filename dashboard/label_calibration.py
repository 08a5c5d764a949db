"""The Calibration page's section on the labels of the Label page: read from the workspace store on
every run, so it updates as people label. Agreement of the judge with the labels (weighted by the
inverse inclusion probabilities when the records were chosen actively), the reliability plot, the
interval of each system (PPI for a uniform order, active inference for an active one) with the
labels that would halve its width, and the agreement between labellers."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from evalsuite.stats import agreement, labelled_records
from evalsuite.stats.system_means import labels_needed

from . import calibration_sections as cv
from . import labelling, ui
from .text import plain

NUMBERS = ("accuracy", "accuracy_low", "accuracy_high", "kappa", "kappa_low", "kappa_high", "precision",
           "precision_low", "precision_high", "recall", "recall_low", "recall_high", "spearman", "kendall", "estimate",
           "low", "high", "agreement", "agreement_low", "agreement_high")


def _format():
    return {c: st.column_config.NumberColumn(c, format="%.3f") for c in NUMBERS}


def task_section(tuned: bool) -> pd.DataFrame | None:
    """Draw the section for the task in use (nothing when there is none); return its intervals."""
    task, problem = labelling.active_task()
    if problem:
        st.warning(plain(problem), icon=":material/warning:")
    if task is None:
        return None
    st.header("Labels from the Label page")
    try:
        data = labelling.task_data(task)
    except Exception as exc:
        ui.show_error(exc)
        return None
    n_labels = int(data.plan["human_label"].notna().sum())
    labellers = data.labels.loc[data.labels["label"].notna(), "labeller_id"].nunique()
    st.caption(plain(f"Task {task.name}: {n_labels} of {len(data.plan)} records labelled by {labellers} "
                     f"labeller(s), {task.mode} order; judge: {task.judgement} in {task.filename}, yes from "
                     f"{task.meta.get('threshold', 0.5)}. Read from the workspace store now."))
    if n_labels == 0:
        st.info("No label yet: answer a few records on the Label page.")
        return None
    threshold = float(task.meta.get("threshold", 0.5))
    table = labelled_records.judgement_table(data.plan, task.judgement, f"{task.judgement} in {task.filename}",
                                             threshold)
    pooled = agreement.agreement_table(table, by=("judge", "judgement"))
    per_system = agreement.agreement_table(table, by=("judge", "judgement", "system"))
    pooled.insert(2, "system", "all systems")
    agree = pd.concat([pooled, per_system], ignore_index=True).drop(columns=["judge", "judgement"])
    st.subheader("Agreement of the judge with the labels")
    st.dataframe(agree, hide_index=True, width="stretch", column_config=_format(), key="calibration_task_agreement")
    if task.mode == "active":
        st.caption("The records were chosen where the judge is least certain, so each counts with the inverse of its "
                   "chance of being chosen (the intervals use the effective number of labels).")
    labelled = table[table["human_label"].notna()]
    left, right = st.columns(2)
    ui.chart(cv.confusion_figure(pooled.iloc[0], "Confusion matrix, all systems"), key="calibration_task_confusion",
             container=left)
    if len(labelled) and labelled["judge_score"].between(0, 1).all():
        rel = agreement.reliability(labelled["judge_score"].to_numpy(), labelled["human_label"].to_numpy(), bins=10)
        ui.chart(cv.reliability_figure(rel, "Reliability: judge value against human rate"),
                 key="calibration_task_reliability", container=right)
    intervals = labelled_records.task_intervals(data.plan, task.mode, tuned=tuned)
    intervals["labels_for_half_width"] = [labels_needed(iv, iv.width / 2) if e != "judge only" else math.nan
                                          for iv, e in zip(intervals["interval"], intervals["estimator"])]
    st.subheader("System means from the labels")
    shown = intervals.drop(columns=["interval"])
    shown["more_labels_to_halve"] = shown["labels_for_half_width"] - shown["n"]
    shown = shown[["system", "estimator", "estimate", "low", "high", "n", "more_labels_to_halve", "n_unlabelled",
                   "method", "note", "too_small", "labels_for_half_width"]]
    forest = shown.assign(estimator=shown["estimator"].replace({"active": "PPI"}), held_out=math.nan)
    ui.chart(cv.forest_figure(forest, f"{task.judgement}: system means with 95% intervals"),
             key="calibration_task_forest")
    st.dataframe(shown, hide_index=True, width="stretch", column_config=_format(), key="calibration_task_intervals",
                 height=min(35 * (len(shown) + 1) + 3, 900))  # every system's rows at once
    st.caption("Judge only: the judge's own mean. Human only: the labels alone. "
               + ("Active: the judge on every record, corrected by the labels weighted by their inclusion probabilities "
                  "(Zrnic & Candes 2024). " if task.mode == "active" else
                  "PPI: the judge on every record, corrected by the labels (Angelopoulos et al. 2023). ")
               + "more_labels_to_halve: how many labels more would halve the interval's width, from its current "
                 "variance.")
    for _, row in shown[shown["note"] != ""].iterrows():
        if row["estimator"] != "judge only":
            st.info(plain(f"{row['system']}, {row['estimator']}: {row['note']}"))
    ui.download_csv(shown, "calibration_task_intervals.csv", key="calibration_task_intervals_csv")
    pairs = labelled_records.labeller_agreement(data.labels)
    if not pairs.empty:
        st.subheader("Agreement between labellers")
        st.dataframe(pairs, hide_index=True, width="stretch", column_config=_format(),
                     key="calibration_task_labellers")
    return intervals
