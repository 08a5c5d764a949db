"""Bad uploads in one session while another session works: each gets a message on the Data page,
within seconds, and neither the server nor the other session notices.

The server runs with a reader memory cap of 384 MiB, so a 4.5-million-line run (about 110 MB,
about 600 MiB to read) is stopped by the memory watch: the reader process is killed, as after a
crash. The cap leaves room for a reader to hold the 128 MiB a gzip bomb may expand to before the
byte limit stops it (a 256 MiB cap made that a memory stop too, once, under load). The other files are
the shapes that once crashed or froze the server: a JSONL file whose first line is ``null``,
JSON nested 10,000 deep, a 1 MB score that is not a number, and a gzip file that expands to
512 MiB (past a 128 MiB byte limit set for this server).
"""

from __future__ import annotations

import time
import urllib.request
import zlib

import numpy as np
import pytest

from .conftest import health_answers, screenshot, upload_file, wait_charts, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # drives a real chromium against `streamlit run app.py`


def _big_run(lines: int) -> bytes:
    q = np.arange(lines) // 1000
    d = np.arange(lines) % 1000
    rows = np.char.add(np.char.add(np.char.add("q", q.astype(str)), " Q0 d"), d.astype(str))
    return ("\n".join(np.char.add(rows, " 1 0.5 t").tolist()) + "\n").encode()


def _gzip_bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join([packer.compress(block) for _ in range(size >> 20)] + [packer.flush()])


def _problems(tab) -> list[str]:
    return tab.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def test_bad_uploads_get_messages_while_another_session_keeps_working(start_server, browser, tmp_path):
    server = start_server(env={"EVALSUITE_READER_MEMORY_MB": "384", "EVALSUITE_READER_MAX_BYTES_MB": "128"})
    files = {
        "huge.run.trec": _big_run(4_500_000),
        "null.jsonl": b'null\n{"qid": "q1", "docno": "d1", "score": 1}\n',
        "nested.jsonl": b'{"qid": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n",
        "long_score.csv": b"query_id,doc_id,score\nq1,d1," + b"9" * 1_000_000 + b"x\n",
        "bomb.trec.gz": _gzip_bomb(512 << 20),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)

    uploader = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    uploader.set_default_timeout(120_000)
    other.set_default_timeout(120_000)
    uploader.goto(server.url)
    wait_idle(uploader)
    other.goto(f"{server.url}/overview")
    wait_idle(other)
    wait_charts(other)

    with health_answers(server.url) as health:
        start = time.perf_counter()
        upload_file(uploader, "Runs", paths["huge.run.trec"])
        # While the reader works on it, the other session reloads its page and draws its charts.
        other.reload()
        wait_idle(other)
        wait_charts(other)
        assert other.locator('[data-testid="stDataFrame"]').count() >= 1
        uploader.wait_for_selector('[data-testid="stAlertContentError"]')
        wait_idle(uploader)
        first_message = time.perf_counter() - start
        for name in ("null.jsonl", "nested.jsonl", "long_score.csv", "bomb.trec.gz"):
            upload_file(uploader, "Runs", paths[name])
            uploader.wait_for_function(
                f"() => Array.from(document.querySelectorAll('[data-testid=\"stAlertContentError\"]'))"
                f".some(e => e.textContent.includes({name!r}))")
            wait_idle(uploader)
        total = time.perf_counter() - start

    problems = _problems(uploader)
    text = "\n".join(problems)
    assert "huge.run.trec" in text and "384.0 MiB of memory" in text
    assert "null.jsonl, line 1" in text and "each row must be a JSON object" in text
    assert "nested.jsonl, line 1" in text and "nested more than 64 levels" in text
    assert "long_score.csv, line 2, field 'score'" in text and "not a number" in text
    assert "bomb.trec.gz" in text and "expands past 128.0 MiB" in text
    assert "Traceback" not in uploader.content()
    screenshot(uploader, "bad_uploads_messages")

    # The server lived through it all and kept answering; the other session still works.
    assert server.proc.poll() is None
    assert max(health) < 2.0, f"the server stopped answering for {max(health):.1f} s"
    with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=5) as response:
        assert response.status == 200
    other.reload()
    wait_idle(other)
    wait_charts(other)
    screenshot(other, "other_session_after_bad_uploads")
    print({"first_message_s": round(first_message, 2), "all_messages_s": round(total, 2),
           "slowest_health_s": round(max(health), 3)})
    assert first_message < 60 and total < 120
