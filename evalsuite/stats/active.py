"""Which request to label next, and the estimate from labels chosen that way: active statistical
inference (Zrnic & Candes, "Active Statistical Inference", ICML 2024) with priority sampling, so
that every stopping point is a sample with known inclusion probabilities.

The idea: label where the judge is least certain, rely on the judge where it is confident, and
weight each human label by the inverse of the probability that its request was chosen. The
estimator of the mean human value over M requests with judge values ``f_i``,

    theta = (1 / M) * sum_i [ lam f_i + (y_i - lam f_i) xi_i / pi_i ],

(``xi_i`` = 1 when request i was labelled, ``pi_i`` its inclusion probability) is unbiased for any
inclusion probabilities, and its normal interval uses the variance of the M terms (the paper's
Theorem 1; ``lam = 1`` is its estimator, ``tuned=True`` picks ``lam`` in [0, 1] to minimise that
variance, the paper's power tuning).

How requests are chosen (:func:`labelling_order`): each request gets a weight ``w_i`` from the
judge's uncertainty, ``w_i = mix + (1 - mix) u_i / mean(u)`` with ``u_i = sqrt(f_i (1 - f_i))``
(the paper's optimal rule, ``pi(x)`` proportional to ``sqrt(E[(Y - f(X))^2 | X])``, for a score
read as a probability; mixed with the uniform rule so that no request is left almost unreachable,
as the paper recommends), and a seeded uniform ``U_i``; requests are proposed in increasing
``U_i / w_i``. This is priority sampling (Duffield, Lund & Thorup, JACM 2007): after the first k
requests of that order are labelled, the threshold ``tau = U / w`` of the next request makes
``pi_i = min(1, tau w_i)`` exact inclusion probabilities of a sample whose inverse-probability
estimates are unbiased, so the labeller may stop at any point (:func:`inclusion_probabilities`).
With every weight equal the order is a uniform random permutation: a simple random sample, for
which :func:`evalsuite.stats.ppi.ppi_mean` is the estimator.
"""

from __future__ import annotations

import math
import numbers
from typing import Sequence

import numpy as np

from ..errors import EvalSuiteError
from .intervals import (MIN_EVENTS, MIN_LABELS, MIN_LABELS_TUNED, Interval, _check_confidence, _count, _vector, _z,
                        share_interval)

__all__ = ["DEFAULT_MIX", "sampling_weights", "labelling_order", "inclusion_probabilities", "active_mean"]

#: Share of the uniform rule in the sampling weights: every request keeps at least 70% of the
#: uniform chance of being chosen. With 0.3 (narrowest on the synthetic, calibrated judges of
#: ``benchmarks/calibration_coverage.py``) the 95% interval covered RAGTruth's share of faithful
#: answers in only 87-91% of 300 resamplings at 40-150 labels (``benchmarks/label_savings.py``:
#: the lexical judge is sure and wrong on many answers, whose rare labels then carry weights of up to
#: 1 / 0.3 the uniform one); with 0.5, 92-94%; with 0.7, 96.7-97% and narrower intervals than 0.3.
DEFAULT_MIX = 0.7



