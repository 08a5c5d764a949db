"""How far to trust a judge: agreement with human labels, and prediction-powered means.

A *judgement table* has one row per judged item (a claim, a chunk, an answer) of one request of
one system, with what a judge said and, where a person labelled it, what the person said:

=============== ======================================================================== 
column          meaning
=============== ========================================================================
``query_id``    request id (str)
``system``      the system that produced the request's output (str)
``judgement``   judgement type: ``claim_support``, ``context_relevance``, ... (str)
``item``        claim / chunk / statement index within the request, 0 when one per request
``judge``       which judge produced the verdict (str)
``judge_score`` the judge's score (float; NaN when it gives only a label)
``judge_label`` the judge's verdict: 1 positive, 0 negative (float; NaN = not judged)
``human_label`` a person's verdict: 1, 0, or NaN where no person labelled the item
``human_score`` optional graded human rating (a 1..5 utility score ...), for rank correlation
=============== ========================================================================

Functions here work on plain vectors (:func:`agreement`, :func:`rank_correlation`,
:func:`reliability`, :func:`ppi_mean`, :func:`classical_mean`, :func:`mean_intervals`,
:func:`ppi_mean_difference`) and on judgement tables (:func:`read_judgements`,
:func:`join_human_labels`, :func:`judgements_from_records`, :func:`agreement_table`,
:func:`system_intervals`, :func:`difference_interval`). Nothing here depends on a particular
judge: any column of verdicts can be calibrated.

Intervals: Wilson score intervals for proportions (accuracy, precision, recall), the asymptotic
interval of Cohen's kappa with the variance of Fleiss, Cohen & Everitt (1969) (what statsmodels'
``cohens_kappa`` reports), normal (CLT) intervals for means, and prediction-powered intervals
(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science 382,
2023; with power tuning, Angelopoulos, Duchi & Zrnic, "PPI++", arXiv:2311.01453), computed in
closed form exactly as the authors' ``ppi-python`` package computes ``ppi_mean_ci``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .errors import EvalSuiteError

__all__ = [
    "Interval", "Agreement", "MIN_LABELS", "JUDGEMENT_COLUMNS", "wilson_interval", "agreement",
    "rank_correlation", "reliability", "classical_mean", "ppi_mean", "mean_intervals",
    "ppi_mean_difference", "read_judgements", "join_human_labels", "judgements_from_records",
    "agreement_table", "system_intervals", "difference_interval", "labelled_subset",
]

#: Below this many human labels an interval is flagged as too small to mean anything: the
#: normal approximation behind the CLT, kappa and PPI intervals is poor, and a Wilson interval
#: spans most of [0, 1]. (A rule of thumb, 30, as in the usual CLT guidance; the flag is a
#: warning, the numbers are still computed.)
MIN_LABELS = 30

JUDGEMENT_COLUMNS = ("query_id", "system", "judgement", "item", "judge", "judge_score", "judge_label",
                     "human_label", "human_score")
_KEYS = ("query_id", "system", "judgement", "item")


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval.

    Attributes
    ----------
    estimate, low, high : float
        Point estimate and interval bounds (NaN when there is nothing to estimate from).
    n : int
        Human labels used (for a judge-only mean: judged items).
    method : str
        How the interval was computed (``"wilson"``, ``"clt"``, ``"ppi"``, ``"ppi++"``, ...).
    confidence : float
        Confidence level.
    n_unlabelled : int
        PPI only: items with a judge verdict and no human label.
    too_small : bool
        True when ``n < MIN_LABELS``: the interval is shown but means little.
    extra : dict
        Method-specific values (``lam`` of PPI++, ``se`` ...).
    """

    estimate: float
    low: float
    high: float
    n: int
    method: str
    confidence: float = 0.95
    n_unlabelled: int = 0
    too_small: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


@dataclass(frozen=True)
class Agreement:
    """Agreement of binary judge verdicts with human labels (see :func:`agreement`)."""

    n: int
    dropped: int
    accuracy: Interval
    kappa: Interval
    precision: Interval
    recall: Interval
    confusion: np.ndarray  # rows: human 0, 1; columns: judge 0, 1
    too_small: bool

    def as_row(self) -> dict[str, Any]:
        """One flat row for a table: counts, estimates and bounds."""
        (tn, fp), (fn, tp) = self.confusion.tolist()
        row: dict[str, Any] = {"n": self.n, "dropped": self.dropped}
        for name in ("accuracy", "kappa", "precision", "recall"):
            iv = getattr(self, name)
            row[name], row[f"{name}_low"], row[f"{name}_high"] = iv.estimate, iv.low, iv.high
        row.update(tp=int(tp), fp=int(fp), fn=int(fn), tn=int(tn), too_small=self.too_small)
        return row


def _check_confidence(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise EvalSuiteError("confidence must be between 0 and 1", field="confidence", value=confidence)
    return float(confidence)


def _z(confidence: float) -> float:
    from scipy import stats  # imported here: scipy.stats is slow to import

    return float(stats.norm.ppf(1 - (1 - confidence) / 2))


def _vector(values: object, name: str, binary: bool = False) -> np.ndarray:
    """A float64 vector; None -> NaN; an error naming the field and the first bad value."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) and not hasattr(values, "to_numpy"):
        raise EvalSuiteError("expected a sequence of numbers", field=name, value=type(values).__name__)
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        out = values.astype(np.float64)  # numeric array: no per-element Python work
    else:
        out = None
    try:
        if out is None:
            if any(isinstance(v, (str, bytes)) for v in values):
                raise TypeError("text is not a number")
            out = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    except (TypeError, ValueError):
        for i, v in enumerate(values):
            try:
                if isinstance(v, (str, bytes)):
                    raise TypeError
                float(np.nan if v is None else v)
            except (TypeError, ValueError):
                raise EvalSuiteError("expected a number", field=f"{name}[{i}]", value=v) from None
        raise
    if out.ndim != 1:
        raise EvalSuiteError("expected one value per item", field=name, value=f"shape {out.shape}")
    if binary:
        bad = ~np.isnan(out) & (out != 0) & (out != 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise EvalSuiteError("a label must be 0, 1, True, False or None", field=f"{name}[{i}]", value=values[i])
    if np.isinf(out).any():
        i = int(np.argmax(np.isinf(out)))
        raise EvalSuiteError("a value must be finite", field=f"{name}[{i}]", value=values[i])
    return out


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Proportion ``successes / n`` with its Wilson score interval.

    Parameters
    ----------
    successes, n : int
        Counts, ``0 <= successes <= n``.
    confidence : float in (0, 1)
        Confidence level (default 0.95).

    Returns
    -------
    Interval
        ``method="wilson"`` (from ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``);
        all NaN when ``n == 0``.

    Raises
    ------
    EvalSuiteError
        Negative counts, ``successes > n``, or ``confidence`` outside (0, 1).

    References
    ----------
    Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference", JASA 22.

    Examples
    --------
    >>> iv = wilson_interval(8, 10)  # centre (0.8 + 1.96**2/20) / (1 + 1.96**2/10) = 0.7167
    >>> round(iv.estimate, 4), round(iv.low, 4), round(iv.high, 4)
    (0.8, 0.4902, 0.9433)
    """
    confidence = _check_confidence(confidence)
    if not 0 <= successes <= n:
        raise EvalSuiteError("need 0 <= successes <= n", field="successes", value=(successes, n))
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "wilson", confidence, too_small=True)
    from scipy import stats

    ci = stats.binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(successes / n, float(ci.low), float(ci.high), int(n), "wilson", confidence,
                    too_small=n < MIN_LABELS)


