"""Label page: from a judge's verdicts to a few human labels. Choose a records file, a judged metric
and systems; the page proposes the next record to label (active statistical inference: where the
judge is least certain, with inclusion probabilities kept so the estimate stays unbiased; or a
uniform random order), hides the judge's verdict, and writes each yes / no / skip to the workspace
store the moment it is given. Labels export and import as CSV or JSONL; two labellers on the same
records give an agreement figure. The Calibration page reads the labels from the store."""

from __future__ import annotations

import streamlit as st

from dashboard import hosting, labelling, session, ui
from dashboard.labelling import KEY_LAST, KEY_NAME
from dashboard.text import plain
from evalsuite.stats import label_files, labelled_records
from evalsuite.storage import StoreError

MODES = {"active (where the judge is least certain)": "active", "uniform random order": "uniform"}


def _new_task_form() -> None:
    files = [f for f in session.record_files()]
    if not files:
        ui.no_data("Labelling needs per-request records with a judged metric (faithfulness, context relevance, "
                   "answer correctness ...).")
        return
    names = [f"{f.name} ({f.digest[:8]})" for f in files]
    chosen = st.selectbox("Records file", names, key="label_file")
    f = files[names.index(chosen)]
    try:
        records, report = labelling.file_report(f)
    except Exception as exc:
        ui.show_error(exc)
        return
    metrics = labelling.judged_metrics(report)
    if not metrics:
        st.info(plain(f"{f.name} has no judged metric (a judgement list such as answer_claims_supported filled by a "
                      "judge). Judge it on the Judge page first."))
        return
    cols = st.columns([2, 3])
    metric = cols[0].selectbox("Judged metric", metrics, key="label_metric")
    systems = sorted(report.per_query["system"].astype(str).unique())
    chosen_systems = cols[1].multiselect("Systems", systems, default=systems, key="label_systems")
    cols = st.columns([3, 1, 1])
    mode = cols[0].radio("Which record next", list(MODES), key="label_mode", horizontal=True,
                         help="Active: records where the judge's value is least certain are proposed more often, and "
                              "each label is weighted by the inverse of its chance of being proposed, so the estimate "
                              "stays unbiased (Zrnic & Candes, ICML 2024). Uniform: a random order, every record alike.")
    threshold = cols[1].number_input("Judge says yes from", 0.0, 1.0, 0.5, 0.05, key="label_threshold",
                                     help="The judge's verdict is yes when the metric's value is at least this. Fixed "
                                          "now, before any label is seen.")
    seed = cols[2].number_input("Seed", 0, 10**9, 0, 1, key="label_seed",
                                help="Fixes the order in which records are proposed, the same for every labeller.")
    question = st.text_input("Question for the labellers", labelling.question_for(metric), key="label_question",
                             max_chars=300)
    if st.button("Start labelling", key="label_create", type="primary", disabled=not chosen_systems,
                 icon=":material/play_arrow:"):
        try:
            labelling.create_task(f, metric, list(chosen_systems), MODES[mode], int(seed), float(threshold), question)
        except StoreError as exc:
            ui.show_error(exc)
            return
        st.rerun()


def _keep_name() -> None:
    st.session_state[KEY_NAME] = st.session_state.get("label_name_input", "")


def _identity() -> labelling.Labeller | None:
    if hosting.user().signed_in:
        who = labelling.labeller()
        st.caption("Labelling as " + plain(who.name))
        return who
    # The typed name is kept under a key of its own: a widget's state is dropped on pages that do not draw it.
    st.text_input("Your name (kept with each label you give)", value=st.session_state.get(KEY_NAME, ""),
                  key="label_name_input", max_chars=100, on_change=_keep_name)
    who = labelling.labeller()
    if who is None:
        st.info("Type your name to start labelling: two people labelling the same records give an agreement figure.")
    return who


