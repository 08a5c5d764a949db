"""The LLM judge: judgement columns from question, answer, contexts and reference, over any
OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp's server, Ollama's ``/v1``).

Per record it extracts the claims of the answer and of the reference, then asks for verdicts:
answer claims against the contexts (``answer_claims_supported``: faithfulness), reference claims
against the contexts (``reference_claims_supported``: context recall), answer claims against the
reference and reference claims against the answer (``answer_claims_in_reference`` and
``reference_claims_in_answer``: answer correctness), and per chunk: useful for the reference
(``context_useful``: context precision) and relevant to the question (``context_relevant``).

Temperature 0; output by JSON schema, falling back to JSON mode, then to text with tolerant
extraction, recording which mode answered. A truncated reply (``finish_reason="length"``), a
malformed one, a refusal, no choices, or a call that failed after its retries is a missing
judgement (None), counted by reason, never a verdict. Degenerate input is decided by a rule,
without a call, and the provenance says so. ``openai`` is imported when a judge is built.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import math
import os
import random
import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Callable

import pyarrow as pa

from ..errors import EvalSuiteError
from ..metrics.registry import judge_columns
from ._base import JudgedRecords, JudgeStats, Provenance, endpoint_host, write_columns
from ._cache import JudgeCache, ScopedCache, canonical_json, request_hash
from .prompts import PROMPTS, Prompt

__all__ = ["LLMJudge", "Estimate", "LLM_COLUMNS", "MODES", "extract_json", "api_key_from_environment"]

#: Judgement columns the LLM judge fills: the metrics' inputs it can judge (the registry's, in its order).
LLM_COLUMNS = judge_columns("llm")
#: Output modes, tried in this order.
MODES = ("json_schema", "json_object", "text")
#: Environment variables the key is read from, in order (never from a flag or a file).
API_KEY_VARIABLES = ("EVALSUITE_JUDGE_API_KEY", "OPENAI_API_KEY")


_PLACEHOLDER = "\u0000messages\u0000"  # stands for the messages in a request template


def api_key_from_environment() -> str | None:
    """The API key from ``EVALSUITE_JUDGE_API_KEY`` or ``OPENAI_API_KEY`` (None when unset).

    Examples
    --------
    >>> import os
    >>> saved = {name: os.environ.pop(name, None) for name in API_KEY_VARIABLES}
    >>> api_key_from_environment() is None
    True
    >>> os.environ["OPENAI_API_KEY"] = "sk-example"
    >>> api_key_from_environment()
    'sk-example'
    >>> for name, value in saved.items():
    ...     _ = os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
    """
    for name in API_KEY_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    return None


def extract_json(text: str) -> Any:
    """The first JSON object in a model's text reply (code fences and prose around it allowed).

    Parameters
    ----------
    text : str
        The reply.

    Returns
    -------
    object
        The first ``{...}`` that parses as JSON.

    Raises
    ------
    ValueError
        No JSON object in the text.

    Examples
    --------
    >>> extract_json('Sure! ```json\\n{"verdict": "yes"}\\n``` Hope it helps.')
    {'verdict': 'yes'}
    >>> extract_json('no json here')
    Traceback (most recent call last):
    ...
    ValueError: no JSON object in the reply
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
            if isinstance(value, dict):
                return value
        except ValueError:
            pass
        start = text.find("{", start + 1)
    raise ValueError("no JSON object in the reply")


def _parse_reply(prompt: Prompt, content: str, mode: str, n_claims: int | None):
    """The verdict(s) of a reply, or raise ValueError (a malformed reply)."""
    value = json.loads(content) if mode != "text" else extract_json(content)
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")

    def yes_no(item):
        if isinstance(item, bool) and mode == "text":
            return item
        if isinstance(item, str) and item.strip().lower() in ("yes", "no"):
            return item.strip().lower() == "yes"
        raise ValueError(f"a verdict must be yes or no, got {item!r}")

    if prompt.kind == "claims":
        claims = value.get("claims")
        if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
            raise ValueError("claims must be a list of strings")
        return [c.strip() for c in claims if c.strip()]
    if prompt.kind == "verdicts":
        verdicts = value.get("verdicts")
        if not isinstance(verdicts, list):
            raise ValueError("verdicts must be a list")
        if len(verdicts) != n_claims:
            raise ValueError(f"{len(verdicts)} verdicts for {n_claims} claims")
        return [yes_no(v) for v in verdicts]
    return yes_no(value.get("verdict"))