def _kappa(table: np.ndarray, confidence: float) -> Interval:
    """Cohen's kappa of a square table with the asymptotic variance of Fleiss, Cohen & Everitt (1969)."""
    nobs = table.sum()
    if nobs == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "fleiss-cohen-everitt", confidence, too_small=True)
    probs = table / nobs
    row, col = probs.sum(1), probs.sum(0)
    p_o = np.trace(probs)
    p_e = float((row * col).sum())
    if p_e == 1:  # both raters gave one and the same label to everything: kappa undefined
        return Interval(math.nan, math.nan, math.nan, int(nobs), "fleiss-cohen-everitt", confidence,
                        too_small=nobs < MIN_LABELS)
    kappa = (p_o - p_e) / (1 - p_e)
    term_a = (np.diag(probs) * (1 - (row + col) * (1 - kappa)) ** 2).sum()
    term_b = probs * (col[:, None] + row[None, :]) ** 2
    np.fill_diagonal(term_b, 0)
    term_b = (1 - kappa) ** 2 * term_b.sum()
    term_c = (kappa - p_e * (1 - kappa)) ** 2
    var = max((term_a + term_b - term_c) / (1 - p_e) ** 2 / nobs, 0.0)
    half = _z(confidence) * math.sqrt(var)
    return Interval(float(kappa), float(kappa - half), float(kappa + half), int(nobs), "fleiss-cohen-everitt",
                    confidence, too_small=nobs < MIN_LABELS, extra={"se": math.sqrt(var)})


def agreement(judge: Sequence, human: Sequence, confidence: float = 0.95) -> Agreement:
    """Agreement of a judge's binary verdicts with human labels on the same items.

    Parameters
    ----------
    judge, human : sequences of bool, 0/1 or None (NaN), same length n_items
        The judge's verdict and a person's label per item; 1/True is the positive class
        (supported, relevant, faithful ...). An item where either is None/NaN is dropped and counted.
    confidence : float in (0, 1)
        Confidence level of every interval (default 0.95).

    Returns
    -------
    Agreement
        ``accuracy`` (share of items where they agree), ``precision`` (of the judge's positives,
        the share people call positive) and ``recall`` (of the human positives, the share the
        judge calls positive), each with a Wilson interval; Cohen's ``kappa`` (agreement beyond
        chance) with the asymptotic interval of Fleiss, Cohen & Everitt (1969); ``confusion``, a
        2x2 count matrix with rows = human label 0, 1 and columns = judge verdict 0, 1
        (scikit-learn's ``confusion_matrix(human, judge)`` layout); ``too_small`` when fewer than
        :data:`MIN_LABELS` items are compared.

    Raises
    ------
    EvalSuiteError
        Different lengths, a value other than 0/1/True/False/None, ``confidence`` out of range.

    References
    ----------
    Cohen, J. (1960), "A coefficient of agreement for nominal scales", Educational and Psychological
    Measurement 20; Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969), "Large sample standard errors of
    kappa and weighted kappa", Psychological Bulletin 72.

    Examples
    --------
    >>> a = agreement([1, 1, 0, 1, 0, None], [1, 0, 0, 1, 1, 1])
    >>> a.n, a.dropped, a.confusion.tolist()
    (5, 1, [[1, 1], [1, 2]])
    >>> round(a.accuracy.estimate, 4), round(a.kappa.estimate, 4)  # p_o = 3/5, p_e = 0.52
    (0.6, 0.1667)
    >>> round(a.precision.estimate, 4), round(a.recall.estimate, 4)
    (0.6667, 0.6667)
    """
    confidence = _check_confidence(confidence)
    j = _vector(judge, "judge", binary=True)
    h = _vector(human, "human", binary=True)
    if len(j) != len(h):
        raise EvalSuiteError("judge and human must have one value per item each", field="human",
                             value=f"{len(h)} values for {len(j)} judge verdicts")
    keep = ~np.isnan(j) & ~np.isnan(h)
    j, h = j[keep].astype(int), h[keep].astype(int)
    n = int(keep.sum())
    confusion = np.zeros((2, 2), dtype=np.int64)
    np.add.at(confusion, (h, j), 1)
    tn, fp, fn, tp = confusion.ravel().tolist()
    return Agreement(
        n=n, dropped=int((~keep).sum()),
        accuracy=wilson_interval(tp + tn, n, confidence),
        kappa=_kappa(confusion.astype(np.float64), confidence),
        precision=wilson_interval(tp, tp + fp, confidence),
        recall=wilson_interval(tp, tp + fn, confidence),
        confusion=confusion, too_small=n < MIN_LABELS)


