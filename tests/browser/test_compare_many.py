"""Compare in a real browser: a baseline and two systems (verdict, systems x metrics, heat-map), and
every table of the page fits its width (no sideways scroll). Screenshots:
``test-output/screenshots/compare_many_systems.png`` and ``compare_two_systems_fit.png``."""

from __future__ import annotations

import pytest

from .conftest import REPO, screenshot, table_rows, wait_charts, wait_idle, wait_tables
from .test_dashboard import heading, no_exception

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

CRANFIELD = REPO / "sample_data" / "cranfield"


def mixed_run() -> bytes:
    lines = [line for name, keep in (("bm25", 1), ("bm25l", 0))
             for line in (CRANFIELD / f"run_{name}.trec").read_text().splitlines()
             if (int(line.split()[0]) % 3 != 0) == keep]
    return ("\n".join(lines) + "\n").encode()


def overflowing_tables(tab) -> list[dict]:
    """Tables whose grid is wider than its box (a horizontal scroll bar), with both widths."""
    return tab.evaluate(
        """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"]')).map((d, i) => {
              const s = d.querySelector('.dvn-scroller');
              return {i, scroll: s ? s.scrollWidth : -1, client: s ? s.clientWidth : -1};
           }).filter(t => t.scroll < 0 || t.scroll > t.client + 1)""")


def test_two_system_table_fits_the_page(server, page):
    page.goto(f"{server.url}/compare")
    wait_idle(page)
    wait_charts(page, 2)
    wait_idle(page)
    wait_tables(page)
    no_exception(page)
    assert table_rows(page, 0)[0] == ["metric", "A: BM25", "B: BM25L", "diff", "95% CI", "p", "p adj", "sig",
                                      "effect", "W/T/L", "n"]
    # The ranked list (after the differences and the "how many queries" tables): score no longer cut off.
    headers = [table_rows(page, i)[0] for i in range(page.locator('[data-testid="stDataFrame"]').count())]
    assert ["rank", "doc_id", "label", "title", "score"] in headers, headers
    assert overflowing_tables(page) == []
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "BM25L is significantly worse than BM25 on all 4 metrics (permutation, Holm, alpha 0.05)." in text
    screenshot(page, "compare_two_systems_fit")


def test_baseline_and_two_systems(server, page):
    page.goto(server.url)
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"]').filter(has_text="Runs").first.locator('input[type="file"]') \
        .set_input_files(files=[{"name": "mixed.trec", "mimeType": "text/plain", "buffer": mixed_run()}])
    page.wait_for_selector("text=mixed.trec: read as trec run", timeout=60_000)
    wait_idle(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Compare").click()
    wait_idle(page)
    wait_charts(page, 2)
    assert heading(page) == "Compare"
    # Add the third system to the comparison.
    picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Also compare with A").first
    picker.locator("input").first.click()
    page.get_by_role("option", name="mixed", exact=True).click()
    page.keyboard.press("Escape")
    wait_idle(page)
    wait_charts(page, 1)
    wait_idle(page)
    wait_tables(page)
    no_exception(page)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "BM25L is significantly worse than BM25 on all 4 metrics; mixed is significantly worse than BM25 on" in text
    assert "Systems x metrics" in text and "Ranked lists of one query" not in text
    grid = table_rows(page, 0)
    assert [row[0] for row in grid[1:]] == ["BM25 (baseline)", "BM25L", "mixed"]
    assert all(cell.endswith("▼") for cell in grid[2][1:])  # BM25L: significantly lower everywhere
    heatmap = page.locator(".js-plotly-plot").first
    assert "per-query difference from BM25" in heatmap.inner_text()
    assert page.locator(".js-plotly-plot .heatmaplayer").count() >= 1 or "heatmap" in heatmap.inner_html()
    assert overflowing_tables(page) == []
    screenshot(page, "compare_many_systems")
