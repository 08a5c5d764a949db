"""Save and share: workspaces in the store, links with ws=<id>, links that cannot be opened, deleting."""

from __future__ import annotations

import sqlite3
import time
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

import evalsuite as es
from evalsuite.storage import check_workspace_id, new_workspace_id, open_store

from .helpers import (CRANFIELD, MINE, SAMPLE_FILES, open_page, save_from, saved_workspace, sha256, texts,
                      workspace_table)


def test_save_and_share_from_the_sidebar_stores_every_file_and_the_view(store_dir):
    at = open_page("compare", query={"compare_a": "BM25L", "compare_b": "BM25", "compare_test": "t-test"},
                   url="http://evalsuite.test:8501/compare")
    link, token = save_from(at, "share", "Cranfield <b>bold</b> [x](http://evil.test)", days=30)
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "evalsuite.test:8501", "/compare")
    query = parse_qs(parts.query)
    # Every widget of the view bound to the URL, with its value; the id; nothing else.
    assert query["compare_a"] == ["BM25L"] and query["compare_b"] == ["BM25"] and query["compare_test"] == ["t-test"]
    assert query["compare_metrics"] == ["ndcg@10", "map@100", "mrr@10", "recall@100"]
    assert query["compare_source"] == ["ranking runs"] and query["compare_alpha"] == ["0.05"]
    assert query["compare_regressions"] == ["false"] and query["rel_level"] == ["1"]
    assert query["compare_metric"] == ["ndcg@10"] and len(query["compare_query"]) == 1
    assert set(query) == {"ws", "rel_level", "compare_source", "compare_a", "compare_b", "compare_metrics",
                          "compare_test", "compare_correction", "compare_alpha", "compare_metric",
                          "compare_regressions", "compare_query", "compare_plan_difference"}
    workspace_id = check_workspace_id(query["ws"][0])
    assert token not in link and len(token) >= 40
    assert at.query_params["ws"] == workspace_id  # the address bar reopens it too
    # The name is shown as text, never as markup.
    success = at.success[0].value
    assert "<b>" not in success and "](http" not in success
    assert texts(at.success)[0] == "Saved workspace Cranfield <b>bold</b> [x](http://evil.test)"

    with open_store(data_dir=store_dir) as store:
        workspace = store.load_workspace(workspace_id)
        assert workspace.name == "Cranfield <b>bold</b> [x](http://evil.test)"
        assert [(r.kind, r.filename, r.digest, r.system) for r in workspace.datasets] == [
            (kind, path.name, sha256(path.read_bytes()), system) for kind, path, system in SAMPLE_FILES]
        for ref, (_, path, _) in zip(workspace.datasets, SAMPLE_FILES):
            assert store.get_dataset(ref.digest) == path.read_bytes()
        assert workspace.expires_at - workspace.created_at == timedelta(days=30)
        store.delete_workspace(workspace_id, token)  # the token shown is the owner's
        assert store.list_workspaces([workspace_id])[0].status == "deleted"


def test_done_hides_the_owner_token():
    at = open_page("overview")
    save_from(at, "share", "once")
    # Issue 15: the link and the token are one line each (they scroll and have a copy button),
    # not wrapped over twenty lines of the sidebar.
    assert len(at.code) == 2 and not any(code.proto.wrap_lines for code in at.code)
    at.button(key="share_result_done").click().run()
    assert not at.code and not at.success