def rank_correlation(judge_scores: Sequence, human_scores: Sequence) -> dict[str, float]:
    """Rank correlation of judge scores with human scores (graded ratings or 0/1 labels).

    Parameters
    ----------
    judge_scores, human_scores : sequences of float or None, same length
        One value per item; a pair with a None/NaN on either side is dropped.

    Returns
    -------
    dict
        ``spearman`` and ``spearman_p`` (``scipy.stats.spearmanr``), ``kendall`` and ``kendall_p``
        (``scipy.stats.kendalltau``, tau-b, which handles ties), ``n`` (pairs used); NaN values
        when fewer than 3 pairs remain or either side is constant.

    Raises
    ------
    EvalSuiteError
        Different lengths or a value that is not a number.

    References
    ----------
    Spearman (1904); Kendall, "The treatment of ties in ranking problems", Biometrika 33 (1945).

    Examples
    --------
    >>> r = rank_correlation([0.1, 0.4, 0.35, 0.8], [1, 2, 3, 4])
    >>> round(r["spearman"], 4), round(r["kendall"], 4), r["n"]
    (0.8, 0.6667, 4)
    """
    j = _vector(judge_scores, "judge_scores")
    h = _vector(human_scores, "human_scores")
    if len(j) != len(h):
        raise EvalSuiteError("judge_scores and human_scores must have one value per item each",
                             field="human_scores", value=f"{len(h)} values for {len(j)} judge scores")
    keep = ~np.isnan(j) & ~np.isnan(h)
    j, h = j[keep], h[keep]
    out = {"spearman": math.nan, "spearman_p": math.nan, "kendall": math.nan, "kendall_p": math.nan,
           "n": int(keep.sum())}
    if len(j) >= 3 and np.ptp(j) > 0 and np.ptp(h) > 0:
        from scipy import stats

        rho = stats.spearmanr(j, h)
        tau = stats.kendalltau(j, h)
        out.update(spearman=float(rho.statistic), spearman_p=float(rho.pvalue), kendall=float(tau.statistic),
                   kendall_p=float(tau.pvalue))
    return out


