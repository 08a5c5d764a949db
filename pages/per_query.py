"""Per-query page: one system's per-query table (sortable, filterable, downloadable), a per-query
bar chart, and the selected query's ranked list with relevance labels (runs) or its question,
contexts, answer and judgements (per-request records)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import loaders, session, ui
from dashboard.constants import BASE_METRICS, CUTOFFS, RANKED_LIST_DEPTH, WHOLE_LIST, WHOLE_LIST_TREC
from evalsuite import display
from evalsuite.metrics.registry import PER_CHUNK_INPUTS, RECORD_INPUTS

_RECORD_TEXT = ("question", "answer", "reference", "error")
# The list columns a metric reads (the registry's inputs), the retrieved and relevant ids, and the
# questions a judge generated for answer relevancy.
_RECORD_LISTS = (*(c for c, kind in RECORD_INPUTS.items() if kind in ("labels", "grades", "texts")),
                 "context_ids", "relevant_ids", "generated_questions")


def _select_query(table_key: str, ids_key: str) -> None:
    """Dataframe row selection -> the URL-bound query picker (runs before the widgets exist)."""
    event = st.session_state.get(table_key)
    ids = st.session_state.get(ids_key) or []
    rows = event.selection.rows if event is not None else []
    if rows and rows[0] < len(ids):
        st.session_state["per_query_query"] = ids[rows[0]]


def _filter(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    left, right = st.columns(2)
    # Bound to the URL like the pickers: the filters are part of the view a share link reproduces.
    text = ui.bound(left.text_input, "Query id contains", key="per_query_filter")
    # Metric values are in [0, 1], except values a records file gives directly on another scale.
    values = table[metric].to_numpy(dtype=float, na_value=np.nan)
    finite = values[np.isfinite(values)]
    bottom = min(0.0, float(np.floor(finite.min()))) if finite.size else 0.0
    top = max(1.0, float(np.ceil(finite.max()))) if finite.size else 1.0
    low, high = ui.bound(right.slider, f"{ui.plain(metric)} between", bottom, top, (bottom, top), step=0.01,
                         key="per_query_range")
    keep = table[metric].between(low, high) | (table[metric].isna() & (low == bottom))
    if text:
        keep &= table["query_id"].astype(str).str.contains(text, regex=False)
    return table[keep].reset_index(drop=True)


def _table_and_chart(table: pd.DataFrame, metric: str, file_stub: str) -> None:
    shown = _filter(table, metric)
    st.caption(f"{len(shown)} of {len(table)} queries. Click a row to open it below; click a column header to sort.")
    st.session_state["per_query_table_ids"] = shown["query_id"].astype(str).tolist()
    st.dataframe(shown, hide_index=True, width="stretch", height=320, key="per_query_table", on_select=lambda: _select_query("per_query_table", "per_query_table_ids"),
                 selection_mode="single-row",
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in shown.columns
                                if pd.api.types.is_float_dtype(shown[c])})
    ui.download_csv(shown, f"per_query_{file_stub}.csv", key="per_query_csv")
    ui.chart(display.per_query_bars(shown, metric, highlight=st.session_state.get("per_query_query")),
             key="per_query_bars")


def _runs_view() -> None:
    loaded = ui.runs_and_qrels_or_notice()
    if loaded is None:
        return
    runs, qrels_file = loaded
    a, b, c = st.columns(3)
    system = ui.pick("System", list(runs), key="per_query_system", container=a)
    base = ui.pick("Metric", BASE_METRICS, key="per_query_metric", container=b)
    k = ui.pick("Cutoff k", CUTOFFS, index=CUTOFFS.index(10), key="per_query_k", container=c,
                help=f"{WHOLE_LIST} = no cutoff, the whole ranked list: trec_eval's "
                     + ", ".join(WHOLE_LIST_TREC.values()))
    cutoff = None if k == WHOLE_LIST else int(k)
    metric = display.metric_name(base, cutoff)
    f = runs[system]
    qrels = loaders.read_qrels(qrels_file.digest, qrels_file.name, qrels_file.data)
    run = loaders.read_run(f.digest, f.name, f.data)
    try:
        with st.spinner(f"Evaluating {ui.plain(system)}"):
            report = loaders.evaluate_run(qrels_file.digest, f.digest, (metric,), ui.rel_level(), qrels, run)
    except Exception as exc:
        ui.show_error(exc)
        return
    table = display.per_query_table(report)
    _table_and_chart(table, metric, system)

    st.subheader("Ranked list of one query")
    query = ui.pick("Query", table["query_id"].astype(str).tolist(), key="per_query_query")
    depth = RANKED_LIST_DEPTH if cutoff is None else max(cutoff, RANKED_LIST_DEPTH)
    ranked = display.ranked_list_with_labels(run, qrels, query, k=depth, rel_level=ui.rel_level(),
                                           titles=loaders.cranfield_titles() if any(s.sample for s in session.qrels_files()) else None)
    value = table.loc[table["query_id"] == query, metric]
    st.text(f"Query {query}: {metric} = {float(value.iloc[0]):.4f}" if len(value) else f"Query {query}")
    if ranked.empty:
        st.info("The run has no results for this query (it scores 0).")
    else:
        st.dataframe(ranked, hide_index=True, width="stretch", column_order=("rank", "doc_id", "label", "grade", "title", "score"),
                     column_config={"score": st.column_config.NumberColumn("score", format="%.4f")})
        ui.download_csv(ranked, f"ranked_{system}_{query}.csv", key="per_query_ranked_csv")
    judged = qrels.query(query) if query in set(qrels.query_ids.tolist()) else {}
    st.caption(f"{sum(1 for g in judged.values() if g >= ui.rel_level())} relevant docs judged for this query.")


def _plain_list(values) -> list:
    """A judgement list as Python values (numpy arrays and scalars converted)."""
    return values.tolist() if hasattr(values, "tolist") else [v.item() if hasattr(v, "item") else v for v in values]


def _records_view() -> None:
    loaded = ui.records_report_or_notice()
    if loaded is None:
        return
    records, report = loaded
    a, b = st.columns(2)
    system = ui.pick("System", report.systems, key="per_query_record_system", container=a)
    table = report.per_query[report.per_query["system"] == system].drop(columns=["system"]).reset_index(drop=True)
    table = table.dropna(axis=1, how="all")
    metrics = [m for m in ui.record_metrics(report) if m in table]
    if not metrics:
        st.warning(f"The records of {ui.plain(system)} have no field a quality metric needs (judgement lists or success).")
        return
    metric = ui.pick("Metric", metrics, key="per_query_record_metric", container=b)
    _table_and_chart(table, metric, system)

    st.subheader("One request")
    query = ui.pick("Request (query id)", table["query_id"].astype(str).tolist(), key="per_query_query")
    frame = records.frame
    row = frame[(frame["system"] == system) & (frame["query_id"].astype(str) == query)]
    if row.empty:
        st.info("No record for this request.")
        return
    record = row.iloc[0]
    for field in _RECORD_TEXT:
        if field in record and isinstance(record[field], str) and record[field]:
            st.markdown(f"**{field}**")
            st.text(record[field])
    contexts = record.get("contexts") if "contexts" in record else None
    if contexts is not None and len(contexts):
        st.markdown("**contexts**")
        labels = {f: record[f] for f in PER_CHUNK_INPUTS if f in record
                  and record[f] is not None and len(record[f]) == len(contexts)}
        context_table = pd.DataFrame({"rank": range(1, len(contexts) + 1), "context": list(contexts),
                                      **{f: list(v) for f, v in labels.items()}})
        st.dataframe(context_table, hide_index=True, width="stretch")
        ui.download_csv(context_table, f"contexts_{system}_{query}.csv", key="per_query_contexts_csv")
    # Arrow lists come back as numpy arrays: .tolist() gives Python True/False/None, not np.True_.
    judgements = {f: _plain_list(record[f]) for f in (*_RECORD_LISTS, *(c for c in record.index if c.startswith("critique_")))
                  if f in record and record[f] is not None
                  and not isinstance(record[f], float)}
    if judgements:
        st.markdown("**judgements** (None = not judged)")
        judgement_table = pd.DataFrame({"field": list(judgements), "values": [str(v) for v in judgements.values()]})
        st.dataframe(judgement_table, hide_index=True, width="stretch")
        ui.download_csv(judgement_table, f"judgements_{system}_{query}.csv", key="per_query_judgements_csv")
    _provenance(record, system, query)
    values = table.loc[table["query_id"].astype(str) == query].drop(columns=["query_id"])
    st.markdown("**values computed for this request**")
    st.dataframe(values, hide_index=True, width="stretch")


def _provenance(record, system: str, query: str) -> None:
    """Where each judged value came from (judge_provenance), and a judgement's raw judge output."""
    text = record.get("judge_provenance") if "judge_provenance" in record else None
    if not isinstance(text, str) or not text:
        return
    import json

    try:
        entries = [e for e in json.loads(text) if isinstance(e, dict)]
    except ValueError:
        return
    if not entries:
        return
    st.markdown("**provenance of the judged values**")
    columns = ["column", "judge", "model", "prompt_version", "mode", "status", "cached", "index", "request_hash"]
    frame = pd.DataFrame([{c: e.get(c) for c in columns} for e in entries])
    st.dataframe(frame, hide_index=True, width="stretch")
    ui.download_csv(frame, f"provenance_{system}_{query}.csv", key="per_query_provenance_csv")
    from dashboard import judge_jobs

    # Raw replies only of requests this session's own runs made: a hash in a file proves nothing.
    hashes = [h for h in frame["request_hash"].tolist() if judge_jobs.own_request(h)]
    if hashes:
        chosen = st.selectbox("Raw judge output of", hashes, key="per_query_raw_hash",
                              format_func=lambda h: f"{frame.loc[frame['request_hash'] == h, 'column'].iloc[0]} ({h[:12]})")
        raw = judge_jobs.raw_output(chosen)
        st.text(raw if raw is not None else "Not in this server's judge cache.")
    elif any(isinstance(h, str) and h for h in frame["request_hash"].tolist()):
        st.caption("Raw judge replies are shown only in the browser session whose judge run made them.")


def render() -> None:
    st.title("Per-query")
    if ui.pick_source("per_query_source", runs_needed=1):
        _runs_view()
    else:
        _records_view()


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
