"""How far to trust a judge: its agreement with human labels, on plain vectors (:func:`agreement`,
:func:`rank_correlation`, :func:`reliability`) or per judge, judgement type and system of a
judgement table (:func:`agreement_table`; tables are read by :mod:`~evalsuite.stats.judgement_tables`).
The intervals (:class:`Interval`) are shared with :mod:`~evalsuite.stats.ppi`.

Intervals: Wilson score intervals for proportions (accuracy, precision, recall), the asymptotic
interval of Cohen's kappa with the variance of Fleiss, Cohen & Everitt (1969) (what statsmodels'
``cohens_kappa`` reports), normal (CLT) intervals for means; prediction-powered intervals are in
:mod:`~evalsuite.stats.ppi`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import EvalSuiteError

__all__ = ["Interval", "Agreement", "MIN_LABELS", "wilson_interval", "agreement", "rank_correlation", "reliability",
           "agreement_table"]

#: Below this many human labels an interval is flagged as too small to mean anything: the
#: normal approximation behind the CLT, kappa and PPI intervals is poor, and a Wilson interval
#: spans most of [0, 1]. (A rule of thumb, 30, as in the usual CLT guidance; the flag is a
#: warning, the numbers are still computed.)
MIN_LABELS = 30


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
    >>> from evalsuite.stats.judgement_tables import read_judgements
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
