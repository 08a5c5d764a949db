"""EvalSuite's own judge prompts, one per judgement, with their output schemas and versions.

Each prompt is a system text, a user template and a JSON schema of the reply. Its version is
the first 12 hex digits of the SHA-256 of those three together: any edit changes the version
recorded with every verdict (and the request hash, so the cache never answers an edited prompt
with an old verdict).

Claims are extracted first (from the answer and from the reference); verdicts are then asked
for all claims of a text at once against one premise (the retrieved contexts, the reference or
the answer), and for each retrieved chunk alone (useful for the reference, relevant to the
question). Verdicts are ``yes`` or ``no``; anything else is a malformed reply.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

__all__ = ["Prompt", "PROMPTS", "RAGAS_PROMPTS", "prompt_version"]

_CLAIMS_SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
    "additionalProperties": False,
}
_VERDICTS_SCHEMA = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {"type": "string", "enum": ["yes", "no"]}}},
    "required": ["verdicts"],
    "additionalProperties": False,
}
_VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["verdict"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Prompt:
    """One judgement's prompt.

    Attributes
    ----------
    name : str
        The judgement (also the schema name sent with ``json_schema`` output).
    system : str
        The system message.
    user : str
        The user message, a ``str.format`` template over the record's texts.
    schema : dict
        JSON schema of the reply.
    kind : str
        ``claims`` (a list of statements), ``verdicts`` (one yes/no per claim) or ``verdict``.
    """

    name: str
    system: str
    user: str
    schema: dict
    kind: str

    @property
    def version(self) -> str:
        """First 12 hex digits of the SHA-256 of system, user template and schema."""
        return prompt_version(self)

    def messages(self, **fields) -> list[dict]:
        """The chat messages for one request."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user.format(**fields)}]


_VERSIONS: dict = {}


def prompt_version(prompt: Prompt) -> str:
    """The version of a prompt: a hash of its text and schema.

    Examples
    --------
    >>> v = prompt_version(PROMPTS["answer_claims"])
    >>> len(v), v == PROMPTS["answer_claims"].version
    (12, True)
    """
    text = json.dumps([prompt.system, prompt.user, prompt.schema], sort_keys=True, ensure_ascii=False)
    version = _VERSIONS.get(text)
    if version is None:
        version = _VERSIONS[text] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return version


_JSON_REPLY = "Reply with one JSON object and nothing else."
_CLAIM_RULES = (
    "Break the text into atomic claims: short, self-contained statements of fact, each "
    "understandable without the others (replace pronouns by what they refer to). Keep only what "
    "the text asserts; add nothing. A text that asserts nothing (a refusal, a question, "
    "'I don't know') has no claims.")
_SUPPORT_RULES = (
    "For each numbered claim, in order, answer \"yes\" if the premise states it or it follows "
    "directly from the premise, and \"no\" otherwise (contradicted, or not stated). Judge only "
    "from the premise, not from your own knowledge. Give exactly one verdict per claim.")

PROMPTS: dict[str, Prompt] = {
    "answer_claims": Prompt(
        "answer_claims",
        f"You extract the claims an answer makes. {_CLAIM_RULES} {_JSON_REPLY}",
        "Question:\n{question}\n\nAnswer:\n{text}\n\n"
        'List the claims of the answer as {{"claims": ["...", "..."]}}.',
        _CLAIMS_SCHEMA, "claims"),
    "reference_claims": Prompt(
        "reference_claims",
        f"You extract the claims a reference answer makes. {_CLAIM_RULES} {_JSON_REPLY}",
        "Question:\n{question}\n\nReference answer:\n{text}\n\n"
        'List the claims of the reference answer as {{"claims": ["...", "..."]}}.',
        _CLAIMS_SCHEMA, "claims"),
    "answer_claims_supported": Prompt(
        "answer_claims_supported",
        f"You check whether claims of an answer are supported by retrieved passages. {_SUPPORT_RULES} {_JSON_REPLY}",
        "Premise (retrieved passages):\n{premise}\n\nClaims of the answer:\n{claims}\n\n"
        'Reply as {{"verdicts": ["yes" or "no", one per claim]}}.',
        _VERDICTS_SCHEMA, "verdicts"),
    "reference_claims_supported": Prompt(
        "reference_claims_supported",
        "You check whether each claim of a reference answer can be attributed to retrieved passages. "
        f"{_SUPPORT_RULES} {_JSON_REPLY}",
        "Premise (retrieved passages):\n{premise}\n\nClaims of the reference answer:\n{claims}\n\n"
        'Reply as {{"verdicts": ["yes" or "no", one per claim]}}.',
        _VERDICTS_SCHEMA, "verdicts"),
    "answer_claims_in_reference": Prompt(
        "answer_claims_in_reference",
        f"You check whether claims of an answer are supported by a reference answer. {_SUPPORT_RULES} {_JSON_REPLY}",
        "Premise (reference answer):\n{premise}\n\nClaims of the answer:\n{claims}\n\n"
        'Reply as {{"verdicts": ["yes" or "no", one per claim]}}.',
        _VERDICTS_SCHEMA, "verdicts"),
    "reference_claims_in_answer": Prompt(
        "reference_claims_in_answer",
        f"You check whether claims of a reference answer are covered by an answer. {_SUPPORT_RULES} {_JSON_REPLY}",
        "Premise (answer):\n{premise}\n\nClaims of the reference answer:\n{claims}\n\n"
        'Reply as {{"verdicts": ["yes" or "no", one per claim]}}.',
        _VERDICTS_SCHEMA, "verdicts"),
    "context_useful": Prompt(
        "context_useful",
        "You decide whether a retrieved passage was useful for arriving at the reference answer to a "
        "question: \"yes\" if it states something the reference answer relies on, \"no\" otherwise. "
        f"{_JSON_REPLY}",
        "Question:\n{question}\n\nReference answer:\n{reference}\n\nPassage:\n{chunk}\n\n"
        'Reply as {{"verdict": "yes" or "no"}}.',
        _VERDICT_SCHEMA, "verdict"),
    "context_relevant": Prompt(
        "context_relevant",
        "You decide whether a retrieved passage is relevant to a question: \"yes\" if it holds "
        "information that helps answer the question, \"no\" otherwise. " + _JSON_REPLY,
        "Question:\n{question}\n\nPassage:\n{chunk}\n\n"
        'Reply as {{"verdict": "yes" or "no"}}.',
        _VERDICT_SCHEMA, "verdict"),
}