def reliability(judge_scores: Sequence, human_labels: Sequence, bins: int = 10, confidence: float = 0.95):
    """Reliability table: in each bin of judge score, how often people said positive.

    Parameters
    ----------
    judge_scores : sequence of float in [0, 1] or None
        The judge's score per item (a probability, a similarity, a token overlap ...).
    human_labels : sequence of 0/1/bool or None, same length
        A person's label per item; pairs with a None on either side are dropped.
    bins : int >= 1
        Equal-width bins over [0, 1] (a score of exactly 1 falls in the last bin).
    confidence : float in (0, 1)
        Level of the Wilson interval of each bin's human rate.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``bin_low``, ``bin_high``, ``mean_score`` (mean judge score in
        the bin), ``human_rate`` (share labelled 1), ``ci_low``, ``ci_high`` (Wilson), ``n``. A
        perfectly calibrated judge has ``human_rate == mean_score`` in every bin.

    Raises
    ------
    EvalSuiteError
        A score outside [0, 1], a label other than 0/1, different lengths, ``bins < 1``.

    References
    ----------
    DeGroot & Fienberg, "The comparison and evaluation of forecasters", The Statistician 32 (1983).

    Examples
    --------
    >>> reliability([0.1, 0.2, 0.9, 0.95, 1.0], [0, 1, 1, 1, 0], bins=2)[["bin_low", "mean_score", "human_rate", "n"]]
       bin_low  mean_score  human_rate  n
    0      0.0        0.15    0.500000  2
    1      0.5        0.95    0.666667  3
    """
    import pandas as pd

    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise EvalSuiteError("bins must be an integer >= 1", field="bins", value=bins)
    s = _vector(judge_scores, "judge_scores")
    h = _vector(human_labels, "human_labels", binary=True)
    if len(s) != len(h):
        raise EvalSuiteError("judge_scores and human_labels must have one value per item each",
                             field="human_labels", value=f"{len(h)} values for {len(s)} scores")
    out_of_range = ~np.isnan(s) & ((s < 0) | (s > 1))
    if out_of_range.any():
        i = int(np.argmax(out_of_range))
        raise EvalSuiteError("a judge score must be in [0, 1] for a reliability plot", field=f"judge_scores[{i}]",
                             value=float(s[i]))
    keep = ~np.isnan(s) & ~np.isnan(h)
    s, h = s[keep], h[keep]
    index = np.minimum((s * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        mask = index == b
        if mask.any():
            iv = wilson_interval(int(h[mask].sum()), int(mask.sum()), confidence)
            rows.append({"bin_low": b / bins, "bin_high": (b + 1) / bins, "mean_score": float(s[mask].mean()),
                         "human_rate": iv.estimate, "ci_low": iv.low, "ci_high": iv.high, "n": iv.n})
    return pd.DataFrame(rows, columns=["bin_low", "bin_high", "mean_score", "human_rate", "ci_low", "ci_high", "n"])


def classical_mean(values: Sequence, confidence: float = 0.95) -> Interval:
    """Mean with its normal (CLT) interval: ``mean +- z * std / sqrt(n)``.

    Parameters
    ----------
    values : sequence of float or None
        One value per request; None/NaN left out.
    confidence : float in (0, 1)

    Returns
    -------
    Interval
        ``method="clt"``; the standard deviation is the population one (``ddof=0``), as in
        ``ppi_py.classical_mean_ci``, so this is PPI with ``lam=0``. NaN when empty.

    Raises
    ------
    EvalSuiteError
        A value that is not a finite number; ``confidence`` out of range.

    References
    ----------
    Angelopoulos et al., Science 2023 (the "classical" interval PPI is compared with).

    Examples
    --------
    >>> iv = classical_mean([1, 0, 1, 1])  # 0.75 +- 1.96 * 0.4330 / 2
    >>> round(iv.estimate, 4), round(iv.low, 4), round(iv.high, 4)
    (0.75, 0.3257, 1.1743)
    """
    confidence = _check_confidence(confidence)
    v = _vector(values, "values")
    v = v[~np.isnan(v)]
    n = len(v)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "clt", confidence, too_small=True)
    mean, se = float(v.mean()), float(v.std() / math.sqrt(n))
    half = _z(confidence) * se
    return Interval(mean, mean - half, mean + half, n, "clt", confidence, too_small=n < MIN_LABELS, extra={"se": se})


def ppi_mean(human: Sequence, judge_labelled: Sequence, judge_unlabelled: Sequence, confidence: float = 0.95,
             tuned: bool = False) -> Interval:
    """Prediction-powered estimate and interval of the mean of the human label.

    With ``n`` requests labelled by people (``human``, and the judge's value on the same requests,
    ``judge_labelled``) and ``N`` requests only the judge saw (``judge_unlabelled``):

        theta = lam * mean(judge_unlabelled) + mean(human - lam * judge_labelled)
        interval: theta +- z * sqrt(var(lam * judge_unlabelled) / N + var(human - lam * judge_labelled) / n)

    The second term (the *rectifier*) corrects the judge's bias on the labelled requests, so the
    interval is valid whatever the judge's quality; a good judge makes it narrower than the
    human-only interval. ``lam = 1`` is PPI (Angelopoulos et al., 2023); ``tuned=True`` picks
    ``lam`` in [0, 1] from the data to minimise the variance (PPI++), so the interval is never
    much wider than the human-only one even for a useless judge.

    Parameters
    ----------
    human : sequence of float, length n
        The human value per labelled request (0/1 label, or a per-request rate such as the share
        of claims people call supported).
    judge_labelled : sequence of float, length n
        The judge's value on the same requests, same order.
    judge_unlabelled : sequence of float, length N
        The judge's value on the requests without a human label (disjoint from the labelled ones).
    confidence : float in (0, 1)
    tuned : bool
        False: PPI with ``lam = 1``; True: PPI++ power tuning.

    Returns
    -------
    Interval
        ``method`` ``"ppi"`` or ``"ppi++"``, ``n``, ``n_unlabelled``, ``extra["lam"]``, ``extra["se"]``;
        ``too_small`` when ``n < MIN_LABELS``; NaN when ``n == 0`` or ``N == 0``. Variances are
        population variances (``ddof=0``) and ``lam`` is clipped to [0, 1], as in ``ppi_py``.

    Raises
    ------
    EvalSuiteError
        Lengths of ``human`` and ``judge_labelled`` differ; a NaN or non-number value.

    References
    ----------
    Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science 382
    (2023), mean estimation (Algorithm / Example 1); Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
    prediction-powered inference", arXiv:2311.01453 (2023); ``ppi_py.ppi_mean_ci``.

    Examples
    --------
    >>> iv = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 1, 0, 1, 1])
    >>> # judge mean on unlabelled 0.75, rectifier mean(human - judge) = 0.25 -> 1.0
    >>> round(iv.estimate, 4), iv.n, iv.n_unlabelled, iv.too_small
    (1.0, 4, 8, True)
    """
    confidence = _check_confidence(confidence)
    y = _vector(human, "human")
    f = _vector(judge_labelled, "judge_labelled")
    fu = _vector(judge_unlabelled, "judge_unlabelled")
    if len(y) != len(f):
        raise EvalSuiteError("human and judge_labelled must have one value per labelled request each",
                             field="judge_labelled", value=f"{len(f)} values for {len(y)} human labels")
    for name, v in (("human", y), ("judge_labelled", f), ("judge_unlabelled", fu)):
        if np.isnan(v).any():
            raise EvalSuiteError("a value is missing (None/NaN); drop such requests first",
                                 field=f"{name}[{int(np.argmax(np.isnan(v)))}]", value=None, has_value=True)
    n, big_n = len(y), len(fu)
    method = "ppi++" if tuned else "ppi"
    if n == 0 or big_n == 0:
        return Interval(math.nan, math.nan, math.nan, n, method, confidence, big_n, True)
    lam = 1.0
    if tuned:
        # ppi_py._calc_lam_glm for a mean (identity Hessian), clipped to [0, 1].
        cov = float(((y - y.mean()) * (f - f.mean())).sum() * 2 / n)
        pooled = np.concatenate([f, fu])
        var = float(pooled.var(ddof=1)) if len(pooled) > 1 else 0.0
        lam = cov / (2 * (1 + n / big_n) * var) if var > 0 else 0.0
        lam = min(max(lam, 0.0), 1.0)
    theta = float(lam * fu.mean() + (y - lam * f).mean())
    se = math.sqrt(float((lam * fu).std()) ** 2 / big_n + float((y - lam * f).std()) ** 2 / n)
    half = _z(confidence) * se
    return Interval(theta, theta - half, theta + half, n, method, confidence, big_n, n < MIN_LABELS,
                    {"lam": lam, "se": se})


def mean_intervals(human: Sequence, judge_labelled: Sequence, judge_unlabelled: Sequence,
                   confidence: float = 0.95, tuned: bool = False) -> dict[str, Interval]:
    """The three intervals side by side: judge only, human only, prediction-powered.

    Parameters
    ----------
    human, judge_labelled, judge_unlabelled, confidence, tuned
        As in :func:`ppi_mean`.

    Returns
    -------
    dict
        ``"judge"``: :func:`classical_mean` of the judge's values on all ``n + N`` requests, an
        interval for *the judge's* mean, which is biased for the human mean by however much the
        judge errs; ``"human"``: :func:`classical_mean` of the ``n`` human labels (valid, wide);
        ``"ppi"``: :func:`ppi_mean` (valid, narrower when the judge is good).

    Raises
    ------
    EvalSuiteError
        As :func:`ppi_mean`.

    References
    ----------
    Angelopoulos et al., Science 2023 (the same three-way comparison in its figures).

    Examples
    --------
    >>> m = mean_intervals([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 1, 0, 1, 1])
    >>> {k: round(v.estimate, 4) for k, v in m.items()}
    {'judge': 0.6667, 'human': 0.75, 'ppi': 1.0}
    """
    ppi = ppi_mean(human, judge_labelled, judge_unlabelled, confidence, tuned)
    judge_all = np.concatenate([_vector(judge_labelled, "judge_labelled"), _vector(judge_unlabelled, "judge_unlabelled")])
    judge = classical_mean(judge_all, confidence)
    return {"judge": judge, "human": classical_mean(human, confidence), "ppi": ppi}


def ppi_mean_difference(a: tuple[Sequence, Sequence, Sequence], b: tuple[Sequence, Sequence, Sequence],
                        paired: bool = False, confidence: float = 0.95, tuned: bool = False) -> Interval:
    """Prediction-powered interval of the difference of two systems' means, ``a - b``.

    Parameters
    ----------
    a, b : tuples ``(human, judge_labelled, judge_unlabelled)``
        Each system's arrays as in :func:`ppi_mean`.
    paired : bool
        True: the two systems answered the same requests in the same order and people labelled the
        same ones (a paired design); the estimator is :func:`ppi_mean` of the per-request
        differences (``human_a - human_b``, ``judge_a - judge_b``), valid and usually much narrower.
        False: the labelled sets are independent samples; the estimate is ``theta_a - theta_b`` and
        the standard error ``sqrt(se_a**2 + se_b**2)``. When both systems' unlabelled requests are
        the same queries, the judge means are usually positively correlated, which makes this
        interval conservative (wider than needed).
    confidence, tuned
        As in :func:`ppi_mean`.

    Returns
    -------
    Interval
        ``method`` ``"ppi paired"`` / ``"ppi independent"`` (``++`` when tuned), ``n`` (labelled
        pairs, or the smaller labelled count), ``too_small`` when ``n < MIN_LABELS``.

    Raises
    ------
    EvalSuiteError
        Paired arrays of different lengths; bad values as in :func:`ppi_mean`.

    References
    ----------
    Angelopoulos et al., Science 2023; Saad-Falcon et al., ARES, NAACL 2024 (PPI intervals to rank
    RAG systems).

    Examples
    --------
    >>> a = ([1, 1, 0, 1], [1, 1, 0, 1], [1, 1, 1, 0])
    >>> b = ([0, 1, 0, 0], [0, 1, 0, 1], [0, 1, 0, 0])
    >>> round(ppi_mean_difference(a, b, paired=True).estimate, 4)  # 0.5 (judge) + 0.25 (rectifier)
    0.75
    """
    confidence = _check_confidence(confidence)
    suffix = "++" if tuned else ""
    if paired:
        arrays = []
        for i, name in enumerate(("human", "judge_labelled", "judge_unlabelled")):
            va, vb = _vector(a[i], f"a.{name}"), _vector(b[i], f"b.{name}")
            if len(va) != len(vb):
                raise EvalSuiteError("paired systems need the same requests in the same order", field=f"b.{name}",
                                     value=f"{len(vb)} values for {len(va)}")
            arrays.append(va - vb)
        iv = ppi_mean(*arrays, confidence=confidence, tuned=tuned)
        return Interval(iv.estimate, iv.low, iv.high, iv.n, "ppi paired" + suffix, confidence, iv.n_unlabelled,
                        iv.too_small, iv.extra)
    ia, ib = ppi_mean(*a, confidence=confidence, tuned=tuned), ppi_mean(*b, confidence=confidence, tuned=tuned)
    est = ia.estimate - ib.estimate
    se = math.sqrt(ia.extra.get("se", math.nan) ** 2 + ib.extra.get("se", math.nan) ** 2)
    half = _z(confidence) * se
    n = min(ia.n, ib.n)
    return Interval(est, est - half, est + half, n, "ppi independent" + suffix, confidence,
                    min(ia.n_unlabelled, ib.n_unlabelled), n < MIN_LABELS, {"se": se})


# ------------------------------------------------------------------------------------------------
# judgement tables
# ------------------------------------------------------------------------------------------------

def _rows_of_file(path: str | Path | bytes, source: str | None, limit: int):
    """Rows of a CSV/TSV (header line) or JSONL file as ``(line number, dict of str/values)``."""
    if isinstance(path, (bytes, bytearray)):
        data, name = bytes(path), source or "<bytes>"
    else:
        p = Path(path)
        name = source or p.name
        size = p.stat().st_size
        if size > limit:
            raise EvalSuiteError(f"the file is larger than the {limit} bytes allowed", source=name, value=size)
        data = p.read_bytes()
    if len(data) > limit:
        raise EvalSuiteError(f"the file is larger than the {limit} bytes allowed", source=name, value=len(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise EvalSuiteError("the file is not UTF-8 text", source=name, line=line) from None
    first = text.lstrip()[:1]
    if first == "{":
        rows = []
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalSuiteError(f"not a JSON object: {exc.msg}", source=name, line=i) from None
            if not isinstance(obj, dict):
                raise EvalSuiteError("each line must be a JSON object", source=name, line=i, value=obj)
            rows.append((i, obj))
        return name, rows
    delimiter = "\t" if "\t" in text.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header:
        raise EvalSuiteError("the file is empty", source=name)
    header = [h.strip() for h in header]
    rows = []
    for values in reader:
        line = reader.line_num
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(values)}",
                                 source=name, line=line)
        rows.append((line, {h: v.strip() for h, v in zip(header, values)}))
    return name, rows


def _number(value, name: str, line: int, field_name: str, binary: bool) -> float:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "nan", "null", "none", "na")):
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if binary and low in ("true", "yes", "[[yes]]"):
            return 1.0
        if binary and low in ("false", "no", "[[no]]"):
            return 0.0
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
        ok = False
    else:
        ok = math.isfinite(x)
    if not ok or (binary and x not in (0.0, 1.0)):
        what = "a label must be 1/0, true/false or yes/no (empty = not labelled)" if binary else "expected a finite number"
        raise EvalSuiteError(what, source=name, line=line, field=field_name, value=value)
    return x


