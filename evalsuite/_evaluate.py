"""evaluate(): score a run against qrels for many metrics at once, with a report of what was done."""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .utils.keys import group_keys, strings_equal
from .metrics.registry import METRICS
from .io.run_qrels import Qrels, Run
from .utils.checks import ranks_from_counts
from .errors import EvalSuiteError
from .metrics.names import MetricSpec, parse_metric
from .utils.checks import check_rel_level
from .metrics.ranking_kernel import CONVENTIONS, JudgedRanking, compute_metrics
from .score import Score

__all__ = ["evaluate", "EvaluationReport", "DEFAULT_METRICS"]

DEFAULT_METRICS = ("ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100", "hit_rate@10")

QUERY_POLICIES = {
    "qrels": "queries in the qrels (trec_eval -c, ranx make_comparable=True): a qrels query missing "
    "from the run scores 0; run queries without qrels are dropped and reported",
    "intersection": "only queries in both the qrels and the run (trec_eval without -c, a plain "
    "pytrec_eval mean); queries in only one of them are dropped and reported",
}


@dataclass
class EvaluationReport:
    """What :func:`evaluate` returns.

    Attributes
    ----------
    per_query : pandas.DataFrame
        One row per evaluated query (index ``query_id``, sorted by id in byte order, as
        trec_eval prints them), one float64 column per metric (named as requested).
    scores : dict of str -> Score
        Per metric a :class:`Score`: the mean, per-query values and parameters.
    dropped_queries : dict of str -> str
        Queries left out of the mean, with the reason.
    defaulted_queries : list of str
        Evaluated queries missing from the run, scored 0 on every metric.
    no_relevant_queries : list of str
        Evaluated queries without any judged doc of grade >= rel_level (every metric 0).
    params : dict
        rel_level, queries policy, counts, run and qrels names, metric definitions.
    conventions : dict of str -> str
        The rules applied (see ``docs/conventions.md``).
    warnings : list of str
        Things the reader or the evaluation noticed (from the run and qrels too).

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d1": 0.9, "d2": 0.5}}
    >>> report = evaluate(qrels, run, "mrr")
    >>> report.means  # first relevant doc at rank 1 for q1, rank 2 for q2: (1 + 1/2) / 2
    {'mrr': 0.75}
    >>> report.per_query
              mrr
    query_id
    q1        1.0
    q2        0.5
    >>> print(report.to_trec_eval(), end="")
    runid   all  run
    num_q   all  2
    mrr     all  0.7500
    """

    per_query: pd.DataFrame
    scores: dict[str, Score]
    dropped_queries: dict[str, str]
    defaulted_queries: list[str]
    no_relevant_queries: list[str]
    params: dict[str, Any]
    conventions: dict[str, str]
    warnings: list[str] = field(default_factory=list)

    @property
    def means(self) -> dict[str, float]:
        """Metric name -> mean over the evaluated queries."""
        return {name: float(score) for name, score in self.scores.items()}

    @property
    def query_ids(self) -> list[str]:
        """The evaluated queries, in report order."""
        return self.per_query.index.tolist()

    def to_dataframe(self) -> pd.DataFrame:
        """A copy of the per-query table with the query id as a column."""
        return self.per_query.reset_index()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict: means, per-query values, queries dropped and defaulted, params."""
        return {
            "means": self.means,
            "per_query": {q: row for q, row in zip(self.per_query.index, self.per_query.to_dict("records"))},
            "dropped_queries": self.dropped_queries,
            "defaulted_queries": self.defaulted_queries,
            "no_relevant_queries": self.no_relevant_queries,
            "params": self.params,
            "conventions": self.conventions,
            "warnings": self.warnings,
        }

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), **kwargs)

    def to_trec_eval(self, per_query: bool = False, names: Mapping[str, str] | None = None) -> str:
        """The report in trec_eval's text layout (``measure<TAB>query|all<TAB>value``).

        ``names`` maps a metric to the name to print (default: the name as requested).
        Values are printed with 4 decimals as trec_eval does, counts (num_ret ...) as integers;
        per-query lines leave out geometric means (gm_map), as trec_eval does.
        """
        names = dict(names or {})
        entries = {metric: METRICS[parse_metric(metric).base] for metric in self.scores}

        def text(metric: str, value: float) -> str:
            return f"{value:.0f}" if entries[metric].integer else f"{value:.4f}"

        out = []
        if per_query:
            # trec_eval prints no per-query line for a geometric mean (gm_map, gm_bpref).
            shown = [i for i, m in enumerate(self.per_query.columns) if entries[m].aggregate != "geometric"]
            for qid, row in zip(self.per_query.index, self.per_query.itertuples(index=False)):
                for i in shown:
                    metric = self.per_query.columns[i]
                    out.append(f"{names.get(metric, metric):<22}\t{qid}\t{text(metric, row[i])}")
        out.append(f"{'runid':<22}\tall\t{self.params.get('run_name') or 'run'}")
        out.append(f"{'num_q':<22}\tall\t{self.params['n_queries']}")
        for metric, score in self.scores.items():
            out.append(f"{names.get(metric, metric):<22}\tall\t{text(metric, float(score))}")
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        width = max([len(m) for m in self.scores] + [6])
        lines = [f"{'metric':<{width}}  mean", *(f"{m:<{width}}  {float(s):.4f}" for m, s in self.scores.items())]
        lines.append(f"({self.params['n_queries']} queries; {len(self.dropped_queries)} dropped; "
                     f"{len(self.defaulted_queries)} scored 0 as missing from the run)")
        return "\n".join(lines)


def _as_ranked(value, cls, what: str, value_name: str):
    """A Run or Qrels from what the caller has: the object, a file path, a ranx-style mapping or
    a data frame."""
    if isinstance(value, cls):
        return value
    if isinstance(value, (str, os.PathLike)):
        from .io.run_files import read_qrels, read_run

        return (read_run if cls is Run else read_qrels)(value)
    if isinstance(value, Mapping):
        return cls.from_dict(value)
    if isinstance(value, pd.DataFrame):
        return cls.from_dataframe(value)
    raise EvalSuiteError(f"{what} must be a {cls.__name__}, a file path, a {{query: {{doc: {value_name}}}}} mapping "
                         "or a data frame", field=what, value=type(value).__name__)


def _as_qrels(qrels) -> Qrels:
    return _as_ranked(qrels, Qrels, "qrels", "grade")


def _as_run(run) -> Run:
    return _as_ranked(run, Run, "run", "score")


def parse_metrics(metrics: str | Sequence[str]) -> list[MetricSpec]:
    """Parse metric names, keeping the order and dropping repeats; raises on unknown names."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not metrics:
        raise EvalSuiteError("no metrics asked for", field="metrics", value=list(metrics))
    specs, seen = [], set()
    for name in metrics:
        spec = parse_metric(name)
        if spec.name not in seen:
            seen.add(spec.name)
            specs.append(spec)
    return specs


