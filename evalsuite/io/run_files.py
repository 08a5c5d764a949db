"""Readers for runs and qrels: TREC, CSV/TSV with a header, JSON, JSONL and Parquet (gzip too).

Parsing is done by pyarrow; a pure-Python pass runs only to locate and explain a problem the
fast parser rejected (so every error names the file, line, field and value) and for files the
fast parser cannot take as they are (``#`` comment lines, blank lines, extra columns after the
TREC run tag). Ids are always read as strings, exactly as written.
"""

from __future__ import annotations

import os

import numpy as np

from .run_qrels import Qrels, Run, build_qrels, build_run_handed_over
from ..errors import EvalSuiteError, reading_errors
from .limits import ReadLimits, check_limits, check_rows
from ._reading import check_input, load_bytes, detect_format, FORMATS, _Input, _load, PathOrBuffer, _shown_name
from ..errors import not_unicode_error
from ._read_ranked import _Parsed, _PARSERS

__all__ = ["read_run", "read_qrels", "read_columns", "FORMATS", "load_bytes", "detect_format"]


# ----------------------------------------------------------------------------------------------
# Public readers.


def read_run(path_or_buffer: PathOrBuffer, format: str | None = None, *, name: str | None = None,
             duplicates: str = "error", source_name: str | None = None, limits: ReadLimits | None = None,
             isolate: bool = False) -> Run:
    """Read a run: per query, retrieved doc ids with scores.

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file; gzip-compressed content is detected and decompressed.
    format : {"trec", "csv", "tsv", "json", "jsonl", "parquet"} or None
        None detects it from the extension and the content (see :func:`detect_format`).
        TREC: ``query Q0 doc rank score tag``, whitespace separated, ``#`` comment lines
        allowed; the rank column is ignored (trec_eval); extra columns after the tag are
        ignored with a warning (as trec_eval does). CSV/TSV/JSONL/Parquet: columns for the
        query id (``query_id``, ``query-id``, ``qid`` ...), the doc id (``doc_id``,
        ``corpus-id``, ``docno`` ...) and ``score`` and/or ``rank`` (rank only: ascending rank
        is the order). JSON: ranx's ``{query_id: {doc_id: score}}``.
    name : str, optional
        System name; defaults to the TREC run tag, else the file name without extension.
    duplicates : {"error", "max"}
        A doc listed twice for one query is an error (as in trec_eval) unless "max" keeps the
        higher score.
    source_name : str, optional
        Name to show in messages instead of the file name.
    limits : ReadLimits, optional
        Bytes, lines, line length, columns, JSON nesting and integer digits the file may have (see
        :class:`ReadLimits`; the defaults pass a 7-million-line run). With a time or memory bound
        (``ReadLimits(timeout_s=..., memory_bytes=...)``, or :data:`evalsuite.io.limits.BOUNDED`:
        the dashboard's 60 s and 6 GiB) the file is read in a worker process stopped past them.
    isolate : bool
        Parse in a separate worker process with a time and memory cap (see
        :func:`evalsuite.io.isolation.read_isolated`; the pool's bounds unless ``limits`` gives
        its own), so no file can crash or exhaust this process; the dashboard always does.
        Default False: parse here (unless ``limits`` has a time or memory bound).

    Returns
    -------
    Run
        Rows grouped by query, ordered by score descending then doc id descending.

    Raises
    ------
    EvalSuiteError
        Any problem, naming the file, line, field and value: malformed lines, wrong column
        counts, non-numeric or non-finite scores, an empty file, a qrels file given as a
        run, undecodable bytes, duplicate docs, a file past ``limits``; with ``isolate``, also
        a parse that crashed, ran out of time or memory (:class:`evalsuite.ReaderStopped`).

    Examples
    --------
    >>> run = read_run(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n", source_name="run.trec")
    >>> run.name, run.query("q1")["doc_id"].tolist()
    ('bm25', ['d1', 'd2'])
    """
    if isolate or check_limits(limits).bounded:
        from .isolation import read_isolated

        return read_isolated("run", path_or_buffer, source_name, format=format, limits=limits, name=name,
                             duplicates=duplicates)
    source = source_name or _shown_name(path_or_buffer)
    with reading_errors(source):
        # lazy_gzip: a gzip TREC file is inflated while it is parsed (its text never whole in memory).
        inp = _load(path_or_buffer, source_name, limits, lazy_gzip=True)
        fmt = _check_format(format, inp)
        parsed = _parse(inp, fmt, "run", check_limits(limits))
        inp.release()  # the parsed columns are all that is needed now
        if parsed.n_rows == 0:
            raise EvalSuiteError("no run lines found (the file is empty or holds only comments)", source=inp.name)
        run_name = name or parsed.tag or os.path.splitext(os.path.basename(inp.ext_name))[0] or None
        return build_run_handed_over(parsed.hand_over(), name=run_name, source=inp.name, line_of=parsed.line_of,
                                     duplicates=duplicates, warnings=parsed.warnings, line_label=parsed.line_label)


