"""Judge page: every RAGAS metric from raw records, and the lexical scores. Choose the records,
metrics and judges; see which fields each metric needs and which records have them; the estimate
before starting (Start is disabled, with the reason, when there is nothing to judge); a progress
bar that survives page switches; cancel; after a run, per metric its mean before and after and the
judges that filled it. Without an endpoint the offline judges are offered (the bundled embedding
model and the lexical scores: BLEU, chrF, ROUGE-L, SQuAD F1 and exact match, fuzzy ratio). The
judged records replace the file on every page as a new version (the original bytes are kept and can
be restored)."""

from __future__ import annotations

import streamlit as st

from dashboard import hosting, judge_jobs, loaders, session, ui
from evalsuite.judges.lexical import LEXICAL_COLUMNS
from evalsuite.judges.ragas_needs import coverage_of
from evalsuite.metrics.registry import GIVEN_SCORES, JUDGED_METRICS, METRICS

_DEFAULT_METRICS = [m for m in JUDGED_METRICS if m != "aspect_critique"]
_OFFLINE_METRICS = [m for m in JUDGED_METRICS if "llm" not in METRICS[m].needs.judges]
def _lexical_label(name: str) -> str:
    """A lexical score as offered: its column and the library that computes it (from the registry)."""
    source = GIVEN_SCORES[name].source
    library = source[source.index("lexical judge (") + len("lexical judge ("):-1] if "lexical judge (" in source else ""
    return f"{name} ({library})" if library else name


def _progress() -> None:
    """The current run's progress (redrawn every second while it runs)."""
    job = judge_jobs.current()
    if job is None:
        return
    st.subheader("Run")
    fraction = min(1.0, job.done / job.total) if job.total else 0.0
    stats = job.stats
    waiting = (f", {stats['in_flight']} waiting for a reply (the oldest {stats.get('waiting_s', 0.0):.0f} s)"
               if job.running and stats.get("in_flight") else "")
    failed = sum((stats.get("failures") or {}).values())
    label = (f"{job.file_name}: {job.done} of {job.total} steps; {stats.get('calls', 0)} requests, "
             f"{stats.get('cache_hits', 0)} from the cache{waiting}" + (f", {failed} failed attempts" if failed else "")
             + f", cost {stats.get('cost', 0.0):.4f}")
    st.progress(fraction, text=ui.plain(label))
    st.caption(f"Status: {job.status}")
    if job.running:
        if st.button("Cancel", key="judge_cancel", icon=":material/stop:"):
            job.cancel()
            st.rerun()
    elif job.status == "error":
        st.error(ui.plain(job.message), icon=":material/error:")
    elif job.message:
        st.info(ui.plain(job.message), icon=":material/info:")
    if not job.running and job.changes:
        st.caption("What the run changed: each metric's mean over the judged records before and after it, and the "
                   "judges that filled it (each record's judge and model are in its provenance on Per-query).")
        st.dataframe(job.changes, hide_index=True, width="stretch")


def _live_progress() -> None:
    job = judge_jobs.current()
    if job is not None and job.running:
        st.fragment(run_every=1.0)(_progress_and_finish)()
    else:
        _progress()


def _progress_and_finish() -> None:
    _progress()
    job = judge_jobs.current()
    if job is not None and not job.running:
        st.rerun()  # the whole page: the judged records join the session (shell) and the form comes back


_OPERATOR, _OWN = "This dashboard's endpoint", "My own endpoint"


