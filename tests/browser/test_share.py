"""Save and share in a real browser: a link made in one browser opens the same view, on the same
data, in a new browser context on a restarted server (SQLite, and PostgreSQL when
EVALSUITE_TEST_PG_URL is set); the exported HTML report opens with every network request blocked
and draws its charts.

Screenshots: ``test-output/screenshots/share_*.png`` and ``report_offline.png``.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import REPO, SCREENSHOTS, click_until_shown, screenshot, table_rows, wait_charts, wait_idle, wait_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

PG_URL = os.environ.get("EVALSUITE_TEST_PG_URL", "").strip()
IN_CI = os.environ.get("CI", "").lower() == "true"
VIEWPORT = {"width": 1400, "height": 1000}


def reversed_run() -> bytes:
    """A run of its own: the BM25 run's top 10 per query in reverse order, system tag "mine"."""
    by_query: dict[str, list[str]] = {}
    for line in (REPO / "sample_data" / "cranfield" / "run_bm25.trec").read_text().splitlines():
        by_query.setdefault(line.split()[0], []).append(line.split()[2])
    lines = [f"{qid} Q0 {doc} {i + 1} {100 - i} mine" for qid, docs in by_query.items()
             for i, doc in enumerate(docs[:10][::-1])]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_env(request, tmp_path):
    """Environment of a server whose store is SQLite in a fresh folder, or PostgreSQL in a schema
    of its own (dropped afterwards)."""
    if request.param == "sqlite":
        yield {"EVALSUITE_DATA_DIR": str(tmp_path / "store")}
        return
    if not PG_URL:
        if IN_CI:
            pytest.fail("CI=true but EVALSUITE_TEST_PG_URL is not set (scripts/ci_postgres.sh prints it)")
        pytest.skip("the PostgreSQL case needs EVALSUITE_TEST_PG_URL: export EVALSUITE_TEST_PG_URL="
                    "\"$(bash scripts/ci_postgres.sh)\"")
    schema = f"browser_{uuid.uuid4().hex[:12]}"
    yield {"EVALSUITE_STORE_URL": PG_URL, "EVALSUITE_STORE_SCHEMA": schema}
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main_text(tab) -> str:
    return tab.locator('[data-testid="stMain"]').inner_text()


def view_text(tab) -> str:
    """The main area's text from the page title on (above it: status boxes such as "Opened workspace")."""
    text = main_text(tab)
    title = tab.locator('[data-testid="stMain"] h1').first.inner_text().strip()
    return text[text.index(title + "\n"):]


def no_exception(tab) -> None:
    assert tab.locator('[data-testid="stException"]').count() == 0, \
        tab.locator('[data-testid="stException"]').first.inner_text()


def choose(tab, label: str, option: str) -> None:
    """Pick ``option`` in the main area's selectbox labelled ``label``."""
    box = tab.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text=label).first
    box.wait_for(state="visible")
    box.locator('input[role="combobox"]').click()
    tab.get_by_role("option", name=option, exact=True).click()
    wait_idle(tab)


def widget_values(tab) -> dict[str, object]:
    """Label -> shown value of every selectbox, multiselect, radio, toggle, slider and number or
    text input of the main area and the sidebar (the share form excepted)."""
    return tab.evaluate(
        """() => {
            const out = {};
            const label = w => (w.querySelector('[data-testid="stWidgetLabel"]')?.innerText
                                || w.querySelector('label')?.innerText || '').trim();
            const scope = document.querySelectorAll(
                '[data-testid="stMain"], [data-testid="stSidebarUserContent"]');
            for (const root of scope) {
                for (const w of root.querySelectorAll('[data-testid="stSelectbox"]'))
                    out['select: ' + label(w)] = w.querySelector('input')?.value
                        || w.querySelector('[data-baseweb="select"]')?.innerText.trim();
                for (const w of root.querySelectorAll('[data-testid="stMultiSelect"]'))
                    out['multi: ' + label(w)] = Array.from(w.querySelectorAll('[data-tag] span[title]'))
                        .map(t => t.getAttribute('title'));
                for (const w of root.querySelectorAll('[data-testid="stRadio"]'))
                    out['radio: ' + label(w)] = Array.from(w.querySelectorAll('input'))
                        .filter(i => i.checked).map(i => i.closest('label').innerText.trim());
                for (const w of root.querySelectorAll('[data-testid="stCheckbox"]'))
                    out['toggle: ' + label(w)] = w.querySelector('input').checked;
                for (const w of root.querySelectorAll('[data-testid="stNumberInput"], [data-testid="stTextInput"]')) {
                    if (w.closest('[data-testid="stForm"]')) continue;
                    out['input: ' + label(w)] = w.querySelector('input').value;
                }
                for (const w of root.querySelectorAll('[data-testid="stSlider"]'))
                    out['slider: ' + label(w)] = Array.from(w.querySelectorAll('input[type="range"]'))
                        .map(s => s.getAttribute('aria-valuetext'));
            }
            return out;
        }""")


