"""The report :func:`evalsuite.compare` returns: a table with renderings as text, CSV and LaTeX."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..utils.checks import defuse_formula
from ..errors import EvalSuiteError
from ..io.output_files import atomic_output

from .paired import CI_METHODS, CORRECTIONS, TESTS, ZERO_METHODS

__all__ = ["ComparisonReport", "latex_escape"]


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


_CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "fdr_bh": "Benjamini-Hochberg",
                     "westfall_young": "Westfall-Young", "none": "no correction"}


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better: the registry's direction; latency and
    time-to-first-token columns (``latency_ms``, ``latency_<stage>_ms``, ``ttft_ms``) and the given
    scores other tools define as lower is better (RAGAS noise_sensitivity, DeepEval and Phoenix
    hallucination: the registry's ``GIVEN_SCORES``) are lower is better; a name the registry does
    not know is taken as higher is better."""
    name = str(metric)
    if name.startswith(("latency", "ttft")):
        return False
    from ..metrics.registry import LOWER_IS_BETTER  # with the scores other tools define so (hallucination)

    if name in LOWER_IS_BETTER:
        return False
    from ..metrics.names import metric_info

    try:
        return bool(metric_info(name).higher_is_better)
    except (EvalSuiteError, KeyError, ValueError):
        return True


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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

    Examples
    --------
    >>> import pandas as pd
    >>> from evalsuite import compare_per_query
    >>> ids = ["q1", "q2", "q3", "q4"]
    >>> old = pd.DataFrame({"mrr": [0.5, 0.5, 0.5, 0.5]}, index=ids)
    >>> new = pd.DataFrame({"mrr": [1.0, 1.0, 1.0, 0.5]}, index=ids)
    >>> report = compare_per_query({"old": old, "new": new}, n_resamples=100)
    >>> report
    ComparisonReport(2 systems, 1 metrics, 1 comparisons, test='permutation', correction='holm', alpha=0.05)
    >>> report.systems, report.metrics
    (['old', 'new'], ['mrr'])
    >>> report.system_means  # new: (1 + 1 + 1 + 0.5) / 4
              mrr
    system
    old     0.500
    new     0.875
    >>> # diff (0.5 + 0.5 + 0.5 + 0) / 4; exact sign-flip test: 4 of 16 patterns reach it, p = 0.25 > alpha
    >>> columns = ["metric", "baseline", "system", "diff", "p_value", "significant"]
    >>> print(report.to_csv(columns=columns), end="")
    metric,baseline,system,diff,p_value,significant
    mrr,old,new,0.375,0.25,False
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

    def _against_baseline(self) -> pd.DataFrame:
        t = self.table
        return t[t["baseline"] == self.params["baseline"]]

    def regressions(self, metrics=None, significant_only: bool = True) -> pd.DataFrame:
        """Rows where a system is worse than the baseline: the CI gate's question.

        "Worse" follows each metric's direction (:func:`higher_is_better`: lower nDCG, higher
        latency). Only comparisons with the baseline count (with ``pairs="all"`` the other pairs
        are left out).

        Parameters
        ----------
        metrics : sequence of str or None
            Metrics to look at (None: all of the report's).
        significant_only : bool
            True: only rows that are ``significant`` (after correction); False: every row whose
            mean difference points the wrong way, significant or not.

        Returns
        -------
        pandas.DataFrame
            The matching rows of :attr:`table` (possibly empty).

        Raises
        ------
        EvalSuiteError
            A metric that is not in the report.
        """
        rows = self._against_baseline()
        if metrics is not None:
            unknown = [m for m in metrics if m not in self.metrics]
            if unknown:
                raise EvalSuiteError(f"metric {unknown[0]!r} is not in the comparison (its metrics: "
                                     f"{', '.join(self.metrics)})", field="metrics", value=unknown[0])
            rows = rows[rows["metric"].isin(list(metrics))]
        worse = [(r.diff < 0) if higher_is_better(r.metric) else (r.diff > 0) for r in rows.itertuples(index=False)]
        rows = rows[pd.Series(worse, index=rows.index, dtype=bool)] if len(rows) else rows
        if significant_only:
            rows = rows[rows["significant"]]
        return rows.copy()

    def verdict(self) -> str:
        """One plain-language sentence: which systems are significantly better or worse than the
        baseline, on which metrics, under which correction and alpha.

        Examples
        --------
        >>> import pandas as pd
        >>> from evalsuite import compare_per_query
        >>> ids = [f"q{i}" for i in range(8)]
        >>> old = pd.DataFrame({"ndcg@10": [0.2] * 8, "mrr@10": [0.5] * 8}, index=ids)
        >>> new = pd.DataFrame({"ndcg@10": [0.1] * 8, "mrr@10": [0.5, 1.0, 0.5, 0.0] * 2}, index=ids)
        >>> compare_per_query({"BM25": old, "BM25L": new}, test="t-test").verdict()
        'BM25L is significantly worse than BM25 on ndcg@10, and not significantly different on mrr@10 (t-test, Holm, alpha 0.05).'
        """
        p = self.params
        rows = self._against_baseline()
        setting = f"{p['test']}, {_CORRECTION_NAMES.get(p['correction'], p['correction'])}, alpha {p['alpha']:g}"
        parts = []
        for system in [s for s in self.systems if s != p["baseline"]]:
            mine = rows[rows["system"] == system]
            better, worse, same = [], [], []
            for r in mine.itertuples(index=False):
                up = (r.diff > 0) if higher_is_better(r.metric) else (r.diff < 0)
                (same if not r.significant or r.diff == 0 else better if up else worse).append(str(r.metric))
            n = len(mine)

            def on(names):
                if len(names) == n and n > 1:
                    return "both metrics" if n == 2 else f"all {n} metrics"
                return _listing(names)

            clauses = []
            if worse:
                clauses.append(f"significantly worse than {p['baseline']} on {on(worse)}")
            if better:
                clauses.append(f"significantly better{'' if worse else ' than ' + str(p['baseline'])} on {on(better)}")
            if same:
                clauses.append(f"not significantly different {'on' if clauses else 'from ' + str(p['baseline']) + ' on'} "
                               f"{on(same)}")
            parts.append(f"{system} is " + ", and ".join(clauses) if len(clauses) <= 2 else
                         f"{system} is " + ", ".join(clauses[:-1]) + ", and " + clauses[-1])
        sentence = "; ".join(parts)
        if p.get("pairs") == "all":
            sentence += self._other_pairs_clause()
        return sentence + f" ({setting})."

    def _other_pairs_clause(self) -> str:
        """With ``pairs="all"``: the significant differences between systems other than the
        baseline, so the verdict covers every pair the report tested."""
        t = self.table
        rows = t[(t["baseline"] != self.params["baseline"]) & (t["system"] != self.params["baseline"])]
        found = []
        for r in rows.itertuples(index=False):
            if not r.significant or r.diff == 0:
                continue
            up = (r.diff > 0) if higher_is_better(r.metric) else (r.diff < 0)
            winner, loser = (r.system, r.baseline) if up else (r.baseline, r.system)
            found.append(f"{winner} is significantly better than {loser} on {r.metric}")
        if rows.empty:
            return ""
        if not found:
            return "; between the other systems, no difference is significant"
        return "; between the other systems, " + "; ".join(found)

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
            (f"correction: {CORRECTIONS[p['correction']]}; over " + (f"all {p['n_comparisons']} comparisons"
                 if p['n_comparisons'] != 1 else "the one comparison") + " of this report; "
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

    def to_csv(self, path_or_buf=None, *, inputs=(), force: bool = False, **kwargs) -> str | None:
        """:attr:`table` as CSV (pandas ``to_csv``, no index), safe to open in a spreadsheet.

        Text cells starting with ``= + - @``, a tab or a carriage return get a leading single
        quote so no spreadsheet runs them as a formula; numbers are written as numbers.
        Returns the text when ``path_or_buf`` is None. A path is written as every output is
        (:func:`evalsuite.io.output_files.atomic_output`): never over one of ``inputs`` (the
        files compared), an existing file only with ``force``, under a temporary name renamed
        into place.
        """
        safe = self.table.copy()
        for col in ("metric", "baseline", "system"):
            safe[col] = safe[col].astype(object).map(_spreadsheet_safe)
        kwargs.setdefault("index", False)
        if isinstance(path_or_buf, (str, os.PathLike)):
            with atomic_output(path_or_buf, inputs=inputs, force=force) as temporary:
                safe.to_csv(temporary, **kwargs)
            return None
        return safe.to_csv(path_or_buf, **kwargs)

    def _caption(self) -> str:
        p = self.params
        n = self.table["n_queries"]
        queries = f"{int(n.iloc[0])} queries" if n.nunique() == 1 else f"{int(n.min())} to {int(n.max())} queries"
        against = ("the baseline" if p["pairs"] == "baseline" else "the other systems")
        marks = (f"The best mean per metric is in boldface. Superscripts name the systems (\\#) a mean is "
                 f"significantly higher than; each system is compared with {against}")
        test = {
            "permutation": f"two-sided paired randomisation test ({p['n_resamples']:,} sign-flip resamples, seed {p['seed']})",
            "t-test": "two-sided paired t-test",
            "wilcoxon": f"two-sided Wilcoxon signed-rank test (zero\\_method={p['zero_method']})",
            "tukey": "Tukey's HSD test",
        }[p["test"]]
        correction = {
            "holm": "Holm-adjusted", "bonferroni": "Bonferroni-adjusted", "fdr_bh": "Benjamini-Hochberg-adjusted",
            "westfall_young": "Westfall-Young max-T-adjusted", "none": "not adjusted",
        }[p["correction"]]
        return (f"Mean per system over {queries}. {marks}: {test}, p-values {correction} over "
                f"{p['n_comparisons']} comparisons, $\\alpha = {p['alpha']}$.")

    def to_latex(self, digits: int = 4, caption: str | None = None, label: str | None = "tab:comparison") -> str:
        """One booktabs table in ranx's paper style: a letter per system, means with superscripts.

        Systems are rows (with a letter in the ``\\#`` column: a, b, c ... in report order, the
        baseline first) and metrics columns. A mean carries as superscript the letters of the
        systems it is significantly higher than (``significant`` after correction), and
        ``\\hphantom`` of the other letters so that the numbers stay aligned; the best mean of
        each metric (at the printed precision) is in boldface. With ``pairs="baseline"`` only the
        comparisons with the baseline are made, so only the baseline's letter (or, on the
        baseline, the letters of the systems it beats) can appear. This is the layout of ranx's
        ``Report.to_latex`` (Bassani, ECIR 2022), with a caption naming the test, the correction
        and alpha (pass ``caption`` to replace it; it is used as given, not escaped). System and
        metric names are escaped. Needs ``\\usepackage{booktabs}``.

        Raises
        ------
        EvalSuiteError
            More than 26 systems (they are lettered a..z).
        """
        p = self.params
        systems, metrics = p["systems"], p["metrics"]
        if len(systems) > 26:
            raise EvalSuiteError("to_latex labels systems a..z; more than 26 systems cannot be marked", field="systems",
                                 value=len(systems))
        letters = {s: chr(ord("a") + i) for i, s in enumerate(systems)}
        marks: dict[tuple[str, str], set[str]] = {}
        for r in self.table[self.table["significant"]].itertuples(index=False):
            if r.diff == 0:
                continue
            higher, lower = (r.system, r.baseline) if r.diff > 0 else (r.baseline, r.system)
            marks.setdefault((str(higher), str(r.metric)), set()).add(letters[str(lower)])
        rounded = self.system_means.round(digits)
        best = {m: rounded[m].max() for m in metrics}
        cols = "cl|" + "r" * len(metrics)
        header = [r"\textbf{\#}", r"\textbf{System}"] + [rf"\textbf{{{latex_escape(m)}}}" for m in metrics]
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{caption if caption is not None else self._caption()}}}"]
        if label:
            lines.append(rf"\label{{{label}}}")
        lines += [rf"\begin{{tabular}}{{{cols}}}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
        for system in systems:
            name = latex_escape(system) + (" (baseline)" if p["pairs"] == "baseline" and system == p["baseline"] else "")
            cells = [letters[system], name]
            others = [letters[s] for s in systems if s != system]
            for metric in metrics:
                value = f"{self.system_means.loc[system, metric]:.{digits}f}"
                if rounded.loc[system, metric] == best[metric]:
                    value = rf"\textbf{{{value}}}"
                shown = sorted(marks.get((system, metric), set()))
                hidden = [x for x in others if x not in shown]
                cell = value + (f"$^{{{''.join(shown)}}}$" if shown else "")
                if hidden:
                    cell += rf"\hphantom{{$^{{{''.join(hidden)}}}$}}"
                cells.append(cell)
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"
