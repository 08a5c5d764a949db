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

import csv
import io
import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import EvalSuiteError

__all__ = ["JUDGEMENT_COLUMNS", "read_judgements", "join_human_labels", "judgements_from_records"]

JUDGEMENT_COLUMNS = ("query_id", "system", "judgement", "item", "judge", "judge_score", "judge_label",
                     "human_label", "human_score")


_KEYS = ("query_id", "system", "judgement", "item")


def _rows_of_file(path: str | Path | bytes, source: str | None, limit: int):
    """Rows of a CSV/TSV (header line) or JSONL file as ``(line number, dict of str/values)``."""
    if isinstance(path, (bytes, bytearray)):
        data, name = bytes(path), source or "<bytes>"
    else:
        p = Path(path)
        name = source or p.name
        size = p.stat().st_size
        if size > limit:
            raise EvalSuiteError(f"the file is larger than the {limit} bytes allowed", source=name, value=size)
        data = p.read_bytes()
    if len(data) > limit:
        raise EvalSuiteError(f"the file is larger than the {limit} bytes allowed", source=name, value=len(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise EvalSuiteError("the file is not UTF-8 text", source=name, line=line) from None
    first = text.lstrip()[:1]
    if first == "{":
        rows = []
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalSuiteError(f"not a JSON object: {exc.msg}", source=name, line=i) from None
            if not isinstance(obj, dict):
                raise EvalSuiteError("each line must be a JSON object", source=name, line=i, value=obj)
            rows.append((i, obj))
        return name, rows
    delimiter = "\t" if "\t" in text.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header:
        raise EvalSuiteError("the file is empty", source=name)
    header = [h.strip() for h in header]
    rows = []
    for values in reader:
        line = reader.line_num
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(values)}",
                                 source=name, line=line)
        rows.append((line, {h: v.strip() for h, v in zip(header, values)}))
    return name, rows


def _number(value, name: str, line: int, field_name: str, binary: bool) -> float:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "nan", "null", "none", "na")):
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if binary and low in ("true", "yes", "[[yes]]"):
            return 1.0
        if binary and low in ("false", "no", "[[no]]"):
            return 0.0
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
        ok = False
    else:
        ok = math.isfinite(x)
    if not ok or (binary and x not in (0.0, 1.0)):
        what = "a label must be 1/0, true/false or yes/no (empty = not labelled)" if binary else "expected a finite number"
        raise EvalSuiteError(what, source=name, line=line, field=field_name, value=value)
    return x


def _frame_from_rows(name: str, rows: list, required: Sequence[str]):
    import pandas as pd

    if not rows:
        raise EvalSuiteError("the file has no data rows", source=name)
    columns = set().union(*(r.keys() for _, r in rows))
    for col in required:
        if col not in columns:
            raise EvalSuiteError(f"a column {col!r} is required (columns found: {', '.join(sorted(columns))})",
                                 source=name, line=1, field=col)
    out: dict[str, list] = {"line": []}
    for col in JUDGEMENT_COLUMNS:
        if col in columns:
            out[col] = []
    for line, row in rows:
        out["line"].append(line)
        for col in out:
            if col == "line":
                continue
            value = row.get(col)
            if col in ("query_id", "system", "judgement", "judge"):
                if value is None or str(value).strip() == "":
                    if col in required:
                        raise EvalSuiteError("a value is required", source=name, line=line, field=col, value=value,
                                             has_value=True)
                    value = ""
                elif not isinstance(value, (str, int)) or isinstance(value, bool):
                    raise EvalSuiteError("expected a string id", source=name, line=line, field=col, value=value)
                out[col].append(str(value).strip())
            elif col == "item":
                x = _number(value if value not in (None, "") else 0, name, line, col, False)
                if math.isnan(x) or x < 0 or x != int(x):
                    raise EvalSuiteError("item must be an integer >= 0", source=name, line=line, field=col, value=value)
                out[col].append(int(x))
            else:
                out[col].append(_number(value, name, line, col, col.endswith("_label")))
    frame = pd.DataFrame(out)
    for col in ("system", "judgement", "judge"):
        if col not in frame:
            frame[col] = ""
    if "item" not in frame:
        frame["item"] = 0
    return frame


