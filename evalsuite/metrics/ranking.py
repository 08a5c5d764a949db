"""Ranking metrics as list functions (P@k, R@k, hit rate@k, MRR, MAP@k, nDCG@k): one entry per query,
the retrieved docs already in rank order, judgements as sets, lists or {doc: grade} mappings.

Each function builds the kernel's flat representation (:class:`~evalsuite.metrics.ranking_kernel.JudgedRanking`)
from the lists and computes the metric with the same kernel as :func:`evalsuite.evaluate`, so the
conventions are the same (``docs/conventions.md``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence, Set

import numpy as np

from ..errors import EvalSuiteError
from ..score import Score
from ..utils.checks import check_cutoff, check_rel_level, ranks_from_counts
from .names import MetricSpec, parse_metric
from .ranking_kernel import CONVENTIONS, JudgedRanking, compute_metrics, corpus_value

__all__ = [
    "judged_ranking_from_lists",
    "precision_at_k",
    "recall_at_k",
    "hit_rate_at_k",
    "mrr",
    "mean_average_precision_at_k",
    "ndcg_at_k",
    "ranking_metric",
]


def _as_grades(item: object, index: int, arg: str) -> dict:
    """One query's judgements as {doc id: grade}: a set or list means grade 1 for each doc."""
    if isinstance(item, Mapping):
        grades = {}
        for doc, grade in item.items():
            if isinstance(grade, bool) or not isinstance(grade, numbers.Real) or not math.isfinite(grade):
                raise EvalSuiteError("a grade must be a finite number", source=arg, field=f"{arg}[{index}][{doc!r}]", value=grade)
            grades[doc] = float(grade)
        return grades
    if isinstance(item, (str, bytes)) or not isinstance(item, (Set, Sequence, np.ndarray)):
        raise EvalSuiteError(
            "each query's relevant docs must be a set or list of doc ids, or a mapping doc id -> grade",
            source=arg, field=f"{arg}[{index}]", value=item,
        )
    docs = list(item)
    if len(set(docs)) != len(docs):
        seen = set()
        duplicate = next(d for d in docs if d in seen or seen.add(d))
        raise EvalSuiteError("a doc id is listed twice for one query", source=arg, field=f"{arg}[{index}]", value=duplicate)
    return dict.fromkeys(docs, 1.0)


def _as_ranking(item: object, index: int, duplicates: str) -> list:
    if isinstance(item, (str, bytes)) or not isinstance(item, (Sequence, np.ndarray)):
        raise EvalSuiteError(
            "each query's retrieved docs must be a list of doc ids in rank order "
            "(pass one list per query, e.g. [['d1', 'd2'], ['d3']])",
            source="retrieved", field=f"retrieved[{index}]", value=item,
        )
    docs = list(item)
    if len(set(docs)) != len(docs):
        if duplicates == "first":
            return list(dict.fromkeys(docs))
        first: dict = {}
        for rank, doc in enumerate(docs, start=1):
            if doc in first:
                raise EvalSuiteError(
                    f"doc id retrieved twice for one query (ranks {first[doc]} and {rank}); "
                    "pass duplicates='first' to keep the higher-ranked one",
                    source="retrieved", field=f"retrieved[{index}]", value=doc,
                )
            first[doc] = rank
    return docs