def _frame_from_rows(name: str, rows: list, required: Sequence[str]):
    import pandas as pd

    if not rows:
        raise EvalSuiteError("the file has no data rows", source=name)
    columns = set().union(*(r.keys() for _, r in rows))
    for col in required:
        if col not in columns:
            raise EvalSuiteError(f"a column {col!r} is required (columns found: {', '.join(sorted(columns))})",
                                 source=name, line=1, field=col)
    out: dict[str, list] = {"line": []}
    for col in JUDGEMENT_COLUMNS:
        if col in columns:
            out[col] = []
    for line, row in rows:
        out["line"].append(line)
        for col in out:
            if col == "line":
                continue
            value = row.get(col)
            if col in ("query_id", "system", "judgement", "judge"):
                if value is None or str(value).strip() == "":
                    if col in required:
                        raise EvalSuiteError("a value is required", source=name, line=line, field=col, value=value,
                                             has_value=True)
                    value = ""
                elif not isinstance(value, (str, int)) or isinstance(value, bool):
                    raise EvalSuiteError("expected a string id", source=name, line=line, field=col, value=value)
                out[col].append(str(value).strip())
            elif col == "item":
                x = _number(value if value not in (None, "") else 0, name, line, col, False)
                if math.isnan(x) or x < 0 or x != int(x):
                    raise EvalSuiteError("item must be an integer >= 0", source=name, line=line, field=col, value=value)
                out[col].append(int(x))
            else:
                out[col].append(_number(value, name, line, col, col.endswith("_label")))
    frame = pd.DataFrame(out)
    for col in ("system", "judgement", "judge"):
        if col not in frame:
            frame[col] = ""
    if "item" not in frame:
        frame["item"] = 0
    return frame


def _check_unique(frame, name: str, keys: Sequence[str]) -> None:
    dup = frame.duplicated(list(keys), keep="first")
    if dup.any():
        row = frame[dup].iloc[0]
        key = ", ".join(f"{k}={row[k]!r}" for k in keys)
        raise EvalSuiteError(f"this {key} appears twice", source=name, line=int(row["line"]), field=keys[0],
                             value=row[keys[0]])


