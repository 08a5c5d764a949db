"""Benchmark the dashboard in a real browser (Playwright + Debian chromium).

    python benchmarks/dashboard.py [--rounds 3]

Per round, on a freshly started ``streamlit run app.py``:

* cold start: seconds from starting the server to ``/_stcore/health`` answering, and from
  opening ``/overview`` to the overview drawn (tables and the chart) on the sample data;
* a 1-million-line TREC run (1,000 queries x 1,000 docs, seeded, as in
  tests/browser/test_large_upload.py): seconds from choosing the file in the upload widget to
  the overview drawn with it, and the slowest ``/_stcore/health`` answer meanwhile (the app
  must stay responsive).

Medians are printed and written to results/dashboard.md. Needs ``pip install playwright`` and
``apt-get install chromium``; never ``playwright install``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.browser.conftest import (CHROMIUM, CHROMIUM_ARGS, Server, health_answers, upload_file,  # noqa: E402
                                   wait_charts, wait_idle, wait_tables)
from tests.browser.test_large_upload import write_run_and_qrels  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"


def one_round(browser, folder: Path, run_path: Path, qrels_path: Path) -> dict:
    (REPO / "test-output").mkdir(exist_ok=True)
    start = time.perf_counter()
    server = Server(env={"EVALSUITE_DATA_DIR": str(folder / "store")})
    up = time.perf_counter() - start
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        tab = context.new_page()
        tab.set_default_timeout(300_000)
        start = time.perf_counter()
        tab.goto(f"{server.url}/overview")
        wait_idle(tab, timeout=120)
        wait_charts(tab, 1, timeout=120)
        wait_tables(tab, timeout=120)
        overview = time.perf_counter() - start

        tab.goto(server.url)
        wait_idle(tab)
        tab.locator('[data-testid="stButton"] button', has_text="Clear sample data").click()
        wait_idle(tab)
        upload_file(tab, "Qrels", qrels_path)
        tab.wait_for_selector(f"text={qrels_path.name}: read as trec qrels")
        wait_idle(tab)
        with health_answers(server.url) as health:
            start = time.perf_counter()
            upload_file(tab, "Runs", run_path)
            tab.wait_for_selector(f"text={run_path.name}: read as trec run")
            wait_idle(tab, timeout=300)
            tab.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
            wait_idle(tab, timeout=300)
            wait_charts(tab, 1, timeout=300)
            wait_tables(tab, timeout=300)
            upload = time.perf_counter() - start
        context.close()
        return {"server_up_s": up, "sample_overview_s": overview, "upload_1m_to_overview_s": upload,
                "slowest_health_s": max(health) if health else float("nan")}
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        folder = Path(tmp)
        run_path, qrels_path = write_run_and_qrels(folder)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        rounds = []
        for i in range(args.rounds):
            rounds.append(one_round(browser, folder, run_path, qrels_path))
            print(f"round {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in rounds[-1].items()), flush=True)
        browser.close()
        size_mib = run_path.stat().st_size / 2**20
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    lines = [
        "| measurement (browser: Playwright + chromium, fresh server per round) | median s |",
        "|---|---|",
        f"| server start to /_stcore/health answering | {med['server_up_s']:.2f} |",
        f"| open /overview to overview drawn on the sample data (Cranfield, 2 runs) | {med['sample_overview_s']:.2f} |",
        f"| 1,000,000-line TREC run ({size_mib:.0f} MiB): file chosen to overview drawn | {med['upload_1m_to_overview_s']:.2f} |",
        f"| slowest /_stcore/health answer during that upload | {med['slowest_health_s']:.3f} |",
        "",
        f"Median of {args.rounds} rounds.",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dashboard.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
