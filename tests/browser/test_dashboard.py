"""The dashboard in a real browser: deep links on cold servers, uploads, Compare, screenshots.

Screenshots go to ``test-output/screenshots/<page>.png`` (look at them after a change).
"""

from __future__ import annotations

import re

import pytest

from .conftest import REPO, screenshot, table_rows, wait_charts, wait_idle, wait_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

# (url path, page heading, charts drawn with the sample data, text only the loaded sample shows)
PAGES = [
    ("", "Data", 0, "Runs (2)"),
    ("data", "Data", 0, "Runs (2)"),
    ("overview", "Overview", 1, "Headline metrics"),
    ("per_query", "Per-query", 1, "Ranked list of one query"),
    ("rag_quality", "RAG quality", 1, "Task success with its Wilson interval"),
    ("latency", "Latency", 2, "Percentiles"),
    ("failures", "Failures", 1, "Failed requests"),
    ("compare", "Compare", 2, "BM25L against BM25"),
]
NAV_TITLES = ["Data", "Overview", "Per-query", "RAG quality", "Label", "Calibration", "Latency", "Failures", "Compare", "Judge"]


def heading(tab) -> str:
    return tab.locator('[data-testid="stMain"] h1').first.inner_text().strip()


def no_exception(tab) -> None:
    """No exception box and no dialog (such as Streamlit's "Page not found") on the page."""
    assert tab.locator('[data-testid="stException"]').count() == 0, tab.locator('[data-testid="stException"]').first.inner_text()
    assert tab.locator('[role="dialog"]').count() == 0, tab.locator('[role="dialog"]').first.inner_text()


def nav_titles(tab) -> list[str]:
    # Each link holds its material icon's name, then the title.
    return [t.strip().splitlines()[-1].strip() for t in tab.locator('[data-testid="stSidebarNav"] a').all_inner_texts()]


@pytest.mark.parametrize("path,title,charts,marker", PAGES, ids=[p[0] or "root" for p in PAGES])
def test_deep_link_on_a_cold_server(fresh_server, page, path, title, charts, marker):
    """A deep link is the first request a new server sees: the app's set-up and navigation run
    (sample data loaded, our page titles in the sidebar) and the asked-for page is shown."""
    page.goto(f"{fresh_server.url}/{path}")
    wait_idle(page)
    if charts:
        wait_charts(page, charts)
        wait_idle(page)
    no_exception(page)
    assert heading(page) == title
    assert nav_titles(page) == NAV_TITLES  # not Streamlit's file-name pages of its legacy pages/ mode
    assert marker in page.locator('[data-testid="stMain"]').inner_text()
    assert "Page not found" not in page.locator("body").inner_text()
    if path:
        assert page.url.split("?")[0].rstrip("/").endswith(path)
    wait_tables(page)
    screenshot(page, path or "root")


def test_every_page_by_its_path_on_a_warm_server(server, page):
    for path, title, charts, marker in PAGES:
        page.goto(f"{server.url}/{path}")
        wait_idle(page)
        no_exception(page)
        assert heading(page) == title, path
        assert "Page not found" not in page.locator("body").inner_text(), path
        assert marker in page.locator('[data-testid="stMain"]').inner_text(), path


