"""Reading a chat model's reply: the response as the judge cache keeps it, and the verdict(s) in it.

A reply is turned into a judgement or into a *missing* judgement with its reason, never into a
guess: no choices, a reply cut by the token cap (``finish_reason="length"``), a refusal, or
content that is not the JSON the prompt asked for (wrong shape, a verdict other than yes/no, a
number of verdicts different from the number of claims) is missing.
"""

from __future__ import annotations

import json
from typing import Any

from .prompts import Prompt

__all__ = ["extract_json", "parse_reply", "reply_value", "response_record"]


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


def parse_reply(prompt: Prompt, content: str, mode: str, n_claims: int | None = None):
    """The verdict(s) of a reply's content, by the prompt's kind.

    Parameters
    ----------
    prompt : Prompt
        Its ``kind`` says what to read: ``claims`` (a list of strings under ``claims``),
        ``verdicts`` (``n_claims`` yes/no under ``verdicts``) or ``verdict`` (one yes/no).
    content : str
        The message content.
    mode : str
        The output mode that answered: ``json_schema`` and ``json_object`` replies must be JSON
        as a whole; a ``text`` reply may hold the object among prose.
    n_claims : int or None
        Verdicts expected (``verdicts`` prompts).

    Returns
    -------
    list of str, list of bool or bool

    Raises
    ------
    ValueError
        A malformed reply.

    Examples
    --------
    >>> from evalsuite.judges.prompts import PROMPTS
    >>> parse_reply(PROMPTS["answer_claims_supported"], '{"verdicts": ["yes", "No "]}', "json_schema", 2)
    [True, False]
    >>> parse_reply(PROMPTS["context_relevant"], '{"verdict": "maybe"}', "json_schema")
    Traceback (most recent call last):
    ...
    ValueError: a verdict must be yes or no, got 'maybe'
    """
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


def reply_value(prompt: Prompt, response: dict, mode: str, n_claims: int | None = None) -> tuple[Any, str | None]:
    """``(value, None)`` for a usable reply, ``(None, reason)`` for a missing judgement.

    Parameters
    ----------
    prompt : Prompt
    response : dict
        As :func:`response_record` made it (and the cache keeps it).
    mode : str
    n_claims : int or None

    Returns
    -------
    (object, None) or (None, str)
        The reason is ``no choices``, ``truncated``, ``refusal`` or ``malformed``.

    Examples
    --------
    >>> from evalsuite.judges.prompts import PROMPTS
    >>> reply_value(PROMPTS["context_relevant"], {"choices": 1, "content": '{"verdict": "yes"}'}, "json_schema")
    (True, None)
    >>> reply_value(PROMPTS["context_relevant"], {"choices": 1, "content": "{", "finish_reason": "length"}, "text")
    (None, 'truncated')
    """
    if not response.get("choices"):
        return None, "no choices"
    if response.get("finish_reason") == "length":
        return None, "truncated"
    if response.get("refusal") or response.get("content") is None:
        return None, "refusal"
    content = response["content"]
    if len(content) > _SHORT:
        return _parse(prompt, content, mode, n_claims)
    # Short replies (a verdict, a few verdicts) repeat across a run: each is read once. The
    # reading depends only on the prompt's kind, the mode, the claims expected and the text.
    memo = (prompt.kind, mode, n_claims, content)
    found = _READ.get(memo)
    if found is None:
        found = _parse(prompt, content, mode, n_claims)
        if len(_READ) < _READ_MAX:
            _READ[memo] = found
    value, reason = found
    return (list(value) if isinstance(value, list) else value), reason  # a list is the caller's own


_SHORT = 64
_READ_MAX = 4096
_READ: dict = {}


def _parse(prompt: Prompt, content: str, mode: str, n_claims: int | None) -> tuple[Any, str | None]:
    try:
        return parse_reply(prompt, content, mode, n_claims), None
    except ValueError:
        return None, "malformed"


def response_record(completion, latency_ms: float) -> dict:
    """An ``openai`` chat completion as the judge cache keeps it: content, refusal, finish
    reason, number of choices, token counts, model and latency (nothing of the request or key)."""
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
            "model": completion.model, "latency_ms": round(latency_ms, 3)}
