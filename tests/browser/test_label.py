"""The label loop in a real browser: 30 records labelled on the Label page (each answer one click,
the next record at once), the server restarted, and in a new browser the 30 labels are there and
the Calibration page shows the intervals computed from them (SQLite, and PostgreSQL when
EVALSUITE_TEST_PG_URL and EVALSUITE_BROWSER_LABEL_PG=1 are set).

Screenshots: ``test-output/screenshots/label_*.png``.
"""

from __future__ import annotations

import os
import re
import uuid
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest

from .conftest import REPO, screenshot, table_rows, wait_charts, wait_idle, wait_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

PG_URL = os.environ.get("EVALSUITE_TEST_PG_URL", "").strip()
VIEWPORT = {"width": 1400, "height": 1000}
ANSWERS = ["label_yes" if i % 4 else "label_no" for i in range(30)]


STORES = ["sqlite"] + (["postgresql"] if PG_URL and os.environ.get("EVALSUITE_BROWSER_LABEL_PG") == "1" else [])


@pytest.fixture(params=STORES)
def store_env(request, tmp_path):
    """The SQLite store in a fresh directory. The PostgreSQL store runs the same label code (its
    round trip and restart are in tests/storage/test_labels.py); set EVALSUITE_BROWSER_LABEL_PG=1 with
    EVALSUITE_TEST_PG_URL to run this test on it too (about 2 more minutes of CI, so not by default)."""
    if request.param == "sqlite":
        yield {"EVALSUITE_DATA_DIR": str(tmp_path / "store")}, {"data_dir": str(tmp_path / "store")}
        return
    schema = f"browser_{uuid.uuid4().hex[:12]}"
    yield {"EVALSUITE_STORE_URL": PG_URL, "EVALSUITE_STORE_SCHEMA": schema}, {"url": PG_URL, "schema": schema}
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _shown_request(tab) -> str:
    text = tab.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"]').filter(
        has_text=re.compile(r"^Request ")).first.inner_text()
    return text.strip()[len("Request "):]


def _progress(tab) -> str:
    return tab.locator('[data-testid="stMain"] [data-testid="stProgress"]').inner_text().strip()


def _no_exception(tab) -> None:
    assert tab.locator('[data-testid="stException"]').count() == 0, \
        tab.locator('[data-testid="stException"]').first.inner_text()


def _type_name(tab, name: str) -> None:
    box = tab.locator('[data-testid="stMain"] input[aria-label="Your name (kept with each label you give)"]')
    box.fill(name)
    box.press("Enter")
    wait_idle(tab)


def test_thirty_labels_survive_a_restart_and_calibration_shows_their_intervals(start_server, browser, store_env):
    env, spec = store_env
    server = start_server(env=env)
    first = browser.new_context(viewport=VIEWPORT)
    tab = first.new_page()
    tab.goto(f"{server.url}/label")
    wait_idle(tab)
    tab.locator(".st-key-label_create button").click()
    wait_idle(tab)
    _no_exception(tab)
    _type_name(tab, "Ann")
    assert "0 answered by you" in _progress(tab)
    seen = []
    for i, key in enumerate(ANSWERS):
        seen.append(_shown_request(tab))
        tab.locator(f".st-key-{key} button").click()
        tab.wait_for_function(
            """([before, i]) => {
                const p = document.querySelector('[data-testid="stMain"] [data-testid="stProgress"]');
                return p && p.innerText.includes(`${i} answered by you`);
            }""", arg=[seen[-1], i + 1], timeout=60_000)
        wait_idle(tab)
        if i == 9:
            screenshot(tab, "label_labelling")
    _no_exception(tab)
    assert "30 answered by you" in _progress(tab)
    url = tab.url
    task_id = parse_qs(urlsplit(url).query)["label_task"][0]
    first.close()

    server.restart()  # nothing survives in memory: only the store

    second = browser.new_context(viewport=VIEWPORT)
    tab = second.new_page()
    tab.goto(f"{server.url}/label?label_task={task_id}")
    wait_idle(tab)
    _no_exception(tab)
    _type_name(tab, "Ann")
    assert "30 answered by you" in _progress(tab) and _progress(tab).startswith("30 of ")
    screenshot(tab, "label_after_restart")

    from evalsuite.stats import labelled_records
    from evalsuite.storage import open_store
    import evalsuite as es

    with open_store(**spec) as store:
        labels = store.labels(task_id)
        task = store.label_task(task_id)
    assert len(labels) == 30 and {lab.labeller for lab in labels} == {"Ann"}
    assert [lab.label for lab in labels] == [0 if k == "label_no" else 1 for k in ANSWERS]
    assert [lab.query_id for lab in labels] == seen

    # The intervals the Calibration page must show: computed here from the 30 labels in the store.
    records = es.read_records(REPO / "sample_data" / "rag" / "ragtruth_qa.jsonl")
    judged = es.evaluate_records(records).per_query[["query_id", "system", "faithfulness"]].rename(
        columns={"faithfulness": "value"})
    frame = pd.DataFrame([{"query_id": lab.query_id, "system": lab.system, "labeller_id": lab.labeller_id,
                           "labeller": lab.labeller, "label": float(lab.label), "labelled_at": lab.labelled_at.timestamp()}
                          for lab in labels])
    plan = labelled_records.design(judged, frame, task.mode, task.seed, task.meta["mix"])
    expected = labelled_records.task_intervals(plan, task.mode)

    tab.goto(f"{server.url}/calibration?label_task={task_id}")
    wait_idle(tab)
    wait_charts(tab, 3)
    wait_tables(tab)
    _no_exception(tab)
    assert "Labels from the Label page" in tab.locator('[data-testid="stMain"]').inner_text()
    screenshot(tab, "label_calibration")
    tables = tab.locator('[data-testid="stMain"] [data-testid="stDataFrame"]')
    shown = None
    for i in range(tables.count()):
        rows = table_rows(tab, i)
        if rows and "more_labels_to_halve" in rows[0]:
            shown = rows
            break
    assert shown is not None
    header = shown[0]
    got = {(r[header.index("system")], r[header.index("estimator")]): (r[header.index("low")], r[header.index("high")])
           for r in shown[1:]}
    for _, row in expected.iterrows():
        key = (row["system"], row["estimator"])
        assert tuple(float(v) for v in got[key]) == pytest.approx((row["low"], row["high"]), abs=1e-9), key
    assert sum(int(r[header.index("n")]) for r in shown[1:] if r[header.index("estimator")] == "human only") == 30
    second.close()
