"""Calibration page: how far to trust a judge. Agreement of the judge's verdicts with human labels
(table, confusion matrix, reliability plot) per judge and judgement type, and per system the mean
three ways (judge only, human only, prediction-powered) as a forest plot.

Opens on the calibration samples (``sample_data/calibration``: real human labels from RAGTruth,
ARES and ALCE; judge values from a lexical judge or ALCE's recorded scores) while the session
holds the sample data; a judgement table and a separate human-label file can be uploaded here.
With a labelling task in use (the Label page), its labels come first, read from the store.

Every value shown lies in its range (shares in [0, 1], kappa in [-1, 1]); a degenerate input (all
labels equal, no disagreement, too few labels, a judge that always says the same) is named beside
the interval, and for each system the page says how many labels would halve its interval."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import calibration_sections as cv
from dashboard import hosting, label_calibration, session, ui
from dashboard.text import plain
from evalsuite.stats import agreement, system_means
from evalsuite.stats import intervals as intervals_module

_PCT = {c: st.column_config.NumberColumn(c, format="%.3f")
        for c in ("accuracy", "accuracy_low", "accuracy_high", "kappa", "kappa_low", "kappa_high", "precision",
                  "precision_low", "precision_high", "recall", "recall_low", "recall_high", "spearman", "kendall",
                  "estimate", "low", "high", "held_out")}
_PCT.update({c: st.column_config.NumberColumn(c, format="%d") for c in ("labels_for_half_width", "labels_for_target")})


_KEPT = "_kept"  # session key suffix of an upload's (name, bytes), kept across reruns


def _keep_upload(key: str) -> None:
    """Keep the upload's name and bytes (or None when removed) for the reruns that follow."""
    uploaded = st.session_state.get(key)
    st.session_state.pop(key + "_refused", None)
    if uploaded is not None:
        try:
            hosting.count_upload(uploaded.size)  # the daily upload limit, per user
        except Exception as exc:
            st.session_state[key + "_refused"] = f"{uploaded.name}: {ui.error_text(exc)}"
            uploaded = None
    st.session_state[key + _KEPT] = None if uploaded is None else (uploaded.name, uploaded.getvalue())


def _tables() -> pd.DataFrame | None:
    """The judgement table of this view: the uploaded one (with its human-label file joined), else
    the samples while the session holds the sample data."""
    with st.expander("Upload a judgement table", expanded=False):
        st.caption("CSV, TSV or JSONL, one row per judged item: query_id, system, judgement, item, judge, "
                   "judge_score and/or judge_label, human_label (empty = not labelled), optional human_score. "
                   "A separate human-label file is joined by query_id (and system, judgement, item when it has them).")
        st.file_uploader("Judgement table", type=["csv", "tsv", "jsonl", "txt"], key="calibration_table",
                         on_change=_keep_upload, args=("calibration_table",))
        st.file_uploader("Human labels (optional)", type=["csv", "tsv", "jsonl", "txt"], key="calibration_labels",
                         on_change=_keep_upload, args=("calibration_labels",))
        for key in ("calibration_table", "calibration_labels"):
            if st.session_state.get(key + "_refused"):
                st.error(ui.plain(st.session_state[key + "_refused"]), icon=":material/block:")
    table_file = st.session_state.get("calibration_table" + _KEPT)
    label_file = st.session_state.get("calibration_labels" + _KEPT)
    if table_file is not None:
        name, data = table_file
        try:
            table = cv.read_uploaded(name, data)
            if label_file is not None:
                table, counts = cv.join_uploaded_labels(table, label_file[0], label_file[1])
                note = f"{counts['matched']} label rows of {label_file[0]} joined"
                if counts["unmatched"]:
                    note += (f"; {counts['unmatched']} matched no judged item (first: line "
                             f"{counts['first_unmatched_line']})")
                st.caption(plain(note))
            st.caption(plain(f"Showing the uploaded table {name}."))
            return table
        except Exception as exc:  # shown as a message, never a traceback
            ui.show_error(exc)
            return None
    from_records, problems = cv.record_judgements(session.record_files())
    for name, message in problems:
        st.warning(plain(f"{name}: {message}"))
    if from_records is not None:
        st.caption("Including the judgement lists of the loaded records that have a human_* twin column "
                   "(answer_claims_supported and human_answer_claims_supported ...).")
    if not any(f.sample for f in session.files().values()):
        if from_records is not None:
            return from_records
        ui.no_data("No judgement table with human labels.",
                   "Upload one above, load records with human_* judgement lists on the Data page, or load the "
                   "sample data there (it brings the calibration samples).")
        return None
    st.caption("Showing the calibration samples: real human labels from RAGTruth (hallucination spans), ARES "
               "(labelled rows) and ALCE (utility ratings). No LLM judge runs here: the judge values come from a "
               "deterministic lexical judge (token precision) or ALCE's recorded automatic scores, named in the "
               "Judge column (sample_data/calibration/README.md).")
    samples = cv.sample_judgements()
    return samples if from_records is None else pd.concat([samples, from_records], ignore_index=True)


