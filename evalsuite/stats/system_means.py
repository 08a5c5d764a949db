"""The system means of a judgement table: per judgement type and system, the judge-only, human-only
and prediction-powered intervals (:func:`system_intervals`), the difference of two systems for
Compare (:func:`difference_interval`), and a seeded labelling budget (:func:`labelled_subset`).

A request is the unit: its judge value is the mean of the judge's verdicts over its items (claims,
chunks), its human value the mean of the human labels over its labelled items. The intervals are
those of :mod:`~evalsuite.stats.ppi`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import EvalSuiteError
from .intervals import Interval
from .ppi import mean_intervals, ppi_mean_difference
from .sample_size import labels_for_width

__all__ = ["INTERVAL_COLUMNS", "labelled_subset", "system_intervals", "difference_interval"]


#: The columns of :func:`system_intervals`.
INTERVAL_COLUMNS = ["judgement", "system", "estimator", "estimate", "low", "high", "n", "n_unlabelled", "too_small",
                    "held_out", "method", "note", "labels_for_half_width", "labels_for_target"]


def labels_needed(iv: Interval, target_width: float | None) -> float:
    """:func:`~evalsuite.stats.sample_size.labels_for_width` as a table cell: NaN when there is
    nothing to plan from or no number of labels reaches the width."""
    if target_width is None or not target_width > 0 or math.isnan(iv.estimate) or not iv.width > 0:
        return math.nan
    try:
        found = labels_for_width(iv, target_width)
    except EvalSuiteError:
        return math.nan
    return math.nan if found is None else float(found)


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


def system_intervals(judgements, confidence: float = 0.95, tuned: bool = False, predictor: str = "label",
                     target_width: float | None = None):
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
    target_width : float, optional
        An interval width to plan for (``labels_for_target``).

    Returns
    -------
    pandas.DataFrame
        One row per (judgement, system, estimator) with ``estimator`` in ``judge only``,
        ``human only``, ``PPI``: ``estimate``, ``low``, ``high`` (all inside [0, 1]), ``n``
        (human-labelled requests; for ``judge only``, all judged requests), ``n_unlabelled``,
        ``too_small``; ``held_out`` (the human mean over every labelled request of the original
        table when :func:`labelled_subset` hid some; else NaN); ``method`` (how the interval was
        computed: ``ppi``, ``ppi++``, ``clopper-pearson``, ``human only (...)`` when PPI's normal
        interval could not be trusted ...), ``note`` (the degenerate input, in words),
        ``labels_for_half_width`` (human-labelled requests the interval would need to be half as
        wide, from its current variance: :func:`~evalsuite.stats.sample_size.labels_for_width`) and
        ``labels_for_target`` (the same for ``target_width``); NaN for judge only.

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
    >>> system_intervals(t)[["estimator", "estimate", "n", "n_unlabelled", "method"]].values.tolist()
    [['judge only', 0.75, 4, 0, 'clopper-pearson'], ['human only', 0.5, 2, 0, 'clopper-pearson'], ['PPI', 0.5, 2, 2, 'human only (clopper-pearson)']]
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
                             "held_out": float(held.get(system, math.nan)) if held is not None else math.nan,
                             "method": iv.method, "note": iv.note,
                             "labels_for_half_width": labels_needed(iv, iv.width / 2) if key != "judge" else math.nan,
                             "labels_for_target": labels_needed(iv, target_width) if key != "judge" else math.nan})
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


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
    >>> iv = difference_interval(t, "a", "b")  # 2 labelled pairs: too few for PPI, the human difference
    >>> round(iv.estimate, 4), iv.method, iv.n
    (0.5, 'human only paired', 2)
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
