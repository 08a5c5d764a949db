"""Several qrels: told apart by name and SHA-256 in the sidebar, an upload becomes the active one,
and URLs and share links (of this and earlier versions) restore the choice."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

import evalsuite as es

from .helpers import CRANFIELD, open_page, save_from, saved_workspace, sha256, texts


def test_two_qrels_files_of_the_same_name_are_told_apart(cranfield):
    qrels, runs = cranfield
    original = (CRANFIELD / "qrels.trec").read_bytes()
    # Same file name, other judgements: only grade 4 docs kept.
    other = b"".join(line + b"\n" for line in original.splitlines() if line.split()[3] == b"4")
    at = open_page("overview", pending=[("qrels", "qrels.trec", other)],
                   query={"overview_metrics": ["ndcg"], "overview_k": ["10"]})
    # The upload is the active qrels now, and the sidebar says which (name and SHA-256 start).
    expected = es.evaluate(es.read_qrels(other), runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)
    picker = at.sidebar.selectbox(key="qrels")
    assert picker.value == f"qrels.trec (sha256 {sha256(other)[:12]})"
    labels = picker.options
    assert len(labels) == 2 and len(set(labels)) == 2
    assert all(label.startswith("qrels.trec (sha256 ") for label in labels)
    # Choosing the sample qrels again gives the sample's numbers.
    picker.set_value(f"qrels.trec (sha256 {sha256(original)[:12]})").run()
    assert not at.exception
    expected = es.evaluate(qrels, runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def _grade4_qrels() -> bytes:
    """Other judgements for the Cranfield queries: only the grade-4 lines of the sample qrels."""
    lines = (CRANFIELD / "qrels.trec").read_bytes().splitlines()
    return b"".join(line + b"\n" for line in lines if line.split()[3] == b"4")


def _label(name: str, data: bytes) -> str:
    return f"{name} (sha256 {sha256(data)[:12]})"


def test_an_uploaded_qrels_becomes_active_over_the_qrels_in_the_url(cranfield):
    # An address bar from an earlier session names the sample qrels; a qrels uploaded now wins.
    qrels, runs = cranfield
    sample = (CRANFIELD / "qrels.trec").read_bytes()
    other = _grade4_qrels()
    at = open_page("overview", query={"qrels": _label("qrels.trec", sample), "overview_metrics": ["ndcg"],
                                      "overview_k": ["10"]})
    at.session_state["data_pending"] = [("qrels", "g4.trec", other)]
    at.switch_page("pages/data.py").run()
    at.switch_page("pages/overview.py").run()
    assert not at.exception
    assert at.sidebar.selectbox(key="qrels").value == _label("g4.trec", other)
    expected = es.evaluate(es.read_qrels(other), runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_the_same_qrels_bytes_uploaded_again_become_active_again(cranfield):
    qrels, runs = cranfield
    other = _grade4_qrels()
    at = open_page("overview", pending=[("qrels", "g4.trec", other)], query={"overview_metrics": ["ndcg"],
                                                                          "overview_k": ["10"]})
    sample_label = _label("qrels.trec", (CRANFIELD / "qrels.trec").read_bytes())
    at.sidebar.selectbox(key="qrels").set_value(sample_label).run()
    assert at.sidebar.selectbox(key="qrels").value == sample_label
    # The g4 bytes again, under another name: stored once, and active again as the notice says.
    at.session_state["data_pending"] = [("qrels", "copy_of_g4.trec", other)]
    at.switch_page("pages/data.py").run()
    assert any("g4.trec (sha256" in t and "is now the active qrels" in t for t in texts(at.info) + texts(at.success)
               + [c.value for c in at.caption] + [m.value for m in at.markdown] + [x.value for x in at.text])
    at.switch_page("pages/overview.py").run()
    assert at.sidebar.selectbox(key="qrels").value == _label("g4.trec", other)
    expected = es.evaluate(es.read_qrels(other), runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_a_share_link_restores_the_chosen_qrels(cranfield, store_dir):
    qrels, runs = cranfield
    other = _grade4_qrels()
    at = open_page("overview", pending=[("qrels", "other.trec", other)], query={"overview_metrics": ["ndcg"],
                                                                             "overview_k": ["10"]})
    sample_label = _label("qrels.trec", (CRANFIELD / "qrels.trec").read_bytes())
    at.sidebar.selectbox(key="qrels").set_value(sample_label).run()
    link, _ = save_from(at, "share", "two qrels")
    query = parse_qs(urlsplit(link).query)
    assert query["qrels"] == [sample_label]
    reopened = open_page("overview", query={k: v if len(v) > 1 else v[0] for k, v in query.items()})
    assert reopened.sidebar.selectbox(key="qrels").value == sample_label
    expected = es.evaluate(qrels, runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert reopened.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("named_by", ["digest", "name"])
def test_links_of_earlier_versions_name_the_qrels_by_digest_or_file_name(cranfield, store_dir, named_by):
    qrels, runs = cranfield
    sample = (CRANFIELD / "qrels.trec").read_bytes()
    other = _grade4_qrels()
    saved, _ = saved_workspace(store_dir, files=[("qrels", "qrels.trec", sample, None), ("qrels", "g4.trec", other, None),
                                                 ("run", "run_bm25.trec", (CRANFIELD / "run_bm25.trec").read_bytes(),
                                                  "BM25")])
    asked = sha256(sample) if named_by == "digest" else "qrels.trec"
    at = open_page("overview", query={"ws": saved.workspace_id, "qrels": asked, "overview_metrics": ["ndcg"],
                                      "overview_k": ["10"]})
    assert at.sidebar.selectbox(key="qrels").value == _label("qrels.trec", sample)
    expected = es.evaluate(qrels, runs["BM25"], ["ndcg@10"]).means["ndcg@10"]
    assert at.dataframe[0].value.loc["BM25", "ndcg@10"] == pytest.approx(expected, abs=1e-12)
