"""Parsing and evaluation, cached by the SHA-256 digest of the input bytes.

The bytes are hashed once, when a file arrives (:func:`digest_of`); afterwards only the digest
string is hashed by Streamlit's caches, and the bytes or parsed objects travel in arguments
whose names start with ``_`` (which Streamlit does not hash).

Every uploaded file is parsed in a worker process (:mod:`evalsuite.isolation`): a file that
crashes the parser, runs past the time limit or the memory cap ends as an ``EvalSuiteError``
shown on the page, and the server and the other sessions never notice. The sample files shipped
in ``sample_data/`` (recognised by their SHA-256) are read in the server process, so a cold start
does not wait for the reader processes.

Parsed runs, qrels and records, and records reports, are kept with ``st.cache_resource``: they
grow with the input (a 7-million-line run is hundreds of MB) and ``st.cache_data`` would unpickle
a fresh copy on every rerun; EvalSuite's objects are never modified after construction and the
pages only read them. Evaluation reports and comparisons (a few rows per query) use
``st.cache_data``, which hands every caller its own copy.
"""

from __future__ import annotations

import hashlib
import json
import os

import streamlit as st

import evalsuite as es
from evalsuite._compare import compare as _compare, compare_per_query as _compare_per_query
from evalsuite.isolation import DEFAULT_MEMORY_BYTES, DEFAULT_TIMEOUT_S, DEFAULT_WORKERS, ReaderPool, set_default_pool

from .constants import SAMPLE_DOCS, SAMPLE_FILES


def digest_of(data: bytes) -> str:
    """SHA-256 hex digest of the bytes: the cache key of everything computed from them."""
    return hashlib.sha256(data).hexdigest()


# Every cached function below is keyed by every input that defines its numbers: the digests of
# the files (in order), the metrics, the cutoff k, rel_level, the systems and the test settings.
# Arguments whose names start with "_" are not hashed by Streamlit, so they must be determined by
# the hashed ones (objects parsed from those very digests), never carry anything of their own.


# Server settings of the readers (docs/hosting.md): environment variable, else the key of the
# [evalsuite] secrets section, else the default; (variable, secret, unit, type).
_POOL_SETTINGS = {
    "workers": ("EVALSUITE_READER_WORKERS", "reader_workers", 1, int),
    "timeout_s": ("EVALSUITE_READER_TIMEOUT_S", "reader_timeout_s", 1, float),
    "memory_bytes": ("EVALSUITE_READER_MEMORY_MB", "reader_memory_mb", 1 << 20, int),
}
_LIMIT_SETTINGS = {
    "max_bytes": ("EVALSUITE_READER_MAX_BYTES_MB", "reader_max_bytes_mb", 1 << 20, int),
    "max_rows": ("EVALSUITE_READER_MAX_ROWS", "reader_max_rows", 1, int),
    "max_line_bytes": ("EVALSUITE_READER_MAX_LINE_MB", "reader_max_line_mb", 1 << 20, int),
    "max_columns": ("EVALSUITE_READER_MAX_COLUMNS", "reader_max_columns", 1, int),
    "max_depth": ("EVALSUITE_READER_MAX_DEPTH", "reader_max_depth", 1, int),
}


def _settings(table: dict) -> dict:
    from .workspaces import _secrets_section  # the one place that reads Streamlit's secrets

    section = _secrets_section()
    values = {}
    for field, (variable, secret, unit, kind) in table.items():
        text = os.environ.get(variable, "").strip()
        where = f"environment variable {variable}"
        if not text and section.get(secret) not in (None, ""):
            text, where = str(section[secret]).strip(), f"secret evalsuite.{secret}"
        if text:
            try:
                values[field] = kind(text) * unit
            except ValueError:
                raise es.EvalSuiteError(f"must be a {'whole number' if kind is int else 'number'}",
                                        source="settings", field=where, value=text) from None
    return values


@st.cache_resource(show_spinner=False)
def start_readers() -> str | None:
    """Make the server's reader pool from its settings and start it in the background, once per
    server. Returns the settings problem, if any (the pool then keeps the defaults)."""
    try:
        pool = ReaderPool(**{"workers": DEFAULT_WORKERS, "timeout_s": DEFAULT_TIMEOUT_S,
                             "memory_bytes": DEFAULT_MEMORY_BYTES, **_settings(_POOL_SETTINGS)})
        problem = None
    except es.EvalSuiteError as exc:
        pool, problem = ReaderPool(), str(exc)
    set_default_pool(pool)
    pool.warm_up()
    return problem