def read_qrels(path_or_buffer: PathOrBuffer, format: str | None = None, *, duplicates: str = "error",
               source_name: str | None = None, limits: ReadLimits | None = None, isolate: bool = False) -> Qrels:
    """Read relevance judgements (qrels).

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
        The file; gzip-compressed content is detected and decompressed.
    format : {"trec", "csv", "tsv", "json", "jsonl", "parquet"} or None
        As in :func:`read_run`. TREC qrels: ``query iteration doc grade`` (the iteration
        column is ignored). CSV/TSV/JSONL/Parquet: query id, doc id and a grade column
        (``grade``, ``relevance``, ``label`` ... or BEIR's ``score``). JSON: ranx's
        ``{query_id: {doc_id: grade}}``.
    duplicates : {"error", "max"}
        A doc judged twice for one query is an error unless "max" keeps the higher grade.
    source_name, limits, isolate :
        As in :func:`read_run`.

    Returns
    -------
    Qrels

    Raises
    ------
    EvalSuiteError
        As :func:`read_run`; also a grade that is not a whole number (trec_eval would
        truncate it silently, pytrec_eval raises).

    Examples
    --------
    >>> qrels = read_qrels(b"q1 0 d1 2\\nq1 0 d2 0\\n", source_name="qrels.trec")
    >>> qrels.query("q1")
    {'d1': 2.0, 'd2': 0.0}
    """
    if isolate or check_limits(limits).bounded:
        from .isolation import read_isolated

        return read_isolated("qrels", path_or_buffer, source_name, format=format, limits=limits,
                             duplicates=duplicates)
    with reading_errors(source_name or _shown_name(path_or_buffer)):
        inp = _load(path_or_buffer, source_name, limits, lazy_gzip=True)
        fmt = _check_format(format, inp)
        parsed = _parse(inp, fmt, "qrels", check_limits(limits))
        inp.release()
        if parsed.n_rows == 0:
            raise EvalSuiteError("no judgements found (the file is empty or holds only comments)", source=inp.name)
        grades = parsed.values
        bad = np.flatnonzero(grades != np.floor(grades))
        if bad.size:
            row = int(bad[0])
            raise EvalSuiteError("a grade must be a whole number (relevance levels are integers)", source=inp.name,
                                 line=parsed.line_of(row), field="grade", value=parsed.raw_value(row),
                                 line_label=parsed.line_label)
        return build_qrels(parsed.query_ids, parsed.doc_ids, grades, source=inp.name, line_of=parsed.line_of,
                           duplicates=duplicates, warnings=parsed.warnings, line_label=parsed.line_label)


def read_columns(path_or_buffer: PathOrBuffer, kind: str, limits: ReadLimits | None = None, *, name: str | None = None,
                 format: str | None = None):
    """Parse a run or qrels file into its columns, without building a Run or Qrels: for an engine
    that groups the rows itself (the Dask engine reads each shard, or each block of lines of a
    large TREC file, with it).

    Parameters
    ----------
    path_or_buffer : path, bytes or binary file object
    kind : {"run", "qrels"}
    limits : ReadLimits, optional
        Default :data:`~evalsuite.io.limits.DEFAULT_LIMITS`.
    name : str, optional
        Name to show in messages (default: the file's name).
    format : str, optional
        One of :data:`FORMATS`; detected when None.

    Returns
    -------
    (parsed, name)
        The parsed columns (``query_ids``, ``doc_ids``, ``values`` or ``ranks``, ``tag``,
        ``warnings``, ``line_of(row)``, ``line_label``, ``n_rows``, ``raw_value(row)``) and the
        name messages use. Ids and values are checked with :mod:`evalsuite.io.columns`, as
        :func:`read_run` and :func:`read_qrels` check them when they build the result.

    Raises
    ------
    EvalSuiteError
        An unknown format, a file past ``limits``, a line that does not parse.

    Examples
    --------
    >>> parsed, name = read_columns(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n", "run", name="run.trec")
    >>> name, parsed.n_rows, parsed.tag, parsed.values.tolist()
    ('run.trec', 2, 'bm25', [2.5, 1.5])
    """
    inp = _load(path_or_buffer, name, limits, lazy_gzip=True)
    fmt = _check_format(format, inp)
    parsed = _parse(inp, fmt, kind, check_limits(limits))
    inp.release()
    return parsed, inp.name


def _parse(inp: _Input, fmt: str, kind: str, limits: ReadLimits) -> _Parsed:
    check_input(inp, fmt, limits)
    try:
        parsed = _PARSERS[fmt](inp, kind, limits)
    except UnicodeEncodeError as exc:
        raise not_unicode_error(exc, inp.name) from None
    check_rows(parsed.n_rows, limits, inp.name)
    return parsed


def _check_format(format: str | None, inp: _Input) -> str:
    if format is None:
        return detect_format(inp.head, inp.ext_name)
    fmt = str(format).lower()
    if fmt not in FORMATS:
        raise EvalSuiteError(f"unknown format; use one of {', '.join(FORMATS)} or None to detect it",
                             field="format", value=format)
    return fmt