def judged_ranking_from_lists(relevant: Sequence, retrieved: Sequence, duplicates: str = "error", arg: str = "relevant") -> JudgedRanking:
    """Build a :class:`JudgedRanking` from per-query lists (see :func:`precision_at_k`)."""
    if duplicates not in ("error", "first"):
        raise EvalSuiteError("duplicates must be 'error' or 'first'", field="duplicates", value=duplicates)
    for name, value in ((arg, relevant), ("retrieved", retrieved)):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
            raise EvalSuiteError(f"{name} must be a list with one entry per query", field=name, value=type(value).__name__)
    if len(relevant) != len(retrieved):
        raise EvalSuiteError(
            f"{arg} has {len(relevant)} queries but retrieved has {len(retrieved)}; they must be aligned",
            field=arg, value=len(relevant),
        )
    n = len(relevant)
    grades_per_query = [_as_grades(item, i, arg) for i, item in enumerate(relevant)]
    rankings = [_as_ranking(item, i, duplicates) for i, item in enumerate(retrieved)]
    n_retrieved = np.fromiter((len(r) for r in rankings), dtype=np.int64, count=n)
    nan = float("nan")
    row_grade = np.fromiter(
        (g.get(doc, nan) for g, ranking in zip(grades_per_query, rankings) for doc in ranking),
        dtype=np.float64, count=int(n_retrieved.sum()),
    )
    row_judged = ~np.isnan(row_grade)
    row_grade[~row_judged] = 0.0
    row_query = np.repeat(np.arange(n, dtype=np.int64), n_retrieved)
    n_judged = np.fromiter((len(g) for g in grades_per_query), dtype=np.int64, count=n)
    judged_grade = np.fromiter((v for g in grades_per_query for v in g.values()), dtype=np.float64, count=int(n_judged.sum()))
    judged_query = np.repeat(np.arange(n, dtype=np.int64), n_judged)
    order = np.lexsort((-judged_grade, judged_query))
    return JudgedRanking(
        n_queries=n,
        row_query=row_query,
        row_rank=ranks_from_counts(n_retrieved),
        row_grade=row_grade,
        row_judged=row_judged,
        n_retrieved=n_retrieved,
        judged_query=judged_query[order],
        judged_grade=judged_grade[order],
    )


def _list_metric(base: str, relevant, retrieved, k, rel_level, duplicates, allow_none_k=True,
                 spec: MetricSpec | None = None) -> Score:
    if spec is None:
        k = check_cutoff(k, allow_none=allow_none_k)
        spec = MetricSpec(base if k is None else f"{base}@{k}", base, k)
    rel = check_rel_level(rel_level)
    judged = judged_ranking_from_lists(relevant, retrieved, duplicates)
    values = compute_metrics(judged, [spec], rel)[spec.name]
    params = {
        "metric": spec.canonical,
        "k": k,
        "rel_level": rel_level,
        "n_queries": judged.n_queries,
        "duplicates": duplicates,
        "convention": CONVENTIONS[base],
    }
    if spec.param is not None:
        params["param"] = spec.param
    if spec.gains:
        params["gains"] = spec.gains
    return Score(values, params)


# Types of the list functions' inputs (each function's docstring is written out in full).
Relevant = Sequence["Set[str] | Sequence[str] | Mapping[str, float]"]
Retrieved = Sequence[Sequence[str]]


def precision_at_k(relevant: Relevant, retrieved: Retrieved, *, k: int | None = 5, rel_level: float = 1,
                   duplicates: str = "error") -> Score:
    """Precision at k: relevant docs in the top k divided by k (even when fewer were returned).

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query the relevant doc ids (a set or list: grade 1 each) or a mapping
        doc id -> grade (int or float; grades <= 0 are judged but not relevant).
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first (the given order is the ranking).
    k : int >= 1 or None, keyword-only
        Cutoff (default 5); None uses the whole list.
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The mean over queries (a float); ``.per_query``, shape (n_queries,), aligned with the
        input; ``.params``: metric, k, rel_level, n_queries, convention.

    Raises
    ------
    EvalSuiteError
        Misaligned inputs, a doc retrieved twice, a grade that is not a finite number, k < 1,
        rel_level <= 0.

    References
    ----------
    trec_eval ``P_k``; ranx ``precision@k``. ``docs/metrics.md#precision``.

    Examples
    --------
    >>> precision_at_k([{"d1", "d3"}], [["d3", "d2", "d1"]], k=2)  # d3 of d3, d2: 1 / 2
    Score(precision@2=0.5000, n=1, coverage=1.000)
    """
    return _list_metric("precision", relevant, retrieved, k, rel_level, duplicates)


def recall_at_k(relevant: Relevant, retrieved: Retrieved, *, k: int | None = 5, rel_level: float = 1,
                duplicates: str = "error") -> Score:
    """Recall at k: relevant docs in the top k divided by all relevant docs judged (0 when none).

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query the relevant doc ids (a set or list: grade 1 each) or a mapping
        doc id -> grade (grades <= 0 are judged but not relevant).
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first.
    k : int >= 1 or None, keyword-only
        Cutoff (default 5); None uses the whole list.
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The mean over queries, with ``.per_query`` and ``.params``.

    Raises
    ------
    EvalSuiteError
        As :func:`precision_at_k`.

    References
    ----------
    trec_eval ``recall_k``; ranx ``recall@k``. ``docs/metrics.md#recall``.

    Examples
    --------
    >>> recall_at_k([{"d1", "d3"}], [["d3", "d2", "d1"]], k=2)  # 1 of R = 2
    Score(recall@2=0.5000, n=1, coverage=1.000)
    """
    return _list_metric("recall", relevant, retrieved, k, rel_level, duplicates)