# ----------------------------------------------------------------------------------------------
# The rest of the RAGAS family (evalsuite.judges.ragas): questions, entities, statements, verdicts.

_JSON = "Reply with one JSON object and nothing else."


_LIST = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
         "required": ["claims"], "additionalProperties": False}


_ONE = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
        "required": ["verdict"], "additionalProperties": False}


_MANY = {"type": "object", "properties": {"verdicts": {"type": "array", "items": {"type": "string", "enum": ["yes", "no"]}}},
         "required": ["verdicts"], "additionalProperties": False}


#: The prompts of the rest of the RAGAS family (:class:`evalsuite.judges.ragas.RagasJudge`). The judge parses lists under the key "claims" (its list kind), so the
#: questions and entities are asked for under that key too.
RAGAS_PROMPTS: dict[str, Prompt] = {
    "generated_questions": Prompt(
        "generated_questions",
        "You write the questions an answer responds to: as many different questions as asked for, each one "
        "a question the given answer would be a direct answer to. " + _JSON,
        "Answer:\n{answer}\n\nWrite {n} questions as {{\"claims\": [\"...\", \"...\"]}}.",
        _LIST, "claims"),
    "answer_noncommittal": Prompt(
        "answer_noncommittal",
        "You decide whether an answer is noncommittal: evasive, vague or ambiguous, such as \"I don't know\" or "
        "\"I'm not sure\". Answer \"yes\" if it is noncommittal, \"no\" if it commits to an answer. " + _JSON,
        "Question:\n{question}\n\nAnswer:\n{answer}\n\nReply as {{\"verdict\": \"yes\" or \"no\"}}.",
        _ONE, "verdict"),
    "entities": Prompt(
        "entities",
        "You extract the named entities of a text: people, places, organisations, dates, numbers with units, "
        "works and events, each as written in the text, without duplicates. " + _JSON,
        "Text:\n{text}\n\nList the entities as {{\"claims\": [\"...\", \"...\"]}}.",
        _LIST, "claims"),
    "context_useful_for_answer": Prompt(
        "context_useful_for_answer",
        "You decide whether a retrieved passage was useful for arriving at the given answer to a question: "
        "\"yes\" if the answer uses something the passage states, \"no\" otherwise. " + _JSON,
        "Question:\n{question}\n\nAnswer:\n{answer}\n\nPassage:\n{chunk}\n\nReply as {{\"verdict\": \"yes\" or \"no\"}}.",
        _ONE, "verdict"),
    "context_sentences_relevant": Prompt(
        "context_sentences_relevant",
        "You decide for each numbered sentence of retrieved passages whether it helps answer the question: "
        "\"yes\" if it holds information needed to answer it, \"no\" otherwise. Give exactly one verdict per "
        "sentence, in order. " + _JSON,
        "Question:\n{premise}\n\nSentences:\n{claims}\n\nReply as {{\"verdicts\": [\"yes\" or \"no\", one per sentence]}}.",
        _MANY, "verdicts"),
}


def _critique_prompt(name: str, definition: str) -> Prompt:
    return Prompt(
        f"critique_{name}",
        "You judge a response against one criterion and answer \"yes\" if the response meets it, \"no\" "
        f"otherwise. Criterion {name!r}: {definition} " + _JSON,
        "Question:\n{question}\n\nResponse:\n{answer}\n\nVote {vote} of {votes}. Reply as {{\"verdict\": \"yes\" or \"no\"}}.",
        _ONE, "verdict")
