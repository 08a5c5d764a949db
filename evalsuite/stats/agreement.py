"""How far to trust a judge: its agreement with human labels, on plain vectors (:func:`agreement`,
:func:`rank_correlation`, :func:`reliability`) or per judge, judgement type and system of a
judgement table (:func:`agreement_table`; tables are read by :mod:`~evalsuite.stats.judgement_tables`).
The intervals (:class:`Interval`) and their methods are in :mod:`~evalsuite.stats.intervals`.

Intervals: Clopper-Pearson for proportions (accuracy, precision, recall, the human rate of a
reliability bin), the Jeffreys posterior interval of Cohen's kappa; each stays inside the range of
what it estimates and names a degenerate input (all labels equal, no disagreement, a judge that
always says the same) in its ``note``. Prediction-powered intervals are in :mod:`~evalsuite.stats.ppi`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import EvalSuiteError
from .intervals import (MIN_LABELS, Interval, _check_confidence, _vector, _z, clopper_pearson_interval,
                        kappa_interval, wilson_interval)

__all__ = ["Interval", "Agreement", "MIN_LABELS", "wilson_interval", "clopper_pearson_interval", "agreement",
           "rank_correlation", "reliability", "agreement_table"]

_ = (_z, math)  # re-exported for the modules that import them from here


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
    note: str = ""

    def as_row(self) -> dict[str, Any]:
        """One flat row for a table: counts, estimates and bounds, and the note on a degenerate input."""
        (tn, fp), (fn, tp) = self.confusion.tolist()
        row: dict[str, Any] = {"n": self.n, "dropped": self.dropped}
        for name in ("accuracy", "kappa", "precision", "recall"):
            iv = getattr(self, name)
            row[name], row[f"{name}_low"], row[f"{name}_high"] = iv.estimate, iv.low, iv.high
        row.update(tp=tp, fp=fp, fn=fn, tn=tn, too_small=self.too_small, note=self.note)
        return row


def _note(confusion: np.ndarray, n: int) -> str:
    """The degenerate cases of a confusion matrix, in words ("" when there is none)."""
    (tn, fp), (fn, tp) = confusion.tolist()
    notes = []
    if n == 0:
        return "no item has both a human label and a judge verdict"
    if tn + fp == 0 or fn + tp == 0:
        notes.append(f"every human label is {'yes' if tn + fp == 0 else 'no'}")
    if tn + fn == 0 or fp + tp == 0:
        notes.append(f"the judge always says {'yes' if tn + fn == 0 else 'no'}")
    if fp + fn == 0 and not notes:
        notes.append("no disagreement")
    if n < MIN_LABELS:
        notes.append(f"fewer than {MIN_LABELS} labels")
    return "; ".join(notes)


def agreement(judge: Sequence, human: Sequence, confidence: float = 0.95, weights: Sequence | None = None) -> Agreement:
    """Agreement of a judge's binary verdicts with human labels on the same items.

    Parameters
    ----------
    judge, human : sequences of bool, 0/1 or None (NaN), same length n_items
        The judge's verdict and a person's label per item; 1/True is the positive class
        (supported, relevant, faithful ...). An item where either is None/NaN is dropped and counted.
    confidence : float in (0, 1)
        Confidence level of every interval (default 0.95).
    weights : sequence of float > 0, optional
        Inverse inclusion probabilities of the items when they were drawn with unequal
        probabilities (active labelling): the statistics are then of the weighted table, and the
        intervals use its effective counts (the weighted counts scaled to Kish's effective size).

    Returns
    -------
    Agreement
        ``accuracy`` (share of items where they agree), ``precision`` (of the judge's positives,
        the share people call positive) and ``recall`` (of the human positives, the share the
        judge calls positive), each with a Clopper-Pearson interval; Cohen's ``kappa`` (agreement
        beyond chance) with its Jeffreys posterior interval (:func:`~evalsuite.stats.intervals.kappa_interval`);
        ``confusion``, a 2x2 count matrix with rows = human label 0, 1 and columns = judge verdict
        0, 1 (scikit-learn's ``confusion_matrix(human, judge)`` layout); ``too_small`` when fewer
        than :data:`MIN_LABELS` items are compared; ``note`` naming a degenerate input (every human
        label the same, a judge that always says the same, no disagreement, too few labels).

    Raises
    ------
    EvalSuiteError
        Different lengths, a value other than 0/1/True/False/None, ``confidence`` out of range.

    References
    ----------
    Cohen, J. (1960), "A coefficient of agreement for nominal scales", Educational and Psychological
    Measurement 20; Clopper & Pearson (1934), Biometrika 26; see :mod:`~evalsuite.stats.intervals`.

    Examples
    --------
    >>> a = agreement([1, 1, 0, 1, 0, None], [1, 0, 0, 1, 1, 1])
    >>> a.n, a.dropped, a.confusion.tolist()
    (5, 1, [[1, 1], [1, 2]])
    >>> round(a.accuracy.estimate, 4), round(a.kappa.estimate, 4)  # p_o = 3/5, p_e = 0.52
    (0.6, 0.1667)
    >>> round(a.precision.estimate, 4), round(a.recall.estimate, 4)
    (0.6667, 0.6667)
    >>> agreement([1, 1, 1], [1, 1, 1]).note
    'every human label is yes; the judge always says yes; fewer than 30 labels'
    """
    confidence = _check_confidence(confidence)
    j = _vector(judge, "judge", binary=True)
    h = _vector(human, "human", binary=True)
    if len(j) != len(h):
        raise EvalSuiteError("judge and human must have one value per item each", field="human",
                             value=f"{len(h)} values for {len(j)} judge verdicts")
    keep = ~np.isnan(j) & ~np.isnan(h)
    w = None
    if weights is not None:
        w = _vector(weights, "weights")
        if len(w) != len(j):
            raise EvalSuiteError("one weight per item", field="weights", value=f"{len(w)} weights for {len(j)} items")
        if (np.isnan(w[keep]) | (w[keep] <= 0)).any():
            raise EvalSuiteError("a weight must be a number > 0", field="weights")
        w = w[keep]
    j, h = j[keep].astype(int), h[keep].astype(int)
    n = int(keep.sum())
    confusion = np.zeros((2, 2), dtype=np.int64)
    np.add.at(confusion, (h, j), 1)
    counts = confusion.astype(np.float64)
    if w is not None and n:
        weighted = np.zeros((2, 2))
        np.add.at(weighted, (h, j), w)
        counts = weighted * (w.sum() / (w * w).sum())  # effective counts: they sum to Kish's n_eff
    (tn, fp), (fn, tp) = counts.tolist()
    return Agreement(
        n=n, dropped=int((~keep).sum()),
        accuracy=clopper_pearson_interval(tp + tn, tp + tn + fp + fn, confidence),
        kappa=kappa_interval(counts, confidence),
        precision=clopper_pearson_interval(tp, tp + fp, confidence),
        recall=clopper_pearson_interval(tp, tp + fn, confidence),
        confusion=confusion, too_small=n < MIN_LABELS, note=_note(confusion, n))


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
        Level of the Clopper-Pearson interval of each bin's human rate.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``bin_low``, ``bin_high``, ``mean_score`` (mean judge score in
        the bin), ``human_rate`` (share labelled 1), ``ci_low``, ``ci_high`` (Clopper-Pearson), ``n``. A
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
            iv = clopper_pearson_interval(int(h[mask].sum()), int(mask.sum()), confidence)
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
        precision, recall with bounds, tp/fp/fn/tn, too_small, note) and ``spearman`` /
        ``kendall`` of ``judge_score`` against ``human_score`` (or ``human_label`` when no score).
        A ``weight`` column (inverse inclusion probabilities of actively chosen labels) weights
        the agreement statistics.

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
        weights = None
        if "weight" in group:
            labelled = group["human_label"].notna() & group["judge_label"].notna()
            weights = group["weight"].where(labelled, 1.0).to_numpy(dtype=np.float64)
        row.update(agreement(group["judge_label"].to_numpy(), group["human_label"].to_numpy(), confidence,
                             weights=weights).as_row())
        human = group["human_score"] if "human_score" in group and group["human_score"].notna().any() else group["human_label"]
        corr = rank_correlation(group["judge_score"].to_numpy(), human.to_numpy())
        row.update(spearman=corr["spearman"], kendall=corr["kendall"])
        rows.append(row)
    return pd.DataFrame(rows)