@dataclass
class Estimate:
    """What a run is expected to cost, shown before it starts.

    Attributes
    ----------
    requests : int
        Judge requests needed (claims are not known yet: one verdict request per text and premise).
    cached : int
        Of those, requests already in the cache (known only for claim extraction and per-chunk
        requests, whose text is known before the run).
    prompt_tokens : int
        Input tokens, about 4 characters a token, of the requests not cached.
    completion_tokens : int
        Output tokens expected (claims about as long as the text; a few per verdict).
    completion_tokens_max : int
        Output tokens at most: ``max_tokens`` per request not cached.
    cost, cost_max : float
        At the given prices per million tokens.
    """

    requests: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    completion_tokens_max: int
    cost: float
    cost_max: float

    def __str__(self) -> str:
        return (f"{self.requests} judge requests ({self.cached} already cached), about {self.prompt_tokens:,} input "
                f"and {self.completion_tokens:,} output tokens (at most {self.completion_tokens_max:,}); "
                f"cost about {self.cost:.4f} (at most {self.cost_max:.4f})")


class _Failed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _ModeRejected(Exception):
    pass


def _retry_after(exc) -> float | None:
    """Seconds from the ``Retry-After`` (or ``retry-after-ms``) header of an error response."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class LLMJudge:
    """Judge records with a chat model behind an OpenAI-compatible endpoint.

    Parameters
    ----------
    model : str
        Model id as the endpoint names it (recorded with every verdict).
    base_url : str or None
        Endpoint, e.g. ``http://127.0.0.1:8080/v1``; None for the ``openai`` client's default
        (``OPENAI_BASE_URL`` or OpenAI). Only its host and port are recorded.
    api_key : str or None
        None reads ``EVALSUITE_JUDGE_API_KEY`` then ``OPENAI_API_KEY``; a local endpoint needs
        none. Never written to the cache, the provenance, errors or logs.
    cache : JudgeCache, ScopedCache, path or None
        Where calls are kept; None for the default file in the data directory. The judge keeps its
        replies within the scope of its endpoint (:func:`~evalsuite.judges.endpoints.endpoint_identity`),
        so another endpoint's replies are never used.
    judgements : sequence of str
        Which of :data:`LLM_COLUMNS` to fill (default all; each needs its fields).
    concurrency : int
        Requests in flight at most (default 8).
    timeout : float
        Seconds per request (default 60).
    max_retries : int
        Retries after 429, 5xx, a timeout or a connection error (default 4), with exponential
        backoff (``backoff`` x 2^attempt seconds, capped at ``max_backoff``, full jitter); a
        ``Retry-After`` header is honoured (waited for at least, plus up to 10% jitter).
    max_tokens : int
        Output token cap per request (default 1024); a reply cut there is a missing judgement.
    price_input, price_output : float
        Price per million input / output tokens (default 0: a local model).
    budget : float or None
        Stop before the cost could pass it: a request is sent only if the cost so far, plus the
        most every request in flight and this one could cost (input bounded by the request's
        UTF-8 bytes, output by ``max_tokens``), stays within it.
    modes : sequence of str
        Output modes to try, in order (default ``json_schema``, ``json_object``, ``text``); a mode
        the endpoint rejects (HTTP 400 or 422) is not tried again in this run.
    seed : int or None
        Sent as ``seed`` when given (part of the request hash).
    sleep : callable
        ``time.sleep``; tests pass a recorder.
    http_client : httpx client or None
        The HTTP client of the ``openai`` client (the dashboard passes
        :func:`~evalsuite.judges.endpoints.guarded_http_client` for a visitor's endpoint).

    Raises
    ------
    EvalSuiteError
        A bad setting; at run time, an endpoint that refuses the key (401/403) or does not know
        the model or path (404), naming the host and status, never the key.

    Examples
    --------
    >>> from evalsuite import Records
    >>> judge = LLMJudge("qwen2.5-7b-instruct", base_url="http://127.0.0.1:8080/v1", cache=":memory:",
    ...                  price_input=0.15, price_output=0.6)
    >>> judge.endpoint_host
    '127.0.0.1:8080'
    >>> records = Records.from_rows([{"query_id": "q1", "question": "Capital of France?", "answer": "",
    ...                               "contexts": []}])
    >>> judged = judge.judge(records)  # degenerate input: decided by rule, no call
    >>> judged.records.table.column("answer_claims_supported").to_pylist(), judged.stats.calls
    ([[]], 0)
    """

    kind = "llm"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 cache: JudgeCache | str | os.PathLike | None = None, judgements=LLM_COLUMNS, concurrency: int = 8,
                 timeout: float = 60.0, max_retries: int = 4, backoff: float = 0.5, max_backoff: float = 30.0,
                 max_tokens: int = 1024, price_input: float = 0.0, price_output: float = 0.0,
                 budget: float | None = None, modes=MODES, seed: int | None = None,
                 sleep: Callable[[float], None] = time.sleep, http_client=None) -> None:
        if not isinstance(model, str) or not model:
            raise EvalSuiteError("a model id is needed", field="model", value=model)
        unknown = [j for j in judgements if j not in LLM_COLUMNS]
        if unknown:
            raise EvalSuiteError(f"unknown judgement; use {', '.join(LLM_COLUMNS)}", field="judgements", value=unknown[0])
        bad_modes = [m for m in modes if m not in MODES] or ([] if modes else ["(none)"])
        if bad_modes:
            raise EvalSuiteError(f"unknown output mode; use {', '.join(MODES)}", field="modes", value=bad_modes[0])
        for name, value, low in (("concurrency", concurrency, 1), ("max_tokens", max_tokens, 1), ("max_retries", max_retries, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise EvalSuiteError(f"must be a whole number >= {low}", field=name, value=value)
        for name, value in (("timeout", timeout), ("price_input", price_input), ("price_output", price_output),
                            ("budget", 0.0 if budget is None else budget), ("backoff", backoff)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise EvalSuiteError("must be a finite number >= 0", field=name, value=value)
        self.model = model
        self.base_url = base_url
        self.endpoint_host = endpoint_host(base_url) or "api.openai.com"
        self._api_key = api_key if api_key is not None else api_key_from_environment()
        from .endpoints import endpoint_identity

        self.cache = (cache if isinstance(cache, (JudgeCache, ScopedCache)) else JudgeCache(cache)).scoped(
            "endpoint", endpoint_identity(base_url))
        self._http_client = http_client
        self.judgements = tuple(judgements)
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.max_tokens = max_tokens
        self.price_input, self.price_output = float(price_input), float(price_output)
        self.budget = budget
        self.modes = tuple(modes)
        self.seed = seed
        self._sleep = sleep
        self._mode_index = 0
        self._versions: dict[str, str] = {}
        self._templates: dict = {}
        self._lock = threading.Lock()
        self._client = None
        self._stop = threading.Event()
        self._reserved = 0.0
        self.stats = JudgeStats()

    def __repr__(self) -> str:  # never shows the key
        return f"LLMJudge(model={self.model!r}, endpoint={self.endpoint_host!r}, concurrency={self.concurrency})"

    # -- the endpoint ---------------------------------------------------------------------------

    def _get_client(self):
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError:  # pragma: no cover - openai is in requirements.txt
                    raise EvalSuiteError("the LLM judge needs the openai package: pip install openai",
                                         field="judge", value="llm") from None
                self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key or "no-key",
                                             timeout=self.timeout, max_retries=0, http_client=self._http_client)
            return self._client

    def _request(self, prompt: Prompt, messages: list[dict], mode: str) -> dict:
        request: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0,
                                   "max_tokens": self.max_tokens}
        if mode == "json_schema":
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": prompt.name, "strict": True, "schema": prompt.schema}}
        elif mode == "json_object":
            request["response_format"] = {"type": "json_object"}
        if self.seed is not None:
            request["seed"] = self.seed
        return request

    def _key(self, prompt: Prompt, messages_json: str, mode: str) -> str:
        """request_hash(self._request(prompt, messages, mode)), from a template made once per prompt and mode."""
        template = self._templates.get((prompt.name, mode))
        if template is None:
            text = canonical_json(self._request(prompt, _PLACEHOLDER, mode))
            template = self._templates[(prompt.name, mode)] = text.split(canonical_json(_PLACEHOLDER), 1)
        return hashlib.sha256((template[0] + messages_json + template[1]).encode("utf-8")).hexdigest()

    def _send(self, request: dict) -> dict:
        """One request with retries; the response as the cache keeps it."""
        import openai

        client = self._get_client()
        for attempt in range(self.max_retries + 1):
            started = time.perf_counter()
            try:
                completion = client.chat.completions.create(**request)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                self.stats.add(calls=1)
                if "response_format" in request:
                    raise _ModeRejected() from None
                raise _Failed(f"rejected (HTTP {exc.status_code})") from None
            except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as exc:
                self.stats.add(calls=1)
                what = "does not know the model or path" if exc.status_code == 404 else "refused the API key"
                raise EvalSuiteError(f"the endpoint {what} (HTTP {exc.status_code})", source=self.endpoint_host,
                                     field="model" if exc.status_code == 404 else "api key",
                                     value=self.model if exc.status_code == 404 else None) from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, openai.APIStatusError) as exc:
                self.stats.add(calls=1)
                status = getattr(exc, "status_code", None)
                if isinstance(exc, openai.APIStatusError) and not isinstance(exc, (openai.RateLimitError, openai.InternalServerError)) \
                        and not (status is not None and (status >= 500 or status == 408)):
                    raise _Failed(f"rejected (HTTP {status})") from None
                reason = ("timeout" if isinstance(exc, openai.APITimeoutError) else
                          "connection" if isinstance(exc, openai.APIConnectionError) else f"HTTP {status}")
                if attempt == self.max_retries or self._stop.is_set():
                    raise _Failed(f"failed after {attempt + 1} attempts ({reason})") from None
                wait = _retry_after(exc)
                if wait is not None:
                    wait = wait * random.uniform(1.0, 1.1)
                else:
                    wait = random.uniform(0, min(self.max_backoff, self.backoff * 2 ** attempt))
                self.stats.add(retries=1)
                self._sleep(wait)
                continue
            self.stats.add(calls=1)
            latency = (time.perf_counter() - started) * 1000
            choices = completion.choices or []
            usage = completion.usage
            first = choices[0] if choices else None
            message = first.message if first is not None else None
            return {"content": None if message is None else message.content,
                    "refusal": None if message is None else getattr(message, "refusal", None),
                    "finish_reason": None if first is None else first.finish_reason,
                    "choices": len(choices),
                    "prompt_tokens": None if usage is None else usage.prompt_tokens,
                    "completion_tokens": None if usage is None else usage.completion_tokens,
                    "model": completion.model, "latency_ms": round(latency, 3)}
        raise AssertionError("unreachable")

    # -- one judgement --------------------------------------------------------------------------

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_input + completion_tokens * self.price_output) / 1e6

    def _reserve(self, request: dict) -> float | None:
        """The most this request can cost, reserved against the budget; None if it may not be sent."""
        bound = self._cost(len(json.dumps(request, ensure_ascii=False).encode("utf-8")), self.max_tokens)
        with self._lock:
            if self._stop.is_set():
                return None
            if self.budget is not None and self.stats.cost + self._reserved + bound > self.budget:
                self.stats.stopped = self.stats.stopped or "budget"
                self._stop.set()
                return None
            self._reserved += bound
        return bound

    def ask(self, prompt: Prompt, column: str, n_claims: int | None = None, index: int | None = None, **fields):
        """One judgement: its value (None when missing) and its :class:`Provenance`."""
        messages = prompt.messages(**fields)
        version = self._versions.get(prompt.name) or self._versions.setdefault(prompt.name, prompt.version)
        prov = Provenance(column=column, judge="llm", model=self.model, endpoint_host=self.endpoint_host,
                          prompt_version=version, index=index)
        response = None
        start = self._mode_index
        messages_json = canonical_json(messages)
        for mode in self.modes[start:]:
            key = self._key(prompt, messages_json, mode)
            hit = self.cache.get(key)
            if hit is not None:
                response, prov.mode, prov.request_hash, prov.cached = hit, mode, key, True
                self.stats.add(cache_hits=1)
                break
        while response is None:
            mode = self.modes[self._mode_index] if self._mode_index < len(self.modes) else None
            if mode is None:
                return self._missing(prov, "every output mode rejected")
            request = self._request(prompt, messages, mode)
            key = request_hash(request)
            prov.mode, prov.request_hash = mode, key
            bound = self._reserve(request)
            if bound is None:
                return self._missing(prov, self.stats.stopped or "interrupted")
            try:
                response = self._send(request)
                response["mode"] = mode
            except _ModeRejected:
                with self._lock:
                    self._mode_index = max(self._mode_index, self.modes.index(mode) + 1)
                continue
            except _Failed as failed:
                return self._missing(prov, failed.reason)
            finally:
                with self._lock:
                    self._reserved -= bound
            pt, ct = response.get("prompt_tokens") or 0, response.get("completion_tokens") or 0
            self.stats.add(prompt_tokens=pt, completion_tokens=ct, cost=self._cost(pt, ct))
            self.cache.put(key, request, response)
        self.stats.add(judgements=1)
        prov.prompt_tokens, prov.completion_tokens = response.get("prompt_tokens"), response.get("completion_tokens")
        prov.latency_ms = response.get("latency_ms")
        if not response.get("choices"):
            return self._missing(prov, "no choices")
        if response.get("finish_reason") == "length":
            return self._missing(prov, "truncated")
        if response.get("refusal") or response.get("content") is None:
            return self._missing(prov, "refusal")
        try:
            value = _parse_reply(prompt, response["content"], prov.mode, n_claims)
        except ValueError:
            return self._missing(prov, "malformed")
        return value, prov

    def _missing(self, prov: Provenance, reason: str):
        prov.status = f"missing: {reason}"
        self.stats.add_missing(reason)
        return None, prov

    # -- one record -----------------------------------------------------------------------------

    def _rule(self, column: str, why: str) -> Provenance:
        self.stats.add(rule_decided=1)
        return Provenance(column=column, judge="rule", status=f"rule: {why}")

    def _claims(self, which: str, question, text, provs) -> list | None:
        if text is None:
            return None
        if not text.strip():
            provs.append(self._rule(which, f"empty {which.split('_')[0]}: no claims"))
            return []
        value, prov = self.ask(PROMPTS[which], which, question=question or "", text=text)
        provs.append(prov)
        return value

    def _verdicts(self, column: str, claims, premise: str | None, empty_premise: str, provs) -> list | None:
        if claims is None or premise is None:
            return None  # not judgeable: no claims extracted or nothing to check against
        if not claims:
            return []
        if not premise.strip():
            provs.append(self._rule(column, f"{empty_premise}: no claim can be supported"))
            return [False] * len(claims)
        numbered = "\n".join(f"{i + 1}. {claim}" for i, claim in enumerate(claims))
        value, prov = self.ask(PROMPTS[column], column, n_claims=len(claims), premise=premise, claims=numbered)
        provs.append(prov)
        return [None] * len(claims) if value is None else value

    def judge_one(self, row: dict) -> tuple[dict, list[Provenance]]:
        """The judgement columns of one record (a dict with question, answer, contexts, reference)."""
        question, answer, reference, contexts = (row.get("question"), row.get("answer"), row.get("reference"),
                                                 row.get("contexts"))
        provs: list[Provenance] = []
        out: dict[str, Any] = {}
        wanted = set(self.judgements)
        premise = None if contexts is None else "\n\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
        if contexts is not None and not contexts:
            premise = ""
        need_answer = wanted & {"answer_claims_supported", "answer_claims_in_reference"}
        need_reference = wanted & {"reference_claims_supported", "reference_claims_in_answer"}
        answer_claims = self._claims("answer_claims", question, answer, provs) if need_answer else None
        reference_claims = self._claims("reference_claims", question, reference, provs) if need_reference else None
        if need_answer:
            out["answer_claims"] = answer_claims
        if need_reference:
            out["reference_claims"] = reference_claims
        if "answer_claims_supported" in wanted:
            out["answer_claims_supported"] = self._verdicts("answer_claims_supported", answer_claims, premise,
                                                            "no contexts", provs)
        if "reference_claims_supported" in wanted:
            out["reference_claims_supported"] = self._verdicts("reference_claims_supported", reference_claims, premise,
                                                               "no contexts", provs)
        if "answer_claims_in_reference" in wanted:
            out["answer_claims_in_reference"] = self._verdicts("answer_claims_in_reference", answer_claims, reference,
                                                               "empty reference", provs)
        if "reference_claims_in_answer" in wanted:
            out["reference_claims_in_answer"] = self._verdicts("reference_claims_in_answer", reference_claims, answer,
                                                               "empty answer", provs)
        for column, needs in (("context_useful", reference), ("context_relevant", question)):
            if column not in wanted:
                continue
            if contexts is None or needs is None or not needs.strip():
                out[column] = None  # nothing to judge the chunks against: not judged
                continue
            if not contexts:
                provs.append(self._rule(column, "no contexts"))
                out[column] = []
                continue
            verdicts = []
            for i, chunk in enumerate(contexts):
                fields = {"question": question or "", "chunk": chunk}
                if column == "context_useful":
                    fields["reference"] = reference
                value, prov = self.ask(PROMPTS[column], column, index=i, **fields)
                provs.append(prov)
                verdicts.append(value)
            out[column] = verdicts
        return out, provs

    # -- the run --------------------------------------------------------------------------------

    def estimate(self, records) -> Estimate:
        """What judging ``records`` will take: requests, cached ones, tokens and cost.

        Parameters
        ----------
        records : evalsuite.Records

        Returns
        -------
        Estimate
        """
        requests = cached = prompt_chars = completion = 0
        for row in _rows(records):
            question, answer, reference, contexts = (row.get("question") or "", row.get("answer"),
                                                     row.get("reference"), row.get("contexts"))
            planned: list[tuple[Prompt, dict, int, bool]] = []  # prompt, fields, expected output tokens, knowable
            wanted = set(self.judgements)
            # The answer's claims and the reference's claims are planned alike: extract them, then
            # check them against the contexts and against the other text.
            for text, other, side, other_side in ((answer, reference, "answer", "reference"),
                                                  (reference, answer, "reference", "answer")):
                supported, in_other = f"{side}_claims_supported", f"{side}_claims_in_{other_side}"
                if not (text and text.strip() and wanted & {supported, in_other}):
                    continue
                planned.append((PROMPTS[f"{side}_claims"], {"question": question, "text": text}, len(text) // 4 + 16, True))
                if supported in wanted and contexts:
                    planned.append((PROMPTS[supported], {"premise": "\n\n".join(contexts), "claims": text},
                                    len(text) // 40 * 3 + 12, False))
                if in_other in wanted and other and other.strip():
                    planned.append((PROMPTS[in_other], {"premise": other, "claims": text}, len(text) // 40 * 3 + 12, False))
            for column, needs in (("context_useful", reference), ("context_relevant", row.get("question"))):
                if column in wanted and contexts and needs and needs.strip():
                    for chunk in contexts:
                        planned.append((PROMPTS[column], {"question": question, "reference": reference or "", "chunk": chunk}, 8, True))
            for prompt, fields, out_tokens, knowable in planned:
                requests += 1
                messages = prompt.messages(**fields)
                if knowable and any(self.cache.get(request_hash(self._request(prompt, messages, m))) is not None
                                    for m in self.modes[self._mode_index:]):
                    cached += 1
                    continue
                prompt_chars += sum(len(m["content"]) for m in messages)
                completion += min(out_tokens, self.max_tokens)
        prompt_tokens = prompt_chars // 4
        uncached = requests - cached
        return Estimate(requests, cached, prompt_tokens, completion, uncached * self.max_tokens,
                        self._cost(prompt_tokens, completion), self._cost(prompt_tokens, uncached * self.max_tokens))

    def stop(self) -> None:
        """Ask a running :meth:`judge` to stop: calls in flight finish, no new call is sent."""
        self.stats.stopped = self.stats.stopped or "interrupted"
        self._stop.set()

    def judge(self, records, *, progress: Callable[[int, int, JudgeStats], None] | None = None) -> JudgedRecords:
        """Fill the judgement columns of ``records``.

        Parameters
        ----------
        records : evalsuite.Records
            With ``question``, ``answer``, ``contexts`` and ``reference`` as available; each
            judgement is made where its fields are present (else left null).
        progress : callable, optional
            ``progress(records_done, records_total, stats)`` after each record.

        Returns
        -------
        JudgedRecords
            The records with the judgement columns, ``answer_claims`` and ``reference_claims``
            (the extracted claims) and ``judge_provenance``; a record whose run was stopped
            (budget, Ctrl-C: KeyboardInterrupt is caught, calls in flight finish) keeps its old
            columns, and a rerun resumes it from the cache.

        Raises
        ------
        EvalSuiteError
            The endpoint refused the key or does not know the model (the run stops).
        """
        rows = _rows(records)
        self.cache.preload()  # a rerun replays from memory
        results: list = [None] * len(rows)
        done = 0
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.concurrency)
        failure = None
        try:
            futures = {pool.submit(self._judge_row, row): i for i, row in enumerate(rows)}
            try:
                for future in concurrent.futures.as_completed(futures):
                    results[futures[future]] = future.result()
                    done += 1
                    if progress is not None:
                        progress(done, len(rows), self.stats)
            except KeyboardInterrupt:
                self.stop()
                for future in futures:
                    future.cancel()
                for future, i in futures.items():
                    if not future.cancelled():
                        results[i] = future.result()
            except EvalSuiteError as exc:
                self._stop.set()
                failure = exc
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if failure is not None:
            raise failure
        return self._write(records, results)

    def _judge_row(self, row: dict):
        if self._stop.is_set():
            return None
        out, provs = self.judge_one(row)
        stopped = any(p.status in ("missing: budget", "missing: interrupted") for p in provs)
        return None if stopped else (out, provs)

    def _write(self, records, results) -> JudgedRecords:
        from ..records.schema import ARROW_TYPES as _ARROW_TYPES, FIELDS

        names = [*self._output_columns()]
        old = {name: (records.table.column(name).to_pylist() if name in records.table.column_names else [None] * len(records))
               for name in names}
        columns = {name: [old[name][i] if r is None else r[0].get(name, old[name][i]) for i, r in enumerate(results)]
                   for name in names}
        types = {name: (_ARROW_TYPES[FIELDS[name]] if name in FIELDS else pa.list_(pa.string())) for name in names}
        provenance = [[] if r is None else r[1] for r in results]
        judged = write_columns(records, columns, provenance, types)
        return JudgedRecords(judged, self.stats, sum(r is not None for r in results))

    def _output_columns(self):
        wanted = set(self.judgements)
        if wanted & {"answer_claims_supported", "answer_claims_in_reference"}:
            yield "answer_claims"
        if wanted & {"reference_claims_supported", "reference_claims_in_answer"}:
            yield "reference_claims"
        yield from (c for c in LLM_COLUMNS if c in wanted)


def _rows(records) -> list[dict]:
    """question, answer, reference, contexts of every record (None where absent)."""
    table = records.table
    n = table.num_rows
    cols = {name: (table.column(name).to_pylist() if name in table.column_names else [None] * n)
            for name in ("question", "answer", "reference", "contexts")}
    return [{name: cols[name][i] for name in cols} for i in range(n)]
