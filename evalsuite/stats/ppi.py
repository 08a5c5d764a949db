"""Prediction-powered means: a judge's verdicts on every request, corrected with the human labels of
a few (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science 382,
2023; with power tuning, Angelopoulos, Duchi & Zrnic, "PPI++", arXiv:2311.01453), computed in
closed form exactly as the authors' ``ppi-python`` package computes ``ppi_mean_ci`` and clipped to
the range of the mean; next to the classical mean of the labels alone. On plain vectors
(:func:`ppi_mean`, :func:`classical_mean`, :func:`mean_intervals`, :func:`ppi_mean_difference`);
per system of a judgement table in :mod:`~evalsuite.stats.system_means`. When the normal
approximation cannot be trusted (:func:`normal_approximation_problem`: too few labels, all labels
equal, no disagreement) the pages show the human-only interval in its place and say why.
"""

from __future__ import annotations

import math
import numbers
from typing import Sequence

import numpy as np

from ..errors import EvalSuiteError
from .intervals import (MIN_EVENTS, MIN_LABELS, MIN_LABELS_TUNED, Interval, _check_confidence, _count, _vector, _z,
                        share_interval)

__all__ = ["classical_mean", "ppi_mean", "normal_approximation_problem", "mean_intervals", "ppi_mean_difference"]


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
             tuned: bool = False, bounds: tuple[float, float] | None = (0.0, 1.0)) -> Interval:
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
    bounds : (float, float) or None
        The range of the mean (default [0, 1], a share): the estimate and both ends are clipped to
        it. Clipping an interval to a range the true mean lies in never makes it miss that mean,
        so coverage is kept; inside the range the values are ``ppi_py``'s. None: no clipping.

    Returns
    -------
    Interval
        ``method`` ``"ppi"`` or ``"ppi++"``, ``n``, ``n_unlabelled``, ``extra["lam"]``, ``extra["se"]``,
        ``extra["unclipped"]`` (estimate, low, high before clipping); ``too_small`` when
        ``n < MIN_LABELS``; NaN when ``n == 0`` or ``N == 0``. Variances are population variances
        (``ddof=0``) and ``lam`` is clipped to [0, 1], as in ``ppi_py``. This is the normal interval
        whatever the input: :func:`mean_intervals` checks first whether it can be trusted
        (:func:`normal_approximation_problem`).

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
    raw = (theta, theta - half, theta + half)
    if bounds is not None:
        theta, low, high = (min(max(x, bounds[0]), bounds[1]) for x in raw)
    else:
        low, high = raw[1], raw[2]
    return Interval(theta, low, high, n, method, confidence, big_n, n < MIN_LABELS,
                    {"lam": lam, "se": se, "unclipped": raw, "var_judge": float((lam * fu).var()),
                     "var_rectifier": float((y - lam * f).var())})


def normal_approximation_problem(human: Sequence, judge_labelled: Sequence, tuned: bool = False) -> str:
    """Why a prediction-powered (normal) interval cannot be trusted on these labels ("" when it can).

    The PPI interval is a normal approximation to the mean of the rectifier ``human - lam * judge``
    over the labelled requests. With few labels, few human yes (or no), or few disagreements
    between judge and people, that mean is a rare-event count and its estimated variance is a guess
    (zero when the judge never erred on the labels): the simulation in ``docs/calibration.md``
    finds 63% coverage for a nominal 95% with a 95%-accurate judge, 20 labels and a true share of
    0.03. The rule: at least :data:`~evalsuite.stats.intervals.MIN_LABELS` labelled requests
    (:data:`~evalsuite.stats.intervals.MIN_LABELS_TUNED` for PPI++, whose lambda is tuned on the
    same labels), and at least :data:`~evalsuite.stats.intervals.MIN_EVENTS` each of human yes,
    human no and disagreements (sums of per-request shares and of ``|human - judge|``).

    Parameters
    ----------
    human, judge_labelled : sequences of float in [0, 1], same length n
        The labelled requests' human values and the judge's values on them.
    tuned : bool
        PPI++ (tuned lambda) instead of PPI.

    Returns
    -------
    str
        The first rule broken, in words, or "".

    Raises
    ------
    EvalSuiteError
        Lengths differ or a value is not a number.

    References
    ----------
    The n p >= 10 rule for the normal approximation to a binomial count (e.g. Brown, Cai & DasGupta
    2001, who show it is a minimum, not a guarantee); Angelopoulos, Duchi & Zrnic (2023), PPI++.

    Examples
    --------
    >>> normal_approximation_problem([1] * 40, [1] * 40)
    'every labelled request is yes (40 of 40): at least 10 each of yes and no are needed'
    >>> normal_approximation_problem([1, 0] * 20, [1, 0] * 20)
    'the judge agrees with every human label (0 disagreements in 40): at least 10 are needed'
    >>> normal_approximation_problem([1, 0] * 20, [0, 1] * 20, tuned=True)
    'only 40 labelled requests: PPI++ needs at least 100'
    """
    y = _vector(human, "human")
    f = _vector(judge_labelled, "judge_labelled")
    if len(y) != len(f):
        raise EvalSuiteError("human and judge_labelled must have one value per labelled request each",
                             field="judge_labelled", value=f"{len(f)} values for {len(y)} human labels")
    n = len(y)
    need = MIN_LABELS_TUNED if tuned else MIN_LABELS
    if n < need:
        return f"only {n} labelled requests: {'PPI++' if tuned else 'PPI'} needs at least {need}"
    yes, no = float(y.sum()), float(n - y.sum())
    if min(yes, no) < MIN_EVENTS:
        if no == 0 or yes == 0:
            what = f"every labelled request is {'yes' if no == 0 else 'no'} ({n} of {n})"
        else:
            what = f"only {_count(min(yes, no))} {'yes' if yes < no else 'no'} among {n} labelled requests"
        return f"{what}: at least {MIN_EVENTS} each of yes and no are needed"
    disagreements = float(np.abs(y - f).sum())
    if disagreements < MIN_EVENTS:
        if disagreements == 0:
            return f"the judge agrees with every human label (0 disagreements in {n}): at least {MIN_EVENTS} are needed"
        return f"only {_count(disagreements)} disagreements between judge and people in {n}: at least {MIN_EVENTS} are needed"
    return ""


