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
judgement (None), counted by cause, never a verdict (:mod:`evalsuite.judges.replies`).
Degenerate input is decided by a rule, without a call, and the provenance says so.

A record's plan is a *flow* (:meth:`LLMJudge._flow`): the requests it can make at once are
yielded together and sent concurrently by the request loop (:mod:`evalsuite.judges.scheduler`:
cache first, one call per distinct request, bounded concurrency, stop and deadline), through the
endpoint of :mod:`evalsuite.judges.transport` (timeouts, causes of failure) under the run's
:class:`~evalsuite.judges.run_control.RunControl` (circuit breaker). ``openai`` is imported when
the first request is sent.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from typing import Any, Callable

import pyarrow as pa

from ..errors import EvalSuiteError
from ..metrics.registry import judge_columns
from ._base import JudgedRecords, JudgeStats, Provenance, endpoint_host, row_outcome, write_columns
from ._cache import _ENCODE, JudgeCache, ScopedCache, canonical_json
from .estimate import Estimate, estimate
from .prompts import PROMPTS, Prompt
from .replies import extract_json
from .run_control import DEFAULT_BREAKER, RunControl, default_silence, deferred_interrupt, silent_endpoint_bound
from .scheduler import GRACE_SECONDS, Ask, RequestLoop
from .transport import CONNECT_TIMEOUT, ChatEndpoint, api_key_from_environment

__all__ = ["LLMJudge", "Estimate", "LLM_COLUMNS", "MODES", "extract_json", "api_key_from_environment", "Ask"]

#: Judgement columns the LLM judge fills: the metrics' inputs it can judge (the registry's, in its order).
LLM_COLUMNS = judge_columns("llm")
#: Output modes, tried in this order.
MODES = ("json_schema", "json_object", "text")