def read_judgements(path: str | Path | bytes, source_name: str | None = None, max_bytes: int = 256 * 2**20):
    """Read a judgement table (CSV, TSV or JSONL; columns as in the module doc).

    Parameters
    ----------
    path : str, Path or bytes
        The file, or its bytes. A CSV/TSV has a header line; a JSONL file one object per line.
    source_name : str, optional
        Name used in error messages (default: the file's name).
    max_bytes : int
        Largest file accepted (default 256 MiB).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`JUDGEMENT_COLUMNS` present (``system``, ``judgement``, ``judge``
        default to ``""``, ``item`` to 0), plus ``line`` (the row's line in the file). Labels are
        float 1/0/NaN (``true``/``yes``/``[[Yes]]`` read as 1).

    Raises
    ------
    EvalSuiteError
        Naming file, line, field and value: ``query_id`` or both judge columns missing, a label
        that is not 0/1, a score that is not a number, a row repeated (same query_id, system,
        judgement, item and judge), a file too large or not UTF-8.

    References
    ----------
    The layout follows ARES's labelled TSV files (one row per query/passage/answer with
    ``[[Yes]]``/``[[No]]`` labels), made long so any judgement type fits.

    Examples
    --------
    >>> t = read_judgements(b"query_id,judge_label,human_label\\nq1,1,1\\nq2,0,\\n")
    >>> t[["query_id", "judge_label", "human_label", "line"]].to_dict("list")
    {'query_id': ['q1', 'q2'], 'judge_label': [1.0, 0.0], 'human_label': [1.0, nan], 'line': [2, 3]}
    """
    name, rows = _rows_of_file(path, source_name, max_bytes)
    frame = _frame_from_rows(name, rows, ["query_id"])
    if "judge_label" not in frame and "judge_score" not in frame:
        raise EvalSuiteError("a judge_label or judge_score column is required", source=name, line=1, field="judge_label")
    if "judge_label" not in frame:
        frame["judge_label"] = np.where(np.isnan(frame["judge_score"]), np.nan, (frame["judge_score"] >= 0.5) * 1.0)
    if "judge_score" not in frame:
        frame["judge_score"] = frame["judge_label"]
    for col in ("human_label", "human_score"):
        if col not in frame:
            frame[col] = np.nan
    _check_unique(frame, name, [*_KEYS, "judge"])
    return frame


def join_human_labels(judgements, labels: str | Path | bytes, source_name: str | None = None,
                      max_bytes: int = 256 * 2**20):
    """Join a separate file of human labels onto a judgement table.

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table (:func:`read_judgements` or :func:`judgements_from_records`).
    labels : str, Path or bytes
        CSV, TSV or JSONL with ``query_id`` and ``human_label`` (and/or ``human_score``), and
        optionally ``system``, ``judgement`` and ``item`` (claim or chunk index): the key is the
        columns of these the file has. A label file without ``system`` labels a request for
        every system that answered it (useful when people judged the question's chunks once).
    source_name, max_bytes
        As in :func:`read_judgements`.

    Returns
    -------
    tuple (pandas.DataFrame, dict)
        The table with ``human_label`` / ``human_score`` filled from the file where it has a row
        (the file wins over a value already there), and counts: ``matched`` (label rows that
        found a judgement), ``unmatched`` (label rows that found none), ``first_unmatched_line``.

    Raises
    ------
    EvalSuiteError
        Naming file, line, field and value: ``query_id`` or both human columns missing, a label not
        0/1, a score not a number, a key repeated in the label file.

    References
    ----------
    ARES (Saad-Falcon et al., NAACL 2024) keeps its human preference-validation set in a separate
    labelled file; this join is the same idea by request id.

    Examples
    --------
    >>> t = read_judgements(b"query_id,item,judge_label\\nq1,0,1\\nq1,1,0\\nq2,0,1\\n")
    >>> joined, counts = join_human_labels(t, b"query_id,item,human_label\\nq1,1,yes\\nq9,0,no\\n")
    >>> joined["human_label"].tolist(), counts["matched"], counts["unmatched"]
    ([nan, 1.0, nan], 1, 1)
    """

    name, rows = _rows_of_file(labels, source_name, max_bytes)
    file_columns = set().union(*(r.keys() for _, r in rows)) if rows else set()
    lab = _frame_from_rows(name, rows, ["query_id"])
    if "human_label" not in lab and "human_score" not in lab:
        raise EvalSuiteError("a human_label or human_score column is required", source=name, line=1, field="human_label")
    keys = [k for k in _KEYS if k in file_columns]
    _check_unique(lab, name, keys)
    values = [c for c in ("human_label", "human_score") if c in lab]
    right = lab[keys + values + ["line"]].rename(columns={"line": "_label_line", **{c: f"_new_{c}" for c in values}})
    left = judgements.copy()
    for k in keys:
        if k == "item":
            left[k] = left[k].astype(int)
            right[k] = right[k].astype(int)
        else:
            left[k] = left[k].astype(str)
    merged = left.merge(right, on=keys, how="left", validate="many_to_one")
    for c in values:
        new = merged.pop(f"_new_{c}")
        merged[c] = new.where(merged["_label_line"].notna(), merged[c] if c in merged else np.nan)
    used = set(merged["_label_line"].dropna().astype(int))
    merged = merged.drop(columns="_label_line")
    unmatched = sorted(set(lab["line"]) - used)
    for col in ("human_label", "human_score"):
        if col not in merged:
            merged[col] = np.nan
    return merged, {"matched": len(used), "unmatched": len(unmatched),
                    "first_unmatched_line": unmatched[0] if unmatched else None}


