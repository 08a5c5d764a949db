"""User text in markdown: names and file names with URLs, addresses or markup form no link and read
as written (remark-gfm's autolink patterns, ported in ``helpers.autolinks``)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.text import WORD_JOINER, plain

from .helpers import autolinks, markdown_texts, open_page, texts, unescape


LINK_NAMES = ["https://evil.example/a", "see www.evil.example or mail me@evil.example, HTTP://EVIL.EXAMPLE/b"]


@pytest.mark.parametrize("text", [*LINK_NAMES, "(https://x.example)", "x:https://y.example", "WwW.x.example",
                                  "mailto:a.b+c@x.example", "![x](http://example.invalid/p.png) **bold**"])
def test_plain_text_in_markdown_forms_no_link_and_reads_as_written(text):
    assert autolinks(text), "the pattern port finds the link in the raw text"
    assert autolinks(plain(text)) == []
    assert unescape(plain(text)).replace(WORD_JOINER, "") == text


def _links_in_markdown(at: AppTest) -> list[tuple[str, str, list[str]]]:
    return [(kind, body, autolinks(body)) for kind, body in markdown_texts(at) if autolinks(body)]


def test_system_names_with_urls_are_no_links_on_the_compare_page():
    at = open_page("data")
    for old, new in zip(("BM25", "BM25L"), LINK_NAMES):
        key = next(k for k, f in at.session_state["data_files"].items() if f.system == old)
        at.text_input(key=f"data_name_{key.split(':')[1][:16]}").input(new).run()
    assert _links_in_markdown(at) == []  # the Data page shows the names too
    at.switch_page("pages/compare.py").run()
    assert not at.exception and not at.error, texts(at.error)
    a, b = LINK_NAMES
    assert at.selectbox(key="compare_a").value == a and at.selectbox(key="compare_b").value == b
    # The names are on the page, as written, in markdown (heading, toggle label, caption) ...
    assert texts(at.subheader)[0] == f"{b} against {a}"
    assert b in unescape(at.toggle(key="compare_regressions").label).replace(WORD_JOINER, "")
    assert any(b in caption for caption in texts(at.caption))
    # ... and no markdown on the page holds a link-able URL or address.
    assert _links_in_markdown(at) == []
    at.toggle(key="compare_regressions").set_value(True).run()
    assert _links_in_markdown(at) == []
    assert any(t.value.startswith(f"{a}: top") for t in at.text)  # plain text keeps the name as it is


def test_record_system_names_with_urls_are_no_links_on_the_compare_page():
    names = ["https://evil.example/r", "www.evil.example"]
    data = "".join(json.dumps({"query_id": str(q), "system": name, "success": (q + i) % 2 == 0,
                               "latency_ms": 10.0 + q, "failure_stage": None if (q + i) % 2 == 0 else "generation"})
                   + "\n" for i, name in enumerate(names) for q in range(1, 7)).encode()
    at = open_page("compare", clear=True, pending=[("records", "https-evil.jsonl", data)],
                   query={"compare_source": "per-request records"})
    assert not at.exception and not at.error, texts(at.error)
    assert texts(at.subheader)[0] == f"{names[1]} against {names[0]}"
    assert _links_in_markdown(at) == []


def test_user_text_in_messages_is_not_markdown():
    name = "![x](http://example.invalid/p.png) **bold**.trec"
    at = open_page("data", pending=[("run", name, b"1 Q0 d 1 oops t\n")])
    raw = [e.value for e in at.error]
    assert len(raw) == 1 and "![x](" not in raw[0] and "**bold**" not in raw[0]
    assert texts(at.error)[0].startswith(name)
