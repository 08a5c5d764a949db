"""Per-request records: :class:`Records`, one validated Arrow table of the requests of one or more
systems, and how one is built from rows or a table (every value checked, then the cross-field
checks: one record per system and query id, one judgement per retrieved chunk, known failure
stages) or combined (:func:`concat_records`). Files are read by :mod:`evalsuite.io.record_files`;
the fields are in :mod:`~evalsuite.records.schema`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EvalSuiteError, not_unicode_error
from ..metrics.operational import FAILURE_STAGES
from .schema import _PER_CHUNK, _alias, field_kind
from .validation import RowError, _column_from_values, _fast_column, _first_row
from ..metrics.registry import EXPORT_NAMES
from .vendors import (
    _is_llmperf, _is_trulens, _llmperf_row, _phoenix_evaluations, _phoenix_row, _ragchecker_row, _trulens_feedbacks, _trulens_row,
)

__all__ = ["Records", "concat_records", "records_from_rows", "records_from_table", "finish_records", "map_columns",
           "require_record_fields", "mapping_name"]


class Records:
    """Per-request records of one or more systems, validated, in canonical fields.

    Attributes
    ----------
    table : pyarrow.Table
        One row per request: ``query_id``, ``system`` and every canonical field present, with
        Arrow types (lists as list arrays); ``relevant_ids`` is held as two list columns,
        ``relevant_ids`` and ``relevant_grades``; unknown columns kept as read.
    source : str or None
        File name(s) the records came from.
    warnings : list of str
        What the reader noticed (mapped or ignored columns ...).
    aliases : dict of str -> str
        Column names of the file that were mapped to canonical fields.
    extra_columns : list of str
        Columns that are not record fields, kept as read.
    score_columns : list of str
        Those of ``extra_columns`` that the tool that wrote the file declares as per-request
        scores (a DeepEval G-Eval metric, a TruLens feedback of the user's own): shown as given
        values when they are numbers in 0..1.

    Build one with :func:`read_records`, :meth:`from_rows` or :meth:`from_dataframe`; they
    validate every value and raise :class:`EvalSuiteError` naming the row, field and value.

    Examples
    --------
    >>> records = Records.from_rows([
    ...     {"query_id": "q1", "system": "rag", "contexts": ["c1", "c2"], "context_useful": [True, False]},
    ...     {"query_id": "q1", "system": "bm25", "latency_ms": 80}])
    >>> records  # 2 requests of 2 systems; fields with a value in any row
    Records(rows=2, systems=['rag', 'bm25'],
            fields=['query_id', 'system', 'contexts', 'context_useful', 'latency_ms'])
    >>> len(records.for_system("bm25"))
    1
    >>> ragas = Records.from_rows([{"user_input": "Why?", "response": "So.", "qid": "q7"}], system="ragas")
    >>> ragas.aliases  # RAGAS >= 0.2 column names mapped to the canonical fields
    {'user_input': 'question', 'response': 'answer', 'qid': 'query_id'}
    >>> Records.from_rows([{"query_id": "q1", "contexts": ["c1", "c2"], "context_useful": [True]}])
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: records, row 1, field 'context_useful', value [True]: has 1 entries but
    contexts has 2; one per retrieved chunk is needed
    """

    def __init__(self, table: pa.Table, *, source: str | None = None, warnings=(), aliases=None,
                 extra_columns=(), line_of=None, score_columns=()) -> None:
        self.table = table
        self.source = source
        self.warnings = list(warnings)
        self.aliases = dict(aliases or {})
        self.extra_columns = list(extra_columns)
        self.score_columns = [c for c in score_columns if c in self.extra_columns]
        self._line_of = line_of or (lambda row: None)
        self._frame: pd.DataFrame | None = None

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return f"Records(rows={len(self)}, systems={self.systems}, fields={self.fields})"

    @property
    def systems(self) -> list[str]:
        """Distinct systems, in order of first appearance."""
        return pd.unique(self.table.column("system").to_numpy(zero_copy_only=False)).tolist()

    @property
    def fields(self) -> list[str]:
        """Canonical fields with at least one non-null value (``relevant_grades`` not listed)."""
        out = []
        for name in self.table.column_names:
            if name in self.extra_columns or name == "relevant_grades":
                continue
            if self.table.column(name).null_count < self.table.num_rows:
                out.append(name)
        return out

    @property
    def frame(self) -> pd.DataFrame:
        """The records as a pandas DataFrame (list fields as Python lists); built once, on demand."""
        if self._frame is None:
            self._frame = self.table.to_pandas()
        return self._frame

    def for_system(self, system: str) -> "Records":
        """The records of one system."""
        mask = pc.equal(self.table.column("system"), system)
        return Records(self.table.filter(mask), source=self.source, warnings=self.warnings, aliases=self.aliases,
                       extra_columns=self.extra_columns, score_columns=self.score_columns)

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], *, source: str = "records", system: str | None = None,
                  failure_stages: Sequence[str] = FAILURE_STAGES) -> "Records":
        """Build records from dicts (field names canonical or aliased), validating every value."""
        try:
            return records_from_rows(list(rows), source, lambda row: row + 1, "item", system, failure_stages)
        except UnicodeEncodeError as exc:
            raise not_unicode_error(exc, source) from None

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, *, source: str = "data frame", system: str | None = None,
                       failure_stages: Sequence[str] = FAILURE_STAGES) -> "Records":
        """Build records from a DataFrame (one row per request), validating every value."""
        rows = frame.to_dict("records")
        for row in rows:
            for key, value in row.items():
                if isinstance(value, np.ndarray):
                    row[key] = value.tolist()
                elif isinstance(value, float) and math.isnan(value):
                    row[key] = None
        return records_from_rows(rows, source, lambda row: row + 1, "row", system, failure_stages)


def require_record_fields(mapping: dict, columns: Sequence[str], source: str) -> None:
    """A records file must name at least one record field; a TREC run or qrels file does not."""
    if mapping:
        return
    shown = ", ".join(map(str, list(columns)[:8]))
    looks_trec = 4 <= len(columns) <= 6 and any(str(c).strip().upper() == "Q0" or str(c).strip() == "0" for c in columns)
    hint = " - this looks like a TREC run or qrels file: load it as a run or as qrels" if looks_trec else ""
    if {"resourceSpans", "resource_spans"} & {str(c) for c in columns}:
        hint = " - this is an OpenTelemetry trace file (OTLP): read it with read_traces"
    raise EvalSuiteError(
        "no column is a per-request record field (query_id, system, question, answer, contexts, "
        f"answer_claims_supported, success, failure_stage, latency_ms ...; RAGAS, DeepEval and RAGChecker names too); "
        f"columns found: {shown}{hint}", source=source, line=1, field="header", value=shown)


def map_columns(columns: Sequence[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """Original column -> canonical field, the unknown (kept) columns, and warnings."""
    mapping: dict[str, str] = {}
    warnings: list[str] = []
    taken: dict[str, str] = {}
    for col in columns:
        key = str(col).strip()
        canonical = key if field_kind(key) else _alias(key)
        if canonical is None:
            continue
        if canonical in taken:
            warnings.append(f"columns {taken[canonical]!r} and {col!r} both map to {canonical!r}; {taken[canonical]!r} is used")
            continue
        taken[canonical] = col
        mapping[col] = canonical
    extra = [c for c in columns if c not in mapping]
    return mapping, extra, warnings



def _llmperf_row_at(index: int, row: dict) -> dict:
    return _llmperf_row(row, index)


def records_from_rows(rows: list, source: str, line_of, label: str, system: str | None,
                       failure_stages: Sequence[str]) -> Records:
    """The exact path: validate Python dicts value by value, then build the Arrow table."""
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise EvalSuiteError("each record must be an object with named fields", source=source, line=line_of(i),
                                 field=label, value=row, line_label="line" if label == "line" else "row")
    line_label = "line" if label == "line" else "row"

    def converted(make_row, field_of) -> list:
        """Every row through an export's converter; its ValueError names the row's line."""
        out = []
        for i, row in enumerate(rows):
            try:
                out.append(make_row(i, row))
            except ValueError as exc:
                field, value = field_of(exc, row)
                raise EvalSuiteError(str(exc), source=source, line=line_of(i), field=field, value=value,
                                     line_label=line_label) from None
        return out

    def first_word(exc, row):
        return str(exc).split(" ", 1)[0], None

    def keys_seen() -> dict:
        return dict.fromkeys(key for row in rows[:1000] for key in row)

    feedbacks: list[str] = []
    evaluations = _phoenix_evaluations(list(keys_seen()))
    if evaluations:
        rows = converted(lambda i, row: _phoenix_row(row, evaluations), first_word)
        feedbacks = [e for e in evaluations if e not in EXPORT_NAMES["phoenix"]]
    if rows and _is_trulens(keys_seen()):
        feedbacks = _trulens_feedbacks(keys_seen())
        rows = converted(lambda i, row: _trulens_row(row), lambda exc, row: ("latency", row.get("latency")))
    if rows and _is_llmperf(keys_seen()):
        rows = converted(_llmperf_row_at, first_word)
    mapped = []
    for i, row in enumerate(rows):
        if not any(key in row for key in ("retrieved_context", "retrieved2response", "retrieved2answer")):
            mapped.append(row)
            continue
        try:
            mapped.append(_ragchecker_row(row))
        except ValueError as exc:
            raise EvalSuiteError(f"not a RAGChecker record RAGChecker writes: {exc}", source=source, line=line_of(i),
                                 field=str(exc).split(" ", 1)[0], line_label=line_label) from None
    rows = mapped
    columns: list[str] = []
    seen = set()
    for row in rows:
        for key in row:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    mapping, extra, warnings = map_columns(columns)
    require_record_fields(mapping, columns, source)
    inverse = {canonical: original for original, canonical in mapping.items()}
    arrays: dict[str, pa.Array] = {}
    try:
        for canonical, original in inverse.items():
            values = [row.get(original) for row in rows]
            if canonical == "relevant_ids":
                arrays["relevant_ids"], arrays["relevant_grades"] = _column_from_values(values, "relevant", original)
            else:
                arrays[canonical] = _column_from_values(values, field_kind(canonical), original)
    except RowError as err:
        raise EvalSuiteError(err.reason, source=source, line=line_of(err.row), field=err.field_name, value=err.value,
                             line_label="line" if label == "line" else "row") from None
    for col in extra:
        try:
            arrays[col] = pa.array([row.get(col) for row in rows])
        except (pa.ArrowException, OverflowError):  # mixed types, or integers wider than 64 bits
            arrays[col] = pa.array([None if row.get(col) is None else json.dumps(row.get(col)) for row in rows], pa.string())
    records = finish_records(arrays, len(rows), source, line_of, warnings, mapping, extra, system, failure_stages,
                              "line" if label == "line" else "row")
    if feedbacks:
        records.score_columns = [c for c in feedbacks if c in records.extra_columns]
    return records


def finish_records(arrays: dict, n_rows: int, source: str, line_of, warnings: list, mapping: dict, extra: list,
                    system: str | None, failure_stages: Sequence[str], line_label: str = "line") -> Records:
    """Cross-field checks shared by both paths; fills in query_id and system when absent."""
    def fail(reason: str, row: int | None, field_name: str, value=None, has_value=None):
        raise EvalSuiteError(reason, source=source, line=None if row is None else line_of(row), field=field_name,
                             value=value, has_value=has_value, line_label=line_label)

    if n_rows == 0:
        fail("no records found", None, "records")
    if "query_id" not in arrays or arrays["query_id"].null_count == n_rows:
        arrays["query_id"] = pa.array([str(i + 1) for i in range(n_rows)], pa.string())
        warnings.append(f"no query_id field: requests numbered 1..{n_rows} in file order (pairing across files needs ids)")
    elif arrays["query_id"].null_count:
        row = _first_row(arrays["query_id"].is_null().to_numpy(zero_copy_only=False))
        fail("missing query_id", row, "query_id", None, has_value=False)
    default_system = system or (os.path.splitext(os.path.basename(source))[0] if source else "system")
    if "system" not in arrays:
        arrays["system"] = pa.array([default_system] * n_rows, pa.string())
    elif arrays["system"].null_count:
        arrays["system"] = pc.fill_null(arrays["system"], default_system)
        warnings.append(f"records without a system are assigned to {default_system!r}")
    # Per-chunk lists must have one entry per retrieved chunk.
    if "contexts" in arrays:
        n_ctx = pc.list_value_length(arrays["contexts"]).to_numpy(zero_copy_only=False)
        for name in _PER_CHUNK:
            if name not in arrays:
                continue
            n_items = pc.list_value_length(arrays[name]).to_numpy(zero_copy_only=False)
            both = ~np.isnan(n_ctx.astype(float)) & ~np.isnan(n_items.astype(float))
            clash = both & (np.nan_to_num(n_ctx.astype(float)) != np.nan_to_num(n_items.astype(float)))
            if clash.any():
                row = _first_row(clash)
                fail(f"has {int(n_items[row])} entries but contexts has {int(n_ctx[row])}; one per retrieved chunk is needed",
                     row, mapping_name(mapping, name), arrays[name][row].as_py())
    for name in ("context_ids", "relevant_ids"):
        if name in arrays:
            row = _row_with_repeated_item(arrays[name])
            if row is not None:
                fail("lists the same id twice; each id may appear once per request", row, mapping_name(mapping, name),
                     arrays[name][row].as_py())
    if "failure_stage" in arrays:
        allowed = {s.lower() for s in failure_stages}
        stages = arrays["failure_stage"]
        lowered = pc.utf8_lower(stages)
        known = pc.is_in(pc.utf8_trim_whitespace(lowered), value_set=pa.array(sorted(allowed))).to_numpy(zero_copy_only=False)
        bad = stages.is_valid().to_numpy(zero_copy_only=False) & ~known
        if bad.any():
            row = _first_row(bad)
            fail(f"unknown failure stage; allowed: {', '.join(failure_stages)} (or null when the request did not fail)",
                 row, mapping_name(mapping, "failure_stage"), stages[row].as_py())
    # One record per (system, query_id).
    keys = pd.DataFrame({"s": arrays["system"].to_pandas(), "q": arrays["query_id"].to_pandas()})
    dup = keys.duplicated(keep=False).to_numpy()
    if dup.any():
        # Confirmed on the Python strings (pandas' hashing and numpy string arrays can confuse
        # ids that differ only in trailing NULs): the first key seen twice, and its two rows.
        systems, queries = keys["s"].tolist(), keys["q"].tolist()
        seen: dict = {}
        for r in map(int, np.flatnonzero(dup)):
            key = (systems[r], queries[r])
            if key in seen:
                first, second = seen[key], r
                fail(f"query_id {queries[first]!r} appears twice for system {systems[first]!r} "
                     f"({line_label}s {line_of(first)} and {line_of(second)}); each request needs its own id", second,
                     "query_id", queries[first])
            seen[key] = r
    ordered = ["query_id", "system"] + [f for f in arrays if f not in ("query_id", "system")]
    table = pa.table({name: arrays[name] for name in ordered})
    return Records(table, source=source, warnings=warnings, aliases={k: v for k, v in mapping.items() if k != v},
                   extra_columns=extra, line_of=line_of)


def _row_with_repeated_item(lists: pa.Array) -> int | None:
    """First row whose list holds the same string twice (hash keys, confirmed on the strings)."""
    from ..utils.keys import group_keys, string_keys

    flat = pc.list_flatten(lists)
    if len(flat) < 2:
        return None
    parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    # Rows are grouped already, so the stable sort of (row, id) keys is nearly linear.
    packed = group_keys(parent, string_keys(flat), len(lists))
    ordered = np.sort(packed, kind="stable")
    clash = ordered[1:][ordered[1:] == ordered[:-1]]
    if clash.size == 0:
        return None
    for row in np.unique(parent[np.isin(packed, clash)]).tolist():
        items = lists[row].as_py()
        if len(set(items)) != len(items):
            return row
    return None


def mapping_name(mapping: dict, canonical: str) -> str:
    """The file's own name of a canonical field (for messages)."""
    for original, name in mapping.items():
        if name == canonical:
            return original
    return canonical


def records_from_table(table: pa.Table, source: str, line_of, line_label: str, system: str | None,
                        failure_stages: Sequence[str]) -> Records:
    """The fast path for typed tables (JSONL via pyarrow, Parquet); falls back per column."""
    mapping, extra, warnings = map_columns(table.column_names)
    require_record_fields(mapping, table.column_names, source)
    if any(c in table.column_names for c in ("retrieved_context", "retrieved2response")) or _is_trulens(table.column_names) \
            or _phoenix_evaluations(table.column_names):
        return None  # RAGChecker nesting, TruLens's app and latency columns: the row path maps them
    arrays: dict[str, pa.Array] = {}
    for original, canonical in mapping.items():
        column = table.column(original)
        kind = field_kind(canonical)
        try:
            if kind == "relevant":
                converted = None
                col = column.combine_chunks()
                if pa.types.is_list(col.type) and (pa.types.is_string(col.type.value_type) or pa.types.is_integer(col.type.value_type)):
                    converted = col.cast(pa.list_(pa.string()))
                    grades = pa.ListArray.from_arrays(
                        converted.offsets, pa.array(np.ones(len(pc.list_flatten(converted))), pa.float64()), mask=converted.is_null())
                    arrays["relevant_ids"], arrays["relevant_grades"] = converted, grades
                    continue
            else:
                converted = _fast_column(column, kind, original)
            if converted is None:
                values = column.to_pylist()
                if kind == "relevant":
                    arrays["relevant_ids"], arrays["relevant_grades"] = _column_from_values(values, kind, original)
                    continue
                converted = _column_from_values(values, kind, original)
        except RowError as err:
            raise EvalSuiteError(err.reason, source=source, line=line_of(err.row), field=err.field_name,
                                 value=err.value, line_label=line_label) from None
        arrays[canonical] = converted
    for col in extra:
        arrays[col] = table.column(col).combine_chunks()
    return finish_records(arrays, table.num_rows, source, line_of, warnings, mapping, extra, system, failure_stages,
                           line_label)



def _as_json_text(column: pa.ChunkedArray) -> pa.Array:
    """A kept, unused column as text: strings as they are, other values as JSON."""
    return pa.array([None if v is None else v if isinstance(v, str) else json.dumps(v, default=str)
                     for v in column.to_pylist()], pa.string())


def _common_types(parts: Sequence[Records]) -> list[pa.Table]:
    """The parts' tables with one type per column. A column the records do not use (kept from the
    file) that two files give different types - RAGChecker's claims are [subject, relation,
    object] triplets, another tool's are sentences - becomes text (JSON for non-strings) in every
    part; a field of the records with two types is an EvalSuiteError naming it and the files."""
    types: dict[str, set] = {}
    for part in parts:
        for field in part.table.schema:
            if not pa.types.is_null(field.type):
                types.setdefault(field.name, set()).add(field.type)
    clashing = []
    for name, found in types.items():
        if len(found) < 2:
            continue
        try:
            pa.unify_schemas([pa.schema([(name, t)]) for t in found], promote_options="permissive")
        except (pa.ArrowTypeError, pa.ArrowInvalid):
            clashing.append(name)
    tables = [p.table for p in parts]
    for name in clashing:
        if field_kind(name):
            raise EvalSuiteError("the files give this field different types: "
                                 + "; ".join(f"{p.source}: {p.table.schema.field(name).type}" for p in parts
                                             if name in p.table.column_names), field=name)
        tables = [t.set_column(t.column_names.index(name), name, _as_json_text(t.column(name)))
                  if name in t.column_names else t for t in tables]
    return tables


def concat_records(parts: Sequence[Records]) -> Records:
    """Several record sets (e.g. one uploaded file per system) as one; (system, query_id) stay unique.

    Parameters
    ----------
    parts : sequence of Records
        Record sets to stack, in order; a field missing from a part is null in its rows.

    Returns
    -------
    Records
        Every part's rows in order; ``source`` the parts' sources joined by ", "; warnings,
        aliases and extra columns of all parts.

    Raises
    ------
    EvalSuiteError
        No parts; a (system, query_id) pair in more than one part (give each file its own
        system name).

    Examples
    --------
    >>> bm25 = Records.from_rows([{"query_id": "q1", "latency_ms": 120}], source="bm25.jsonl", system="bm25")
    >>> dense = Records.from_rows([{"query_id": "q1", "latency_ms": 90}], source="dense.jsonl", system="dense")
    >>> both = concat_records([bm25, dense])
    >>> both.systems, len(both), both.source  # 1 + 1 rows
    (['bm25', 'dense'], 2, 'bm25.jsonl, dense.jsonl')
    >>> concat_records([bm25, bm25])
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: field 'query_id', value 'q1': system 'bm25' has query_id 'q1' in more than
    one file; give each file its own system name
    """
    parts = list(parts)
    if not parts:
        raise EvalSuiteError("no records to combine", field="records")
    table = pa.concat_tables(_common_types(parts), promote_options="permissive")
    combined = Records(table, source=", ".join(str(p.source) for p in parts),
                       warnings=[w for p in parts for w in p.warnings],
                       aliases={k: v for p in parts for k, v in p.aliases.items()},
                       extra_columns=sorted({c for p in parts for c in p.extra_columns}),
                       score_columns=sorted({c for p in parts for c in p.score_columns}))
    keys = pd.DataFrame({"s": table.column("system").to_pandas(), "q": table.column("query_id").to_pandas()})
    dup = keys.duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise EvalSuiteError(f"system {keys['s'].iloc[row]!r} has query_id {keys['q'].iloc[row]!r} in more than one file; "
                             "give each file its own system name", field="query_id", value=keys["q"].iloc[row])
    return combined
