"""Judges: fill the judgement columns of per-request records from question, answer, contexts
and reference (``docs/judges.md``).

- :class:`LLMJudge` (:mod:`evalsuite.judges.llm`): claims and verdicts from a chat model behind
  any OpenAI-compatible endpoint, cached, with cost, budget and provenance;
- :class:`EmbeddingJudge` (:mod:`evalsuite.judges.embedding`): ``answer_similarity`` from
  all-MiniLM-L6-v2 (int8 ONNX, no torch) or an OpenAI-compatible ``/v1/embeddings`` endpoint;
- :class:`LexicalJudge` and the functions of :mod:`evalsuite.judges.lexical`: BLEU, chrF,
  ROUGE-L, SQuAD token F1 / exact match and rapidfuzz similarity, always available;
- :class:`~evalsuite.judges.ragas.RagasJudge` (:mod:`evalsuite.judges.ragas`): every metric of the
  RAGAS family from raw records, with the LLM judge and an embedder; what each metric needs is in
  :mod:`evalsuite.judges.ragas_needs`, every prompt in :mod:`evalsuite.judges.prompts`.

A run is bounded (:mod:`evalsuite.judges.run_control`: deadline, circuit breaker, stop) and
says how it ended (:func:`~evalsuite.judges.outcome.run_outcome`: done, too many judgements
missing, budget, endpoint failing, deadline, interrupted, each with its exit code).

Every judge writes columns of the records schema (so every metric and page works on judged
records unchanged) plus ``judge_provenance``, and keeps every call in a :class:`JudgeCache`.
Importing this package loads neither ``openai`` nor ``onnxruntime``: each is imported when a judge
that needs it is built or run.
"""

from ._base import (PROVENANCE_COLUMN, JudgedRecords, JudgeStats, Provenance, combine_rows, endpoint_host, row_outcome,
                    write_columns)
from ._cache import JudgeCache, canonical_json, request_hash
from .lexical import LEXICAL_COLUMNS, LexicalJudge, bleu, chrf, exact_match, fuzzy_ratio, lexical_scores, rouge_l, token_f1
from .llm import LLM_COLUMNS, Estimate, LLMJudge
from .outcome import DEFAULT_MAX_MISSING, EXIT_CODES, Outcome, run_outcome
from .prompts import PROMPTS


def __getattr__(name):  # the embedding judge's module imports numpy only, but keep it out until asked for
    if name in ("EmbeddingJudge", "EndpointEmbedder", "MiniLMEmbedder"):
        from . import embedding

        return getattr(embedding, name)
    raise AttributeError(name)

__all__ = [
    "JudgeCache", "request_hash", "canonical_json", "Provenance", "JudgeStats", "JudgedRecords",
    "PROVENANCE_COLUMN", "write_columns", "endpoint_host", "row_outcome", "combine_rows", "LLMJudge", "LexicalJudge", "EmbeddingJudge", "EndpointEmbedder", "MiniLMEmbedder", "Estimate", "LLM_COLUMNS", "PROMPTS", "LEXICAL_COLUMNS",
    "bleu", "chrf", "rouge_l", "token_f1", "exact_match", "fuzzy_ratio", "lexical_scores",
    "Outcome", "run_outcome", "DEFAULT_MAX_MISSING", "EXIT_CODES",
]
