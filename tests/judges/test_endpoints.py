"""Which key goes to which judge endpoint, which endpoints a visitor may type, the checks of a typed
endpoint's address (also at connection time and on redirects), and the cache scoped by endpoint.

Every server here is on 127.0.0.1; the addresses of other networks are only ever handed to the
checks through a fake resolver, never connected to."""

from __future__ import annotations

import itertools
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evalsuite import Records
from evalsuite.errors import EvalSuiteError
from evalsuite.judges import JudgeCache, LLMJudge
from evalsuite.judges.endpoints import (
    address_refusal,
    check_endpoint_url,
    choose_endpoint,
    endpoint_identity,
    guarded_http_client,
    is_loopback_host,
    judge_access,
)
from judge_server import JudgeServer

OPERATOR_KEY = "sk-operator-0123456789"
VISITOR_KEY = "sk-visitor-abcdef"


def resolver(mapping: dict[str, list[str]]):
    """A getaddrinfo that answers from ``mapping`` (host -> addresses)."""

    def resolve(host, port, family=0, type=0, *rest):
        if host in mapping:
            return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                    for a in mapping[host]]
        return socket.getaddrinfo(host, port, family, type)

    return resolve


# ----------------------------------------------------------------------------------------------
# The table of configurations: keys in secrets or the environment, with or without an operator
# endpoint, hosted or local, typed endpoints allowed or not. In none of them does an operator key
# go with a typed endpoint, and with an operator endpoint the operator key goes only there.

KEY_PLACES = {
    "no key": ({}, {}),
    "secrets judge_api_key": ({"judge_api_key": OPERATOR_KEY}, {}),
    "env EVALSUITE_JUDGE_API_KEY": ({}, {"EVALSUITE_JUDGE_API_KEY": OPERATOR_KEY}),
    "env OPENAI_API_KEY": ({}, {"OPENAI_API_KEY": OPERATOR_KEY}),
}
ENDPOINTS = {
    "no endpoint": ({}, {}),
    "secrets judge_base_url": ({"judge_base_url": "https://llm.operator.example/v1", "judge_model": "op"}, {}),
    "env EVALSUITE_JUDGE_BASE_URL": ({}, {"EVALSUITE_JUDGE_BASE_URL": "https://llm.operator.example/v1",
                                          "EVALSUITE_JUDGE_MODEL": "op"}),
}
TYPED = {"typed: default": {}, "typed: allowed": {"judge_typed_endpoints": True},
         "typed: refused": {"judge_typed_endpoints": False}, "hosted = true": {"hosted": True},
         "sign-in on": {"sign_in": True}, "sign-in on, typed allowed": {"sign_in": True, "judge_typed_endpoints": True}}


@pytest.mark.parametrize("key_place, endpoint, typed, local",
                         list(itertools.product(KEY_PLACES, ENDPOINTS, TYPED, [True, False])))
def test_an_operator_key_never_goes_with_a_typed_endpoint(key_place, endpoint, typed, local):
    secrets = {**KEY_PLACES[key_place][0], **ENDPOINTS[endpoint][0], **TYPED[typed],
               "judge_allow_private_endpoints": True}
    environ = {**KEY_PLACES[key_place][1], **ENDPOINTS[endpoint][1]}
    access = judge_access(secrets, environ, local=local)
    assert OPERATOR_KEY not in repr(access)
    typed_allowed = {"typed: allowed": True, "typed: refused": False, "hosted = true": False, "sign-in on": False,
                     "sign-in on, typed allowed": True}.get(typed, local)
    assert access.typed_endpoints is typed_allowed
    for visitor_key in (None, VISITOR_KEY):
        try:
            chosen = choose_endpoint(access, "http://127.0.0.1:9/v1", "visitor-model", visitor_key)
        except EvalSuiteError as exc:
            assert not typed_allowed and "operator" in str(exc) and OPERATOR_KEY not in str(exc)
        else:
            assert typed_allowed
            assert (chosen.origin, chosen.base_url, chosen.guarded) == ("typed", "http://127.0.0.1:9/v1", True)
            assert chosen.api_key == visitor_key  # the visitor's own key, or none: never the operator's
    has_endpoint = endpoint != "no endpoint"
    has_key = key_place != "no key"
    assert access.unused_key is (has_key and not has_endpoint)
    if has_endpoint:
        chosen = choose_endpoint(access)
        assert (chosen.origin, chosen.base_url) == ("operator", "https://llm.operator.example/v1")
        assert chosen.api_key == (OPERATOR_KEY if has_key else None)
    else:
        with pytest.raises(EvalSuiteError, match="no judge endpoint"):
            choose_endpoint(access)


