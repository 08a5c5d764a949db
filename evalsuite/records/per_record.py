"""Per-request values of :func:`evalsuite.evaluate_records`: one loop over the registry's RAG
entries (each entry's inputs and per-request kernel), the ranking metrics from ``context_ids``
and ``relevant_ids``, the values a file gives itself, and what each system's values come from.

Some choices are made per system or for all the records at once (which inputs a metric uses,
whether a system's value of a metric is computed from its judgements or taken from the file,
whether a declared score column is used): they are made from a :class:`RecordsScope`, a small
summary of which columns have values in which systems' records. One machine takes the scope of
its records; the Dask engine (:mod:`evalsuite.evaluation.records_dask`) merges the scopes of every
shard first, so that each partition makes the choices the whole records would, and its values
are those of one machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..metrics.functions import kernel
from ..metrics.judgement_lists import CRITIQUE_PREFIX
from ..metrics.registry import DEFAULTS, GIVEN_NAMES, METRICS
from .judged_by import filled_label, provenance_summary
from .schema import _LATENCY_FIELD
from .table import Records

__all__ = ["RecordsScope", "survey_records", "merge_surveys", "conform_table"]


@dataclass(frozen=True)
class RecordsScope:
    """Which columns have values, overall and per system: what the per-system choices need.

    Attributes
    ----------
    columns : dict of str -> pyarrow.DataType
        Every column of the records, in order of first appearance (a part without one gets nulls).
    present : frozenset of str
        Columns with a value in at least one record.
    systems : tuple of str
        Systems in order of first appearance.
    valid : dict of str -> frozenset of str
        System -> columns with a value in at least one of its records.
    declared : dict of str -> dict
        Declared score column (``Records.score_columns``) -> ``numeric`` (bool), ``low``,
        ``high`` (over its non-NaN values, None when there are none) and ``systems`` (those
        with a non-NaN value).
    """

    columns: dict
    present: frozenset
    systems: tuple
    valid: dict
    declared: dict = field(default_factory=dict)


def _declared_column(table: pa.Table, name: str) -> pa.Array:
    """A declared score column as numbers where its cells are numbers (CSV cells are read as text)."""
    column = table.column(name).combine_chunks()
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        try:
            column = pc.cast(pc.if_else(pc.equal(pc.utf8_trim_whitespace(column), ""), None, column), pa.float64())
        except pa.ArrowInvalid:
            pass
    return column


def system_names(table):
    """The ``system`` column as strings (a table built by hand may give numbers or a dictionary;
    the readers give strings): the scope names systems as strings, so every part must too."""
    import pyarrow as pa

    column = table.column("system")
    return column if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) else column.cast(pa.string())


def survey_records(records: Records) -> dict[str, Any]:
    """What one part of the records contributes to the scope (small: no per-record data)."""
    table = records.table
    n = table.num_rows
    codes, uniques = pd.factorize(system_names(table).to_numpy(zero_copy_only=False), sort=False)
    systems = [str(s) for s in uniques.tolist()]
    valid: dict[str, set] = {s: set() for s in systems}
    present = []
    for name in table.column_names:
        nulls = table.column(name).null_count
        if nulls == n:
            continue
        present.append(name)
        if nulls == 0:
            hit = np.ones(len(systems), dtype=bool)
        else:
            mask = table.column(name).is_valid()
            mask = (mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask).to_numpy(zero_copy_only=False)
            hit = np.bincount(codes[mask], minlength=len(systems)) > 0
        for i in np.flatnonzero(hit).tolist():
            valid[systems[i]].add(name)
    declared = {}
    for name in records.score_columns:
        if name not in table.column_names:
            continue
        column = _declared_column(table, name)
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_null(column.type)
        info = {"numeric": numeric, "low": None, "high": None, "systems": set()}
        if numeric:
            values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
            defined = ~np.isnan(values)
            if defined.any():
                info["low"], info["high"] = float(values[defined].min()), float(values[defined].max())
                info["systems"] = {systems[i] for i in np.flatnonzero(np.bincount(codes[defined], minlength=len(systems)))}
        declared[name] = info
    return {"columns": {f.name: f.type for f in table.schema}, "present": present, "systems": systems,
            "valid": valid, "declared": declared}


def merge_surveys(surveys) -> RecordsScope:
    """The scope of all the parts together (in their order)."""
    columns: dict = {}
    present: set = set()
    systems: dict = {}
    valid: dict[str, set] = {}
    declared: dict[str, dict] = {}
    for survey in surveys:
        for name, typ in survey["columns"].items():
            if name not in columns or pa.types.is_null(columns[name]):
                columns[name] = typ
        present.update(survey["present"])
        for system in survey["systems"]:
            systems.setdefault(system, None)
            valid.setdefault(system, set()).update(survey["valid"][system])
        for name, info in survey["declared"].items():
            merged = declared.setdefault(name, {"numeric": True, "low": None, "high": None, "systems": set()})
            merged["numeric"] = merged["numeric"] and info["numeric"]
            if info["low"] is not None:
                merged["low"] = info["low"] if merged["low"] is None else min(merged["low"], info["low"])
                merged["high"] = info["high"] if merged["high"] is None else max(merged["high"], info["high"])
            merged["systems"] |= info["systems"]
    return RecordsScope(columns=columns, present=frozenset(present), systems=tuple(systems),
                        valid={s: frozenset(v) for s, v in valid.items()}, declared=declared)


def conform_table(table: pa.Table, scope: RecordsScope) -> pa.Table:
    """The table with every column of the scope (nulls where this part has none), as one machine
    holds the combined records (:func:`evalsuite.concat_records` fills a missing field with nulls)."""
    for name, typ in scope.columns.items():
        if name not in table.column_names:
            table = table.append_column(name, pa.nulls(table.num_rows, typ))
    return table

# The RAG metrics evaluate_records computes from judgement columns, in registry order. A metric
# whose one input is its own column (answer_similarity) is read as given: there is nothing to compute.
_JUDGED = tuple(m for m in METRICS.values() if m.kind in ("context", "answer") and m.inputs
                and m.columns != (m.name,))


def per_record_metrics(table: pa.Table, scope: RecordsScope, compat: str | None, k: int, rel_level: float,
                       warnings: list, given: list, sources: dict) -> dict[str, np.ndarray]:
    """Every metric the fields allow, one value per record (NaN = undefined).

    One loop over the registry's RAG entries: an entry whose input columns are present runs its
    per-request kernel on them (``critique_<name>``: once per such column). Metric values the
    file carries itself (:data:`~evalsuite.metrics.registry.GIVEN_NAMES`) are used as given for
    each system whose records have none of their judgement columns; their names are appended to
    ``given`` and each system's source is put in ``sources``.
    """
    present = scope.present
    out: dict[str, np.ndarray] = {}

    def has(name):
        return name in present
    for entry in _JUDGED:
        if entry.inputs[0].pattern:  # aspect critiques: one metric per critique_<name> column
            for name in sorted(c for c in present if c.startswith(CRITIQUE_PREFIX) and len(c) > len(CRITIQUE_PREFIX)):
                out[name] = _run_kernel(entry, {entry.inputs[0].argument: table.column(name)}, compat)
            continue
        chosen = entry.usable_inputs(present)
        if chosen is None:
            found = [i.column for i in entry.inputs if i.column in present]
            if found:
                warnings.append(f"{entry.name} needs {', '.join(i.column for i in entry.inputs if i.required)}; "
                                f"these records have only {', '.join(found)}")
            continue
        values = _run_kernel(entry, {i.argument: table.column(i.column) for i in chosen}, compat)
        if values is not None:
            out[entry.name] = _per_system_optional_inputs(entry, chosen, table, values, compat, sources, scope)
    if has("success"):
        out["success"] = _run_kernel(METRICS["success"], {"outcomes": table.column("success")}, compat)
    if has("context_ids") and has("relevant_ids"):
        out.update(_ranking_per_record(table, k, rel_level))
    _choose_sources(table, out, warnings, given, sources, scope)
    return out


def _per_system_optional_inputs(entry, chosen, table: pa.Table, values: np.ndarray, compat: str | None,
                                sources: dict, scope: RecordsScope) -> np.ndarray:
    """An entry with optional inputs (answer_correctness's similarity) uses them for a system only
    when that system's records have them: a system without them gets the metric without them (F1
    alone), not NaN because another loaded system has them. Which inputs each system's value used
    goes to ``sources[system]["inputs:" + metric]``."""
    optional = [i for i in chosen if not i.required]
    if not optional:
        return values
    systems = system_names(table).to_numpy(zero_copy_only=False)
    values = values.copy()
    for system in scope.systems:
        absent = [i for i in optional if i.column not in scope.valid[system]]
        used = [i for i in chosen if i not in absent]
        note = "; ".join([f"with {i.column}" for i in optional if i not in absent]
                         + [f"without {i.column}" for i in absent])
        sources.setdefault(system, {})["inputs:" + entry.name] = note
        rows = np.flatnonzero(systems == system) if absent else np.empty(0, dtype=np.int64)
        if rows.size:
            part = table.take(pa.array(rows))
            again = _run_kernel(entry, {i.argument: part.column(i.column) for i in used}, compat)
            values[rows] = np.nan if again is None else again
    return values


def _run_kernel(entry, columns: dict, compat: str | None) -> np.ndarray | None:
    """An entry's per-request kernel on record columns (its arguments -> Arrow arrays)."""
    columns = {a: c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for a, c in columns.items()}
    values = kernel(entry)(**columns, compat=compat, **entry.kernel_arguments)
    return None if values is None else np.asarray(values, dtype=np.float64)