def _record_text(data: labelling.TaskData, query_id: str, system: str) -> None:
    frame = data.records
    row = frame[(frame["query_id"].astype(str) == query_id) & (frame["system"].astype(str) == system)] \
        if "system" in frame.columns else frame[frame["query_id"].astype(str) == query_id]
    if row.empty:
        st.warning(plain(f"Record {query_id} is not in the records file."))
        return
    row = row.iloc[0]
    st.caption(plain(f"Request {query_id}"))
    if isinstance(row.get("question"), str):
        st.markdown("**Question**")
        st.markdown(plain(row["question"]))
    if isinstance(row.get("answer"), str):
        st.markdown("**Answer**")
        with st.container(border=True):
            st.markdown(plain(row["answer"]))
    if isinstance(row.get("reference"), str):
        st.markdown("**Reference answer**")
        st.markdown(plain(row["reference"]))
    contexts = row.get("contexts")
    if contexts is not None and not isinstance(contexts, str) and len(contexts):
        st.markdown("**Contexts**")
        for i, text in enumerate(contexts, start=1):
            with st.container(border=True):
                st.caption(f"Context {i}")
                st.markdown(plain(text))


def _labelling(data: labelling.TaskData, who: labelling.Labeller) -> None:
    plan = data.plan
    task = data.task
    labelled = int(plan["human_label"].notna().sum())
    mine = int((plan["answered"]).sum())
    st.progress(min(labelled / max(len(plan), 1), 1.0),
                text=f"{labelled} of {len(plan)} records labelled; {mine} answered by you")
    last = st.session_state.pop(KEY_LAST, None)
    if last and last[0] == "error":
        st.error(plain(f"The label was not saved: {last[1]}"), icon=":material/error:")
    nxt = labelled_records.next_record(plan)
    if nxt is None:
        st.success("Every record of this task has your answer. The Calibration page shows what the labels say.")
        return
    st.subheader(plain(task.meta.get("question") or labelling.question_for(task.judgement)))
    cols = st.columns(3)
    args = (task.task_id, str(nxt["query_id"]), str(nxt["system"]))
    cols[0].button("Yes", key="label_yes", type="primary", on_click=labelling.answer, args=(*args, 1),
                   icon=":material/check:", width="stretch")
    cols[1].button("No", key="label_no", on_click=labelling.answer, args=(*args, 0), icon=":material/close:",
                   width="stretch")
    cols[2].button("Skip", key="label_skip", on_click=labelling.answer, args=(*args, None),
                   icon=":material/skip_next:", width="stretch")
    st.caption("The judge's verdict is hidden while you label. Skip a record you cannot judge: a record everyone "
               "skips is left out of the estimate.")
    _record_text(data, str(nxt["query_id"]), str(nxt["system"]))


def _export_import(data: labelling.TaskData, who: labelling.Labeller | None) -> None:
    task = data.task
    with st.expander("Export and import labels"):
        first = label_files.labels_table(data.labels, task.judgement)
        every = label_files.labels_table(data.labels, task.judgement, every_labeller=True)
        cols = st.columns(3)
        with cols[0]:
            ui.download_csv(first, "labels.csv", key="label_export_csv", label="Labels (CSV)")
        cols[1].download_button("Labels (JSONL)", label_files.to_jsonl(first), "labels.jsonl",
                                mime="application/jsonl", key="label_export_jsonl", icon=":material/download:",
                                on_click="ignore")
        with cols[2]:
            ui.download_csv(every, "labels_every_labeller.csv", key="label_export_every",
                            label="Every labeller's labels (CSV)")
        st.caption("One row per record with the label the Calibration page uses (the first yes or no given), in the "
                   "columns its human-label upload reads; the second file has one row per record and labeller.")
        st.file_uploader("Import labels (CSV, TSV or JSONL: query_id, system, human_label, optional labeller)",
                         type=["csv", "tsv", "jsonl", "txt"], key="label_import", on_change=_keep_import)
        done = st.session_state.pop(KEY_IMPORTED, None)
        if done:
            st.success(plain(done))
        kept = st.session_state.get(KEY_IMPORT)
        if kept is not None and st.button("Import " + plain(kept[0]), key="label_import_go"):
            _import(data, kept[0], kept[1], who)
            st.session_state[KEY_IMPORT] = None


KEY_IMPORT = "label_import_kept"  # (name, bytes) of the file chosen for import, kept across reruns
KEY_IMPORTED = "label_imported"    # the message of the last import, shown once


