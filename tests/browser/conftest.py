"""Browser tests of the dashboard: a real ``streamlit run app.py`` driven by Playwright + chromium.

Skipped with a reason when Playwright (``pip install playwright``) or Debian's chromium
(``apt-get install -y chromium``) is missing; ``playwright install`` is never used.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-output" / "screenshots"
CHROMIUM = os.environ.get("EVALSUITE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# In CI (CI=true, set by .ci/run's environment) a missing browser is a failure, not a skip.
_IN_CI = os.environ.get("CI", "").lower() == "true"
try:
    import playwright.sync_api as playwright_api
except ImportError:
    if _IN_CI:
        raise
    pytest.skip("Playwright is not installed: pip install playwright", allow_module_level=True)
if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
    if _IN_CI:
        raise RuntimeError(f"chromium not found at {CHROMIUM}; .ci/run installs it with apt-get")
    pytest.skip(f"chromium not found at {CHROMIUM}: apt-get install -y chromium", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Every test server keeps its workspace store here unless a test names another place, so the
# browser tests never write to ~/.evalsuite.
_STORE_DIR = tempfile.mkdtemp(prefix="evalsuite-browser-store-")
atexit.register(shutil.rmtree, _STORE_DIR, ignore_errors=True)


class Server:
    """``streamlit run app.py`` on a loopback port, up once ``/_stcore/health`` answers.

    Parameters
    ----------
    env : dict, optional
        Extra environment variables for the server (e.g. ``EVALSUITE_DATA_DIR`` or
        ``EVALSUITE_STORE_URL``); by default the store is SQLite in a temporary folder shared by the
        test session.
    port : int, optional
        The port to listen on (default: a free one). :meth:`restart` keeps it, so links made before
        a restart still point at the server.
    args : list of str, optional
        Extra ``streamlit run`` options, e.g. ``["--secrets.files", path]``.
    """

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None,
                 args: list[str] | None = None) -> None:
        self.env = {"EVALSUITE_DATA_DIR": _STORE_DIR, **(env or {})}
        self.args = list(args or [])
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.starts = 0
        self.start()

    def start(self) -> None:
        self.starts += 1
        self.log = open(REPO / "test-output" / f"streamlit-{self.port}-{self.starts}.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", *self.args],
            cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **self.env})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError("streamlit did not answer /_stcore/health within 60 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def restart(self) -> None:
        """Stop the server and start a new process on the same port with the same environment:
        nothing survives in memory (caches, sessions), only what the store keeps."""
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def browser(output_dir):
    with playwright_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="session")
def server(output_dir):
    """One server shared by the tests that do not need a cold start."""
    srv = Server()
    yield srv
    srv.stop()


@pytest.fixture
def fresh_server(output_dir):
    """A server started for this test alone (cold: no session has run yet)."""
    srv = Server()
    yield srv
    srv.stop()


@pytest.fixture
def start_server(output_dir):
    """Start servers with extra environment variables: ``start_server(env={...})`` returns a
    :class:`Server` (call its ``restart()`` for a cold restart on the same port); all are stopped
    at the end of the test."""
    started: list[Server] = []

    def start(env: dict[str, str] | None = None, args: list[str] | None = None, port: int | None = None) -> Server:
        srv = Server(env=env, args=args, port=port)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    yield tab
    context.close()


def wait_idle(tab, timeout: float = 60.0) -> None:
    """Wait until the script run is over (``data-test-script-state="notRunning"``, as Streamlit's
    own e2e helpers do), no element is stale and no status widget shows a running script."""
    tab.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
                && !document.querySelector('[data-testid="stElementContainer"][data-stale="true"]');
        }""",
        timeout=timeout * 1000,
    )
    tab.wait_for_timeout(250)