def corpus_value(spec: MetricSpec, values: np.ndarray) -> float | None:
    """The corpus value of a metric whose registry entry does not average (None: the mean).

    trec_eval's counts (num_ret, num_rel, num_rel_ret) are summed; gm_map is the geometric mean
    of the per-query values floored at 0.00001 (trec_eval's MIN_GEO_MEAN).
    """
    aggregate = METRICS[spec.base].aggregate
    if aggregate == "sum":
        return float(values.sum())
    if aggregate == "geometric":
        return float(np.exp(np.log(np.maximum(values, 1e-5)).mean())) if values.size else float("nan")
    return None


def _exact_grades(run: Run, rows: np.ndarray, row_query: np.ndarray, qrels: Qrels, qrels_rows: np.ndarray,
                  qrels_query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact (string) join of run rows with judgements; used only for queries with a key collision."""
    left = pd.DataFrame({"q": row_query, "d": run.doc_ids.take(pa.array(rows)).to_pylist()})
    right = pd.DataFrame({"q": qrels_query, "d": qrels.doc_ids.take(pa.array(qrels_rows)).to_pylist(),
                          "g": qrels.grades[qrels_rows]})
    merged = left.merge(right, on=["q", "d"], how="left", sort=False)
    grades = np.array(merged["g"].to_numpy(dtype=np.float64, na_value=np.nan))  # a writable copy
    judged = ~np.isnan(grades)
    grades[~judged] = 0.0
    return grades, judged


def _lookup_grades(run: Run, rows: np.ndarray, row_query: np.ndarray, qrels: Qrels, qrels_rows: np.ndarray,
                   qrels_query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grade and judged flag of each selected run row, joined on (query, doc id).

    Uses 64-bit (query, doc) keys with searchsorted (run rows come grouped by query, so the
    search walks the sorted qrels keys nearly in order), then checks every match on the strings.
    A query where two different ids share a key (odds about 2**-40 per pair of its ids) is
    joined again on the strings; the other queries keep the fast result, which is exact for
    them because equal strings always have equal keys.
    """
    grades = np.zeros(rows.size, dtype=np.float64)
    judged = np.zeros(rows.size, dtype=bool)
    if rows.size == 0 or qrels_rows.size == 0:
        return grades, judged
    n_groups = int(max(row_query.max(), qrels_query.max())) + 1
    run_keys = group_keys(row_query, run.doc_keys[rows], n_groups)
    qrels_keys = group_keys(qrels_query, qrels.doc_keys[qrels_rows], n_groups)
    order = np.argsort(qrels_keys, kind="stable")
    sorted_keys = qrels_keys[order]
    repeated = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    suspect = set(qrels_query[order[repeated]].tolist())
    pos = np.minimum(np.searchsorted(sorted_keys, run_keys), sorted_keys.size - 1)
    matched = np.flatnonzero(sorted_keys[pos] == run_keys)
    match_rows = qrels_rows[order[pos[matched]]]
    confirmed = (qrels_query[order[pos[matched]]] == row_query[matched]) & strings_equal(
        run.doc_ids, rows[matched], qrels.doc_ids, match_rows)
    suspect.update(row_query[matched[~confirmed]].tolist())
    grades[matched[confirmed]] = qrels.grades[match_rows[confirmed]]
    judged[matched[confirmed]] = True
    if suspect:
        redo = np.isin(row_query, np.fromiter(suspect, dtype=row_query.dtype))
        redo_qrels = np.isin(qrels_query, np.fromiter(suspect, dtype=qrels_query.dtype))
        grades[redo], judged[redo] = _exact_grades(run, rows[redo], row_query[redo], qrels, qrels_rows[redo_qrels],
                                                   qrels_query[redo_qrels])
    return grades, judged


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
        Minimum grade that counts as relevant (trec_eval -l, ranx rel_lvl).
    max_docs : int >= 1 or None
        Keep only the top ``max_docs`` docs of each query's ranking, as if the run held no
        more (trec_eval -M); None (default) keeps them all.
    engine : {"local", "dask"}
        "local" (default) evaluates in this process; "dask" on a Dask cluster, for runs larger
        than memory: the run may also be a glob of shards, a Parquet folder or a Dask
        DataFrame, and the numbers are the same bit for bit (see
        :func:`evalsuite.distributed.evaluate_dask`; needs ``evalsuite[dask]``).
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
        from .distributed import evaluate_dask

        return evaluate_dask(qrels, run, metrics, queries, rel_level, scheduler=scheduler, max_docs=max_docs)
    if engine != "local":
        raise EvalSuiteError("engine must be 'local' or 'dask'", field="engine", value=engine)
    specs = parse_metrics(metrics)
    rel = check_rel_level(rel_level)
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, numbers.Integral)
                                 or max_docs < 1):
        raise EvalSuiteError("max_docs must be a whole number >= 1 (or None for every doc)", field="max_docs",
                             value=max_docs)
    if queries not in QUERY_POLICIES:
        raise EvalSuiteError(f"queries must be one of {', '.join(QUERY_POLICIES)}", field="queries", value=queries)
    qrels, run = _as_qrels(qrels), _as_run(run)

    qrels_ids = qrels.query_ids
    run_ids = run.query_ids
    run_set = set(run_ids.tolist())
    warnings = [*(f"run: {w}" for w in run.warnings), *(f"qrels: {w}" for w in qrels.warnings)]
    eval_ids, dropped = _queries_to_evaluate(run_set, set(qrels_ids.tolist()), queries, warnings)
    defaulted = sorted(set(eval_ids) - run_set)
    eval_index = pd.Index(eval_ids)

    # Kernel order: run queries in the run's own order (its rows stay contiguous, no re-sort),
    # then evaluated queries that the run lacks.
    run_eval_pos = eval_index.get_indexer(pd.Index(run_ids))
    run_kept = run_eval_pos >= 0
    n_run_kept = int(run_kept.sum())
    kernel_to_eval = np.concatenate([run_eval_pos[run_kept], eval_index.get_indexer(pd.Index(defaulted))]).astype(np.int64)
    eval_to_kernel = np.empty(len(eval_ids), dtype=np.int64)
    eval_to_kernel[kernel_to_eval] = np.arange(len(eval_ids))

    cutoffs = [s.k for s in specs]
    max_k = None if any(k is None for k in cutoffs) else max(cutoffs)
    counts = run.counts[run_kept]
    if max_docs is not None:
        counts = np.minimum(counts, max_docs)
    selected = counts if max_k is None else np.minimum(counts, max_k)
    starts = run.offsets[:-1][run_kept]
    row_rank = ranks_from_counts(selected)
    rows = np.repeat(starts, selected) + row_rank
    row_query = np.repeat(np.arange(n_run_kept, dtype=np.int64), selected)

    qrels_eval_pos = eval_index.get_indexer(pd.Index(qrels_ids))
    qrels_row_query = qrels.row_queries()
    qrels_row_eval = qrels_eval_pos[qrels_row_query]
    qrels_rows = np.flatnonzero(qrels_row_eval >= 0)
    qrels_query = eval_to_kernel[qrels_row_eval[qrels_rows]]

    row_grade, row_judged = _lookup_grades(run, rows, row_query, qrels, qrels_rows, qrels_query)
    judged_grade = qrels.grades[qrels_rows]
    ideal_order = np.lexsort((-judged_grade, qrels_query))
    n_retrieved = np.zeros(len(eval_ids), dtype=np.int64)
    n_retrieved[:n_run_kept] = counts
    judged = JudgedRanking(
        n_queries=len(eval_ids), row_query=row_query, row_rank=row_rank, row_grade=row_grade, row_judged=row_judged,
        n_retrieved=n_retrieved, judged_query=qrels_query[ideal_order], judged_grade=judged_grade[ideal_order],
    )
    per_kernel = compute_metrics(judged, specs, rel)

    n_relevant = np.bincount(qrels_query[judged_grade >= rel], minlength=len(eval_ids))
    no_relevant = sorted(eval_ids[i] for i in kernel_to_eval[np.flatnonzero(n_relevant == 0)])
    values = {}
    for spec in specs:
        values[spec.name] = np.empty(len(eval_ids), dtype=np.float64)
        values[spec.name][kernel_to_eval] = per_kernel[spec.name]
    return build_report(values, specs, eval_ids, queries=queries, rel_level=rel_level, dropped=dropped,
                        defaulted=defaulted, no_relevant=no_relevant, warnings=warnings,
                        params={"max_docs": max_docs, "run_name": run.name, "run_source": run.source,
                                "qrels_source": qrels.source})


