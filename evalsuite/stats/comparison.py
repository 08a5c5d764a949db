"""Is the difference real? Paired comparison of systems over the same queries.

Per metric and per pair of systems: each system's mean, the mean paired difference with a
bootstrap confidence interval, the p-value of a paired test (randomisation, t-test or Wilcoxon),
p-values adjusted across every row of the report (Holm, Bonferroni, Benjamini-Hochberg), an
effect size and win / tie / loss counts. Pairing is always by query id, never by position.

Everything random is seeded and drawn once per report (:mod:`evalsuite.stats.resampling`): one set of
sign flips (one per query and resample, ``numpy.random.default_rng(seed)``) for the randomisation
tests of every row, and one set of resampled query indices for the bootstrap intervals of every
row with the same queries, applied to all metrics and systems as matrix products. So a row's
numbers depend on the seed and the report's query ids, not on which other systems or metrics
are in the report, and the same seed gives the same numbers every time.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import EvalSuiteError

from .comparison_report import ComparisonReport, latex_escape
from .paired import (
    CI_METHODS, CORRECTIONS, DEFAULT_COMPARE_METRICS, PAIRS, TABLE_COLUMNS, TESTS, ZERO_METHODS, _stats,
    adjust_p_values, effect_size, paired_bootstrap_interval, paired_randomization_test, win_tie_loss,
)
from .resampling import bootstrap_intervals, sign_flip_tests

__all__ = [
    "compare",
    "compare_per_query",
    "compare_records",
    "ComparisonReport",
    "paired_randomization_test",
    "paired_bootstrap_interval",
    "adjust_p_values",
    "effect_size",
    "win_tie_loss",
    "latex_escape",
    "TABLE_COLUMNS",
]

# --------------------------------------------------------------------------------------------
# compare_per_query / compare
# --------------------------------------------------------------------------------------------


def _check_options(test, correction, alpha, n_resamples, ci, confidence, tie_tolerance, seed, zero_method, pairs):
    if test not in TESTS:
        raise EvalSuiteError(f"test must be one of {', '.join(TESTS)}", field="test", value=test)
    if correction not in CORRECTIONS:
        raise EvalSuiteError(f"correction must be one of {', '.join(CORRECTIONS)} (or None)", field="correction",
                             value=correction)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise EvalSuiteError("alpha must be a number between 0 and 1", field="alpha", value=alpha)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise EvalSuiteError("n_resamples must be a positive integer", field="n_resamples", value=n_resamples)
    if ci not in CI_METHODS:
        raise EvalSuiteError(f"ci must be one of {', '.join(CI_METHODS)}", field="ci", value=ci)
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise EvalSuiteError("confidence must be a number between 0 and 1", field="confidence", value=confidence)
    if not (isinstance(tie_tolerance, (int, float)) and tie_tolerance >= 0 and math.isfinite(tie_tolerance)):
        raise EvalSuiteError("tie_tolerance must be a finite number >= 0", field="tie_tolerance", value=tie_tolerance)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise EvalSuiteError("seed must be a non-negative integer (results are reproducible only with a fixed seed)",
                             field="seed", value=seed)
    if zero_method not in ZERO_METHODS:
        raise EvalSuiteError(f"zero_method must be one of {', '.join(ZERO_METHODS)}", field="zero_method",
                             value=zero_method)
    if correction == "westfall_young" and test != "permutation":
        raise EvalSuiteError("the Westfall-Young correction resamples sign flips: it needs test='permutation'",
                             field="correction", value=correction)
    if pairs not in PAIRS:
        raise EvalSuiteError("pairs must be 'baseline' (baseline vs each other system) or 'all' (every pair)",
                             field="pairs", value=pairs)


def _resolve_pairs(systems: list[str], baseline: str | None, pairs: str) -> tuple[list[str], list[tuple[str, str]]]:
    """System order with the baseline first, and the (baseline-side, system-side) pairs to compare."""
    if len(systems) < 2:
        raise EvalSuiteError(f"a comparison needs at least two systems; got {len(systems)}", field="systems",
                             value=systems)
    if baseline is None:
        baseline = systems[0]
    if baseline not in systems:
        raise EvalSuiteError(f"baseline is not one of the systems ({', '.join(systems)})", field="baseline",
                             value=baseline)
    order = [baseline] + [s for s in systems if s != baseline]
    if pairs == "baseline":
        return order, [(baseline, s) for s in order[1:]]
    return order, list(itertools.combinations(order, 2))


def _metric_values(frame: pd.DataFrame, system: str, metric: str) -> pd.Series:
    if metric not in frame.columns:
        raise EvalSuiteError(f"metric {metric!r} is missing from system {system!r} (its columns: "
                             f"{', '.join(map(str, frame.columns))})", field="metrics", value=metric)
    column = frame[metric]
    try:
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise EvalSuiteError(f"system {system!r}, metric {metric!r}: values must be numbers", field=metric,
                             value=column.iloc[:3].tolist()) from None
    if np.any(np.isinf(values)):
        bad = column.index[np.isinf(values)][0]
        raise EvalSuiteError(f"system {system!r}, metric {metric!r}: infinite value for query {bad!r}", field=metric,
                             value=float(values[np.isinf(values)][0]))
    return pd.Series(values, index=frame.index, name=system)


def _run_test(test: str, baseline_values: np.ndarray, system_values: np.ndarray, differences: np.ndarray,
              n_resamples: int, seed: int, zero_method: str) -> float:
    if not np.any(differences):
        # No query differs: no evidence of a difference. scipy's t-test gives NaN here and the
        # Wilcoxon test warns; p = 1 is the limit of every test.
        return 1.0
    if test == "permutation":
        return paired_randomization_test(differences, n_resamples=n_resamples, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's precision notes on near-constant differences
        if test == "t-test":
            return float(_stats().ttest_rel(system_values, baseline_values).pvalue)
        return float(_stats().wilcoxon(system_values, baseline_values, zero_method=zero_method).pvalue)


def _tukey_p_values(pending, tables: dict[str, pd.DataFrame], order: list[str]) -> np.ndarray:
    """Tukey's HSD p-value of every row: per metric one ``scipy.stats.tukey_hsd`` over all the
    systems, on the queries where every system has a value (as ranx's ``stat_test="tukey"``)."""
    results = {}
    for metric, table in tables.items():
        values = table[order].to_numpy(dtype=np.float64)
        values = values[~np.isnan(values).any(axis=1)]
        if values.shape[0] < 2:
            raise EvalSuiteError(f"metric {metric!r}: Tukey's HSD needs at least two queries with a value in every "
                                 f"system; {values.shape[0]} have one", field="metrics", value=metric)
        if np.all(values == values[:, :1]):
            results[metric] = np.ones((len(order), len(order)))  # no system differs on any query
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            results[metric] = np.asarray(_stats().tukey_hsd(*values.T).pvalue)
    index = {s: i for i, s in enumerate(order)}
    return np.array([min(1.0, float(results[job[0]][index[job[1]], index[job[2]]])) for job in pending])


def _too_few_to_be_significant(pending: list, test: str, alpha: float) -> list[str]:
    """A note for the rows whose queries are too few for any p-value to reach ``alpha``: on
    ``n`` queries that differ, a sign-flip test (the permutation test, or Wilcoxon's exact one)
    can give no two-sided p-value below ``2 / 2**n`` (only all + and all - are as extreme), so
    with 5 queries or fewer nothing is significant at 0.05, whatever the interval says."""
    if test not in ("permutation", "wilcoxon"):
        return []
    by_n: dict[int, list[str]] = {}
    for metric, base, other, va, vb, defined, *_ in pending:
        moved = int(np.count_nonzero(vb[defined] != va[defined]))
        if moved and 2.0 / 2.0 ** moved > alpha:
            by_n.setdefault(moved, []).append(f"{metric} ({base} vs {other})")
    return [f"{', '.join(names)}: {n} queries differ, so the {test} test's smallest possible p-value is 2/2^{n} = "
            f"{2.0 / 2.0 ** n:.3g}, above alpha = {alpha:g}: no difference can be significant, and a bootstrap "
            "interval on so few queries is not reliable either; compare on more queries" for n, names in sorted(by_n.items())]


def compare_per_query(per_query: Mapping[str, pd.DataFrame], metrics: str | Sequence[str] | None = None, *,
                      baseline: str | None = None, pairs: str = "baseline", test: str = "permutation",
                      correction: str | None = "holm", alpha: float = 0.05, seed: int = 0,
                      n_resamples: int = 10_000, ci: str = "bca", confidence: float = 0.95,
                      tie_tolerance: float = 1e-9, zero_method: str = "wilcox") -> ComparisonReport:
    """Compare systems from their per-query metric values: the statistical core of :func:`compare`.

    Parameters
    ----------
    per_query : mapping of str -> pandas.DataFrame
        Per system (at least two) a table indexed by query id (unique) with one numeric column
        per metric, the shape of ``EvaluationReport.per_query``. NaN means the metric is
        undefined for that query (e.g. a RAG metric with nothing to judge).
    metrics : str, sequence of str, or None
        Columns to compare; None takes every column of the baseline. Every system must have
        every metric.
    baseline : str or None
        The reference system (default: the first). ``diff`` is always system - baseline.
    pairs : {"baseline", "all"}
        Baseline vs each other system, or every pair (with the baseline first, then the
        systems in the given order; in each pair the earlier system is in ``baseline``).
    test : {"permutation", "t-test", "wilcoxon", "tukey"}
        Two-sided paired test on the per-query values: the randomisation test (sign flips shared
        by all rows, seeded; ``scipy.stats.permutation_test``'s p-value, exactly so when all
        ``2**n`` patterns are enumerated, within Monte Carlo error otherwise), ``scipy.stats.ttest_rel``,
        ``scipy.stats.wilcoxon`` (``method="auto"``, ``zero_method`` below), or Tukey's HSD
        (``scipy.stats.tukey_hsd`` over all the systems on the queries where all have a value,
        as ranx's ``stat_test="tukey"``; not paired, and its p-values already cover every pair
        of systems on a metric).
    correction : {"holm", "bonferroni", "fdr_bh", "westfall_young", "none"} or None
        Multiple-comparison adjustment over every row of the report (all pairs x all metrics).
        ``westfall_young`` (step-down max-T over the shared sign flips; Westfall & Young 1993,
        recommended for correlated IR metrics by Boytsov et al., SIGIR 2013) needs
        ``test="permutation"``.
    alpha : float in (0, 1)
        A row is ``significant`` when its adjusted p-value is <= alpha.
    seed : int >= 0
        Seed of every random draw (test and interval); same seed, same numbers.
    n_resamples : int >= 1
        Resamples of the randomisation test and of the bootstrap.
    ci : {"bca", "percentile"}
        Bootstrap interval of the mean difference (``scipy.stats.bootstrap``, queries resampled).
    confidence : float in (0, 1)
        Confidence level of the interval.
    tie_tolerance : float >= 0
        A query is a tie when ``|system - baseline| <= tie_tolerance`` (win/tie/loss only; the
        tests use the exact differences).
    zero_method : {"wilcox", "pratt", "zsplit"}
        How the Wilcoxon test treats queries where both systems score the same (scipy's
        options; default "wilcox" drops them).

    Returns
    -------
    ComparisonReport
        See :class:`ComparisonReport`. When every paired difference of a row is exactly 0 its
        p-value is 1.0 (no test is run), its interval (0, 0) and its effect size 0. Rows on
        too few differing queries for the permutation or Wilcoxon test to reach ``alpha``
        (``2 / 2**n > alpha``: 5 or fewer at 0.05) are named in a warning.

    Raises
    ------
    EvalSuiteError
        Fewer than two systems; a system that is not a DataFrame or has duplicate query ids;
        a metric missing from a system or not numeric; two compared systems sharing no query
        id; fewer than two queries with a value in both systems for a metric; a bad option.

    References
    ----------
    M. D. Smucker, J. Allan, B. Carterette, "A comparison of statistical significance tests for
    information retrieval evaluation", CIKM 2007; T. Sakai, "Statistical reform in information
    retrieval?", SIGIR Forum 48 (2014); ranx's ``compare`` (Bassani, ECIR 2022) for the report
    layout.

    Examples
    --------
    >>> import pandas as pd
    >>> ids = ["q1", "q2", "q3", "q4", "q5"]
    >>> old = pd.DataFrame({"faithfulness": [0.25, 0.5, 0.25, 0.5, None]}, index=ids)
    >>> new = pd.DataFrame({"faithfulness": [0.75, 0.75, 0.5, 0.75, 0.5]}, index=ids)
    >>> row = compare_per_query({"old": old, "new": new}, n_resamples=100).table.iloc[0]
    >>> # q5 is NaN for old: left out. d = 0.5, 0.25, 0.25, 0.25 on q1..q4, mean 1.25 / 4 = 0.3125.
    >>> # 2**4 = 16 <= 100 sign patterns, so the test is exact: only all + and all - reach
    >>> # |mean| >= 0.3125, p = 2 / 16. std(d, ddof=1) = 0.125, effect 0.3125 / 0.125 = 2.5.
    >>> float(row["diff"]), float(row["p_value"]), float(row["effect_size"])
    (0.3125, 0.125, 2.5)
    >>> int(row["wins"]), int(row["n_queries"]), int(row["n_dropped_nan"]), bool(row["significant"])
    (4, 4, 1, False)
    """
    correction = "none" if correction is None else correction
    _check_options(test, correction, alpha, n_resamples, ci, confidence, tie_tolerance, seed, zero_method, pairs)
    if not isinstance(per_query, Mapping):
        raise EvalSuiteError("per_query must map each system name to its per-query DataFrame", field="per_query",
                             value=type(per_query).__name__)
    frames: dict[str, pd.DataFrame] = {}
    for name, frame in per_query.items():
        if not isinstance(frame, pd.DataFrame):
            raise EvalSuiteError(f"system {name!r}: expected a pandas DataFrame indexed by query id",
                                 field="per_query", value=type(frame).__name__)
        if str(name) in frames:
            raise EvalSuiteError("two systems have the same name", field="systems", value=str(name))
        if not frame.index.is_unique:
            dup = frame.index[frame.index.duplicated()][0]
            raise EvalSuiteError(f"system {name!r}: query id {dup!r} appears more than once", field="query_id",
                                 value=dup)
        frames[str(name)] = frame
    order, compared = _resolve_pairs(list(frames), None if baseline is None else str(baseline), pairs)
    if metrics is None:
        metrics = list(frames[order[0]].columns)
    elif isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(dict.fromkeys(metrics))
    if not metrics:
        raise EvalSuiteError("no metrics to compare", field="metrics", value=metrics)

    pending, tables = [], {}
    for metric in metrics:
        columns = {s: _metric_values(frames[s], s, metric) for s in order}
        tables[metric] = pd.concat(columns, axis=1, join="outer", sort=False)
        for base, other in compared:
            a, b = columns[base], columns[other]
            common = a.index.intersection(b.index, sort=False)
            if len(common) == 0:
                raise EvalSuiteError(
                    f"systems {base!r} and {other!r} share no query id, so nothing can be paired "
                    f"({base!r} has ids such as {list(a.index[:3])}, {other!r} such as {list(b.index[:3])})",
                    field="query_id")
            # Aligned on the report's query ids (the union of every system's), NaN where undefined.
            va = tables[metric][base].to_numpy(dtype=np.float64)
            vb = tables[metric][other].to_numpy(dtype=np.float64)
            defined = ~(np.isnan(va) | np.isnan(vb))
            n = int(np.count_nonzero(defined))
            if n < 2:
                raise EvalSuiteError(
                    f"metric {metric!r}, {base!r} vs {other!r}: {n} queries have a value in both systems "
                    f"({len(common) - n} of {len(common)} shared queries are NaN in one of them); "
                    "a paired comparison needs at least two", field="metrics", value=metric)
            pending.append((metric, base, other, va, vb, defined, len(common) - n, len(a) + len(b) - 2 * len(common)))

    # One resampling pass for the whole report: the per-query differences of every row are the
    # columns of one matrix (0 where a row is undefined), and the sign flips and the bootstrap's
    # resampled queries are drawn once and applied to all of them (evalsuite.stats.resampling).
    D = np.column_stack([np.where(job[5], job[4] - job[3], 0.0) for job in pending])
    M = np.column_stack([job[5] for job in pending])
    wy = None
    if test == "permutation":
        p_values, wy = sign_flip_tests(D, M, int(n_resamples), int(seed), westfall_young=correction == "westfall_young")
    elif test == "tukey":
        p_values = _tukey_p_values(pending, tables, order)
    else:
        p_values = np.array([_run_test(test, job[3][job[5]], job[4][job[5]], D[job[5], k], int(n_resamples),
                                       int(seed), zero_method) for k, job in enumerate(pending)])
    for k, job in enumerate(pending):
        if not math.isfinite(p_values[k]):
            raise EvalSuiteError(f"metric {job[0]!r}, {job[1]!r} vs {job[2]!r}: the {test} gave no p-value for "
                                 f"these {int(job[5].sum())} differences", field="test", value=test)
    intervals = bootstrap_intervals(D, M, ci, confidence, int(n_resamples), int(seed))

    rows, notes = [], []
    for k, ((metric, base, other, va, vb, defined, n_dropped, n_unpaired), (low, high, note)) in enumerate(
            zip(pending, intervals)):
        va, vb = va[defined], vb[defined]
        d = vb - va
        if note and "percentile" in note:
            notes.append(f"{metric}, {base} vs {other}: {note}")
        wins, ties, losses = win_tie_loss(d, tie_tolerance)
        rows.append({
            "metric": metric, "baseline": base, "system": other,
            "mean_baseline": float(np.mean(va)), "mean_system": float(np.mean(vb)), "diff": float(np.mean(d)),
            "ci_low": low, "ci_high": high, "p_value": float(p_values[k]), "effect_size": effect_size(d),
            "wins": wins, "ties": ties, "losses": losses, "n_queries": int(d.size),
            "n_dropped_nan": int(n_dropped), "n_unpaired": int(n_unpaired),
        })
    notes += _too_few_to_be_significant(pending, test, alpha)
    table = pd.DataFrame(rows)
    table["p_adjusted"] = wy if wy is not None else adjust_p_values(table["p_value"].to_numpy(), correction)
    table["significant"] = (table["p_adjusted"] <= alpha).astype(bool)
    table = table[list(TABLE_COLUMNS)]
    for col in ("metric", "baseline", "system"):
        table[col] = table[col].astype("string")

    system_means = pd.DataFrame({m: tables[m].mean(axis=0, skipna=True) for m in metrics}).reindex(order)
    system_means.index.name = "system"
    params = {
        "test": test, "test_description": TESTS[test],
        "correction": correction, "correction_description": CORRECTIONS[correction],
        "alpha": alpha, "significance": "p_adjusted <= alpha",
        "seed": int(seed), "n_resamples": int(n_resamples),
        "ci": ci, "confidence": confidence,
        "ci_description": f"{CI_METHODS[ci]} bootstrap interval of the mean per-query difference, queries "
                          "resampled with replacement (the resamples scipy.stats.bootstrap draws, shared by "
                          "every row; scipy's interval arithmetic)",
        "tie_tolerance": tie_tolerance,
        "zero_method": zero_method, "zero_method_description": ZERO_METHODS[zero_method],
        "wilcoxon_method": "auto (scipy chooses the exact or the normal-approximation null distribution)",
        "effect_size": "mean(d) / std(d, ddof=1), d = system - baseline per query (Cohen's d_z); 0 when every d "
                       "is 0, +-inf when every d is the same non-zero value",
        "all_zero_differences": "p_value 1.0 without running the test, interval (0, 0), effect size 0",
        "pairs": pairs, "baseline": order[0], "systems": order, "metrics": metrics,
        "pairing": "by query id; queries NaN in either system are left out of that metric's comparison "
                   "(n_dropped_nan), as are queries present in only one system (n_unpaired)",
        "n_comparisons": len(table),
        "rng": "one resampling pass per report: sign flips from numpy.random.default_rng(seed), one per query "
               "and resample, shared by every row's randomisation test; resampled query indices from "
               "default_rng(seed), shared by every row's bootstrap over the same queries",
    }
    return ComparisonReport(table=table, per_query=tables, system_means=system_means, params=params, warnings=notes)


def compare(qrels, runs: Mapping[str, Any], metrics: str | Sequence[str] = DEFAULT_COMPARE_METRICS, *,
            queries: str = "qrels", rel_level: float = 1, baseline: str | None = None, pairs: str = "baseline",
            test: str = "permutation", correction: str | None = "holm", alpha: float = 0.05, seed: int = 0,
            n_resamples: int = 10_000, ci: str = "bca", confidence: float = 0.95, tie_tolerance: float = 1e-9,
            zero_method: str = "wilcox") -> ComparisonReport:
    """Evaluate several runs on the same qrels and compare them query by query.

    Every run is scored by :func:`evalsuite.evaluate` with the same qrels, metrics, ``queries``
    policy and ``rel_level``, so every system is evaluated on the same query set (under the
    default ``queries="qrels"`` a qrels query missing from a run scores 0 for that run, as
    trec_eval -c and ranx ``make_comparable=True`` do); then :func:`compare_per_query` pairs
    the per-query values by query id.

    Parameters
    ----------
    qrels : Qrels, path, {query_id: {doc_id: grade}} or DataFrame
        Judgements, read once and shared by every run.
    runs : mapping of str -> Run, path, {query_id: {doc_id: score}} or DataFrame
        System name -> its run; at least two. The first is the baseline unless ``baseline``
        names another.
    metrics : str or sequence of str
        Metric names as :func:`evalsuite.evaluate` takes them.
    queries, rel_level
        As in :func:`evalsuite.evaluate`.
    baseline, pairs, test, correction, alpha, seed, n_resamples, ci, confidence, tie_tolerance, zero_method
        As in :func:`compare_per_query`.

    Returns
    -------
    ComparisonReport
        With ``evaluations`` holding each run's :class:`EvaluationReport` and their warnings
        in ``warnings``.

    Raises
    ------
    EvalSuiteError
        Fewer than two runs; two runs with the same name; two compared runs with no query in
        common (each would only be scored 0 where the other has results); everything
        :func:`evaluate` and :func:`compare_per_query` raise.

    References
    ----------
    As :func:`compare_per_query` (Smucker, Allan & Carterette, CIKM 2007; Sakai 2014; ranx
    ``compare``); the evaluation as :func:`evalsuite.evaluate` (trec_eval -c, ranx).

    Examples
    --------
    >>> qrels = {q: {"d1": 1} for q in ("q1", "q2", "q3", "q4")}
    >>> bm25 = {q: {"d2": 2.0, "d1": 1.0} for q in qrels}  # d1 at rank 2 everywhere: MRR 1/2
    >>> dense = {q: {"d1": 2.0, "d2": 1.0} for q in ("q1", "q2", "q3")}  # d1 at rank 1: MRR 1
    >>> dense["q4"] = bm25["q4"]
    >>> report = compare(qrels, {"bm25": bm25, "dense": dense}, "mrr", n_resamples=100, seed=0)
    >>> report
    ComparisonReport(2 systems, 1 metrics, 1 comparisons, test='permutation', correction='holm', alpha=0.05)
    >>> row = report.table.iloc[0]
    >>> # d = 1/2, 1/2, 1/2, 0: mean 0.375; exact sign-flip test over 2**4 = 16 patterns, 4 of them
    >>> # (the three halves all + or all -, times the sign of 0) reach |mean| >= 0.375: p = 4 / 16.
    >>> float(row["mean_baseline"]), float(row["mean_system"]), float(row["diff"]), float(row["p_value"])
    (0.5, 0.875, 0.375, 0.25)
    >>> int(row["wins"]), int(row["ties"]), int(row["losses"])
    (3, 1, 0)
    """
    from ..evaluation.local import as_qrels
    from ..evaluation.engines import evaluate

    if not isinstance(runs, Mapping):
        raise EvalSuiteError("runs must map each system name to its run, e.g. {'bm25': 'bm25.trec', 'dense': run}",
                             field="runs", value=type(runs).__name__)
    names = [str(n) for n in runs]
    if len(set(names)) != len(names):
        raise EvalSuiteError("two runs have the same name", field="runs", value=names)
    correction = "none" if correction is None else correction
    _check_options(test, correction, alpha, n_resamples, ci, confidence, tie_tolerance, seed, zero_method, pairs)
    order, compared = _resolve_pairs(names, None if baseline is None else str(baseline), pairs)
    shared_qrels = as_qrels(qrels)
    evaluations = {str(name): evaluate(shared_qrels, run, metrics, queries=queries, rel_level=rel_level)
                   for name, run in runs.items()}
    # Under queries="qrels" every run is scored on every qrels query, so two runs over disjoint
    # query sets would still "pair"; what each run actually answered is what must overlap.
    answered = {name: set(ev.query_ids) - set(ev.defaulted_queries) for name, ev in evaluations.items()}
    for base, other in compared:
        if not answered[base] & answered[other]:
            raise EvalSuiteError(
                f"runs {base!r} and {other!r} have no evaluated query in common ({base!r} answers e.g. "
                f"{sorted(answered[base])[:3]}, {other!r} e.g. {sorted(answered[other])[:3]}); "
                "they cannot be compared query by query", field="query_id")
    columns = list(evaluations[names[0]].per_query.columns)
    report = compare_per_query({name: ev.per_query for name, ev in evaluations.items()}, columns, baseline=order[0],
                               pairs=pairs, test=test, correction=correction, alpha=alpha, seed=seed,
                               n_resamples=n_resamples, ci=ci, confidence=confidence, tie_tolerance=tie_tolerance,
                               zero_method=zero_method)
    report.evaluations = evaluations
    report.params.update({
        "queries": queries, "rel_level": rel_level,
        "qrels_source": shared_qrels.source,
        "run_sources": {name: ev.params.get("run_source") for name, ev in evaluations.items()},
    })
    for name, ev in evaluations.items():
        report.warnings.extend(f"{name}: {w}" for w in ev.warnings)
    return report


def compare_records(report, metrics: str | Sequence[str] | None = None, systems: Sequence[str] | None = None, *,
                    baseline: str | None = None, pairs: str = "baseline", test: str = "permutation",
                    correction: str | None = "holm", alpha: float = 0.05, seed: int = 0, n_resamples: int = 10_000,
                    ci: str = "bca", confidence: float = 0.95, tie_tolerance: float = 1e-9,
                    zero_method: str = "wilcox", pair_by="query_id") -> ComparisonReport:
    """Compare systems on per-request RAG metrics, pairing requests by ``query_id`` (or another key).

    Parameters
    ----------
    report : RecordsReport
        From :func:`evalsuite.evaluate_records`; its ``per_query`` has columns ``system``,
        ``query_id`` and one float column per metric (NaN = undefined for that request).
    metrics : str, sequence of str, or None
        Columns of ``report.per_query`` to compare. None: ``report.metrics`` and ``success``
        when present. Latency columns (``latency_ms`` ...) may be named too: there a "win" is
        a *higher* latency.
    systems : sequence of str or None
        Systems to compare (at least two; default all, in the report's order). The baseline is
        the first unless ``baseline`` names another.
    baseline, pairs, test, correction, alpha, seed, n_resamples, ci, confidence, tie_tolerance, zero_method
        As in :func:`compare_per_query`. Requests undefined for a metric (NaN, e.g. an answer
        with no claims for faithfulness) are left out of that metric's comparison and counted
        (``n_dropped_nan``); requests only one system answered are counted in ``n_unpaired``.
    pair_by : {"query_id", "request_index"} or sequence of str, keyword-only
        What makes two systems' requests the same request: the query id (default), the n-th
        request of each system in file order, or one key per row of ``report.per_query``
        (:func:`evalsuite.records.pairing.request_keys` of the records, e.g. by question text);
        rows whose key is None are left out.

    Returns
    -------
    ComparisonReport
        As from :func:`compare_per_query`, with ``params["source"]`` the records' source.

    Raises
    ------
    EvalSuiteError
        Not a RecordsReport; unknown system or metric; fewer than two systems; systems whose
        request ids do not overlap (e.g. ids that embed the system name, as in LLMPerf dumps);
        fewer than two requests with a value in both systems; everything
        :func:`compare_per_query` raises.

    References
    ----------
    As :func:`compare_per_query`.

    Examples
    --------
    >>> from evalsuite import Records, evaluate_records
    >>> claims = {"v1": [[True, False]] * 4, "v2": [[True, True]] * 3 + [[True, False]]}
    >>> rows = [{"system": system, "query_id": f"q{i}", "answer_claims_supported": labels}
    ...         for system, per_request in claims.items() for i, labels in enumerate(per_request, 1)]
    >>> report = compare_records(evaluate_records(Records.from_rows(rows)), "faithfulness", n_resamples=100)
    >>> row = report.table.iloc[0]
    >>> # v1: 1 of 2 claims on every request; v2: 2 of 2 on q1..q3, 1 of 2 on q4: mean 3.5 / 4.
    >>> # d = 1/2, 1/2, 1/2, 0: exact sign-flip test, 4 of 16 patterns reach |mean| >= 0.375.
    >>> float(row["mean_baseline"]), float(row["mean_system"]), float(row["p_value"])
    (0.5, 0.875, 0.25)
    """
    from ..records.evaluation import RecordsReport

    if not isinstance(report, RecordsReport):
        raise EvalSuiteError("expected a RecordsReport (from evalsuite.evaluate_records)", field="report",
                             value=type(report).__name__)
    frame = report.per_query
    if metrics is None:
        metrics = list(report.metrics) + (["success"] if "success" in frame.columns else [])
        if not metrics:
            raise EvalSuiteError("these records have no per-request quality metric or success to compare; name "
                                 f"columns to compare (available: {', '.join(map(str, frame.columns[2:]))})",
                                 field="metrics")
    elif isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(dict.fromkeys(metrics))
    for metric in metrics:
        if metric in ("system", "query_id") or metric not in frame.columns:
            raise EvalSuiteError(f"metric {metric!r} is not in the records' per-request table (columns: "
                                 f"{', '.join(map(str, frame.columns[2:]))})", field="metrics", value=metric)
    known = list(report.systems)
    chosen = known if systems is None else [str(s) for s in systems]
    for system in chosen:
        if system not in known:
            raise EvalSuiteError(f"system {system!r} is not in the records (systems: {', '.join(known)})",
                                 field="systems", value=system)
    if len(set(chosen)) != len(chosen):
        raise EvalSuiteError("a system is named twice", field="systems", value=chosen)
    if isinstance(pair_by, str):
        from ..records.pairing import request_keys

        keys = request_keys(frame, pair_by) if pair_by != "query_id" else None
    else:
        keys = pd.Series(list(pair_by), index=frame.index, dtype=object)
        if len(keys) != len(frame):
            raise EvalSuiteError(f"pair_by has {len(keys)} keys for {len(frame)} requests", field="pair_by")
    if keys is not None:
        frame = frame.assign(query_id=keys)[keys.notna().to_numpy()]
    labels = frame["system"].to_numpy(dtype=object)
    per_system = {s: frame.loc[labels == s, ["query_id", *metrics]].set_index("query_id") for s in chosen}
    result = compare_per_query(per_system, metrics, baseline=baseline, pairs=pairs, test=test,
                               correction=correction, alpha=alpha, seed=seed, n_resamples=n_resamples, ci=ci,
                               confidence=confidence, tie_tolerance=tie_tolerance, zero_method=zero_method)
    result.params["source"] = report.params.get("source")
    result.params["pair_by"] = pair_by if isinstance(pair_by, str) else "given keys"
    return result
