"""Prediction-powered means: a judge's verdicts on every request, corrected with the human labels of
a few (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science 382,
2023; with power tuning, Angelopoulos, Duchi & Zrnic, "PPI++", arXiv:2311.01453), computed in
closed form exactly as the authors' ``ppi-python`` package computes ``ppi_mean_ci``; next to the
classical mean of the labels alone. On plain vectors (:func:`ppi_mean`, :func:`classical_mean`,
:func:`mean_intervals`, :func:`ppi_mean_difference`) and per system of a judgement table
(:func:`system_intervals`, :func:`difference_interval`, :func:`labelled_subset`).
"""

from __future__ import annotations

import math
import numbers
from typing import Sequence

import numpy as np

from ..errors import EvalSuiteError
from .agreement import MIN_LABELS, Interval, _check_confidence, _vector, _z

__all__ = ["classical_mean", "ppi_mean", "mean_intervals", "ppi_mean_difference", "labelled_subset",
           "system_intervals", "difference_interval"]

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
    >>> from evalsuite.stats.judgement_tables import read_judgements
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
    >>> from evalsuite.stats.judgement_tables import read_judgements
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
    >>> from evalsuite.stats.judgement_tables import read_judgements
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