def _queries_to_evaluate(run_set: set[str], qrels_set: set[str], queries: str,
                         warnings: list[str]) -> tuple[list[str], dict[str, str]]:
    """The evaluated query ids (sorted) and the dropped ones with their reason, under a query
    policy; appends the policy's warnings. Shared by the single-machine and the Dask engine."""
    dropped = {q: "in the run but not in the qrels" for q in sorted(run_set - qrels_set)}
    if queries == "qrels":
        eval_ids = sorted(qrels_set)
    else:
        eval_ids = sorted(qrels_set & run_set)
        for q in sorted(qrels_set - run_set):
            dropped[q] = "in the qrels but not in the run (queries='intersection')"
        if qrels_set - run_set:
            warnings.append(f"queries='intersection': {len(qrels_set - run_set)} qrels queries missing from the run "
                            "are left out of the means (trec_eval without -c); the default 'qrels' scores them 0")
    if not run_set and queries == "qrels":
        warnings.append(f"the run is empty: every one of the {len(qrels_set)} qrels queries scores 0 (a qrels "
                        "query missing from the run scores 0)")
    elif not (run_set & qrels_set):
        raise EvalSuiteError(
            f"no query to evaluate: the run's {len(run_set)} query ids and the qrels' {len(qrels_set)} have none in common "
            f"(run ids such as {sorted(run_set)[:3]}, qrels ids such as {sorted(qrels_set)[:3]})",
            field="query_id",
        )
    return eval_ids, dropped