def _in_unit_range(*arrays: np.ndarray) -> bool:
    return all(bool(np.all((a >= 0) & (a <= 1))) for a in arrays)


def _mean_interval(values: np.ndarray, confidence: float) -> Interval:
    """:func:`share_interval` for values in [0, 1], else :func:`classical_mean`."""
    return share_interval(values, confidence) if _in_unit_range(values) else classical_mean(values, confidence)


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
        ``"judge"``: the judge's mean over all ``n + N`` requests, an interval for *the judge's*
        mean, which is biased for the human mean by however much the judge errs; ``"human"``: the
        mean of the ``n`` human values (valid, wide); both with
        :func:`~evalsuite.stats.intervals.share_interval` (Clopper-Pearson for 0/1 values, Wilson
        for shares; :func:`classical_mean` for values outside [0, 1]). ``"ppi"``: :func:`ppi_mean`
        clipped to [0, 1] (valid, narrower when the judge is good) when
        :func:`normal_approximation_problem` finds nothing wrong; otherwise the human-only interval
        in its place, ``method`` ``"human only (...)"``, the reason in ``extra["note"]`` and the
        normal interval it replaced in ``extra["normal"]``. NaN when every request is labelled
        (nothing for the judge to add) or none is.

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
    >>> {k: round(v.estimate, 4) for k, v in m.items()}  # 4 labels: PPI gives way to human only
    {'judge': 0.6667, 'human': 0.75, 'ppi': 0.75}
    >>> m["ppi"].method, m["ppi"].note
    ('human only (clopper-pearson)', 'only 4 labelled requests: PPI needs at least 30')
    """
    ppi = ppi_mean(human, judge_labelled, judge_unlabelled, confidence, tuned)
    y = _vector(human, "human")
    f = _vector(judge_labelled, "judge_labelled")
    fu = _vector(judge_unlabelled, "judge_unlabelled")
    judge = _mean_interval(np.concatenate([f, fu]), confidence)
    human_iv = _mean_interval(y, confidence)
    if not _in_unit_range(y, f, fu):
        ppi = ppi_mean(human, judge_labelled, judge_unlabelled, confidence, tuned, bounds=None)
    if len(y) and len(fu):
        problem = normal_approximation_problem(y, f, tuned)
        if problem:
            ppi = Interval(human_iv.estimate, human_iv.low, human_iv.high, human_iv.n, f"human only ({human_iv.method})",
                           confidence, len(fu), ppi.too_small,
                           {**human_iv.extra, "note": problem, "normal": (ppi.estimate, ppi.low, ppi.high),
                            "lam": ppi.extra.get("lam")})
    return {"judge": judge, "human": human_iv, "ppi": ppi}


def _mover_difference(ia: Interval, ib: Interval) -> tuple[float, float, float]:
    """``a - b`` with the MOVER interval of two independent intervals (Newcombe 1998, method 10;
    Zou & Donner 2008): for two symmetric normal intervals it is ``+- z sqrt(se_a^2 + se_b^2)``."""
    est = ia.estimate - ib.estimate
    low = est - math.sqrt((ia.estimate - ia.low) ** 2 + (ib.high - ib.estimate) ** 2)
    high = est + math.sqrt((ia.high - ia.estimate) ** 2 + (ib.estimate - ib.low) ** 2)
    return est, low, high


def _clip(values, low: float, high: float):
    return tuple(min(max(v, low), high) for v in values)


def ppi_mean_difference(a: tuple[Sequence, Sequence, Sequence], b: tuple[Sequence, Sequence, Sequence],
                        paired: bool = False, confidence: float = 0.95, tuned: bool = False,
                        fallback: bool = True) -> Interval:
    """Prediction-powered interval of the difference of two systems' means, ``a - b``, inside [-1, 1].

    Parameters
    ----------
    a, b : tuples ``(human, judge_labelled, judge_unlabelled)``
        Each system's arrays as in :func:`ppi_mean`, values in [0, 1].
    paired : bool
        True: the two systems answered the same requests in the same order and people labelled the
        same ones (a paired design); the estimator is :func:`ppi_mean` of the per-request
        differences (``human_a - human_b``, ``judge_a - judge_b``), valid and usually much narrower.
        False: the labelled sets are independent samples; the estimate is ``theta_a - theta_b`` with
        the MOVER interval of the two (for two normal intervals ``+- z sqrt(se_a^2 + se_b^2)``).
        When both systems' unlabelled requests are the same queries, the judge means are usually
        positively correlated, which makes this interval conservative (wider than needed).
    confidence, tuned
        As in :func:`ppi_mean`.
    fallback : bool
        True (what the pages show): when the normal approximation cannot be trusted
        (paired: :func:`normal_approximation_problem` of either system's labels, or fewer than
        :data:`~evalsuite.stats.intervals.MIN_EVENTS` disagreements in the differences;
        independent: of either system), the human-only difference is given instead (paired: the
        mean human difference with the Wilson interval of ``(d + 1) / 2``, whose variance is at most
        the Bernoulli one; independent: MOVER of the two human-only intervals), with the reason in
        ``extra["note"]``. False: always the normal interval.

    Returns
    -------
    Interval
        ``method`` ``"ppi paired"`` / ``"ppi independent"`` (``++`` when tuned) or ``"human only
        paired"`` / ``"human only independent"``; ``n`` (labelled pairs, or the smaller labelled
        count), ``too_small`` when ``n < MIN_LABELS``; estimate and ends clipped to [-1, 1].

    Raises
    ------
    EvalSuiteError
        Paired arrays of different lengths; bad values as in :func:`ppi_mean`.

    References
    ----------
    Angelopoulos et al., Science 2023; Saad-Falcon et al., ARES, NAACL 2024 (PPI intervals to rank
    RAG systems); Newcombe, R. G. (1998), "Interval estimation for the difference between independent
    proportions", Statistics in Medicine 17; Zou, G. Y. & Donner, A. (2008), "Construction of
    confidence limits about effect measures: a general approach", Statistics in Medicine 27.

    Examples
    --------
    >>> a = ([1, 1, 0, 1], [1, 1, 0, 1], [1, 1, 1, 0])
    >>> b = ([0, 1, 0, 0], [0, 1, 0, 1], [0, 1, 0, 0])
    >>> iv = ppi_mean_difference(a, b, paired=True, fallback=False)
    >>> round(iv.estimate, 4)  # 0.5 (judge) + 0.25 (rectifier)
    0.75
    >>> iv = ppi_mean_difference(a, b, paired=True)  # 4 pairs: the human differences (1, 0, 0, 1)
    >>> iv.estimate, iv.method
    (0.5, 'human only paired')
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
            arrays.append((va, vb))
        (ya, yb), (fa, fb), _ = arrays
        iv = ppi_mean(*(va - vb for va, vb in arrays), confidence=confidence, tuned=tuned, bounds=(-1.0, 1.0))
        problem = ""
        if fallback and len(ya) and len(arrays[2][0]) and _in_unit_range(ya, yb, fa, fb):
            problem = normal_approximation_problem(ya, fa, tuned) or normal_approximation_problem(yb, fb, tuned)
            disagreements = float(np.abs((ya - yb) - (fa - fb)).sum())
            if not problem and disagreements < MIN_EVENTS:
                problem = (f"only {_count(disagreements)} disagreements between the judge's and people's differences in "
                           f"{len(ya)} pairs: at least {MIN_EVENTS} are needed")
        if problem:
            d = (ya - yb + 1) / 2
            w = share_interval(d, confidence)
            est, low, high = (2 * x - 1 for x in (w.estimate, w.low, w.high))
            return Interval(est, low, high, iv.n, "human only paired", confidence, iv.n_unlabelled, iv.too_small,
                            {"note": problem, "normal": (iv.estimate, iv.low, iv.high)})
        return Interval(iv.estimate, iv.low, iv.high, iv.n, "ppi paired" + suffix, confidence, iv.n_unlabelled,
                        iv.too_small, iv.extra)
    if fallback:
        ma, mb = mean_intervals(*a, confidence=confidence, tuned=tuned), mean_intervals(*b, confidence=confidence, tuned=tuned)
        ia, ib = ma["ppi"], mb["ppi"]
        notes = [f"{name}: {iv.note}" for name, iv in (("a", ia), ("b", ib)) if iv.note]
    else:
        ia, ib = ppi_mean(*a, confidence=confidence, tuned=tuned), ppi_mean(*b, confidence=confidence, tuned=tuned)
        notes = []
    est, low, high = _clip(_mover_difference(ia, ib), -1.0, 1.0)
    se = math.sqrt(ia.extra.get("se", math.nan) ** 2 + ib.extra.get("se", math.nan) ** 2)
    n = min(ia.n, ib.n)
    method = ("human only independent" if notes else "ppi independent" + suffix)
    extra = {"se": se}
    if notes:
        extra["note"] = "; ".join(notes)
    return Interval(est, low, high, n, method, confidence, min(ia.n_unlabelled, ib.n_unlabelled), n < MIN_LABELS, extra)