def test_link_opens_the_workspace_in_place_of_the_sample_data_with_the_view(store_dir):
    saved, files = saved_workspace(store_dir)
    at = open_page("overview", query={"ws": saved.workspace_id, "overview_metrics": ["ndcg", "map"],
                                      "overview_k": ["5"]})
    assert not at.error, texts(at.error)
    shown = at.dataframe[0].value
    assert list(shown.index) == ["Mine", "BM25"]  # the workspace's runs, in its order; no sample run
    qrels = es.read_qrels(files[0][2])
    for system, data in (("Mine", MINE), ("BM25", files[2][2])):
        expected = es.evaluate(qrels, es.read_run(data), ["ndcg@5", "map@5"]).means
        assert shown.loc[system, "ndcg@5"] == pytest.approx(expected["ndcg@5"], abs=1e-12)
        assert shown.loc[system, "map@5"] == pytest.approx(expected["map@5"], abs=1e-12)
    assert at.multiselect(key="overview_metrics").value == ["ndcg", "map"]
    assert at.multiselect(key="overview_k").value == [5]
    assert at.query_params["ws"] == saved.workspace_id
    assert "Workspace: from the test" in texts(at.sidebar.caption)

    at.switch_page("pages/rag_quality.py").run()
    assert at.info and "No per-request records" in at.info[0].value  # the samples' records are gone
    assert at.query_params["ws"] == saved.workspace_id  # kept on every page while the data is unchanged

    at.switch_page("pages/data.py").run()
    runs = at.dataframe[0].value
    assert runs["system"].tolist() == ["Mine", "BM25"] and runs["sample"].tolist() == [False, True]
    listed = workspace_table(at)
    assert listed[["name", "status", "yours", "files"]].values.tolist() == [["from the test", "active", "opened", 3]]
    assert f"data_ws_delete_{saved.workspace_id}" not in [b.key for b in at.button]  # no owner token here


def test_changing_the_data_drops_the_workspace_from_the_url(store_dir):
    saved, _ = saved_workspace(store_dir)
    at = open_page("data", query={"ws": saved.workspace_id})
    assert at.query_params["ws"] == saved.workspace_id
    other = MINE.replace(b"mine", b"other").replace(b" 184 ", b" 9 ")
    at.session_state["data_pending"] = [("run", "other.trec", other)]
    at.run()
    assert "ws" not in at.query_params  # the URL no longer claims to be that workspace
    assert texts(at.subheader)[1] == "Runs (3)"


def _bad_link(case: str, store_dir) -> str:
    if case == "malformed":
        return "[click me](http://evil.test) <b>x</b>"
    if case == "unknown":
        return new_workspace_id()
    if case == "damaged":
        saved, _ = saved_workspace(store_dir)
        first = saved.workspace_id[0]
        return ("B" if first == "A" else "A") + saved.workspace_id[1:]
    if case == "deleted":
        saved, _ = saved_workspace(store_dir)
        with open_store(data_dir=store_dir) as store:
            store.delete_workspace(saved.workspace_id, saved.owner_token)
        return saved.workspace_id
    if case == "expired":  # saved three days ago to expire after one
        saved, _ = saved_workspace(store_dir, clock=lambda: time.time() - 3 * 86400, expires_in_days=1)
        return saved.workspace_id
    raise AssertionError(case)


@pytest.mark.parametrize("case,expected", [
    ("malformed", "this is not a workspace id"),
    ("damaged", "this workspace id fails its check: the link was changed or mistyped"),
    ("unknown", "no workspace with this id is stored here"),
    ("deleted", "this workspace was deleted by its owner on"),
    ("expired", "this workspace expired on"),
])
def test_a_link_that_cannot_be_opened_says_why_and_the_sample_data_stays(store_dir, case, expected):
    workspace_id = _bad_link(case, store_dir)
    at = open_page("overview", query={"ws": workspace_id})
    errors = texts(at.error)
    assert len(errors) == 1, errors
    assert errors[0].startswith("This shared workspace cannot be opened: " + expected), errors[0]
    assert errors[0].endswith("Showing the sample data instead.")
    assert "<b>" not in at.error[0].value and "](http" not in at.error[0].value
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]  # the dashboard works on
    at.button(key="ws_problem_dismiss").click().run()
    assert "ws" not in at.query_params and not at.error