def build_report(values: Mapping[str, np.ndarray], specs: Sequence[MetricSpec], eval_ids: list[str], *, queries: str,
                 rel_level: float, dropped: dict[str, str], defaulted: list[str], no_relevant: list[str],
                 warnings: list[str], params: Mapping[str, Any]) -> EvaluationReport:
    """The :class:`EvaluationReport` of per-query values in ``eval_ids`` order: the scores with
    their corpus values (means, or trec_eval's sums and geometric means), the warnings about
    queries, the conventions. Shared by the single-machine and the Dask engine, so both report
    the same numbers and words from the same per-query values."""
    if no_relevant:
        warnings.append(f"{len(no_relevant)} evaluated queries have no judged doc with grade >= {rel_level:g}; they score 0")
    if defaulted:
        warnings.append(f"{len(defaulted)} qrels queries are missing from the run; they score 0")
    if dropped and queries == "qrels":
        warnings.append(f"{len(dropped)} run queries have no qrels and are left out")
    params_common = {"rel_level": rel_level, "queries": queries, "max_docs": params.get("max_docs"),
                     "n_queries": len(eval_ids), "run_name": params.get("run_name"),
                     "run_source": params.get("run_source"), "qrels_source": params.get("qrels_source")}
    scores = {}
    for spec in specs:
        score_params = {"metric": spec.canonical, "k": spec.k, **params_common, "convention": CONVENTIONS[spec.base]}
        if spec.gains:
            score_params["gains"] = spec.gains
        if spec.trec_name:
            score_params["trec_eval"] = spec.trec_name
        if spec.param is not None:
            score_params["param"] = spec.param
        scores[spec.name] = Score(values[spec.name], score_params, query_ids=eval_ids,
                                  value=corpus_value(spec, values[spec.name]))
    per_query = pd.DataFrame({spec.name: values[spec.name] for spec in specs},
                             index=pd.Index(eval_ids, name="query_id"))
    conventions = {"queries": QUERY_POLICIES[queries], "order": "score descending (float64), ties by doc id descending (trec_eval)"}
    conventions.update({s.base: CONVENTIONS[s.base] for s in specs})
    if check_rel_level(rel_level) != 1 and any(s.base.startswith("ndcg") for s in specs):
        conventions["ndcg_rel_level"] = "grades below rel_level get gain 0 in nDCG (ranx); trec_eval ignores -l for nDCG"
    extra = {k: v for k, v in params.items() if k not in params_common}
    return EvaluationReport(
        per_query=per_query,
        scores=scores,
        dropped_queries=dropped,
        defaulted_queries=defaulted,
        no_relevant_queries=no_relevant,
        params={**params_common, "metrics": {s.name: s.canonical for s in specs}, **extra},
        conventions=conventions,
        warnings=warnings,
    )
