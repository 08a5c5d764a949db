"""The metric registry: one entry per metric, read by name parsing, the docs, the dashboard and the tests.

Each :class:`Metric` holds what a user or a contributor needs to trust it: the canonical name
and the names other tools use (ranx, trec_eval, ir_measures, RAGAS, ARES, ALCE), what kind of
metric it is, which direction is better and its range, what a cutoff means for it, the
conventions it follows where tools disagree, the source of its definition, the public function
that computes it, the dashboard pages that show it, and hand-computed test vectors with the
arithmetic written out. Adding a metric means adding one entry here and its kernel.

``docs/metrics.md`` and ``docs/conventions.md`` are generated from this module
(``python scripts/build_docs.py``; a test checks they are current), and
``tests/test_registry.py`` runs the same checks on every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["Metric", "TestVector", "METRICS", "GENERAL_CONVENTIONS", "TREC_PRINT_ORDER", "TREC_FAMILY_CUTOFFS"]

KINDS = ("ranking", "context", "answer", "operational")

# Shared inputs of the ranking vectors: one query, three docs retrieved in the order d3, d2, d1.
_GRADED = {"q1": {"d1": 2, "d3": 1, "d4": 0}}
_RUN = {"q1": {"d3": 3.0, "d2": 2.0, "d1": 1.0}}
_IDEAL_LINEAR = "IDCG = 2/log2(2) + 1/log2(3) = 2 + 0.63093 = 2.63093"


@dataclass(frozen=True)
class TestVector:
    """A hand-computed case: the function's keyword arguments and the value they must give.

    For ranking metrics ``qrels`` and ``run`` are ranx-shaped dicts and ``metric`` the name given
    to :func:`evalsuite.evaluate`; the list function of the entry gets the same case as lists.
    """

    __test__ = False  # not a pytest test class, whatever its name

    arguments: Mapping[str, Any]
    expected: float
    arithmetic: str


@dataclass(frozen=True)
class Metric:
    """One registered metric.

    Attributes
    ----------
    name : str
        Canonical name (ranx's where ranx has the metric): ``ndcg``, ``context_precision`` ...
    title : str
        How people write it: ``nDCG@k``, ``Context precision``.
    kind : {"ranking", "context", "answer", "operational"}
    summary : str
        One line: what it measures.
    formula : str
        The definition, in plain text.
    aliases : mapping of str -> tuple of str
        Names of the same metric in other tools (``{"trec_eval": ("ndcg_cut_k", "ndcg")}``).
    parse_names : tuple of str
        Lower-case base names :func:`evalsuite.parse_metric` accepts before ``@k`` (ranking only).
    trec_cut, trec_whole : str or None
        trec_eval's measure prefix with a cutoff (``ndcg_cut`` for ``ndcg_cut_10``) and its name
        for the whole list (``ndcg``), when trec_eval has them.
    higher_is_better : bool
    value_range : (float, float)
        Lowest and highest value (``float("inf")`` for unbounded).
    cutoff : str
        What a cutoff k means for it ("" when it takes none).
    conventions : tuple of str
        The rules it follows where tools disagree.
    source : str
        Where the definition comes from (paper or tool, with the reference).
    function : str
        The public function that computes it (``evalsuite.ndcg_at_k``).
    function_arguments : mapping
        Extra keyword arguments the function needs for this entry (``{"gains": "exponential"}``).
    pages : tuple of str
        Dashboard pages that show it.
    vectors : tuple of TestVector
        At least one hand-computed case.
    perfect : mapping or None
        Arguments of an input that must score the maximum (``None``: no such input).
    nothing_relevant : (mapping, float) or None
        An input with nothing relevant and the value the documented rule gives it.

    Examples
    --------
    >>> entry = METRICS["map"]
    >>> entry.aliases["trec_eval"], entry.function
    (('map_cut_k', 'map'), 'evalsuite.mean_average_precision_at_k')
    >>> entry.vectors[0].arithmetic.split(":")[0]
    'relevant at ranks 1 (P@1 = 1/1) and 3 (P@3 = 2/3), R = 2'
    """

    name: str
    title: str
    kind: str
    summary: str
    formula: str
    aliases: Mapping[str, tuple[str, ...]]
    higher_is_better: bool
    value_range: tuple[float, float]
    cutoff: str
    conventions: tuple[str, ...]
    source: str
    function: str
    pages: tuple[str, ...]
    vectors: tuple[TestVector, ...]
    parse_names: tuple[str, ...] = ()
    trec_cut: str | None = None
    trec_whole: str | None = None
    function_arguments: Mapping[str, Any] = field(default_factory=dict)
    perfect: Mapping[str, Any] | None = None
    nothing_relevant: tuple[Mapping[str, Any], float] | None = None

    @property
    def convention(self) -> str:
        """The conventions as one line (what reports and ``Score.params`` carry)."""
        return "; ".join(self.conventions)

    def callable(self) -> Callable:
        """The public function named by :attr:`function`."""
        import evalsuite

        return getattr(evalsuite, self.function.rsplit(".", 1)[-1])


_RANKING_PAGES = ("Overview", "Per-query", "Compare")
_RELEVANT = "a doc is relevant when its grade >= rel_level (default 1); grades <= 0 never are"
_R = "R = judged docs with grade >= rel_level (negative grades not counted)"
_WHOLE = "k = the top k docs of each query's ranking; no cutoff (`map`, `mrr`, `ndcg`) = the whole ranked list"
_PERFECT = {"qrels": {"q1": {"d1": 1, "d2": 1}}, "run": {"q1": {"d1": 2.0, "d2": 1.0}}}
_NOTHING = ({"qrels": {"q1": {"d1": 0}}, "run": {"q1": {"d1": 1.0, "d2": 0.5}}}, 0.0)

_ENTRIES = [
    Metric(
        name="ndcg", title="nDCG@k", kind="ranking",
        summary="discounted gain of the ranking against the ideal ranking (linear gains)",
        formula="DCG@k = sum over ranks i <= k of g_i / log2(i + 1); nDCG@k = DCG@k / IDCG@k",
        aliases={"ranx": ("ndcg", "ndcg@k"), "trec_eval": ("ndcg_cut_k", "ndcg"), "ir_measures": ("nDCG", "nDCG@k")},
        parse_names=("ndcg",), trec_cut="ndcg_cut", trec_whole="ndcg",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=("gain = grade (linear); grades below rel_level get gain 0 (ranx; trec_eval ignores -l for nDCG)",
                     "ideal ranking from every judged doc with grade >= rel_level, best first, cut at k",
                     "0 when the ideal DCG is 0"),
        source="Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, TOIS 2002; "
               "trec_eval ndcg_cut_k; ranx ndcg@k",
        function="evalsuite.ndcg_at_k", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "ndcg@10"}, 2 / (2 + 1 / 1.584962500721156),
                            "DCG = 1/log2(2) [d3, g 1] + 0 [d2] + 2/log2(4) [d1, g 2] = 1 + 1 = 2; "
                            f"{_IDEAL_LINEAR}; 2 / 2.63093 = 0.76019"),),
        perfect={**_PERFECT, "metric": "ndcg@10"}, nothing_relevant=({**_NOTHING[0], "metric": "ndcg@10"}, 0.0),
    ),
    Metric(
        name="map", title="MAP@k", kind="ranking",
        summary="average precision at the ranks of the relevant docs",
        formula="AP@k = (sum over relevant ranks i <= k of P@i) / R",
        aliases={"ranx": ("map", "map@k"), "trec_eval": ("map_cut_k", "map"), "ir_measures": ("AP", "AP@k")},
        parse_names=("map", "ap"), trec_cut="map_cut", trec_whole="map",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, _R, "divided by R, not min(R, k) as Spark and ml_metrics do", "0 when R = 0"),
        source="trec_eval map / map_cut_k (Buckley & Voorhees, SIGIR 2000); ranx map@k",
        function="evalsuite.mean_average_precision_at_k", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "map@10"}, (1 / 1 + 2 / 3) / 2,
                            "relevant at ranks 1 (P@1 = 1/1) and 3 (P@3 = 2/3), R = 2: (1 + 0.6667) / 2 = 0.8333"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "map@2"}, 0.5,
                            "only rank 1 within k = 2: P@1 = 1, divided by R = 2: 0.5")),
        perfect={**_PERFECT, "metric": "map"}, nothing_relevant=({**_NOTHING[0], "metric": "map"}, 0.0),
    ),
    Metric(
        name="mrr", title="MRR@k", kind="ranking",
        summary="reciprocal rank of the first relevant doc",
        formula="RR = 1 / rank of the first relevant doc (within the top k when k is given), 0 if none",
        aliases={"ranx": ("mrr", "mrr@k"), "trec_eval": ("recip_rank",), "ir_measures": ("RR", "RR@k")},
        parse_names=("mrr", "recip_rank", "rr"), trec_whole="recip_rank",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, "0 when no relevant doc is in the (cut) ranking"),
        source="Voorhees, TREC-8 Question Answering Track Report, 1999; trec_eval recip_rank; ranx mrr@k",
        function="evalsuite.mrr", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": {"q1": {"d2": 1}}, "run": _RUN, "metric": "mrr"}, 0.5,
                            "first relevant doc d2 at rank 2: 1 / 2 = 0.5"),
                 TestVector({"qrels": {"q1": {"d1": 1}}, "run": _RUN, "metric": "mrr@2"}, 0.0,
                            "first relevant doc d1 at rank 3, outside the top 2: 0")),
        perfect={**_PERFECT, "metric": "mrr"}, nothing_relevant=({**_NOTHING[0], "metric": "mrr"}, 0.0),
    ),
    Metric(
        name="precision", title="P@k", kind="ranking",
        summary="share of the top k docs that are relevant",
        formula="P@k = |relevant docs in the top k| / k",
        aliases={"ranx": ("precision@k",), "trec_eval": ("P_k", "set_P"), "ir_measures": ("P@k",)},
        parse_names=("precision", "p"), trec_cut="P",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, "divided by k even when fewer than k docs were returned"),
        source="trec_eval P_k (Voorhees & Harman, TREC: Experiment and Evaluation in IR, 2005); ranx precision@k",
        function="evalsuite.precision_at_k", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "precision@2"}, 0.5,
                            "top 2 = d3 (grade 1), d2 (unjudged): 1 relevant / 2 = 0.5"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "precision@5"}, 0.4,
                            "3 docs returned, 2 relevant (d3, d1): 2 / 5 = 0.4 (k, not 3)")),
        perfect={**_PERFECT, "metric": "precision@2"}, nothing_relevant=({**_NOTHING[0], "metric": "precision@2"}, 0.0),
    ),
    Metric(
        name="recall", title="R@k", kind="ranking",
        summary="share of the relevant docs found in the top k",
        formula="R@k = |relevant docs in the top k| / R",
        aliases={"ranx": ("recall@k",), "trec_eval": ("recall_k", "set_recall"), "ir_measures": ("R@k",)},
        parse_names=("recall", "r"), trec_cut="recall",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, _R, "0 when R = 0"),
        source="trec_eval recall_k; ranx recall@k",
        function="evalsuite.recall_at_k", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "recall@2"}, 0.5,
                            "R = 2 (d1, d3); top 2 holds d3: 1 / 2 = 0.5"),),
        perfect={**_PERFECT, "metric": "recall@2"}, nothing_relevant=({**_NOTHING[0], "metric": "recall@2"}, 0.0),
    ),
    Metric(
        name="hit_rate", title="Hit rate@k", kind="ranking",
        summary="whether any relevant doc is in the top k",
        formula="hit_rate@k = 1 if a relevant doc is in the top k, else 0",
        aliases={"ranx": ("hit_rate@k",), "trec_eval": ("success_k",), "ir_measures": ("Success@k",)},
        parse_names=("hit_rate", "hits", "success", "hitrate"), trec_cut="success",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT,),
        source="trec_eval success_k; ranx hit_rate@k",
        function="evalsuite.hit_rate_at_k", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "hit_rate@1"}, 1.0,
                            "rank 1 = d3, grade 1: a hit = 1"),
                 TestVector({"qrels": {"q1": {"d1": 1}}, "run": _RUN, "metric": "hit_rate@2"}, 0.0,
                            "top 2 = d3, d2, neither judged relevant: 0")),
        perfect={**_PERFECT, "metric": "hit_rate@1"}, nothing_relevant=({**_NOTHING[0], "metric": "hit_rate@2"}, 0.0),
    ),
    Metric(
        name="ndcg_burges", title="nDCG@k (exponential gains)", kind="ranking",
        summary="nDCG with gain 2^g - 1, which weighs highly relevant docs more",
        formula="DCG@k = sum over ranks i <= k of (2^g_i - 1) / log2(i + 1); nDCG@k = DCG@k / IDCG@k",
        aliases={"ranx": ("ndcg_burges@k",)},
        parse_names=("ndcg_burges", "ndcg_exp"),
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=("gain = 2^grade - 1; grades below rel_level get gain 0",
                     "ideal ranking from every judged doc with grade >= rel_level, best first, cut at k",
                     "0 when the ideal DCG is 0"),
        source="Burges et al., Learning to rank using gradient descent, ICML 2005; ranx ndcg_burges@k",
        function="evalsuite.ndcg_at_k", function_arguments={"gains": "exponential"}, pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "ndcg_burges@10"},
                            2.5 / (3 + 1 / 1.584962500721156),
                            "DCG = (2^1-1)/log2(2) + (2^2-1)/log2(4) = 1 + 1.5 = 2.5; IDCG = 3/1 + 1/log2(3) = "
                            "3.63093; 2.5 / 3.63093 = 0.68853"),),
        perfect={**_PERFECT, "metric": "ndcg_burges@10"},
        nothing_relevant=({**_NOTHING[0], "metric": "ndcg_burges@10"}, 0.0),
    ),
    Metric(
        name="judged", title="Judged@k", kind="ranking",
        summary="share of the top k docs that have a judgement (holes in the qrels)",
        formula="Judged@k = |docs in the top k with any judgement| / k",
        aliases={"ir_measures": ("Judged@k",)},
        parse_names=("judged",),
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=("a judgement of any grade counts, 0 and negative too", "divided by k"),
        source="ir_measures Judged@k (MacAvaney et al., ECIR 2022)",
        function="evalsuite.evaluate", pages=("Overview",),
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "judged@2"}, 0.5,
                            "top 2 = d3 (judged), d2 (not judged): 1 / 2 = 0.5"),),
        perfect={**_PERFECT, "metric": "judged@2"},
    ),
    Metric(
        name="context_precision", title="Context precision", kind="context",
        summary="whether the chunks useful for the reference answer are ranked first",
        formula="(sum over useful ranks k of P@k) / |useful chunks|, over the chunks' usefulness labels in rank order",
        aliases={"ragas": ("context_precision", "llm_context_precision_with_reference")},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("exact average precision; compat='ragas' adds RAGAS's 1e-10 to the denominator",
                     "0 when no chunk is useful; undefined without chunks",
                     "a None label is left out of the ranking and counted"),
        source="RAGAS LLMContextPrecisionWithReference (Es et al., RAGAS, EACL 2024 demo)",
        function="evalsuite.context_precision", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"useful": [[True, False, True]]}, (1 + 2 / 3) / 2,
                            "useful at ranks 1 (P@1 = 1) and 3 (P@3 = 2/3): (1 + 0.6667) / 2 = 0.8333"),
                 TestVector({"useful": [[False, True, True]]}, (1 / 2 + 2 / 3) / 2,
                            "useful at ranks 2 (1/2) and 3 (2/3): (0.5 + 0.6667) / 2 = 0.5833")),
        perfect={"useful": [[True, True, False]]}, nothing_relevant=({"useful": [[False, False]]}, 0.0),
    ),
    Metric(
        name="context_recall", title="Context recall", kind="context",
        summary="share of the reference answer's claims the retrieved context supports",
        formula="supported reference claims / reference claims",
        aliases={"ragas": ("context_recall", "llm_context_recall")},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("undefined without judged reference claims", "a None judgement is left out and counted"),
        source="RAGAS LLMContextRecall (Es et al., 2024)",
        function="evalsuite.context_recall", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"reference_claims_supported": [[True, False, True, True]]}, 0.75,
                            "3 of 4 reference claims supported: 0.75"),),
        perfect={"reference_claims_supported": [[True, True]]},
        nothing_relevant=({"reference_claims_supported": [[False, False]]}, 0.0),
    ),
    Metric(
        name="context_relevance", title="Context relevance", kind="context",
        summary="share of the retrieved chunks relevant to the question",
        formula="relevant chunks / chunks (mean grade when graded 0..1)",
        aliases={"ares": ("context_relevance",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("graded labels in 0..1: the mean grade", "undefined without judged chunks"),
        source="Saad-Falcon et al., ARES: An Automated Evaluation Framework for RAG Systems, NAACL 2024",
        function="evalsuite.context_relevance", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"relevant": [[True, False]]}, 0.5, "1 of 2 chunks relevant: 0.5"),
                 TestVector({"relevant": [[1.0, 0.5]]}, 0.75, "grades 1.0 and 0.5: mean 0.75")),
        perfect={"relevant": [[True, True]]}, nothing_relevant=({"relevant": [[False, False]]}, 0.0),
    ),
    Metric(
        name="faithfulness", title="Faithfulness", kind="answer",
        summary="share of the answer's claims the retrieved context supports",
        formula="supported answer claims / answer claims",
        aliases={"ragas": ("faithfulness",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("undefined without judged answer claims", "a None judgement is left out and counted, "
                     "never read as False"),
        source="RAGAS Faithfulness (Es et al., 2024)",
        function="evalsuite.faithfulness", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"answer_claims_supported": [[True, True, None, False]]}, 2 / 3,
                            "None left out: 2 of 3 judged claims supported = 0.6667"),),
        perfect={"answer_claims_supported": [[True, True]]},
        nothing_relevant=({"answer_claims_supported": [[False]]}, 0.0),
    ),
    Metric(
        name="answer_correctness", title="Answer correctness", kind="answer",
        summary="claim overlap of answer and reference (F1), with semantic similarity",
        formula="F1 = 2TP / (2TP + FP + FN); score = (w1 F1 + w2 similarity) / (w1 + w2), weights (0.75, 0.25)",
        aliases={"ragas": ("answer_correctness",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("TP = answer claims supported by the reference, FP = the other answer claims, "
                     "FN = reference claims the answer misses",
                     "F1 alone when no similarity is given (said in params)",
                     "undefined without claims on either side (compat='ragas': 1.0)"),
        source="RAGAS AnswerCorrectness (Es et al., 2024)",
        function="evalsuite.answer_correctness", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"answer_in_reference": [[True, False]], "reference_in_answer": [[True, False, False]],
                             "similarity": [0.5]}, 0.425,
                            "TP 1, FP 1, FN 2: F1 = 2 / (2 + 1 + 2) = 0.4; 0.75 x 0.4 + 0.25 x 0.5 = 0.425"),),
        perfect={"answer_in_reference": [[True]], "reference_in_answer": [[True]], "similarity": [1.0]},
        nothing_relevant=({"answer_in_reference": [[False]], "reference_in_answer": [[False]]}, 0.0),
    ),
    # The rest of the RAGAS metric reference (evalsuite/ragas.py).
    Metric(
        name="answer_relevancy", title="Answer relevancy", kind="answer",
        summary="how well the answer addresses the question: questions generated from it, compared with the real one",
        formula="mean over the generated questions of cos(E(generated question), E(question)); 0 when noncommittal",
        aliases={"ragas": ("answer_relevancy", "response_relevancy")},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("strictness = number of generated questions (3 by default)",
                     "noncommittal (score 0) when the majority of the judged flags say so; flags outvoted are "
                     "counted in params, never dropped silently (compat='ragas': only when all flags say so, as "
                     "RAGAS's np.all; RAGAS 0.1 zeroed on any flag)",
                     "negative cosines written as 0", "undefined without a generated question"),
        source="Es et al., RAGAS: Automated Evaluation of Retrieval Augmented Generation, EACL 2024 demo (answer "
               "relevance); RAGAS ResponseRelevancy",
        function="evalsuite.answer_relevancy", pages=("RAG quality", "Per-query", "Compare", "Judge"),
        vectors=(TestVector({"similarities": [[1.0, 0.5, 0.75]]}, 0.75, "(1.0 + 0.5 + 0.75) / 3 = 0.75"),
                 TestVector({"similarities": [[1.0, 0.5, 0.75], [0.6, 0.5, 0.4]],
                             "noncommittal": [[True, False, False], [True, True, False]]}, 0.375,
                            "request 1: 1 flag of 3 is outvoted, mean 0.75; request 2: 2 of 3 flags, noncommittal, "
                            "0; (0.75 + 0) / 2 = 0.375"),
                 TestVector({"similarities": [[0.6, 0.5, 0.4]], "noncommittal": [[True, True, False]],
                             "compat": "ragas"}, 0.5, "ragas: not all flags set, so the mean (0.6 + 0.5 + 0.4) / 3 "
                                                      "= 0.5")),
        perfect={"similarities": [[1.0, 1.0, 1.0]]}, nothing_relevant=({"similarities": [[0.0, 0.0, 0.0]]}, 0.0),
    ),
    Metric(
        name="answer_similarity", title="Answer similarity", kind="answer",
        summary="semantic similarity of the answer and the reference (embedding cosine)",
        formula="cos(E(answer), E(reference)); with a threshold t: 1 if >= t else 0",
        aliases={"ragas": ("answer_similarity", "semantic_similarity")},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("negative cosines written as 0", "one text empty: 0, both empty: 1 (by rule, no model run)",
                     "the model id is kept with every value: scales differ between models",
                     "None = not judged: left out and counted"),
        source="RAGAS SemanticSimilarity (AnswerSimilarity); Risch et al., Semantic Answer Similarity for "
               "Evaluating Question Answering Models, MRQA 2021",
        function="evalsuite.answer_similarity", pages=("RAG quality", "Per-query", "Compare", "Judge"),
        vectors=(TestVector({"similarity": [0.9, 0.6, None]}, 0.75, "(0.9 + 0.6) / 2 = 0.75; None left out"),
                 TestVector({"similarity": [0.9, 0.6], "threshold": 0.7}, 0.5, "0.9 >= 0.7: 1, 0.6 < 0.7: 0; mean 0.5")),
        perfect={"similarity": [1.0]}, nothing_relevant=({"similarity": [0.0]}, 0.0),
    ),
    Metric(
        name="factual_correctness", title="Factual correctness", kind="answer",
        summary="claim-level precision, recall or F-beta of the answer against the reference",
        formula="precision = TP / (TP + FP); recall = TP / (TP + FN); F-beta = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP)",
        aliases={"ragas": ("factual_correctness",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("TP = answer claims supported by the reference, FP = the other answer claims, "
                     "FN = reference claims the answer misses", "mode f1 (default), precision or recall; beta 1",
                     "undefined without the claims the mode needs", "a None judgement is left out and counted"),
        source="RAGAS FactualCorrectness; van Rijsbergen, Information Retrieval, 1979 (F-measure)",
        function="evalsuite.factual_correctness", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"answer_in_reference": [[True, False]], "reference_in_answer": [[True, False, False]]},
                            0.4, "TP 1, FP 1, FN 2: F1 = 2 / (2 + 1 + 2) = 0.4"),
                 TestVector({"answer_in_reference": [[True, False]], "reference_in_answer": [[True, False, False]],
                             "beta": 2.0}, 5 / 14, "F2 = 5 x 1 / (5 x 1 + 4 x 2 + 1) = 5 / 14 = 0.35714"),
                 TestVector({"answer_in_reference": [[True, False]], "reference_in_answer": [[True, False, False]],
                             "mode": "recall"}, 1 / 3, "recall = TP / (TP + FN) = 1 / 3"),
                 TestVector({"answer_in_reference": [[True, False]], "mode": "precision"}, 0.5,
                            "precision = TP / (TP + FP) = 1 / 2 (the reference's claims not needed)")),
        perfect={"answer_in_reference": [[True]], "reference_in_answer": [[True]]},
        nothing_relevant=({"answer_in_reference": [[False]], "reference_in_answer": [[False]]}, 0.0),
    ),
    Metric(
        name="context_entity_recall", title="Context entity recall", kind="context",
        summary="share of the reference's entities found in the retrieved contexts",
        formula="|CN ∩ GN| / |GN|, GN = entities of the reference, CN = entities of the contexts",
        aliases={"ragas": ("context_entity_recall",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("entities from the LLM judge or given in the records (reference_entities, context_entities)",
                     "matched after NFKC, case folding and whitespace collapsing (compat='ragas': exact strings)",
                     "a reference entity counts once", "undefined without reference entities (RAGAS: 0)"),
        source="RAGAS ContextEntityRecall (metrics/_context_entities_recall.py)",
        function="evalsuite.context_entity_recall", pages=("RAG quality", "Per-query", "Compare", "Judge"),
        vectors=(TestVector({"entities_in_contexts": [[True, False, True]]}, 2 / 3, "2 of 3 reference entities: 0.6667"),
                 TestVector({"reference_entities": [["Eiffel Tower", "Paris", "1889", "paris"]],
                             "context_entities": [["eiffel tower", "Paris", "Gustave Eiffel"]]}, 2 / 3,
                            "GN = {eiffel tower, paris, 1889} after normalising; 2 in CN: 2 / 3"),
                 TestVector({"reference_entities": [["Eiffel Tower", "Paris", "1889"]],
                             "context_entities": [["eiffel tower", "Paris", "Gustave Eiffel"]], "compat": "ragas"},
                            1 / 3, "exact strings: only 'Paris' in both: 1 / 3")),
        perfect={"entities_in_contexts": [[True, True]]}, nothing_relevant=({"entities_in_contexts": [[False]]}, 0.0),
    ),
    Metric(
        name="context_utilization", title="Context utilization", kind="context",
        summary="whether the chunks useful for the answer given are ranked first (no reference needed)",
        formula="context precision with usefulness judged against the answer: mean of P@k over useful ranks k",
        aliases={"ragas": ("context_utilization", "llm_context_precision_without_reference")},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("exact average precision; compat='ragas' adds RAGAS's 1e-10 to the denominator",
                     "0 when no chunk is useful; undefined without chunks",
                     "a None label is left out of the ranking and counted"),
        source="RAGAS LLMContextPrecisionWithoutReference (ContextUtilization)",
        function="evalsuite.context_utilization", pages=("RAG quality", "Per-query", "Compare", "Judge"),
        vectors=(TestVector({"useful_for_answer": [[False, True, True]]}, (1 / 2 + 2 / 3) / 2,
                            "useful at ranks 2 (1/2) and 3 (2/3): (0.5 + 0.6667) / 2 = 0.5833"),
                 TestVector({"useful_for_answer": [[True, True, True]], "compat": "ragas"}, 3 / (3 + 1e-10),
                            "(1 + 1 + 1) / (3 + 1e-10)")),
        perfect={"useful_for_answer": [[True, True, False]]},
        nothing_relevant=({"useful_for_answer": [[False, False]]}, 0.0),
    ),
    Metric(
        name="context_relevancy", title="Context relevancy (sentences)", kind="context",
        summary="share of the context's sentences relevant to the question (RAGAS's older form)",
        formula="relevant sentences of the contexts / sentences of the contexts",
        aliases={"ragas": ("context_relevancy",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("sentences split by pysbd (English rules), all chunks in rank order",
                     "undefined without judged sentences", "a None judgement is left out and counted"),
        source="Es et al., RAGAS, EACL 2024 demo (context relevance: extracted sentences / sentences); "
               "RAGAS 0.1 ContextRelevancy",
        function="evalsuite.context_relevancy", pages=("RAG quality", "Per-query", "Compare", "Judge"),
        vectors=(TestVector({"sentences_relevant": [[True, False, False, True]]}, 0.5, "2 of 4 sentences: 0.5"),),
        perfect={"sentences_relevant": [[True, True]]}, nothing_relevant=({"sentences_relevant": [[False]]}, 0.0),
    ),
    Metric(
        name="aspect_critique", title="Aspect critique", kind="answer",
        summary="a user-defined yes/no criterion (name + definition) judged by majority vote",
        formula="per request: 1 if more votes say yes than no, else 0; per system: the mean",
        aliases={"ragas": ("aspect_critic", "aspect_critique")},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("strictness = number of votes, odd", "missing votes left out; a tie among the rest is "
                     "undefined and counted"),
        source="RAGAS AspectCritic (metrics/_aspect_critic.py)",
        function="evalsuite.aspect_critique", pages=("RAG quality", "Per-query", "Compare", "Judge"),
        vectors=(TestVector({"votes": [[True, True, False], [False, False, True]]}, 0.5,
                            "2 of 3 yes: 1; 1 of 3 yes: 0; (1 + 0) / 2 = 0.5"),
                 TestVector({"votes": [[True, None, False], [True]]}, 1.0,
                            "a tie after the missing vote is undefined; the other request 1: mean 1.0")),
        perfect={"votes": [[True, True, True]]}, nothing_relevant=({"votes": [[False, False, False]]}, 0.0),
    ),
    Metric(
        name="citation_recall", title="Citation recall", kind="answer",
        summary="share of the answer's statements fully supported by their citations",
        formula="statements supported by their cited passages / statements",
        aliases={"alce": ("citation_rec",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("undefined without judged statements",),
        source="Gao et al., Enabling Large Language Models to Generate Text with Citations (ALCE), EMNLP 2023",
        function="evalsuite.citation_recall", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"statements_cited_supported": [[True, False, True]]}, 2 / 3,
                            "2 of 3 statements supported: 0.6667"),),
        perfect={"statements_cited_supported": [[True]]},
        nothing_relevant=({"statements_cited_supported": [[False, False]]}, 0.0),
    ),
    Metric(
        name="citation_precision", title="Citation precision", kind="answer",
        summary="share of the citations needed to support their statement",
        formula="relevant citations / citations",
        aliases={"alce": ("citation_prec",)},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("undefined without citations (ALCE's script scores 0)",),
        source="Gao et al., ALCE, EMNLP 2023",
        function="evalsuite.citation_precision", pages=("RAG quality", "Per-query", "Compare"),
        vectors=(TestVector({"citations_relevant": [[True, True, False, True]]}, 0.75, "3 of 4 citations: 0.75"),),
        perfect={"citations_relevant": [[True, True]]}, nothing_relevant=({"citations_relevant": [[False]]}, 0.0),
    ),
    Metric(
        name="success", title="Task success rate", kind="operational",
        summary="share of requests resolved to specification, with a Wilson interval",
        formula="successes / judged requests; Wilson score interval (scipy.stats.binomtest)",
        aliases={},
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("None = unknown: left out and counted", "undefined when no request is judged"),
        source="Wilson, Probable inference, the law of succession, and statistical inference, JASA 1927",
        function="evalsuite.task_success_rate", pages=("RAG quality", "Latency"),
        vectors=(TestVector({"outcomes": [True, True, False, None]}, 2 / 3, "2 of 3 judged requests: 0.6667"),),
        perfect={"outcomes": [True, True]}, nothing_relevant=({"outcomes": [False]}, 0.0),
    ),
    Metric(
        name="failure_rate", title="Failure rate (by stage)", kind="operational",
        summary="share of requests that failed, and where (retrieval, evidence, generation, orchestration, other)",
        formula="failed requests / requests; per stage: failures at the stage / failed requests",
        aliases={},
        higher_is_better=False, value_range=(0.0, 1.0), cutoff="",
        conventions=("None = did not fail", "stages matched case-insensitively against the taxonomy"),
        source="EvalSuite's record schema (failure_stage); stage taxonomy after RAGChecker's diagnosis of "
               "retriever and generator errors (Ru et al., NeurIPS 2024 D&B)",
        function="evalsuite.failure_attribution", pages=("Failures",),
        vectors=(TestVector({"stages": ["retrieval", None, "generation", None]}, 0.5, "2 of 4 requests failed: 0.5"),),
    ),
    Metric(
        name="latency", title="Latency (mean, p50, p90, p95, p99)", kind="operational",
        summary="time to answer, in the unit given",
        formula="mean and percentiles with numpy's linear interpolation",
        aliases={"llmperf": ("end_to_end_latency_s",)},
        higher_is_better=False, value_range=(0.0, float("inf")), cutoff="",
        conventions=("percentiles: numpy.percentile, linear interpolation, as LLMPerf's summaries",
                     "None = not measured: left out and counted"),
        source="numpy.percentile (Hyndman & Fan 1996, definition 7); LLMPerf's published summaries",
        function="evalsuite.latency_summary", function_arguments={"statistic": "p95"}, pages=("Latency",),
        vectors=(TestVector({"values": [120, 180, 95, 400]}, 367.0,
                            "sorted 95, 120, 180, 400; p95 at position 0.95 x 3 = 2.85: 180 + 0.85 x (400 - 180) "
                            "= 367"),),
    ),
]

# In the order the dashboard's pickers and the docs list them.
METRICS: Mapping[str, Metric] = MappingProxyType({m.name: m for m in _ENTRIES})

# trec_eval's measure table, for the command line: the order trec_eval prints measures in (the
# families EvalSuite computes) and the cutoffs a bare family name stands for (`-m P`).
TREC_PRINT_ORDER = ("map", "recip_rank", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success")
TREC_FAMILY_CUTOFFS = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}

# Conventions that hold for every ranking metric (docs/conventions.md): (topic, decision, who agrees).
GENERAL_CONVENTIONS = (
    ("order of a run", "score descending as float64; ties broken by doc id descending (byte order); the rank "
     "column is ignored when scores exist", "trec_eval 10 (trec_eval 9 and pytrec_eval compare scores as float32; "
     "ranx keeps insertion order)"),
    ("relevant", "grade >= `rel_level` (default 1); grades <= 0 never relevant; negative grades not counted in R",
     "trec_eval"),
    ("queries averaged over", "the qrels' queries; a qrels query missing from the run scores 0; run queries "
     "without qrels are dropped and reported (`queries=\"intersection\"` for trec_eval's default)",
     "trec_eval -c, ranx `make_comparable=True`"),
    ("qrels query with no relevant doc", "kept; every metric 0; the count is reported", "all tools"),
    ("duplicate doc for a query", "an error naming both lines (`duplicates=\"max\"` keeps the higher score)",
     "trec_eval"),
    ("non-integer grade in a qrels file", "an error naming file, line and value",
     "pytrec_eval (trec_eval truncates silently)"),
    ("extra columns after the TREC run tag", "ignored, with a warning", "trec_eval"),
    ("spaces around a CSV/TSV cell", "trimmed, in the header and in id cells (`q1, d1, 2.0` names doc `d1`)", ""),
    ("a missing judgement (None) in a RAG judgement list", "excluded and counted, never read as False", ""),
    ("a corpus value of a RAG metric", "the mean over the requests where it is defined, with coverage "
     "(defined / total)", ""),
)