def _check_unique(frame, name: str, keys: Sequence[str]) -> None:
    dup = frame.duplicated(list(keys), keep="first")
    if dup.any():
        row = frame[dup].iloc[0]
        key = ", ".join(f"{k}={row[k]!r}" for k in keys)
        raise EvalSuiteError(f"this {key} appears twice", source=name, line=int(row["line"]), field=keys[0],
                             value=row[keys[0]])


def read_judgements(path: str | Path | bytes, source_name: str | None = None, max_bytes: int = 256 * 2**20):
    """Read a judgement table (CSV, TSV or JSONL; columns as in the module doc).

    Parameters
    ----------
    path : str, Path or bytes
        The file, or its bytes. A CSV/TSV has a header line; a JSONL file one object per line.
    source_name : str, optional
        Name used in error messages (default: the file's name).
    max_bytes : int
        Largest file accepted (default 256 MiB).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`JUDGEMENT_COLUMNS` present (``system``, ``judgement``, ``judge``
        default to ``""``, ``item`` to 0), plus ``line`` (the row's line in the file). Labels are
        float 1/0/NaN (``true``/``yes``/``[[Yes]]`` read as 1).

    Raises
    ------
    EvalSuiteError
        Naming file, line, field and value: ``query_id`` or both judge columns missing, a label
        that is not 0/1, a score that is not a number, a row repeated (same query_id, system,
        judgement, item and judge), a file too large or not UTF-8.

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
    name, rows = _rows_of_file(path, source_name, max_bytes)
    frame = _frame_from_rows(name, rows, ["query_id"])
    if "judge_label" not in frame and "judge_score" not in frame:
        raise EvalSuiteError("a judge_label or judge_score column is required", source=name, line=1, field="judge_label")
    if "judge_label" not in frame:
        frame["judge_label"] = np.where(np.isnan(frame["judge_score"]), np.nan, (frame["judge_score"] >= 0.5) * 1.0)
    if "judge_score" not in frame:
        frame["judge_score"] = frame["judge_label"]
    for col in ("human_label", "human_score"):
        if col not in frame:
            frame[col] = np.nan
    _check_unique(frame, name, [*_KEYS, "judge"])
    return frame


def join_human_labels(judgements, labels: str | Path | bytes, source_name: str | None = None,
                      max_bytes: int = 256 * 2**20):
    """Join a separate file of human labels onto a judgement table.

    Parameters
    ----------
    judgements : pandas.DataFrame
        A judgement table (:func:`read_judgements` or :func:`judgements_from_records`).
    labels : str, Path or bytes
        CSV, TSV or JSONL with ``query_id`` and ``human_label`` (and/or ``human_score``), and
        optionally ``system``, ``judgement`` and ``item`` (claim or chunk index): the key is the
        columns of these the file has. A label file without ``system`` labels a request for
        every system that answered it (useful when people judged the question's chunks once).
    source_name, max_bytes
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
        0/1, a score not a number, a key repeated in the label file.

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

    name, rows = _rows_of_file(labels, source_name, max_bytes)
    file_columns = set().union(*(r.keys() for _, r in rows)) if rows else set()
    lab = _frame_from_rows(name, rows, ["query_id"])
    if "human_label" not in lab and "human_score" not in lab:
        raise EvalSuiteError("a human_label or human_score column is required", source=name, line=1, field="human_label")
    keys = [k for k in _KEYS if k in file_columns]
    _check_unique(lab, name, keys)
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
            jv = _number(j, "records", r, field_name, True)
            hv = _number(h, "records", r, human_field, True)
            rows.append({"query_id": str(qid), "system": str(system), "judgement": judgement or field_name,
                         "item": i, "judge": judge, "judge_score": jv, "judge_label": jv, "human_label": hv,
                         "human_score": math.nan, "line": r})
    return pd.DataFrame(rows, columns=[*JUDGEMENT_COLUMNS, "line"])
