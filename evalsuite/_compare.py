"""Is the difference real? Paired comparison of systems over the same queries.

Per metric and per pair of systems: each system's mean, the mean paired difference with a
bootstrap confidence interval, the p-value of a paired test (randomisation, t-test or Wilcoxon),
p-values adjusted across every row of the report (Holm, Bonferroni, Benjamini-Hochberg), an
effect size and win / tie / loss counts. Pairing is always by query id, never by position.

Everything random is seeded: each test and each interval draws from its own
``numpy.random.default_rng(seed)``, so a row's numbers do not depend on which other systems or
metrics are in the report, and the same seed gives the same numbers every time (also when a
large report runs its rows on several threads).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._validate import defuse_formula
from .errors import EvalSuiteError

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
]

DEFAULT_COMPARE_METRICS = ("ndcg@10", "map@100", "mrr@10", "recall@100")

TESTS = {
    "permutation": "two-sided paired randomisation test (sign flips of the per-query differences, "
                   "statistic: mean difference; Fisher 1935, as recommended for IR by Smucker et al. 2007)",
    "t-test": "two-sided paired Student's t-test (scipy.stats.ttest_rel)",
    "wilcoxon": "two-sided Wilcoxon signed-rank test (scipy.stats.wilcoxon)",
}
CORRECTIONS = {
    "holm": "Holm (1979) step-down, controls the family-wise error rate",
    "bonferroni": "Bonferroni, controls the family-wise error rate",
    "fdr_bh": "Benjamini-Hochberg (1995), controls the false discovery rate",
    "none": "no correction: each p-value is used as it is",
}
CI_METHODS = {"bca": "BCa", "percentile": "percentile"}
ZERO_METHODS = {
    "wilcox": "zero differences (queries where both systems score the same) are dropped before ranking "
              "(Wilcoxon 1945; scipy's default, as R's wilcox.test)",
    "pratt": "zero differences are ranked, then their ranks are dropped (Pratt 1959; more conservative)",
    "zsplit": "zero differences are ranked and their ranks split between the positive and negative sums",
}
PAIRS = ("baseline", "all")

TABLE_COLUMNS = (
    "metric", "baseline", "system", "mean_baseline", "mean_system", "diff", "ci_low", "ci_high",
    "p_value", "p_adjusted", "significant", "effect_size", "wins", "ties", "losses", "n_queries",
    "n_dropped_nan", "n_unpaired",
)

# Below this many resampled values in a report (queries x resamples, summed over rows), threads
# cost more than they save.
_THREADED_WORK = 20_000_000

# Resampling works in blocks of at most this many float64 values (about 32 MB per array), so a
# 7,000-query comparison with 10,000 resamples never holds a 70-million-element matrix.
_BLOCK_ELEMENTS = 4_000_000


@functools.cache
def _stats():
    """``scipy.stats``, imported on first use (it costs ~0.6 s; ``import evalsuite`` stays fast)."""
    import scipy.stats

    return scipy.stats


def _thread_count() -> int:
    try:
        return max(1, min(8, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on Linux
        return max(1, min(8, os.cpu_count() or 1))


def _rng_kwargs(seed: int) -> dict[str, np.random.Generator]:
    # scipy >= 1.15 takes ``rng``; older versions take a Generator as ``random_state`` (same effect).
    keyword = "rng" if "rng" in inspect.signature(_stats().bootstrap).parameters else "random_state"
    return {keyword: np.random.default_rng(seed)}


def _mean_statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(sample, axis=axis)


# --------------------------------------------------------------------------------------------
# The statistical pieces, each usable on its own
# --------------------------------------------------------------------------------------------


def paired_randomization_test(differences, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the paired randomisation (sign-flip) test of a mean difference.

    Under the null hypothesis the two systems are exchangeable on every query, so each per-query
    difference is as likely to have the opposite sign. The statistic is the mean difference; the
    null distribution flips the sign of each difference independently with probability 1/2.
    Computed by ``scipy.stats.permutation_test((differences,), mean, permutation_type="samples",
    vectorized=True, n_resamples=n_resamples)`` seeded with ``numpy.random.default_rng(seed)``:
    the exact test over all sign patterns when ``2**n <= n_resamples``, otherwise
    ``n_resamples`` random patterns, with scipy's p-value ``(count + 1) / (n_resamples + 1)``
    per tail (Phipson & Smyth 2010), two-sided. scipy's sign flips cost about 10 s for 7,000
    queries and 10,000 resamples on one core; rows of a report run on a thread pool.

    Parameters
    ----------
    differences : array-like of float, shape (n,)
        Per-query differences (system - baseline), n >= 1, finite.
    n_resamples : int >= 1
        Random sign patterns to draw (ignored when the exact test is smaller).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    float
        The two-sided p-value in (0, 1].

    References
    ----------
    R. A. Fisher, *The Design of Experiments* (1935); M. D. Smucker, J. Allan, B. Carterette,
    "A comparison of statistical significance tests for information retrieval evaluation",
    CIKM 2007; B. Phipson, G. K. Smyth, "Permutation P-values should never be zero", SAGMB 2010.
    """
    d = np.ascontiguousarray(differences, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise EvalSuiteError("differences must be a non-empty one-dimensional array", field="differences",
                             value=getattr(d, "shape", None))
    block = max(1, min(int(n_resamples), _BLOCK_ELEMENTS // d.size))
    result = _stats().permutation_test((d,), _mean_statistic, permutation_type="samples", vectorized=True,
                                       n_resamples=int(n_resamples), batch=block, **_rng_kwargs(seed))
    return float(result.pvalue)


def paired_bootstrap_interval(differences, method: str = "bca", confidence: float = 0.95,
                              n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float, str | None]:
    """Bootstrap confidence interval of the mean of paired differences (resampling queries).

    Resampling the per-query differences with replacement is the paired bootstrap over queries
    (both systems' values of a query travel together). Computed by ``scipy.stats.bootstrap`` on
    ``(differences,)`` with the mean as statistic, seeded with ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    differences : array-like of float, shape (n,)
        Per-query differences (system - baseline), n >= 2.
    method : {"bca", "percentile"}
        Bias-corrected and accelerated (Efron 1987) or plain percentile interval.
    confidence : float in (0, 1)
        Two-sided confidence level.
    n_resamples : int >= 1
        Bootstrap resamples.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    (low, high, note) : (float, float, str or None)
        The interval, and a note when it was not computed the ordinary way: when every
        difference is the same value ``c`` every resample has mean ``c`` and the interval is
        ``(c, c)`` (scipy's BCa is undefined there); when BCa is undefined for another reason
        (a degenerate jackknife) the percentile interval is returned and the note says so.

    References
    ----------
    B. Efron, "Better bootstrap confidence intervals", JASA 82 (1987); B. Efron and R. J.
    Tibshirani, *An Introduction to the Bootstrap* (1993).
    """
    d = np.ascontiguousarray(differences, dtype=np.float64)
    if method not in CI_METHODS:
        raise EvalSuiteError(f"ci must be one of {', '.join(CI_METHODS)}", field="ci", value=method)
    if np.all(d == d[0]):
        return float(d[0]), float(d[0]), "every difference is the same value: the interval is that value"
    block = max(1, min(n_resamples, _BLOCK_ELEMENTS // d.size))
    stats = _stats()
    with warnings.catch_warnings():
        # A degenerate BCa (NaN, with a warning and a 0/0 in the acceleration) is handled below.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap((d,), _mean_statistic, n_resamples=n_resamples, vectorized=True,
                                 batch=block, confidence_level=confidence, method=CI_METHODS[method],
                                 **_rng_kwargs(seed))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        result = stats.bootstrap((d,), _mean_statistic, n_resamples=n_resamples, vectorized=True,
                                 batch=block, confidence_level=confidence, method="percentile",
                                       **_rng_kwargs(seed))
        return (float(result.confidence_interval.low), float(result.confidence_interval.high),
                "BCa is undefined for these differences; the percentile interval is given")
    return low, high, None


def adjust_p_values(p_values, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons.

    Parameters
    ----------
    p_values : array-like of float, shape (m,)
        Unadjusted p-values in [0, 1].
    method : {"holm", "bonferroni", "fdr_bh", "none"}
        ``holm``: step-down, ``p_(i) * (m - i + 1)`` made monotone by a running maximum
        (1-based rank i in ascending order); ``bonferroni``: ``p * m``; ``fdr_bh``:
        Benjamini-Hochberg via ``scipy.stats.false_discovery_control``; ``none``: unchanged.
        All capped at 1.

    Returns
    -------
    numpy.ndarray, shape (m,), float64
        Adjusted p-values in the input order (a p-value is significant when adjusted <= alpha).

    References
    ----------
    S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6
    (1979); Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS B 57 (1995).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if method not in CORRECTIONS:
        raise EvalSuiteError(f"correction must be one of {', '.join(CORRECTIONS)}", field="correction", value=method)
    if p.ndim != 1 or np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise EvalSuiteError("p-values must be a one-dimensional array of numbers in [0, 1]", field="p_values")
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method == "fdr_bh":
        return np.asarray(_stats().false_discovery_control(p, method="bh"), dtype=np.float64)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p[order] * (m - np.arange(m))), 1.0)
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = stepped
    return adjusted


def effect_size(differences) -> float:
    """Standardised mean difference of paired values: ``mean(d) / std(d, ddof=1)``.

    Cohen's d for paired samples (often written d_z): how many standard deviations of the
    per-query differences the mean difference is. When the differences have no spread the
    ratio is undefined; this returns 0.0 when every difference is 0 (no effect) and ``+inf`` /
    ``-inf`` when every query moves by the same non-zero amount. "The same" allows for float
    rounding: a spread (max - min) within 1e-9 of the largest difference's size counts as none,
    so 0.2 - 0.1 and 0.6 - 0.5 are the same move.

    Parameters
    ----------
    differences : array-like of float, shape (n,), n >= 2

    References
    ----------
    J. Cohen, *Statistical Power Analysis for the Behavioral Sciences* (1988); T. Sakai,
    "Statistical reform in information retrieval?", SIGIR Forum 48 (2014).
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.size == 0:
        raise EvalSuiteError("no differences to measure", field="differences")
    size = float(np.max(np.abs(d)))
    if float(np.ptp(d)) <= 1e-9 * size or size == 0.0:
        # np.std of (nearly) equal values is rounding noise (1e-17), not a spread.
        mean = float(np.mean(d))
        return 0.0 if size == 0.0 else math.copysign(math.inf, mean)
    return float(np.mean(d)) / float(np.std(d, ddof=1))


def win_tie_loss(differences, tie_tolerance: float = 1e-9) -> tuple[int, int, int]:
    """Queries where the system is higher than the baseline, within ``tie_tolerance``, or lower.

    ``differences`` are system - baseline; a win is ``d > tie_tolerance``, a tie
    ``|d| <= tie_tolerance``, a loss ``d < -tie_tolerance``. "Win" means a higher value: for a
    metric where lower is better (latency) read wins as losses.
    """
    d = np.asarray(differences, dtype=np.float64)
    wins = int(np.count_nonzero(d > tie_tolerance))
    losses = int(np.count_nonzero(d < -tie_tolerance))
    return wins, int(d.size) - wins - losses, losses


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
}


def latex_escape(text: Any) -> str:
    """``str(text)`` with LaTeX's special characters escaped for text mode."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))




def _spreadsheet_safe(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula, with a leading single quote."""
    return defuse_formula(value) if isinstance(value, str) else value


def _format_p(p: float, digits: int) -> str:
    floor = 10.0 ** -digits
    return f"<{floor:.{digits}f}" if p < floor else f"{p:.{digits}f}"


@dataclass
class ComparisonReport:
    """What :func:`compare` and :func:`compare_per_query` return.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (metric, pair of systems), in metric order then pair order, with columns
        ``metric, baseline, system`` (str); ``mean_baseline, mean_system`` (means over the
        queries compared in that row); ``diff`` (mean of system - baseline); ``ci_low,
        ci_high`` (bootstrap interval of ``diff``); ``p_value`` (the paired test), ``p_adjusted``
        (corrected over all rows of the table), ``significant`` (bool, ``p_adjusted <= alpha``);
        ``effect_size`` (``diff / std`` of the differences, ddof=1); ``wins, ties, losses``
        (queries where the system is higher, within ``tie_tolerance``, lower); ``n_queries``
        (queries compared), ``n_dropped_nan`` (queries in both systems left out because the
        metric is NaN, i.e. undefined, for one of them), ``n_unpaired`` (queries in only one of
        the two systems, left out).
    per_query : dict of str -> pandas.DataFrame
        Per metric a query x system table of the values compared (outer join on query id, NaN
        where a system has no value).
    system_means : pandas.DataFrame
        System x metric: each system's mean over the queries where it has a value (what
        :meth:`to_latex` prints).
    params : dict
        test, correction, alpha, seed, n_resamples, ci, confidence, tie_tolerance,
        zero_method (Wilcoxon), pairs, baseline, systems, metrics, n_comparisons and plain-word
        descriptions of each choice.
    warnings : list of str
        Things worth knowing (undefined intervals, evaluation warnings from :func:`compare`).
    evaluations : dict of str -> EvaluationReport, or None
        From :func:`compare`: each system's evaluation (queries defaulted to 0, dropped ...).
    """

    table: pd.DataFrame
    per_query: dict[str, pd.DataFrame]
    system_means: pd.DataFrame
    params: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    evaluations: dict[str, Any] | None = None

    @property
    def systems(self) -> list[str]:
        """System names, baseline first."""
        return list(self.params["systems"])

    @property
    def metrics(self) -> list[str]:
        """Metric names, in report order."""
        return list(self.params["metrics"])

    def to_dataframe(self) -> pd.DataFrame:
        """A copy of :attr:`table`."""
        return self.table.copy()

    def describe(self) -> list[str]:
        """The test, interval and correction in plain words, one line each."""
        p = self.params
        if p["test"] == "permutation":
            test = f"{TESTS['permutation']}; {p['n_resamples']:,} resamples, seed {p['seed']}"
        elif p["test"] == "wilcoxon":
            test = f"{TESTS['wilcoxon']}; zero_method={p['zero_method']!r}: {ZERO_METHODS[p['zero_method']]}"
        else:
            test = TESTS[p["test"]]
        return [
            f"test: {test}",
            (f"interval: {p['confidence']:.0%} {CI_METHODS[p['ci']]} bootstrap interval of the mean difference "
             f"(queries resampled, {p['n_resamples']:,} resamples, seed {p['seed']})"),
            (f"correction: {CORRECTIONS[p['correction']]}; over all {p['n_comparisons']} comparisons of this report; "
             f"significant: adjusted p <= {p['alpha']}"),
        ]

    def to_text(self, digits: int = 4) -> str:
        """Plain-text table: one line per (metric, pair), with the settings above it."""
        p = self.params
        title = (f"Paired comparison of {len(p['systems'])} systems on {len(p['metrics'])} metrics "
                 f"(pairs: {p['pairs']}; baseline: {p['baseline']}; diff = system - baseline)")
        head = [title, *self.describe(), ""]
        headers = ["metric", "baseline", "system", "mean base", "mean sys", "diff", f"{p['confidence']:.0%} CI",
                   "p", "p adj", "sig", "effect", "W/T/L", "n"]
        rows = []
        for r in self.table.itertuples(index=False):
            rows.append([
                str(r.metric), str(r.baseline), str(r.system), f"{r.mean_baseline:.{digits}f}",
                f"{r.mean_system:.{digits}f}", f"{r.diff:+.{digits}f}",
                f"[{r.ci_low:+.{digits}f}, {r.ci_high:+.{digits}f}]", _format_p(r.p_value, digits),
                _format_p(r.p_adjusted, digits), "*" if r.significant else "", f"{r.effect_size:+.3f}",
                f"{r.wins}/{r.ties}/{r.losses}", str(r.n_queries),
            ])
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
        left = {0, 1, 2, 9}

        def line(cells):
            return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

        body = [line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)]
        notes = []
        dropped = self.table[(self.table["n_dropped_nan"] > 0) | (self.table["n_unpaired"] > 0)]
        for r in dropped.itertuples(index=False):
            notes.append(f"{r.metric}, {r.baseline} vs {r.system}: {r.n_dropped_nan} queries left out as undefined "
                         f"(NaN) for a system, {r.n_unpaired} as missing from one system")
        notes += [f"note: {w}" for w in self.warnings]
        return "\n".join(head + body + ([""] + notes if notes else []))

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        p = self.params
        return (f"ComparisonReport({len(p['systems'])} systems, {len(p['metrics'])} metrics, "
                f"{p['n_comparisons']} comparisons, test={p['test']!r}, correction={p['correction']!r}, "
                f"alpha={p['alpha']})")

    def to_csv(self, path_or_buf=None, **kwargs) -> str | None:
        """:attr:`table` as CSV (pandas ``to_csv``, no index), safe to open in a spreadsheet.

        Text cells starting with ``= + - @``, a tab or a carriage return get a leading single
        quote so no spreadsheet runs them as a formula; numbers are written as numbers.
        Returns the text when ``path_or_buf`` is None.
        """
        safe = self.table.copy()
        for col in ("metric", "baseline", "system"):
            safe[col] = safe[col].astype(object).map(_spreadsheet_safe)
        kwargs.setdefault("index", False)
        return safe.to_csv(path_or_buf, **kwargs)

    def _caption(self) -> str:
        p = self.params
        n = self.table["n_queries"]
        queries = f"{int(n.iloc[0])} queries" if n.nunique() == 1 else f"{int(n.min())} to {int(n.max())} queries"
        if p["pairs"] == "baseline":
            marks = (rf"$^\dagger$ / $^\ddagger$: significantly higher / lower than the baseline "
                     rf"({latex_escape(p['baseline'])})")
        else:
            marks = "a superscript letter: significantly higher than the system with that letter"
        test = {
            "permutation": f"two-sided paired randomisation test ({p['n_resamples']:,} sign-flip resamples, seed {p['seed']})",
            "t-test": "two-sided paired t-test",
            "wilcoxon": f"two-sided Wilcoxon signed-rank test (zero\\_method={p['zero_method']})",
        }[p["test"]]
        correction = {
            "holm": "Holm-adjusted", "bonferroni": "Bonferroni-adjusted", "fdr_bh": "Benjamini-Hochberg-adjusted",
            "none": "not adjusted",
        }[p["correction"]]
        return (f"Mean per system over {queries}. {marks}; {test}, p-values {correction} over "
                f"{p['n_comparisons']} comparisons, $\\alpha = {p['alpha']}$.")

    def to_latex(self, digits: int = 4, caption: str | None = None, label: str | None = "tab:comparison") -> str:
        """A booktabs table: systems as rows, metrics as columns, means with significance marks.

        With ``pairs="baseline"``, ``$^\\dagger$`` marks a mean significantly higher than the
        baseline's and ``$^\\ddagger$`` one significantly lower (after correction). With
        ``pairs="all"`` each system gets a letter and a mean carries the letters of the systems it
        is significantly higher than (ranx's layout). The caption names the test, the correction
        and alpha (pass ``caption`` to replace it; it is used as given, not escaped). System and
        metric names are escaped. Needs ``\\usepackage{booktabs}``.
        """
        p = self.params
        systems, metrics = p["systems"], p["metrics"]
        letters = {s: chr(ord("a") + i) for i, s in enumerate(systems)} if len(systems) <= 26 else None
        if p["pairs"] == "all" and letters is None:
            raise EvalSuiteError("to_latex labels systems a..z; more than 26 systems cannot be marked", field="systems",
                                 value=len(systems))
        marks: dict[tuple[str, str], list[str]] = {}
        for r in self.table[self.table["significant"]].itertuples(index=False):
            if p["pairs"] == "baseline":
                marks[(r.system, r.metric)] = [r"\dagger" if r.diff > 0 else r"\ddagger"]
            else:
                higher, lower = (r.system, r.baseline) if r.diff > 0 else (r.baseline, r.system)
                marks.setdefault((higher, r.metric), []).append(letters[lower])
        show_letters = p["pairs"] == "all"
        cols = "l" + ("c" if show_letters else "") + "r" * len(metrics)
        header = ["System"] + (["\\#"] if show_letters else []) + [latex_escape(m) for m in metrics]
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{caption if caption is not None else self._caption()}}}"]
        if label:
            lines.append(rf"\label{{{label}}}")
        lines += [rf"\begin{{tabular}}{{{cols}}}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
        for system in systems:
            name = latex_escape(system) + (" (baseline)" if p["pairs"] == "baseline" and system == p["baseline"] else "")
            cells = [name] + ([letters[system]] if show_letters else [])
            for metric in metrics:
                value = self.system_means.loc[system, metric]
                mark = marks.get((system, metric))
                if mark:
                    sup = ",".join(sorted(mark)) if show_letters else mark[0]
                    cells.append(f"{value:.{digits}f}$^{{{sup}}}$")
                else:
                    cells.append(f"{value:.{digits}f}")
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"


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
    test : {"permutation", "t-test", "wilcoxon"}
        Two-sided paired test on the per-query values: :func:`paired_randomization_test`
        (sign flips, seeded; equals ``scipy.stats.permutation_test``), ``scipy.stats.ttest_rel``,
        or ``scipy.stats.wilcoxon`` (``method="auto"``, ``zero_method`` below).
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None
        Multiple-comparison adjustment over every row of the report (all pairs x all metrics).
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
        p-value is 1.0 (no test is run), its interval (0, 0) and its effect size 0.

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
            va = a.loc[common].to_numpy()
            vb = b.loc[common].to_numpy()
            defined = ~(np.isnan(va) | np.isnan(vb))
            va, vb = va[defined], vb[defined]
            n = int(va.size)
            if n < 2:
                raise EvalSuiteError(
                    f"metric {metric!r}, {base!r} vs {other!r}: {n} queries have a value in both systems "
                    f"({len(common) - n} of {len(common)} shared queries are NaN in one of them); "
                    "a paired comparison needs at least two", field="metrics", value=metric)
            pending.append((metric, base, other, va, vb, len(common) - n, len(a) + len(b) - 2 * len(common)))

    def resample(job):
        metric, base, other, va, vb = job[:5]
        d = vb - va
        p_value = _run_test(test, va, vb, d, int(n_resamples), int(seed), zero_method)
        if not math.isfinite(p_value):
            raise EvalSuiteError(f"metric {metric!r}, {base!r} vs {other!r}: the {test} gave no p-value for "
                                 f"these {d.size} differences", field="test", value=test)
        return p_value, paired_bootstrap_interval(d, ci, confidence, int(n_resamples), int(seed))

    # Rows are independent (each has its own generators), so they may run on several threads:
    # numpy and scipy's resampling release the GIL, and the numbers do not depend on the order.
    work = sum(job[3].size for job in pending) * int(n_resamples)
    n_threads = min(len(pending), _thread_count()) if work >= _THREADED_WORK else 1
    if n_threads > 1:
        # Warning filters are process-wide: set them here, once, so that the workers' own
        # catch_warnings blocks, interleaved, cannot leave a filter behind when this returns.
        stats = _stats()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            with ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="evalsuite-compare") as pool:
                results = list(pool.map(resample, pending))
    else:
        results = [resample(job) for job in pending]

    rows, notes = [], []
    for (metric, base, other, va, vb, n_dropped, n_unpaired), (p_value, (low, high, note)) in zip(pending, results):
        d = vb - va
        if note and "percentile" in note:
            notes.append(f"{metric}, {base} vs {other}: {note}")
        wins, ties, losses = win_tie_loss(d, tie_tolerance)
        rows.append({
            "metric": metric, "baseline": base, "system": other,
            "mean_baseline": float(np.mean(va)), "mean_system": float(np.mean(vb)), "diff": float(np.mean(d)),
            "ci_low": low, "ci_high": high, "p_value": p_value, "effect_size": effect_size(d),
            "wins": wins, "ties": ties, "losses": losses, "n_queries": int(d.size),
            "n_dropped_nan": int(n_dropped), "n_unpaired": int(n_unpaired),
        })
    table = pd.DataFrame(rows)
    table["p_adjusted"] = adjust_p_values(table["p_value"].to_numpy(), correction)
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
        "ci_description": f"{CI_METHODS[ci]} bootstrap interval (scipy.stats.bootstrap) of the mean per-query "
                          "difference, queries resampled with replacement",
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
        "rng": "each test and each interval uses its own numpy.random.default_rng(seed)",
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
        Fewer than two runs; two compared runs with no query in common (each would only be
        scored 0 where the other has results); everything :func:`evaluate` and
        :func:`compare_per_query` raise.
    """
    from ._evaluate import _as_qrels, evaluate

    if not isinstance(runs, Mapping):
        raise EvalSuiteError("runs must map each system name to its run, e.g. {'bm25': 'bm25.trec', 'dense': run}",
                             field="runs", value=type(runs).__name__)
    names = [str(n) for n in runs]
    if len(set(names)) != len(names):
        raise EvalSuiteError("two runs have the same name", field="runs", value=names)
    correction = "none" if correction is None else correction
    _check_options(test, correction, alpha, n_resamples, ci, confidence, tie_tolerance, seed, zero_method, pairs)
    order, compared = _resolve_pairs(names, None if baseline is None else str(baseline), pairs)
    shared_qrels = _as_qrels(qrels)
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
                    zero_method: str = "wilcox") -> ComparisonReport:
    """Compare systems on per-request RAG metrics, pairing requests by ``query_id``.

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

    Returns
    -------
    ComparisonReport

    Raises
    ------
    EvalSuiteError
        Not a RecordsReport; unknown system or metric; fewer than two systems; systems whose
        request ids do not overlap (e.g. ids that embed the system name, as in LLMPerf dumps);
        fewer than two requests with a value in both systems; everything
        :func:`compare_per_query` raises.
    """
    from ._records_eval import RecordsReport

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
    labels = frame["system"].to_numpy(dtype=object)
    per_system = {s: frame.loc[labels == s, ["query_id", *metrics]].set_index("query_id") for s in chosen}
    result = compare_per_query(per_system, metrics, baseline=baseline, pairs=pairs, test=test,
                               correction=correction, alpha=alpha, seed=seed, n_resamples=n_resamples, ci=ci,
                               confidence=confidence, tie_tolerance=tie_tolerance, zero_method=zero_method)
    result.params["source"] = report.params.get("source")
    return result
