"""Which records of a file have the fields each judged metric needs (:func:`coverage_of`): what the
Judge page, ``evalsuite ragas`` and :class:`~evalsuite.judges.ragas.RagasJudge` plan a run with.
What each metric needs (record fields, judge kinds) is its registry entry's ``needs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import EvalSuiteError
from ..metrics.judgement_lists import CRITIQUE_PREFIX
from ..metrics.registry import JUDGED_METRICS, METRICS

__all__ = ["JUDGED_METRICS", "coverage_of", "critique_column"]


def critique_column(name: str) -> str:
    """The record column of an aspect critique's votes: ``critique_<name>``.

    >>> critique_column("harmful")
    'critique_harmful'
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise EvalSuiteError("an aspect name must be letters, digits and _", field="aspect", value=name)
    return CRITIQUE_PREFIX + name


def coverage_of(records, metrics=JUDGED_METRICS) -> dict[str, dict[str, Any]]:
    """For each metric: the fields it needs, which are missing from the file, and how many
    records have them all (non-empty text; a list for contexts).

    Parameters
    ----------
    records : evalsuite.Records
    metrics : sequence of str

    Returns
    -------
    dict of metric -> {"fields": tuple, "missing_fields": list, "records_with_fields": int, "records": int}

    Examples
    --------
    >>> from evalsuite import Records
    >>> rows = [{"query_id": "q1", "question": "Who?", "answer": "Ada."}, {"query_id": "q2", "question": "When?"}]
    >>> info = coverage_of(Records.from_rows(rows), ["answer_relevancy", "faithfulness"])
    >>> info["answer_relevancy"]["records_with_fields"], info["faithfulness"]["missing_fields"]
    (1, ['contexts'])
    """
    table = records.table
    n = table.num_rows
    have: dict[str, np.ndarray] = {}
    for name in dict.fromkeys(f for m in metrics if m in JUDGED_METRICS for f in METRICS[m].needs.fields):
        if name not in table.column_names:
            have[name] = np.zeros(n, bool)
            continue
        values = table.column(name).to_pylist()
        have[name] = np.array([v is not None and (bool(v.strip()) if isinstance(v, str) else True) for v in values],
                              bool) if n else np.zeros(0, bool)
    out = {}
    for metric in metrics:
        if metric not in JUDGED_METRICS:
            raise EvalSuiteError(f"unknown metric; use {', '.join(JUDGED_METRICS)}", field="metrics", value=metric)
        fields = METRICS[metric].needs.fields
        ok = np.ones(n, bool)
        for f in fields:
            ok &= have[f]
        out[metric] = {"fields": fields, "missing_fields": [f for f in fields if not have[f].any()],
                       "records_with_fields": int(ok.sum()), "records": n, "judges": METRICS[metric].needs.judges}
    return out
