"""Latency percentile tables: summaries of requests, not requests. Recognised and read as
:class:`LatencyTable` (given percentiles per system and stage), never as per-request records:

- EvalSuite's own (the Latency page's "Download CSV": system, stage, unit, n, mean, p50, p90,
  p95, p99);
- LLMPerf's summary (``token_benchmark_ray.py``'s ``*_summary.json``: one JSON object with
  ``results_<metric>_quantiles_p<q>`` and ``results_<metric>_mean`` in seconds);
- Locust's ``--csv`` statistics (``*_stats.csv``: Type, Name, Request Count, Average Response
  Time, 50%, 66%, ... 99%, in milliseconds).

A file with percentile columns *and* per-request fields (``query_id``, ``latency_ms`` ...) is
read as records by :func:`evalsuite.read_records`, which says so in its warnings
(:func:`percentile_columns`).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re

import pandas as pd

from ..errors import EvalSuiteError, reading_errors
from ._lines import csv_error, long_csv_fields
from ._reading import PathOrBuffer, _load, _shown_name, decode_or_explain, json_load
from ._latency_table import LATENCY_TABLE_COLUMNS, LatencyTable
from .limits import ReadLimits, check_columns, check_limits, check_rows, check_text, json_depth_error

__all__ = ["LatencyTable", "read_latency_table", "detect_latency_table", "percentile_columns", "LATENCY_TABLE_COLUMNS"]

_PERCENTILE = re.compile(r"^(p\d{1,2}(\.\d+)?|\d{1,2}(\.\d+)?%|(.*_)?quantiles_p\d{1,2}|p\(\d{1,2}(\.\d+)?\))$",
                         re.IGNORECASE)
_LLMPERF = re.compile(r"^results_(.+)_(s|ms)_(quantiles_p(\d+)|mean)$")
# LLMPerf metric -> stage, as EvalSuite's records name it (latency_<stage>_ms; end_to_end is latency_ms).
_LLMPERF_STAGES = {"end_to_end_latency": "end_to_end", "ttft": "ttft", "inter_token_latency": "inter_token"}


def percentile_columns(columns) -> list[str]:
    """The column names that are percentiles (``p50``, ``p99``, ``50%``, ``..._quantiles_p95``, k6's ``p(90)``).

    >>> percentile_columns(["system", "p50", "p99", "latency_ms", "90%"])
    ['p50', 'p99', '90%']
    """
    return [str(c) for c in columns if _PERCENTILE.match(str(c).strip())]


def detect_latency_table(data: bytes, name: str = "") -> str | None:
    """"evalsuite", "llmperf" or "locust" when the content is such a percentile table, else None.

    Only the first 64 KiB are looked at (the header; LLMPerf's summary is one small object).

    >>> detect_latency_table(b"system,stage,unit,n,mean,p50,p90,p95,p99\\nrag,end_to_end,ms,3,1.0,1.0,1.0,1.0,1.0\\n")
    'evalsuite'
    >>> detect_latency_table(b'{"query_id": "q1", "latency_ms": 5}\\n') is None
    True
    """
    head = bytes(data[:65536]).lstrip()
    if head[:1] == b"{":
        return "llmperf" if re.search(rb'"results_[a-z_]+_s_quantiles_p\d+"', head) else None
    first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
    names = [c.strip().strip('"') for c in first.split(",")]
    lowered = {c.lower() for c in names}
    if {"request count", "name"} <= lowered and len(percentile_columns(names)) >= 2:
        return "locust"
    if {"system", "stage"} <= lowered and len(percentile_columns(names)) >= 2 and not lowered & {
            "query_id", "latency_ms", "question", "answer"}:
        return "evalsuite"
    return None


def _float(value, source: str, line, field: str) -> float:
    if value is None or (isinstance(value, str) and value.strip() in ("", "N/A", "nan", "NaN")):
        return math.nan
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise EvalSuiteError("must be a number", source=source, line=line, field=field, value=value) from None
    if math.isinf(number) or number < 0:
        raise EvalSuiteError("a latency statistic must be a finite number >= 0", source=source, line=line,
                             field=field, value=value)
    return number


def _rows_of_csv(text: str, source: str, limits: ReadLimits) -> tuple[list[str], list[tuple[int, dict]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    with long_csv_fields():
        try:
            header = [h.strip() for h in next(reader, [])]
            check_columns(len(header), limits, source, line=1)
            rows = []
            for cells in reader:
                if not cells or all(not c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    raise EvalSuiteError(f"expected {len(header)} fields as in the header, found {len(cells)}", source=source,
                                         line=reader.line_num, field="columns")
                rows.append((reader.line_num, dict(zip(header, cells))))
                check_rows(len(rows), limits, source, "rows")
        except csv.Error as exc:
            raise csv_error(exc, source, max(reader.line_num, 1)) from None
    return header, rows


def _evalsuite(text: str, source: str, limits: ReadLimits) -> pd.DataFrame:
    header, rows = _rows_of_csv(text, source, limits)
    out = []
    for line, row in rows:
        unit = (row.get("unit") or "ms").strip().lower()
        scale = {"ms": 1.0, "s": 1000.0, "us": 0.001}.get(unit)
        if scale is None:
            raise EvalSuiteError("unit must be ms, s or us", source=source, line=line, field="unit", value=unit)
        out.append({"system": row["system"], "stage": row["stage"], "unit": "ms",
                    "n": _float(row.get("n"), source, line, "n"),
                    **{c: _float(row.get(c), source, line, c) * scale for c in ("mean", "p50", "p90", "p95", "p99")}})
    return pd.DataFrame(out, columns=list(LATENCY_TABLE_COLUMNS))


def _llmperf(text: str, source: str, system: str) -> pd.DataFrame:
    document = json_load(text, source)
    if not isinstance(document, dict):
        raise EvalSuiteError("an LLMPerf summary is one JSON object", source=source, field="json",
                             value=type(document).__name__)
    stats: dict[str, dict] = {}
    for key, value in document.items():
        match = _LLMPERF.match(key)
        if not match or match.group(1) not in _LLMPERF_STAGES:
            continue
        scale = 1000.0 if match.group(2) == "s" else 1.0
        column = "mean" if match.group(3) == "mean" else f"p{match.group(4)}"
        stats.setdefault(_LLMPERF_STAGES[match.group(1)], {})[column] = _float(value, source, None, key) * scale
    completed = document.get("results_num_completed_requests")
    n = _float(completed, source, None, "results_num_completed_requests") if completed is not None else math.nan
    rows = [{"system": system, "stage": stage, "unit": "ms", "n": n, **{c: values.get(c, math.nan) for c in
            ("mean", "p50", "p90", "p95", "p99")}} for stage, values in stats.items()]
    if not rows:
        raise EvalSuiteError("no results_<metric>_s_quantiles_p<q> keys: not an LLMPerf summary", source=source,
                             field="json")
    return pd.DataFrame(rows, columns=list(LATENCY_TABLE_COLUMNS))


def _locust(text: str, source: str, system: str, limits: ReadLimits) -> pd.DataFrame:
    header, rows = _rows_of_csv(text, source, limits)
    lookup = {h.lower(): h for h in header}
    out = []
    for line, row in rows:
        name = row[lookup["name"]].strip()
        kind = row.get(lookup.get("type", ""), "").strip()
        stage = "end_to_end" if name == "Aggregated" else f"{kind} {name}".strip()
        out.append({"system": system, "stage": stage, "unit": "ms",
                    "n": _float(row[lookup["request count"]], source, line, "Request Count"),
                    "mean": _float(row.get(lookup.get("average response time", ""), ""), source, line,
                                   "Average Response Time"),
                    **{f"p{q}": _float(row.get(lookup.get(f"{q}%", ""), ""), source, line, f"{q}%")
                       for q in (50, 90, 95, 99)}})
    return pd.DataFrame(out, columns=list(LATENCY_TABLE_COLUMNS))


def read_latency_table(path_or_buffer: PathOrBuffer, *, source_name: str | None = None, system: str | None = None,
                       limits: ReadLimits | None = None, isolate: bool = False) -> LatencyTable:
    """Read a latency percentile table (EvalSuite's, LLMPerf's summary, Locust's stats CSV).

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file (gzip detected and decompressed).
    source_name : str, optional
        Name to show in messages (defaults to the file name).
    system : str, optional
        System of a file that names none (LLMPerf, Locust); default the file name's stem, as
        the LLMPerf leaderboard names its files (``groq_70b.json``).
    limits : ReadLimits, optional
    isolate : bool
        Parse in a worker process with a time and memory cap (as the dashboard does).

    Returns
    -------
    LatencyTable
        Times in ms (LLMPerf's seconds converted); LLMPerf's stages ``end_to_end``, ``ttft`` and
        ``inter_token``, Locust's aggregated row ``end_to_end``.

    Raises
    ------
    EvalSuiteError
        Not a percentile table EvalSuite knows; a statistic that is not a number >= 0; a file
        past ``limits``.

    References
    ----------
    LLMPerf (ray-project/llmperf, ``token_benchmark_ray.py``: quantiles over the successful
    requests, numpy's linear interpolation); Locust's ``--csv`` stats file.

    Examples
    --------
    >>> table = read_latency_table(b"system,stage,unit,n,mean,p50,p90,p95,p99\\nrag,end_to_end,s,3,1.5,1,2,2.5,3\\n")
    >>> table.tool, table.table.loc[0, "unit"], [float(table.table.loc[0, c]) for c in ("p50", "p99")]
    ('evalsuite', 'ms', [1000.0, 3000.0])
    """
    if isolate or check_limits(limits).bounded:
        from .isolation import read_isolated

        return read_isolated("latency_table", path_or_buffer, source_name, limits=limits, system=system)
    limits = check_limits(limits)
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        inp = _load(path_or_buffer, source_name, limits)
        data = inp.data
        tool = detect_latency_table(data, inp.ext_name)
        if tool is None:
            raise EvalSuiteError("not a latency percentile table (EvalSuite's system, stage, p50 ... p99 columns, "
                                 "an LLMPerf summary, or a Locust stats CSV)", source=inp.name, field="format")
        check_text(data, limits, inp.name, lines=tool != "llmperf")
        error = json_depth_error(data, limits, inp.name, per_line=False) if tool == "llmperf" else None
        if error is not None:
            raise error
        text = decode_or_explain(data, inp.name)
        default = system or os.path.splitext(os.path.basename(inp.ext_name))[0] or "system"
        if tool == "evalsuite":
            table = _evalsuite(text, inp.name, limits)
        elif tool == "llmperf":
            table = _llmperf(text, inp.name, default)
        else:
            table = _locust(text, inp.name, default, limits)
        if table.empty:
            raise EvalSuiteError("the table has no rows", source=inp.name, field="rows")
        return LatencyTable(table, tool, inp.name)
