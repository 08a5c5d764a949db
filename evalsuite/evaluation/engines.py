"""evaluate(): score a run against qrels for many metrics at once, on this machine or on a Dask
cluster (:mod:`~evalsuite.evaluation.local`, :mod:`~evalsuite.evaluation.distributed`); both give
the same :class:`~evalsuite.evaluation.report.EvaluationReport`, bit for bit."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EvalSuiteError
from .local import evaluate_local
from .report import DEFAULT_METRICS, EvaluationReport

__all__ = ["evaluate"]


def evaluate(qrels, run, metrics: str | Sequence[str] = DEFAULT_METRICS, queries: str = "qrels",
             rel_level: float = 1, max_docs: int | None = None, *, engine: str = "local",
             scheduler=None) -> EvaluationReport:
    """Score a run against qrels for several metrics, vectorised over all queries.

    Parameters
    ----------
    qrels : Qrels, path, {query_id: {doc_id: grade}} or DataFrame
        Judgements (paths are read with :func:`evalsuite.read_qrels`).
    run : Run, path, {query_id: {doc_id: score}} or DataFrame
        Ranked results (paths are read with :func:`evalsuite.read_run`).
    metrics : str or sequence of str
        Names in ranx style (``ndcg@10``, ``map@100``, ``mrr@10``, ``precision@10``,
        ``recall@100``, ``hit_rate@10``, ``ndcg_burges@10``, ``judged@10``, ``map``, ``mrr``,
        ``ndcg``) or trec_eval's (``P_10``, ``recall_100``, ``success_10``, ``recip_rank``,
        ``map_cut_100``, ``ndcg_cut_10``).
    queries : {"qrels", "intersection"}
        Which queries the means are over. "qrels" (default) follows trec_eval -c and ranx
        ``make_comparable=True``: every qrels query, 0 when missing from the run; run
        queries without qrels are dropped. "intersection" keeps only queries in both
        (trec_eval without -c) and adds a warning.
    rel_level : float > 0
        Minimum grade that counts as relevant (trec_eval -l, ranx rel_lvl). nDCG gives the
        grades below it gain 0, as ranx does (trec_eval's -l does not change nDCG).
    max_docs : int >= 1 or None
        Keep only the top ``max_docs`` docs of each query's ranking, as if the run held no
        more (trec_eval -M); None (default) keeps them all.
    engine : {"local", "dask"}
        "local" (default) evaluates in this process; "dask" on a Dask cluster, for runs larger
        than memory: the run may also be a glob of shards, a Parquet folder or a Dask
        DataFrame, and the numbers are the same bit for bit (see
        :func:`evalsuite.evaluation.distributed.evaluate_dask`; needs ``evalsuite[dask]``).
    scheduler : None, str or distributed.Client
        With engine="dask": a scheduler address, a Client, or None to start a LocalCluster.

    Returns
    -------
    EvaluationReport
        Per-query table (one row per evaluated query, one float64 column per metric, named as
        requested), means as :class:`Score` objects, queries dropped or defaulted (and why),
        conventions, warnings.

    Raises
    ------
    EvalSuiteError
        Unknown metric, k <= 0, rel_level <= 0, unknown ``queries``, no query to evaluate (run
        and qrels share no query id; an empty run is not an error under ``queries="qrels"``:
        every qrels query scores 0, with a warning); a qrels or run argument of another type; everything
        :func:`evalsuite.read_run` and :func:`evalsuite.read_qrels` raise for a path.

    References
    ----------
    trec_eval (NIST, ``trec_eval -c -l rel_level -m ...``), whose numbers this matches; ranx
    ``evaluate`` (Bassani, ECIR 2022). Each metric's source: ``docs/metrics.md``.

    Examples
    --------
    >>> qrels = {"q1": {"d1": 2, "d3": 1}, "q2": {"d9": 1}}
    >>> run = {"q1": {"d3": 0.9, "d2": 0.8, "d1": 0.7}, "q3": {"d1": 1.0}}
    >>> report = evaluate(qrels, run, ["ndcg@10", "P_2"])
    >>> # q1: P@2 = 1/2 (d3 of d3, d2); nDCG = DCG (1/1 + 2/2) / IDCG (2/1 + 1/log2(3)) = 0.7602.
    >>> # q2 is missing from the run: 0 on both. Means: (0.7602 + 0) / 2 and (0.5 + 0) / 2.
    >>> print(report)
    metric   mean
    ndcg@10  0.3801
    P_2      0.2500
    (2 queries; 1 dropped; 1 scored 0 as missing from the run)
    >>> report.dropped_queries, report.defaulted_queries
    ({'q3': 'in the run but not in the qrels'}, ['q2'])
    >>> evaluate(qrels, run, "P_2", queries="intersection").means  # q1 only
    {'P_2': 0.5}
    """
    if engine == "dask":
        from .distributed import evaluate_dask  # pandas and the shard readers: only for this engine

        return evaluate_dask(qrels, run, metrics, queries, rel_level, scheduler=scheduler, max_docs=max_docs)
    if engine != "local":
        raise EvalSuiteError("engine must be 'local' or 'dask'", field="engine", value=engine)
    return evaluate_local(qrels, run, metrics, queries, rel_level, max_docs)