def judgements_from_records(records, field_name: str, human_field: str | None = None, judge: str = "",
                            judgement: str | None = None):
    """A judgement table from per-request records with a judge list field and a ``human_*`` field.

    Parameters
    ----------
    records : pandas.DataFrame or evalsuite.Records
        One row per request with ``query_id``, optionally ``system``, the judge's per-item list
        ``field_name`` (e.g. ``answer_claims_supported``) and the human list ``human_field``.
    field_name : str
        The judge's list column (bools or None per claim/chunk).
    human_field : str, optional
        The human list column, default ``"human_" + field_name``; lists of the same length.
    judge : str
        Judge name written in the ``judge`` column.
    judgement : str, optional
        Judgement type name (default ``field_name``).

    Returns
    -------
    pandas.DataFrame
        One row per item (``item`` = position in the list), columns of :data:`JUDGEMENT_COLUMNS`
        (``judge_score`` = ``judge_label``), plus ``line`` (the record's 1-based row).

    Raises
    ------
    EvalSuiteError
        A column missing, lists of different lengths, a label not bool/0/1/None (naming the row,
        field and value).

    References
    ----------
    The record schema, ``docs/records.md``.

    Examples
    --------
    >>> import pandas as pd
    >>> recs = pd.DataFrame({"query_id": ["q1"], "answer_claims_supported": [[True, None]],
    ...                      "human_answer_claims_supported": [[True, False]]})
    >>> judgements_from_records(recs, "answer_claims_supported")[["item", "judge_label", "human_label"]].values.tolist()
    [[0.0, 1.0, 1.0], [1.0, nan, 0.0]]
    """
    import pandas as pd

    frame = records if isinstance(records, pd.DataFrame) else records.frame  # evalsuite.Records
    human_field = human_field or f"human_{field_name}"
    for col in ("query_id", field_name, human_field):
        if col not in frame.columns:
            raise EvalSuiteError("the records have no such column", field=col, line=1)
    rows = []
    systems = frame["system"] if "system" in frame.columns else [""] * len(frame)
    for r, (qid, system, jl, hl) in enumerate(zip(frame["query_id"], systems, frame[field_name], frame[human_field]),
                                              start=1):
        jl = [] if jl is None or (isinstance(jl, float) and math.isnan(jl)) else list(jl)
        hl = [] if hl is None or (isinstance(hl, float) and math.isnan(hl)) else list(hl)
        if len(jl) != len(hl):
            raise EvalSuiteError(f"{field_name} has {len(jl)} items and {human_field} {len(hl)}", line=r,
                                 field=human_field, value=hl)
        for i, (j, h) in enumerate(zip(jl, hl)):
            jv = _number(j, "records", r, field_name, True)
            hv = _number(h, "records", r, human_field, True)
            rows.append({"query_id": str(qid), "system": str(system), "judgement": judgement or field_name,
                         "item": i, "judge": judge, "judge_score": jv, "judge_label": jv, "human_label": hv,
                         "human_score": math.nan, "line": r})
    return pd.DataFrame(rows, columns=[*JUDGEMENT_COLUMNS, "line"])


def agreement_table(judgements, confidence: float = 0.95, by: Sequence[str] = ("judge", "judgement", "system")):
    """Agreement and rank correlation per judge and judgement type (and system).

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table.
    confidence : float in (0, 1)
    by : sequence of column names
        Grouping; ``("judge", "judgement")`` pools the systems.

    Returns
    -------
    pandas.DataFrame
        One row per group: the grouping columns, :meth:`Agreement.as_row` (n, accuracy, kappa,
        precision, recall with bounds, tp/fp/fn/tn, too_small) and ``spearman`` / ``kendall`` of
        ``judge_score`` against ``human_score`` (or ``human_label`` when no score).

    Raises
    ------
    EvalSuiteError
        As :func:`agreement`.

    References
    ----------
    See :func:`agreement` and :func:`rank_correlation`.

    Examples
    --------
    >>> t = read_judgements(b"query_id,judge_score,judge_label,human_label\\nq1,0.9,1,1\\nq2,0.2,0,0\\nq3,0.7,1,0\\n")
    >>> agreement_table(t, by=("judge",))[["n", "accuracy", "tp", "fp", "fn", "tn", "too_small"]].values.tolist()
    [[3, 0.6666666666666666, 1, 1, 0, 1, True]]
    """
    import pandas as pd

    rows = []
    for key, group in judgements.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row.update(agreement(group["judge_label"].to_numpy(), group["human_label"].to_numpy(), confidence).as_row())
        human = group["human_score"] if "human_score" in group and group["human_score"].notna().any() else group["human_label"]
        corr = rank_correlation(group["judge_score"].to_numpy(), human.to_numpy())
        row.update(spearman=corr["spearman"], kendall=corr["kendall"])
        rows.append(row)
    return pd.DataFrame(rows)


def _per_request(judgements, predictor: str):
    """Per (system, query_id): mean judge value over items, mean human label over labelled items."""
    column = {"label": "judge_label", "score": "judge_score"}.get(predictor)
    if column is None:
        raise EvalSuiteError("predictor must be 'label' or 'score'", field="predictor", value=predictor)
    t = judgements[judgements[column].notna()]
    grouped = t.groupby(["system", "query_id"], sort=True)
    out = grouped[column].mean().to_frame("judge")
    out["human"] = grouped["human_label"].mean()  # NaN when no item of the request is labelled
    return out.reset_index()


def labelled_subset(judgements, n_queries: int, seed: int = 0):
    """Keep human labels on ``n_queries`` randomly chosen request ids only (the same ids for every
    system: a paired design), hide the rest, to simulate a small labelling budget.

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table with human labels.
    n_queries : int >= 0
        How many request ids keep their labels (among those that have any).
    seed : int
        Seed of ``numpy.random.default_rng`` (the same seed gives the same subset).

    Returns
    -------
    pandas.DataFrame
        A copy with ``human_label`` and ``human_score`` set to NaN outside the chosen ids, and a
        column ``held_out_label`` keeping the original label (to show the all-labels mean).

    Raises
    ------
    EvalSuiteError
        ``n_queries`` negative or not an integer.

    References
    ----------
    ARES (Saad-Falcon et al., 2024) uses about 150 labelled requests as its validation set.

    Examples
    --------
    >>> t = read_judgements(b"query_id,judge_label,human_label\\nq1,1,1\\nq2,0,0\\nq3,1,0\\n")
    >>> int(labelled_subset(t, 2, seed=1)["human_label"].notna().sum())
    2
    """
    if isinstance(n_queries, bool) or not isinstance(n_queries, numbers.Integral) or n_queries < 0:
        raise EvalSuiteError("n_queries must be an integer >= 0", field="n_queries", value=n_queries)
    out = judgements.copy()
    out["held_out_label"] = out["human_label"]
    ids = np.array(sorted(out.loc[out["human_label"].notna(), "query_id"].astype(str).unique()))
    rng = np.random.default_rng(seed)
    keep = set(rng.choice(ids, size=min(int(n_queries), len(ids)), replace=False).tolist()) if len(ids) else set()
    hide = ~out["query_id"].astype(str).isin(keep)
    out.loc[hide, "human_label"] = np.nan
    if "human_score" in out:
        out.loc[hide, "human_score"] = np.nan
    return out


