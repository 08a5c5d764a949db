"""A bounded load test of a hosted dashboard: 20 visitors for 2 minutes, sign-in and limits on,
everything on loopback (``python benchmarks/hosted_load.py``; a few minutes; not part of CI).

Started here, each on 127.0.0.1: a local OpenID Connect provider (``tests/oidc_provider.py``, in a
process of its own), the
operator's judge endpoint (``tests/judge_server.py``, scripted replies after 50 ms), and
``streamlit run app.py`` with sign-in, an operator endpoint with prices and small limits per user
(a daily judge budget, one run at a time, four runs at once in all, an upload limit per day, two
workspaces each), on PostgreSQL when ``EVALSUITE_TEST_PG_URL`` is set (in a schema of its own),
else SQLite. Chromium (Debian's, through Playwright) opens one browser context per visitor; each
signs in as its own user and, until the time is up, uploads a records file, saves a workspace and
starts a judge run on the operator's endpoint, over and over, reading what the page says.

Afterwards it checks, from the store and the pages:

- no errors: no exception or traceback on any page, none in the server's log, every visitor's
  every step ended with a message the page gives (done, or a limit's message);
- limits enforced: each user's operator spend of the day within its budget, at most one run of a
  user and four in all running at any moment (from the audit log's start and end times), each
  user's counted uploads within the daily limit, at most one workspace each;
- nothing lost: every workspace a visitor saved opens from the store with the SHA-256 of every
  file it uploaded into it, every run the pages started is in the audit log and ended.

Writes ``benchmarks/results/hosted_load.json`` and prints a summary.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from judge_server import JudgeServer, scripted_reply  # noqa: E402
from oidc_provider import OIDCProviderProcess, auth_section, write_secrets  # noqa: E402

CHROMIUM = os.environ.get("EVALSUITE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
LIMITS = {"judge_daily_budget": 0.004, "judge_daily_budget_total": 1.0, "judge_runs_at_once": 1,
          "judge_runs_at_once_total": 4, "upload_mb_per_day": 1, "workspaces_per_user": 1}
PRICES = {"judge_price_input": 1.0, "judge_price_output": 1.0, "judge_budget": 0.02}
SHOTS: Path | None = None  # where a step that timed out leaves a screenshot
UPLOAD_BYTES = 300_000  # each records upload; the fourth of a user's day passes the 1 MiB limit


def reply(body: dict) -> str:
    """The scripted stand-in's reply; a prompt it does not know (the RAGAS family's own) gets a
    JSON object the judge reads as a missing judgement: the load test measures the server, not verdicts."""
    try:
        return scripted_reply(body)
    except (StopIteration, KeyError, IndexError):
        return json.dumps({"verdict": "yes"})


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def records_file(user: int, n: int) -> bytes:
    """A records file of about UPLOAD_BYTES, distinct for every user and upload."""
    rows, size, i = [], 0, 0
    while size < UPLOAD_BYTES:
        row = json.dumps({"query_id": f"u{user}-n{n}-q{i}", "system": f"rag-{user}",
                          "question": f"What does user {user} ask in upload {n}, question {i}?",
                          "answer": f"User {user} gets answer {i}. It cites passage {i % 7}.",
                          "contexts": [f"Passage {i % 7} says user {user} gets answer {i}.", "Unrelated text " * 20]})
        rows.append(row)
        size += len(row) + 1
        i += 1
    return ("\n".join(rows) + "\n").encode()


class Visitor:
    """One browser context signed in as ``user<i>@example.com``, repeating upload, save and judge."""

    def __init__(self, index: int, url: str) -> None:
        self.index, self.url = index, url
        self.email = f"user{index}@example.com"
        self.steps: Counter = Counter()
        self.errors: list[str] = []
        self.uploads: list[tuple[str, str]] = []      # (file name, sha256) accepted
        self.saved: dict[str, set] = {}               # workspace id -> names of the files it must hold
        self.runs_started = 0
        self.current: str | None = None               # the file of this cycle
        self.seconds: dict[str, list] = defaultdict(list)  # step -> durations

    async def idle(self, tab, timeout: float = 90.0) -> None:
        await tab.wait_for_function(
            """() => { const app = document.querySelector('[data-testid="stApp"]');
                return app && app.getAttribute('data-test-script-state') === 'notRunning'
                    && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]'); }""",
            timeout=timeout * 1000, polling=500)
        await tab.wait_for_timeout(200)

    async def check_page(self, tab, step: str) -> None:
        if await tab.locator('[data-testid="stException"]').count():
            self.errors.append(f"{step}: {await tab.locator('[data-testid=stException]').first.inner_text()}")

    async def sign_in(self, tab) -> None:
        await tab.goto(self.url)
        await tab.get_by_role("button", name="Sign in").click(timeout=120_000)
        await tab.wait_for_selector('input[name="sub"]', timeout=60_000)
        await tab.fill('input[name="sub"]', self.email)
        await tab.get_by_role("button", name="Authorize").click()
        await tab.wait_for_selector('[data-testid="stSidebarNav"]', timeout=120_000)
        await self.idle(tab)
        self.steps["signed in"] += 1


    async def nav(self, tab, title: str) -> None:
        await tab.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
        await self.idle(tab)

    async def upload(self, tab, n: int) -> None:
        """A new cycle: clear the session's files, upload a new records file."""
        await self.nav(tab, "Data")
        await tab.get_by_role("button", name="Clear all data").click()
        await self.idle(tab)
        self.current = None
        data = records_file(self.index, n)
        name = f"user{self.index}_{n}.jsonl"
        await tab.wait_for_selector("text=Per-request records (0)", timeout=120_000)
        await self.idle(tab)
        outcomes = {"read": f"text={name}: read as", "limit": "text=daily upload limit"}
        for attempt in range(2):
            uploader = tab.locator('[data-testid="stFileUploader"]').filter(has_text="Per-request records").first
            await uploader.locator('input[type="file"]').set_input_files(
                files=[{"name": name, "mimeType": "text/plain", "buffer": data}])
            # A file chosen while the uploader was being replaced (the rerun after "Clear all data")
            # never leaves the browser: choose it again once, and say so.
            found = await self.first_of(tab, outcomes, timeout=60 if attempt == 0 else 120, shoot=attempt == 1)
            if found != "timeout":
                break
            self.steps["upload chosen again"] += 1
        self.steps[f"upload {found}"] += 1
        if found == "read":
            self.uploads.append((name, hashlib.sha256(data).hexdigest()))
            self.current = name
        await self.idle(tab)
        await self.check_page(tab, "upload")

    async def save(self, tab, n: int) -> None:
        """Save the session as a workspace named for this visitor and cycle (so the page's answer is
        told apart from an earlier one)."""
        await self.nav(tab, "Data")
        name = f"user{self.index} cycle {n}"
        box = tab.get_by_role("textbox", name="Workspace name").first
        await box.fill(name)
        await tab.get_by_role("button", name="Save and share").first.click()
        found = await self.first_of(tab, {"saved": f"text=Saved workspace {name}",
                                          "limit": "text=the most this dashboard stores",
                                          "nothing to save": "text=this session has no file to save"})
        self.steps[f"save {found}"] += 1
        await self.idle(tab)
        if found == "saved":
            result = tab.locator('[data-testid="stVerticalBlock"]').filter(has_text=f"Saved workspace {name}").last
            link = await result.locator('[data-testid="stCode"]').first.inner_text()
            match = re.search(r"ws=([A-Za-z0-9_-]{36})", link)
            if match:
                self.saved[match.group(1)] = {self.current} if self.current else set()
            await tab.get_by_role("button", name="Done").first.click()
            await self.idle(tab)
        await self.check_page(tab, "save")

    async def judge(self, tab) -> None:
        """Judge this cycle's upload (the page's default metrics, two records) on the operator's endpoint."""
        await self.nav(tab, "Judge")
        limit = tab.get_by_role("spinbutton", name="Records at most (the first of each chosen system)")
        await limit.fill("2")
        await limit.press("Enter")
        await self.idle(tab)
        if await tab.get_by_role("button", name="Start judging").count() == 0:
            if await tab.get_by_text("No per-request records loaded").count():
                self.steps["judge: nothing to judge (upload refused)"] += 1
                return
            self.steps["judge: no start button"] += 1
            if SHOTS is not None:
                await tab.screenshot(path=str(SHOTS / f"nostart-user{self.index}-{int(time.time())}.png"), full_page=True)
            return
        await tab.get_by_role("button", name="Start judging").click()
        # This run's progress names this cycle's file (an earlier run's message may still be shown).
        await self.first_of(tab, {"started": f"text={self.current}: ", "used up": "text=judge budget is used up",
                                  "at once": "text=at once"}, timeout=60, shoot=False)
        found = await self.first_of(tab, {
            "done": "text=replace it on every page", "budget stop": "text=Stopped by the budget",
            "refused: budget used up": "text=judge budget is used up", "refused: runs at once": "text=at once",
            "error": "text=the run failed"}, timeout=180)
        self.steps[f"judge {found}"] += 1
        if found in ("done", "budget stop", "error"):
            self.runs_started += 1
        await self.idle(tab)
        await self.check_page(tab, "judge")

    async def first_of(self, tab, selectors: dict, timeout: float = 120, shoot: bool = True) -> str:
        """The name of the first of ``selectors`` (``text=...``) to appear: one look at the page a
        second (the load generator shares the machine with the server, so it looks rarely)."""
        texts = {name: selector[len("text="):] for name, selector in selectors.items()}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = await tab.evaluate(
                """(texts) => { const body = document.body ? document.body.innerText : "";
                    if (document.querySelector('[data-testid="stException"]')) return "exception";
                    for (const [name, text] of Object.entries(texts)) if (body.includes(text)) return name;
                    return null; }""", texts)
            if found:
                return found
            await tab.wait_for_timeout(1000)
        if SHOTS is not None and shoot:
            await tab.screenshot(path=str(SHOTS / f"timeout-user{self.index}-{len(self.errors)}-{int(time.time())}.png"),
                                 full_page=True)
        return "timeout"

    async def run(self, browser, until: float) -> None:
        context = await browser.new_context(viewport={"width": 1300, "height": 900}, reduced_motion="reduce")
        context.set_default_timeout(120_000)
        context.set_default_navigation_timeout(180_000)
        tab = await context.new_page()
        try:
            began = time.monotonic()
            await self.sign_in(tab)
            self.seconds["sign in"].append(time.monotonic() - began)
            n = 0
            while time.monotonic() < until:
                for name, step in (("upload", lambda: self.upload(tab, n)), ("save", lambda: self.save(tab, n)),
                                   ("judge", lambda: self.judge(tab))):
                    if time.monotonic() >= until:
                        break
                    began = time.monotonic()
                    await step()
                    self.seconds[name].append(time.monotonic() - began)
                n += 1
        except Exception as exc:  # a step that never finished: counted as an error
            self.errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        finally:
            await context.close()


