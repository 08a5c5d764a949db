"""Registry entries of the per-request scores other tools compute and EvalSuite reads as given (it
does not compute them): RAGAS >= 0.2 metric names (``Metric.name`` in ``ragas/metrics/_*.py``,
0.2.15 and 0.4.3), the lexical judge's columns, and DeepEval's and Phoenix's hallucination. Collected in
:data:`evalsuite.metrics.registry.GIVEN_SCORES`."""

from __future__ import annotations

from .entry import GivenScore


def _ragas(name: str, source: str, *names: str, higher_is_better: bool = True) -> GivenScore:
    return GivenScore(name=name, summary=source, exports={"ragas": (name, *names)}, source=f"RAGAS {source}",
                      higher_is_better=higher_is_better)


GIVEN_ENTRIES = [
    _ragas("noise_sensitivity", "NoiseSensitivity, mode relevant (share of incorrect claims)",
           "noise_sensitivity_relevant", "noise_sensitivity(mode=relevant)", higher_is_better=False),
    _ragas("noise_sensitivity_irrelevant", "NoiseSensitivity, mode irrelevant", "noise_sensitivity(mode=irrelevant)",
           higher_is_better=False),
    _ragas("non_llm_context_precision_with_reference", "NonLLMContextPrecisionWithReference"),
    _ragas("non_llm_context_recall", "NonLLMContextRecall"),
    _ragas("id_based_context_precision", "IDBasedContextPrecision"),
    _ragas("id_based_context_recall", "IDBasedContextRecall"),
    _ragas("faithfulness_with_hhem", "FaithfulnesswithHHEM"),
    _ragas("nv_context_relevance", "ContextRelevance (NVIDIA)"),
    _ragas("nv_response_groundedness", "ResponseGroundedness (NVIDIA)"),
    _ragas("nv_accuracy", "AnswerAccuracy (NVIDIA)"),
    _ragas("bleu_score", "BleuScore (sacrebleu, scaled to 0..1)"),
    _ragas("rouge_score", "RougeScore"),
    _ragas("chrf_score", "ChrfScore"),
    _ragas("string_present", "StringPresence"),
    _ragas("non_llm_string_similarity", "NonLLMStringSimilarity"),
    _ragas("summary_score", "SummarizationScore"),
    # The lexical judge's columns (evalsuite.judges.lexical computes them with the library named in
    # the source; exact_match is RAGAS's ExactMatch too), in the order the judge offers them.
    *(GivenScore(name=name, summary=summary, exports=exports, judge="lexical",
                 source=("RAGAS ExactMatch; " if exports else "") + f"EvalSuite lexical judge ({library})")
      for name, summary, library, exports in (
          ("bleu", "BLEU of the whole answer against the reference, scaled to 0..1", "sacrebleu", {}),
          ("chrf", "chrF of the answer against the reference, scaled to 0..1", "sacrebleu", {}),
          ("rouge_l", "ROUGE-L F-measure of the answer against the reference", "rouge-score", {}),
          ("token_f1", "SQuAD v1.1 token F1 of the answer against the reference", "SQuAD v1.1 script", {}),
          ("exact_match", "the answer equals the reference: as given by RAGAS's ExactMatch (the strings as they "
                          "are), or by the lexical judge after SQuAD v1.1 normalisation", "SQuAD v1.1 script",
           {"ragas": ("exact_match",)}),
          ("fuzzy_ratio", "normalised Indel similarity of the answer and the reference", "rapidfuzz", {}))),
    GivenScore(name="hallucination", summary="share of the contexts the output contradicts",
               exports={"deepeval": ("Hallucination",), "phoenix": ("hallucination",)},
               source="DeepEval HallucinationMetric; Phoenix hallucination evaluator", higher_is_better=False),
]
