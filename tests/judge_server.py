"""A small OpenAI-shaped chat (and embeddings) server on 127.0.0.1 for the judge tests and
benchmarks: no network beyond loopback.

It answers ``POST .../chat/completions`` from recorded responses looked up by request hash (the
canonical request EvalSuite's judge hashes: model, messages, response_format, sampling, token
cap); an unrecorded request gets HTTP 400 "unrecorded request" and is listed in
``server.unrecorded`` (tests assert it stays empty: it fails loudly). ``scripted=True`` answers
any request with :func:`scripted_reply` instead (the benchmarks, and recording fixtures); ``reply=``
a function of the request body answers with its own content (a server that lies, for the tests of
the judge cache's scopes).

Faults are injected per judgement (the prompt's name, or "*" for any): ``server.inject(name,
[fault, ...])`` makes the next matching requests fail in that order, one fault each:
``"429"`` (with ``Retry-After: 0.05``; ``"429:2"`` for 2 s), ``"500"``, ``"400"`` (a rejected
request: unsupported response_format), ``"delay"`` (answers after ``slow_seconds``, past the
client's timeout), ``"malformed"`` (content that is not JSON), ``"length"`` (``finish_reason
"length"``), ``"empty"`` (no choices), ``"refusal"`` (``message.refusal`` set).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from evalsuite.judges import PROMPTS, request_hash

RECORDINGS = Path(__file__).parent / "data" / "judges" / "recorded_chat.json"
_BY_SYSTEM = {p.system: name for name, p in PROMPTS.items()}
_CANONICAL = ("model", "messages", "response_format", "temperature", "max_tokens", "seed")
_WORD = re.compile(r"[a-z0-9$.,]+")
_STOP = set("a an the of to in on and or is are was were be by for with as at it its that this from can may "
            "they their some".split())


def canonical(body: dict) -> dict:
    """The part of a request body the judge's request hash covers."""
    return {k: body[k] for k in _CANONICAL if k in body}


def _words(text: str) -> set:
    return {w.strip(".,") for w in _WORD.findall(text.lower())} - _STOP - {""}


def scripted_reply(body: dict) -> str:
    """A deterministic stand-in for a model (word overlap), for recordings and benchmarks.

    Claims are the text's sentences; a claim is supported when 60% of its content words are in
    the premise; a chunk is useful / relevant when it shares 2 content words with the reference /
    question. It is not a judge: it makes well-formed replies whose values vary.
    """
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    name = _BY_SYSTEM.get(system, "")
    sections = dict(re.findall(r"(?ms)^([A-Z][^\n:]*(?: \([^)]*\))?):\n(.*?)(?=\n\n[A-Z][^\n:]*(?: \([^)]*\))?:\n|\n\n(?:List|Reply) |\Z)", user))
    if name.endswith("_claims") and "supported" not in name:
        text = sections.get("Answer") or sections.get("Reference answer") or ""
        claims = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
        return json.dumps({"claims": claims})
    if name in ("context_useful", "context_relevant"):
        target = sections.get("Reference answer") if name == "context_useful" else sections.get("Question")
        return json.dumps({"verdict": "yes" if len(_words(target or "") & _words(sections.get("Passage", ""))) >= 2 else "no"})
    premise_key = next(k for k in sections if k.startswith("Premise"))
    claims_key = next(k for k in sections if k.startswith("Claims"))
    premise = _words(sections[premise_key])
    verdicts = []
    for line in sections[claims_key].splitlines():
        claim = _words(re.sub(r"^\d+\.\s*", "", line))
        verdicts.append("yes" if claim and len(claim & premise) >= 0.6 * len(claim) else "no")
    return json.dumps({"verdicts": verdicts})