def all_tables(tab) -> list[list[list[str]]]:
    wait_tables(tab)
    count = tab.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').count()
    return [table_rows(tab, i) for i in range(count)]


def save_and_share(tab, name: str) -> tuple[str, str]:
    """Open the sidebar's "Save and share", save under ``name``; return (share link, owner token)."""
    sidebar = tab.locator('[data-testid="stSidebar"]')
    sidebar.locator('[data-testid="stExpander"]').filter(has_text="Save and share").locator("summary").click()
    sidebar.locator('input[aria-label="Workspace name"]').fill(name)
    click_until_shown(tab, sidebar.locator('[data-testid="stFormSubmitButton"] button', has_text="Save and share"),
                      "Saved workspace")
    sidebar.locator('[data-testid="stCode"] code').nth(1).wait_for(state="visible")
    wait_idle(tab)
    codes = [c.strip() for c in sidebar.locator('[data-testid="stCode"] code').all_inner_texts()]
    assert len(codes) == 2, codes
    return codes[0], codes[1]


def test_share_link_opens_the_same_view_after_a_restart(start_server, browser, store_env):
    server = start_server(env=store_env)
    first = browser.new_context(viewport=VIEWPORT)
    tab = first.new_page()
    tab.goto(server.url)
    wait_idle(tab)
    uploader = tab.locator('[data-testid="stFileUploader"]').filter(has_text="Runs").first
    uploader.locator('input[type="file"]').set_input_files(
        files=[{"name": "reversed.trec", "mimeType": "text/plain", "buffer": reversed_run()}])
    tab.wait_for_selector("text=reversed.trec: read as trec run", timeout=60_000)
    wait_idle(tab)

    # A view that is not the default one: Compare, BM25L against the upload (mine), t-test, recall@100
    # per query, regressions only.
    tab.locator('[data-testid="stSidebarNav"] a', has_text="Compare").click()
    wait_idle(tab)
    wait_charts(tab, 2)
    choose(tab, "System A (baseline)", "BM25L")
    choose(tab, "System B", "mine")  # the run tag names the system
    tab.locator('[data-testid="stExpander"]').filter(has_text="Statistics").locator("summary").click()
    wait_idle(tab)
    choose(tab, "Paired test", "t-test")
    tab.locator('[data-testid="stCheckbox"]').filter(has_text="Regressions only").locator("label").click()
    wait_idle(tab)
    choose(tab, "Per-query metric", "recall@100")
    wait_charts(tab, 2)
    wait_idle(tab)
    no_exception(tab)
    tables_before = all_tables(tab)
    widgets_before = widget_values(tab)
    assert widgets_before["multi: Metrics"] == ["ndcg@10", "map@100", "mrr@10", "recall@100"]
    assert widgets_before["slider: alpha"] == ["0.05"]
    text_before = view_text(tab)
    assert "mine against BM25L" in text_before
    assert widgets_before["select: Paired test"] == "t-test"
    assert widgets_before["toggle: Regressions only (queries where mine is worse)"] is True
    screenshot(tab, "share_before_restart")

    link, token = save_and_share(tab, "Cranfield: BM25L vs mine <b>top 10</b>")
    assert len(token) >= 40 and token not in link
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == server.url and parts.path == "/compare"
    query = parse_qs(parts.query)
    assert query["compare_a"] == ["BM25L"] and query["compare_b"] == ["mine"]
    assert query["compare_test"] == ["t-test"] and query["compare_metric"] == ["recall@100"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{36}", query["ws"][0])
    assert set(query) <= {"ws", "rel_level"} | {k for k in query if k.startswith("compare_")}
    assert len(link) < 1000  # the view state and the id, never the data
    assert parse_qs(urlsplit(tab.url).query)["ws"] == query["ws"]  # the address bar reopens it too
    screenshot(tab, "share_saved")
    first.close()

    server.restart()  # a new process: no session, no cache; only the store remembers
    second = browser.new_context(viewport=VIEWPORT)  # no cookie, no storage of the first browser
    tab = second.new_page()
    tab.goto(link)
    wait_idle(tab)
    wait_charts(tab, 2)
    wait_idle(tab)
    no_exception(tab)
    assert tab.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "Compare"
    # The expander's open state is not part of the view: open it to read the widgets inside.
    tab.locator('[data-testid="stExpander"]').filter(has_text="Statistics").locator("summary").click()
    wait_idle(tab)
    assert widget_values(tab) == widgets_before
    assert all_tables(tab) == tables_before
    assert view_text(tab) == text_before
    screenshot(tab, "share_after_restart")

    # The Data page of the new session lists the uploaded run and the opened workspace.
    tab.locator('[data-testid="stSidebarNav"] a', has_text="Data").click()
    wait_idle(tab)
    wait_tables(tab)
    assert parse_qs(urlsplit(tab.url).query)["ws"] == query["ws"]  # kept while the data is the workspace's
    runs = table_rows(tab, 0)
    assert [row[0] for row in runs[1:]] == ["BM25", "BM25L", "mine"]
    name = "Cranfield: BM25L vs mine <b>top 10</b>"  # shown as text, never as markup
    listed = table_rows(tab, 3)
    assert listed[1][:3] == [name, "active", "opened"], listed
    assert f"Workspace: {name}" in tab.locator('[data-testid="stSidebar"]').inner_text()
    screenshot(tab, "share_data_page_after_restart")
    second.close()


def test_link_to_a_deleted_workspace_says_so(start_server, browser, tmp_path):
    server = start_server(env={"EVALSUITE_DATA_DIR": str(tmp_path / "store")})
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.goto(f"{server.url}/overview")
    wait_idle(tab)
    wait_charts(tab, 1)
    link, _ = save_and_share(tab, "to be deleted")
    tab.locator('[data-testid="stSidebarNav"] a', has_text="Data").click()
    wait_idle(tab)
    tab.locator('[data-testid="stButton"] button', has_text="Delete to be deleted").click()
    wait_idle(tab)
    wait_tables(tab)
    # The click's run draws the list, deletes, then reruns: poll until the redrawn list is there.
    tab.wait_for_function(
        """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"]')[3]?.querySelectorAll('td') || [])
                      .some(td => td.textContent.trim() === 'deleted')""", timeout=30_000)
    listed = table_rows(tab, 3)
    assert [row[1] for row in listed[1:]] == ["deleted"], listed
    screenshot(tab, "share_workspace_deleted")
    context.close()

    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.goto(link)
    wait_idle(tab)
    text = main_text(tab)
    assert "This shared workspace cannot be opened: this workspace was deleted by its owner" in text
    assert "Headline metrics" in text  # the sample data, still working
    no_exception(tab)
    screenshot(tab, "share_deleted_link")
    context.close()


def test_report_opens_offline_and_draws_its_charts(server, browser, tmp_path):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    tab = context.new_page()
    tab.goto(f"{server.url}/compare?compare_a=BM25L&compare_b=BM25")
    wait_idle(tab)
    wait_charts(tab, 2)
    wait_idle(tab)
    tab.wait_for_function("""() => document.querySelectorAll(
        '[data-testid="stSidebar"] [data-testid="stDownloadButton"]').length === 1""", timeout=30_000)
    with tab.expect_download(timeout=120_000) as download:
        tab.locator('[data-testid="stSidebar"]').get_by_role("button", name="Download report").click()
    path = tmp_path / "report.html"
    download.value.save_as(path)
    context.close()
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    for sample in ("qrels.trec", "run_bm25.trec", "run_bm25l.trec"):
        data = (REPO / "sample_data" / "cranfield" / sample).read_bytes()
        assert hashlib.sha256(data).hexdigest() in text

    offline = browser.new_context(viewport=VIEWPORT, offline=True)
    requests: list[str] = []
    offline.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                  else (requests.append(route.request.url), route.abort()))
    tab = offline.new_page()
    tab.goto(path.as_uri())
    tab.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3",
                          timeout=30_000)
    assert tab.locator(".js-plotly-plot").count() == 3  # the Compare page's three charts (with the PR curves)
    assert tab.locator(".js-plotly-plot .barlayer .point").count() > 100  # bars drawn, one per query
    assert tab.locator(".js-plotly-plot .scatterlayer .point").count() > 100
    body = tab.locator("body").inner_text()
    assert "Reproducibility stamp" in body and "BM25 against BM25L" in body
    assert requests == []  # nothing was asked of the network
    tab.screenshot(path=str(SCREENSHOTS / "report_offline.png"), full_page=True)
    offline.close()
