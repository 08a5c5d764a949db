"""A labelling task's records and labels as statistics: the design (which record is proposed next,
with what inclusion probability), the judgement table the Calibration page reads, the estimate per
system (PPI for a uniform order, active statistical inference for an active one), and the
agreement between labellers.

Inputs are plain tables, so the same code serves the dashboard (labels from the workspace store) and
a script (labels from a file):

- ``judged``: one row per record, ``query_id``, ``system``, ``value`` (the judged metric's value
  for the record, in [0, 1]; NaN when the metric is undefined for it, e.g. an answer without
  claims: such records are left out);
- ``labels``: one row per record and labeller, ``query_id``, ``system``, ``labeller_id``,
  ``labeller``, ``label`` (1, 0, or NaN for a skip), ``labelled_at``.

A record's human label is the first label given to it (by time); more labellers' labels measure
their agreement (:func:`labeller_agreement`). A record every labeller skipped is out of the
population (neither labelled nor estimated); the page says how many.
"""

from __future__ import annotations

import numpy as np

from ..errors import EvalSuiteError
from .active import DEFAULT_MIX, active_mean, inclusion_probabilities, labelling_order, sampling_weights
from .agreement import agreement
from .intervals import share_interval
from .ppi import mean_intervals

__all__ = ["MODES", "design", "next_record", "judgement_table", "task_intervals", "labeller_agreement"]

MODES = ("active", "uniform")
_JUDGED = ("query_id", "system", "value")
_LABELS = ("query_id", "system", "labeller_id", "labeller", "label", "labelled_at")


def _check(frame, columns, name):
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise EvalSuiteError(f"the {name} table needs the columns {', '.join(columns)}", field=missing[0])


def design(judged, labels, mode: str, seed: int, mix: float = DEFAULT_MIX, labeller_id: str | None = None):
    """The records of a task in the order they are proposed, with what people said so far.

    Parameters
    ----------
    judged : pandas.DataFrame
        ``query_id``, ``system``, ``value`` (module doc); one row per record.
    labels : pandas.DataFrame
        ``query_id``, ``system``, ``labeller_id``, ``labeller``, ``label``, ``labelled_at``.
    mode : {"active", "uniform"}
        Active: weights from the judge's uncertainty (:func:`evalsuite.stats.active.sampling_weights`);
        uniform: every weight 1.
    seed : int
        The task's seed (:func:`evalsuite.stats.active.labelling_order`).
    mix : float
        Share of the uniform rule in the active weights.
    labeller_id : str, optional
        Whose labels ``mine`` shows.

    Returns
    -------
    pandas.DataFrame
        One row per record with a defined value, in proposal order: ``query_id``, ``system``,
        ``value``, ``weight``, ``key``, ``human_label`` (the first label given, NaN if none),
        ``labellers`` (how many answered), ``skipped`` (every answer was a skip), ``mine`` (the
        labeller's own answer: 1, 0, NaN for a skip; ``answered`` says whether they answered),
        ``inclusion`` (the record's inclusion probability when it is in the labelled sample, see
        :func:`evalsuite.stats.active.inclusion_probabilities`; NaN otherwise).

    Raises
    ------
    EvalSuiteError
        A missing column, a bad mode, a value outside [0, 1], a repeated record.

    References
    ----------
    Zrnic & Candes (2024), "Active Statistical Inference", ICML; Duffield, Lund & Thorup (2007), JACM.

    Examples
    --------
    >>> import pandas as pd
    >>> judged = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "system": "s", "value": [1.0, 0.5, 0.0]})
    >>> labels = pd.DataFrame({"query_id": ["q2"], "system": ["s"], "labeller_id": ["ann"], "labeller": ["Ann"],
    ...                        "label": [1.0], "labelled_at": [0.0]})
    >>> d = design(judged, labels, "uniform", seed=1)
    >>> sorted(d["query_id"]), int(d["human_label"].notna().sum())
    (['q1', 'q2', 'q3'], 1)
    """
    import pandas as pd

    _check(judged, _JUDGED, "judged")
    _check(labels, _LABELS, "labels")
    if mode not in MODES:
        raise EvalSuiteError(f"mode is one of {', '.join(MODES)}", field="mode", value=mode)
    records = judged[list(_JUDGED)].copy()
    records["query_id"] = records["query_id"].astype(str)
    records["system"] = records["system"].astype(str)
    if records.duplicated(["query_id", "system"]).any():
        row = records[records.duplicated(["query_id", "system"])].iloc[0]
        raise EvalSuiteError("a record appears twice", field="query_id", value=f"{row['query_id']} ({row['system']})")
    records = records[records["value"].notna()].reset_index(drop=True)
    values = records["value"].to_numpy(dtype=np.float64)
    weights = sampling_weights(values, mix) if mode == "active" else np.ones(len(values))
    _, keys = labelling_order(weights, seed)
    records["weight"], records["key"] = weights, keys
    given = labels.copy()
    given["query_id"] = given["query_id"].astype(str)
    given["system"] = given["system"].astype(str)
    given = given.sort_values(["labelled_at", "labeller_id"], kind="stable")
    answered = given[given["label"].notna()]
    first = answered.drop_duplicates(["query_id", "system"], keep="first").set_index(["query_id", "system"])["label"]
    counts = given.groupby(["query_id", "system"]).agg(labellers=("labeller_id", "nunique"),
                                                      answers=("label", "count"))
    index = pd.MultiIndex.from_frame(records[["query_id", "system"]])
    records["human_label"] = first.reindex(index).to_numpy(dtype=np.float64)
    records["labellers"] = counts["labellers"].reindex(index).fillna(0).astype(int).to_numpy()
    records["skipped"] = (records["labellers"] > 0) & (counts["answers"].reindex(index).fillna(0).to_numpy() == 0)
    mine = given[given["labeller_id"] == labeller_id].drop_duplicates(["query_id", "system"], keep="last")
    mine = mine.set_index(["query_id", "system"])["label"]
    records["answered"] = index.isin(mine.index)
    records["mine"] = mine.reindex(index).to_numpy(dtype=np.float64)
    records["inclusion"] = inclusion_probabilities(keys, weights, records["human_label"].notna().to_numpy(),
                                                   records["skipped"].to_numpy())
    return records.sort_values("key", kind="stable").reset_index(drop=True)


