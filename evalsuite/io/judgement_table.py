"""What a judgement table is once read: :class:`JudgementTable` (the Arrow table, its source, its
role, warnings) and the columns it may have. The reader is :mod:`evalsuite.io.judgement_files`;
the isolated reader pool (:mod:`evalsuite.io.isolation`) sends and rebuilds this class."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

__all__ = ["JUDGEMENT_COLUMNS", "JudgementTable"]

JUDGEMENT_COLUMNS = ("query_id", "system", "judgement", "item", "judge", "judge_score", "judge_label",
                     "human_label", "human_score")


@dataclass
class JudgementTable:
    """What :func:`evalsuite.io.judgement_files.read_judgement_table` returns.

    Attributes
    ----------
    table : pyarrow.Table
        ``line`` (int64, the row's 1-based line; the row for Parquet, the item for JSON) and the
        columns of :data:`JUDGEMENT_COLUMNS` the file has: ids as strings, ``item`` int64, scores
        and labels float64 (null = missing; labels 1.0 / 0.0).
    source : str
        The file's name in messages.
    role : {"judgements", "labels"}
    warnings : list of str
        Columns not used, and the like.
    """

    table: pa.Table
    source: str
    role: str
    warnings: list[str] = field(default_factory=list)

    @property
    def columns(self) -> list[str]:
        """The judgement columns the file has."""
        return [c for c in self.table.column_names if c != "line"]