def test_query_parameters_seed_the_view(server, page):
    page.goto(f"{server.url}/compare?compare_a=BM25L&compare_b=BM25&compare_metric=map%40100")
    wait_idle(page)
    wait_charts(page, 2)
    wait_idle(page)
    no_exception(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "BM25 against BM25L" in text
    assert "map@100: BM25 - BM25L" in page.locator(".js-plotly-plot").first.inner_text()


def _upload(tab, label: str, name: str, data: bytes) -> None:
    uploader = tab.locator('[data-testid="stFileUploader"]').filter(has_text=label).first
    uploader.locator('input[type="file"]').set_input_files(files=[{"name": name, "mimeType": "text/plain", "buffer": data}])


def test_upload_changes_the_overview_and_compare(server, page):
    run = (REPO / "sample_data" / "cranfield" / "run_bm25.trec").read_bytes()
    # A different system: the BM25 run's top 10 per query reversed (so its scores really differ).
    lines = run.decode().splitlines()
    by_query: dict[str, list[str]] = {}
    for line in lines:
        by_query.setdefault(line.split()[0], []).append(line)
    mine = []
    for qid, rows in by_query.items():
        top = rows[:10][::-1]
        mine += [f"{qid} Q0 {r.split()[2]} {i + 1} {100 - i} mine" for i, r in enumerate(top)]
    page.goto(server.url)
    wait_idle(page)
    page.goto(f"{server.url}/overview")
    wait_idle(page)
    wait_charts(page, 1)
    before = page.locator(".js-plotly-plot").first.inner_text()
    assert "reversed" not in before

    page.goto(server.url)
    wait_idle(page)
    _upload(page, "Runs", "reversed.trec", ("\n".join(mine) + "\n").encode())
    page.wait_for_selector("text=reversed.trec: read as trec run", timeout=60_000)
    wait_idle(page)
    _upload(page, "Runs", "broken.trec", b"1 Q0 184 1 not-a-number tag\n")
    page.wait_for_selector("text=Files that could not be read", timeout=60_000)
    wait_idle(page)
    main_text = page.locator('[data-testid="stMain"]').inner_text()
    assert re.search(r"broken\.trec, line 1, field 'score'", main_text), main_text
    no_exception(page)
    wait_tables(page)
    screenshot(page, "data_after_upload")

    # The sidebar link keeps the session (a page load would start a new one).
    page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
    wait_idle(page)
    wait_charts(page, 1)
    wait_idle(page)
    assert "mine" in page.locator(".js-plotly-plot").first.inner_text()  # the legend has the new system
    wait_tables(page)
    systems = [row[0] for row in table_rows(page, 0)[1:]]
    assert systems == ["BM25", "BM25L", "mine"]
    screenshot(page, "overview_after_upload")

    page.locator('[data-testid="stSidebarNav"] a', has_text="Compare").click()
    wait_idle(page)
    wait_charts(page, 2)
    no_exception(page)
    assert heading(page) == "Compare"
    wait_tables(page)
    screenshot(page, "compare_after_upload")


def test_clicking_a_failure_stage_lists_those_requests(server, page):
    page.goto(f"{server.url}/failures?failures_system=bedrock_13b")
    wait_idle(page)
    wait_charts(page, 2)
    wait_idle(page)
    assert page.locator(".js-plotly-plot .pielayer .slice").count() >= 1
    bars = page.locator(".js-plotly-plot .barlayer .point")
    label = page.locator(".js-plotly-plot .yaxislayer-above .ytick text").last.text_content()  # the top bar
    box = bars.last.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # The click selects the stage: the URL-bound stage picker (and so the URL) follows.
    page.wait_for_url(re.compile(rf"failures_stage={label}"), timeout=30_000)
    wait_idle(page)
    picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Requests of stage")
    assert picker.locator("input").input_value() == label
    wait_tables(page)
    rows = table_rows(page, 2)
    stage_col = rows[0].index("failure_stage")
    assert len(rows) > 1 and {row[stage_col] for row in rows[1:]} == {label}
    no_exception(page)
    screenshot(page, "failures_stage_clicked")


def test_selecting_a_row_opens_that_query(server, page):
    page.goto(f"{server.url}/per_query?per_query_system=BM25L")
    wait_idle(page)
    wait_charts(page, 1)
    wait_tables(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    rows = table_rows(page, 0)
    # Third data row (the header is 35 px, rows 35 px): click its selection checkbox.
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 2 * 35 + 17)
    wanted = rows[3][rows[0].index("query_id")]
    page.wait_for_url(re.compile(rf"per_query_query={wanted}(&|$)"), timeout=30_000)
    wait_idle(page)
    wait_tables(page)
    assert page.locator('[data-testid="stMain"]').inner_text().count(f"Query {wanted}:") == 1
    no_exception(page)


def test_failures_page_shows_several_stages_with_the_rule_of_each_request(server, page):
    """Issue 15: on the samples, ARES's examples fail at retrieval and at generation; the pie has
    both slices and the table gives each request's rule and reason (screenshot:
    test-output/screenshots/failures_attributed_stages.png)."""
    page.goto(f"{server.url}/failures?failures_system=ares_judge_examples")
    wait_idle(page)
    wait_charts(page, 2)
    wait_tables(page)
    no_exception(page)
    assert page.locator(".js-plotly-plot .pielayer .slice").count() == 2
    labels = set(page.locator(".js-plotly-plot .yaxislayer-above .ytick text").all_text_contents())
    assert labels == {"retrieval", "generation"}
    rows = table_rows(page, 2)
    header = rows[0]
    assert {"failure_stage", "attributed", "rule", "reason"} <= set(header)
    rules = {row[header.index("rule")] for row in rows[1:]}
    assert rules == {"no relevant chunk", "unsupported answer claims"}
    screenshot(page, "failures_attributed_stages")


def test_compare_shows_the_failure_mix_of_two_systems(server, page):
    """Issue 15: the failure-mix bars of two LLMPerf endpoints (screenshot compare_failure_mix.png)."""
    page.goto(f"{server.url}/compare?compare_source=per-request+records&compare_a=bedrock_13b&compare_b=lepton_7b")
    wait_idle(page)
    wait_charts(page, 1)
    no_exception(page)
    titles = page.locator(".js-plotly-plot .gtitle").all_text_contents()
    assert "Failure mix: bedrock_13b vs lepton_7b" in titles
    screenshot(page, "compare_failure_mix")
