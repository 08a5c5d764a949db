"""The result of :func:`evalsuite.io.latency_tables.read_latency_table` (its own module, so that the
isolated reader can send one back without importing the reader)."""

from __future__ import annotations

import pandas as pd

LATENCY_TABLE_COLUMNS = ("system", "stage", "unit", "n", "mean", "p50", "p90", "p95", "p99")


class LatencyTable:
    """Given latency percentiles of one file.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per system and stage: system, stage, unit (always ms), n (requests summarised,
        NaN when not given), mean, p50, p90, p95, p99 (NaN where the file gives none).
    tool : str
        Who wrote it: "evalsuite", "llmperf" or "locust".
    source : str
        The file name.
    warnings : list of str
    """

    def __init__(self, table: pd.DataFrame, tool: str, source: str, warnings=()) -> None:
        self.table = table.reset_index(drop=True)
        self.tool, self.source, self.warnings = tool, source, list(warnings)

    def __repr__(self) -> str:
        return f"LatencyTable(tool={self.tool!r}, rows={len(self.table)}, systems={self.systems})"

    def __len__(self) -> int:
        return len(self.table)

    @property
    def systems(self) -> list[str]:
        return self.table["system"].drop_duplicates().tolist()