def hit_rate_at_k(relevant: Relevant, retrieved: Retrieved, *, k: int | None = 5, rel_level: float = 1,
                  duplicates: str = "error") -> Score:
    """Hit rate at k: 1 if any relevant doc is in the top k, else 0.

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query the relevant doc ids or a mapping doc id -> grade.
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first.
    k : int >= 1 or None, keyword-only
        Cutoff (default 5); None uses the whole list.
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The share of queries with a hit, with ``.per_query`` (0 or 1) and ``.params``.

    Raises
    ------
    EvalSuiteError
        As :func:`precision_at_k`.

    References
    ----------
    trec_eval ``success_k``; ranx ``hit_rate@k``. ``docs/metrics.md#hit_rate``.

    Examples
    --------
    >>> hit_rate_at_k([{"d1"}, {"d9"}], [["d3", "d1"], ["d3", "d1"]], k=2)  # a hit, a miss
    Score(hit_rate@2=0.5000, n=2, coverage=1.000)
    """
    return _list_metric("hit_rate", relevant, retrieved, k, rel_level, duplicates)


def mrr(relevant: Relevant, retrieved: Retrieved, *, k: int | None = None, rel_level: float = 1,
        duplicates: str = "error") -> Score:
    """Mean reciprocal rank: 1 / rank of the first relevant doc (within k if given), 0 if none.

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query the relevant doc ids or a mapping doc id -> grade.
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first.
    k : int >= 1 or None, keyword-only
        Cutoff; None (the default) looks at the whole list, as trec_eval's ``recip_rank``.
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The mean reciprocal rank, with ``.per_query`` and ``.params``.

    Raises
    ------
    EvalSuiteError
        As :func:`precision_at_k`.

    References
    ----------
    Voorhees, TREC-8 QA track report (1999); trec_eval ``recip_rank``; ranx ``mrr@k``.
    ``docs/metrics.md#mrr``.

    Examples
    --------
    >>> mrr([{"d2"}], [["d3", "d2", "d1"]])  # first relevant at rank 2
    Score(mrr=0.5000, n=1, coverage=1.000)
    """
    return _list_metric("mrr", relevant, retrieved, k, rel_level, duplicates)


def mean_average_precision_at_k(relevant: Relevant, retrieved: Retrieved, *, k: int | None = 10,
                                rel_level: float = 1, duplicates: str = "error") -> Score:
    """Mean average precision at k: sum of P@i over relevant ranks i <= k, divided by R.

    R is the number of relevant docs judged for the query (not min(R, k) as in Spark and
    ml_metrics).

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query the relevant doc ids or a mapping doc id -> grade.
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first.
    k : int >= 1 or None, keyword-only
        Cutoff (default 10); None uses the whole list (trec_eval ``map``).
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The mean over queries, with ``.per_query`` and ``.params``.

    Raises
    ------
    EvalSuiteError
        As :func:`precision_at_k`.

    References
    ----------
    trec_eval ``map_cut_k`` and ``map``; ranx ``map@k``. ``docs/metrics.md#map``.

    Examples
    --------
    >>> mean_average_precision_at_k([{"d1", "d3"}], [["d3", "d2", "d1"]], k=10)  # (1/1 + 2/3) / 2
    Score(map@10=0.8333, n=1, coverage=1.000)
    """
    return _list_metric("map", relevant, retrieved, k, rel_level, duplicates)


