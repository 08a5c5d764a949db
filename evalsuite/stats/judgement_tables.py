"""Judgement tables: what a judge said about each judged item, next to what a person said, read from a
CSV/JSON file (:func:`read_judgements`), built from judged records (:func:`judgements_from_records`)
or joined with a file of human labels (:func:`join_human_labels`).

A *judgement table* has one row per judged item (a claim, a chunk, an answer) of one request of
one system, with what a judge said and, where a person labelled it, what the person said:

=============== ======================================================================== 
column          meaning
=============== ========================================================================
``query_id``    request id (str)
``system``      the system that produced the request's output (str)
``judgement``   judgement type: ``claim_support``, ``context_relevance``, ... (str)
``item``        claim / chunk / statement index within the request, 0 when one per request
``judge``       which judge produced the verdict (str)
``judge_score`` the judge's score (float; NaN when it gives only a label)
``judge_label`` the judge's verdict: 1 positive, 0 negative (float; NaN = not judged)
``human_label`` a person's verdict: 1, 0, or NaN where no person labelled the item
``human_score`` optional graded human rating (a 1..5 utility score ...), for rank correlation
=============== ========================================================================

:mod:`~evalsuite.stats.agreement` and :mod:`~evalsuite.stats.ppi` work on these tables; nothing
here depends on a particular judge: any column of verdicts can be calibrated.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import EvalSuiteError
from ..io.judgement_files import JUDGEMENT_COLUMNS, label_value, read_judgement_table
from ..io.limits import ReadLimits, check_limits

__all__ = ["JUDGEMENT_COLUMNS", "read_judgements", "join_human_labels", "judgements_from_records"]

_KEYS = ("query_id", "system", "judgement", "item")


def _limits(limits: ReadLimits | None, max_bytes: int | None) -> ReadLimits:
    """``limits`` with ``max_bytes`` (the older keyword) applied when given."""
    limits = check_limits(limits)
    return limits if max_bytes is None else replace(limits, max_bytes=int(max_bytes))


def _frame(read) -> "pd.DataFrame":  # noqa: F821 (pandas is imported where a frame is made)
    """The data frame of a :class:`~evalsuite.io.judgement_files.JudgementTable`: the judgement
    columns of the file, ``system``, ``judgement`` and ``judge`` as "" and ``item`` as 0 when absent,
    and ``line``."""
    frame = read.table.to_pandas()
    for col in ("system", "judgement", "judge"):
        if col not in frame:
            frame[col] = ""
    if "item" not in frame:
        frame["item"] = 0
    return frame


def read_judgements(path: str | Path | bytes, source_name: str | None = None, max_bytes: int | None = None, *,
                    format: str | None = None, limits: ReadLimits | None = None, isolate: bool = False):
    """Read a judgement table (CSV, TSV, JSONL, JSON or Parquet, gzip too; columns as in the module doc).

    The file is read by the shared reader (:func:`evalsuite.io.judgement_files.read_judgement_table`):
    the same limits, id rule and messages as every other file, in the isolated reader pool with
    ``isolate=True`` (the dashboard reads uploads that way).

    Parameters
    ----------
    path : str, Path, bytes or binary file object
        The file, or its bytes. A CSV/TSV has a header line; a JSONL file one object per line.
    source_name : str, optional
        Name used in error messages (default: the file's name).
    max_bytes : int, optional
        Largest content accepted, after decompression (default: ``limits.max_bytes``, 2 GiB).
    format : {"csv", "tsv", "jsonl", "json", "parquet"} or None
        None: by extension, else by content.
    limits : ReadLimits, optional
        Rows, line length, columns, nesting, integer digits; a time or memory bound reads in a
        worker process.
    isolate : bool
        Read in a worker process of the reader pool.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`JUDGEMENT_COLUMNS` present (``system``, ``judgement``, ``judge``
        default to ``""``, ``item`` to 0), plus ``line`` (the row's line in the file). Labels are
        float 1/0/NaN (``true``/``yes``/``[[Yes]]`` read as 1; empty = not labelled).

    Raises
    ------
    EvalSuiteError
        Naming file, line, field and value: ``query_id`` or both judge columns missing, a label
        that is not 1/0, true/false, yes/no or empty (``nan``, ``maybe``), a score that is not a
        number, a row repeated (same query_id, system, judgement, item and judge), a file past
        ``limits`` or not UTF-8.

    References
    ----------
    The layout follows ARES's labelled TSV files (one row per query/passage/answer with
    ``[[Yes]]``/``[[No]]`` labels), made long so any judgement type fits.

    Examples
    --------
    >>> t = read_judgements(b"query_id,judge_label,human_label\\nq1,1,1\\nq2,0,\\n")
    >>> t[["query_id", "judge_label", "human_label", "line"]].to_dict("list")
    {'query_id': ['q1', 'q2'], 'judge_label': [1.0, 0.0], 'human_label': [1.0, nan], 'line': [2, 3]}
    """
    read = read_judgement_table(path, role="judgements", format=format, source_name=source_name,
                                limits=_limits(limits, max_bytes), isolate=isolate)
    frame = _frame(read)
    if "judge_label" not in frame:
        frame["judge_label"] = np.where(np.isnan(frame["judge_score"]), np.nan, (frame["judge_score"] >= 0.5) * 1.0)
    if "judge_score" not in frame:
        frame["judge_score"] = frame["judge_label"]
    for col in ("human_label", "human_score"):
        if col not in frame:
            frame[col] = np.nan
    return frame


def join_human_labels(judgements, labels: str | Path | bytes, source_name: str | None = None,
                      max_bytes: int | None = None, *, format: str | None = None, limits: ReadLimits | None = None,
                      isolate: bool = False):
    """Join a separate file of human labels onto a judgement table.

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table (:func:`read_judgements` or :func:`judgements_from_records`).
    labels : str, Path, bytes or binary file object
        CSV, TSV, JSONL, JSON or Parquet with ``query_id`` and ``human_label`` (and/or
        ``human_score``), and optionally ``system``, ``judgement`` and ``item`` (claim or chunk
        index): the key is the columns of these the file has. A label file without ``system``
        labels a request for every system that answered it (useful when people judged the
        question's chunks once).
    source_name, max_bytes, format, limits, isolate
        As in :func:`read_judgements`.

    Returns
    -------
    tuple (pandas.DataFrame, dict)
        The table with ``human_label`` / ``human_score`` filled from the file where it has a row
        (the file wins over a value already there), and counts: ``matched`` (label rows that
        found a judgement), ``unmatched`` (label rows that found none), ``first_unmatched_line``.

    Raises
    ------
    EvalSuiteError
        Naming file, line, field and value: ``query_id`` or both human columns missing, a label not
        1/0, true/false, yes/no or empty, a score not a number, a key repeated in the label file.

    References
    ----------
    ARES (Saad-Falcon et al., NAACL 2024) keeps its human preference-validation set in a separate
    labelled file; this join is the same idea by request id.

    Examples
    --------
    >>> t = read_judgements(b"query_id,item,judge_label\\nq1,0,1\\nq1,1,0\\nq2,0,1\\n")
    >>> joined, counts = join_human_labels(t, b"query_id,item,human_label\\nq1,1,yes\\nq9,0,no\\n")
    >>> joined["human_label"].tolist(), counts["matched"], counts["unmatched"]
    ([nan, 1.0, nan], 1, 1)
    """
    read = read_judgement_table(labels, role="labels", format=format, source_name=source_name,
                                limits=_limits(limits, max_bytes), isolate=isolate)
    file_columns = set(read.columns)
    lab = _frame(read)
    keys = [k for k in _KEYS if k in file_columns]
    values = [c for c in ("human_label", "human_score") if c in lab]
    right = lab[keys + values + ["line"]].rename(columns={"line": "_label_line", **{c: f"_new_{c}" for c in values}})
    left = judgements.copy()
    for k in keys:
        if k == "item":
            left[k] = left[k].astype(int)
            right[k] = right[k].astype(int)
        else:
            left[k] = left[k].astype(str)
    merged = left.merge(right, on=keys, how="left", validate="many_to_one")
    for c in values:
        new = merged.pop(f"_new_{c}")
        merged[c] = new.where(merged["_label_line"].notna(), merged[c] if c in merged else np.nan)
    used = set(merged["_label_line"].dropna().astype(int))
    merged = merged.drop(columns="_label_line")
    unmatched = sorted(set(lab["line"]) - used)
    for col in ("human_label", "human_score"):
        if col not in merged:
            merged[col] = np.nan
    return merged, {"matched": len(used), "unmatched": len(unmatched),
                    "first_unmatched_line": unmatched[0] if unmatched else None}


def judgements_from_records(records, field_name: str, human_field: str | None = None, judge: str = "",
                            judgement: str | None = None):
    """A judgement table from per-request records with a judge list field and a ``human_*`` field.

    Parameters
    ----------
    records : pandas.DataFrame or evalsuite.Records
        One row per request with ``query_id``, optionally ``system``, the judge's per-item list
        ``field_name`` (e.g. ``answer_claims_supported``) and the human list ``human_field``.
    field_name : str
        The judge's list column (bools or None per claim/chunk).
    human_field : str, optional
        The human list column, default ``"human_" + field_name``; lists of the same length.
    judge : str
        Judge name written in the ``judge`` column.
    judgement : str, optional
        Judgement type name (default ``field_name``).

    Returns
    -------
    pandas.DataFrame
        One row per item (``item`` = position in the list), columns of :data:`JUDGEMENT_COLUMNS`
        (``judge_score`` = ``judge_label``), plus ``line`` (the record's 1-based row).

    Raises
    ------
    EvalSuiteError
        A column missing, lists of different lengths, a label not bool/0/1/None (naming the row,
        field and value).

    References
    ----------
    The record schema, ``docs/records.md``.

    Examples
    --------
    >>> import pandas as pd
    >>> recs = pd.DataFrame({"query_id": ["q1"], "answer_claims_supported": [[True, None]],
    ...                      "human_answer_claims_supported": [[True, False]]})
    >>> judgements_from_records(recs, "answer_claims_supported")[["item", "judge_label", "human_label"]].values.tolist()
    [[0.0, 1.0, 1.0], [1.0, nan, 0.0]]
    """
    import pandas as pd

    frame = records if isinstance(records, pd.DataFrame) else records.frame  # evalsuite.Records
    human_field = human_field or f"human_{field_name}"
    for col in ("query_id", field_name, human_field):
        if col not in frame.columns:
            raise EvalSuiteError("the records have no such column", field=col, line=1)
    rows = []
    systems = frame["system"] if "system" in frame.columns else [""] * len(frame)
    for r, (qid, system, jl, hl) in enumerate(zip(frame["query_id"], systems, frame[field_name], frame[human_field]),
                                              start=1):
        jl = [] if jl is None or (isinstance(jl, float) and math.isnan(jl)) else list(jl)
        hl = [] if hl is None or (isinstance(hl, float) and math.isnan(hl)) else list(hl)
        if len(jl) != len(hl):
            raise EvalSuiteError(f"{field_name} has {len(jl)} items and {human_field} {len(hl)}", line=r,
                                 field=human_field, value=hl)
        for i, (j, h) in enumerate(zip(jl, hl)):
            jv = label_value(j, "records", r, field_name)
            hv = label_value(h, "records", r, human_field)
            rows.append({"query_id": str(qid), "system": str(system), "judgement": judgement or field_name,
                         "item": i, "judge": judge, "judge_score": jv, "judge_label": jv, "human_label": hv,
                         "human_score": math.nan, "line": r})
    return pd.DataFrame(rows, columns=[*JUDGEMENT_COLUMNS, "line"])