def next_record(plan):
    """The next record to propose to the labeller of ``plan`` (:func:`design` with ``labeller_id``):
    the first in proposal order that they have not answered, skipping records every labeller
    skipped; None when there is none.

    Examples
    --------
    >>> import pandas as pd
    >>> plan = pd.DataFrame({"query_id": ["q3", "q1"], "system": "s", "answered": [True, False], "skipped": False})
    >>> next_record(plan)["query_id"]
    'q1'
    """
    open_ = plan[~plan["answered"] & ~plan["skipped"]]
    return None if open_.empty else open_.iloc[0]


def judgement_table(plan, judgement: str, judge: str, threshold: float = 0.5):
    """The judgement table of a task (the Calibration page's input): one row per record.

    Parameters
    ----------
    plan : pandas.DataFrame
        :func:`design`.
    judgement, judge : str
        Names for the ``judgement`` and ``judge`` columns.
    threshold : float
        The judge says yes when the value is at least this (``judge_label``).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`evalsuite.stats.judgement_tables.JUDGEMENT_COLUMNS` (``item`` 0,
        ``judge_score`` the value, ``human_label`` only where the record is in the labelled
        sample) and ``weight`` (the inverse inclusion probability, 1 for a uniform order), for
        the records not skipped by everyone.

    Examples
    --------
    >>> import pandas as pd
    >>> plan = pd.DataFrame({"query_id": ["q1", "q2"], "system": "s", "value": [0.8, 0.2], "human_label": [1.0, None],
    ...                      "inclusion": [0.5, None], "skipped": False})
    >>> judgement_table(plan, "faithfulness", "j")[["judge_label", "human_label", "weight"]].values.tolist()
    [[1.0, 1.0, 2.0], [0.0, nan, 1.0]]
    """
    import pandas as pd

    kept = plan[~plan["skipped"]]
    sampled = kept["inclusion"].notna()
    return pd.DataFrame({
        "query_id": kept["query_id"].to_numpy(), "system": kept["system"].to_numpy(), "judgement": judgement,
        "item": 0, "judge": judge, "judge_score": kept["value"].to_numpy(dtype=np.float64),
        "judge_label": (kept["value"] >= threshold).astype(float).to_numpy(),
        "human_label": kept["human_label"].where(sampled).to_numpy(dtype=np.float64), "human_score": np.nan,
        "weight": np.where(sampled, 1.0 / kept["inclusion"].where(sampled, 1.0), 1.0)})


