"""The ranking kernel: every ranking metric of the registry, vectorised over all queries.

Every metric is computed from one flat representation, :class:`JudgedRanking`: the retrieved
docs of all queries in rank order, each with its judged grade, plus the judged grades of each
query for the ideal ranking. Per-query values come from ``numpy.bincount`` over those rows, so
there is no Python loop over queries or docs. The list functions
(:mod:`evalsuite.metrics.ranking`: ``precision_at_k`` ...) build that representation from Python
lists; ``evaluate`` builds it from run and qrels files.

Conventions (``docs/conventions.md``, generated from the registry): a doc is relevant when its grade is
>= ``rel_level`` (grades <= 0 never are); R counts judged docs with grade >= ``rel_level``;
P@k divides by k even when fewer docs were returned; MAP@k divides by R (trec_eval map_cut,
ranx map@k), not by min(R, k) as Spark and ml_metrics do; nDCG's ideal ranking uses every judged
doc with grade >= ``rel_level``, best first, cut at k; a query with no relevant doc scores 0
on every metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import EvalSuiteError
from ..utils.checks import check_rel_level, group_positions
from .names import MetricSpec
from .registry import METRICS

__all__ = ["JudgedRanking", "RankingKernel", "compute_metrics", "corpus_value", "CONVENTIONS"]

INFAP_EPSILON = 0.00001  # trec_eval.h
TREC_RBP_P = 0.9  # trec_eval rbp's default persistence
ERR_MAX_GRADE = 4  # gdeval.pl's MAX_JUDGMENT, which ir_measures' ERR@k runs

# Rule of each ranking metric, from the registry (what reports and Score.params carry).
CONVENTIONS = {
    "relevant": "grade >= rel_level; grades <= 0 are never relevant (gain 0)",
    **{m.name: m.convention for m in METRICS.values() if m.kind == "ranking"},
}


@dataclass(frozen=True)
class JudgedRanking:
    """Retrieved docs of ``n_queries`` queries in rank order, joined with their judgements.

    Attributes
    ----------
    n_queries : int
        Number of queries (query index 0 .. n_queries - 1).
    row_query : ndarray, shape (n_rows,), int64
        Query index of each retrieved doc, non-decreasing.
    row_rank : ndarray, shape (n_rows,), int64
        0-based rank of the doc within its query.
    row_grade : ndarray, shape (n_rows,), float64
        Judged grade of the doc, 0 when it has no judgement.
    row_judged : ndarray, shape (n_rows,), bool
        Whether the doc has a judgement for its query (any grade).
    n_retrieved : ndarray, shape (n_queries,), int64
        Number of docs retrieved per query.
    judged_query : ndarray, shape (n_judged,), int64
        Query index of each judgement, sorted by query then grade descending.
    judged_grade : ndarray, shape (n_judged,), float64
        Grade of each judgement, in that order.
    """

    n_queries: int
    row_query: np.ndarray
    row_rank: np.ndarray
    row_grade: np.ndarray
    row_judged: np.ndarray
    n_retrieved: np.ndarray
    judged_query: np.ndarray
    judged_grade: np.ndarray


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0."""
    out = np.zeros(numerator.shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


class RankingKernel:
    """Computes metrics over one JudgedRanking, sharing masks and counts between metrics.

    One method per kernel; each registry entry names its method (``METRICS[name].kernel``) and
    the fixed arguments it takes (``kernel_arguments``), and :meth:`compute` dispatches by them.
    """

    def __init__(self, judged: JudgedRanking, rel_level: float) -> None:
        self.j = judged
        self.rel_level = rel_level
        self.relevant = judged.row_grade >= rel_level
        self._cut_cache: dict[int | None, np.ndarray] = {}
        self._hits_cache: dict[int | None, np.ndarray] = {}
        ideal_mask = judged.judged_grade >= rel_level
        self.ideal_query = judged.judged_query[ideal_mask]
        self.ideal_grade = judged.judged_grade[ideal_mask]
        self.ideal_rank = group_positions(self.ideal_query)
        self.n_relevant = np.bincount(self.ideal_query, minlength=judged.n_queries).astype(np.float64)
        self._first: np.ndarray | None = None
        self._interpolated: tuple | None = None

    def _bincount(self, rows: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(self.j.row_query[rows] if rows is not None else self.j.row_query,
                           weights=weights, minlength=self.j.n_queries).astype(np.float64)

    def relevant_rows(self, k: int | None) -> np.ndarray:
        """Indices of relevant rows within the top k (all ranks when k is None)."""
        if k not in self._cut_cache:
            mask = self.relevant if k is None else self.relevant & (self.j.row_rank < k)
            self._cut_cache[k] = np.flatnonzero(mask)
        return self._cut_cache[k]

    def hits(self, k: int | None) -> np.ndarray:
        """Per-query Hits@k: number of relevant docs in the top k (its entry: ``METRICS["hits"]``)."""
        if k not in self._hits_cache:
            self._hits_cache[k] = self._bincount(self.relevant_rows(k))
        return self._hits_cache[k]

    def precision(self, k: int | None) -> np.ndarray:
        """Per-query P@k: share of the top k docs that are relevant (its entry: ``METRICS["precision"]``)."""
        if k is None:
            return _safe_divide(self.hits(None), self.j.n_retrieved.astype(np.float64))
        return self.hits(k) / k

    def recall(self, k: int | None) -> np.ndarray:
        """Per-query R@k: share of the relevant docs found in the top k (its entry: ``METRICS["recall"]``)."""
        return _safe_divide(self.hits(k), self.n_relevant)

    def hit_rate(self, k: int | None) -> np.ndarray:
        """Per-query Hit rate@k: whether any relevant doc is in the top k (its entry: ``METRICS["hit_rate"]``)."""
        return (self.hits(k) > 0).astype(np.float64)

    def mrr(self, k: int | None) -> np.ndarray:
        """Per-query MRR@k: reciprocal rank of the first relevant doc (its entry: ``METRICS["mrr"]``)."""
        rows = self.relevant_rows(k)
        out = np.zeros(self.j.n_queries, dtype=np.float64)
        if rows.size:
            queries = self.j.row_query[rows]
            first = rows[np.concatenate(([True], queries[1:] != queries[:-1]))]
            out[self.j.row_query[first]] = 1.0 / (self.j.row_rank[first] + 1)
        return out

    def map(self, k: int | None) -> np.ndarray:
        """Per-query MAP@k: average precision at the ranks of the relevant docs (its entry: ``METRICS["map"]``)."""
        rows = self.relevant_rows(k)
        queries = self.j.row_query[rows]
        precision_at_hit = (group_positions(queries) + 1) / (self.j.row_rank[rows] + 1)
        total = np.bincount(queries, weights=precision_at_hit, minlength=self.j.n_queries)
        return _safe_divide(total, self.n_relevant)

    def _gain(self, grades: np.ndarray, exponential: bool) -> np.ndarray:
        return np.exp2(grades) - 1.0 if exponential else grades

    def ndcg(self, k: int | None, exponential: bool) -> np.ndarray:
        """Per-query nDCG@k: discounted gain of the ranking against the ideal ranking (linear gains) (its entry:
        ``METRICS["ndcg"]``)."""
        rows = self.relevant_rows(k)
        discount = 1.0 / np.log2(self.j.row_rank[rows] + 2.0)
        dcg = np.bincount(self.j.row_query[rows], weights=self._gain(self.j.row_grade[rows], exponential) * discount,
                          minlength=self.j.n_queries)
        ideal = slice(None) if k is None else self.ideal_rank < k
        ideal_discount = 1.0 / np.log2(self.ideal_rank[ideal] + 2.0)
        idcg = np.bincount(self.ideal_query[ideal], weights=self._gain(self.ideal_grade[ideal], exponential) * ideal_discount,
                           minlength=self.j.n_queries)
        return _safe_divide(dcg, idcg)

    def judged(self, k: int | None) -> np.ndarray:
        """Per-query Judged@k: share of the top k docs that have a judgement (holes in the qrels) (its entry:
        ``METRICS["judged"]``)."""
        mask = self.j.row_judged if k is None else self.j.row_judged & (self.j.row_rank < k)
        counts = np.bincount(self.j.row_query[mask], minlength=self.j.n_queries).astype(np.float64)
        shown = self.j.n_retrieved if k is None else np.minimum(self.j.n_retrieved, k)
        return _safe_divide(counts, shown.astype(np.float64))

    # trec_eval's summary counts and whole-list measures (trec_eval 10's m_*.c, one loop per query
    # there; one pass over all rows here).

    def num_ret(self, k: int | None) -> np.ndarray:
        """Per-query Docs retrieved: number of docs the run returned for the query (trec_eval's summary line)
        (its entry: ``METRICS["num_ret"]``)."""
        return self.j.n_retrieved.astype(np.float64)

    def num_rel(self, k: int | None) -> np.ndarray:
        """Per-query Relevant docs: number of relevant docs in the qrels for the query (R) (its entry:
        ``METRICS["num_rel"]``)."""
        return self.n_relevant.copy()

    def num_rel_ret(self, k: int | None) -> np.ndarray:
        """Per-query Relevant docs retrieved: number of relevant docs in the whole ranked list (its entry:
        ``METRICS["num_rel_ret"]``)."""
        return self.hits(None)

    def gm_map(self, k: int | None) -> np.ndarray:
        """Per-query GM-MAP: average precision, averaged over queries with the geometric mean (rewards
        consistency) (its entry: ``METRICS["gm_map"]``)."""
        return self.map(None)

    def _first_row(self) -> np.ndarray:
        """Index of each query's first row (n_queries,), -1 when it has no rows."""
        if self._first is None:
            first = np.full(self.j.n_queries, -1, dtype=np.int64)
            if self.j.row_query.size:
                starts = np.flatnonzero(np.concatenate(([True], self.j.row_query[1:] != self.j.row_query[:-1])))
                first[self.j.row_query[starts]] = starts
            self._first = first
        return self._first

    def r_precision(self, k: int | None) -> np.ndarray:
        """Per-query R-precision: precision at rank R, the number of relevant docs (its entry:
        ``METRICS["r_precision"]``)."""
        rows = self.relevant_rows(None)
        inside = rows[self.j.row_rank[rows] < self.n_relevant[self.j.row_query[rows]]]
        return _safe_divide(self._bincount(inside), self.n_relevant)

    def bpref(self, k: int | None) -> np.ndarray:
        """Per-query bpref: how often relevant docs are ranked above judged non-relevant ones (unjudged docs
        ignored) (its entry: ``METRICS["bpref"]``)."""
        j = self.j
        nonrel = j.row_judged & (j.row_grade >= 0) & (j.row_grade < self.rel_level)
        nonrel_above = self._above(nonrel.astype(np.float64))  # judged non-relevant rows above each row
        judged_nonrel = (self.j.judged_grade >= 0) & (self.j.judged_grade < self.rel_level)
        n_nonrel = np.bincount(self.j.judged_query[judged_nonrel], minlength=j.n_queries).astype(np.float64)
        rows = self.relevant_rows(None)
        q = j.row_query[rows]
        above = nonrel_above[rows].astype(np.float64)
        r = self.n_relevant[q]
        denominator = np.minimum(n_nonrel[q], r)
        share = np.zeros(rows.size)
        np.divide(np.minimum(above, r), denominator, out=share, where=above > 0)
        return _safe_divide(np.bincount(q, weights=1.0 - share, minlength=j.n_queries), self.n_relevant)

    def iprec_at_recall(self, level: float) -> np.ndarray:
        """trec_eval's interpolated precision at recall ``level`` (m_iprec_at_recall.c).

        The registry holds its definition, source and conventions (its entry: ``METRICS["iprec_at_recall"]``).
        """
        if self._interpolated is None:
            rows = self.relevant_rows(None)
            q = self.j.row_query[rows]
            position = group_positions(q)  # 0-based j - 1 among the query's relevant retrieved docs
            precision = (position + 1) / (self.j.row_rank[rows] + 1)
            # Max of the precision at this and every later relevant doc of the query, exactly: over the
            # rank of each value among all values, shifted per query so one accumulate runs over all.
            values, value_rank = np.unique(precision, return_inverse=True)
            shift = (q.max() - q if q.size else q).astype(np.int64) * (values.size + 1)
            key = (value_rank + shift)[::-1]
            interpolated = values[(np.maximum.accumulate(key) - shift[::-1])[::-1]] if q.size else precision
            n_rel_ret = np.bincount(q, minlength=self.j.n_queries)
            first = np.full(self.j.n_queries, -1, dtype=np.int64)
            starts = np.flatnonzero(position == 0)
            first[q[starts]] = starts
            self._interpolated = interpolated, n_rel_ret, first
        interpolated, n_rel_ret, first = self._interpolated
        needed = np.floor(level * self.n_relevant + 0.5).astype(np.int64)  # lround; level * R >= 0
        out = np.zeros(self.j.n_queries)
        ok = (n_rel_ret > 0) & (needed <= n_rel_ret)
        out[ok] = interpolated[first[ok] + np.maximum(needed[ok], 1) - 1]
        return out

    def dcg(self, k: int | None, exponential: bool = False) -> np.ndarray:
        """Per-query DCG@k: discounted cumulative gain, not normalised (linear gains) (its entry:
        ``METRICS["dcg"]``)."""
        rows = self.relevant_rows(k)
        discount = 1.0 / np.log2(self.j.row_rank[rows] + 2.0)
        return np.bincount(self.j.row_query[rows], weights=self._gain(self.j.row_grade[rows], exponential) * discount,
                           minlength=self.j.n_queries)

    def f1(self, k: int | None) -> np.ndarray:
        """Per-query F1@k: harmonic mean of P@k and R@k (its entry: ``METRICS["f1"]``)."""
        precision = self.precision(k)
        recall = self.recall(k)
        return _safe_divide(2 * precision * recall, precision + recall)

    def rbp(self, p: float) -> np.ndarray:
        """Per-query RBP (persistence p): rank-biased precision: gain a user with persistence p collects down
        the list (its entry: ``METRICS["rbp"]``)."""
        rows = self.relevant_rows(None)
        weights = self.j.row_grade[rows] * np.power(p, self.j.row_rank[rows].astype(np.float64)) * (1.0 - p)
        return np.bincount(self.j.row_query[rows], weights=weights, minlength=self.j.n_queries)

    def set_map(self, k: int | None) -> np.ndarray:
        """Per-query Set MAP: unranked average precision: set precision times set recall (its entry:
        ``METRICS["set_map"]``)."""
        return self.precision(None) * self.recall(None)

    def relative_precision(self, k: int | None) -> np.ndarray:
        """Per-query Relative P@k: P@k relative to the best possible at k: precision up to R, recall after (its
        entry: ``METRICS["relative_precision"]``)."""
        shown = self.j.n_retrieved if k is None else np.full(self.j.n_queries, k)
        return _safe_divide(self.hits(k), np.minimum(shown, self.n_relevant).astype(np.float64))

    def unjudged(self, k: int | None) -> np.ndarray:
        """Per-query Unjudged@k: share of the top k docs without a judgement (trec_eval's unj) (its entry:
        ``METRICS["unjudged"]``)."""
        unjudged = ~self.j.row_judged | (self.j.row_grade < 0)
        mask = unjudged if k is None else unjudged & (self.j.row_rank < k)
        counts = np.bincount(self.j.row_query[mask], minlength=self.j.n_queries).astype(np.float64)
        return _safe_divide(counts, self.j.n_retrieved.astype(np.float64)) if k is None else counts / k

    def num_nonrel_judged_ret(self, k: int | None) -> np.ndarray:
        """Per-query Judged non-relevant docs retrieved: number of retrieved docs judged not relevant (its
        entry: ``METRICS["num_nonrel_judged_ret"]``)."""
        mask = self.j.row_judged & (self.j.row_grade >= 0) & ~self.relevant
        return np.bincount(self.j.row_query[mask], minlength=self.j.n_queries).astype(np.float64)

    def utility(self, k: int | None) -> np.ndarray:
        """Per-query Utility: relevant docs retrieved minus non-relevant docs retrieved (trec_eval's default
        coefficients) (its entry: ``METRICS["utility"]``)."""
        return 2 * self.hits(None) - self.j.n_retrieved

    def rprec_mult(self, multiple: float) -> np.ndarray:
        """Per-query P at a multiple of R: precision after x R docs (x = 1 is R-precision) (its entry:
        ``METRICS["rprec_mult"]``)."""
        docs = (multiple * self.n_relevant + 0.9).astype(np.int64)  # trec_eval: (long) (x R + 0.9)
        rows = self.relevant_rows(None)
        inside = rows[self.j.row_rank[rows] < docs[self.j.row_query[rows]]]
        return _safe_divide(self._bincount(inside), docs.astype(np.float64))

    def pt11_avg(self, k: int | None) -> np.ndarray:
        """Per-query 11-point average precision: interpolated precision averaged over the recall levels 0, 0.1,
        ..., 1 (its entry: ``METRICS["pt11_avg"]``)."""
        return np.mean([self.iprec_at_recall(level / 10) for level in range(11)], axis=0)

    def gm_bpref(self, k: int | None) -> np.ndarray:
        """Per-query GM-bpref: bpref averaged over queries with the geometric mean (its entry:
        ``METRICS["gm_bpref"]``)."""
        return self.bpref(None)

    def infap(self, k: int | None) -> np.ndarray:
        """trec_eval's infAP (m_infap.c): AP estimated from a sample of the pool, negative grades
        marking pooled docs left unjudged.

        The registry holds its definition, source and conventions (its entry: ``METRICS["infap"]``).
        """
        j = self.j
        judged_nonrel = j.row_judged & (j.row_grade >= 0) & ~self.relevant
        pool_unjudged = j.row_judged & (j.row_grade < 0)
        nonrel_above = self._above(judged_nonrel.astype(np.float64))
        unjudged_above = self._above(pool_unjudged.astype(np.float64))
        rows = self.relevant_rows(None)
        rank = j.row_rank[rows].astype(np.float64)
        rel_above = group_positions(j.row_query[rows]).astype(np.float64)
        nonrel, unjudged = nonrel_above[rows], unjudged_above[rows]
        safe_rank = np.maximum(rank, 1.0)
        later = 1.0 / (rank + 1.0) + (rank / (rank + 1.0)) * ((rel_above + nonrel + unjudged) / safe_rank) * (
            (rel_above + INFAP_EPSILON) / (rel_above + nonrel + 2 * INFAP_EPSILON))
        value = np.where(rank == 0, 1.0, later)
        return _safe_divide(np.bincount(j.row_query[rows], weights=value, minlength=j.n_queries), self.n_relevant)

    def bin_g(self, k: int | None) -> np.ndarray:
        """trec_eval's binG: (1/R) sum over relevant retrieved of 1 / log2(2 + docs above it not relevant).

        The registry holds its definition, source and conventions (its entry: ``METRICS["bin_g"]``).
        """
        rows = self.relevant_rows(None)
        q = self.j.row_query[rows]
        not_relevant_above = self.j.row_rank[rows] - group_positions(q)
        weights = 1.0 / np.log2(2.0 + not_relevant_above)
        return _safe_divide(np.bincount(q, weights=weights, minlength=self.j.n_queries), self.n_relevant)

    def _trec_gains(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row its gain (grade when relevant, else 0), the ideal gains' per-query running sums
        of gain / log2(i + 2) and of gain, indexed like ``self.ideal_*``."""
        gain = np.where(self.relevant, self.j.row_grade, 0.0)
        discount = 1.0 / np.log2(self.ideal_rank + 2.0)
        ideal_dcg = self._grouped_cumsum(self.ideal_grade * discount, self.ideal_query)
        ideal_sum = self._grouped_cumsum(self.ideal_grade, self.ideal_query)
        return gain, ideal_dcg, ideal_sum

    def _grouped_cumsum(self, values: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Running sums of ``values`` within each run of equal ``query`` (sorted by query)."""
        total = np.cumsum(values)
        if not values.size:
            return total
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        offset = np.repeat(total[starts] - values[starts], np.diff(np.append(starts, values.size)))
        return total - offset

    def _ideal_first(self) -> np.ndarray:
        first = np.full(self.j.n_queries, -1, dtype=np.int64)
        starts = np.flatnonzero(self.ideal_rank == 0)
        first[self.ideal_query[starts]] = starts
        return first

    def ndcg_rel(self, k: int | None) -> np.ndarray:
        """trec_eval's ndcg_rel (m_ndcg_rel.c): nDCG averaged over the ranks of the relevant docs,
        the relevant docs not retrieved counting the final nDCG.

        The registry holds its definition, source and conventions (its entry: ``METRICS["ndcg_rel"]``).
        """
        j = self.j
        gain, ideal_dcg, _ = self._trec_gains()
        dcg = self._grouped_cumsum(gain / np.log2(j.row_rank + 2.0), j.row_query)
        first = self._ideal_first()
        r = self.n_relevant.astype(np.int64)
        idcg_total = np.zeros(j.n_queries)
        has = r > 0
        idcg_total[has] = ideal_dcg[first[has] + r[has] - 1]
        rows = np.flatnonzero(gain > 0)
        q = j.row_query[rows]
        at = np.minimum(j.row_rank[rows], r[q] - 1)
        total = np.bincount(q, weights=dcg[rows] / ideal_dcg[first[q] + at], minlength=j.n_queries)
        dcg_total = np.zeros(j.n_queries)
        ends = np.flatnonzero(np.concatenate((j.row_query[1:] != j.row_query[:-1], [True]))) if j.row_query.size else \
            np.zeros(0, dtype=np.int64)
        dcg_total[j.row_query[ends]] = dcg[ends]
        missing = r - np.bincount(q, minlength=j.n_queries)
        total = total + _safe_divide(missing * dcg_total, idcg_total)
        return _safe_divide(total, self.n_relevant)

    def g(self, k: int | None) -> np.ndarray:
        """trec_eval's G (m_G.c): gain discounted by log2 of the cost paid so far beyond the gain
        collected, over the ideal total gain.

        The registry holds its definition, source and conventions (its entry: ``METRICS["g"]``).
        """
        j = self.j
        gain, _, ideal_sum = self._trec_gains()
        first = self._ideal_first()
        r = self.n_relevant.astype(np.int64)
        q = j.row_query
        rank = j.row_rank
        # cost paid down to each rank: the ideal gain there (at least 1), 1 per rank past the ideal list
        cost_ideal = self._grouped_cumsum(np.maximum(self.ideal_grade, 1.0), self.ideal_query)
        rq = r[q]
        has_ideal = rq > 0
        cost_at = np.zeros(q.size)
        cost_at[has_ideal] = cost_ideal[first[q[has_ideal]] + np.minimum(rank[has_ideal], rq[has_ideal] - 1)]
        sum_cost = cost_at + np.maximum(rank - rq + 1, 0)
        sum_results = self._grouped_cumsum(gain, q)
        rows = np.flatnonzero(gain != 0)
        weights = gain[rows] / np.log2(2.0 + sum_cost[rows] - sum_results[rows])
        total = np.bincount(q[rows], weights=weights, minlength=j.n_queries)
        ideal_total = np.zeros(j.n_queries)
        has = r > 0
        ideal_total[has] = ideal_sum[first[has] + r[has] - 1]
        return _safe_divide(total, ideal_total)

    def rndcg(self, k: int | None) -> np.ndarray:
        """trec_eval's Rndcg (m_Rndcg.c): nDCG averaged over the ranks where the ideal gain drops
        (and at the end of a ranking longer than R + 1).

        The registry holds its definition, source and conventions (its entry: ``METRICS["rndcg"]``).
        """
        j = self.j
        gain, ideal_dcg, _ = self._trec_gains()
        dcg = self._grouped_cumsum(gain / np.log2(j.row_rank + 2.0), j.row_query)
        r = self.n_relevant.astype(np.int64)
        n = j.n_retrieved.astype(np.int64)
        rows_first = self._first_row()

        def dcg_before(query: np.ndarray, count: np.ndarray) -> np.ndarray:
            # DCG over the first ``count`` retrieved docs of each query
            out = np.zeros(query.size)
            ok = count > 0
            out[ok] = dcg[rows_first[query[ok]] + count[ok] - 1]
            return out

        # Boundaries b in 1..R where the ideal gain changes (b = R: it drops to 0).
        iq, ig, irank = self.ideal_query, self.ideal_grade, self.ideal_rank
        next_grade = np.append(ig[1:], 0.0)
        next_same_query = np.append(iq[1:] == iq[:-1], False)
        change = ~next_same_query | (next_grade != ig)
        b_query = iq[change]
        b = irank[change] + 1
        b_idcg = ideal_dcg[change]  # IDCG over ranks < b
        ratio = dcg_before(b_query, np.minimum(b, n[b_query])) / b_idcg
        total = np.bincount(b_query, weights=ratio, minlength=j.n_queries).astype(np.float64)
        count = np.bincount(b_query, minlength=j.n_queries).astype(np.float64)
        extra = (n >= r + 2) & (r > 0)
        eq = np.flatnonzero(extra)
        first = self._ideal_first()
        total[eq] += dcg_before(eq, n[eq]) / ideal_dcg[first[eq] + r[eq] - 1]
        count[eq] += 1
        return _safe_divide(total, count)

    def rbp_trec(self, k: int | None) -> np.ndarray:
        """trec_eval's rbp (m_rbp.c): p = 0.9, gains = grades scaled into [0, 1] by the query's
        highest judged grade when it is above 1.

        The registry holds its definition, source and conventions (its entry: ``METRICS["rbp_trec"]``).
        """
        j = self.j
        top = np.ones(j.n_queries)
        if j.judged_query.size:
            starts = np.flatnonzero(np.concatenate(([True], j.judged_query[1:] != j.judged_query[:-1])))
            top[j.judged_query[starts]] = np.maximum(j.judged_grade[starts], 1.0)
        rows = self.relevant_rows(None)
        q = j.row_query[rows]
        weights = (j.row_grade[rows] / top[q]) * np.power(TREC_RBP_P, j.row_rank[rows].astype(np.float64))
        return (1.0 - TREC_RBP_P) * np.bincount(q, weights=weights, minlength=j.n_queries)

    def rbp_resid(self, k: int | None) -> np.ndarray:
        """trec_eval's rbp_resid (m_rbp_resid.c): how much rbp could rise if every unjudged doc
        retrieved had the highest gain; 0 when none is unjudged.

        The registry holds its definition, source and conventions (its entry: ``METRICS["rbp_resid"]``).
        """
        j = self.j
        unjudged = ~j.row_judged | (j.row_grade < 0)
        rows = np.flatnonzero(unjudged)
        q = j.row_query[rows]
        total = np.bincount(q, weights=np.power(TREC_RBP_P, j.row_rank[rows].astype(np.float64)),
                            minlength=j.n_queries).astype(np.float64)
        value = np.power(TREC_RBP_P, j.n_retrieved.astype(np.float64)) + (1.0 - TREC_RBP_P) * total
        return np.where(np.bincount(q, minlength=j.n_queries) > 0, value, 0.0)

    def _above(self, values: np.ndarray) -> np.ndarray:
        """Per row, the sum of ``values`` over the rows ranked above it in its query."""
        before = np.cumsum(values) - values
        return before - before[self._first_row()[self.j.row_query]] if values.size else before

    def err(self, k: int | None) -> np.ndarray:
        """Expected reciprocal rank as gdeval (ir_measures ERR@k): stop probability (2^g - 1) / 2^4.

        The registry holds its definition, source and conventions (its entry: ``METRICS["err"]``).
        """
        if self.j.judged_grade.size and self.j.judged_grade.max() > ERR_MAX_GRADE:
            raise EvalSuiteError(f"ERR takes grades up to {ERR_MAX_GRADE} (gdeval's MAX_JUDGMENT, as ir_measures)",
                                 field="grade", value=float(self.j.judged_grade.max()))
        rows = np.arange(self.j.row_query.size) if k is None else np.flatnonzero(self.j.row_rank < k)
        grade = np.where(self.relevant[rows], self.j.row_grade[rows], 0.0)
        stop = (np.exp2(grade) - 1.0) / 2.0**ERR_MAX_GRADE
        carry = np.log1p(-stop)
        # product of (1 - stop) over the rows above, within each query (rows of the top k only)
        full = np.zeros(self.j.row_query.size)
        full[rows] = carry
        reach = np.exp(self._above(full))[rows]
        return np.bincount(self.j.row_query[rows], weights=stop * reach / (self.j.row_rank[rows] + 1.0),
                           minlength=self.j.n_queries)

    def compute(self, spec: MetricSpec) -> np.ndarray:
        """Per-query values of one parsed metric: the method its registry entry names, called with
        the cutoff (or the real parameter) and the entry's fixed arguments."""
        entry = METRICS[spec.base]
        method = getattr(self, entry.kernel.rpartition(".")[2])
        return method(spec.k if spec.param is None else spec.param, **entry.kernel_arguments)


def compute_metrics(judged: JudgedRanking, specs: Sequence[MetricSpec], rel_level: float = 1) -> dict[str, np.ndarray]:
    """Per-query values of each metric in ``specs``.

    Parameters
    ----------
    judged : JudgedRanking
        Rows of all queries (see the class).
    specs : sequence of MetricSpec
        Parsed metric names.
    rel_level : float
        Minimum grade that counts as relevant (> 0).

    Returns
    -------
    dict
        ``spec.name`` -> ndarray of shape (n_queries,), float64.
    """
    computer = RankingKernel(judged, check_rel_level(rel_level))
    return {spec.name: computer.compute(spec) for spec in specs}


def corpus_value(spec: MetricSpec, values: np.ndarray) -> float | None:
    """The corpus value of a metric whose registry entry does not average (None: the mean).

    trec_eval's counts (num_ret, num_rel, num_rel_ret) are summed; gm_map is the geometric mean
    of the per-query values floored at 0.00001 (trec_eval's MIN_GEO_MEAN).

    >>> from evalsuite.metrics.names import parse_metric
    >>> corpus_value(parse_metric("num_ret"), np.array([3.0, 4.0])), corpus_value(parse_metric("map"), np.array([0.5]))
    (7.0, None)
    """
    aggregate = METRICS[spec.base].aggregate
    if aggregate == "sum":
        return float(values.sum())
    if aggregate == "geometric":
        return float(np.exp(np.log(np.maximum(values, 1e-5)).mean())) if values.size else float("nan")
    return None