def _choose_sources(table: pa.Table, out: dict, warnings: list, given: list, sources: dict,
                    scope: RecordsScope) -> None:
    """Per system and metric: computed from the judgement lists when that system's records have
    any, else the value its file gives (a RAGAS export's column). Decided for each system on its
    own rows, so what else is loaded never changes a system's values. Fills ``sources``
    (system -> metric -> "computed from the judgements" / "given in the file")."""
    n = table.num_rows
    systems = system_names(table).to_numpy(zero_copy_only=False)
    for system in scope.systems:
        sources.setdefault(system, {})
    critiques = [c for c in out if c.startswith(CRITIQUE_PREFIX)]
    for metric, inputs in (*((m.name, m.columns) for m in _JUDGED), *((c, (c,)) for c in critiques)):
        if metric in out:
            for system in scope.systems:  # a metric may come from one of several inputs (entities: two ways)
                if any(name in scope.valid[system] for name in inputs):
                    sources[system][metric] = "computed from the judgements"
    for metric in GIVEN_NAMES:
        if metric not in scope.present:
            continue
        values = table.column(metric).combine_chunks().cast(pa.float64()).to_numpy(zero_copy_only=False)
        merged = out.get(metric, np.full(n, np.nan)).copy()
        used = False
        for system in scope.systems:
            has_value = metric in scope.valid[system]
            if sources[system].get(metric) == "computed from the judgements":
                if has_value:
                    warnings.append(f"{system}: {metric} computed from its judgement lists; the file's own {metric} "
                                    "column is not used for this system")
                continue
            if has_value:
                rows = np.flatnonzero(systems == system)
                merged[rows] = values[rows]
                # Which judge filled them, if one did (judge_provenance): summed over the parts.
                local = rows[table.column(metric).combine_chunks().is_valid().to_numpy(zero_copy_only=False)[rows]]
                summary = provenance_summary(table, metric, local)
                sources[system]["provenance:" + metric] = summary
                sources[system][metric] = filled_label(summary) or "given in the file"
                used = True
        out[metric] = merged
        if used:
            given.append(metric)


