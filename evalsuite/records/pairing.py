"""Which requests of two systems are "the same request": the key records are paired by when
systems are compared request by request (:func:`evalsuite.compare_records` ``pair_by``).

- ``query_id``: the records' own ids (the default);
- ``question``: the question text (its SHA-256, shown with the question's start), for systems
  that asked the same questions under ids of their own;
- ``request_index``: the n-th request of each system, in file order (LLMPerf's request ids name
  the system, ``groq_70b-000``, so only their order pairs them).

A key given twice within one system (the same question asked twice) is numbered: the n-th
occurrence pairs with the n-th occurrence in the other system.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from ..errors import EvalSuiteError

__all__ = ["PAIR_BY", "request_keys"]

PAIR_BY = ("query_id", "question", "request_index")


def request_keys(frame: pd.DataFrame, by: str = "query_id") -> pd.Series:
    """The pairing key of every request (None where it has none).

    Parameters
    ----------
    frame : DataFrame
        Records (``Records.frame``) or a records report's per-request table: ``system``,
        ``query_id`` and, for ``by="question"``, ``question``; rows in file order.
    by : {"query_id", "question", "request_index"}

    Returns
    -------
    pandas.Series of str (or None), aligned with ``frame``.

    Raises
    ------
    EvalSuiteError
        An unknown ``by``; ``by="question"`` without a question column.

    Examples
    --------
    >>> frame = pd.DataFrame({"system": ["a", "a", "b", "b"], "query_id": ["a-0", "a-1", "b-0", "b-1"],
    ...                       "question": ["Why?", "How?", "How?", "Why?"]})
    >>> request_keys(frame, "request_index").tolist()
    ['#1', '#2', '#1', '#2']
    >>> keys = request_keys(frame, "question")
    >>> keys[0] == keys[3], keys[0] == keys[1]
    (True, False)
    """
    if by not in PAIR_BY:
        raise EvalSuiteError(f"requests pair by one of {', '.join(PAIR_BY)}", field="pair_by", value=by)
    if by == "query_id":
        return frame["query_id"].astype(object).where(frame["query_id"].notna(), None)
    if by == "request_index":
        return ("#" + (frame.groupby("system", sort=False).cumcount() + 1).astype(str)).astype(object)
    if "question" not in frame.columns:
        raise EvalSuiteError("these records have no question to pair by", field="pair_by", value=by)

    def key(text):
        if not isinstance(text, str):
            return None
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        start = " ".join(text.split())[:40]
        return f"{start} [{digest}]"

    keys = frame["question"].map(key)
    occurrence = keys.groupby([frame["system"], keys], sort=False).cumcount() + 1
    numbered = keys.where(occurrence == 1, keys + " (" + occurrence.astype(str) + ")")
    return numbered.astype(object).where(keys.notna(), None)