def _unit_values(values: Sequence, name: str) -> np.ndarray:
    v = _vector(values, name)
    bad = np.isnan(v) | (v < 0) | (v > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise EvalSuiteError("a judge value must be a number in [0, 1]", field=f"{name}[{i}]", value=float(v[i]))
    return v


def sampling_weights(judge: Sequence, mix: float = DEFAULT_MIX) -> np.ndarray:
    """Relative chance of each request to be proposed for labelling.

    Parameters
    ----------
    judge : sequence of float in [0, 1], length M
        The judge's value per request (a score read as the probability of yes, or a share of
        yes verdicts).
    mix : float in [0, 1]
        Weight of the uniform rule (1: uniform sampling; 0: by uncertainty alone).

    Returns
    -------
    numpy.ndarray, shape (M,), float64
        ``mix + (1 - mix) * u / mean(u)`` with ``u = sqrt(f (1 - f))``; all 1 when the judge is
        certain everywhere (0/1 values: there is no uncertainty to use). Mean 1.

    Raises
    ------
    EvalSuiteError
        A value outside [0, 1] or missing; ``mix`` outside [0, 1].

    References
    ----------
    Zrnic, T. & Candes, E. J. (2024), "Active Statistical Inference", ICML (the uncertainty-based
    rule and its mixture with uniform sampling).

    Examples
    --------
    >>> sampling_weights([0.5, 1.0, 0.0, 0.5], mix=0.0).tolist()
    [2.0, 0.0, 0.0, 2.0]
    >>> sampling_weights([1, 0, 1], mix=0.3).tolist()  # a judge with no uncertainty: uniform
    [1.0, 1.0, 1.0]
    """
    f = _unit_values(judge, "judge")
    if isinstance(mix, bool) or not isinstance(mix, numbers.Real) or not 0 <= mix <= 1:
        raise EvalSuiteError("mix must be a number in [0, 1]", field="mix", value=mix)
    u = np.sqrt(f * (1 - f))
    if len(u) == 0 or u.mean() == 0:
        return np.ones(len(f))
    return mix + (1 - mix) * u / u.mean()


def labelling_order(weights: Sequence, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The order in which requests are proposed: priority sampling by ``U_i / w_i``.

    Parameters
    ----------
    weights : sequence of float >= 0, length M
        :func:`sampling_weights` (all 1 for uniform random order).
    seed : int >= 0
        Seed of ``numpy.random.default_rng``: the same seed and weights give the same order, in any
        session and for every labeller.

    Returns
    -------
    (order, keys) : (numpy.ndarray of int, numpy.ndarray of float), shape (M,)
        ``order``: request indices, first to propose first; ``keys``: ``U_i / w_i`` per request
        (infinite for a weight of 0: never proposed).

    Raises
    ------
    EvalSuiteError
        A negative or missing weight, a bad seed.

    References
    ----------
    Duffield, N., Lund, C. & Thorup, M. (2007), "Priority sampling for estimation of arbitrary
    subset sums", Journal of the ACM 54(6).

    Examples
    --------
    >>> order, keys = labelling_order([1, 1, 1, 1], seed=0)
    >>> sorted(order.tolist())
    [0, 1, 2, 3]
    >>> bool(np.all(np.diff(keys[order]) >= 0))
    True
    """
    w = _vector(weights, "weights")
    if np.isnan(w).any() or (w < 0).any():
        i = int(np.argmax(np.isnan(w) | (w < 0)))
        raise EvalSuiteError("a weight must be a number >= 0", field=f"weights[{i}]", value=float(w[i]))
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise EvalSuiteError("seed must be an integer >= 0", field="seed", value=seed)
    uniform = np.random.default_rng(int(seed)).random(len(w))
    with np.errstate(divide="ignore"):
        keys = np.where(w > 0, uniform / np.where(w > 0, w, 1.0), np.inf)
    return np.argsort(keys, kind="stable"), keys


def inclusion_probabilities(keys: Sequence, weights: Sequence, labelled: Sequence,
                            excluded: Sequence | None = None) -> np.ndarray:
    """Inclusion probabilities of the labelled requests under priority sampling.

    Parameters
    ----------
    keys, weights : sequences of float, length M
        From :func:`labelling_order` and :func:`sampling_weights`.
    labelled : sequence of bool, length M
        Requests with a human label.
    excluded : sequence of bool, length M, optional
        Requests taken out of the population (skipped by every labeller): they are neither
        labelled nor estimated.

    Returns
    -------
    numpy.ndarray, shape (M,)
        ``min(1, tau w_i)`` for each labelled request whose key is below ``tau``, the smallest key
        of a request neither labelled nor excluded (every labelled request when none is left:
        probability 1); NaN for the others. A request labelled out of the proposed order (its key
        above ``tau``) is left out of the sample (NaN): the estimate stays unbiased.

    Raises
    ------
    EvalSuiteError
        Arrays of different lengths.

    References
    ----------
    Duffield, Lund & Thorup (2007): with the threshold at the (k + 1)-th priority, the k sampled
    items' inverse-probability estimates are unbiased and uncorrelated.

    Examples
    --------
    >>> keys = np.array([0.1, 0.4, 0.2, 0.9])
    >>> inclusion_probabilities(keys, [1, 1, 1, 1], [True, False, True, False]).tolist()
    [0.4, nan, 0.4, nan]
    """
    k = np.asarray(keys, dtype=np.float64)  # infinite for a weight of 0
    w = _vector(weights, "weights")
    lab = np.asarray(labelled, dtype=bool)
    out_of = np.zeros(len(k), dtype=bool) if excluded is None else np.asarray(excluded, dtype=bool)
    if not (len(k) == len(w) == len(lab) == len(out_of)):
        raise EvalSuiteError("keys, weights, labelled and excluded need one value per request", field="labelled",
                             value=f"{len(k)}, {len(w)}, {len(lab)}, {len(out_of)}")
    rest = ~lab & ~out_of
    tau = float(k[rest].min()) if rest.any() else math.inf
    sampled = lab & ~out_of & (k < tau)
    with np.errstate(invalid="ignore"):
        pi = np.minimum(1.0, tau * w) if math.isfinite(tau) else np.ones(len(k))
    return np.where(sampled, pi, np.nan)


def active_mean(judge: Sequence, human: Sequence, inclusion: Sequence, confidence: float = 0.95,
                tuned: bool = False, fallback: bool = True) -> Interval:
    """Mean human value of M requests from the judge's values on all and human labels on a sample
    drawn with known inclusion probabilities (active statistical inference), inside [0, 1].

    Parameters
    ----------
    judge : sequence of float in [0, 1], length M
        The judge's value per request.
    human : sequence of float in [0, 1] or NaN, length M
        The human value where the request is in the sample (others are ignored).
    inclusion : sequence of float in (0, 1] or NaN, length M
        :func:`inclusion_probabilities`: the sample is where it is not NaN.
    confidence : float in (0, 1)
    tuned : bool
        Pick ``lam`` in [0, 1] minimising the variance (``-cov(a, b) / var(a)`` with
        ``a = f (1 - xi / pi)``, ``b = y xi / pi``), as the paper's power tuning; else ``lam = 1``.
    fallback : bool
        True (what the pages show): when the labels break the rule of
        :func:`evalsuite.stats.ppi.normal_approximation_problem` (too few labels, too few yes, no
        or disagreements among them), the weighted human-only interval is given instead
        (:func:`~evalsuite.stats.intervals.share_interval` with weights ``1 / pi``), with the reason
        in ``extra["note"]``.

    Returns
    -------
    Interval
        ``method`` ``"active"`` / ``"active++"`` (or ``"human only (...)"``), ``n`` labelled
        requests in the sample, ``n_unlabelled`` the others, estimate and ends clipped to [0, 1],
        ``extra``: ``lam``, ``se``, ``unclipped``.

    Raises
    ------
    EvalSuiteError
        Arrays of different lengths, values out of range, an inclusion probability not in (0, 1],
        a sampled request without a human value.

    References
    ----------
    Zrnic, T. & Candes, E. J. (2024), "Active Statistical Inference", ICML; Horvitz, D. G. &
    Thompson, D. J. (1952), "A generalization of sampling without replacement from a finite
    universe", JASA 47.

    Examples
    --------
    >>> f = [0.9, 0.5, 0.1, 0.5]
    >>> y = [float("nan"), 1.0, float("nan"), 0.0]
    >>> pi = [float("nan"), 0.5, float("nan"), 0.5]
    >>> iv = active_mean(f, y, pi, fallback=False)  # (0.9 + 0.5 + 0.1 + 0.5 + (1 - 0.5)/0.5 + (0 - 0.5)/0.5) / 4
    >>> round(iv.estimate, 4), iv.n, iv.n_unlabelled
    (0.5, 2, 2)
    """
    confidence = _check_confidence(confidence)
    f = _unit_values(judge, "judge")
    y = _vector(human, "human")
    pi = _vector(inclusion, "inclusion")
    if not (len(f) == len(y) == len(pi)):
        raise EvalSuiteError("judge, human and inclusion need one value per request", field="inclusion",
                             value=f"{len(f)}, {len(y)}, {len(pi)}")
    xi = ~np.isnan(pi)
    if ((pi[xi] <= 0) | (pi[xi] > 1)).any():
        raise EvalSuiteError("an inclusion probability must be in (0, 1]", field="inclusion")
    if np.isnan(y[xi]).any():
        i = int(np.flatnonzero(xi & np.isnan(y))[0])
        raise EvalSuiteError("a sampled request has no human value", field=f"human[{i}]", value=None, has_value=True)
    if ((y[xi] < 0) | (y[xi] > 1)).any():
        raise EvalSuiteError("a human value must be in [0, 1]", field="human")
    m, n = len(f), int(xi.sum())
    method = "active++" if tuned else "active"
    if n == 0 or m == 0:
        return Interval(math.nan, math.nan, math.nan, n, method, confidence, m - n, True)
    inverse = np.where(xi, 1.0 / np.where(xi, pi, 1.0), 0.0)
    b = np.where(xi, np.nan_to_num(y), 0.0) * inverse
    a = f * (1 - inverse)
    lam = 1.0
    if tuned:
        var_a = float(a.var())
        lam = min(max(-float(np.cov(a, b, ddof=0)[0, 1]) / var_a, 0.0), 1.0) if var_a > 0 else 0.0
    terms = lam * a + b
    theta = float(terms.mean())
    se = float(terms.std()) / math.sqrt(m)
    half = _z(confidence) * se
    raw = (theta, theta - half, theta + half)
    est, low, high = (min(max(x, 0.0), 1.0) for x in raw)
    extra = {"lam": lam, "se": se, "unclipped": raw}
    if fallback:
        ys, fs = y[xi], f[xi]
        need = MIN_LABELS_TUNED if tuned else MIN_LABELS
        yes, no, disagreements = float(ys.sum()), float(n - ys.sum()), float(np.abs(ys - fs).sum())
        problem = ""
        if n < need:
            problem = f"only {n} labelled requests: {'tuned ' if tuned else ''}active inference needs at least {need}"
        elif min(yes, no) < MIN_EVENTS:
            problem = f"only {_count(min(yes, no))} {'yes' if yes < no else 'no'} among {n} labelled requests: at least " \
                      f"{MIN_EVENTS} each of yes and no are needed"
        elif disagreements < MIN_EVENTS:
            problem = f"only {_count(disagreements)} disagreements between judge and people in {n}: at least {MIN_EVENTS} " \
                      "are needed"
        if problem:
            human_iv = share_interval(ys, confidence, weights=inverse[xi])
            return Interval(human_iv.estimate, human_iv.low, human_iv.high, n, f"human only ({human_iv.method})",
                            confidence, m - n, n < MIN_LABELS,
                            {**human_iv.extra, "note": problem, "normal": (est, low, high), "lam": lam})
    return Interval(est, low, high, n, method, confidence, m - n, n < MIN_LABELS, extra)