def declared_scores(table: pa.Table, scope: RecordsScope, out: dict, warnings: list, given: list,
                    sources: dict) -> None:
    """Scores the exporting tool declares beyond the fields (``Records.score_columns``: a DeepEval
    G-Eval metric, a TruLens feedback of the user's own), used as given when they are numbers in
    0..1 (NaN = undefined); otherwise left unused, with a warning. Decided on the scope (all the
    records' values), so every part of the records decides alike."""
    for name, info in scope.declared.items():
        if name in out or name not in table.column_names:
            continue
        if not info["numeric"]:
            warnings.append(f"{name}: a score column that does not hold numbers; not used")
            continue
        if info["low"] is None:
            continue
        if info["low"] < 0 or info["high"] > 1:
            warnings.append(f"{name}: scores outside 0..1 ({info['low']:g} to {info['high']:g}); not used")
            continue
        out[name] = _declared_column(table, name).cast(pa.float64()).to_numpy(zero_copy_only=False)
        given.append(name)
        for system in scope.systems:
            if system in info["systems"]:
                sources.setdefault(system, {})[name] = "given in the file"


def _ranking_per_record(table: pa.Table, k: int, rel_level: float) -> dict[str, np.ndarray]:
    """Ranking metrics per record from context_ids (rank order) and relevant_ids, vectorised.

    Each record is its own query. Retrieved and relevant ids are matched within a record by a
    sort-merge on (record, hashed id) keys - both sides are grouped by record already, so the
    sort is cheap - and every match is confirmed on the strings. The metrics then come from the
    same kernel as :func:`evalsuite.evaluate`, so the conventions are identical.
    """
    from ..utils.keys import group_keys, string_keys
    from ..metrics.names import MetricSpec
    from ..utils.checks import group_positions
    from ..metrics.ranking_kernel import JudgedRanking, compute_metrics

    n = table.num_rows
    retrieved = table.column("context_ids").combine_chunks()
    relevant = table.column("relevant_ids").combine_chunks()
    grades_all = table.column("relevant_grades").combine_chunks()
    has_both = retrieved.is_valid().to_numpy(zero_copy_only=False) & relevant.is_valid().to_numpy(zero_copy_only=False)
    specs = [MetricSpec(f"{base}@{k}", base, k) for base in DEFAULTS["records"]]
    out = {spec.name: np.full(n, np.nan) for spec in specs}
    if not has_both.any():
        return out
    run_parent = pc.list_parent_indices(retrieved).to_numpy(zero_copy_only=False).astype(np.int64)
    rel_parent = pc.list_parent_indices(relevant).to_numpy(zero_copy_only=False).astype(np.int64)
    run_keep = np.flatnonzero(has_both[run_parent])
    rel_keep = np.flatnonzero(has_both[rel_parent])
    run_docs = pc.list_flatten(retrieved).take(pa.array(run_keep))
    rel_docs = pc.list_flatten(relevant).take(pa.array(rel_keep))
    run_parent, rel_parent = run_parent[run_keep], rel_parent[rel_keep]
    grades = pc.list_flatten(grades_all).take(pa.array(rel_keep)).to_numpy(zero_copy_only=False)

    run_keys = group_keys(run_parent, string_keys(run_docs), n)
    rel_keys = group_keys(rel_parent, string_keys(rel_docs), n)
    order = np.argsort(rel_keys, kind="stable")
    sorted_rel = rel_keys[order]
    row_grade = np.zeros(run_parent.size)
    row_judged = np.zeros(run_parent.size, dtype=bool)
    if sorted_rel.size:
        pos = np.minimum(np.searchsorted(sorted_rel, run_keys), sorted_rel.size - 1)
        hit = np.flatnonzero(sorted_rel[pos] == run_keys)
        match = order[pos[hit]]
        same = (rel_parent[match] == run_parent[hit]) & pc.equal(
            run_docs.take(pa.array(hit)), rel_docs.take(pa.array(match))).to_numpy(zero_copy_only=False)
        if not same.all() or (sorted_rel.size > 1 and bool(np.any(sorted_rel[1:] == sorted_rel[:-1]))):
            # A 40-bit key collision inside one record (odds about 2**-40): match those exactly.
            return _ranking_per_record_exact(table, k, rel_level, has_both, out, specs)
        row_grade[hit] = grades[match]
        row_judged[hit] = True
    rel_order = np.lexsort((-grades, rel_parent))
    judged = JudgedRanking(
        n_queries=n,
        row_query=run_parent,
        row_rank=group_positions(run_parent),
        row_grade=row_grade,
        row_judged=row_judged,
        n_retrieved=np.bincount(run_parent, minlength=n),
        judged_query=rel_parent[rel_order],
        judged_grade=grades[rel_order],
    )
    values = compute_metrics(judged, specs, rel_level)
    for spec in specs:
        out[spec.name][has_both] = values[spec.name][has_both]
    return out


def _ranking_per_record_exact(table, k, rel_level, has_both, out, specs) -> dict[str, np.ndarray]:
    """The list API on each record with both lists: the exact path after a hash collision."""
    from ..metrics.ranking_kernel import compute_metrics
    from ..metrics.ranking import judged_ranking_from_lists

    rows = np.flatnonzero(has_both)
    retrieved = table.column("context_ids").combine_chunks().take(pa.array(rows)).to_pylist()
    ids = table.column("relevant_ids").combine_chunks().take(pa.array(rows)).to_pylist()
    grades = table.column("relevant_grades").combine_chunks().take(pa.array(rows)).to_pylist()
    relevant = [dict(zip(i, g)) for i, g in zip(ids, grades)]
    values = compute_metrics(judged_ranking_from_lists(relevant, retrieved), specs, rel_level)
    for spec in specs:
        out[spec.name][rows] = values[spec.name]
    return out


def latency_columns(table: pa.Table) -> dict[str, str]:
    """Latency column -> stage name ("end_to_end" for latency_ms)."""
    out = {}
    for name in table.column_names:
        if name == "latency_ms":
            out[name] = "end_to_end"
        else:
            match = _LATENCY_FIELD.match(name)
            if match:
                out[name] = match.group(1)
    return out
