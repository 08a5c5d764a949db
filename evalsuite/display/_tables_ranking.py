"""Tables for ranking runs: what was read, headline metrics, query accounting, judged@k,
per-query values, ranked lists with relevance labels and two systems query by query.
Pure functions over EvalSuite's results; never imports streamlit."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from ..io.run_qrels import Qrels, Run
from ..utils.checks import FORMULA_PREFIXES, safe_csv
from ..errors import EvalSuiteError
from ..evaluation.report import EvaluationReport
from ..metrics.registry import METRICS, TREC_OFFICIAL

__all__ = ['FORMULA_PREFIXES', 'safe_csv', 'describe_run', 'describe_qrels', 'describe_records', 'overview_table', 'query_accounting', 'judged_table', 'per_query_table', 'ranked_list_with_labels', 'side_by_side_lists', 'metric_name', 'difference_columns', 'per_query_difference', 'query_order', 'PR_CURVE_LEVELS', 'PR_CURVE_METRICS', 'pr_curve_table', 'TREC_SUMMARY_METRICS', 'trec_summary_table']

# Spreadsheet-safe CSV lives in the shared validation module (the CLI and reports use it too).


# ----------------------------------------------------------------------------------------------
# What was read.


def distinct_ids(ids, keys: np.ndarray) -> int:
    """How many distinct strings ``ids`` holds, from their 64-bit keys (``Run.doc_keys``): the keys
    are sorted and every pair of equal neighbours is confirmed on the strings (a hash collision
    falls back to Arrow's count). Arrow's ``count_distinct`` builds a hash table of the strings
    themselves: 700 MiB more for a 7-million-line run, three times the file, the dashboard's
    peak during an upload; this holds about 25 bytes a row.

    >>> import pyarrow as pa
    >>> from evalsuite.utils.keys import string_keys
    >>> ids = pa.array(["d1", "d2", "d1", "d3"])
    >>> distinct_ids(ids, string_keys(ids))
    3
    """
    from ..utils.keys import strings_equal

    if len(keys) == 0:
        return 0
    order = np.argsort(keys)
    ordered = keys[order]
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    del ordered
    for start in range(0, same.size, 1 << 18):  # the strings of a slice of pairs at a time
        pairs = same[start:start + (1 << 18)]
        if not strings_equal(ids, order[pairs], ids, order[pairs + 1]).all():
            return int(pc.count_distinct(ids).as_py())  # two ids share a key (odds about n**2 / 2**65)
    return int(len(keys) - same.size)


def describe_run(run: Run, format: str) -> dict:
    """One row describing a parsed run: format, queries, rows, distinct docs, depth, warnings."""
    counts = run.counts
    return {
        "format": format,
        "queries": int(run.n_queries),
        "rows": int(len(run)),
        "distinct docs": distinct_ids(run.doc_ids, run.doc_keys),
        "docs per query (max)": int(counts.max()) if counts.size else 0,
        "warnings": "; ".join(run.warnings),
    }


def describe_qrels(qrels: Qrels, format: str, rel_level: float = 1) -> dict:
    """One row describing parsed qrels: format, queries, judgements, relevant, grade levels."""
    grades = qrels.grades
    levels = np.unique(grades)
    return {
        "format": format,
        "queries": int(qrels.n_queries),
        "judgements": int(len(qrels)),
        "distinct docs": distinct_ids(qrels.doc_ids, qrels.doc_keys),
        f"relevant (grade >= {rel_level:g})": int((grades >= rel_level).sum()),
        "grade levels": ", ".join(f"{g:g}" for g in levels[:12]) + (" ..." if levels.size > 12 else ""),
        "warnings": "; ".join(qrels.warnings),
    }


def describe_records(records, format: str) -> dict:
    """One row describing a records file: format, requests, systems, canonical fields, aliases,
    and the columns kept as read but used by no metric (``kept, not used``)."""
    frame = records.frame
    return {
        "format": format,
        "requests": int(len(frame)),
        "queries": int(frame["query_id"].nunique()) if "query_id" in frame else 0,
        "n systems": len(records.systems),
        # What the reader warns of and left unused first: the lists of fields and systems are long and
        # would push them past the table's right edge.
        "warnings": "; ".join(records.warnings),
        "kept, not used": ", ".join(str(c) for c in records.extra_columns if c not in records.score_columns),
        "fields": ", ".join(records.fields),
        "systems": ", ".join(map(str, records.systems)),
        "renamed columns": ", ".join(f"{k} -> {v}" for k, v in dict(records.aliases).items()),
        "scores declared by the tool": ", ".join(map(str, records.score_columns)),
    }


# ----------------------------------------------------------------------------------------------
# Ranking runs: headline table, query accounting, judged@k.


def overview_table(reports: Mapping[str, EvaluationReport], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Headline metrics per system with what the means are over.

    Parameters
    ----------
    reports : {system name: EvaluationReport}
        One report per run, all against the same qrels.
    metrics : sequence of str, optional
        Report columns to show, in order (default: every metric of the first report).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``system``: one column per metric (the mean of :class:`~evalsuite.Score`),
        then ``queries evaluated`` (the means' denominator), ``answered`` (evaluated queries
        the run has results for), ``coverage`` (answered / evaluated), ``scored 0: missing
        from run``, ``scored 0: no relevant judged`` and ``dropped: not in qrels``.
    """
    rows = []
    for system, report in reports.items():
        names = list(metrics) if metrics is not None else list(report.per_query.columns)
        n_eval = int(report.params["n_queries"])
        missing = len(report.defaulted_queries)
        row = {"system": system}
        row.update({m: float(report.scores[m]) for m in names})
        row.update({
            "queries evaluated": n_eval,
            "answered": n_eval - missing,
            "coverage": (n_eval - missing) / n_eval if n_eval else np.nan,
            "scored 0: missing from run": missing,
            "scored 0: no relevant judged": len(report.no_relevant_queries),
            "dropped: not in qrels": len(report.dropped_queries),
        })
        rows.append(row)
    return pd.DataFrame(rows).set_index("system") if rows else pd.DataFrame()


def query_accounting(report: EvaluationReport) -> pd.DataFrame:
    """Every query that is not a plain scored query, with what happened to it and why.

    Returns
    -------
    pandas.DataFrame
        Columns ``query_id``, ``outcome`` ("dropped", "scored 0"), ``reason``; one row per
        dropped query, per qrels query missing from the run, per query without a relevant
        judged doc (sorted by outcome, then query id).
    """
    rows = [(q, "dropped", reason) for q, reason in report.dropped_queries.items()]
    rows += [(q, "scored 0", "in the qrels but not in the run") for q in report.defaulted_queries]
    rel = report.params.get("rel_level", 1)
    rows += [(q, "scored 0", f"no judged doc with grade >= {rel:g}") for q in report.no_relevant_queries]
    frame = pd.DataFrame(rows, columns=["query_id", "outcome", "reason"])
    return frame.sort_values(["outcome", "query_id"], kind="stable").reset_index(drop=True)


def metric_name(base: str, k: int | None) -> str:
    """ranx-style metric name: ``base@k``, or ``base`` alone for the whole ranked list (``k`` None,
    trec_eval's ``map``, ``ndcg``, ``recip_rank``) and for a metric that takes no cutoff
    (``bpref``, ``r_precision``: ``k`` is ignored)."""
    from ..metrics.registry import METRICS

    entry = METRICS.get(base)
    if entry is not None and entry.kind == "ranking" and not entry.cutoff:
        return base
    return base if k is None else f"{base}@{k}"


_CANONICAL_INT = re.compile(r"(0|[1-9][0-9]{0,17})")


def query_order(ids) -> np.ndarray:
    """Positions that sort query ids numerically when every id is a whole number written plainly
    (``1, 2, 10, 100`` rather than ``1, 10, 100, 2``), else in byte order (as trec_eval).

    Parameters
    ----------
    ids : sequence of str
        Query ids.

    Returns
    -------
    numpy.ndarray of int64, shape (len(ids),)
        A stable ordering of the positions.

    Examples
    --------
    >>> query_order(["10", "2", "1"]).tolist()
    [2, 1, 0]
    >>> query_order(["q10", "q2"]).tolist()  # not all numbers: byte order
    [0, 1]
    """
    texts = [str(q) for q in ids]
    if texts and all(_CANONICAL_INT.fullmatch(t) for t in texts):
        return np.argsort(np.array([int(t) for t in texts], dtype=np.int64), kind="stable")
    return np.argsort(np.array(texts, dtype=object), kind="stable")


# The 11 recall levels of the classic interpolated precision-recall curve, as trec_eval names them.
PR_CURVE_LEVELS = tuple(r / 10 for r in range(11))
PR_CURVE_METRICS = tuple(f"iprec_at_recall_{r:.2f}" for r in PR_CURVE_LEVELS)


def pr_curve_table(reports: Mapping[str, EvaluationReport]) -> pd.DataFrame:
    """The 11-point interpolated precision-recall curve of each system (trec_eval's
    ``iprec_at_recall_0.00`` ... ``_1.00``, averaged over the report's queries).

    Parameters
    ----------
    reports : {system name: EvaluationReport}
        Computed with the metrics :data:`PR_CURVE_METRICS`.

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``recall`` (0, 0.1, ..., 1) and ``precision`` (interpolated, mean
        over queries): 11 rows per system, in the order of ``reports``.

    Raises
    ------
    EvalSuiteError
        A report lacks one of the curve's metrics.

    Examples
    --------
    >>> from evalsuite import evaluate
    >>> report = evaluate({"q1": {"a": 1, "b": 1}}, {"q1": {"a": 2.0, "x": 1.0, "b": 0.5}}, PR_CURVE_METRICS)
    >>> # R = 2, P = 1 at rank 1, 2/3 at rank 3: recall 0 to 0.7 round to the 1st relevant doc, 0.8 to 1 to the 2nd
    >>> pr_curve_table({"s": report})["precision"].round(4).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6667, 0.6667, 0.6667]
    """
    rows = []
    for system, report in reports.items():
        for level, name in zip(PR_CURVE_LEVELS, PR_CURVE_METRICS):
            if name not in report.scores:
                raise EvalSuiteError(f"the report of {system!r} has no {name}", field="metrics", value=name)
            rows.append({"system": system, "recall": level, "precision": float(report.scores[name])})
    return pd.DataFrame(rows, columns=["system", "recall", "precision"])


# trec_eval's summary block: the counts of its official set (num_ret, num_rel, num_rel_ret).
TREC_SUMMARY_METRICS = tuple(m for m in TREC_OFFICIAL if m in METRICS and METRICS[m].integer)


def trec_summary_table(reports: Mapping[str, EvaluationReport]) -> pd.DataFrame:
    """trec_eval's summary block per system: ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``.

    Parameters
    ----------
    reports : {system name: EvaluationReport}
        Computed with the metrics :data:`TREC_SUMMARY_METRICS`.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``system``; int64 columns, sums over the evaluated queries as trec_eval prints
        them (a qrels query missing from a run counts its relevant docs in num_rel, 0 elsewhere).

    Raises
    ------
    EvalSuiteError
        A report lacks one of the metrics.

    Examples
    --------
    >>> from evalsuite import evaluate
    >>> report = evaluate({"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}, {"q1": {"a": 2.0, "x": 1.0}}, TREC_SUMMARY_METRICS)
    >>> trec_summary_table({"s": report}).loc["s"].tolist()  # q2 missing: its relevant doc counts in num_rel
    [2, 2, 3, 1]
    """
    rows = []
    for system, report in reports.items():
        missing = [m for m in TREC_SUMMARY_METRICS if m not in report.scores]
        if missing:
            raise EvalSuiteError(f"the report of {system!r} has no {missing[0]}", field="metrics", value=missing[0])
        rows.append({"system": system, "num_q": int(report.params["n_queries"]),
                     **{m: int(round(float(report.scores[m]))) for m in TREC_SUMMARY_METRICS}})
    columns = ["system", "num_q", *TREC_SUMMARY_METRICS]
    return pd.DataFrame(rows, columns=columns).set_index("system").astype("int64")


def judged_table(reports: Mapping[str, EvaluationReport], cutoffs: Sequence[int | None]) -> pd.DataFrame:
    """judged@k per system: the share of top-k docs that have a judgement (any grade).

    The values are :func:`evalsuite.evaluate`'s per-query ``judged@k`` (so the reports must
    have been computed with those metrics), averaged over the queries the run answered: a qrels
    query missing from the run has no docs that could lack a judgement, and counting it as 0
    (as trec_eval -c does for every measure) would report holes in the qrels that are gaps in
    the run. Low values mean holes in the qrels: unjudged docs count as not relevant, which
    lowers every metric of that run.

    Parameters
    ----------
    reports : {system name: EvaluationReport}
    cutoffs : sequence of int or None
        The cutoffs k; None is the whole ranked list (metric ``judged``).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``system``: ``queries answered`` (the queries averaged over), one column
        ``judged@k`` (``judged`` for the whole list) per cutoff, and ``queries with an unjudged
        doc in the top k`` for the largest cutoff (``in the ranked list`` when the whole list is
        among them). A run that answers no qrels query has NaN means.

    Raises
    ------
    EvalSuiteError
        A report lacks one of the ``judged@k`` metrics.
    """
    rows = []
    numeric = sorted(k for k in cutoffs if k is not None)
    largest = None if (None in cutoffs or not numeric) else numeric[-1]
    for system, report in reports.items():
        answered = ~report.per_query.index.isin(report.defaulted_queries)
        row = {"system": system, "queries answered": int(answered.sum())}
        for k in cutoffs:
            name = metric_name("judged", k)
            if name not in report.scores:
                raise EvalSuiteError(f"the report of {system!r} has no {name} column", field="metrics", value=name)
            values = report.per_query[name].to_numpy(dtype=np.float64)[answered]
            row[name] = float(values.mean()) if values.size else float("nan")
        if len(cutoffs):
            top = metric_name("judged", largest)
            label = "in the ranked list" if largest is None else f"in the top {largest}"
            row[f"queries with an unjudged doc {label}"] = int(
                (report.per_query[top].to_numpy(dtype=np.float64)[answered] < 1.0).sum())
        rows.append(row)
    return pd.DataFrame(rows).set_index("system") if rows else pd.DataFrame()


def per_query_table(report: EvaluationReport) -> pd.DataFrame:
    """The report's per-query table with the query id as a column and an ``outcome`` column.

    ``outcome`` is "scored" or the reason the query scored 0 (missing from the run, no
    relevant judged doc), so the zero rows are explained where they are shown.
    """
    table = report.per_query.reset_index()
    table = table.iloc[query_order(table["query_id"])].reset_index(drop=True)  # 1, 2, 10 when ids are numbers
    outcome = pd.Series("scored", index=table.index, dtype=object)
    ids = table["query_id"]
    outcome[ids.isin(report.no_relevant_queries).to_numpy()] = "scored 0: no relevant judged doc"
    outcome[ids.isin(report.defaulted_queries).to_numpy()] = "scored 0: missing from the run"
    table["outcome"] = outcome.astype(str)
    return table


# ----------------------------------------------------------------------------------------------
# Ranked lists with relevance labels.


def _label(grade: float, rel_level: float) -> str:
    if np.isnan(grade):
        return "unjudged"
    return f"relevant ({grade:g})" if grade >= rel_level else f"not relevant ({grade:g})"


def ranked_list_with_labels(run: Run, qrels: Qrels | None, query_id: str, k: int | None = 20,
                            rel_level: float = 1, titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The top ``k`` of one query's ranked list with each doc's grade and a readable label.

    Parameters
    ----------
    run : Run
        The ranking (its order is EvalSuite's: score descending, ties by doc id descending).
    qrels : Qrels or None
        Judgements; None (or a query without judgements) labels every doc "unjudged".
    query_id : str
        The query; a query the run lacks gives an empty table.
    k : int or None
        Rows to keep (None: all).
    rel_level : float
        Minimum grade that counts as relevant (as in :func:`evalsuite.evaluate`).
    titles : {doc_id: title}, optional
        Adds a ``title`` column (empty for unknown docs).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1-based), ``doc_id``, [``title``], ``score``, ``grade`` (NaN when
        unjudged), ``label`` ("relevant (g)", "not relevant (g)", "unjudged").
    """
    try:
        ranked = run.query(query_id)
    except KeyError:
        ranked = pd.DataFrame({"rank": pd.Series([], dtype=np.int64), "doc_id": pd.Series([], dtype=object),
                               "score": pd.Series([], dtype=np.float64)})
    if k is not None:
        ranked = ranked.iloc[:k].copy()
    judgements: dict[str, float] = {}
    if qrels is not None:
        try:
            judgements = qrels.query(query_id)
        except KeyError:
            judgements = {}
    grades = np.array([judgements.get(d, np.nan) for d in ranked["doc_id"]], dtype=np.float64)
    ranked["grade"] = grades
    ranked["label"] = [_label(g, rel_level) for g in grades]
    if titles is not None:
        ranked.insert(2, "title", [titles.get(d, "") for d in ranked["doc_id"]])
    return ranked.reset_index(drop=True)


def side_by_side_lists(list_a: pd.DataFrame, list_b: pd.DataFrame, names: tuple[str, str] = ("A", "B")) -> pd.DataFrame:
    """Two labelled ranked lists (from :func:`ranked_list_with_labels`) aligned by rank.

    Returns
    -------
    pandas.DataFrame
        ``rank`` then, for each system, ``<name>: doc_id``, [``<name>: title``], ``<name>:
        label`` and ``<name>: rank in other`` (the doc's rank in the other list, empty when
        the other list's shown rows do not have it).
    """
    a_name, b_name = names
    depth = max(len(list_a), len(list_b))
    out = pd.DataFrame({"rank": np.arange(1, depth + 1)})
    rank_in_a = dict(zip(list_a["doc_id"], list_a["rank"]))
    rank_in_b = dict(zip(list_b["doc_id"], list_b["rank"]))
    for name, frame, other in ((a_name, list_a, rank_in_b), (b_name, list_b, rank_in_a)):
        docs = list(frame["doc_id"]) + [None] * (depth - len(frame))
        labels = list(frame["label"]) + [None] * (depth - len(frame))
        out[f"{name}: doc_id"] = docs
        if "title" in frame:
            out[f"{name}: title"] = list(frame["title"]) + [None] * (depth - len(frame))
        out[f"{name}: label"] = labels
        out[f"{name}: rank in other"] = pd.array([other.get(d) if d is not None else None for d in docs], dtype="Int64")
    return out


# ----------------------------------------------------------------------------------------------
# Two systems, query by query.


def difference_columns(system_a: str, system_b: str) -> tuple[str, str]:
    """Column names of the two systems in :func:`per_query_difference`: ``"A: <name>"`` and
    ``"B: <name>"``. The prefixes keep them apart from the fixed columns (``query_id``,
    ``diff``, ``outcome``) and from each other, whatever the systems are called."""
    return f"A: {system_a}", f"B: {system_b}"


def per_query_difference(per_query: pd.DataFrame, system_a: str, system_b: str) -> pd.DataFrame:
    """Per-query values of two systems and ``diff = B - A``, sorted by diff (worst for B first).

    Parameters
    ----------
    per_query : pandas.DataFrame
        Index query id, one column per system (``Comparison.per_query[metric]``, or any
        query x system table).
    system_a, system_b : str
        Column names; A is the baseline.

    Returns
    -------
    pandas.DataFrame
        Columns ``query_id``, ``A: <system_a>``, ``B: <system_b>`` (see
        :func:`difference_columns`; a system may be called ``diff`` or ``query_id``), ``diff``,
        ``outcome`` ("B better", "tie", "B worse", "undefined" when either value is NaN). Rows
        sorted by diff ascending (NaN last), ties by query id.

    Raises
    ------
    EvalSuiteError
        ``per_query`` has no column, or several, for one of the systems.
    """
    positions = []
    for name in (system_a, system_b):
        found = np.flatnonzero(per_query.columns == name)
        if found.size == 0:
            raise EvalSuiteError(f"no per-query values for system {name!r}", field="system", value=name)
        if found.size > 1:
            raise EvalSuiteError(f"system {name!r} has {found.size} columns of per-query values; which one "
                                 "to compare is ambiguous", field="system", value=name)
        positions.append(int(found[0]))
    # Positional access: a system named like the index must not change which values are read.
    a = np.asarray(per_query.iloc[:, positions[0]], dtype=np.float64)
    b = np.asarray(per_query.iloc[:, positions[1]], dtype=np.float64)
    diff = b - a
    outcome = np.where(np.isnan(diff), "undefined", np.where(diff > 0, "B better", np.where(diff < 0, "B worse", "tie")))
    col_a, col_b = difference_columns(system_a, system_b)
    frame = pd.DataFrame({"query_id": np.asarray(per_query.index.astype(str), dtype=object), col_a: a, col_b: b,
                          "diff": diff, "outcome": outcome})
    frame = frame.iloc[query_order(frame["query_id"])]  # ties by query id, numerically when ids are numbers
    return frame.sort_values("diff", kind="stable", na_position="last").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# Comparison reports, shaped to fit a page.