def test_damaged_bytes_in_the_store_are_reported_not_used(store_dir):
    saved, files = saved_workspace(store_dir)
    digest = sha256(MINE)
    with sqlite3.connect(store_dir / "workspaces.sqlite3") as conn:  # changed outside EvalSuite
        conn.execute("UPDATE evalsuite_dataset_blobs SET data = ? WHERE digest = ?", (MINE.replace(b"184", b"185"),
                                                                                      digest))
    conn.close()
    at = open_page("overview", query={"ws": saved.workspace_id})
    errors = texts(at.error)
    assert len(errors) == 1 and "do not match its SHA-256" in errors[0], errors
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]  # nothing of the workspace was loaded


def test_workspace_with_a_file_that_no_longer_reads_opens_the_rest(store_dir):
    files = [("qrels", "qrels.trec", (CRANFIELD / "qrels.trec").read_bytes(), None),
             ("run", "mine.trec", MINE, "Mine"), ("run", "broken.trec", b"1 Q0 d1 1 not-a-score t\n", "Broken")]
    saved, _ = saved_workspace(store_dir, files=files)
    at = open_page("data", query={"ws": saved.workspace_id})
    warnings = texts(at.warning)
    assert any(w.startswith("Workspace 'from the test' opened, but 1 of its files could not be read") for w in warnings)
    assert any("broken.trec, line 1, field 'score'" in e for e in texts(at.error)), texts(at.error)
    assert at.dataframe[0].value["system"].tolist() == ["Mine"]
    assert "ws" in at.query_params  # still the link's, but not claimed as this session's workspace


def test_store_that_cannot_be_opened_leaves_everything_else_working(monkeypatch):
    monkeypatch.setenv("EVALSUITE_STORE_URL", "mysql://user:secret@db.example/evalsuite")
    at = open_page("data")
    infos = texts(at.info)
    assert any(t.startswith("Save and share is not available") and "sqlite:///" in t for t in infos), infos
    assert all("secret" not in t for t in infos)  # the password is never shown
    assert not at.error and texts(at.subheader)[1:4] == ["Runs (2)", "Qrels (1)", "Per-request records (4)"]
    at = open_page("overview", query={"ws": new_workspace_id()})
    errors = texts(at.error)
    assert len(errors) == 1 and errors[0].startswith("This shared workspace cannot be opened"), errors
    assert list(at.dataframe[0].value.index) == ["BM25", "BM25L"]


def test_delete_from_the_data_page(store_dir):
    at = open_page("data", url="http://evalsuite.test/")
    link, _ = save_from(at, "data_share", "to delete")
    workspace_id = parse_qs(urlsplit(link).query)["ws"][0]
    listed = workspace_table(at)
    assert listed[["name", "status", "yours"]].values.tolist() == [["to delete", "active", "saved here"]]
    at.button(key=f"data_ws_delete_{workspace_id}").click().run()
    listed = workspace_table(at)
    assert listed["status"].tolist() == ["deleted"]
    assert "ws" not in at.query_params
    again = open_page("overview", query={"ws": workspace_id})
    assert "this workspace was deleted by its owner" in texts(again.error)[0]


def test_delete_with_id_and_owner_token(store_dir):
    saved, _ = saved_workspace(store_dir)
    at = open_page("data")
    at.text_input(key="data_ws_delete_id").input(saved.workspace_id)
    at.text_input(key="data_ws_delete_token").input("not the token")
    at.button(key="data_ws_delete_submit").click().run()
    assert any("this owner token does not belong to this workspace" in e for e in texts(at.error)), texts(at.error)
    with open_store(data_dir=store_dir) as store:
        assert store.list_workspaces([saved.workspace_id])[0].status == "active"
    # A whole share link works as well as the bare id.
    at.text_input(key="data_ws_delete_id").input(f"https://evalsuite.test/compare?compare_a=BM25&ws={saved.workspace_id}")
    at.text_input(key="data_ws_delete_token").input(saved.owner_token)
    at.button(key="data_ws_delete_submit").click().run()
    assert not at.error and any(s.startswith("Deleted") for s in texts(at.success))
    with open_store(data_dir=store_dir) as store:
        assert store.list_workspaces([saved.workspace_id])[0].status == "deleted"