def task_intervals(plan, mode: str, confidence: float = 0.95, tuned: bool = False):
    """Per system of a task: judge only, human only and the prediction-powered (uniform order) or
    active (active order) interval, all inside [0, 1].

    Parameters
    ----------
    plan : pandas.DataFrame
        :func:`design`.
    mode : {"active", "uniform"}
        The task's mode.
    confidence : float in (0, 1)
    tuned : bool
        PPI++ / tuned active inference.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`evalsuite.stats.system_means.INTERVAL_COLUMNS` without ``judgement``
        and ``held_out`` (``estimator`` ``judge only``, ``human only``, ``PPI`` or ``active``), and
        ``interval`` (the :class:`~evalsuite.stats.intervals.Interval`, for planning with
        :func:`evalsuite.stats.sample_size.labels_for_width`). Active: each system is a domain of
        the task's sample; its estimate sums over its own records with the task's inclusion
        probabilities (Horvitz-Thompson), its human-only mean is weighted by them.

    Examples
    --------
    >>> import pandas as pd
    >>> judged = pd.DataFrame({"query_id": [f"q{i}" for i in range(6)], "system": "s", "value": [1.0] * 6})
    >>> labels = pd.DataFrame(columns=["query_id", "system", "labeller_id", "labeller", "label", "labelled_at"])
    >>> task_intervals(design(judged, labels, "uniform", 0), "uniform")[["estimator", "estimate", "n"]].values.tolist()
    [['judge only', 1.0, 6], ['human only', nan, 0], ['PPI', nan, 0]]
    """
    import pandas as pd

    if mode not in MODES:
        raise EvalSuiteError(f"mode is one of {', '.join(MODES)}", field="mode", value=mode)
    rows = []
    kept = plan[~plan["skipped"]]
    for system, part in kept.groupby("system", sort=True):
        sampled = part["inclusion"].notna().to_numpy()
        f = part["value"].to_numpy(dtype=np.float64)
        y = part["human_label"].to_numpy(dtype=np.float64)
        if mode == "uniform":
            m = mean_intervals(y[sampled], f[sampled], f[~sampled], confidence, tuned)
            found = (("judge only", m["judge"]), ("human only", m["human"]), ("PPI", m["ppi"]))
        else:
            pi = part["inclusion"].to_numpy(dtype=np.float64)
            weights = 1.0 / pi[sampled]
            found = (("judge only", share_interval(f, confidence)),
                     ("human only", share_interval(y[sampled], confidence, weights=weights)),
                     ("active", active_mean(f, np.where(sampled, y, np.nan), pi, confidence, tuned)))
        for estimator, iv in found:
            rows.append({"system": system, "estimator": estimator, "estimate": iv.estimate, "low": iv.low,
                         "high": iv.high, "n": iv.n, "n_unlabelled": iv.n_unlabelled,
                         "too_small": bool(iv.too_small) if estimator != "judge only" else False,
                         "method": iv.method, "note": iv.note, "interval": iv})
    return pd.DataFrame(rows, columns=["system", "estimator", "estimate", "low", "high", "n", "n_unlabelled",
                                       "too_small", "method", "note", "interval"])


def labeller_agreement(labels, confidence: float = 0.95):
    """Agreement between every two labellers on the records both answered yes or no.

    Parameters
    ----------
    labels : pandas.DataFrame
        ``query_id``, ``system``, ``labeller_id``, ``labeller``, ``label`` (NaN = skipped).
    confidence : float in (0, 1)

    Returns
    -------
    pandas.DataFrame
        One row per pair of labellers with at least one record in common: ``labeller_a``,
        ``labeller_b``, ``n`` (records both labelled), ``agreement`` (share with the same label),
        ``agreement_low`` / ``_high`` (Clopper-Pearson), ``kappa``, ``kappa_low`` / ``_high``
        (:func:`~evalsuite.stats.intervals.kappa_interval`), ``note``.

    Examples
    --------
    >>> import pandas as pd
    >>> labels = pd.DataFrame({"query_id": ["q1", "q2", "q1", "q2"], "system": "s",
    ...                        "labeller_id": ["a", "a", "b", "b"], "labeller": ["Ann", "Ann", "Bob", "Bob"],
    ...                        "label": [1, 0, 1, 1]})
    >>> labeller_agreement(labels)[["labeller_a", "labeller_b", "n", "agreement"]].values.tolist()
    [['Ann', 'Bob', 2, 0.5]]
    """
    import pandas as pd

    answered = labels[labels["label"].notna()].copy()
    answered["record"] = list(zip(answered["query_id"].astype(str), answered["system"].astype(str)))
    names = answered.drop_duplicates("labeller_id").set_index("labeller_id")["labeller"]
    by = {who: part.drop_duplicates("record", keep="last").set_index("record")["label"]
          for who, part in answered.groupby("labeller_id", sort=True)}
    rows = []
    ids = sorted(by)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            common = by[a].index.intersection(by[b].index)
            if len(common) == 0:
                continue
            result = agreement(by[b].loc[common].to_numpy(dtype=float), by[a].loc[common].to_numpy(dtype=float),
                               confidence)
            rows.append({"labeller_a": names[a], "labeller_b": names[b], "n": result.n,
                         "agreement": result.accuracy.estimate, "agreement_low": result.accuracy.low,
                         "agreement_high": result.accuracy.high, "kappa": result.kappa.estimate,
                         "kappa_low": result.kappa.low, "kappa_high": result.kappa.high, "note": result.note})
    columns = ["labeller_a", "labeller_b", "n", "agreement", "agreement_low", "agreement_high", "kappa", "kappa_low",
               "kappa_high", "note"]
    return pd.DataFrame(rows, columns=columns)