def render() -> None:
    st.title("Calibration")
    st.caption("How often a judge agrees with people, and what the judge plus a few human labels say about each "
               "system's mean (prediction-powered inference, Angelopoulos et al., Science 2023).")
    method = ui.bound(st.radio, "Estimator", ["PPI", "PPI++ (tuned)"], key="calibration_method", horizontal=True,
                      help="PPI: lambda = 1 (Angelopoulos et al. 2023). PPI++: lambda tuned in [0, 1] to minimise the "
                           "variance (Angelopoulos, Duchi & Zrnic 2023), never much wider than human only; it needs "
                           f"{intervals_module.MIN_LABELS_TUNED} labels for its normal interval.")
    tuned = method == "PPI++ (tuned)"
    if label_calibration.task_section(tuned) is not None:
        st.header("Judgement tables")
    table = _tables()
    if table is None:
        return
    if table["human_label"].notna().sum() == 0:
        st.info("This table has no human label: agreement and PPI need some. Upload a human-label file above.")
        return
    # Judgement types with the most human labels first (the page opens on the largest sample).
    labelled = table[table["human_label"].notna()].groupby("judgement").size()
    kinds = sorted(table["judgement"].unique(), key=lambda k: (-int(labelled.get(k, 0)), k))
    judgement = ui.pick("Judgement type", kinds, key="calibration_judgement")
    part = table[table["judgement"] == judgement]
    judges = sorted(part["judge"].unique())
    judge = ui.pick("Judge", judges, key="calibration_judge")
    part = part[part["judge"] == judge]
    st.caption(f"Judge: {plain(judge or '(unnamed)')}")

    st.header("Agreement with human labels")
    pooled = agreement.agreement_table(part, by=("judge", "judgement"))
    per_system = agreement.agreement_table(part, by=("judge", "judgement", "system"))
    pooled.insert(2, "system", "all systems")
    agree = pd.concat([pooled, per_system], ignore_index=True)
    # The judge and judgement type are picked above; the CSV keeps them.
    st.dataframe(agree.drop(columns=["judge", "judgement"]), hide_index=True, width="stretch", column_config=_PCT)
    st.caption("Accuracy, precision (of the judge's yes, the share people call yes) and recall (of the human yes, "
               "the share the judge calls yes) with Wilson 95% intervals; Cohen's kappa (agreement beyond chance: "
               "0 = chance, 1 = perfect) with its asymptotic interval (Fleiss, Cohen & Everitt 1969); Spearman and "
               "Kendall rank correlation of the judge score with the human score (or label).")
    ui.download_csv(agree, "calibration_agreement.csv", key="calibration_agreement_csv")
    small = agree[agree["too_small"]]
    if len(small):
        st.warning(plain(f"Fewer than {agreement.MIN_LABELS} labelled items for: "
                         + ", ".join(map(str, small["system"])) + ". Their intervals span most of the range."))
    left, right = st.columns(2)
    ui.chart(cv.confusion_figure(pooled.iloc[0], "Confusion matrix, all systems"), key="calibration_confusion",
             container=left)
    scores = part[["judge_score", "human_label"]].dropna()
    if len(scores) and scores["judge_score"].between(0, 1).all():
        rel = agreement.reliability(scores["judge_score"].to_numpy(), scores["human_label"].to_numpy(), bins=10)
        ui.chart(cv.reliability_figure(rel, "Reliability: judge score against human rate"),
                 key="calibration_reliability", container=right)
    else:
        right.info("No reliability plot: the judge scores are not all in 0..1.")

    st.header("System means: judge only, human only, PPI")
    controls = st.columns(3)
    n_ids = int(part.loc[part["human_label"].notna(), "query_id"].nunique())
    target = ui.bound(controls[2].number_input, "Target interval width", 0.005, 1.0, 0.05, 0.005,
                      key="calibration_target", format="%.3f",
                      help="How wide a 95% interval you need: the table says how many human-labelled requests each "
                           "system's interval would need, from its current variance.")
    budget = ui.bound(controls[0].number_input, "Human-labelled requests kept", 0, max(n_ids, 0),
                      min(40, n_ids), 5, key="calibration_budget",
                      help="Request ids whose human labels are used (the same ids for every system); the other "
                           "labels are hidden, to show what a small labelling budget gives. Set it to the maximum "
                           "to use them all.")
    seed = ui.bound(controls[1].number_input, "Seed", 0, 10**6, 0, 1, key="calibration_seed")
    used = system_means.labelled_subset(part, int(budget), seed=int(seed)) if budget < n_ids else part
    intervals = system_means.system_intervals(used, tuned=tuned, target_width=float(target))
    ui.chart(cv.forest_figure(intervals, f"{judgement}: system means with 95% intervals"), key="calibration_forest")
    st.caption("Judge only: the judge's own mean over every request, an interval for the judge, biased for the "
               "human mean by the judge's errors. Human only: the mean of the human labels kept (valid, wide; "
               "Clopper-Pearson, or Wilson for per-request shares). PPI: the judge's mean corrected by its error on "
               "the labelled requests (valid whatever the judge; narrower than human only when the judge agrees "
               "well); when its normal approximation cannot be trusted the human-only interval stands in its place "
               "and the note says why. A request's value is the share of its items labelled yes. The x marks the "
               "mean of every human label in the file when some are hidden. labels_for_half_width and "
               "labels_for_target: human-labelled requests for half the width and for the target width.")
    st.dataframe(intervals.drop(columns=["judgement"]), hide_index=True, width="stretch", column_config=_PCT)
    ui.download_csv(intervals, "calibration_intervals.csv", key="calibration_intervals_csv")
    empty = intervals[(intervals["estimator"] == "PPI") & intervals["estimate"].isna()]
    if len(empty):
        st.info(plain("No PPI interval for " + ", ".join(map(str, empty["system"])) + ": every request is labelled "
                      "by people (nothing for the judge to add: the human-only mean is the answer) or none is."))
    replaced = intervals[(intervals["estimator"] == "PPI") & (intervals["note"] != "")]
    for _, row in replaced.iterrows():
        st.info(plain(f"{row['system']}: PPI's normal interval is not shown ({row['note']}); the human-only "
                      "interval stands in its place."))
    small = intervals[(intervals["estimator"] == "PPI") & intervals["too_small"]]
    for _, row in small.iterrows():
        st.warning(plain(f"{row['system']}: ") + cv.too_small_note(int(row["n"])))

    systems = sorted(part["system"].unique())
    if len(systems) >= 2:
        cols = st.columns(2)
        baseline = ui.pick("Baseline", systems, key="calibration_baseline", container=cols[0])
        other = ui.pick("System", systems, key="calibration_system", index=1, container=cols[1])
        if baseline == other:
            st.info("Pick two different systems to see the PPI interval of their difference.")
        else:
            cv.ppi_difference_section(used, baseline, other, judgement, tuned=tuned)


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
