"""Markup in user data renders as text in the charts, in Chromium: system and judgement names of an
uploaded judgement table on the Calibration page (the forest plot's categories and title, where a
live link rendered before), system and query names of uploaded records on the RAG quality and
Per-query pages, and the same charts in the downloaded report opened offline."""

from __future__ import annotations

import json

from .conftest import SCREENSHOTS, screenshot, upload_file, wait_charts, wait_idle

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

LINK = '<a href="https://evil.example/login" target="_blank">Sign in again</a>'
SYSTEM = f"{LINK}<b>bold</b>"
JUDGEMENT = "<i>claims</i><span style='color:red'>red</span>"

# Every chart element and every link inside a plotly chart, and the text plotly drew.
_CHART_LINKS = "() => document.querySelectorAll('.js-plotly-plot a, .js-plotly-plot b, .js-plotly-plot i').length"
_CHART_TEXT = "() => Array.from(document.querySelectorAll('.js-plotly-plot text')).map(t => t.textContent).join('\\n')"


def _assert_text_not_markup(tab) -> str:
    assert tab.evaluate(_CHART_LINKS) == 0
    assert tab.locator('a[href*="evil.example"]').count() == 0
    return tab.evaluate(_CHART_TEXT)


def test_markup_payloads_render_as_text_on_pages_and_in_the_report(start_server, browser, tmp_path):
    server = start_server(env={"EVALSUITE_DATA_DIR": str(tmp_path / "data")})
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    tab = context.new_page()
    tab.goto(server.url)
    wait_idle(tab)
    tab.get_by_role("button", name="Clear all data").click()
    wait_idle(tab)
    records = tmp_path / "payload.jsonl"
    records.write_text("".join(json.dumps({"query_id": f"q{i} <b>{i}</b>", "system": SYSTEM if i % 2 else "plain",
                                           "answer_claims_supported": [True, i % 3 == 0], "latency_ms": 100 + i})
                               + "\n" for i in range(12)))
    upload_file(tab, "Per-request records", records)
    tab.wait_for_selector("text=payload.jsonl: read as", timeout=60_000)
    wait_idle(tab)

    tab.locator('[data-testid="stSidebarNav"] a', has_text="RAG quality").click()
    wait_idle(tab)
    wait_charts(tab, 1)
    drawn = _assert_text_not_markup(tab)
    assert "Sign in again</a><b>bold</b>" in drawn.replace("\u00a0", " ")
    screenshot(tab, "markup_rag_quality")

    tab.locator('[data-testid="stSidebarNav"] a', has_text="Calibration").click()
    wait_idle(tab)
    tab.get_by_text("Upload a judgement table").click()
    table = tmp_path / "judgements.csv"
    rows = ["query_id,system,judgement,item,judge,judge_label,human_label"]
    rows += [f'q{i},"{s}","{JUDGEMENT}",0,judge,{(i * 7) % 2},{(i // 3) % 2}' for s in (SYSTEM.replace('"', '""'), "plain")
             for i in range(40)]
    table.write_text("\n".join(rows) + "\n")
    tab.locator('[data-testid="stFileUploader"]').first.locator('input[type="file"]').set_input_files(str(table))
    wait_idle(tab)
    wait_charts(tab, 2)
    wait_idle(tab)
    drawn = _assert_text_not_markup(tab)
    assert "Sign in again</a><b>bold</b>" in drawn.replace("\u00a0", " ")   # the forest plot's system category
    assert "<i>claims</i>" in drawn                                          # the forest plot's title
    screenshot(tab, "markup_calibration")

    tab.wait_for_function("""() => document.querySelectorAll(
        '[data-testid="stSidebar"] [data-testid="stDownloadButton"]').length === 1""", timeout=30_000)
    with tab.expect_download(timeout=120_000) as download:
        tab.locator('[data-testid="stSidebar"]').get_by_role("button", name="Download report").click()
    path = tmp_path / "report.html"
    download.value.save_as(path)
    context.close()

    offline = browser.new_context(viewport={"width": 1400, "height": 1000}, offline=True)
    report = offline.new_page()
    report.goto(path.as_uri())
    report.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2",
                             timeout=30_000, polling=250)
    report.wait_for_timeout(500)
    drawn = _assert_text_not_markup(report)
    assert "Sign in again</a><b>bold</b>" in drawn.replace("\u00a0", " ")
    assert report.locator("a").count() == 0  # no link anywhere in the report
    assert SYSTEM in report.locator("body").inner_text()  # the tables show the name as written
    report.screenshot(path=str(SCREENSHOTS / "markup_report.png"), full_page=True)
    offline.close()