async def drive(url: str, visitors: int, seconds: float) -> list[Visitor]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        crowd = [Visitor(i, url) for i in range(visitors)]
        start = time.monotonic()
        # Visitors arrive over the first 20 seconds; each works until the time is up.
        async def arrive(v: Visitor):
            await asyncio.sleep(20.0 * v.index / max(1, visitors))
            await v.run(browser, start + seconds)
        await asyncio.gather(*(arrive(v) for v in crowd))
        await browser.close()
    return crowd


def cpu_seconds(server_pid: int) -> dict:
    """CPU seconds used so far by the app server and by its reader processes."""
    import psutil

    out = {"app server": 0.0, "reader processes": 0.0}
    try:
        server = psutil.Process(server_pid)
        times = server.cpu_times()
        out["app server"] = round(times.user + times.system, 1)
        for child in server.children(recursive=True):
            t = child.cpu_times()
            out["reader processes"] += t.user + t.system
    except psutil.Error:
        pass
    return {k: round(v, 1) for k, v in out.items()}


def overlaps(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at one moment."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()

    from dashboard.judge_jobs import judged_name
    from evalsuite.hosting import user_id
    from evalsuite.storage import open_store

    work = Path(tempfile.mkdtemp(prefix="evalsuite-load-"))
    global SHOTS
    SHOTS = work
    pg_url = os.environ.get("EVALSUITE_TEST_PG_URL", "").strip()
    schema = f"evalsuite_load_{uuid.uuid4().hex[:12]}" if pg_url else None
    store_settings = {"store_url": pg_url, "store_schema": schema} if pg_url else {}
    port = free_port()
    result: dict = {"visitors": args.visitors, "seconds": args.seconds, "limits": LIMITS, "prices": PRICES,
                    "store": "postgresql" if pg_url else "sqlite", "machine": {
                        "cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}}
    with OIDCProviderProcess() as idp, JudgeServer(reply=reply, delay=0.05) as llm:
        secrets = write_secrets(work / "secrets.toml", {
            "evalsuite": {**store_settings, "sign_in": True, "hosted": True, "judge_base_url": llm.base_url,
                          "judge_model": "op-model", "judge_api_key": "sk-load-operator", **PRICES, **LIMITS},
            # The provider round trip of a sign-in is made by the server under the load: 30 s, not 5.
            "auth": {**auth_section(idp, port), "client_kwargs": {"timeout": 30}}})
        log = open(work / "streamlit.log", "wb")
        env = {**os.environ, "EVALSUITE_DATA_DIR": str(work / "data"), "OPENAI_API_KEY": ""}
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
             "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", "--secrets.files", str(secrets)],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(240):
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                        break
                except OSError:
                    time.sleep(0.25)
            began = time.monotonic()
            health, done, chromium = [], threading.Event(), {}

            def poll() -> None:  # how long the server takes to answer its health check under the load
                import psutil

                while not done.is_set():
                    for proc in psutil.process_iter(["name"]):
                        if "chrom" in (proc.info.get("name") or ""):
                            try:
                                t = proc.cpu_times()
                                chromium[proc.pid] = t.user + t.system
                            except psutil.Error:
                                pass
                    t0 = time.perf_counter()
                    try:
                        with urllib.request.urlopen(url + "/_stcore/health", timeout=60):
                            pass
                        health.append(time.perf_counter() - t0)
                    except OSError:
                        health.append(float("inf"))
                    time.sleep(1.0)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            crowd = asyncio.run(drive(url, args.visitors, args.seconds))
            done.set()
            result["wall_seconds"] = round(time.monotonic() - began, 1)
            ordered = sorted(health)
            result["health_check_seconds"] = {"n": len(ordered), "median": round(ordered[len(ordered) // 2], 3),
                                              "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
                                              "max": round(ordered[-1], 3)} if ordered else {}
            result["cpu_seconds"] = {**cpu_seconds(server.pid), "chromium": round(sum(chromium.values()), 1)}
            time.sleep(3)  # runs still finishing report their end
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
        result["operator_requests"] = llm.requests
        result["operator_authorization"] = sorted(a.split(" ")[0] + " <key>" for a in llm.authorization)

    server_log = (work / "streamlit.log").read_text(encoding="utf-8", errors="replace")
    problems: list[str] = []
    steps: Counter = Counter()
    for v in crowd:
        steps.update(v.steps)
        problems.extend(f"user{v.index}: {e}" for e in v.errors)
        if any(k.endswith(("timeout", "exception")) for k in v.steps):
            problems.append(f"user{v.index}: a step ended without a message: {dict(v.steps)}")
    if "Traceback" in server_log:
        problems.append("a traceback in the server's log")
    result["steps"] = dict(sorted(steps.items()))
    durations = defaultdict(list)
    for v in crowd:
        for name, values in v.seconds.items():
            durations[name].extend(values)
    result["step_seconds"] = {name: {"n": len(vs), "median": round(sorted(vs)[len(vs) // 2], 1),
                                     "p95": round(sorted(vs)[min(len(vs) - 1, int(0.95 * len(vs)))], 1),
                                     "max": round(max(vs), 1)} for name, vs in sorted(durations.items()) if vs}

    open_args = {"url": pg_url, "schema": schema} if pg_url else {"data_dir": work / "data"}
    with open_store(**open_args) as store:
        runs = store.judge_runs()
        by_user = defaultdict(list)
        for r in runs:
            by_user[r.user_id].append(r)
        now = time.time()
        checks = {"runs_in_log": len(runs), "runs_started_by_pages": sum(v.runs_started for v in crowd),
                  "runs_still_running": sum(r.outcome == "running" for r in runs),
                  "outcomes": dict(Counter(r.outcome for r in runs))}
        worst_user_spend = max((sum(r.cost for r in rs if r.origin == "operator") for rs in by_user.values()),
                               default=0.0)
        checks["max_spend_per_user"] = round(worst_user_spend, 6)
        checks["total_spend"] = round(sum(r.cost for r in runs), 6)
        intervals = [(r.started_at.timestamp(), (r.finished_at.timestamp() if r.finished_at else now)) for r in runs]
        checks["max_runs_at_once_total"] = overlaps(intervals)
        checks["max_runs_at_once_per_user"] = max((overlaps([(r.started_at.timestamp(), r.finished_at.timestamp()
                                                               if r.finished_at else now) for r in rs])
                                                   for rs in by_user.values()), default=0)
        uploads, workspaces, lost = {}, {}, []
        for v in crowd:
            uid = user_id(idp.issuer, v.email)
            uploads[v.email] = store.uploaded_today(uid)
            owned = store.owned_workspaces(uid)
            workspaces[v.email] = len(owned)
            for workspace_id, names in v.saved.items():
                try:
                    workspace = store.load_workspace(workspace_id)
                    stored = {ref.filename for ref in workspace.datasets}
                    for ref in workspace.datasets:
                        store.get_dataset(ref.digest)  # checked against its SHA-256 by the store
                    # Each upload is there as uploaded, or as its judged version (which replaced it).
                    missing = [n for n in names if n not in stored and judged_name(n) not in stored]
                    if missing:
                        lost.append(f"{workspace_id}: missing {missing}")
                except Exception as exc:
                    lost.append(f"{workspace_id}: {exc}")
        checks["max_upload_bytes_per_user"] = max(uploads.values(), default=0)
        checks["max_workspaces_per_user"] = max(workspaces.values(), default=0)
        checks["workspaces_saved_and_checked"] = sum(len(v.saved) for v in crowd)
        checks["workspaces_lost"] = lost
        checks["uploads_accepted"] = sum(len(v.uploads) for v in crowd)
    limit_bytes = LIMITS["upload_mb_per_day"] * 1024 * 1024
    enforced = {
        "spend per user <= judge_daily_budget": checks["max_spend_per_user"] <= LIMITS["judge_daily_budget"] + 1e-9,
        "runs at once per user <= 1": checks["max_runs_at_once_per_user"] <= LIMITS["judge_runs_at_once"],
        "runs at once in all <= 4": checks["max_runs_at_once_total"] <= LIMITS["judge_runs_at_once_total"],
        "uploads per user <= upload_mb_per_day": checks["max_upload_bytes_per_user"] <= limit_bytes,
        "workspaces per user <= workspaces_per_user": checks["max_workspaces_per_user"] <= LIMITS["workspaces_per_user"],
        "every run in the log ended": checks["runs_still_running"] == 0,
        "every run the pages started is logged": checks["runs_in_log"] >= checks["runs_started_by_pages"],
        "nothing lost": not lost,
        "the operator key only at the operator": result["operator_authorization"] in ([], ["Bearer <key>"]),
    }
    result.update(checks=checks, enforced=enforced, problems=problems,
                  passed=all(enforced.values()) and not problems)
    if pg_url:
        import psycopg

        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    out = REPO / "benchmarks" / "results" / "hosted_load.json"
    out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"server log and screenshots of steps that timed out: {work}")
    print(json.dumps({k: result[k] for k in ("visitors", "seconds", "wall_seconds", "store", "steps", "step_seconds",
                                             "health_check_seconds", "cpu_seconds", "checks",
                                             "enforced", "problems", "passed")}, indent=2, default=str))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
