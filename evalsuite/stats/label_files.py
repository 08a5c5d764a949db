"""Human labels as files: the table a labelling task exports (CSV or JSONL) and the file it
imports, in the columns the Calibration page's human-label upload reads (``query_id``, ``system``,
``judgement``, ``item``, ``human_label``) plus who gave each label and when (``labeller``,
``labelled_at``), which that upload ignores.

Reading goes through the judgement-table reader (:mod:`~evalsuite.stats.judgement_tables`): the
same formats, the same limits and the same errors naming file, line, field and value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..errors import EvalSuiteError
from ..io.judgement_files import read_judgement_table
from . import judgement_tables

__all__ = ["LABEL_FILE_COLUMNS", "labels_table", "read_label_file", "to_jsonl"]

LABEL_FILE_COLUMNS = ("query_id", "system", "judgement", "item", "human_label", "labeller", "labelled_at")


def labels_table(labels, judgement: str, every_labeller: bool = False):
    """The labels of a task as a file's table.

    Parameters
    ----------
    labels : pandas.DataFrame
        ``query_id``, ``system``, ``labeller``, ``label`` (1, 0, NaN for a skip), ``labelled_at``
        (a datetime or seconds since the epoch).
    judgement : str
        The judged metric (the ``judgement`` column).
    every_labeller : bool
        False (default): one row per record, the first yes or no given to it (the label the
        Calibration page uses), so the file joins onto a judgement table without repeated keys;
        True: one row per record and labeller.

    Returns
    -------
    pandas.DataFrame
        :data:`LABEL_FILE_COLUMNS`; ``human_label`` 1 or 0 (skips are left out), ``labelled_at``
        as ISO 8601 UTC text, rows in the order the labels were given.

    Examples
    --------
    >>> import pandas as pd
    >>> labels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "system": "s", "labeller": ["Ann", "Bob", "Ann"],
    ...                        "label": [1, 0, None], "labelled_at": [0.0, 5.0, 9.0]})
    >>> labels_table(labels, "faithfulness")[["query_id", "human_label", "labeller", "labelled_at"]].values.tolist()
    [['q1', 1, 'Ann', '1970-01-01T00:00:00Z']]
    >>> len(labels_table(labels, "faithfulness", every_labeller=True))
    2
    """
    import pandas as pd

    given = labels[labels["label"].notna()].copy()
    at = pd.to_datetime(given["labelled_at"], unit="s", utc=True) if given["labelled_at"].dtype.kind in "fi" else \
        pd.to_datetime(given["labelled_at"], utc=True)
    given["labelled_at"] = at.dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    given["_order"] = at
    given = given.sort_values(["_order"], kind="stable")
    if not every_labeller:
        given = given.drop_duplicates(["query_id", "system"], keep="first")
    return pd.DataFrame({"query_id": given["query_id"].astype(str).to_numpy(),
                         "system": given["system"].astype(str).to_numpy(), "judgement": judgement, "item": 0,
                         "human_label": given["label"].astype(int).to_numpy(),
                         "labeller": given["labeller"].astype(str).to_numpy(),
                         "labelled_at": given["labelled_at"].to_numpy()}, columns=list(LABEL_FILE_COLUMNS))


def to_jsonl(table) -> bytes:
    """A table as JSON lines (one object per row, UTF-8, keys in column order).

    Examples
    --------
    >>> import pandas as pd
    >>> to_jsonl(pd.DataFrame({"query_id": ["q1"], "human_label": [1]}))
    b'{"query_id": "q1", "human_label": 1}\\n'
    """
    lines = []
    for row in table.to_dict("records"):
        clean = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in clean.items()}
        lines.append(json.dumps(clean, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def read_label_file(path: str | Path | bytes, source_name: str | None = None, max_bytes: int = 64 * 2**20):
    """Read a file of human labels (CSV, TSV or JSONL) for a labelling task's import.

    Parameters
    ----------
    path : str, Path or bytes
        The file or its bytes: ``query_id``, ``system`` and ``human_label`` (1/0, true/false,
        yes/no; empty = not labelled, left out), optionally ``judgement``, ``item`` (0: a label is
        about a whole record), ``labeller`` and ``labelled_at`` (kept for reference only: an
        imported label is dated when it is imported).
    source_name : str, optional
        Name used in error messages.
    max_bytes : int
        Largest file accepted.

    Returns
    -------
    pandas.DataFrame
        ``line``, ``query_id``, ``system``, ``judgement``, ``human_label`` (1.0 or 0.0) and
        ``labeller`` ("" when the file has none) of the labelled rows.

    Raises
    ------
    EvalSuiteError
        Naming file, line, field and value: a missing column, a label that is not 0/1, an item
        other than 0, the same record twice for the same labeller.

    Examples
    --------
    >>> t = read_label_file(b"query_id,system,human_label,labeller\\nq1,s,yes,Ann\\nq2,s,,Ann\\n")
    >>> t[["line", "query_id", "human_label", "labeller"]].values.tolist()
    [[2, 'q1', 1.0, 'Ann']]
    """
    read = read_judgement_table(path, role="labels", source_name=source_name,
                                limits=judgement_tables._limits(None, max_bytes))
    name = read.source
    if "system" not in read.table.column_names:
        raise EvalSuiteError("a system column is required: a label is about one system's record", source=name,
                             line=1, field="system")
    frame = judgement_tables._frame(read)
    if "human_label" not in frame:
        raise EvalSuiteError("a human_label column is required", source=name, line=1, field="human_label")
    bad_item = frame[frame["item"] != 0]
    if len(bad_item):
        row = bad_item.iloc[0]
        raise EvalSuiteError("a label is about a whole record: item must be 0 or left out", source=name,
                             line=int(row["line"]), field="item", value=int(row["item"]))
    frame["labeller"] = frame["labeller"].fillna("") if "labeller" in frame else ""
    frame = frame[frame["human_label"].notna()].reset_index(drop=True)
    dup = frame.duplicated(["query_id", "system", "labeller"], keep="first")
    if dup.any():
        row = frame[dup].iloc[0]
        raise EvalSuiteError("this record has a label from this labeller already", source=name, line=int(row["line"]),
                             field="query_id", value=row["query_id"])
    return frame[["line", "query_id", "system", "judgement", "human_label", "labeller"]]
