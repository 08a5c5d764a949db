"""Helpers of the dashboard's AppTest tests (imported as ``from .helpers import ...``): the sample
data's paths, :func:`open_page` to start a session on a page, the text of elements as a reader sees
it, remark-gfm's autolink patterns, and the save-and-share helpers (workspaces saved through the app
or straight into the store). The fixtures are in ``conftest.py``."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import AlertBase, HeadingBase, Markdown, Toast

from dashboard.text import WORD_JOINER
from evalsuite.storage import DatasetRef, open_store


REPO = Path(__file__).resolve().parents[2]
CRANFIELD = REPO / "sample_data" / "cranfield"
RAG = REPO / "sample_data" / "rag"
PAGES = ["data", "overview", "per_query", "rag_quality", "latency", "failures", "compare", "label", "calibration",
         "judge"]
TITLES = dict(zip(PAGES, ["Data", "Overview", "Per-query", "RAG quality", "Latency", "Failures", "Compare", "Label",
                          "Calibration", "Judge"]))


def open_page(page: str, query: dict | None = None, pending: list | None = None, clear: bool = False,
              url: str | None = None, secrets: dict | None = None) -> AppTest:
    """Start a session on ``page`` (sample data loaded), optionally emptied or with files queued;
    ``url``: the page's address as a browser would report it (``st.context.url``); ``secrets``:
    the app's Streamlit secrets."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    if url is not None:
        at.context["url"] = url
    for key, value in (secrets or {}).items():
        at.secrets[key] = value
    # The URL is there from the session's first run (a bound widget reads it when first drawn).
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if clear:
        at.button(key="data_clear_all").click().run()
    if pending:
        at.session_state["data_pending"] = list(pending)
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def unescape(body: str) -> str:
    """Markdown text with its backslash escapes resolved, as remark parses it."""
    return re.sub(r"\\(.)", r"\1", body)


def texts(elements) -> list[str]:
    """Element bodies as a reader sees them (markdown backslash escapes and the invisible word
    joiners of :func:`dashboard.text.plain` removed)."""
    return [unescape(e.value).replace(WORD_JOINER, "") for e in elements]


# remark-gfm's literal autolinks (mdast-util-gfm-autolink-literal, in Streamlit's markdown bundle):
# these patterns run on the text after escapes are resolved, and a match becomes a link when it
# starts the text or follows whitespace, punctuation or a symbol (and for an e-mail, not '/').
_URL_LITERAL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
_EMAIL_LITERAL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)


def autolinks(body: str) -> list[str]:
    """What Streamlit's markdown would turn into a link in this markdown ``body``: every match
    of remark-gfm's literal-autolink patterns at an allowed start, after escapes are resolved
    (stricter than remark, which also drops a match for an invalid domain)."""
    text = unescape(body)
    found = []
    for pattern, email in ((_URL_LITERAL, False), (_EMAIL_LITERAL, True)):
        for i in range(len(text)):
            before = text[i - 1] if i else " "
            if email and before == "/":
                continue
            if before.isspace() or unicodedata.category(before)[0] in "PS":
                match = pattern.match(text, i)
                if match:
                    found.append(match.group())
    return found


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(element type, body) of everything on the page that Streamlit renders as markdown:
    markdown, captions, headings, alert and toast bodies, and the labels and help texts of
    widgets, expanders, tabs, statuses and metrics."""
    found = []

    def walk(node) -> None:
        if isinstance(node, (Markdown, HeadingBase, AlertBase, Toast)):
            found.append((node.type, node.value))
        for attribute in ("label", "help"):
            value = getattr(node, attribute, None)
            if isinstance(value, str) and value:
                found.append((f"{node.type}.{attribute}", value))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


SAMPLE_FILES = [("qrels", CRANFIELD / "qrels.trec", None), ("run", CRANFIELD / "run_bm25.trec", "BM25"),
                ("run", CRANFIELD / "run_bm25l.trec", "BM25L"), ("records", RAG / "ragtruth_qa.jsonl", None),
                ("records", RAG / "llmperf_requests.jsonl", None), ("records", RAG / "ares_judge_examples.jsonl", None),
                ("records", RAG / "ragchecker_examples.jsonl", None)]
MINE = b"".join(f"{q} Q0 {d} {r} {10 - r} mine\n".encode() for q in ("1", "2", "3", "4") for r, d in
                enumerate(("184", "29", "31", "12", "51"), start=1))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_from(at: AppTest, prefix: str, name: str, days: int | None = None) -> tuple[str, str]:
    """Fill in and submit a save form (``prefix`` "share": the sidebar's, "data_share": the Data
    page's); return the (share link, owner token) shown."""
    at.text_input(key=f"{prefix}_name").input(name)
    if days is not None:
        at.number_input(key=f"{prefix}_days").set_value(days)
    at.button(key=f"{prefix}_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, texts(at.error)
    codes = [c.value for c in at.code]
    assert len(codes) == 2, codes
    return codes[0], codes[1]


def workspace_table(at: AppTest) -> pd.DataFrame:
    """The Data page's list of the session's workspaces."""
    return next(df.value for df in at.dataframe if "status" in df.value.columns)


def saved_workspace(store_dir, files=None, clock=None, expires_in_days=None):
    """A workspace saved straight into the store (not through the app): (SavedWorkspace, files)."""
    files = files or [("qrels", "qrels.trec", (CRANFIELD / "qrels.trec").read_bytes(), None),
                      ("run", "mine.trec", MINE, "Mine"),
                      ("run", "run_bm25.trec", (CRANFIELD / "run_bm25.trec").read_bytes(), "BM25")]
    options = {"clock": clock} if clock else {}
    with open_store(data_dir=store_dir, **options) as store:
        refs = [DatasetRef(store.put_dataset(data, kind=kind, filename=name), kind, name, system=system, format="trec")
                for kind, name, data, system in files]
        return store.save_workspace("from the test", refs, expires_in_days=expires_in_days), files