@st.cache_resource(show_spinner=False)
def reader_limits() -> es.ReadLimits:
    """The limits every upload is read with: evalsuite's defaults, or the server's settings."""
    return es.ReadLimits(**_settings(_LIMIT_SETTINGS))


@st.cache_resource(show_spinner=False)
def _sample_digests() -> frozenset[str]:
    digests = set()
    for _, path, _ in SAMPLE_FILES:
        try:
            digests.add(digest_of(path.read_bytes()))
        except OSError:
            pass
    return frozenset(digests)


def _isolate(digest: str, data: bytes) -> bool:
    """Every file but the shipped samples (the digest is checked against the bytes themselves)."""
    return not (digest in _sample_digests() and digest_of(data) == digest)


@st.cache_resource(max_entries=32, show_spinner=False)
def read_run(digest: str, name: str, _data: bytes) -> es.Run:
    return es.read_run(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


@st.cache_resource(max_entries=16, show_spinner=False)
def read_qrels(digest: str, name: str, _data: bytes) -> es.Qrels:
    return es.read_qrels(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


@st.cache_resource(max_entries=32, show_spinner=False)
def read_records(digest: str, name: str, _data: bytes):
    return es.read_records(_data, source_name=name, isolate=_isolate(digest, _data), limits=reader_limits())


@st.cache_resource(max_entries=16, show_spinner=False)
def concat_records(digests: tuple[str, ...], _parts: tuple):
    return es.concat_records(list(_parts))


@st.cache_data(max_entries=64, show_spinner=False)
def evaluate_run(qrels_digest: str, run_digest: str, metrics: tuple[str, ...], rel_level: int,
                 _qrels: es.Qrels, _run: es.Run) -> es.EvaluationReport:
    return es.evaluate(_qrels, _run, list(metrics), rel_level=rel_level)


@st.cache_resource(max_entries=16, show_spinner=False)
def attributed_records(digests: tuple[str, ...], rel_level: int, _records):
    """The records with each failed request's stage given or attributed (es.with_attributed_failures)."""
    return es.with_attributed_failures(_records, rel_level=rel_level)


@st.cache_resource(max_entries=16, show_spinner=False)
def evaluate_records(digests: tuple[str, ...], k: int, rel_level: int, _records):
    return es.evaluate_records(_records, k=k, rel_level=rel_level)


@st.cache_data(max_entries=32, show_spinner=False)
def compare_runs(qrels_digest: str, runs: tuple[tuple[str, str], ...], metrics: tuple[str, ...], test: str,
                 correction: str, alpha: float, rel_level: int, _qrels: es.Qrels, _runs: dict,
                 pairs: str = "baseline"):
    """``runs``: ((system, digest), ...) with the baseline first; ``_runs``: {system: Run};
    ``pairs``: "baseline" (each system against the first) or "all"."""
    return _compare(_qrels, dict(_runs), metrics=list(metrics), test=test, correction=correction, alpha=alpha,
                      baseline=runs[0][0], rel_level=rel_level, pairs=pairs)


def records_per_system(report, systems) -> dict:
    """{system: its rows of a records report's per-request table, indexed by query id}."""
    per_query = report.per_query
    return {n: per_query[per_query["system"] == n].set_index("query_id") for n in systems}


@st.cache_data(max_entries=32, show_spinner=False)
def compare_records(digests: tuple[str, ...], k: int, rel_level: int, systems: tuple[str, ...],
                    metrics: tuple[str, ...], test: str, correction: str, alpha: float, _report,
                    pairs: str = "baseline"):
    """Compare two systems of a records report on its per-request values.

    ``_report`` is :func:`evaluate_records` of exactly (``digests``, ``k``, ``rel_level``): the
    per-request values are taken from it here, so they cannot differ from what the key says.
    """
    per_system = records_per_system(_report, systems)
    return _compare_per_query({n: per_system[n][list(metrics)] for n in systems}, metrics=list(metrics), test=test,
                              correction=correction, alpha=alpha, baseline=systems[0], pairs=pairs)


@st.cache_resource(show_spinner=False)
def cranfield_titles() -> dict[str, str]:
    """{doc id: title} of the Cranfield sample collection (empty if the file is missing)."""
    titles: dict[str, str] = {}
    try:
        with open(SAMPLE_DOCS, encoding="utf-8") as handle:
            for line in handle:
                doc = json.loads(line)
                titles[str(doc["doc_id"])] = str(doc.get("title", "")).strip()
    except (OSError, ValueError, KeyError):
        return {}
    return titles
