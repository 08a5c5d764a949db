"""What every judge shares: the provenance of a judgement, the run's counts, and writing the
judgement columns into records."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

import pyarrow as pa

from ..errors import EvalSuiteError

__all__ = ["Provenance", "JudgeStats", "JudgedRecords", "PROVENANCE_COLUMN", "endpoint_host", "write_columns",
           "row_outcome", "combine_rows"]

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(..., ensure_ascii=False), made once

#: The extra column holding, per record, the JSON list of :class:`Provenance` of its judgements.
PROVENANCE_COLUMN = "judge_provenance"


def endpoint_host(base_url: str | None) -> str | None:
    """The host (and port) of an endpoint URL: what provenance keeps of it (no path, user or key).

    Examples
    --------
    >>> endpoint_host("https://user:secret@api.example.com:8443/v1?key=abc")
    'api.example.com:8443'
    >>> endpoint_host(None) is None
    True
    """
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


@dataclass
class Provenance:
    """Where one judgement came from.

    Attributes
    ----------
    column : str
        The judgement column it fills (``answer_claims_supported``, ``answer_similarity``, ...) or
        the intermediate it produced (``answer_claims``).
    judge : str
        ``llm``, ``embedding``, ``lexical`` or ``rule`` (decided without a call: degenerate input).
    model : str or None
        Model id (always stored with a similarity: scales differ between models).
    endpoint_host : str or None
        Host and port of the endpoint; never a key, user or path.
    prompt_version : str or None
        First 12 hex digits of the SHA-256 of the prompt text and schema.
    mode : str or None
        Output mode that answered: ``json_schema``, ``json_object`` or ``text``.
    request_hash : str or None
        Cache key of the call (:func:`evalsuite.judges.request_hash`).
    prompt_tokens, completion_tokens : int or None
        As the endpoint reported them.
    latency_ms : float or None
        Wall time of the call that produced the response (the first one, for a cache hit).
    cached : bool
        Answered from the cache.
    status : str
        ``ok``, ``rule: <why>`` or ``missing: <why>`` (truncated, malformed, refusal, failed,
        budget, interrupted ...): a missing judgement is None, never a verdict.
    index : int or None
        The chunk a per-chunk judgement is about.
    attempts : int or None
        Requests sent for it when more than one (retries) or when all failed.
    """

    column: str
    judge: str
    model: str | None = None
    endpoint_host: str | None = None
    prompt_version: str | None = None
    mode: str | None = None
    request_hash: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cached: bool = False
    status: str = "ok"
    index: int | None = None
    attempts: int | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass
class JudgeStats:
    """Counts of a judge run (thread-safe updates through :meth:`add`).

    Attributes
    ----------
    judgements : int
        Requests answered (from the endpoint or the cache).
    ok : int
        Judgements with a usable verdict (answered, and the reply read).
    calls : int
        HTTP requests that reached the endpoint (it answered with a status, or accepted the
        connection and stayed silent), retries included.
    unreached : int
        Attempts that never reached it (connection refused or failed, connect timeout).
    cache_hits : int
        Requests answered without a call of their own: from the cache, or by an identical
        request in flight (single-flight; those are also counted in ``shared``).
    shared : int
        Requests answered by the call of an identical request already in flight.
    retries : int
        Repeated requests after 429, 5xx, a timeout or a connection error.
    rule_decided : int
        Judgements decided without a call (empty answer, no contexts, no reference).
    missing : dict of str -> int
        Missing judgements (None) by cause: ``connection refused``, ``timeout``, ``HTTP 500``,
        ``malformed``, ``truncated`` ... and, for judgements a stop left unasked, ``budget``,
        ``interrupted``, ``deadline``, ``endpoint failing``.
    failures : dict of str -> int
        Failed attempts (retries included) by cause.
    prompt_tokens, completion_tokens : int
        Tokens of the calls sent (cache hits cost nothing and are not counted).
    cost : float
        prompt_tokens x input price + completion_tokens x output price (per million tokens).
    stopped : str or None
        ``budget``, ``interrupted``, ``deadline`` or ``endpoint failing`` when the run stopped early.
    stop_message : str
        Why, in words (the circuit breaker names the endpoint and the causes).
    in_flight : int
        Requests waiting for a reply now (progress).
    waiting_s : float
        Age of the oldest of them in seconds (progress).
    """

    judgements: int = 0
    ok: int = 0
    calls: int = 0
    unreached: int = 0
    cache_hits: int = 0
    shared: int = 0
    retries: int = 0
    rule_decided: int = 0
    missing: dict = field(default_factory=dict)
    failures: dict = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    stopped: str | None = None
    stop_message: str = ""
    in_flight: int = 0
    waiting_s: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, **counts) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def answered(self, ok: bool, hit: bool = False, shared: bool = False) -> None:
        """Count one answered request (``add(judgements=1, ok=ok, cache_hits=hit, shared=shared)``
        without its keyword loop: a replay of 100,000 cached judgements counts 100,000)."""
        with self._lock:
            self.judgements += 1
            self.ok += ok
            self.cache_hits += hit
            self.shared += shared

    def add_missing(self, reason: str, n: int = 1) -> None:
        with self._lock:
            self.missing[reason] = self.missing.get(reason, 0) + n

    def add_failure(self, cause: str) -> None:
        with self._lock:
            self.failures[cause] = self.failures.get(cause, 0) + 1

    def merge(self, other: "JudgeStats") -> None:
        """Add another run's counts (a judge run in phases: the RAGAS judge's embedding phase)."""
        with self._lock:
            for name in ("judgements", "ok", "calls", "unreached", "cache_hits", "shared", "retries", "rule_decided",
                         "prompt_tokens", "completion_tokens", "cost"):
                setattr(self, name, getattr(self, name) + getattr(other, name))
            for mine, theirs in ((self.missing, other.missing), (self.failures, other.failures)):
                for key, value in theirs.items():
                    mine[key] = mine.get(key, 0) + value
            if self.stopped is None and other.stopped is not None:
                self.stopped, self.stop_message = other.stopped, other.stop_message

    def as_dict(self) -> dict:
        with self._lock:
            return {k: (dict(v) if isinstance(v, dict) else v) for k, v in vars(self).items() if not k.startswith("_")}


@dataclass
class JudgedRecords:
    """The result of a judge run.

    Attributes
    ----------
    records : evalsuite.Records
        The input records with the judgement columns filled in (replaced where present) and
        the extra column ``judge_provenance`` (JSON list of :class:`Provenance` per record).
    stats : JudgeStats
        Calls, cache hits, retries, missing judgements by reason, tokens, cost, early stop.
    done : int
        Records fully judged (the others keep null judgement columns: a rerun resumes them).
    rows : list or None
        Per record, :func:`row_outcome` of this run (None: not finished); None when the judge
        does not say.
    """

    records: Any
    stats: JudgeStats
    done: int
    rows: list | None = None

    @property
    def all_missing(self) -> int:
        """Records finished whose every judgement asked is missing (:func:`row_outcome`
        ``missing``): counted in ``done``, but judged in name only; a summary counts them apart."""
        return 0 if self.rows is None else sum(1 for outcome in self.rows if outcome == "missing")

    def counts(self, n_records: int) -> str:
        """The records of a run in words, adding up to ``n_records``: judged, then (where any)
        those whose every judgement is missing, those with nothing to judge, and those the run
        did not finish (a stop: breaker, deadline, budget, Ctrl-C).

        >>> JudgedRecords(None, JudgeStats(), 3, ["answered", "missing", None]).counts(3)
        '1 of 3 records judged, 1 with every judgement missing, 1 not finished'
        """
        parts = [f"{self.judged:,} of {n_records:,} records judged"]
        if self.all_missing:
            parts.append(f"{self.all_missing:,} with every judgement missing")
        nothing = 0 if self.rows is None else sum(1 for outcome in self.rows if outcome == "nothing")
        if nothing:
            parts.append(f"{nothing:,} with nothing to judge")
        unfinished = (n_records - self.done if self.rows is None
                      else sum(1 for outcome in self.rows if outcome is None))
        if unfinished > 0:
            parts.append(f"{unfinished:,} not finished")
        return ", ".join(parts)

    @property
    def judged(self) -> int:
        """Records finished with at least one judgement (answered or decided by rule): counted
        from the per-record outcomes when the judge gives them (``done`` of a run of several
        judges is the smallest of theirs, and a lexical judge does not count records without a
        reference), else ``done`` less :attr:`all_missing`."""
        if self.rows is None:
            return self.done - self.all_missing
        return sum(1 for outcome in self.rows if outcome == "answered")


def row_outcome(provenance: list) -> str:
    """What a run did with one record, from the :class:`Provenance` of its judgements:
    ``answered`` (a judgement answered, or decided by rule), ``missing`` (every judgement asked
    is missing) or ``nothing`` (nothing to judge: the fields are absent).

    Examples
    --------
    >>> row_outcome([Provenance("c", "llm", status="missing: timeout"), Provenance("c", "rule", status="rule: x")])
    'answered'
    >>> row_outcome([Provenance("c", "llm", status="missing: HTTP 400")]), row_outcome([])
    ('missing', 'nothing')
    """
    if not provenance:
        return "nothing"
    return "missing" if all(p.status.startswith("missing") for p in provenance) else "answered"


def combine_rows(*runs: list | None) -> list | None:
    """Per record, the outcome of several runs over the same records (phases, judges): None when
    a run did not finish it, else ``answered`` if any run answered, ``missing`` if any run asked
    and none answered, else ``nothing``. Runs that give no outcomes (None) are left out.

    Examples
    --------
    >>> combine_rows(["missing", "nothing", "missing"], ["answered", "nothing", None])
    ['answered', 'nothing', None]
    """
    given = [run for run in runs if run is not None]
    if not given:
        return None
    out = []
    for outcomes in zip(*given):
        if None in outcomes:
            out.append(None)
        elif "answered" in outcomes:
            out.append("answered")
        else:
            out.append("missing" if "missing" in outcomes else "nothing")
    return out


def write_columns(records, columns: dict[str, list], provenance: list[list[Provenance]] | None,
                  types: dict[str, pa.DataType]):
    """``records`` with ``columns`` (name -> one value per row) set, and the provenance column.

    The result is validated as any records are (:meth:`evalsuite.Records.from_dataframe`
    rules): a judge that wrote a per-chunk list of the wrong length raises EvalSuiteError.
    """
    from ..records.table import Records, finish_records as _finish_records

    table = records.table
    for name, values in columns.items():
        if len(values) != table.num_rows:
            raise EvalSuiteError(f"{len(values)} values for {table.num_rows} records", field=name)
        array = pa.array(values, types[name])
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, array)
        else:
            table = table.append_column(name, array)
    extra = list(records.extra_columns)
    for name in columns:
        if name not in _RECORD_FIELDS() and name not in extra:
            extra.append(name)
    if provenance is not None:
        texts = []
        for old, new in zip(_old_provenance(table), provenance):
            # A rerun replaces the entries of the columns it wrote; other judges' entries stay.
            written = set(columns) | {p.column for p in new}
            kept = [entry for entry in old if not (isinstance(entry, dict) and entry.get("column") in written)]
            texts.append(_ENCODE(kept + [p.as_dict() for p in new]))
        array = pa.array(texts, pa.string())
        if PROVENANCE_COLUMN in table.column_names:
            table = table.set_column(table.column_names.index(PROVENANCE_COLUMN), PROVENANCE_COLUMN, array)
        else:
            table = table.append_column(PROVENANCE_COLUMN, array)
        if PROVENANCE_COLUMN not in extra:
            extra.append(PROVENANCE_COLUMN)
    arrays = {name: table.column(name).combine_chunks() for name in table.column_names}
    checked = _finish_records(arrays, table.num_rows, records.source or "records", lambda r: r + 1, [], {}, extra,
                              None, _stages(), "row")
    return Records(checked.table, source=records.source, warnings=records.warnings, aliases=records.aliases,
                   extra_columns=extra)


def _old_provenance(table) -> list[list]:
    """Provenance a previous judge run left (another judge kind's entries are kept)."""
    if PROVENANCE_COLUMN not in table.column_names:
        return [[] for _ in range(table.num_rows)]
    out = []
    for text in table.column(PROVENANCE_COLUMN).to_pylist():
        try:
            value = json.loads(text) if text else []
        except ValueError:
            value = []
        out.append(value if isinstance(value, list) else [])
    return out


def _RECORD_FIELDS():
    from ..records.schema import FIELDS

    return FIELDS


def _stages():
    from ..metrics.operational import FAILURE_STAGES

    return FAILURE_STAGES


ProgressCallback = Callable[[int, int, "JudgeStats"], None]
