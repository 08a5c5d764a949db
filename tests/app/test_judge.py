"""The Judge page: a judging run against the loopback server replaying recorded replies
(tests/data/ragas), its progress across page switches, cancel, and the judged records on the other
pages as a new version of the file (original bytes kept)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from judge_server import JudgeServer

from .helpers import open_page, texts

DATA = Path(__file__).resolve().parents[1] / "data" / "ragas"
RECORDS = (DATA / "records.jsonl").read_bytes()
METRICS = ["context_entity_recall", "context_utilization", "faithfulness"]


@pytest.fixture
def server():
    recordings = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    with JudgeServer(recordings=recordings) as srv:
        yield srv
        assert srv.unrecorded == []


def _judge_page(server, monkeypatch, metrics=METRICS):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # AppTest has no browser on loopback: allow a typed endpoint on 127.0.0.1 as a local server would.
    monkeypatch.setenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", "true")
    monkeypatch.setenv("EVALSUITE_JUDGE_ALLOW_PRIVATE_ENDPOINTS", "true")
    at = open_page("judge", pending=[("records", "answers.jsonl", RECORDS)], clear=True)
    at.text_input(key="judge_base_url").input(server.base_url)
    at.text_input(key="judge_model").input("test-judge")
    at.multiselect(key="judge_metrics").set_value(metrics)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _wait(at, until, timeout=60):
    started = time.monotonic()
    while not until(at.session_state["judge_job"]):
        assert time.monotonic() - started < timeout, at.session_state["judge_job"]
        time.sleep(0.2)


def test_fields_and_estimate_before_the_start(server, monkeypatch):
    at = _judge_page(server, monkeypatch)
    needs = at.dataframe[0].value.set_index("metric")
    assert needs.loc["context_utilization", "records with the fields"] == 4  # r3's answer is empty
    assert needs.loc["context_entity_recall", "needs"] == "reference, contexts"
    assert any("judge requests" in t.value for t in at.text)
    assert server.requests == 0  # nothing sent before the start


def test_run_progress_and_result_on_the_other_pages(server, monkeypatch):
    at = _judge_page(server, monkeypatch)
    at.button(key="judge_start").click().run()
    job = at.session_state["judge_job"]
    at.switch_page("pages/overview.py").run()  # the run goes on while another page is shown
    _wait(at, lambda j: not j.running)
    assert job.status == "done", job.message
    assert job.done == job.total == 10  # 5 records x 2 phases (the judge's own, this module's)
    at.switch_page("pages/rag_quality.py").run()  # the shell puts the judged records in the session
    assert not at.exception, [e.value for e in at.exception]
    summary = at.dataframe[0].value
    assert {"context_entity_recall", "context_utilization", "faithfulness"} <= set(summary.columns)
    # Recorded entities: r1 3 of 3, r2 2 of 3 (1600 not in the contexts), r3 4 of 4.
    assert summary.loc["rag", "context_entity_recall"] == pytest.approx((1.0 + 2 / 3 + 1.0) / 3)
    files = at.session_state["data_files"]
    assert [f.name for f in files.values() if f.kind == "records"] == ["answers.judged.parquet"]
    originals = at.session_state["judge_originals"]
    assert [o.data for o in originals.values()] == [RECORDS]  # the original bytes, untouched
    # Per-query: each judged value of a request with its provenance (model, prompt version, mode).
    at.switch_page("pages/per_query.py").run()
    source = at.radio(key="per_query_source")
    source.set_value(source.options[1]).run()
    assert not at.exception, [e.value for e in at.exception]
    judgements = next(d.value for d in at.dataframe if list(d.value.columns) == ["field", "values"])
    judged_fields = dict(zip(judgements["field"], judgements["values"]))
    shown = judged_fields["reference_entities_in_contexts"]  # r1, from the recorded entities: all three found
    assert shown.count("True") == 3 and "False" not in shown, shown
    provenance = next(d.value for d in at.dataframe if "prompt_version" in d.value.columns)
    entities = provenance[provenance["column"] == "reference_entities"].iloc[0]
    assert entities["model"] == "test-judge" and entities["mode"] == "json_schema" and len(entities["prompt_version"]) == 12
    # The raw reply of the first judgement with a request hash, from the judge cache (the recorded reply).
    recorded = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    first = at.selectbox(key="per_query_raw_hash").value
    assert recorded[first]["content"] in [t.value for t in at.text]
    at.switch_page("pages/judge.py").run()
    assert any("replace it on every page" in s.value for s in at.success)
    assert any("requests sent" in i.value for i in at.info)


def test_cancel_keeps_the_session_unchanged(monkeypatch):
    recordings = json.loads((DATA / "recorded_chat.json").read_text(encoding="utf-8"))
    with JudgeServer(recordings=recordings, delay=0.3) as slow:
        at = _judge_page(slow, monkeypatch, metrics=["context_utilization"])
        at.button(key="judge_start").click().run()
        job = at.session_state["judge_job"]
        assert job.running
        at.button(key="judge_cancel").click().run()
        _wait(at, lambda j: not j.running)
        assert job.status == "cancelled" and job.result is None
        assert "nothing joined the session" in job.message
        at.run()
        files = at.session_state["data_files"]
        assert [f.name for f in files.values() if f.kind == "records"] == ["answers.jsonl"]


def test_hosted_dashboard_takes_no_endpoint_from_the_visitor(monkeypatch):
    at = open_page("judge", pending=[("records", "answers.jsonl", RECORDS)], clear=True,
                   secrets={"evalsuite": {"judge_base_url": "http://10.0.0.5:8000/v1", "judge_model": "op-model",
                                          "judge_api_key": "sk-operator-secret"}})
    assert not [t for t in at.text_input if t.key == "judge_base_url"]
    page_text = " ".join(texts([*at.caption, *at.markdown, *at.text]))
    assert "op-model" in page_text and "sk-operator-secret" not in page_text and "10.0.0.5" not in page_text


def test_the_new_metrics_on_compare():
    # Two systems on the same six requests, with the judgement columns the Judge page writes.
    rows = []
    for q in range(6):
        for system, good in (("a", True), ("b", False)):
            rows.append({"query_id": f"q{q}", "system": system,
                         "reference_entities_in_contexts": [good, q % 2 == 0],
                         "context_useful_for_answer": [good, True], "critique_polite": [good]})
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    at = open_page("compare", pending=[("records", "pair.jsonl", data)], clear=True)
    assert not at.exception, [e.value for e in at.exception]
    assert {"context_entity_recall", "context_utilization", "critique_polite"} <= set(
        at.multiselect(key="compare_record_metrics").options)
    at.multiselect(key="compare_record_metrics").set_value(["context_entity_recall"]).run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "context_entity_recall" in d.value.to_string())
    # a: (1 + 0.5) / 2 per pair of requests = 0.75; b: (0.5 + 0) / 2 = 0.25 (hand-computed)
    row = table.iloc[0]
    assert (row["mean baseline"], row["mean system"], row["diff"]) == pytest.approx((0.75, 0.25, -0.5))
    assert (row["W/T/L"], row["n"]) == ("0/0/6", 6)
    from scipy.stats import wilcoxon

    # Per request: a 1.0 / 0.5 alternating, b 0.5 / 0.0: six differences of -0.5.
    assert row["p"] == pytest.approx(wilcoxon([-0.5] * 6).pvalue)


def test_judging_some_records_keeps_the_others_in_the_new_version(server, monkeypatch):
    at = _judge_page(server, monkeypatch, metrics=["context_entity_recall"])
    at.number_input(key="judge_limit").set_value(1).run()  # r1 (rag) and r4 (bm25)
    at.button(key="judge_start").click().run()
    _wait(at, lambda j: not j.running)
    job = at.session_state["judge_job"]
    assert job.status == "done", job.message
    assert job.rows == [0, 3]
    at.switch_page("pages/rag_quality.py").run()
    assert not at.exception, [e.value for e in at.exception]
    summary = at.dataframe[0].value
    # rag: only r1 judged (3 of 3 entities) of its 3 records; bm25: r4 (no contexts: 0 of 2) of 2.
    assert summary.loc["rag", "context_entity_recall"] == 1.0
    assert summary.loc["rag", "context_entity_recall coverage"] == pytest.approx(1 / 3)
    assert summary.loc["bm25", "context_entity_recall"] == 0.0
    assert summary.loc["bm25", "context_entity_recall coverage"] == pytest.approx(1 / 2)


def _state(at):
    start = [b for b in at.button if b.key == "judge_start"]
    return {"exceptions": [e.value for e in at.exception], "errors": [e.value for e in at.error],
            "start": None if not start else not start[0].disabled}


def test_every_selector_in_every_order_on_the_samples_and_an_upload(monkeypatch):
    # Without an endpoint (none configured, none may be typed): only the offline judges are offered.
    monkeypatch.delenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", raising=False)
    at = open_page("judge", pending=[("records", "answers.jsonl", RECORDS)])
    assert not at.exception, [e.value for e in at.exception]
    options = at.selectbox(key="judge_file").options
    assert len(options) == 5 and any(o.startswith("answers.jsonl") for o in options)
    assert at.multiselect(key="judge_metrics").value == ["answer_similarity"]
    assert set(at.multiselect(key="judge_lexical").value) == {"bleu", "chrf", "rouge_l", "token_f1", "exact_match",
                                                               "fuzzy_ratio"}
    # Every file after every other one, forwards then backwards: each shows its own systems, never an error.
    for name in [*options, *reversed(options)]:
        at.selectbox(key="judge_file").set_value(name).run()
        state = _state(at)
        assert state["exceptions"] == [] and state["errors"] == [], (name, state)
        systems = at.multiselect(key="judge_systems")
        assert systems.value == systems.options and systems.value, name  # the new file's systems, all chosen
    # On the upload (answers and references): every selector alone and together.
    upload = next(o for o in options if o.startswith("answers.jsonl"))
    at.selectbox(key="judge_file").set_value(upload).run()
    assert _state(at)["start"] is True
    for systems in ([], ["rag"], ["rag", "bm25"]):
        for metrics, lexical in (([], []), (["answer_similarity"], []), ([], ["bleu"]), (["answer_similarity"],
                                                                                         ["chrf", "token_f1"])):
            at.multiselect(key="judge_systems").set_value(systems)
            at.multiselect(key="judge_metrics").set_value(metrics)
            at.multiselect(key="judge_lexical").set_value(lexical).run()
            state = _state(at)
            assert state["exceptions"] == [] and state["errors"] == [], (systems, metrics, lexical, state)
            nothing = not systems or not (metrics or lexical)
            assert state["start"] is (None if nothing else True), (systems, metrics, lexical, state)
    # A sample without references: Start is disabled and says why.
    ragtruth = next(o for o in options if o.startswith("ragtruth_qa"))
    at.selectbox(key="judge_file").set_value(ragtruth).run()
    assert _state(at)["start"] is False
    assert any("Nothing to judge" in i.value for i in at.info)


def test_offline_judges_run_without_an_endpoint_and_show_what_changed(monkeypatch):
    monkeypatch.delenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", raising=False)
    at = open_page("judge", pending=[("records", "answers.jsonl", RECORDS)], clear=True)
    at.multiselect(key="judge_lexical").set_value(["bleu", "exact_match"]).run()
    at.button(key="judge_start").click().run()
    _wait(at, lambda j: not j.running)
    job = at.session_state["judge_job"]
    assert job.status == "done", job.message
    at.run()
    changes = {row["metric"]: row for row in job.changes}
    assert changes["answer_similarity"]["before"] is None and 0 <= changes["answer_similarity"]["after"] <= 1
    assert changes["answer_similarity"]["judged by"] == "embedding"
    assert changes["bleu"]["judged by"] == "lexical" and changes["bleu"]["before"] is None
    assert 0 <= changes["bleu"]["after"] <= 100 and changes["exact_match"]["records with a value after"] >= 1
    shown = next(d.value for d in at.dataframe if "judged by" in d.value.columns)
    assert list(shown["metric"]) == ["answer_similarity", "bleu", "exact_match"]
    # On RAG quality, the values the judges filled are labelled by the judge that filled them (from
    # the records' judge_provenance), not as values the file gave.
    at.switch_page("pages/rag_quality.py").run()
    assert not at.exception, [e.value for e in at.exception]
    sources = next(d.value for d in at.dataframe if "source" not in d.value.columns
                   and d.value.astype(str).apply(lambda c: c.str.startswith("filled by")).any().any())
    embedding = "filled by the embedding judge (sentence-transformers/all-MiniLM-L6-v2@onnx-int8)"
    assert set(sources["answer_similarity"]) == {embedding}, sources
    assert set(sources["exact_match"]) == {"filled by the lexical judge (SQuAD v1.1 script)"}, sources
    # Every lexical score is a registry score now, so it is shown with the others (only exact_match was).
    assert set(sources["bleu"]) == {"filled by the lexical judge (sacrebleu " + _version("sacrebleu") + ")"}, sources
    assert not (sources.astype(str) == "given in the file").any().any()


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def test_a_dead_endpoint_ends_the_run_with_the_breakers_reason(monkeypatch):
    from judge_server import refused_port

    class Dead:
        base_url = f"http://127.0.0.1:{refused_port()}/v1"

    at = _judge_page(Dead, monkeypatch, metrics=["faithfulness"])
    at.button(key="judge_start").click().run()
    _wait(at, lambda j: not j.running, timeout=60)
    job = at.session_state["judge_job"]
    assert job.status == "cancelled" and job.outcome == "error" and job.result is None  # the audit log: error
    assert f"{Dead.base_url.split('/')[2]} failed 10 requests in a row (10 connection refused)" in job.message
    assert job.stats["calls"] == 0 and job.stats["unreached"] >= 10
    at.run()
    assert any("failed 10 requests in a row" in i.value for i in at.info)


def test_judging_part_of_a_sample_leaves_every_records_page_working(monkeypatch):
    # Judging 3 of ragtruth_qa's records writes answer_claims (sentences) beside the RAGChecker sample's
    # answer_claims (triplets): combining the files raised ArrowTypeError on every records page.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", "true")
    monkeypatch.setenv("EVALSUITE_JUDGE_ALLOW_PRIVATE_ENDPOINTS", "true")
    with JudgeServer(scripted=True) as srv:
        at = open_page("judge")
        assert at.selectbox(key="judge_file").value.startswith("ragtruth_qa.jsonl")
        at.multiselect(key="judge_systems").set_value(["gpt-4-0613"]).run()
        at.number_input(key="judge_limit").set_value(3).run()
        at.text_input(key="judge_base_url").input(srv.base_url)
        at.text_input(key="judge_model").input("test-judge")
        at.multiselect(key="judge_metrics").set_value(["faithfulness"]).run()
        at.button(key="judge_start").click().run()
        _wait(at, lambda j: not j.running)
        assert at.session_state["judge_job"].status == "done", at.session_state["judge_job"].message
    for page in ("rag_quality", "latency", "failures", "compare"):
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception and not texts(at.error), (page, texts(at.error))


@pytest.mark.parametrize("malformed_every", [4, 1])
def test_some_missing_judgements_keep_the_others_all_missing_fails(monkeypatch, malformed_every):
    # Every 4th reply malformed: about a quarter of the judgements missing (past the CLI's --max-missing),
    # the page keeps the ones it paid for and says what is missing. Every reply malformed: nothing to
    # keep, the run failed.
    import itertools
    import threading

    from judge_server import scripted_reply

    counter, lock = itertools.count(1), threading.Lock()

    def reply(body):
        with lock:
            n = next(counter)
        return "this is not JSON" if n % malformed_every == 0 else scripted_reply(body)

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", "true")
    monkeypatch.setenv("EVALSUITE_JUDGE_ALLOW_PRIVATE_ENDPOINTS", "true")
    with JudgeServer(reply=reply) as srv:
        at = open_page("judge", query={"judge_metrics": "faithfulness"})
        at.number_input(key="judge_limit").set_value(1).run()
        at.text_input(key="judge_base_url").input(srv.base_url)
        at.text_input(key="judge_model").input("test-judge").run()
        at.button(key="judge_start").click().run()
        _wait(at, lambda j: not j.running)
        job = at.session_state["judge_job"]
    # (How many judgements there are depends on which replies were malformed: a claims reply that
    # is lost asks for no verdicts.)
    if malformed_every == 4:
        missing = job.stats["missing"].get("malformed", 0)
        assert job.status == "done", job.message
        assert missing / job.stats["judgements"] > 0.1 and job.stats["ok"] > 0, job.stats
        assert f"{missing} missing ({missing} malformed)" in job.message, job.message
    else:
        assert job.stats["ok"] == 0, job.stats
        assert job.status == "error" and "nothing joined the session" in job.message, job.message


def test_a_record_whose_every_judgement_is_missing_is_counted_apart(monkeypatch):
    # r2's requests get replies that are not JSON (its claims are lost, so no verdict is asked):
    # judged in name only; the message counts it apart from the four judged.
    from judge_server import scripted_reply

    def reply(body):
        return "this is not JSON" if "Hamlet" in body["messages"][1]["content"] else scripted_reply(body)

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", "true")
    monkeypatch.setenv("EVALSUITE_JUDGE_ALLOW_PRIVATE_ENDPOINTS", "true")
    with JudgeServer(reply=reply) as srv:
        at = open_page("judge", pending=[("records", "answers.jsonl", RECORDS)], clear=True)
        at.text_input(key="judge_base_url").input(srv.base_url)
        at.text_input(key="judge_model").input("test-judge")
        at.multiselect(key="judge_metrics").set_value(["faithfulness"]).run()
        at.button(key="judge_start").click().run()
        _wait(at, lambda j: not j.running)
        job = at.session_state["judge_job"]
    assert job.status == "done", job.message
    assert job.message.startswith("4 of 5 records judged, 1 with every judgement missing:"), job.message
    at.run()
    assert any("1 with every judgement missing" in t for t in texts(at.success) + texts(at.info) + texts(at.warning)), (
        texts(at.success), texts(at.info), texts(at.warning))


def test_a_page_run_of_an_llm_and_a_lexical_judge_counts_records_from_their_outcomes(tmp_path):
    """The page's two judges together: the lexical judge fills only the record with a reference, so
    its own count is 1; the summary counts from the combined per-record outcomes (37 answered, 3
    whose every judgement is missing), never done - missing of different bases (it said -2 of 40)."""
    from dashboard import judge_jobs
    from evalsuite.judges import JudgeCache, LLMJudge
    from evalsuite.judges.lexical import LexicalJudge
    from evalsuite.judges.ragas import RagasJudge
    from evalsuite.records.table import Records

    def reply(body):
        return "not json" if "BAD" in body["messages"][1]["content"] else '{"verdict": "yes"}'

    rows = [{"query_id": f"q{i}", "system": "s", "question": ("BAD " if i < 3 else "") + f"question {i}",
             "answer": f"answer {i}", "contexts": [f"chunk {i}"], **({"reference": "answer 39"} if i == 39 else {})}
            for i in range(40)]
    records = Records.from_rows(rows)
    with JudgeServer(reply=reply) as srv:
        llm = LLMJudge("m", base_url=srv.base_url, api_key="k", cache=JudgeCache(tmp_path / "c.sqlite3"),
                       max_retries=0)
        judge = judge_jobs.PageJudge(RagasJudge(llm, None, metrics=["context_relevance"]),
                                     LexicalJudge(metrics=["token_f1"]))
        job = judge_jobs.JudgeJob(file_key="k", file_name="r.jsonl", metrics=["context_relevance"],
                                  rows=list(range(40)), judge=judge)
        judge_jobs._run(job, records)
    assert job.status == "done", job.message
    assert job.message.startswith("37 of 40 records judged, 3 with every judgement missing"), job.message


def test_the_records_file_picker_stays_on_the_file_just_judged(monkeypatch):
    """After a run the judged version replaces the file (a new digest, so a new label): the picker
    shows it, not the first file of the list ("Nothing to judge" above the other file's results)."""
    monkeypatch.delenv("EVALSUITE_JUDGE_TYPED_ENDPOINTS", raising=False)
    at = open_page("judge", pending=[("records", "answers.jsonl", RECORDS)])
    upload = next(o for o in at.selectbox(key="judge_file").options if o.startswith("answers.jsonl"))
    assert at.selectbox(key="judge_file").options.index(upload) > 0
    at.selectbox(key="judge_file").set_value(upload).run()
    at.multiselect(key="judge_metrics").set_value([])
    at.multiselect(key="judge_lexical").set_value(["token_f1"]).run()
    at.button(key="judge_start").click().run()
    _wait(at, lambda j: not j.running)
    assert at.session_state["judge_job"].status == "done"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="judge_file").value.startswith("answers.judged.parquet")
