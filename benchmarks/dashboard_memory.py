"""Server memory of the dashboard around a large run upload, in a real browser.

    python benchmarks/dashboard_memory.py [--size 22kx1000] [--repo PATH] [--ttl 5]

Starts ``streamlit run app.py`` (from ``--repo``, default this checkout, so an older checkout
can be measured the same way), with Streamlit's ``server.disconnectedSessionTTL`` set to
``--ttl`` seconds so an ended session is dropped soon. Then, in Playwright + Debian chromium:

1. **before**: one session on the Data page with the sample data loaded;
2. the generated qrels and run (``generate.py``; 22k x 1000 is 22 million lines, about
   785 MB) uploaded through the Data page's widgets, then the Overview page drawn with them:
   **peak** is the highest server RSS meanwhile (sampled every 0.2 s), **settled** the RSS once
   the overview is drawn;
3. the browser tab closed, ``--ttl`` + 15 s waited: **after** is the RSS then (the session has
   ended); then a new session opens the Data page (sample data), **new session** is the RSS
   once it is drawn.

RSS is ``VmRSS`` of the server process (``/proc/PID/status``); the reader worker processes
(which parse uploads, see ``evalsuite.io.isolation``) are reported apart, summed, and the whole
tree (server + readers, sampled at the same instant) with its ratio to the run file, and the peak
of the reader pool's transit files (on tmpfs, memory that RSS shows only where a process maps
them; the held uploads, ``evalsuite.io.isolation.HeldBytes``, are in the same folders). The sum
of RSS counts a page twice where two processes map it (a held upload is mapped by the server and
by the reader that parses it), and misses tmpfs files no one maps: **host memory** is what the
machine holds at one instant: the proportional set sizes (``Pss`` in ``/proc/PID/smaps``) of the
server and readers, less their mappings of the tmpfs files still in the folders, plus those files
once. Until 2026-12-07 it took ``Pss_Anon + Pss_File`` (no tmpfs pages at all), which missed the
reader's result files once the server had mapped and removed them.
Prints one markdown row; ``--out`` appends it to a file.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from generate import generate, parse_size  # noqa: E402


def _browser_helpers():
    """tests/browser/conftest.py, loaded by path (an installed package named ``tests`` would
    shadow this repository's ``tests`` folder, which is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("browser_conftest", REPO / "tests" / "browser" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_helpers = _browser_helpers()
CHROMIUM, CHROMIUM_ARGS, free_port = _helpers.CHROMIUM, _helpers.CHROMIUM_ARGS, _helpers.free_port
upload_file, wait_charts, wait_idle, wait_tables = (_helpers.upload_file, _helpers.wait_charts, _helpers.wait_idle,
                                                    _helpers.wait_tables)


def rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss_parts(pid: int) -> dict[str, float]:
    """RssAnon (heap), RssFile (mapped files) and RssShmem (mapped tmpfs, e.g. the reader's Arrow files), MiB."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                    out[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


def transit_files(pid: int) -> dict[str, int]:
    """Every file in the server ``pid``'s reader transit folder and held uploads' folder (tmpfs),
    path -> bytes allocated."""
    import glob

    files = {}
    for base in ("/dev/shm", tempfile.gettempdir()):
        for folder in glob.glob(os.path.join(base, f"evalsuite-readers-{pid}-*")):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                try:
                    files[entry.path] = entry.stat().st_blocks * 512
                except OSError:
                    pass
    return files


def pss_mib(pid: int, linked: dict[str, int]) -> float:
    """Proportional set size of ``pid`` (``Pss`` over ``/proc/PID/smaps``: anonymous, file and
    tmpfs pages; a page two processes map counts half in each), less its mappings of the files in
    ``linked`` (the tmpfs files still in a folder, counted whole and once apart), MiB. A mapped
    file that was removed (the reader's results, once the server maps them) is memory no folder
    lists, so it is counted here, through the mappings."""
    total_kib, skip = 0, False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split(None, 5)
                if not head:
                    continue
                if "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
                    path = head[5].strip() if len(head) > 5 else ""
                    skip = path in linked
                elif head[0] == "Pss:" and not skip:
                    total_kib += int(head[1])
    except OSError:
        pass
    return total_kib / 1024


def children(pid: int) -> list[int]:
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False).stdout
    except OSError:
        return []
    return [int(p) for p in out.split()]


def transit_mib(pid: int) -> float:
    """Bytes in the reader pool's transit folder of the server ``pid`` (tmpfs: memory that no
    process's RSS shows unless it maps the file), in MiB."""
    import glob

    total = 0
    for base in ("/dev/shm", tempfile.gettempdir()):
        for folder in glob.glob(os.path.join(base, f"evalsuite-readers-{pid}-*")):
            for entry in os.scandir(folder):
                try:
                    total += entry.stat().st_blocks * 512
                except OSError:
                    pass
    return total / 2**20


class Sampler:
    """Samples the server's RSS (and its children's, summed) every 0.2 s in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.peak_children, self.peak_tree, self.peak_transit = pid, 0.0, 0.0, 0.0, 0.0
        self.peak_host = 0.0  # the memory the host holds: PSS without tmpfs, plus the tmpfs files
        self.peak_parts: dict = {}
        self.timeline: list = []  # (monotonic s, server, readers, host, transit MiB) every 0.2 s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            kids = children(self.pid)
            server, readers = rss_mib(self.pid), sum(rss_mib(c) for c in kids)
            transit = transit_mib(self.pid)
            linked = transit_files(self.pid)
            host = (sum(pss_mib(p, linked) for p in [self.pid, *kids])
                    + sum(linked.values()) / 2**20)
            self.peak_host = max(self.peak_host, host)
            if server > self.peak:
                self.peak_parts = rss_parts(self.pid)
            self.timeline.append((round(time.monotonic(), 2), round(server), round(readers), round(host),
                                  round(transit)))
            self.peak = max(self.peak, server)
            self.peak_children = max(self.peak_children, readers)
            self.peak_tree = max(self.peak_tree, server + readers)  # the same instant: what the host must hold
            self.peak_transit = max(self.peak_transit, transit)
            time.sleep(0.2)

    def reset(self) -> None:
        self.peak, self.peak_children = rss_mib(self.pid), 0.0
        self.peak_tree, self.peak_transit, self.peak_host = self.peak, 0.0, 0.0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def start_server(repo: Path, port: int, env: dict) -> subprocess.Popen:
    log = open(tempfile.mktemp(prefix="dashboard-memory-", suffix=".log"), "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
         "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=repo, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"server did not start; see {log.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="22kx1000")
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--ttl", type=int, default=5)
    parser.add_argument("--label", default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    ds = generate(parse_size(args.size))
    mb = ds.run.stat().st_size / 1e6
    port = free_port()
    with tempfile.TemporaryDirectory() as store:
        env = {"EVALSUITE_DATA_DIR": store, "EVALSUITE_READER_TIMEOUT_S": "1800",
               "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(args.ttl)}
        server = start_server(args.repo, port, env)
        url = f"http://127.0.0.1:{port}"
        sampler = Sampler(server.pid)
        figures = {}
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                tab = context.new_page()
                tab.set_default_timeout(1_800_000)
                tab.goto(url)
                wait_idle(tab, timeout=120)
                time.sleep(2)
                figures["before"] = rss_mib(server.pid)
                sampler.reset()
                t0 = time.perf_counter()
                marks = {"start": time.monotonic()}
                upload_file(tab, "Qrels", ds.qrels)
                tab.wait_for_selector(f"text={ds.qrels.name}: read as trec qrels")
                wait_idle(tab, timeout=600)
                marks["run upload"] = time.monotonic()
                upload_file(tab, "Runs", ds.run)
                tab.wait_for_selector(f"text={ds.run.name}: read as trec run", timeout=1_800_000)
                wait_idle(tab, timeout=1800)
                # The phases apart: the upload and read (the bytes, the reader), then the Overview
                # (the evaluation and the page).
                figures["upload_tree_peak"], figures["upload_server_peak"] = sampler.peak_tree, sampler.peak
                figures["upload_peak_parts"] = dict(sampler.peak_parts)
                figures["after_read"] = rss_mib(server.pid)
                marks["run read"] = time.monotonic()
                tab.locator('[data-testid="stSidebarNav"] a', has_text="Overview").click()
                wait_idle(tab, timeout=1800)
                wait_charts(tab, 1, timeout=1800)
                wait_tables(tab, timeout=1800)
                figures["upload_s"] = time.perf_counter() - t0
                marks["overview drawn"] = time.monotonic()
                if os.environ.get("DASHBOARD_MEMORY_TIMELINE"):
                    import json

                    Path(os.environ["DASHBOARD_MEMORY_TIMELINE"]).write_text(json.dumps(
                        {"marks": marks, "timeline": sampler.timeline}))
                time.sleep(2)
                figures["settled"] = rss_mib(server.pid)
                figures["peak"] = sampler.peak
                figures["readers_peak"] = sampler.peak_children
                figures["tree_peak"] = sampler.peak_tree
                figures["transit_peak"] = sampler.peak_transit
                figures["host_peak"] = sampler.peak_host
                context.close()
                time.sleep(args.ttl + 15)
                figures["after"] = rss_mib(server.pid)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                tab = context.new_page()
                tab.goto(url)
                wait_idle(tab, timeout=120)
                time.sleep(2)
                figures["new_session"] = rss_mib(server.pid)
                context.close()
                browser.close()
        finally:
            sampler.stop()
            server.terminate()
            server.wait(timeout=30)
    label = args.label or str(args.repo)
    row = (f"| {label} | {args.size} ({mb:.0f} MB) | {figures['before']:.0f} | {figures['peak']:.0f} | "
           f"{figures['settled']:.0f} | {figures['after']:.0f} | {figures['new_session']:.0f} | "
           f"{figures['readers_peak']:.0f} | {figures['tree_peak']:.0f} | {figures['tree_peak'] * 2**20 / 1e6 / mb:.2f} | "
           f"{(figures['tree_peak'] - figures['before']) * 2**20 / 1e6 / mb:.2f} | {figures['transit_peak']:.0f} | "
           f"{figures['host_peak']:.0f} | {figures['host_peak'] * 2**20 / 1e6 / mb:.2f} | {figures['upload_s']:.0f} |")
    print(f"upload and read: server peak {figures['upload_server_peak']:.0f} MiB, server + readers "
          f"{figures['upload_tree_peak']:.0f} MiB ({', '.join(f'{k} {v:.0f}' for k, v in figures['upload_peak_parts'].items())} "
          f"at the server's peak); server after the read {figures['after_read']:.0f} MiB")
    print("| code | run | before MiB | peak MiB | settled MiB | after session ended MiB | new session MiB "
          "| reader workers peak MiB | server + readers peak MiB | that / run file | (that - before) / run file "
          "| transit files peak MiB | host memory peak MiB | that / run file | upload to overview s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(row)
    if args.out:
        with open(args.out, "a") as f:
            f.write(row + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