def system_intervals(judgements, confidence: float = 0.95, tuned: bool = False, predictor: str = "label"):
    """Judge-only, human-only and PPI means per judgement type and system.

    The unit is the request: a request's judge value is the mean of the judge's verdicts over its
    items (claims, chunks), its human value the mean of the human labels over its labelled items,
    so the target is the system's mean of the per-request human rate (the faithfulness people
    would give it). Requests with a human label are the labelled set; the others the unlabelled.

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table (one judge; filter first if it holds several).
    confidence, tuned
        As in :func:`ppi_mean`.
    predictor : "label" or "score"
        Which judge column predicts the human label (default the verdict).

    Returns
    -------
    pandas.DataFrame
        One row per (judgement, system, estimator) with ``estimator`` in ``judge only``,
        ``human only``, ``PPI``: ``estimate``, ``low``, ``high``, ``n`` (human-labelled requests;
        for ``judge only``, all judged requests), ``n_unlabelled``, ``too_small``; and
        ``held_out`` (the human mean over every labelled request of the original table when
        :func:`labelled_subset` hid some; else NaN).

    Raises
    ------
    EvalSuiteError
        A bad ``predictor``; bad values as :func:`ppi_mean`.

    References
    ----------
    Angelopoulos et al., Science 2023; Saad-Falcon et al., ARES, NAACL 2024.

    Examples
    --------
    >>> t = read_judgements(b"query_id,judge_label,human_label\\nq1,1,1\\nq2,0,0\\nq3,1,\\nq4,1,\\n")
    >>> system_intervals(t)[["estimator", "estimate", "n", "n_unlabelled"]].values.tolist()
    [['judge only', 0.75, 4, 0], ['human only', 0.5, 2, 0], ['PPI', 1.0, 2, 2]]
    """
    import pandas as pd

    rows = []
    for judgement_name, part in judgements.groupby("judgement", sort=True):
        per = _per_request(part, predictor)
        held = None
        if "held_out_label" in part:
            held = part.groupby(["system", "query_id"])["held_out_label"].mean().groupby("system").mean()
        for system, g in per.groupby("system", sort=True):
            lab = g[g["human"].notna()]
            unl = g[g["human"].isna()]
            m = mean_intervals(lab["human"].to_numpy(), lab["judge"].to_numpy(), unl["judge"].to_numpy(),
                               confidence, tuned)
            for label, key in (("judge only", "judge"), ("human only", "human"), ("PPI", "ppi")):
                iv = m[key]
                rows.append({"judgement": judgement_name, "system": system, "estimator": label,
                             "estimate": iv.estimate, "low": iv.low, "high": iv.high, "n": iv.n,
                             "n_unlabelled": iv.n_unlabelled, "too_small": iv.too_small if key != "judge" else False,
                             "held_out": float(held.get(system, math.nan)) if held is not None else math.nan})
    return pd.DataFrame(rows, columns=["judgement", "system", "estimator", "estimate", "low", "high", "n",
                                       "n_unlabelled", "too_small", "held_out"])


def difference_interval(judgements, system_a: str, system_b: str, judgement: str | None = None,
                        confidence: float = 0.95, tuned: bool = False, predictor: str = "label") -> Interval:
    """PPI interval of ``mean(system_b) - mean(system_a)`` for Compare (*system - baseline*).

    Requests both systems answered are paired by ``query_id``: when people labelled the same
    requests for both (at least 2), the paired estimator of :func:`ppi_mean_difference` runs on the
    shared requests (labelled where both have a human value, unlabelled where neither has);
    otherwise the two systems' PPI means are treated as independent.

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table.
    system_a : str
        The baseline.
    system_b : str
        The system compared with it.
    judgement : str, optional
        Judgement type; required when the table has several.
    confidence, tuned, predictor
        As in :func:`system_intervals`.

    Returns
    -------
    Interval
        The difference ``b - a`` (the sign of Compare's ``diff``), ``method`` saying paired or
        independent, ``too_small`` when fewer than :data:`MIN_LABELS` labelled requests back it.

    Raises
    ------
    EvalSuiteError
        An unknown system or judgement; several judgement types and none chosen.

    References
    ----------
    Angelopoulos et al., Science 2023; Saad-Falcon et al., ARES, NAACL 2024.

    Examples
    --------
    >>> t = read_judgements(b"query_id,system,judge_label,human_label\\nq1,a,1,1\\nq2,a,0,0\\nq3,a,1,\\n"
    ...                     b"q1,b,1,1\\nq2,b,1,1\\nq3,b,1,\\n")
    >>> iv = difference_interval(t, "a", "b")
    >>> round(iv.estimate, 4), iv.method, iv.n
    (0.0, 'ppi paired', 2)
    """
    kinds = sorted(judgements["judgement"].unique())
    if judgement is None:
        if len(kinds) != 1:
            raise EvalSuiteError("the table has several judgement types: choose one", field="judgement",
                                 value=", ".join(map(str, kinds)))
        judgement = kinds[0]
    if judgement not in kinds:
        raise EvalSuiteError("no such judgement type in the table", field="judgement", value=judgement)
    per = _per_request(judgements[judgements["judgement"] == judgement], predictor)
    systems = set(per["system"])
    for name, s in (("system_a", system_a), ("system_b", system_b)):
        if s not in systems:
            raise EvalSuiteError("no such system in the table", field=name, value=s)
    a = per[per["system"] == system_a].set_index("query_id")
    b = per[per["system"] == system_b].set_index("query_id")
    common = a.index.intersection(b.index)
    both = common[a.loc[common, "human"].notna().to_numpy() & b.loc[common, "human"].notna().to_numpy()]
    neither = common[a.loc[common, "human"].isna().to_numpy() & b.loc[common, "human"].isna().to_numpy()]
    if len(both) >= 2 and len(neither) >= 1:
        arrays = [(x.loc[both, "human"].to_numpy(), x.loc[both, "judge"].to_numpy(), x.loc[neither, "judge"].to_numpy())
                  for x in (b, a)]
        return ppi_mean_difference(arrays[0], arrays[1], paired=True, confidence=confidence, tuned=tuned)
    arrays = []
    for x in (b, a):
        lab, unl = x[x["human"].notna()], x[x["human"].isna()]
        arrays.append((lab["human"].to_numpy(), lab["judge"].to_numpy(), unl["judge"].to_numpy()))
    return ppi_mean_difference(arrays[0], arrays[1], paired=False, confidence=confidence, tuned=tuned)
