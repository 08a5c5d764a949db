"""What an LLM judge run will take, before it starts: requests, how many are cached, tokens, cost.

Requests are planned from the texts as the run will make them, and counted once per distinct
request: the run sends one call for identical requests (the same chunk judged for the same
question under six systems, say), so the estimate does too. Claims are not known before the run:
a verdict request is planned per text and premise, with its expected output from the text's
length; claim extraction and per-chunk requests are fully known, so whether they are cached is
known as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._cache import request_hash
from .prompts import PROMPTS

__all__ = ["Estimate", "estimate"]


@dataclass
class Estimate:
    """What a run is expected to cost, shown before it starts.

    Attributes
    ----------
    requests : int
        Distinct judge requests needed (claims are not known yet: one verdict request per text
        and premise); identical requests are counted once, as the run sends them once.
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
    repeated : int
        Requests the records ask for more than once, answered by one call (not in ``requests``).
    """

    requests: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    completion_tokens_max: int
    cost: float
    cost_max: float
    repeated: int = 0

    def __str__(self) -> str:
        repeated = f", {self.repeated} repeats answered once" if self.repeated else ""
        return (f"{self.requests} judge requests ({self.cached} already cached{repeated}), about "
                f"{self.prompt_tokens:,} input and {self.completion_tokens:,} output tokens (at most "
                f"{self.completion_tokens_max:,}); cost about {self.cost:.4f} (at most {self.cost_max:.4f})")


def _planned(judge, row: dict):
    """(prompt, fields, expected output tokens, fully known) of every request a record needs."""
    question, answer, reference, contexts = (row.get("question") or "", row.get("answer"), row.get("reference"),
                                             row.get("contexts"))
    wanted = set(judge.judgements)
    # The answer's claims and the reference's claims are planned alike: extract them, then check
    # them against the contexts and against the other text.
    for text, other, side, other_side in ((answer, reference, "answer", "reference"),
                                          (reference, answer, "reference", "answer")):
        supported, in_other = f"{side}_claims_supported", f"{side}_claims_in_{other_side}"
        if not (text and text.strip() and wanted & {supported, in_other}):
            continue
        yield PROMPTS[f"{side}_claims"], {"question": question, "text": text}, len(text) // 4 + 16, True
        if supported in wanted and contexts:
            yield PROMPTS[supported], {"premise": "\n\n".join(contexts), "claims": text}, len(text) // 40 * 3 + 12, False
        if in_other in wanted and other and other.strip():
            yield PROMPTS[in_other], {"premise": other, "claims": text}, len(text) // 40 * 3 + 12, False
    for column, needs in (("context_useful", reference), ("context_relevant", row.get("question"))):
        if column in wanted and contexts and needs and needs.strip():
            for chunk in contexts:
                yield PROMPTS[column], {"question": question, "reference": reference or "", "chunk": chunk}, 8, True


def estimate(judge, rows) -> Estimate:
    """The :class:`Estimate` of ``judge`` (an :class:`~evalsuite.judges.LLMJudge`) for ``rows``
    (question, answer, reference, contexts of each record)."""
    requests = cached = prompt_chars = completion = repeated = 0
    seen: set = set()
    modes = judge.modes[judge._mode_index:]
    for row in rows:
        for prompt, fields, out_tokens, known in _planned(judge, row):
            messages = prompt.messages(**fields)
            key = request_hash(judge._request(prompt, messages, modes[0])) if modes else prompt.name
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
            requests += 1
            if known and any(judge.cache.get(request_hash(judge._request(prompt, messages, m))) is not None
                             for m in modes):
                cached += 1
                continue
            prompt_chars += sum(len(m["content"]) for m in messages)
            completion += min(out_tokens, judge.max_tokens)
    prompt_tokens = prompt_chars // 4
    uncached = requests - cached
    return Estimate(requests, cached, prompt_tokens, completion, uncached * judge.max_tokens,
                    judge._cost(prompt_tokens, completion), judge._cost(prompt_tokens, uncached * judge.max_tokens),
                    repeated)