def _endpoint():
    """``(Endpoint or None, options the visitor entered)``: the operator's endpoint, or one the
    visitor types where the operator allows it (the rules: :mod:`evalsuite.judges.endpoints`)."""
    from evalsuite.judges.endpoints import choose_endpoint

    try:
        access = hosting.judge_access()
    except Exception as exc:
        ui.show_error(exc)
        return None, {}
    own = access.typed_endpoints
    if access.has_operator_endpoint and own:
        own = st.radio("Judge endpoint", (_OPERATOR, _OWN), horizontal=True, key="judge_endpoint_choice") == _OWN
    if not own:
        if access.has_operator_endpoint:
            st.caption("This dashboard judges with its operator's endpoint"
                       + (f" (model {ui.plain(access.model)})" if access.model else "")
                       + "; the address and key are set by the operator.")
        else:
            st.info("No judge endpoint: the operator has configured none (judge_base_url), so the metrics that need "
                    "an LLM judge cannot be judged here." + (" An API key in the server's settings is never sent "
                                                             "without its endpoint." if access.unused_key else ""),
                    icon=":material/info:")
            return None, {}
        try:
            return choose_endpoint(access), {}
        except Exception as exc:
            ui.show_error(exc)
            return None, {}
    a, b = st.columns(2)
    url = a.text_input("Endpoint (OpenAI-compatible)", key="judge_base_url", placeholder="http://127.0.0.1:8080/v1",
                       help="Your own endpoint" + ("" if access.allow_private else
                                                   " (a public address: this dashboard refuses private ones)"))
    model = b.text_input("Model", key="judge_model", placeholder="qwen2.5-7b-instruct")
    key = st.text_input("API key of your endpoint (optional)", key="judge_api_key", type="password",
                        help="Kept in this browser session only: never stored, logged, cached or put in a link. "
                             "The server's own keys are never sent to an endpoint typed here.")
    c, d, e = st.columns(3)
    options = {"price_input": c.number_input("Price per million input tokens", min_value=0.0, value=0.0,
                                             key="judge_pin"),
               "price_output": d.number_input("Price per million output tokens", min_value=0.0, value=0.0,
                                              key="judge_pout")}
    options["budget"] = e.number_input("Budget (0 = none)", min_value=0.0, value=0.0, key="judge_budget") or None
    if not url.strip() or not model.strip():
        return None, options
    try:
        return choose_endpoint(access, url, model, key), options
    except Exception as exc:
        ui.show_error(exc)
        return None, options


def _aspects() -> dict[str, str]:
    text = st.text_area("Aspects (one per line: name = definition)", key="judge_aspects",
                        placeholder="concise = The response answers in at most two sentences.")
    out = {}
    for line in text.splitlines():
        name, sep, definition = line.partition("=")
        if sep and name.strip() and definition.strip():
            out[name.strip()] = definition.strip()
    return out


def _offline_only() -> bool:
    """No endpoint can be used here (the operator set none and visitors may not type one)."""
    try:
        access = hosting.judge_access()
    except Exception:
        return True
    return not (access.has_operator_endpoint or access.typed_endpoints)


def _pairs_with_text(records) -> int:
    """Records with both an answer and a reference (what a lexical score compares)."""
    table = records.table
    if "answer" not in table.column_names or "reference" not in table.column_names:
        return 0
    return sum(a is not None and r is not None for a, r in zip(table.column("answer").to_pylist(),
                                                              table.column("reference").to_pylist()))