def ndcg_at_k(relevant: Relevant, retrieved: Retrieved, *, k: int | None = 10, gains: str = "linear",
              rel_level: float = 1, duplicates: str = "error") -> Score:
    """Normalised discounted cumulative gain at k.

    DCG@k = sum over ranks i <= k of gain(g_i) / log2(i + 1), with gain(g) = g ("linear") or
    2^g - 1 ("exponential"), counting only grades >= ``rel_level``. The ideal DCG sorts every
    judged doc with grade >= ``rel_level`` best first and cuts at k; a query whose ideal DCG is
    0 scores 0. With ``rel_level`` > 1 this follows ranx; trec_eval ignores ``-l`` for nDCG.

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query a mapping doc id -> grade (a set or list means grade 1 for each doc).
        Called ``graded`` before; that keyword still works.
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first.
    k : int >= 1 or None, keyword-only
        Cutoff (default 10); None uses the whole list (trec_eval ``ndcg``).
    gains : {"linear", "exponential"}, keyword-only
        Gain of a grade: g (Järvelin & Kekäläinen) or 2^g - 1 (Burges et al.).
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The mean over queries, with ``.per_query`` and ``.params`` (gains too).

    Raises
    ------
    EvalSuiteError
        As :func:`precision_at_k`; also ``gains`` other than "linear" or "exponential".

    References
    ----------
    Järvelin & Kekäläinen, TOIS 2002 (linear gains; trec_eval ``ndcg_cut_k``, ranx ``ndcg@k``);
    Burges et al., ICML 2005 (exponential gains; ranx ``ndcg_burges@k``).
    ``docs/metrics.md#ndcg``.

    Examples
    --------
    >>> ndcg_at_k([{"d1": 2, "d3": 1}], [["d3", "d2", "d1"]], k=10)  # DCG 2 / IDCG 2.6309
    Score(ndcg@10=0.7602, n=1, coverage=1.000)
    """
    if gains not in ("linear", "exponential"):
        raise EvalSuiteError("gains must be 'linear' or 'exponential'", field="gains", value=gains)
    base = "ndcg" if gains == "linear" else "ndcg_burges"
    return _list_metric(base, relevant, retrieved, k, rel_level, duplicates)


def _accepts_graded(function):
    """Keep ``ndcg_at_k(graded=...)``, the first name of its relevance argument, working."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if "graded" in kwargs:
            if "relevant" in kwargs or args:
                raise EvalSuiteError("give the judgements once: relevant (graded is its old name)", field="graded",
                                     value="given twice")
            kwargs["relevant"] = kwargs.pop("graded")
        return function(*args, **kwargs)

    return wrapper


ndcg_at_k = _accepts_graded(ndcg_at_k)


def ranking_metric(relevant: Relevant, retrieved: Retrieved, metric: str, *, rel_level: float = 1,
                   duplicates: str = "error") -> Score:
    """Any ranking metric of the registry from per-query lists, by name (``bpref``, ``dcg@5``,
    ``rbp.95``, ``ndcg_cut_10`` ...): the list function of trec_eval's further measures and of
    ranx's and ir_measures' own, with the kernel :func:`evalsuite.evaluate` uses.

    Parameters
    ----------
    relevant : sequence of (set | list | mapping), length n_queries
        Per query a mapping doc id -> grade (a set or list means grade 1 for each doc).
    retrieved : sequence of sequences of str, length n_queries
        Per query the retrieved doc ids, best first.
    metric : str
        A name :func:`evalsuite.parse_metric` accepts.
    rel_level : float > 0, keyword-only
        Minimum grade that counts as relevant (default 1).
    duplicates : {"error", "first"}, keyword-only
        A doc retrieved twice for one query raises unless "first" keeps the higher-ranked one.

    Returns
    -------
    Score
        The corpus value as the registry entry aggregates it (the mean; the sum of trec_eval's
        counts; the geometric mean of gm_map and gm_bpref), with ``.per_query`` and ``.params``.

    Raises
    ------
    EvalSuiteError
        An unknown metric name; as :func:`precision_at_k` for the lists.

    References
    ----------
    Each metric's entry in ``docs/metrics.md`` (trec_eval, ranx, ir_measures).

    Examples
    --------
    >>> # bpref: d3 relevant with no judged non-relevant doc above it; d1 relevant below d4 (grade 0): 1 - 1/1
    >>> ranking_metric([{"d1": 2, "d3": 1, "d4": 0}], [["d3", "d4", "d1"]], "bpref")
    Score(bpref=0.5000, n=1, coverage=1.000)
    >>> float(ranking_metric([{"d1": 2, "d3": 1}], [["d3", "d2", "d1"]], "dcg@10"))  # 1/log2(2) + 2/log2(4)
    2.0
    """
    spec = parse_metric(metric)
    score = _list_metric(spec.base, relevant, retrieved, spec.k, rel_level, duplicates, spec=spec)
    values = np.asarray(score.per_query, dtype=np.float64)
    value = corpus_value(spec, values)  # trec_eval's sums and geometric means; None: the mean
    return score if value is None else Score(values, score.params, value=value)