def test_key_order_and_setting_errors():
    both = judge_access({"judge_base_url": "https://a.example/v1", "judge_model": "m", "judge_api_key": "sk-secret"},
                        {"EVALSUITE_JUDGE_API_KEY": "sk-env", "OPENAI_API_KEY": "sk-openai"})
    assert (both.key_source, choose_endpoint(both).api_key) == ("EVALSUITE_JUDGE_API_KEY", "sk-env")
    secret = judge_access({"judge_base_url": "https://a.example/v1", "judge_model": "m", "judge_api_key": "sk-secret"},
                          {"OPENAI_API_KEY": "sk-openai"})
    assert choose_endpoint(secret).api_key == "sk-secret"
    with pytest.raises(EvalSuiteError, match="judge_typed_endpoints"):
        judge_access({"judge_typed_endpoints": "perhaps"}, {})
    with pytest.raises(EvalSuiteError, match="EVALSUITE_JUDGE_BUDGET"):
        judge_access({}, {"EVALSUITE_JUDGE_BUDGET": "lots"})
    with pytest.raises(EvalSuiteError, match="judge_model"):
        choose_endpoint(judge_access({"judge_base_url": "https://a.example/v1"}, {}))


def test_private_addresses_follow_the_setting_and_local_default():
    hosted = judge_access({"judge_typed_endpoints": True}, {}, local=False)
    local = judge_access({}, {}, local=True)
    assert (hosted.allow_private, local.allow_private) == (False, True)
    with pytest.raises(EvalSuiteError, match="private or loopback.*judge_allow_private_endpoints"):
        choose_endpoint(hosted, "http://127.0.0.1:8080/v1", "m")
    assert choose_endpoint(local, "http://localhost:8080/v1", "m").base_url == "http://localhost:8080/v1"


# ----------------------------------------------------------------------------------------------
# The address checks.

@pytest.mark.parametrize("address, private_allowed, refused", [
    ("169.254.169.254", True, "link-local"),        # AWS, GCP, Azure, OpenStack metadata
    ("169.254.170.2", True, "link-local"),          # ECS task metadata
    ("fe80::1", True, "link-local"),
    ("fe80::a9fe:a9fe", True, "link-local"),
    ("::ffff:169.254.169.254", True, "link-local"),  # IPv4-mapped
    ("64:ff9b::a9fe:a9fe", True, "link-local"),      # NAT64 of 169.254.169.254
    ("fd00:ec2::254", True, "metadata"),
    ("100.100.100.200", True, "metadata"),
    ("168.63.129.16", True, "metadata"),
    ("192.0.0.192", True, "metadata"),
    ("0.0.0.0", True, "one host"),
    ("224.0.0.1", True, "one host"),
    ("240.0.0.1", True, "one host"),
    ("127.0.0.1", False, "private"),
    ("::1", False, "private"),
    ("10.0.0.5", False, "private"),
    ("172.16.9.1", False, "private"),
    ("192.168.1.1", False, "private"),
    ("100.64.0.1", False, "private"),
    ("fd12:3456::1", False, "private"),
    ("127.0.0.1", True, None),
    ("10.0.0.5", True, None),
    ("93.184.215.14", False, None),
    ("2606:4700::6810:85e5", False, None),
])
def test_address_refusal(address, private_allowed, refused):
    why = address_refusal(address, allow_private=private_allowed)
    assert (why is None) if refused is None else (refused in why), why