class JudgeServer:
    """The loopback server; ``with JudgeServer(...) as server: server.base_url``."""

    def __init__(self, *, recordings: dict | None = None, scripted: bool = False, delay: float = 0.0,
                 slow_seconds: float = 3.0, record_into: dict | None = None, reply=None,
                 embed_delay: float = 0.0) -> None:
        self.recordings = recordings if recordings is not None else (
            json.loads(RECORDINGS.read_text(encoding="utf-8")) if RECORDINGS.exists() and not scripted else {})
        self.scripted = scripted or reply is not None
        self.reply = reply or scripted_reply
        self.delay = delay
        self.embed_delay = embed_delay  # seconds before each /embeddings reply
        self.embeddings = 0  # /embeddings requests received
        self.slow_seconds = slow_seconds
        self.record_into = record_into
        self.faults: dict[str, list[str]] = {}
        self.requests = 0
        self.by_name: dict[str, int] = {}
        self.hashes: list[str] = []
        self.bodies: list[dict] = []
        self.unrecorded: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.authorization: set[str] = set()
        self._lock = threading.Lock()
        self._server = None

    def inject(self, name: str, faults: list[str]) -> None:
        with self._lock:
            self.faults.setdefault(name, []).extend(faults)

    def _next_fault(self, name: str) -> str | None:
        with self._lock:
            for key in (name, "*"):
                if self.faults.get(key):
                    return self.faults[key].pop(0)
        return None

    def __enter__(self) -> "JudgeServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload, headers=None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    server.requests += 1
                    server.authorization.add(self.headers.get("Authorization", ""))
                try:
                    if self.path.endswith("/embeddings"):
                        return self._embeddings(body)
                    self._chat(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _embeddings(self, body):
                with server._lock:
                    server.embeddings += 1
                if server.embed_delay:
                    time.sleep(server.embed_delay)
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = []
                for i, text in enumerate(inputs):
                    words = _words(text)
                    vector = [float(sum(1 for w in words if hash(w) % 8 == k) + 0.1) for k in range(8)]
                    data.append({"object": "embedding", "index": i, "embedding": vector})
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"prompt_tokens": sum(len(t) // 4 for t in inputs), "total_tokens": 0}})

            def _chat(self, body):
                request = canonical(body)
                key = request_hash(request)
                name = _BY_SYSTEM.get(body["messages"][0]["content"], "?")
                with server._lock:
                    server.by_name[name] = server.by_name.get(name, 0) + 1
                    server.hashes.append(key)
                    server.bodies.append(body)
                if server.delay:
                    time.sleep(server.delay)
                fault = server._next_fault(name)
                if fault and fault.startswith("429"):
                    wait = fault.partition(":")[2] or "0.05"
                    return self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"Retry-After": wait})
                if fault == "500":
                    return self._send(500, {"error": {"message": "server error", "type": "server_error"}})
                if fault == "401":
                    return self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_api_key"}})
                if fault == "400":
                    return self._send(400, {"error": {"message": "response_format not supported", "type": "invalid_request_error"}})
                if fault == "delay":
                    time.sleep(server.slow_seconds)
                if server.scripted:
                    content = server.reply(body)
                    if server.record_into is not None:
                        with server._lock:
                            server.record_into[key] = {"content": content}
                else:
                    recorded = server.recordings.get(key)
                    if recorded is None:
                        with server._lock:
                            server.unrecorded.append(key)
                        return self._send(400, {"error": {"message": f"unrecorded request {key}", "type": "unrecorded"}})
                    content = recorded["content"]
                finish = "stop"
                choices = [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]
                if fault == "malformed":
                    choices[0]["message"]["content"] = '{"verdicts": ["yes", '
                elif fault == "length":
                    choices[0]["message"]["content"] = content[: len(content) // 2]
                    choices[0]["finish_reason"] = "length"
                elif fault == "empty":
                    choices = []
                elif fault == "refusal":
                    choices[0]["message"] = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
                prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
                self._send(200, {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
                                 "choices": choices,
                                 "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4 + 1,
                                           "total_tokens": prompt_tokens + len(content) // 4 + 1}})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.request_queue_size = 128
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def refused_port() -> int:
    """A loopback port with nothing listening (connections to it are refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SilentServer:
    """A loopback endpoint that accepts connections (the kernel completes them from the listen
    backlog) and never answers: ``with SilentServer() as silent: silent.base_url``."""

    def __enter__(self) -> "SilentServer":
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(256)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def __exit__(self, *exc) -> None:
        self._sock.close()
