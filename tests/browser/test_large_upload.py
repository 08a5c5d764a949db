"""A 1-million-line run through the real upload widget: time from file chosen to overview drawn.

The run (1,000 queries x 1,000 docs, seeded) and its qrels are written to a temporary folder.
The time and the server's slowest /_stcore/health answer during the work (the app must not
freeze) are written to ``test-output/large_upload.json``.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest

from .conftest import REPO, health_answers, screenshot, table_rows, upload_file, wait_charts, wait_idle, wait_tables

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`

N_QUERIES, DEPTH = 1000, 1000
CORPUS = 8_841_823  # prime to the stride below, so doc ids are distinct within a query


def write_run_and_qrels(folder):
    rng = np.random.default_rng(20240229)
    q = np.repeat(np.arange(N_QUERIES), DEPTH)
    rank = np.tile(np.arange(DEPTH), N_QUERIES)
    doc = (q * 7919 + rank * 104729 + 17) % CORPUS
    score = 30.0 - rank * 0.02 - rng.random(q.size) * 0.001
    run = pa.table({"q": pa.array(q.astype(str)), "Q0": pa.array(np.full(q.size, "Q0")), "doc": pa.array(doc.astype(str)),
                    "rank": pa.array(rank + 1), "score": pa.array(np.round(score, 6)), "tag": pa.array(np.full(q.size, "big"))})
    options = pa_csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_path = folder / "big.run.trec"
    pa_csv.write_csv(run, run_path, options)
    judged_ranks = np.array([0, 3, 10, 50, 500])
    qq = np.repeat(np.arange(N_QUERIES), judged_ranks.size)
    rr = np.tile(judged_ranks, N_QUERIES)
    grades = rng.integers(0, 4, qq.size)
    qrels_path = folder / "big.qrels.trec"
    qrels_path.write_text("".join(f"{a} 0 {(a * 7919 + b * 104729 + 17) % CORPUS} {g}\n" for a, b, g in zip(qq, rr, grades)))
    return run_path, qrels_path


def test_million_line_run_upload_to_overview(server, page, tmp_path):
    run_path, qrels_path = write_run_and_qrels(tmp_path)
    assert sum(1 for _ in run_path.open("rb")) == N_QUERIES * DEPTH
    page.set_default_timeout(300_000)
    page.goto(server.url)
    wait_idle(page)
    page.locator('[data-testid="stButton"] button', has_text="Clear sample data").click()
    wait_idle(page)
    upload_file(page, "Qrels", qrels_path)
    page.wait_for_selector("text=big.qrels.trec: read as trec qrels")
    wait_idle(page)

    with health_answers(server.url) as health:
        start = time.perf_counter()
        upload_file(page, "Runs", run_path)
        page.wait_for_selector("text=big.run.trec: read as trec run")
        wait_idle(page, timeout=300)
        uploaded = time.perf_counter() - start
        page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
        wait_idle(page, timeout=300)
        wait_charts(page, 1, timeout=300)
        wait_tables(page, timeout=300)
        total = time.perf_counter() - start

    rows = table_rows(page, 0)
    assert rows[1][0] == "big"
    result = {"lines": N_QUERIES * DEPTH, "bytes": run_path.stat().st_size, "upload_and_read_s": round(uploaded, 2),
              "file_chosen_to_overview_s": round(total, 2), "slowest_health_answer_s": round(max(health), 3),
              "health_checks": len(health)}
    (REPO / "test-output" / "large_upload.json").write_text(json.dumps(result, indent=2))
    print(result)
    screenshot(page, "overview_1m_lines")
    assert max(health) < 2.0, "the server stopped answering while the run was read"
    assert total < 180
