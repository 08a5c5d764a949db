"""Intervals that stay inside the range of what they estimate: shares in [0, 1] (Clopper-Pearson,
or a Wilson score interval for per-request shares), Cohen's kappa in [-1, 1] (a Jeffreys posterior
interval), and the :class:`Interval` every calibration statistic returns.

Why these methods (``docs/calibration.md`` has the simulation table behind each choice):

- a normal (CLT) interval on a proportion near 0 or 1 has zero width when every label is the same
  (1.000 [1.000, 1.000] from 40 labels that are all 1) and runs outside [0, 1] otherwise; the
  Clopper-Pearson interval never does either, and its coverage is at least the nominal level for
  every n and every true share (Clopper & Pearson 1934; Brown, Cai & DasGupta 2001 compare the
  alternatives: Wilson is shorter but dips below nominal near the edges, 92.4% at n = 20 and
  p = 0.95 for a 95% interval);
- per-request *shares* (a request's value is the share of its claims people call supported) are
  not counts; for a variable in [0, 1] with mean ``mu`` the variance is at most ``mu (1 - mu)``
  (the Bernoulli case; Bhatia & Davis 2000), so the Wilson score interval on the sum of the shares
  is valid and conservative for them;
- labels drawn with unequal probabilities (active labelling) are weighted by the inverse of their
  inclusion probability; their share interval is Clopper-Pearson on Kish's effective sample size
  (Korn & Graubard 1998);
- the asymptotic interval of Cohen's kappa (Fleiss, Cohen & Everitt 1969) runs past 1 (1.269 on 7
  ARES examples) and has zero width when judge and people never disagree, so a kappa of 0.9 is
  covered by 64% of 95% intervals at n = 20; the equal-tailed interval of kappa's posterior
  under a Jeffreys Dirichlet(1/2, 1/2, 1/2, 1/2) prior on the four cells of the 2x2 table stays in
  [-1, 1] and keeps coverage from 30 labels on; below that its ends come from posteriors shifted
  the way Clopper-Pearson's are (Basu, Banerjee & Sen 2000 use Dirichlet priors on the cells for
  kappa).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import EvalSuiteError

__all__ = ["Interval", "MIN_LABELS", "MIN_LABELS_TUNED", "MIN_EVENTS", "KAPPA_DRAWS", "clopper_pearson_interval",
           "wilson_interval", "share_interval", "kappa_interval", "effective_size"]

#: Below this many human labels the normal approximation behind a PPI interval is poor: the page
#: shows the human-only interval in its place and says why (30, the usual CLT rule of thumb; with
#: this rule every interval in ``docs/calibration.md``'s simulation covers at 93.5% or more).
MIN_LABELS = 30
#: PPI++ tunes its lambda on the same labels, which costs coverage in small samples: below this
#: many labels its normal interval is not shown (the human-only interval stands in its place).
MIN_LABELS_TUNED = 100
#: A normal interval needs at least this many of each: human yes, human no, and disagreements
#: between judge and people (the n p >= 10 rule of the normal approximation to a binomial count;
#: with 2 judge errors in 50 labels the rectifier's variance is a guess).
MIN_EVENTS = 10
#: Posterior draws behind a kappa interval (seeded: the same table gives the same interval).
KAPPA_DRAWS = 20_000


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
        How the interval was computed (``"clopper-pearson"``, ``"wilson"``, ``"ppi"``, ``"ppi++"``,
        ``"jeffreys posterior"`` ...).
    confidence : float
        Confidence level.
    n_unlabelled : int
        PPI only: items with a judge verdict and no human label.
    too_small : bool
        True when ``n < MIN_LABELS``: the interval is shown but means little.
    extra : dict
        Method-specific values (``lam`` of PPI++, ``se``, ``note`` naming a degenerate input ...).
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

    @property
    def note(self) -> str:
        """What is degenerate about the input, in words ("" when nothing is)."""
        return str(self.extra.get("note", ""))


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


def _count(x: float) -> str:
    """A count as people read it: whole numbers as such, sums of shares to one decimal."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def _check_counts(successes: float, n: float) -> None:
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise EvalSuiteError("a count must be a finite number", field=name, value=value)
    if not 0 <= successes <= n:
        raise EvalSuiteError("need 0 <= successes <= n", field="successes", value=(successes, n))


