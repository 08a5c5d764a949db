"""Which judge filled a column of the records, from their ``judge_provenance``: each judge writes
one entry per value it fills (the column, the judge's kind, its model), so a value a judge filled
is labelled as such ("filled by the embedding judge (...)") rather than as one the file gave."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["PROVENANCE", "filled_by", "provenance_summary", "merge_summaries", "filled_label"]

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
    return filled_label(provenance_summary(table, column, rows))


def provenance_summary(table: pa.Table, column: str, rows: np.ndarray) -> dict:
    """What :func:`filled_by` says of ``rows``, as parts that add up over several sets of records
    (the Dask engine's partitions, :func:`merge_summaries`): the judges seen, in order, and how
    many of the rows a judge named (0: the values are the file's own)."""
    none = {"seen": [], "named": 0, "rows": int(len(rows))}
    if PROVENANCE not in table.column_names or not len(rows):
        return none
    texts = table.column(PROVENANCE).take(pa.array(rows, pa.int64())).combine_chunks()
    if not pa.types.is_string(texts.type) and not pa.types.is_large_string(texts.type):
        return none
    # Entries are written with their keys in this order (Provenance.as_dict): column, judge, model.
    pattern = (f'"column": {re.escape(json.dumps(column))}, "judge": "(?P<judge>[^"]*)"'
               r'(?:, "model": "(?P<model>(?:[^"\\]|\\.)*)")?')
    found = pc.extract_regex(texts, pattern)
    named = found.is_valid().to_numpy(zero_copy_only=False)
    if not named.any():
        return none
    judges = found.filter(found.is_valid())
    kinds = judges.field("judge").to_pylist()
    models = judges.field("model").to_pylist()
    seen = list(dict.fromkeys((k, json.loads(f'"{m}"') if m else "") for k, m in zip(kinds, models) if k != "rule"))
    return {"seen": seen, "named": int(named.sum()), "rows": int(len(rows))}


def merge_summaries(summaries) -> dict | None:
    """The :func:`provenance_summary` of several sets of records together, in their order."""
    summaries = [s for s in summaries if s is not None]
    if not summaries:
        return None
    seen = list(dict.fromkeys(pair for s in summaries for pair in map(tuple, s["seen"])))
    return {"seen": seen, "named": sum(s["named"] for s in summaries), "rows": sum(s["rows"] for s in summaries)}


def filled_label(summary: dict | None) -> str | None:
    """:func:`filled_by`'s words for a :func:`provenance_summary` (None: the values are the file's own)."""
    if summary is None or not summary["named"]:
        return None
    if summary["seen"]:
        label = "filled by " + ", ".join(f"the {k} judge" + (f" ({m})" if m else "") for k, m in summary["seen"])
    else:
        label = "filled by rule (empty texts)"
    given = summary["rows"] - summary["named"]
    return label + (f"; {given} of {summary['rows']} values given in the file" if given else "")
