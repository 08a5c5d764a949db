"""Which judge filled a column of the records, from their ``judge_provenance``: each judge writes
one entry per value it fills (the column, the judge's kind, its model), so a value a judge filled
is labelled as such ("filled by the embedding judge (...)") rather than as one the file gave."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["PROVENANCE", "filled_by"]

#: The records' column of judge provenance (a JSON list per record; docs/judges.md).
PROVENANCE = "judge_provenance"


def filled_by(table: pa.Table, column: str, rows: np.ndarray) -> str | None:
    """How the records ``rows`` of ``table`` (those with a value of ``column``) got it, when a judge
    filled it: ``filled by the lexical judge (rouge_l, rouge-score 0.1.2)``; None when no record's
    provenance names the column (the values are the file's own).

    Parameters
    ----------
    table : pyarrow.Table
        Records, with ``judge_provenance`` when a judge ran on them.
    column : str
        The column (a metric given as a column: ``answer_similarity``, ``exact_match`` ...).
    rows : numpy.ndarray of int
        The records to describe (a system's records with a value).

    Returns
    -------
    str or None
        The judges (kind and model) that filled them, and how many values the file gave when a
        judge filled only some.

    Examples
    --------
    >>> entry = [{"column": "answer_similarity", "judge": "embedding", "model": "all-MiniLM-L6-v2"}]
    >>> table = pa.table({"judge_provenance": [json.dumps(entry), None]})
    >>> filled_by(table, "answer_similarity", np.array([0]))
    'filled by the embedding judge (all-MiniLM-L6-v2)'
    >>> filled_by(table, "answer_similarity", np.array([0, 1]))
    'filled by the embedding judge (all-MiniLM-L6-v2); 1 of 2 values given in the file'
    >>> filled_by(table, "exact_match", np.array([0])) is None
    True
    """
    if PROVENANCE not in table.column_names or not len(rows):
        return None
    texts = table.column(PROVENANCE).take(pa.array(rows, pa.int64())).combine_chunks()
    if not pa.types.is_string(texts.type) and not pa.types.is_large_string(texts.type):
        return None
    # Entries are written with their keys in this order (Provenance.as_dict): column, judge, model.
    pattern = (f'"column": {re.escape(json.dumps(column))}, "judge": "(?P<judge>[^"]*)"'
               r'(?:, "model": "(?P<model>(?:[^"\\]|\\.)*)")?')
    found = pc.extract_regex(texts, pattern)
    named = found.is_valid().to_numpy(zero_copy_only=False)
    if not named.any():
        return None
    judges = found.filter(found.is_valid())
    kinds = judges.field("judge").to_pylist()
    models = judges.field("model").to_pylist()
    seen = dict.fromkeys((k, json.loads(f'"{m}"') if m else "") for k, m in zip(kinds, models) if k != "rule")
    if seen:
        label = "filled by " + ", ".join(f"the {k} judge" + (f" ({m})" if m else "") for k, m in seen)
    else:
        label = "filled by rule (empty texts)"
    given = int((~named).sum())
    return label + (f"; {given} of {len(rows)} values given in the file" if given else "")