def _app_is_idle(tab) -> bool:
    return tab.evaluate(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]');
        }""")


def click_until_shown(tab, button, text: str, timeout: float = 120.0, settle: float = 15.0) -> None:
    """Click ``button`` and wait until ``text`` is on the page.

    A click can be lost: CI once waited 120 s for "Saved workspace" after a "Save and share" click
    that a lone run of the same test never loses. So if, ``settle`` seconds after a click, the app
    has been idle at two looks 2 s apart, shows neither ``text`` nor an error, and ``button`` is
    still there, the click never reached the script, and it is clicked once more (an action that
    did run shows its result or its error, so it is never run twice). On timeout the assertion
    says what the page showed, so a failure in CI can be read from its log.
    """
    target = tab.locator(f"text={text}")
    errors = tab.locator('[data-testid="stAlertContentError"], [data-testid="stException"]')
    deadline = time.monotonic() + timeout
    clicks = 0
    while clicks < 2:
        button.click()
        clicks += 1
        settle_until = time.monotonic() + settle
        while time.monotonic() < deadline:
            if target.count():
                target.first.wait_for(state="visible", timeout=max(1_000, (deadline - time.monotonic()) * 1000))
                return
            if errors.count():
                raise AssertionError(f"waiting for {text!r}, the page shows an error: "
                                     f"{errors.first.inner_text()!r}\n{_page_text(tab)}")
            if time.monotonic() >= settle_until and clicks < 2 and _app_is_idle(tab):
                tab.wait_for_timeout(2_000)
                if _app_is_idle(tab) and not target.count() and button.count():
                    break  # the click was lost: click again
            tab.wait_for_timeout(250)
        else:
            break
    raise AssertionError(f"{text!r} did not appear within {timeout:g} s after {clicks} click(s); "
                         f"the page shows:\n{_page_text(tab)}")


def _page_text(tab) -> str:
    return tab.evaluate(
        """() => ['stSidebar', 'stMain'].map(id => document.querySelector(`[data-testid="${id}"]`))
                  .filter(Boolean).map(el => el.innerText).join('\\n---\\n')""")[-4000:]


def wait_charts(tab, count: int = 1, timeout: float = 30.0) -> None:
    """Wait until at least ``count`` plotly charts have drawn their SVG."""
    tab.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {count}", timeout=timeout * 1000)
    tab.wait_for_timeout(400)


def wait_tables(tab, timeout: float = 30.0) -> None:
    """Wait until every st.dataframe has drawn its grid (its accessible table is in the DOM)."""
    tab.wait_for_function(
        """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"]'))
                      .every(d => d.querySelector('table'))""",
        timeout=timeout * 1000,
    )


def table_rows(tab, index: int = 0) -> list[list[str]]:
    """Cell texts of the ``index``-th st.dataframe on the page (header row first), read from the
    accessible table the grid keeps next to its canvas (only the rows drawn are there)."""
    return tab.evaluate(
        """(i) => {
            const grid = document.querySelectorAll('[data-testid="stDataFrame"]')[i];
            return Array.from(grid.querySelectorAll('table tr'))
                .map(tr => Array.from(tr.querySelectorAll('th,td')).map(c => c.textContent.trim()));
        }""",
        index,
    )


def screenshot(tab, name: str) -> Path:
    """Screenshot the whole page: the viewport is made as tall as the app's content first
    (Streamlit scrolls inside its own container, so Playwright's full_page alone would cut it)."""
    size = tab.viewport_size
    height = tab.evaluate(
        """() => Math.max(...['stMain', 'stMainBlockContainer', 'stSidebarContent']
                .map(id => document.querySelector(`[data-testid="${id}"]`))
                .filter(Boolean).map(el => el.scrollHeight))""")
    tab.set_viewport_size({"width": size["width"], "height": int(min(max(height + 80, size["height"]), 7000))})
    tab.wait_for_timeout(600)
    wait_idle(tab)
    path = SCREENSHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    tab.set_viewport_size(size)
    return path


def upload_file(tab, label: str, path: Path) -> None:
    """Choose ``path`` in the Data page's file uploader whose label contains ``label``."""
    uploader = tab.locator('[data-testid="stFileUploader"]').filter(has_text=label).first
    uploader.locator('input[type="file"]').set_input_files(str(path))


@contextlib.contextmanager
def health_answers(url: str):
    """Ask ``url``/_stcore/health every 0.2 s while the block runs (the app must stay responsive);
    yields the list that collects each answer's time in seconds."""
    times: list[float] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            start = time.perf_counter()
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30):
                pass
            times.append(time.perf_counter() - start)
            time.sleep(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        yield times
    finally:
        done.set()
        poller.join()