@pytest.mark.parametrize("url, message", [
    ("ftp://llm.example/v1", "http:// or https://"),
    ("javascript:alert(1)", "http:// or https://"),
    ("http://user:pw@llm.example/v1", "user name or password"),
    ("http://llm.example@127.0.0.1/v1", "user name or password"),
    ("http:///v1", "names no host"),
    ("http://metadata.google.internal/computeMetadata/v1", "metadata"),
    ("http://169.254.169.254/latest", "link-local"),
    ("http://[::ffff:a9fe:a9fe]/latest", "link-local"),
    ("http://rebind.example/v1", "link-local"),          # resolves to a metadata address
    ("http://mixed.example/v1", "private"),              # one public and one private address
    ("http://llm.example:99999/v1", "not a valid address"),
])
def test_typed_urls_refused(url, message):
    resolve = resolver({"rebind.example": ["169.254.169.254"], "mixed.example": ["93.184.215.14", "10.0.0.1"]})
    with pytest.raises(EvalSuiteError, match=message) as caught:
        check_endpoint_url(url, resolve=resolve)
    assert "pw" not in str(caught.value)


def test_loopback_hosts_and_endpoint_identity():
    assert is_loopback_host("127.0.0.5:8501") and not is_loopback_host("10.0.0.1")
    assert endpoint_identity("http://llm.example/v1") != endpoint_identity("http://llm.example:8080/v1")
    assert endpoint_identity("https://llm.example/v1") == endpoint_identity("https://LLM.example:443/v1/")


# ----------------------------------------------------------------------------------------------
# Connections: the guarded client checks the address it connects to, and never follows a
# redirect to another host.

class _Redirector:
    """A loopback server answering every POST with a 307 to ``target``."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.hits = 0

    def __enter__(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                owner.hits += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(307)
                self.send_header("Location", owner.target)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _one_record():
    return Records.from_rows([{"query_id": "q1", "question": "What is the capital of France?",
                               "answer": "Paris is the capital of France.", "contexts": ["Paris is in France."]}])


def _judge(base_url, client, cache=":memory:", key=VISITOR_KEY):
    return LLMJudge("m", base_url=base_url, api_key=key, cache=cache, judgements=["answer_claims_supported"],
                    max_retries=0, http_client=client)


def test_guarded_client_connects_to_an_allowed_loopback_endpoint():
    with JudgeServer(scripted=True) as server:
        judged = _judge(server.base_url, guarded_http_client(allow_private=True)).judge(_one_record())
    assert judged.stats.calls == 2 and not judged.stats.missing
    assert server.authorization == {f"Bearer {VISITOR_KEY}"}


def test_guarded_client_refuses_a_private_endpoint_at_connection():
    with JudgeServer(scripted=True) as server:
        judged = _judge(server.base_url, guarded_http_client(allow_private=False)).judge(_one_record())
    assert server.requests == 0
    assert judged.stats.missing  # the request failed: a missing judgement, never a verdict


def test_a_name_that_changes_its_answer_is_checked_at_connection():
    # The page's check saw a public address; when the connection is opened the name says 169.254.169.254.
    answers = iter([["93.184.215.14"], ["169.254.169.254"]])

    def resolve(host, port, *rest):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in next(answers)]

    url = check_endpoint_url("http://rebinding.example:9/v1", resolve=resolve)
    client = guarded_http_client(allow_private=True, resolve=resolve)
    with pytest.raises(Exception, match="link-local"):
        client.post(url + "/chat/completions", json={})


def test_a_redirect_to_another_host_is_not_followed():
    with JudgeServer(scripted=True) as elsewhere, _Redirector(elsewhere.base_url + "/chat/completions") as redirector:
        judged = _judge(redirector.url, guarded_http_client(allow_private=True)).judge(_one_record())
    assert redirector.hits >= 1 and elsewhere.requests == 0
    assert judged.stats.missing


# ----------------------------------------------------------------------------------------------
# The cache: one endpoint's replies are never served for another's.

def test_replies_of_one_endpoint_are_not_served_for_another(tmp_path):
    cache = JudgeCache(tmp_path / "cache.sqlite3")
    with JudgeServer(scripted=True) as first, JudgeServer(scripted=True) as second:
        a = _judge(first.base_url, None, cache=cache).judge(_one_record())
        again = _judge(first.base_url, None, cache=cache).judge(_one_record())
        b = _judge(second.base_url, None, cache=cache).judge(_one_record())
    assert (a.stats.calls, again.stats.calls, again.stats.cache_hits) == (2, 0, 2)
    assert (b.stats.calls, b.stats.cache_hits) == (2, 0)  # the other endpoint answered for itself
    assert second.requests == 2
    provenance = json.loads(b.records.table.column("judge_provenance")[0].as_py())
    assert all(not p.get("cached") for p in provenance)
