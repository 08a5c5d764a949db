"""Data page: upload runs, qrels and per-request records; name systems; see what was read."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import loaders, share, session, ui, workspace_store, workspaces
from dashboard.constants import KEY_NOTICES, MAX_SYSTEM_CHARS
from dashboard.workspaces import MIB
from evalsuite import display

_UPLOADERS = (
    ("run", "Runs", "TREC (query Q0 doc rank score tag), CSV, TSV, JSON, JSONL or Parquet; gzip too. Several at once."),
    ("qrels", "Qrels", "TREC (query iteration doc grade), CSV, TSV, JSON, JSONL or Parquet."),
    ("records", "Per-request records",
     "JSONL, JSON, CSV or Parquet, one row per request: RAGAS results (to_pandas() saved to CSV, JSON, JSONL or "
     "Parquet), DeepEval test runs, TruLens records with feedback, Phoenix evaluate_dataframe results, "
     "RAGChecker files. Traces too (OTLP JSON or protobuf as the OpenTelemetry Collector writes them, Phoenix's "
     "spans export): one record per trace. Latency percentile tables (EvalSuite's, LLMPerf summaries, Locust "
     "stats) are recognised and shown on the Latency page as summaries."),
)


def _upload_limits() -> str:
    """The upload limit and what Save and share keeps, in one sentence (they differ on purpose:
    a file too large to save can still be analysed in this session)."""
    # Streamlit's server.maxUploadSize is in units of 2**20 bytes (its upload route multiplies by 1024 * 1024).
    text = f"Files of up to {st.get_option('server.maxUploadSize'):,} MiB can be uploaded and analysed here"
    store, _ = workspace_store.get_store()
    if store is None:
        return text + "."
    return (text + f"; Save and share keeps files of up to {store.max_dataset_bytes / MIB:,.0f} MiB each "
            f"({store.max_workspace_bytes / MIB:,.0f} MiB per workspace): larger files stay in this session only.")


def _uploaders() -> None:
    st.subheader("Upload")
    st.caption(_upload_limits())
    generation = st.session_state.setdefault("data_uploader_generation", 0)
    columns = st.columns(3)
    for column, (kind, label, help_text) in zip(columns, _UPLOADERS):
        with column:
            uploaded = st.file_uploader(label, accept_multiple_files=True, key=f"data_upload_{kind}_{generation}",
                                        help=help_text)
            for item in uploaded or []:
                session.queue(kind, item.name, session.upload_bytes(item))
                item.close()  # its buffer may be a copy of the bytes; the queue holds them now
            # The widget's state keeps file objects of its own over the same bytes: closed too, so
            # that the queue's reference is the only one (a large run is then held once, HeldBytes).
            for item in st.session_state.get(f"data_upload_{kind}_{generation}") or []:
                item.close()
    if st.session_state.get("data_pending"):
        # Empty the uploaders (new keys) so a file is read once; the store keeps the bytes.
        st.session_state["data_uploader_generation"] = generation + 1
        session.process_pending()
        st.rerun()


def _messages() -> None:
    notices = st.session_state.get(KEY_NOTICES) or []
    for text in notices:
        st.success(ui.plain(text), icon=":material/check_circle:")
    st.session_state[KEY_NOTICES] = []
    problems = session.problems()
    if problems:
        with st.container(border=True):
            st.markdown("**Files that could not be read** (nothing else was changed)")
            for name, message in problems:
                st.error(ui.plain(message), icon=":material/error:")
            if st.button("Dismiss these messages", key="data_dismiss"):
                problems.clear()
                st.rerun()


def _runs_table() -> None:
    runs = session.of_kind("run")
    st.subheader(f"Runs ({len(runs)})")
    if not runs:
        st.caption("No run loaded.")
        return
    rows = []
    for f in runs:
        run = loaders.read_run(f.digest, f.name, f.data)
        rows.append({"system": f.system, "file": f.name, **display.describe_run(run, f.format),
                     "sample": f.sample, "sha256": f.digest[:12]})
    table = pd.DataFrame(rows)
    st.dataframe(table, hide_index=True, width="stretch")
    ui.download_csv(table, "runs.csv", key="data_runs_csv")
    with st.expander("Name systems / remove runs"):
        for f in runs:
            left, right = st.columns([4, 1], vertical_alignment="bottom")
            with left:
                new = st.text_input(f"System name of {ui.plain(f.name)}", value=f.system, key=f"data_name_{f.digest[:16]}",
                                    max_chars=max(MAX_SYSTEM_CHARS, len(f.system)))
                if new != f.system:
                    problem = session.rename_run(f.key, new)
                    if problem:
                        st.warning(ui.plain(problem))
                    else:
                        st.rerun()
            with right:
                if st.button("Remove", key=f"data_remove_{f.key}"):
                    session.remove(f.key)
                    st.rerun()


def _qrels_table() -> None:
    files = session.qrels_files()
    st.subheader(f"Qrels ({len(files)})")
    if not files:
        st.caption("No qrels loaded: the ranking pages need them.")
        return
    active = session.active_qrels()
    rows = []
    for f in files:
        qrels = loaders.read_qrels(f.digest, f.name, f.data)
        rows.append({"file": f.name, "active": f is active, **display.describe_qrels(qrels, f.format, ui.rel_level()),
                     "sample": f.sample, "sha256": f.digest[:12]})
    table = pd.DataFrame(rows)
    st.dataframe(table, hide_index=True, width="stretch")
    ui.download_csv(table, "qrels.csv", key="data_qrels_csv")
    st.caption(f"Qrels in use by the ranking pages: {ui.plain(session.qrels_label(active))}."
               + (" Choose another in the sidebar (Qrels in use); a qrels file you upload becomes the active one."
                  if len(files) > 1 else ""))
    for f in files:
        if st.button(f"Remove {ui.plain(f.name)}", key=f"data_remove_{f.key}"):
            session.remove(f.key)
            st.rerun()


def _records_table() -> None:
    files = session.record_files()
    st.subheader(f"Per-request records ({len(files)})")
    if not files:
        st.caption("No records loaded: the RAG quality, Latency and Failures pages need them.")
        return
    rows = []
    for f in files:
        records = loaders.read_records(f.digest, f.name, f.data)
        rows.append({"file": f.name, **display.describe_records(records, f.format), "sample": f.sample,
                     "sha256": f.digest[:12]})
    table = pd.DataFrame(rows)
    st.dataframe(table, hide_index=True, width="stretch")
    ui.download_csv(table, "records.csv", key="data_records_csv")
    for f in files:
        if st.button(f"Remove {ui.plain(f.name)}", key=f"data_remove_{f.key}"):
            session.remove(f.key)
            st.rerun()


def _latency_tables() -> None:
    files = session.latency_table_files()
    if not files:
        return
    st.subheader(f"Latency percentile tables ({len(files)})")
    st.caption("Summaries of requests (percentiles per system and stage), not requests: the Latency page shows "
               "them beside the percentiles computed from the loaded requests.")
    rows = []
    for f in files:
        table = loaders.read_latency_table(f.digest, f.name, f.data)
        rows.append({"file": f.name, "written by": table.tool, "systems": ", ".join(map(str, table.systems)),
                     "stages": ", ".join(map(str, table.table["stage"].drop_duplicates())), "sample": f.sample,
                     "sha256": f.digest[:12]})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    for f in files:
        if st.button(f"Remove {ui.plain(f.name)}", key=f"data_remove_{f.key}"):
            session.remove(f.key)
            st.rerun()


def render() -> None:
    st.title("Data")
    st.caption("Files stay in this browser session until you save them with Save and share (below); reloading the "
               "page starts a new session with the sample data. Each file is read once and cached by the SHA-256 of "
               "its bytes.")
    _uploaders()
    _messages()
    left, middle, right = st.columns(3)
    if left.button("Clear sample data", key="data_clear_samples", icon=":material/delete_sweep:"):
        session.clear(sample_only=True)
        st.rerun()
    if middle.button("Clear all data", key="data_clear_all", icon=":material/delete_forever:"):
        session.clear(sample_only=False)
        st.rerun()
    if right.button("Load sample data", key="data_load_samples", icon=":material/dataset:"):
        session.load_samples()
        st.rerun()
    _runs_table()
    _qrels_table()
    _records_table()
    _latency_tables()
    share.data_page_section()


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