_PLACEHOLDER = "\u0000user\u0000"  # stands for the user message in a request template


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
        Requests in flight at most (default 8); a record's requests go out together within it.
    timeout : float
        Seconds per request: at most this long waiting for the reply (default 30).
    connect_timeout : float
        Seconds to open a connection (default 5).
    max_retries : int
        Retries after 429, 5xx, a timeout or a connection error (default 4), with exponential
        backoff (``backoff`` x 2^attempt seconds, capped at ``max_backoff``, full jitter); a
        ``Retry-After`` header is honoured (waited for at least, plus up to 10% jitter, at most
        ``max_backoff``).
    deadline : float or None
        Seconds the run may take (None: no limit); then it stops as on Ctrl-C, reason ``deadline``.
    breaker : int or None
        Failed attempts in a row (no reply, 408/429/5xx, a rejected request) that stop the run,
        naming the endpoint and the causes (default 10; None: never).
    silence : float or None
        Seconds without any reply while requests wait that stop the run the same way (default
        1.5 x ``timeout``: an endpoint that accepts connections and never answers).
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
    sleep : callable or None
        Called with the seconds to wait before a retry instead of waiting (tests pass a recorder);
        None waits, and stops waiting when the run stops.
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
                 timeout: float = 30.0, connect_timeout: float = CONNECT_TIMEOUT, max_retries: int = 4,
                 backoff: float = 0.5, max_backoff: float = 30.0, max_tokens: int = 1024, price_input: float = 0.0,
                 price_output: float = 0.0, budget: float | None = None, modes=MODES, seed: int | None = None,
                 deadline: float | None = None, breaker: int | None = DEFAULT_BREAKER, silence: float | None = None,
                 sleep: Callable[[float], None] | None = None, http_client=None) -> None:
        if not isinstance(model, str) or not model:
            raise EvalSuiteError("a model id is needed", field="model", value=model)
        unknown = [j for j in judgements if j not in LLM_COLUMNS]
        if unknown:
            raise EvalSuiteError(f"unknown judgement; use {', '.join(LLM_COLUMNS)}", field="judgements", value=unknown[0])
        bad_modes = [m for m in modes if m not in MODES] or ([] if modes else ["(none)"])
        if bad_modes:
            raise EvalSuiteError(f"unknown output mode; use {', '.join(MODES)}", field="modes", value=bad_modes[0])
        for name, value, low in (("concurrency", concurrency, 1), ("max_tokens", max_tokens, 1),
                                 ("max_retries", max_retries, 0), ("breaker", 1 if breaker is None else breaker, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise EvalSuiteError(f"must be a whole number >= {low}", field=name, value=value)
        for name, value in (("price_input", price_input), ("price_output", price_output),
                            ("budget", 0.0 if budget is None else budget), ("backoff", backoff)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise EvalSuiteError("must be a finite number >= 0", field=name, value=value)
        for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout),
                            ("deadline", 1.0 if deadline is None else deadline),
                            ("silence", 1.0 if silence is None else silence)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise EvalSuiteError("must be a finite number of seconds > 0", field=name, value=value)
        self.model = model
        self.base_url = base_url
        self.endpoint_host = endpoint_host(base_url) or "api.openai.com"
        key = api_key if api_key is not None else api_key_from_environment()
        from .endpoints import endpoint_identity

        self.cache = (cache if isinstance(cache, (JudgeCache, ScopedCache)) else JudgeCache(cache)).scoped(
            "endpoint", endpoint_identity(base_url))
        self.timeout = float(timeout)
        self.endpoint = ChatEndpoint(model, base_url, key, timeout=self.timeout, connect_timeout=connect_timeout,
                                     http_client=http_client)
        self.judgements = tuple(judgements)
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.max_tokens = max_tokens
        self.price_input, self.price_output = float(price_input), float(price_output)
        self.budget = budget
        self.modes = tuple(modes)
        self.seed = seed
        self._sleep = None if sleep is time.sleep else sleep
        self._mode_index = 0
        self._versions: dict[str, str] = {}
        self._templates: dict = {}
        self.control = RunControl(self.endpoint_host, deadline=deadline, breaker=breaker,
                                  silence=default_silence(self.timeout) if silence is None else float(silence))
        self.grace = GRACE_SECONDS
        self.stats = JudgeStats()

    def silent_endpoint_bound(self) -> float | None:
        """The most seconds a run of this judge waits on an endpoint that never answers before it
        stops (:func:`~evalsuite.judges.run_control.silent_endpoint_bound`: its no-reply window,
        one check and the grace), e.g. 46.7 with the defaults; None when the window is off."""
        return silent_endpoint_bound(self.control.silence, self.grace)

    def __repr__(self) -> str:  # never shows the key
        return f"LLMJudge(model={self.model!r}, endpoint={self.endpoint_host!r}, concurrency={self.concurrency})"

    # -- requests -------------------------------------------------------------------------------

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

    def _key(self, prompt: Prompt, user: str, mode: str) -> str:
        """``request_hash(self._request(prompt, prompt.messages(...), mode))`` from the user message
        alone (``user``, the prompt's template filled in): the rest of the request's canonical
        JSON is a template made once per prompt and mode, so a cache hit builds no request."""
        template = self._templates.get((prompt.name, mode, prompt.system))
        if template is None:
            messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": _PLACEHOLDER}]
            text = canonical_json(self._request(prompt, messages, mode))
            template = self._templates[(prompt.name, mode, prompt.system)] = text.split(canonical_json(_PLACEHOLDER), 1)
        return hashlib.sha256((template[0] + _ENCODE(user) + template[1]).encode("utf-8")).hexdigest()

    def _version(self, prompt: Prompt) -> str:
        return self._versions.get(prompt.system + prompt.user) or self._versions.setdefault(
            prompt.system + prompt.user, prompt.version)

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_input + completion_tokens * self.price_output) / 1e6

    def _bound(self, request: dict) -> float:
        """The most a request can cost: its UTF-8 bytes as input tokens, ``max_tokens`` output."""
        return self._cost(len(json.dumps(request, ensure_ascii=False).encode("utf-8")), self.max_tokens)

    def run_flows(self, rows: list, flow: Callable, *, progress=None, total: int | None = None,
                  offset: int = 0) -> list:
        """Drive ``flow(row)`` (a generator of :class:`~evalsuite.judges.scheduler.Ask` lists) for
        every row through the request loop; ``[(columns, provenance) or None per row]`` (None:
        the run stopped before the record was finished). Other judges (the RAGAS judge) plan
        their own prompts with it and share this judge's cache, endpoint, budget and stop."""
        if self.control.started is None:
            self.control.start()
        loop = RequestLoop(self, progress, total, offset, grace=self.grace)
        return loop.run(rows, flow)

    def ask(self, prompt: Prompt, column: str, n_claims: int | None = None, index: int | None = None, **fields):
        """One judgement: its value (None when missing) and its :class:`Provenance`."""
        def flow(_):
            (answer,) = yield [Ask(prompt, column, fields, n_claims, index)]
            return answer, []

        result = self.run_flows([None], flow)[0]
        if result is None:  # stopped before it was asked
            return None, Provenance(column=column, judge="llm", model=self.model, endpoint_host=self.endpoint_host,
                                    status=f"missing: {self.stats.stopped or 'interrupted'}", index=index)
        return result[0]

    # -- one record -----------------------------------------------------------------------------

    def _rule(self, column: str, why: str) -> Provenance:
        self.stats.add(rule_decided=1)
        return Provenance(column=column, judge="rule", status=f"rule: {why}")

    def _flow(self, row: dict):
        """The requests of one record, as a flow (see :mod:`evalsuite.judges.scheduler`): the
        claims of answer and reference together, then every verdict and chunk request at once."""
        question, answer, reference, contexts = (row.get("question"), row.get("answer"), row.get("reference"),
                                                 row.get("contexts"))
        provs: list[Provenance] = []
        out: dict[str, Any] = {}
        wanted = set(self.judgements)
        premise = None if contexts is None else "\n\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
        # Claims of the answer and of the reference.
        claims: dict[str, list | None] = {}
        asks = []
        for side, text, needed in (("answer", answer, {"answer_claims_supported", "answer_claims_in_reference"}),
                                   ("reference", reference, {"reference_claims_supported", "reference_claims_in_answer"})):
            if not wanted & needed:
                continue
            which = f"{side}_claims"
            if text is None:
                claims[side] = None
            elif not text.strip():
                provs.append(self._rule(which, f"empty {side}: no claims"))
                claims[side] = []
            else:
                asks.append((side, Ask(PROMPTS[which], which, {"question": question or "", "text": text})))
        if asks:
            answers = yield [a for _, a in asks]
            for (side, _), (value, prov) in zip(asks, answers):
                provs.append(prov)
                claims[side] = value
        for side in claims:
            out[f"{side}_claims"] = claims[side]
        # Verdicts of the claims, and each chunk, all at once.
        later: list[tuple[str, Any, Ask | None]] = []
        for column, side, against, empty in (
                ("answer_claims_supported", "answer", premise, "no contexts"),
                ("reference_claims_supported", "reference", premise, "no contexts"),
                ("answer_claims_in_reference", "answer", reference, "empty reference"),
                ("reference_claims_in_answer", "reference", answer, "empty answer")):
            if column not in wanted:
                continue
            found = claims.get(side)
            if found is None or against is None:
                out[column] = None  # not judgeable: no claims extracted or nothing to check against
            elif not found:
                out[column] = []
            elif not against.strip():
                provs.append(self._rule(column, f"{empty}: no claim can be supported"))
                out[column] = [False] * len(found)
            else:
                numbered = "\n".join(f"{i + 1}. {claim}" for i, claim in enumerate(found))
                later.append((column, len(found), Ask(PROMPTS[column], column, {"premise": against, "claims": numbered},
                                                      n_claims=len(found))))
        for column, needs in (("context_useful", reference), ("context_relevant", question)):
            if column not in wanted:
                continue
            if contexts is None or needs is None or not needs.strip():
                out[column] = None  # nothing to judge the chunks against: not judged
            elif not contexts:
                provs.append(self._rule(column, "no contexts"))
                out[column] = []
            else:
                out[column] = [None] * len(contexts)
                for i, chunk in enumerate(contexts):
                    fields = {"question": question or "", "chunk": chunk}
                    if column == "context_useful":
                        fields["reference"] = reference
                    later.append((column, i, Ask(PROMPTS[column], column, fields, index=i)))
        if later:
            answers = yield [a for _, _, a in later]
            for (column, where, ask), (value, prov) in zip(later, answers):
                provs.append(prov)
                if ask.index is None:
                    out[column] = [None] * where if value is None else value
                else:
                    out[column][where] = value
        return out, provs

    def judge_one(self, row: dict) -> tuple[dict, list[Provenance]]:
        """The judgement columns of one record (a dict with question, answer, contexts, reference)."""
        result = self.run_flows([row], self._flow)[0]
        return result if result is not None else ({}, [])

    # -- the run --------------------------------------------------------------------------------

    def estimate(self, records) -> Estimate:
        """What judging ``records`` will take: distinct requests, cached ones, tokens and cost
        (:func:`evalsuite.judges.estimate.estimate`).

        Parameters
        ----------
        records : evalsuite.Records

        Returns
        -------
        Estimate
        """
        return estimate(self, _rows(records))

    def stop(self, reason: str = "interrupted") -> None:
        """Ask a running :meth:`judge` to stop: no new call is sent; calls in flight get a
        moment to finish (:data:`~evalsuite.judges.scheduler.GRACE_SECONDS`)."""
        self.control.stop(reason)
        self.stats.stopped = self.stats.stopped or reason

    def judge(self, records, *, progress: Callable[[int, int, JudgeStats], None] | None = None) -> JudgedRecords:
        """Fill the judgement columns of ``records``.

        Parameters
        ----------
        records : evalsuite.Records
            With ``question``, ``answer``, ``contexts`` and ``reference`` as available; each
            judgement is made where its fields are present (else left null).
        progress : callable, optional
            ``progress(records_done, records_total, stats)`` after each record, and every half
            second while requests wait (``stats.in_flight``, ``stats.waiting_s``).

        Returns
        -------
        JudgedRecords
            The records with the judgement columns, ``answer_claims`` and ``reference_claims``
            (the extracted claims) and ``judge_provenance``; a record whose run was stopped
            (budget, deadline, circuit breaker, Ctrl-C: KeyboardInterrupt is caught) keeps its old
            columns, and a rerun resumes it from the cache. ``stats.stopped`` says why.

        Raises
        ------
        EvalSuiteError
            The endpoint refused the key or does not know the model (the run stops).
        """
        rows = _rows(records)
        self.cache.preload()  # a rerun replays from memory
        results = self.run_flows(rows, self._flow, progress=progress)
        with deferred_interrupt() as caught:  # Ctrl-C now: the judged records are still assembled
            judged = self._write(records, results)
        if caught:
            self.stop()
        return judged

    def _write(self, records, results) -> JudgedRecords:
        from ..records.schema import ARROW_TYPES as _ARROW_TYPES, FIELDS

        names = [*self._output_columns()]
        old = {name: (records.table.column(name).to_pylist() if name in records.table.column_names else [None] * len(records))
               for name in names}
        types = {name: (_ARROW_TYPES[FIELDS[name]] if name in FIELDS else pa.list_(pa.string())) for name in names}
        for name in names:
            if name not in FIELDS and name in records.table.column_names:
                # A claims column the file gave in another form (RAGChecker's subject-relation-object
                # triples) is kept, as text, for the records this run did not judge: one column, one type.
                old[name] = [_claims_as_text(value) for value in old[name]]
        columns = {name: [old[name][i] if r is None else r[0].get(name, old[name][i]) for i, r in enumerate(results)]
                   for name in names}
        provenance = [[] if r is None else r[1] for r in results]
        judged = write_columns(records, columns, provenance, types)
        return JudgedRecords(judged, self.stats, sum(r is not None for r in results), _outcomes(results))

    def _output_columns(self):
        wanted = set(self.judgements)
        if wanted & {"answer_claims_supported", "answer_claims_in_reference"}:
            yield "answer_claims"
        if wanted & {"reference_claims_supported", "reference_claims_in_answer"}:
            yield "reference_claims"
        yield from (c for c in LLM_COLUMNS if c in wanted)


def _claims_as_text(value):
    """A claims list as a list of strings: a claim given as a list (RAGChecker's triple
    ``[subject, relation, object]``) joined with spaces, any other non-string as ``str``.

    >>> _claims_as_text([["Nile", "is", "longest river"], "Amazon is long"])
    ['Nile is longest river', 'Amazon is long']
    """
    if value is None:
        return None
    return [c if isinstance(c, str) or c is None
            else " ".join(str(part) for part in c) if isinstance(c, (list, tuple)) else str(c) for c in value]


def _outcomes(results: list) -> list:
    """:func:`~evalsuite.judges._base.row_outcome` per record of a run's results (None: not finished)."""
    return [None if r is None else row_outcome(r[1]) for r in results]


def _rows(records) -> list[dict]:
    """question, answer, reference, contexts of every record (None where absent)."""
    table = records.table
    n = table.num_rows
    cols = {name: (table.column(name).to_pylist() if name in table.column_names else [None] * n)
            for name in ("question", "answer", "reference", "contexts")}
    return [{name: cols[name][i] for name in cols} for i in range(n)]
