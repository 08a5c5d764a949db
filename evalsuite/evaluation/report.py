"""What an evaluation of a run against qrels reports, the same from either engine: :class:`EvaluationReport`,
the metric names and query policy it was asked for, and how per-query values become the report
(:func:`build_report`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..metrics.registry import DEFAULTS, METRICS
from ..errors import EvalSuiteError
from ..metrics.names import MetricSpec, parse_metric
from ..utils.checks import check_rel_level
from ..utils.ids import invisible_twins
from ..metrics.ranking_kernel import CONVENTIONS, corpus_value
from ..score import Score

if TYPE_CHECKING:  # the per-query table is made when asked for: pandas costs 0.25 s to import
    import pandas as pd

__all__ = ["EvaluationReport", "DEFAULT_METRICS", "QUERY_POLICIES", "parse_metrics", "corpus_value", "queries_to_evaluate",
           "build_report", "invisible_id_warnings"]

DEFAULT_METRICS = DEFAULTS["evaluate"]

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
        trec_eval prints them), one float64 column per metric (named as requested). Made
        from ``scores`` on first use (importing pandas then, not before).
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
    >>> from evalsuite import evaluate
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
        first = next(iter(self.scores.values()), None)
        return [] if first is None or first.query_ids is None else list(first.query_ids)

    @functools.cached_property
    def per_query(self) -> pd.DataFrame:
        """One row per evaluated query, one float64 column per metric (see the class)."""
        import pandas as pd

        return pd.DataFrame({name: np.asarray(score.per_query, dtype=np.float64) for name, score in self.scores.items()},
                            index=pd.Index(self.query_ids, name="query_id"))

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


def queries_to_evaluate(run_set: set[str], qrels_set: set[str], queries: str,
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


def invisible_id_warnings(what: str, run_ids, qrels_ids) -> list[str]:
    """A warning when ids of the run differ from ids of the qrels only by characters a person cannot
    see (``'d1\\u00a0'`` against ``'d1'``): they do not match, so the run scores as if it had not
    retrieved those docs. ``what``: "query" or "doc"; the ids are Arrow string arrays. Shared by
    the single-machine and the Dask engine (docs/conventions.md: ids are compared byte for byte)."""
    pairs = invisible_twins(run_ids, qrels_ids)
    if not pairs:
        return []
    shown = "; ".join(f"{a!r} in the run, {b!r} in the qrels" for a, b in pairs)
    return [f"{what} ids of the run that differ from ids of the qrels only by invisible characters do not match "
            f"them (ids are compared byte for byte): {shown}"]


def _count(n: int, one: str, many: str) -> str:
    """``n`` with the words for one thing or for many: "1 run query has ...", "3 run queries have ..."."""
    return f"{n} {one if n == 1 else many}"


def build_report(values: Mapping[str, np.ndarray], specs: Sequence[MetricSpec], eval_ids: list[str], *, queries: str,
                 rel_level: float, dropped: dict[str, str], defaulted: list[str], no_relevant: list[str],
                 warnings: list[str], params: Mapping[str, Any]) -> EvaluationReport:
    """The :class:`EvaluationReport` of per-query values in ``eval_ids`` order: the scores with
    their corpus values (means, or trec_eval's sums and geometric means), the warnings about
    queries, the conventions. Shared by the single-machine and the Dask engine, so both report
    the same numbers and words from the same per-query values."""
    if no_relevant:
        grade = f"with grade >= {rel_level:g}"
        warnings.append(_count(len(no_relevant), f"evaluated query has no judged doc {grade}; it scores 0",
                               f"evaluated queries have no judged doc {grade}; they score 0"))
    if defaulted:
        warnings.append(_count(len(defaulted), "qrels query is missing from the run; it scores 0",
                               "qrels queries are missing from the run; they score 0"))
    if dropped and queries == "qrels":
        warnings.append(_count(len(dropped), "run query has no qrels and is left out",
                               "run queries have no qrels and are left out"))
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
    conventions = {"queries": QUERY_POLICIES[queries], "order": "score descending (float64), ties by doc id descending (trec_eval)"}
    conventions.update({s.base: CONVENTIONS[s.base] for s in specs})
    if check_rel_level(rel_level) != 1 and any(s.base.startswith("ndcg") for s in specs):
        conventions["ndcg_rel_level"] = "grades below rel_level get gain 0 in nDCG (ranx); trec_eval ignores -l for nDCG"
    extra = {k: v for k, v in params.items() if k not in params_common}
    return EvaluationReport(
        scores=scores,
        dropped_queries=dropped,
        defaulted_queries=defaulted,
        no_relevant_queries=no_relevant,
        params={**params_common, "metrics": {s.name: s.canonical for s in specs}, **extra},
        conventions=conventions,
        warnings=warnings,
    )