def _keep_import() -> None:
    uploaded = st.session_state.get("label_import")
    if uploaded is not None:
        try:
            hosting.count_upload(uploaded.size)  # the daily upload limit, per user
        except Exception as exc:
            ui.show_error(exc)
            uploaded = None
    st.session_state[KEY_IMPORT] = None if uploaded is None else (uploaded.name, uploaded.getvalue())


def _import(data: labelling.TaskData, name: str, raw: bytes, who: labelling.Labeller | None) -> None:
    from dashboard.workspace_store import get_store

    try:
        table = label_files.read_label_file(raw, source_name=name, max_bytes=64 * 2**20)
        known = set(zip(data.plan["query_id"], data.plan["system"]))
        missing = table[[(q, s) not in known for q, s in zip(table["query_id"], table["system"])]]
        if len(missing):
            row = missing.iloc[0]
            raise StoreError(f"{name}, line {int(row['line'])}: record {row['query_id']} of system {row['system']} "
                             "is not one of this task's records", code="invalid_argument")
        store, error = get_store()
        if store is None:
            raise StoreError(f"the workspace store is unavailable: {error}", code="unavailable")
        count = 0
        for person, part in table.groupby("labeller", sort=True):
            if person:
                labeller_id, shown = f"name:{person}", person
            elif who is not None:
                labeller_id, shown = who.id, who.name
            else:
                raise StoreError("the file has no labeller column: type your name first", code="invalid_argument")
            rows = [(q, s, int(v)) for q, s, v in zip(part["query_id"], part["system"], part["human_label"])]
            store.put_labels(data.task.task_id, rows, labeller_id=labeller_id, labeller=shown)
            count += len(rows)
    except Exception as exc:
        ui.show_error(exc)
        return
    st.session_state[KEY_IMPORTED] = f"{count} labels imported from {name}."
    st.session_state[KEY_IMPORT] = None
    st.rerun()  # the page again, with the imported labels in every figure


def _agreement(data: labelling.TaskData) -> None:
    pairs = labelled_records.labeller_agreement(data.labels)
    if pairs.empty:
        return
    st.subheader("Agreement between labellers")
    st.dataframe(pairs, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in
                                ("agreement", "agreement_low", "agreement_high", "kappa", "kappa_low", "kappa_high")})
    st.caption("On the records both labelled yes or no: the share with the same label (Clopper-Pearson 95% interval) "
               "and Cohen's kappa (agreement beyond chance, with its interval).")


def _task_picker() -> None:
    tasks = labelling.known_tasks()
    if not tasks:
        return
    labels = {f"{t.name} ({t.mode}, {t.created_at:%Y-%m-%d %H:%M})": t.task_id for t in tasks}
    current = st.session_state.get(labelling.KEY_TASK)
    options = list(labels)
    index = next((i for i, k in enumerate(options) if labels[k] == current), 0)
    picked = st.selectbox("Labelling task", options, index=index, key="label_task_pick")
    if labels[picked] != current:
        labelling.remember(labels[picked])
        st.rerun()


def render() -> None:
    st.title("Label")
    st.caption("A few human labels turn a judge's verdicts into an interval you can publish. The page proposes the "
               "next record, you answer yes, no or skip, and each answer is saved at once.")
    task, problem = labelling.active_task()
    if problem:
        st.error(plain(problem), icon=":material/error:")
    _task_picker()
    with st.expander("New labelling task", expanded=task is None):
        _new_task_form()
    if task is None:
        return
    st.header(plain(task.name))
    st.caption(plain(f"Judged metric {task.judgement}; systems: {', '.join(task.systems)}; order: {task.mode}; "
                     f"made by {task.created_by}. Share this page's address to label with someone else."))
    who = _identity()
    try:
        data = labelling.task_data(task, who)
    except Exception as exc:
        ui.show_error(exc)
        return
    if data.undefined:
        st.caption(plain(f"{data.undefined} records have no value of {task.judgement} and are left out."))
    if who is not None:
        _labelling(data, who)
    _agreement(data)
    _export_import(data, who)


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