def clopper_pearson_interval(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """Proportion ``successes / n`` with its Clopper-Pearson ("exact") interval.

    Parameters
    ----------
    successes, n : float
        Counts, ``0 <= successes <= n``; non-integer values (effective counts of weighted labels)
        use the same beta quantiles.
    confidence : float in (0, 1)
        Confidence level (default 0.95).

    Returns
    -------
    Interval
        ``method="clopper-pearson"``: ``low = Beta(a/2; x, n - x + 1)`` quantile (0 when ``x = 0``)
        and ``high = Beta(1 - a/2; x + 1, n - x)`` (1 when ``x = n``), ``a = 1 - confidence``; as
        ``scipy.stats.binomtest(...).proportion_ci(method="exact")`` and statsmodels'
        ``proportion_confint(method="beta")``. Never outside [0, 1], never of zero width; its
        coverage is at least ``confidence`` for every n and true proportion. All NaN when ``n == 0``.

    Raises
    ------
    EvalSuiteError
        Negative or non-finite counts, ``successes > n``, ``confidence`` outside (0, 1).

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934), "The use of confidence or fiducial limits illustrated in
    the case of the binomial", Biometrika 26; Brown, Cai & DasGupta (2001), "Interval estimation for
    a binomial proportion", Statistical Science 16.

    Examples
    --------
    >>> iv = clopper_pearson_interval(40, 40)  # every label 1: the interval still has a width
    >>> round(iv.estimate, 4), round(iv.low, 4), iv.high
    (1.0, 0.9119, 1.0)
    >>> iv = clopper_pearson_interval(8, 10)
    >>> round(iv.low, 4), round(iv.high, 4)
    (0.4439, 0.9748)
    """
    confidence = _check_confidence(confidence)
    _check_counts(successes, n)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "clopper-pearson", confidence, too_small=True)
    from scipy import stats

    alpha = 1 - confidence
    x, n = float(successes), float(n)
    low = float(stats.beta.ppf(alpha / 2, x, n - x + 1)) if x > 0 else 0.0
    high = float(stats.beta.ppf(1 - alpha / 2, x + 1, n - x)) if x < n else 1.0
    return Interval(x / n, low, high, int(round(n)), "clopper-pearson", confidence, too_small=n < MIN_LABELS)


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """Proportion ``successes / n`` with its Wilson score interval.

    Parameters
    ----------
    successes, n : float
        Counts, ``0 <= successes <= n`` (a sum of shares in [0, 1] is accepted: see
        :func:`share_interval`).
    confidence : float in (0, 1)
        Confidence level (default 0.95).

    Returns
    -------
    Interval
        ``method="wilson"``: the ``p`` with ``(p_hat - p)^2 <= z^2 p (1 - p) / n``, in closed form
        (the same bounds as ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``); inside
        [0, 1]; all NaN when ``n == 0``.

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
    _check_counts(successes, n)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "wilson", confidence, too_small=True)
    z = _z(confidence)
    p, n = successes / n, float(n)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0))
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly the edge there, not a rounding away
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(p, low, high, int(round(n)), "wilson", confidence, too_small=n < MIN_LABELS)


def effective_size(weights: Sequence) -> float:
    """Kish's effective sample size of weighted observations: ``(sum w)^2 / sum w^2``.

    Parameters
    ----------
    weights : sequence of float > 0
        One weight per observation (the inverse of its inclusion probability).

    Returns
    -------
    float
        ``n`` when all weights are equal, less when they differ; 0 for no weights.

    References
    ----------
    Kish, L. (1965), *Survey Sampling*, Wiley (the design effect of unequal weights).

    Examples
    --------
    >>> effective_size([1, 1, 1, 1]), round(effective_size([1, 1, 1, 5]), 4)
    (4.0, 2.2857)
    """
    w = _vector(weights, "weights")
    if len(w) == 0:
        return 0.0
    if np.isnan(w).any() or (w <= 0).any():
        i = int(np.argmax(np.isnan(w) | (w <= 0)))
        raise EvalSuiteError("a weight must be a number > 0", field=f"weights[{i}]", value=float(w[i]))
    return float(w.sum() ** 2 / (w * w).sum())


def share_interval(values: Sequence, confidence: float = 0.95, weights: Sequence | None = None) -> Interval:
    """Mean of values in [0, 1] (labels or per-request shares) with an interval inside [0, 1].

    Parameters
    ----------
    values : sequence of float in [0, 1] or None
        One value per request (a 0/1 label, or the share of a request's items labelled yes);
        None/NaN left out.
    confidence : float in (0, 1)
    weights : sequence of float > 0, optional
        Inverse inclusion probabilities when the requests were drawn with unequal probabilities
        (active labelling); same length as ``values``.

    Returns
    -------
    Interval
        Without weights: Clopper-Pearson on (number of 1s, n) when every value is 0 or 1
        (``method="clopper-pearson"``), else the Wilson score interval on (sum of values, n)
        (``method="wilson (shares)"``: for values in [0, 1] the variance is at most
        ``mean (1 - mean)``, the Bernoulli variance Wilson assumes, so it is conservative). With
        weights: the weighted (Hajek) mean, and the same intervals on Kish's effective sample size
        ``n_eff`` (``method`` ends in ``", effective n"``; Korn & Graubard 1998); ``extra["n_eff"]``.
        ``extra["note"]`` says when every value is the same. NaN when no value is given.

    Raises
    ------
    EvalSuiteError
        A value outside [0, 1] or not a number, weights of another length or not > 0.

    References
    ----------
    Clopper & Pearson (1934); Wilson (1927); Bhatia, R. & Davis, C. (2000), "A better bound on the
    variance", American Mathematical Monthly 107; Korn, E. L. & Graubard, B. I. (1998), "Confidence
    intervals for proportions with small expected number of positive counts estimated from survey
    data", Survey Methodology 24.

    Examples
    --------
    >>> iv = share_interval([1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    >>> iv.estimate, round(iv.low, 4), iv.high, iv.method, iv.note
    (1.0, 0.6915, 1.0, 'clopper-pearson', 'every value is 1')
    >>> iv = share_interval([1.0, 0.5, 0.75, 1.0])  # Wilson on 3.25 of 4: centre 0.6594, half 0.3132
    >>> round(iv.estimate, 4), round(iv.low, 4), round(iv.high, 4), iv.method
    (0.8125, 0.3463, 0.9726, 'wilson (shares)')
    """
    confidence = _check_confidence(confidence)
    v = _vector(values, "values")
    keep = ~np.isnan(v)
    bad = keep & ((v < 0) | (v > 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise EvalSuiteError("a share must be in [0, 1]", field=f"values[{i}]", value=float(v[i]))
    if weights is not None:
        w = _vector(weights, "weights")
        if len(w) != len(v):
            raise EvalSuiteError("one weight per value", field="weights", value=f"{len(w)} weights for {len(v)} values")
        w = w[keep]
    v = v[keep]
    n = len(v)
    binary = bool(np.all((v == 0) | (v == 1)))
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "clopper-pearson" if binary else "wilson (shares)",
                        confidence, too_small=True)
    note = f"every value is {v[0]:g}" if np.all(v == v[0]) else ""
    if weights is None:
        iv = clopper_pearson_interval(float(v.sum()), n, confidence) if binary else wilson_interval(float(v.sum()), n, confidence)
        method, extra, estimate = iv.method if binary else "wilson (shares)", {}, iv.estimate
    else:
        n_eff = effective_size(w)
        estimate = float((w * v).sum() / w.sum())
        x = min(max(estimate * n_eff, 0.0), n_eff)
        iv = clopper_pearson_interval(x, n_eff, confidence) if binary else wilson_interval(x, n_eff, confidence)
        method = ("clopper-pearson" if binary else "wilson (shares)") + ", effective n"
        extra = {"n_eff": n_eff}
    if note:
        extra["note"] = note
    return Interval(estimate, iv.low, iv.high, n, method, confidence, too_small=n < MIN_LABELS, extra=extra)


def _kappa_of_cells(cells: np.ndarray) -> np.ndarray:
    """Cohen's kappa of 2x2 cell probabilities ``(..., 4)`` ordered (h0 j0, h0 j1, h1 j0, h1 j1)."""
    p00, p01, p10, p11 = cells[..., 0], cells[..., 1], cells[..., 2], cells[..., 3]
    expected = (p00 + p01) * (p00 + p10) + (p10 + p11) * (p01 + p11)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p00 + p11 - expected) / (1 - expected)


def _kappa_draws(shape: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Kappa of ``draws`` Dirichlet(``shape``) cell probabilities (a shape of 0 keeps a cell at 0);
    draws where kappa is undefined (``p_e = 1``) are left out."""
    gammas = np.random.default_rng(seed).standard_gamma(shape, size=(int(draws), 4))
    total = gammas.sum(1, keepdims=True)
    kappa = _kappa_of_cells(gammas / np.where(total > 0, total, 1.0))
    kappa = kappa[np.isfinite(kappa)]
    return kappa if len(kappa) else np.array([np.nan])


def kappa_interval(confusion, confidence: float = 0.95, draws: int = KAPPA_DRAWS, seed: int = 0) -> Interval:
    """Cohen's kappa of a 2x2 table with an interval inside [-1, 1].

    Parameters
    ----------
    confusion : array-like, shape (2, 2)
        Counts (or effective counts of weighted items), rows = human label 0, 1, columns = judge
        verdict 0, 1.
    confidence : float in (0, 1)
    draws : int >= 1000
        Posterior draws (the default keeps the bounds within about 0.002 of their limit).
    seed : int
        Seed of ``numpy.random.default_rng``: the same table always gives the same interval.

    Returns
    -------
    Interval
        ``estimate``: the sample kappa ``(p_o - p_e) / (1 - p_e)`` (NaN when both sides gave one and
        the same label to everything, ``p_e = 1``); ``low``, ``high``: the equal-tailed
        ``confidence`` interval of kappa under the posterior Dirichlet(counts + 1/2) of the four
        cell probabilities (Jeffreys prior), widened to the estimate when it lies outside (a table
        without disagreement has kappa 1 and the posterior's upper quantile just below it),
        ``method="jeffreys posterior"``; ``extra["se"]``: the
        asymptotic standard error of Fleiss, Cohen & Everitt (1969), as statsmodels' ``cohens_kappa``
        (0 when undefined); ``extra["note"]`` names a degenerate table (all human labels equal, a
        judge that always says the same, no disagreement). NaN when the table is empty.

    Raises
    ------
    EvalSuiteError
        A table that is not 2x2 of counts >= 0.

    References
    ----------
    Cohen, J. (1960), Educational and Psychological Measurement 20; Fleiss, Cohen & Everitt (1969),
    Psychological Bulletin 72; Basu, S., Banerjee, M. & Sen, A. (2000), "Bayesian inference for kappa
    from single and multiple studies", Biometrics 56; Jeffreys, H. (1946), Proc. R. Soc. A 186.

    Examples
    --------
    >>> iv = kappa_interval([[10, 0], [0, 10]])  # perfect agreement on 20 items
    >>> iv.estimate, -1 <= iv.low < iv.high <= 1, iv.note
    (1.0, True, 'no disagreement')
    >>> round(kappa_interval([[1, 1], [1, 2]]).estimate, 4)  # p_o = 3/5, p_e = 0.52
    0.1667
    """
    confidence = _check_confidence(confidence)
    table = np.asarray(confusion, dtype=np.float64)
    if table.shape != (2, 2) or not np.all(np.isfinite(table)) or (table < 0).any():
        raise EvalSuiteError("a confusion matrix is 2x2 counts >= 0", field="confusion", value=table.tolist())
    if isinstance(draws, bool) or not isinstance(draws, numbers.Integral) or draws < 1000:
        raise EvalSuiteError("draws must be an integer >= 1000", field="draws", value=draws)
    nobs = float(table.sum())
    method = "jeffreys posterior"
    if nobs == 0:
        return Interval(math.nan, math.nan, math.nan, 0, method, confidence, too_small=True)
    cells = table.ravel()
    probs = cells / nobs
    row, col = probs.reshape(2, 2).sum(1), probs.reshape(2, 2).sum(0)
    p_e = float((row * col).sum())
    kappa = float(_kappa_of_cells(probs)) if p_e < 1 else math.nan
    se = 0.0
    if p_e < 1:
        p = probs.reshape(2, 2)
        term_a = (np.diag(p) * (1 - (row + col) * (1 - kappa)) ** 2).sum()
        term_b = p * (col[:, None] + row[None, :]) ** 2
        np.fill_diagonal(term_b, 0)
        term_b = (1 - kappa) ** 2 * term_b.sum()
        term_c = (kappa - p_e * (1 - kappa)) ** 2
        se = math.sqrt(max((term_a + term_b - term_c) / (1 - p_e) ** 2 / nobs, 0.0))
    alpha = 1 - confidence
    if nobs >= MIN_LABELS:
        posterior = _kappa_draws(cells + 0.5, draws, seed)
        low, high = (float(x) for x in np.quantile(posterior, [alpha / 2, 1 - alpha / 2]))
    else:
        # Few labels: bounds in the manner of Clopper-Pearson (whose ends are quantiles of Beta(x, n - x + 1)
        # and Beta(x + 1, n - x)): the lower end with one more disagreement in each off-diagonal cell, the
        # upper end with one more agreement in each diagonal cell and none added off it.
        method = "conservative posterior"
        low = float(np.quantile(_kappa_draws(cells + np.array([0.5, 1, 1, 0.5]), draws, seed), alpha / 2))
        high = float(np.quantile(_kappa_draws(cells + np.array([1, 0, 0, 1]), draws, seed + 1), 1 - alpha / 2))
    if not math.isnan(kappa):  # at the edge (no disagreement: 1) the equal-tailed interval stops short
        low, high = min(low, kappa), max(high, kappa)  # of the estimate; widen to it (as Brown, Cai & DasGupta's Jeffreys)
    notes = []
    if min(row) == 0:
        notes.append(f"every human label is {int(row.argmax())}")
    if min(col) == 0:
        notes.append(f"the judge always says {int(col.argmax())}")
    if probs[1] + probs[2] == 0 and not notes:
        notes.append("no disagreement")
    extra = {"se": se}
    if notes:
        extra["note"] = "; ".join(notes)
    return Interval(kappa, max(-1.0, low), min(1.0, high), int(round(nobs)), method, confidence,
                    too_small=nobs < MIN_LABELS, extra=extra)