def render() -> None:
    st.title("Judge")
    judge_jobs.collect_finished()
    for notice in st.session_state.pop(judge_jobs.KEY_JOB_NOTICES, []):
        st.success(ui.plain(notice), icon=":material/check_circle:")
    job = judge_jobs.current()
    if job is not None and job.running:
        _live_progress()
        return
    files = session.record_files()
    if not files:
        ui.no_data("No per-request records loaded.")
        _progress()
        return
    names = [judge_jobs.file_label(f) for f in files]
    chosen = ui.pick("Records file", names, key=judge_jobs.KEY_FILE_PICKER)
    stored = files[names.index(chosen)] if chosen in names else files[0]
    try:
        records = loaders.read_records(stored.digest, stored.name, stored.data)
    except Exception as exc:
        ui.show_error(exc)
        return
    originals = st.session_state.get(judge_jobs.KEY_ORIGINALS, {})
    if stored.key in originals:
        st.caption(f"A judged version of {ui.plain(originals[stored.key].name)} (original kept unchanged).")
        if st.button("Restore the original file", key="judge_restore"):
            judge_jobs.restore_original(stored.key)
            st.rerun()
    # Another file than last time: its own systems and size (the last file's choice would select nothing).
    reset = st.session_state.get("judge_file_shown", stored.key) != stored.key
    st.session_state["judge_file_shown"] = stored.key
    if reset:
        st.session_state["judge_systems"] = list(records.systems)
        st.session_state["judge_limit"] = min(20, max(1, len(records)))
    systems = ui.bound(st.multiselect, "Systems", records.systems, default=None if reset else records.systems,
                       key="judge_systems")
    limit = st.number_input("Records at most (the first of each chosen system)", min_value=1,
                            value="min" if reset else min(20, max(1, len(records))), step=1, key="judge_limit")
    system_column = records.table.column("system").to_pylist()
    per_system: dict = {}
    rows = []
    for i, s in enumerate(system_column):
        if s in systems and per_system.get(s, 0) < limit:
            per_system[s] = per_system.get(s, 0) + 1
            rows.append(i)
    offline = _offline_only()
    metrics = ui.bound(st.multiselect, "Metrics", list(JUDGED_METRICS), default=_OFFLINE_METRICS if offline else
                       _DEFAULT_METRICS, key="judge_metrics",
                       help="The metrics judged by the LLM need an endpoint; answer similarity runs on the bundled "
                            "embedding model")
    lexical = ui.bound(st.multiselect, "Lexical scores (no model, no endpoint)", list(LEXICAL_COLUMNS),
                       default=list(LEXICAL_COLUMNS) if offline else [], key="judge_lexical",
                       format_func=_lexical_label,
                       help="Each record's answer against its reference")
    aspects = _aspects() if "aspect_critique" in metrics else {}
    a, b = st.columns(2)
    strictness = a.number_input("Questions per answer (answer relevancy)", min_value=1, max_value=10, value=3,
                                key="judge_strictness")
    votes = b.number_input("Votes per aspect (odd)", min_value=1, max_value=9, value=1, step=2, key="judge_votes")
    endpoint, options = _endpoint()

    import evalsuite as es

    import pyarrow as pa

    # An int64 array: an empty selection (no system chosen) must take no rows, not fail to infer a type.
    subset = records if len(rows) == len(records) else es.Records(
        records.table.take(pa.array(rows, pa.int64())), source=records.source, extra_columns=list(records.extra_columns))
    judgeable = 0
    if metrics or lexical:
        info = coverage_of(subset, metrics)
        st.subheader("Fields each metric needs")
        table = [{"metric": m, "needs": ", ".join(i["fields"]), "judges": ", ".join(METRICS[m].needs.judges),
                  "records with the fields": i["records_with_fields"], "records chosen": i["records"],
                  "missing fields": ", ".join(i["missing_fields"])} for m, i in info.items()]
        pairs = _pairs_with_text(subset)
        table += [{"metric": m, "needs": "answer, reference", "judges": "lexical", "records with the fields": pairs,
                   "records chosen": len(subset), "missing fields": ", ".join(
                       f for f in ("answer", "reference") if f not in subset.table.column_names)} for m in lexical]
        st.dataframe(table, hide_index=True, width="stretch")
        judgeable = max([row["records with the fields"] for row in table], default=0)
    if not rows or not (metrics or lexical):
        st.info("Choose at least one system and one metric.", icon=":material/info:")
        _progress()
        return
    if any("llm" in METRICS[m].needs.judges for m in metrics) and endpoint is None:
        if "judge_base_url" in st.session_state:  # the endpoint fields are on the page (else it said why)
            st.info("Name your endpoint and model to see the estimate and start.", icon=":material/info:")
        _progress()
        return
    try:
        judge = judge_jobs.build_judge(endpoint, metrics, aspects, int(strictness), int(votes), options=options,
                                       owner=hosting.user().id, lexical=lexical)
        estimate = judge.estimate(subset)
    except Exception as exc:
        ui.show_error(exc)
        _progress()
        return
    st.subheader("Estimate")
    st.text(f"{len(rows)} records: {estimate}")
    why_not = None if judgeable else (f"Nothing to judge: none of the {len(rows)} chosen records has the fields any "
                                      "chosen metric needs (see the table above).")
    if why_not:
        st.info(why_not, icon=":material/block:")
    if st.button("Start judging", key="judge_start", type="primary", icon=":material/play_arrow:",
                 disabled=why_not is not None, help=why_not):
        job = judge_jobs.JudgeJob(stored.key, stored.name, list(metrics), rows, judge=judge, estimate=str(estimate),
                                  lexical=list(lexical))
        try:
            judge_jobs.start(job, records, endpoint=endpoint)
        except Exception as exc:  # a limit: the message says which
            ui.show_error(exc)
        else:
            st.rerun()
    _progress()


if __name__ == "__main__":
    from dashboard.shell import page_entry

    page_entry(render)
