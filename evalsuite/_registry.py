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

import math
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
    trec_param : str or None
        trec_eval's prefix of a measure with a real parameter (``iprec_at_recall`` for
        ``iprec_at_recall_0.10``).
    param, default_param : str, float or None
        What the real parameter is (``"recall level in [0, 1]"``; "" when the metric takes
        none) and its value when the name gives none (None: the name must give it).
    aggregate : {"mean", "sum", "geometric"}
        How per-query values make the corpus value: the mean; the sum (trec_eval's counts
        num_ret, num_rel ...); the geometric mean with each value floored at 1e-5 (trec_eval's
        gm_map, gm_bpref).
    integer : bool
        A count, printed without decimals in trec_eval's layout.

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
    trec_param: str | None = None
    param: str = ""
    default_param: float | None = None
    aggregate: str = "mean"
    integer: bool = False

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
        parse_names=("precision", "p"), trec_cut="P", trec_whole="set_P",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, "divided by k even when fewer than k docs were returned",
                     "no cutoff (trec_eval set_P): divided by the docs returned; 0 when none"),
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
        parse_names=("recall", "r"), trec_cut="recall", trec_whole="set_recall",
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
        parse_names=("hit_rate", "success", "hitrate"), trec_cut="success",
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
        name="hits", title="Hits@k", kind="ranking",
        summary="number of relevant docs in the top k",
        formula="hits@k = |relevant docs in the top k|",
        aliases={"ranx": ("hits@k",), "trec_eval": ("num_rel_ret",)},
        parse_names=("hits",),
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff=_WHOLE,
        conventions=(_RELEVANT, "a count, not a share: hit rate (any relevant doc in the top k) is `hit_rate@k`"),
        source="ranx hits@k (Bassani, ECIR 2022); trec_eval num_rel_ret is hits over the whole list",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "hits@10"}, 2.0,
                            "top 10 = d3 (grade 1), d2 (unjudged), d1 (grade 2): 2 relevant docs = 2"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "hits@2"}, 1.0,
                            "top 2 = d3 (grade 1), d2 (unjudged): 1")),
        nothing_relevant=({**_NOTHING[0], "metric": "hits@2"}, 0.0),
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
        formula="Judged@k = |docs in the top k with any judgement| / min(k, docs retrieved)",
        aliases={"ir_measures": ("Judged@k",)},
        parse_names=("judged",),
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=("a judgement of any grade counts, 0 and negative too",
                     "divided by min(k, docs retrieved), as ir_measures since its 2022 fix (not by k); "
                     "0 for a query that retrieved nothing"),
        source="ir_measures Judged@k (MacAvaney et al., ECIR 2022)",
        function="evalsuite.evaluate", pages=("Overview",),
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "judged@2"}, 0.5,
                            "top 2 = d3 (judged), d2 (not judged): 1 / 2 = 0.5"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "judged@10"}, 2 / 3,
                            "3 docs retrieved, d3 and d1 judged: 2 / min(10, 3) = 0.6667 (not 2 / 10)")),
        perfect={**_PERFECT, "metric": "judged@2"},
    ),
    Metric(
        name="r_precision", title="R-precision", kind="ranking",
        summary="precision at rank R, the number of relevant docs",
        formula="Rprec = |relevant docs in the top R| / R",
        aliases={"ranx": ("r-precision",), "trec_eval": ("Rprec",), "ir_measures": ("Rprec",)},
        parse_names=("r_precision", "r-precision", "rprec"), trec_whole="Rprec",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "0 when R = 0"),
        source="Buckley & Voorhees, Retrieval System Evaluation, in TREC: Experiment and Evaluation in IR, 2005; "
               "trec_eval Rprec; ranx r-precision",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "r_precision"}, 0.5,
                            "R = 2 (d1, d3); top 2 = d3 (relevant), d2: 1 / 2 = 0.5"),),
        perfect={**_PERFECT, "metric": "Rprec"}, nothing_relevant=({**_NOTHING[0], "metric": "Rprec"}, 0.0),
    ),
    Metric(
        name="bpref", title="bpref", kind="ranking",
        summary="how often relevant docs are ranked above judged non-relevant ones (unjudged docs ignored)",
        formula="bpref = (1/R) sum over retrieved relevant r of (1 - min(n_r, R) / min(N, R)), n_r = judged "
                "non-relevant docs ranked above r, N = judged non-relevant docs",
        aliases={"ranx": ("bpref",), "trec_eval": ("bpref",), "ir_measures": ("Bpref",)},
        parse_names=("bpref",), trec_whole="bpref",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "judged non-relevant = grade from 0 to below rel_level; docs with a negative "
                     "grade count as unjudged (trec_eval; ranx counts them non-relevant)",
                     "a relevant doc with no non-relevant doc above it adds 1", "0 when R = 0",
                     "trec_eval's bpref, query by query (pytrec-eval-terrier); ranx 0.3.21's bpref differs on "
                     "many queries (it scores 0 where trec_eval does not) and is not followed"),
        source="Buckley & Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004; trec_eval bpref",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": {"q1": {"a": 1, "b": 0, "c": 1, "e": 0}},
                             "run": {"q1": {"b": 4.0, "a": 3.0, "d": 2.0, "c": 1.0}}, "metric": "bpref"}, 0.5,
                            "R = 2, N = 2; ranking b (non-relevant), a, d (unjudged, skipped), c: a and c each have "
                            "1 non-relevant above: (1 - 1/2) + (1 - 1/2) = 1, / R = 0.5"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "bpref"}, 1.0,
                            "d4 (non-relevant) not retrieved, d2 unjudged: no non-relevant above d3 or d1: 2 / 2 = 1")),
        perfect={**_PERFECT, "metric": "bpref"}, nothing_relevant=({**_NOTHING[0], "metric": "bpref"}, 0.0),
    ),
    Metric(
        name="iprec_at_recall", title="Interpolated precision at recall r", kind="ranking",
        summary="the highest precision at any rank where recall is at least r (the 11-point curve)",
        formula="iprec(r) = max over ranks i with recall@i >= r of P@i; the level r is reached at the j-th "
                "relevant doc with j = round(r x R)",
        aliases={"trec_eval": ("iprec_at_recall_r",)},
        parse_names=("iprec_at_recall",), trec_param="iprec_at_recall",
        param="recall level r in [0, 1]",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "j = round(r x R), halves away from zero (trec_eval 10's lround; trec_eval 9 "
                     "added 0.9 and truncated)", "0 when fewer than j relevant docs are retrieved, and when R = 0",
                     "ir_measures' IPrec@r runs trec_eval 9 (pytrec_eval), so that name is not accepted"),
        source="Manning, Raghavan & Schütze, Introduction to IR, 2008, sec. 8.4; trec_eval iprec_at_recall",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "iprec_at_recall_1.00"}, 2 / 3,
                            "relevant at ranks 1 (P = 1) and 3 (P = 2/3); r = 1: j = 2, max(2/3) = 0.6667"),
                 TestVector({"qrels": {"q1": {"d2": 1, "d1": 1}}, "run": _RUN, "metric": "iprec_at_recall@0.5"},
                            2 / 3, "relevant at ranks 2 (P = 1/2) and 3 (P = 2/3); r = 0.5: j = 1, "
                            "max(1/2, 2/3) = 0.6667 (interpolated up)")),
        perfect={**_PERFECT, "metric": "iprec_at_recall_0.50"},
        nothing_relevant=({**_NOTHING[0], "metric": "iprec_at_recall_0.00"}, 0.0),
    ),
    Metric(
        name="gm_map", title="GM-MAP", kind="ranking",
        summary="average precision, averaged over queries with the geometric mean (rewards consistency)",
        formula="gm_map = exp(mean over queries of log(max(AP, 0.00001)))",
        aliases={"trec_eval": ("gm_map",)},
        trec_whole="gm_map",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "per query: AP as `map`; the corpus value is the geometric mean with every "
                     "AP floored at 0.00001 (trec_eval), a qrels query missing from the run counting as 0.00001"),
        source="Robertson, On GMAP, CIKM 2006; trec_eval gm_map",
        function="evalsuite.evaluate", pages=("Overview", "Per-query"), aggregate="geometric",
        vectors=(TestVector({"qrels": {**_GRADED, "q2": {"x": 1}}, "run": {**_RUN, "q2": {"y": 1.0}}, "metric": "gm_map"},
                            math.sqrt(5 / 6 * 1e-5),
                            "AP q1 = (1 + 2/3) / 2 = 0.8333, q2 = 0 -> 0.00001: sqrt(0.8333 x 0.00001) = 0.0028868"),),
        perfect={**_PERFECT, "metric": "gm_map"}, nothing_relevant=({**_NOTHING[0], "metric": "gm_map"}, 1e-5),
    ),
    Metric(
        name="num_ret", title="Docs retrieved", kind="ranking",
        summary="number of docs the run returned for the query (trec_eval's summary line)",
        formula="num_ret = |ranked list| (cut at -M / max_docs)",
        aliases={"trec_eval": ("num_ret",), "ir_measures": ("NumRet",)},
        trec_whole="num_ret",
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff="",
        conventions=("a count; the corpus value is the sum over queries (trec_eval)",),
        source="trec_eval num_ret", function="evalsuite.evaluate", pages=("Overview",), aggregate="sum", integer=True,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "num_ret"}, 3.0, "d3, d2, d1: 3"),),
    ),
    Metric(
        name="num_rel", title="Relevant docs", kind="ranking",
        summary="number of relevant docs in the qrels for the query (R)",
        formula="num_rel = R",
        aliases={"trec_eval": ("num_rel",), "ir_measures": ("NumRel",)},
        trec_whole="num_rel",
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff="",
        conventions=(_R, "a count; the corpus value is the sum over the evaluated queries (trec_eval; with -c and "
                     "-l above 1 trec_eval sums grades > 0 instead, which this does not copy)"),
        source="trec_eval num_rel", function="evalsuite.evaluate", pages=("Overview",), aggregate="sum", integer=True,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "num_rel"}, 2.0, "d1 (2), d3 (1); d4 (0) not: 2"),),
    ),
    Metric(
        name="num_rel_ret", title="Relevant docs retrieved", kind="ranking",
        summary="number of relevant docs in the whole ranked list",
        formula="num_rel_ret = |relevant docs retrieved|",
        aliases={"trec_eval": ("num_rel_ret",), "ir_measures": ("NumRelRet",)},
        trec_whole="num_rel_ret",
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff="",
        conventions=(_RELEVANT, "a count; the corpus value is the sum over queries (trec_eval); `hits` is the "
                     "same per query, averaged (ranx)"),
        source="trec_eval num_rel_ret", function="evalsuite.evaluate", pages=("Overview",), aggregate="sum",
        integer=True,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "num_rel_ret"}, 2.0, "d3 and d1 retrieved: 2"),),
        nothing_relevant=({**_NOTHING[0], "metric": "num_rel_ret"}, 0.0),
    ),
    Metric(
        name="dcg", title="DCG@k", kind="ranking",
        summary="discounted cumulative gain, not normalised (linear gains)",
        formula="DCG@k = sum over ranks i <= k of g_i / log2(i + 1)",
        aliases={"ranx": ("dcg@k",)},
        parse_names=("dcg",),
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff=_WHOLE,
        conventions=("gain = grade (linear); grades below rel_level get gain 0 (ranx)",),
        source="Järvelin & Kekäläinen, TOIS 2002; ranx dcg@k",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "dcg@10"}, 2.0,
                            "1/log2(2) [d3, g 1] + 0 [d2] + 2/log2(4) [d1, g 2] = 1 + 1 = 2"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "dcg@2"}, 1.0, "d3 only: 1/log2(2) = 1")),
        nothing_relevant=({**_NOTHING[0], "metric": "dcg@10"}, 0.0),
    ),
    Metric(
        name="dcg_burges", title="DCG@k (exponential gains)", kind="ranking",
        summary="discounted cumulative gain with gain 2^g - 1, not normalised",
        formula="DCG@k = sum over ranks i <= k of (2^g_i - 1) / log2(i + 1)",
        aliases={"ranx": ("dcg_burges@k",)},
        parse_names=("dcg_burges",),
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff=_WHOLE,
        conventions=("gain = 2^grade - 1; grades below rel_level get gain 0 (ranx)",),
        source="Burges et al., ICML 2005; ranx dcg_burges@k",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "dcg_burges@10"}, 2.5,
                            "(2^1-1)/log2(2) + (2^2-1)/log2(4) = 1 + 1.5 = 2.5"),),
        nothing_relevant=({**_NOTHING[0], "metric": "dcg_burges@10"}, 0.0),
    ),
    Metric(
        name="f1", title="F1@k", kind="ranking",
        summary="harmonic mean of P@k and R@k",
        formula="F1@k = 2 P@k R@k / (P@k + R@k)",
        aliases={"ranx": ("f1@k",), "trec_eval": ("set_F",)},
        parse_names=("f1",), trec_whole="set_F",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, _R, "P@k divided by k (by the docs retrieved without a cutoff), as ranx",
                     "0 when P@k + R@k = 0"),
        source="van Rijsbergen, Information Retrieval, 1979 (the F measure); ranx f1@k",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "f1@2"}, 0.5,
                            "P@2 = 1/2, R@2 = 1/2: 2 x 0.25 / 1 = 0.5"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "f1@10"}, 1 / 3,
                            "P@10 = 2/10, R@10 = 2/2: 2 x 0.2 / 1.2 = 0.3333")),
        perfect={**_PERFECT, "metric": "f1@2"}, nothing_relevant=({**_NOTHING[0], "metric": "f1@2"}, 0.0),
    ),
    Metric(
        name="rbp", title="RBP (persistence p)", kind="ranking",
        summary="rank-biased precision: gain a user with persistence p collects down the list",
        formula="RBP = (1 - p) sum over ranks i of g_i p^(i - 1)",
        aliases={"ranx": ("rbp.p",)},
        parse_names=("rbp",), param="persistence p, 0 < p < 1 (ranx `rbp.95` = 0.95)",
        higher_is_better=True, value_range=(0.0, float("inf")), cutoff="",
        conventions=("gain = grade for docs with grade >= rel_level, else 0, not normalised (ranx: a graded "
                     "qrels file can give values above 1); trec_eval's rbp scales gains to [0, 1] and is not "
                     "this entry",),
        source="Moffat & Zobel, Rank-biased precision for measurement of retrieval effectiveness, TOIS 2008; "
               "ranx rbp.p",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "rbp.5"}, 0.75,
                            "(1 - 0.5) x (1 x 0.5^0 [d3] + 2 x 0.5^2 [d1]) = 0.5 x 1.5 = 0.75"),
                 TestVector({"qrels": {"q1": {"d2": 1}}, "run": _RUN, "metric": "rbp@0.8"}, 0.2 * 0.8,
                            "d2 at rank 2: (1 - 0.8) x 0.8 = 0.16")),
        nothing_relevant=({**_NOTHING[0], "metric": "rbp.9"}, 0.0),
    ),
    Metric(
        name="err", title="ERR@k", kind="ranking",
        summary="expected reciprocal rank: a cascade user stops at a doc with probability set by its grade",
        formula="R_i = (2^g_i - 1) / 2^4; ERR@k = sum over ranks i <= k of (R_i / i) x prod over j < i of (1 - R_j)",
        aliases={"ir_measures": ("ERR@k",)},
        parse_names=("err",),
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=("maximum grade 4 (gdeval's MAX_JUDGMENT, which ir_measures runs); a higher grade is an error",
                     "grades below rel_level (and negative ones) give R = 0; at rel_level 1 as gdeval",
                     "no normalisation: a perfect ranking scores below 1"),
        source="Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank for graded relevance, CIKM 2009; "
               "ir_measures ERR@k (gdeval.pl, TREC Web track)",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "err@10"}, 1 / 16 + (15 / 16) * (3 / 16) / 3,
                            "d3 (g 1): R = 1/16, adds 1/16 / 1 = 0.0625; d2 unjudged: R = 0; d1 (g 2): R = 3/16, "
                            "adds (15/16) x (3/16) / 3 = 0.05859; ERR = 0.12109"),
                 TestVector({"qrels": {"q1": {"d3": 4}}, "run": _RUN, "metric": "err@1"}, 15 / 16,
                            "d3 grade 4 at rank 1: (2^4 - 1) / 2^4 = 0.9375")),
        nothing_relevant=({**_NOTHING[0], "metric": "err@10"}, 0.0),
    ),
    Metric(
        name="relative_precision", title="Relative P@k", kind="ranking",
        summary="P@k relative to the best possible at k: precision up to R, recall after",
        formula="relative_P@k = |relevant docs in the top k| / min(k, R); no cutoff: / min(docs retrieved, R)",
        aliases={"trec_eval": ("relative_P_k", "set_relative_P")},
        parse_names=("relative_precision", "relative_p"), trec_cut="relative_P", trec_whole="set_relative_P",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=(_RELEVANT, _R, "0 when R = 0"),
        source="trec_eval relative_P and set_relative_P", function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "relative_P_1"}, 1.0,
                            "top 1 = d3 (relevant): 1 / min(1, R = 2) = 1"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "relative_P_5"}, 1.0,
                            "top 5 holds d3 and d1: 2 / min(5, 2) = 1")),
        perfect={**_PERFECT, "metric": "relative_P_5"}, nothing_relevant=({**_NOTHING[0], "metric": "relative_P_5"}, 0.0),
    ),
    Metric(
        name="unjudged", title="Unjudged@k", kind="ranking",
        summary="share of the top k docs without a judgement (trec_eval's unj)",
        formula="unj@k = |docs in the top k without a judgement (or with a negative grade)| / k",
        aliases={"trec_eval": ("unj_k",)},
        parse_names=("unjudged", "unj"), trec_cut="unj",
        higher_is_better=False, value_range=(0.0, 1.0), cutoff=_WHOLE,
        conventions=("a negative grade counts as unjudged (trec_eval: in the pool but not judged)",
                     "divided by k even when fewer docs were returned (trec_eval; judged@k divides by the docs "
                     "retrieved); no cutoff: by the docs retrieved"),
        source="trec_eval 10 unj (Soboroff, 2023)", function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "unj_2"}, 0.5, "top 2 = d3 (judged), d2: 1 / 2"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "unj_5"}, 0.2,
                            "3 docs returned, d2 unjudged: 1 / 5 = 0.2 (k, not 3)")),
    ),
    Metric(
        name="num_nonrel_judged_ret", title="Judged non-relevant docs retrieved", kind="ranking",
        summary="number of retrieved docs judged not relevant",
        formula="num_nonrel_judged_ret = |retrieved docs with 0 <= grade < rel_level|",
        aliases={"trec_eval": ("num_nonrel_judged_ret",)},
        trec_whole="num_nonrel_judged_ret",
        higher_is_better=False, value_range=(0.0, float("inf")), cutoff="",
        conventions=("negative grades are not counted (trec_eval: unjudged)",
                     "a count; the corpus value is the sum over queries (trec_eval)"),
        source="trec_eval num_nonrel_judged_ret", function="evalsuite.evaluate", pages=("Overview",),
        aggregate="sum", integer=True,
        vectors=(TestVector({"qrels": {"q1": {"d1": 2, "d2": 0, "d3": -1}}, "run": _RUN,
                             "metric": "num_nonrel_judged_ret"}, 1.0,
                            "d3 (grade -1: unjudged), d2 (grade 0: counted), d1 (relevant): 1"),),
    ),
    Metric(
        name="set_map", title="Set MAP", kind="ranking",
        summary="unranked average precision: set precision times set recall",
        formula="set_map = num_rel_ret^2 / (num_ret x R)",
        aliases={"trec_eval": ("set_map",)},
        trec_whole="set_map",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "0 when nothing is retrieved or R = 0"),
        source="trec_eval set_map (exact_unranked_avg_prec of older versions)", function="evalsuite.evaluate",
        pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "set_map"}, 4 / 6,
                            "2 relevant of 3 retrieved, R = 2: 2^2 / (3 x 2) = 0.6667"),),
        perfect={**_PERFECT, "metric": "set_map"}, nothing_relevant=({**_NOTHING[0], "metric": "set_map"}, 0.0),
    ),
    Metric(
        name="utility", title="Utility", kind="ranking",
        summary="relevant docs retrieved minus non-relevant docs retrieved (trec_eval's default coefficients)",
        formula="utility = 1 x num_rel_ret - 1 x (num_ret - num_rel_ret)",
        aliases={"trec_eval": ("utility",)},
        trec_whole="utility",
        higher_is_better=True, value_range=(float("-inf"), float("inf")), cutoff="",
        conventions=(_RELEVANT, "trec_eval's default coefficients 1, -1, 0, 0 (other coefficients are not "
                     "supported)", "the corpus value is the mean over queries (trec_eval)"),
        source="trec_eval utility (TREC filtering track set utility)", function="evalsuite.evaluate",
        pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "utility"}, 1.0,
                            "2 relevant retrieved, 1 other (d2): 2 - 1 = 1"),),
    ),
    Metric(
        name="rprec_mult", title="P at a multiple of R", kind="ranking",
        summary="precision after x R docs (x = 1 is R-precision)",
        formula="Rprec_mult(x) = |relevant docs in the top c| / c, c = int(x R + 0.9)",
        aliases={"trec_eval": ("Rprec_mult_x",)},
        parse_names=("rprec_mult",), trec_param="Rprec_mult", param="multiple x of R, x >= 0",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "c = int(x R + 0.9) docs (trec_eval 10 kept its version 9 rounding here)",
                     "divided by c even when fewer docs were returned", "0 when c = 0"),
        source="trec_eval Rprec_mult", function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "Rprec_mult_0.50"}, 1.0,
                            "R = 2: c = int(1 + 0.9) = 1; top 1 = d3 (relevant): 1"),
                 TestVector({"qrels": _GRADED, "run": _RUN, "metric": "Rprec_mult_2.00"}, 0.5,
                            "c = int(4 + 0.9) = 4; 2 relevant in the top 4 (3 returned): 2 / 4")),
        perfect={**_PERFECT, "metric": "Rprec_mult_1.00"},
    ),
    Metric(
        name="pt11_avg", title="11-point average precision", kind="ranking",
        summary="interpolated precision averaged over the recall levels 0, 0.1, ..., 1",
        formula="11pt_avg = (1/11) sum over r in 0, 0.1, ..., 1 of iprec_at_recall(r)",
        aliases={"trec_eval": ("11pt_avg",)},
        trec_whole="11pt_avg",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("as iprec_at_recall at each of the 11 levels",),
        source="Salton & McGill, Introduction to Modern IR, 1983; trec_eval 11pt_avg", function="evalsuite.evaluate",
        pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "11pt_avg"}, (8 * 1 + 3 * 2 / 3) / 11,
                            "R = 2, relevant at ranks 1 (P 1) and 3 (P 2/3): levels 0 to 0.7 round to j <= 1 -> 1 "
                            "(8 levels), 0.8 to 1 to j = 2 -> 2/3 (3 levels): (8 + 2) / 11 = 0.9091"),),
        perfect={**_PERFECT, "metric": "11pt_avg"}, nothing_relevant=({**_NOTHING[0], "metric": "11pt_avg"}, 0.0),
    ),
    Metric(
        name="gm_bpref", title="GM-bpref", kind="ranking",
        summary="bpref averaged over queries with the geometric mean",
        formula="gm_bpref = exp(mean over queries of log(max(bpref, 0.00001)))",
        aliases={"trec_eval": ("gm_bpref",)},
        trec_whole="gm_bpref",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("per query: bpref; the corpus value is the geometric mean with every value floored at "
                     "0.00001 (trec_eval)",),
        source="trec_eval gm_bpref", function="evalsuite.evaluate", pages=("Overview", "Per-query"),
        aggregate="geometric",
        vectors=(TestVector({"qrels": {**_GRADED, "q2": {"x": 1}}, "run": {**_RUN, "q2": {"y": 1.0}},
                             "metric": "gm_bpref"}, math.sqrt(1e-5),
                            "bpref q1 = 1, q2 = 0 -> 0.00001: sqrt(1 x 0.00001) = 0.0031623"),),
        perfect={**_PERFECT, "metric": "gm_bpref"}, nothing_relevant=({**_NOTHING[0], "metric": "gm_bpref"}, 1e-5),
    ),
    Metric(
        name="infap", title="infAP", kind="ranking",
        summary="average precision inferred from a random sample of the pool (negative grades: pooled, unjudged)",
        formula="infAP = (1/R) sum over relevant retrieved at 0-based rank j of E[P@j+1]: 1 at j = 0, else "
                "1/(j+1) + (j/(j+1)) (|judged or pooled above| / j) (rel above + e) / (rel above + nonrel above + 2e)",
        aliases={"trec_eval": ("infAP",)},
        parse_names=("infap",), trec_whole="infAP",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "a negative grade marks a pooled doc left unjudged (trec_eval); e = 0.00001",
                     "AP but for the e terms when the qrels have no negative grade"),
        source="Yilmaz & Aslam, Estimating average precision with incomplete and imperfect judgments, CIKM 2006; "
               "trec_eval infAP",
        function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "infAP"},
                            (1 + 1 / 3 + (2 / 3) * (1 / 2) * (1 + 1e-5) / (1 + 2e-5)) / 2,
                            "d3 at j = 0: 1; d1 at j = 2 (d2, outside the pool, is skipped; 1 relevant above): "
                            "1/3 + (2/3) x (1/2) x (1 + e) / (1 + 2e) = 0.6666650; (1 + 0.6666650) / 2 = 0.8333317 "
                            "(AP 0.8333 but for e)"),
                 TestVector({"qrels": {"q1": {"d3": -1, "d1": 1}}, "run": _RUN, "metric": "infAP"},
                            1 / 3 + (2 / 3) * (1 / 2) * (1e-5 / 2e-5),
                            "d3 pooled unjudged, d2 outside the pool, d1 relevant at j = 2: 1/3 + (2/3) x (1 pooled "
                            "above / 2) x (0 + e) / (0 + 0 + 2e) = 1/3 + 1/6 = 0.5")),
        nothing_relevant=({**_NOTHING[0], "metric": "infAP"}, 0.0),  # a perfect ranking scores 1 - O(e)
    ),
    Metric(
        name="bin_g", title="binG", kind="ranking",
        summary="binary gain discounted by the non-relevant docs seen before each relevant one",
        formula="binG = (1/R) sum over relevant retrieved r of 1 / log2(2 + |docs above r not relevant|)",
        aliases={"trec_eval": ("binG",)},
        trec_whole="binG",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=(_RELEVANT, _R, "unjudged docs count as not relevant"),
        source="trec_eval binG (Buckley, an experimental measure of trec_eval 9)", function="evalsuite.evaluate",
        pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "binG"}, (1 + 1 / 1.584962500721156) / 2,
                            "d3 at rank 1: 1/log2(2) = 1; d1 after d2: 1/log2(3) = 0.63093; (1 + 0.63093) / 2 = "
                            "0.81546"),),
        perfect={**_PERFECT, "metric": "binG"}, nothing_relevant=({**_NOTHING[0], "metric": "binG"}, 0.0),
    ),
    Metric(
        name="g", title="G", kind="ranking",
        summary="gain discounted by the cost paid beyond the gain collected, over the ideal gain (trec_eval's G)",
        formula="G = (sum over ranks i of g_i / log2(2 + cost_i - gain_i)) / sum of ideal gains; cost_i = sum over "
                "ranks <= i of max(ideal gain, 1) (1 past the ideal list), gain_i = gains collected down to i",
        aliases={"trec_eval": ("G",)},
        trec_whole="G",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("gain = grade for docs with grade >= rel_level, else 0 (trec_eval's default gains; it ignores "
                     "-l here)", "0 when R = 0"),
        source="trec_eval G (Buckley, an experimental measure of trec_eval 9)", function="evalsuite.evaluate",
        pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "G"}, 1 / 1.584962500721156,
                            "ideal gains 2, 1, then cost 1 a rank: cost 2, 3, 4; gain collected 1, 1, 3; d3 (g 1): "
                            "1/log2(2 + 2 - 1); d1 (g 2): 2/log2(2 + 4 - 3); (3 / log2(3)) / (2 + 1) = 0.63093"),),
        nothing_relevant=({**_NOTHING[0], "metric": "G"}, 0.0),
    ),
    Metric(
        name="ndcg_rel", title="nDCG over relevant ranks", kind="ranking",
        summary="nDCG averaged over the ranks of the relevant docs (a relevant doc not retrieved counts the final nDCG)",
        formula="ndcg_rel = (1/R) (sum over relevant retrieved at rank i of DCG@i / IDCG@min(i, R) + (R - relevant "
                "retrieved) DCG / IDCG)",
        aliases={"trec_eval": ("ndcg_rel",)},
        trec_whole="ndcg_rel",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("gain = grade for docs with grade >= rel_level, else 0 (trec_eval ignores -l here)",
                     "0 when R = 0"),
        source="trec_eval ndcg_rel", function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "ndcg_rel"},
                            (1 / 2 + 2 / (2 + 1 / 1.584962500721156)) / 2,
                            "d3 at rank 1: DCG 1 / IDCG@1 2 = 0.5; d1 at rank 3: DCG 2 / IDCG 2.63093 = 0.76019; "
                            "(0.5 + 0.76019) / 2 = 0.63010"),),
        perfect={**_PERFECT, "metric": "ndcg_rel"}, nothing_relevant=({**_NOTHING[0], "metric": "ndcg_rel"}, 0.0),
    ),
    Metric(
        name="rndcg", title="Rndcg", kind="ranking",
        summary="nDCG averaged over the ranks where the ideal gain drops (and at the end of a long ranking)",
        formula="Rndcg = mean over b in B of DCG over the first min(b, docs retrieved) / IDCG@b, B = ranks after which "
                "the ideal gain changes (R included), plus DCG / IDCG of the whole ranking when it has R + 2 docs or more",
        aliases={"trec_eval": ("Rndcg",)},
        trec_whole="Rndcg",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("gain = grade for docs with grade >= rel_level, else 0 (trec_eval ignores -l here)",
                     "0 when R = 0"),
        source="trec_eval Rndcg", function="evalsuite.evaluate", pages=_RANKING_PAGES,
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "Rndcg"},
                            (1 / 2 + 1 / (2 + 1 / 1.584962500721156)) / 2,
                            "ideal gains 2, 1: B = {1, 2}; b = 1: DCG of d3 = 1 / IDCG 2 = 0.5; b = 2: DCG of d3, d2 = 1 "
                            "/ 2.63093 = 0.38009; 3 docs < R + 2 = 4: no end point; (0.5 + 0.38009) / 2 = 0.44005"),),
        perfect={**_PERFECT, "metric": "Rndcg"}, nothing_relevant=({**_NOTHING[0], "metric": "Rndcg"}, 0.0),
    ),
    Metric(
        name="rbp_trec", title="RBP (trec_eval, p = 0.9)", kind="ranking",
        summary="trec_eval's rank-biased precision: persistence 0.9, gains scaled into [0, 1]",
        formula="rbp = 0.1 sum over ranks i of (g_i / max(1, highest judged grade of the query)) 0.9^(i - 1)",
        aliases={"trec_eval": ("rbp",)},
        trec_whole="rbp",
        higher_is_better=True, value_range=(0.0, 1.0), cutoff="",
        conventions=("gain = grade / the query's highest judged grade when that is above 1 (trec_eval scales gains "
                     "into [0, 1]); grades below rel_level give 0 (trec_eval ignores -l here)",
                     "the same as ranx's rbp.9 on binary qrels; `rbp.p` is ranx's (unscaled grades)"),
        source="Moffat & Zobel, TOIS 2008; trec_eval 10 rbp", function="evalsuite.evaluate", pages=("Overview",),
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "rbp"}, 0.1 * (1 / 2 + (2 / 2) * 0.81),
                            "highest grade 2: gains 1/2 (d3, rank 1), 2/2 (d1, rank 3): 0.1 x (0.5 + 1 x 0.9^2) = "
                            "0.131"),),
        nothing_relevant=({**_NOTHING[0], "metric": "rbp"}, 0.0),
    ),
    Metric(
        name="rbp_resid", title="RBP residual (trec_eval)", kind="ranking",
        summary="how much trec_eval's rbp could rise if every unjudged doc retrieved were fully relevant",
        formula="rbp_resid = 0.9^N + 0.1 sum over unjudged ranks i of 0.9^(i - 1), N = docs retrieved; 0 when no doc "
                "retrieved is unjudged",
        aliases={"trec_eval": ("rbp_resid",)},
        trec_whole="rbp_resid",
        higher_is_better=False, value_range=(0.0, 1.0), cutoff="",
        conventions=("unjudged = no judgement or a negative grade (trec_eval)", "the tail past the ranking (0.9^N) "
                     "counts only when some retrieved doc is unjudged (trec_eval)"),
        source="Moffat & Zobel, TOIS 2008; trec_eval 10 rbp_resid", function="evalsuite.evaluate", pages=("Overview",),
        vectors=(TestVector({"qrels": _GRADED, "run": _RUN, "metric": "rbp_resid"}, 0.9 ** 3 + 0.1 * 0.9,
                            "d2 unjudged at rank 2: 0.9^3 + 0.1 x 0.9 = 0.819"),),
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
TREC_PRINT_ORDER = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                    "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
                    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
                    "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj")
TREC_FAMILY_CUTOFFS = {
    "Rprec_mult": (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    "relative_P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "unj": (5, 10, 20),
    "iprec_at_recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
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
