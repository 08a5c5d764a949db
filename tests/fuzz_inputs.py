"""Inputs for the reader fuzzing suite (tests/io/test_fuzz_readers.py).

- Hypothesis strategies that write VALID run, qrels and records files in every format the
  readers take, from generated rows, together with what a correct reader must return;
- base files made from the real samples (sample_data/, tests/data/trec_eval/), in every format;
- mutations (byte flips, truncation, insertions of hostile bytes, line edits, gzip wrappers)
  described as plain data, so Hypothesis can shrink them and a failure prints a short recipe.

Nothing here reads a file through EvalSuite; the tests check that every base file parses.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
TREC_EVAL = Path(__file__).resolve().parent / "data" / "trec_eval"

RUN_FORMATS = ("trec", "csv", "tsv", "json", "jsonl", "parquet")
RECORD_FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")
JUDGEMENT_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")
COMBOS = [("run", f) for f in RUN_FORMATS] + [("qrels", f) for f in RUN_FORMATS] + [("records", f) for f in RECORD_FORMATS] \
    + [("judgements", f) for f in JUDGEMENT_FORMATS]
# EVALSUITE_FUZZ_KINDS="judgements,records" fuzzes only those readers (a full-size round of one reader).
if os.environ.get("EVALSUITE_FUZZ_KINDS"):
    COMBOS = [c for c in COMBOS if c[0] in os.environ["EVALSUITE_FUZZ_KINDS"].split(",")]


def kinds(*names: str) -> list[str]:
    """Those of ``names`` that COMBOS fuzzes."""
    return [name for name in names if any(kind == name for kind, _ in COMBOS)]
# Traces (issue 30) are fuzzed by tests/io/test_fuzz_traces.py with these same mutations;
# benchmarks/fuzz_round.py runs both files at full size.
EXTENSION = {"trec": "trec", "csv": "csv", "tsv": "tsv", "json": "json", "jsonl": "jsonl", "parquet": "parquet"}

# ----------------------------------------------------------------------------------------------
# Size of a run: EVALSUITE_FUZZ_EXAMPLES is the number of examples of each mutation test per
# reader/format (default 100); every other test scales with it.

BASE_EXAMPLES = 100
FUZZ_EXAMPLES = int(os.environ.get("EVALSUITE_FUZZ_EXAMPLES") or BASE_EXAMPLES)


def examples(default: int) -> int:
    """``default`` examples at the default size, scaled by EVALSUITE_FUZZ_EXAMPLES / 100."""
    return max(1, round(default * FUZZ_EXAMPLES / BASE_EXAMPLES))


# Stacked mutations per input: up to 4 by default, up to 8 in long runs.
MAX_MUTATIONS = 4 if FUZZ_EXAMPLES <= BASE_EXAMPLES else 8

# ----------------------------------------------------------------------------------------------
# Ids.

# Strings that have broken parsers before: numbers in disguise, spreadsheet formulas, JSON
# keywords, quotes and brackets, comment marks, non-ASCII digits, invisible characters.
TRICKY = [
    "0", "007", "-1", "+1", "1e5", "1.5", "-0", "0x10", "1_000", "NaN", "nan", "inf", "-Infinity", "null", "None",
    "true", "FALSE", "=1+2", '=HYPERLINK("x")', "@SUM(A1)", "-", "#", "#1", "a#b", "q,1", "a;b", '"', '""', "'",
    'a"b', "[", "]", "{}", "[1]", "\\", "\\n", "\\u0000", "é", "e\u0301", "ß", "日本", "🙂", "\u200b", "\u00ad",
    "Q0", "٣", "²", "२०२०", "9" * 30, "\x00", "\x7f", "a\ufeffb", "\x1bx", "2020-01-01", "2020-01-01 10:00:00",
    "2024-224960", "msmarco_v2.1_doc_50_2286987788#13_3087841662", "FR940202-2-00150",
]
# What the id rule trims from both ends of an id in every format (evalsuite.utils.ids: ASCII
# whitespace); Unicode spaces and control characters (\xa0, \u3000, \x1f, \x85) are id text.
PAD = [" ", "\t", "\x0b", "\x0c"]
ID_WHITESPACE = " \t\n\x0b\x0c\r"
_ALPHABET = st.one_of(st.characters(codec="utf-8"), st.sampled_from(list(" \t,;\"'#=+-@[]{}\\0123456789.eE")))


# Strategies are built once and reused (building one per draw made generation the slow part).
@functools.lru_cache(maxsize=None)
def _choice(options: tuple):
    return st.sampled_from(options)


def pick(draw, options):
    """One of a few constant options."""
    return draw(_choice(tuple(options)))


def one_of_list(draw, items: list):
    """One item of a list built during generation (not cached)."""
    return items[draw(_ints(0, len(items) - 1))]


@functools.lru_cache(maxsize=None)
def _ints(lo: int, hi: int):
    return st.integers(lo, hi)


@functools.lru_cache(maxsize=None)
def _texts(max_size: int):
    return st.text(_ALPHABET, max_size=max_size)


_RAW = st.one_of(
    st.sampled_from(TRICKY),
    st.text(_ALPHABET, min_size=1, max_size=10),
    st.builds(lambda a, b: a + b, st.sampled_from(TRICKY), st.text(_ALPHABET, min_size=1, max_size=4)),
)
@dataclass(frozen=True)
class Id:
    """An id as written in the file (text, or an int for JSON/Parquet) and as a reader must return it."""

    written: Any
    expected: str


# What TREC files split on (trec_eval's isspace); other characters (\x1c, \xa0, \u3000 ...) are id text.
TREC_WHITESPACE = " \t\r\n\x0b\x0c"


@functools.lru_cache(maxsize=None)
def _trec_id(first: bool):
    """No TREC whitespace (TREC splits on it); a query id cannot start with '#' (a comment line)."""
    def fix(text: str) -> str:
        text = "".join(c for c in text if c not in TREC_WHITESPACE)
        if first and text[:1] in ("#", "\ufeff"):
            text = "q" + text
        return text

    return _RAW.map(fix).filter(bool).map(lambda t: Id(t, t))


@functools.lru_cache(maxsize=None)
def _padded_id():
    """CSV/TSV: any text but line breaks; the cell may carry ASCII whitespace around it (trimmed)."""
    core = _RAW.map(lambda t: t.replace("\r", "").replace("\n", "").strip(ID_WHITESPACE)).filter(bool)
    pad = st.text(st.sampled_from(PAD), max_size=2)
    return st.builds(lambda left, c, right: Id(left + c + right, c), pad, core, pad)


_SMALL_INTS = st.integers(-1000, 10**6).map(lambda n: Id(n, str(n)))
# Past int64: pyarrow's JSON reader reads these as floats, and the readers must take them exactly.
_BIG_INTS = st.one_of(st.integers(2**63, 10**25), st.integers(-(10**25), -(2**63) - 1)).map(lambda n: Id(n, str(n)))
ID_MODES = ("text", "text", "mixed", "int", "bigint")


def _json_id(mode: str):
    # ASCII whitespace around an id is trimmed in every format; an id of only that is no id.
    text = _RAW.map(lambda t: Id(t, t.strip(ID_WHITESPACE))).filter(lambda i: i.expected)
    return {"text": text, "int": _SMALL_INTS, "bigint": st.one_of(_BIG_INTS, _SMALL_INTS),
            "mixed": st.one_of(text, _SMALL_INTS, _BIG_INTS)}[mode]


@functools.lru_cache(maxsize=None)
def id_strategy(fmt: str, first: bool = False, mode: str = "text"):
    """Ids for ``fmt``; ``mode`` (JSON and JSONL only): text, int, bigint or mixed."""
    if fmt == "trec":
        return _trec_id(first)
    if fmt in ("csv", "tsv"):
        return _padded_id()
    if fmt == "parquet":
        return _json_id("text")
    return _json_id(mode)


# ----------------------------------------------------------------------------------------------
# Values.

_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.5, 5e-324, 1.7976931348623157e308, 1e16, 0.1]),
)


@st.composite
def score_text(draw, json_safe: bool) -> str:
    x = draw(_FLOATS)
    style = pick(draw, ["repr", "repr", "e", "g17"] + ([] if json_safe else ["plus"]))
    if style == "e":
        return f"{x:e}"
    if style == "g17":
        return format(x, ".17g")
    if style == "plus" and x >= 0 and repr(x)[0].isdigit():
        return "+" + repr(x)
    return repr(x)


@st.composite
def grade_text(draw, json_safe: bool) -> str:
    g = draw(_ints(-2, 4))
    style = pick(draw, ["int", "int", "float"] + ([] if json_safe else ["plus"]))
    if style == "float":
        return f"{g}.0"
    if style == "plus" and g >= 0:
        return f"+{g}"
    return str(g)


_SCORE = {safe: score_text(safe) for safe in (False, True)}
_GRADE = {safe: grade_text(safe) for safe in (False, True)}
_TAGS = st.lists(_trec_id(False), min_size=1, max_size=2)
_INT64_IDS = st.integers(-(2**63), 2**63 - 1).map(lambda n: Id(n, str(n)))


@functools.lru_cache(maxsize=None)
def _unique_ids(ids, max_size: int):
    return st.lists(ids, min_size=1, max_size=max_size, unique_by=_expected_of)


def _expected_of(i: Id) -> str:
    return i.expected


@functools.lru_cache(maxsize=None)
def _permutations(items: tuple):
    return st.permutations(items)


# ----------------------------------------------------------------------------------------------
# Valid run and qrels files.


@dataclass
class Case:
    """A generated file and what reading it must give.

    ``rows`` (run/qrels: (query, doc, value) in the reader's order; records: column -> values)
    when it must parse; ``error`` (a substring of the message) when it must be refused.
    """

    kind: str
    fmt: str
    data: bytes
    name: str
    rows: Any = None
    run_name: str | None = None
    error: str | None = None

    def __repr__(self) -> str:  # a failing example is printed: keep it short
        data = repr(self.data[:2000]) + (f" ... ({len(self.data)} bytes)" if len(self.data) > 2000 else "")
        rows = repr(self.rows)
        rows = rows[:2000] + " ..." if len(rows) > 2000 else rows
        return (f"Case(kind={self.kind!r}, fmt={self.fmt!r}, name={self.name!r}, run_name={self.run_name!r}, "
                f"error={self.error!r},\n     data={data},\n     rows={rows})")

    def _repr_pretty_(self, printer, cycle) -> None:  # what Hypothesis prints
        printer.text(repr(self))


def expected_ranked(kind: str, rows: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """Rows in EvalSuite's order: queries by first appearance; a run by score descending then
    doc id descending (code point order is UTF-8 byte order); qrels in file order."""
    order: dict[str, list] = {}
    for q, d, v in rows:
        order.setdefault(q, []).append((q, d, v))
    out = []
    for group in order.values():
        if kind == "run":
            group = sorted(group, key=lambda r: (r[2], r[1]), reverse=True)
        out.extend(group)
    return out


_QUERY_HEADERS = ["query_id", "qid", "query-id", "Query ID", "topic", "QID", " query_id "]
_DOC_HEADERS = ["doc_id", "docid", "corpus-id", "docno", "pid", "Doc ID", "passage_id"]
_SCORE_HEADERS = ["score", "sim", "similarity", "Score"]
_GRADE_HEADERS = ["grade", "relevance", "rel", "label", "score", "judgment"]


def _csv_text(rows: list[list[str]], delimiter: str, quoting: int, eol: str) -> str:
    if eol == "\n" and any("\r" in cell for row in rows for cell in row):
        eol = "\r\n"  # the csv module quotes a cell holding a CR only when CR ends its lines
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, quoting=quoting, lineterminator=eol)
    writer.writerows(rows)
    return out.getvalue()


@st.composite
def ranked_case(draw, kind: str, fmt: str) -> Case:
    """A valid run or qrels file in ``fmt`` (or, now and then, one with a duplicate pair)."""
    json_safe = fmt in ("json", "jsonl", "parquet")
    list_form = fmt == "json" and draw(_ints(0, 3)) == 0
    # ranx's dict needs string keys; JSON rows and JSONL take whole numbers too.
    mode = pick(draw, ID_MODES) if fmt == "jsonl" or list_form else "text"
    id_mode_int = fmt == "parquet" and draw(_ints(0, 3)) == 0
    if id_mode_int:
        qst = dst = _INT64_IDS
    else:
        qst = id_strategy(fmt, first=True, mode=mode)
        dst = id_strategy(fmt, mode=mode)
    rank_only = kind == "run" and fmt in ("csv", "tsv", "jsonl", "parquet") and draw(_ints(0, 4)) == 0
    queries = draw(_unique_ids(qst, 4))
    docs = draw(_unique_ids(dst, 8))
    n = draw(_ints(1, 14))
    rows, seen = [], set()
    for _ in range(n):
        q, d = one_of_list(draw, queries), one_of_list(draw, docs)
        if (q.expected, d.expected) in seen:
            continue
        seen.add((q.expected, d.expected))
        if rank_only:
            value = str(draw(_ints(1, 6)))
        elif kind == "run":
            value = draw(_SCORE[json_safe])
        else:
            value = draw(_GRADE[json_safe])
        rows.append((q, d, value))
    # A file over 64 KiB is handed to the worker by path and memory-mapped: other code paths.
    if fmt in ("trec", "csv", "tsv", "jsonl") and draw(_ints(0, 7)) == 0:
        filler = Id("zzfill", "zzfill")
        if all(q.expected != "zzfill" for q in queries):
            rows += [(filler, Id(f"f{i}", f"f{i}"), "1" if kind == "qrels" else repr(i / 7)) for i in range(5000)]
    duplicate = draw(_ints(0, 9)) == 0
    if duplicate:
        q, d, _ = one_of_list(draw, rows)
        if fmt in ("csv", "tsv"):
            d = Id(pick(draw, PAD) + d.expected, d.expected)  # the same id once trimmed
        value = "1" if rank_only or kind == "qrels" else draw(_SCORE[json_safe])
        rows.insert(draw(_ints(0, len(rows))), (q, d, value))
    name = f"fuzz-{kind}.{EXTENSION[fmt]}"
    writer = {"trec": _write_trec, "csv": _write_delimited, "tsv": _write_delimited, "json": _write_json,
              "jsonl": _write_jsonl, "parquet": _write_parquet}[fmt]
    data, run_name = writer(draw, kind, fmt, rows, rank_only, list_form)
    if duplicate:
        return Case(kind, fmt, data, name, error="appears twice")
    values = [(-float(v) if rank_only else float(v)) for _, _, v in rows]
    expected = expected_ranked(kind, [(q.expected, d.expected, v) for (q, d, _), v in zip(rows, values)])
    return Case(kind, fmt, data, name, rows=expected, run_name=run_name or f"fuzz-{kind}")


def _write_trec(draw, kind, fmt, rows, rank_only, list_form):
    sep = pick(draw, [" ", " ", "\t", "  ", " \t ", "\x0b", " \x0c"])
    eol = pick(draw, ["\n", "\r\n"])
    tags = [t.expected for t in draw(_TAGS)]
    comments, blanks, indent, extra = (draw(_ints(0, 5)) == 0 for _ in range(4))
    lines = []
    used_tags = set()
    for i, (q, d, value) in enumerate(rows):
        if comments and draw(_ints(0, 2)) == 0:
            lines.append(pick(draw, ["#", "# ", "  #"]) + draw(_texts(20))
                         .replace("\r", "").replace("\n", ""))
        if blanks and draw(_ints(0, 2)) == 0:
            lines.append(pick(draw, ["", " ", "\t"]))
        lead = pick(draw, ["", " ", "\t", "  ", "\x0c"]) if indent else ""
        if kind == "run":
            tag = tags[i % len(tags)]
            used_tags.add(tag)
            fields = [q.written, pick(draw, ["Q0", "0", "q0"]), d.written, str(i + 1), value, tag]
            if extra and draw(st.booleans()):
                fields.append("extra")
        else:
            fields = [q.written, pick(draw, ["0", "Q0", "1"]), d.written, value]
        lines.append(lead + sep.join(fields))
    text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    run_name = next(iter(used_tags)) if len(used_tags) == 1 else None
    return text.encode("utf-8"), run_name


def _write_delimited(draw, kind, fmt, rows, rank_only, list_form):
    delimiter = "," if fmt == "csv" else "\t"
    value = "rank" if rank_only else pick(draw, _SCORE_HEADERS if kind == "run" else _GRADE_HEADERS)
    header = {"q": pick(draw, _QUERY_HEADERS), "d": pick(draw, _DOC_HEADERS), "v": value}
    if kind == "run" and not rank_only and draw(_ints(0, 3)) == 0:
        header["rank"] = "rank"
    if draw(_ints(0, 3)) == 0:
        header["note"] = "note"
    roles = list(header)
    order = draw(_permutations(tuple(roles)))
    table = [[header[r] for r in order]]
    for i, (q, d, v) in enumerate(rows):
        cells = {"q": q.written, "d": d.written, "v": v, "rank": str(i + 1),
                 "note": draw(_texts(8)).replace("\r", "").replace("\n", "")}
        table.append([cells[r] for r in order])
    quoting = pick(draw, [csv.QUOTE_MINIMAL, csv.QUOTE_MINIMAL, csv.QUOTE_ALL])
    text = _csv_text(table, delimiter, quoting, pick(draw, ["\n", "\r\n"]))
    if draw(_ints(0, 5)) == 0:
        text = text.replace("\n", "\n\n", 1)  # a blank line after the header
    bom = b"\xef\xbb\xbf" if draw(_ints(0, 7)) == 0 else b""
    return bom + text.encode("utf-8"), None


def _json_dump(value, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def _write_json(draw, kind, fmt, rows, rank_only, list_form):
    ascii_only = draw(st.booleans())
    if list_form:
        names = (pick(draw, ["query_id", "qid", "query-id"]), pick(draw, ["doc_id", "docid", "corpus-id"]),
                 pick(draw, ["score", "sim"] if kind == "run" else ["grade", "relevance", "score"]))
        items = []
        for q, d, v in rows:
            items.append("{" + ", ".join(f"{_json_dump(k, ascii_only)}: {x}" for k, x in zip(
                names, (_json_dump(q.written, ascii_only), _json_dump(d.written, ascii_only), v))) + "}")
        return ("[" + ",\n ".join(items) + "]").encode("utf-8"), None
    groups: dict[str, list] = {}
    for q, d, v in rows:
        groups.setdefault(q.written, []).append((d.written, v))
    text = "{" + ", ".join(
        _json_dump(q, ascii_only) + ": {" + ", ".join(f"{_json_dump(d, ascii_only)}: {v}" for d, v in docs) + "}"
        for q, docs in groups.items()) + "}"
    return text.encode("utf-8"), None


def _write_jsonl(draw, kind, fmt, rows, rank_only, list_form):
    ascii_only = draw(st.booleans())
    names = [pick(draw, ["query_id", "qid", "query-id", "topic"]), pick(draw, ["doc_id", "docid", "corpus-id", "pid"]),
             "rank" if rank_only else pick(draw, ["score", "sim"] if kind == "run" else ["grade", "relevance", "score", "label"])]
    extra = draw(_ints(0, 3)) == 0
    blanks = draw(_ints(0, 5)) == 0
    eol = pick(draw, ["\n", "\r\n"])
    lines = []
    for q, d, v in rows:
        pairs = [(names[0], _json_dump(q.written, ascii_only)), (names[1], _json_dump(d.written, ascii_only)), (names[2], v)]
        if extra:
            pairs.append(("note", _json_dump(json.loads(pick(draw, ["null", "1", '"x"', "[1, 2]", '{"a": 1}'])), ascii_only)))
        order = draw(_permutations(tuple(range(len(pairs)))))
        lines.append("{" + ", ".join(f"{_json_dump(pairs[i][0], ascii_only)}: {pairs[i][1]}" for i in order) + "}")
        if blanks and draw(st.booleans()):
            lines.append(pick(draw, ["", " ", "\t"]))
    return (eol.join(lines) + (eol if draw(st.booleans()) else "")).encode("utf-8"), None


def _write_parquet(draw, kind, fmt, rows, rank_only, list_form):
    ints = isinstance(rows[0][0].written, int)
    value_name = "rank" if rank_only else ("score" if kind == "run" else pick(draw, ["grade", "relevance", "score"]))
    if ints:
        q_array = pa.array([q.written for q, _, _ in rows], pa.int64())
        d_array = pa.array([d.written for _, d, _ in rows], pa.int64())
    else:
        string_type = pick(draw, ["string", "large_string", "dictionary"])
        make = {"string": lambda v: pa.array(v, pa.string()), "large_string": lambda v: pa.array(v, pa.large_string()),
                "dictionary": lambda v: pa.array(v, pa.string()).dictionary_encode()}[string_type]
        q_array = make([q.written for q, _, _ in rows])
        d_array = make([d.written for _, d, _ in rows])
    if rank_only or (kind == "qrels" and draw(st.booleans())):
        values = pa.array([int(float(v)) for _, _, v in rows], pa.int64())
    else:
        values = pa.array([float(v) for _, _, v in rows], pa.float64())
    columns = {pick(draw, ["query_id", "qid"]): q_array, pick(draw, ["doc_id", "docno"]): d_array,
               value_name: values}
    if draw(_ints(0, 3)) == 0:
        columns["note"] = pa.array([str(i) for i in range(len(rows))])
    return parquet_bytes(pa.table(columns), draw), None


def parquet_bytes(table: pa.Table, draw=None) -> bytes:
    sink = io.BytesIO()
    options = {}
    if draw is not None:
        options = {"row_group_size": pick(draw, [None, 1, 3]),
                   "compression": pick(draw, ["none", "snappy", "zstd", "gzip"]),
                   "use_dictionary": draw(st.booleans())}
    pq.write_table(table, sink, **options)
    return sink.getvalue()


# ----------------------------------------------------------------------------------------------
# Valid records files.

_RECORD_NAMES = {
    "query_id": ["query_id", "qid", "id", "question_id", "request_id", "QID", "ID", "Request_ID"],
    "question": ["question", "user_input", "input", "query"],
    "answer": ["answer", "response", "actual_output"],
    "contexts": ["contexts", "retrieved_contexts", "retrieval_context"],
}
_TEXT = st.one_of(st.sampled_from(TRICKY), st.text(_ALPHABET, max_size=24))
_PRESENT = st.sets(st.sampled_from(["system", "question", "answer", "contexts", "context_useful", "latency_ms", "success",
                                    "note"]))
_LATENCY = st.one_of(st.floats(0, allow_infinity=False), st.sampled_from([0.0, -0.0, 1e308]))
_FLAG_TEXT = {True: ["true", "True", "1", "yes", " TRUE "], False: ["false", "0", "no", "False", " no"]}


@st.composite
def records_case(draw, fmt: str) -> Case:
    """A valid records file in ``fmt`` (now and then one with a repeated (system, query_id))."""
    delimited = fmt in ("csv", "tsv")

    def text():
        value = draw(_TEXT)
        return value.replace("\r", "") if delimited and draw(st.booleans()) else value

    def maybe(strategy_value, none_weight=4):
        return None if draw(_ints(0, none_weight)) == 0 else strategy_value()

    mode = pick(draw, ID_MODES) if fmt in ("json", "jsonl") else "text"
    ids = id_strategy(fmt, mode=mode)
    names = {k: pick(draw, v) for k, v in _RECORD_NAMES.items()}
    present = set(draw(_PRESENT))
    if "context_useful" in present:
        present.add("contexts")
    n = draw(_ints(1, 8))
    rows, seen = [], set()
    for _ in range(n):
        q = draw(ids)
        s = draw(ids) if "system" in present and draw(_ints(0, 5)) else None
        key = (None if s is None else s.expected, q.expected)
        if key in seen:
            continue
        seen.add(key)
        row = {"query_id": q, "system": s}
        if "question" in present:
            row["question"] = maybe(text)
        if "answer" in present:
            row["answer"] = maybe(text)
        if "contexts" in present:
            row["contexts"] = maybe(lambda: [text() for _ in range(draw(_ints(0, 3)))])
            if "context_useful" in present:
                row["context_useful"] = None if row["contexts"] is None else [draw(st.booleans()) for _ in row["contexts"]]
        if "latency_ms" in present:
            row["latency_ms"] = maybe(lambda: draw(_LATENCY))
        if "success" in present:
            row["success"] = maybe(lambda: draw(st.booleans()))
        if "note" in present:
            row["note"] = maybe(text)
        rows.append(row)
    duplicate = draw(_ints(0, 9)) == 0
    if duplicate:
        copy = dict(one_of_list(draw, rows))
        if delimited:
            copy["query_id"] = Id(" " + copy["query_id"].expected, copy["query_id"].expected)
        rows.insert(draw(_ints(0, len(rows))), copy)
    if fmt in ("csv", "tsv", "jsonl") and draw(_ints(0, 7)) == 0 and not any(
            r["query_id"].expected.startswith("zzfill") for r in rows):
        big = "x" * 1000
        rows += [{"query_id": Id(f"zzfill{i}", f"zzfill{i}"), "system": None, "question": big} for i in range(70)]
        present.add("question")
    name = f"fuzz-records.{EXTENSION[fmt]}"
    data = {"csv": _records_delimited, "tsv": _records_delimited, "json": _records_json, "jsonl": _records_jsonl,
            "parquet": _records_parquet}[fmt](draw, fmt, rows, names, present)
    if duplicate:
        return Case("records", fmt, data, name, error="appears twice")
    return Case("records", fmt, data, name, rows=_expected_records(fmt, rows, present))


def _expected_records(fmt: str, rows: list[dict], present: set) -> dict[str, list]:
    delimited = fmt in ("csv", "tsv")

    def text(value):
        return None if delimited and value == "" else value

    out = {"query_id": [r["query_id"].expected for r in rows],
           "system": [r["system"].expected if r.get("system") is not None else "fuzz-records" for r in rows]}
    for name in ("question", "answer", "note"):
        if name in present:
            out[name] = [text(r.get(name)) for r in rows]
    for name in ("contexts", "context_useful", "latency_ms", "success"):
        if name in present:
            out[name] = [r.get(name) for r in rows]
    return out


def _record_header(names: dict, present: set) -> list[tuple[str, str]]:
    """(canonical, name in the file) in file order."""
    out = [("query_id", names["query_id"])]
    for field_name in ("system", "question", "answer", "contexts", "context_useful", "latency_ms", "success", "note"):
        if field_name in present:
            out.append((field_name, names.get(field_name, field_name)))
    return out


def _records_delimited(draw, fmt, rows, names, present):
    header = _record_header(names, present)
    order = draw(_permutations(tuple(range(len(header)))))
    header = [header[i] for i in order]
    table = [[n for _, n in header]]
    for row in rows:
        cells = []
        for canonical, _ in header:
            value = row.get(canonical)
            if isinstance(value, Id):
                cells.append(value.written)
            elif value is None:
                cells.append("")
            elif canonical in ("contexts", "context_useful"):
                cells.append(json.dumps(value, ensure_ascii=draw(st.booleans())))
            elif canonical == "latency_ms":
                cells.append(repr(value))
            elif canonical == "success":
                cells.append(pick(draw, _FLAG_TEXT[value]))
            else:
                cells.append(value)
        table.append(cells)
    quoting = pick(draw, [csv.QUOTE_MINIMAL, csv.QUOTE_ALL])
    text = _csv_text(table, "," if fmt == "csv" else "\t", quoting, pick(draw, ["\n", "\r\n"]))
    return text.encode("utf-8")


def _record_json_value(canonical, value, draw):
    if isinstance(value, Id):
        return value.written
    if canonical == "success" and value is not None and draw(_ints(0, 3)) == 0:
        return int(value)  # 0/1 is read as false/true
    return value


def _record_dicts(draw, rows, names, present):
    header = _record_header(names, present)
    out = []
    for row in rows:
        item = {}
        for canonical, name in header:
            value = row.get(canonical)
            if value is None and draw(st.booleans()):
                continue  # a missing key reads as null
            item[name] = _record_json_value(canonical, value, draw)
        out.append(item)
    return out


def _records_json(draw, fmt, rows, names, present):
    items = _record_dicts(draw, rows, names, present)
    wrapper = pick(draw, ["list", "list", "results", "test_cases"])
    document = items if wrapper == "list" else {wrapper: items}
    return json.dumps(document, ensure_ascii=draw(st.booleans()), indent=pick(draw, [None, 1])).encode("utf-8")


def _records_jsonl(draw, fmt, rows, names, present):
    items = _record_dicts(draw, rows, names, present)
    ascii_only = draw(st.booleans())
    lines = [json.dumps(item, ensure_ascii=ascii_only) for item in items]
    return ("\n".join(lines) + ("\n" if draw(st.booleans()) else "")).encode("utf-8")


_RECORD_TYPES = {"query_id": pa.string(), "system": pa.string(), "question": pa.string(), "answer": pa.string(),
                 "contexts": pa.list_(pa.string()), "context_useful": pa.list_(pa.bool_()), "latency_ms": pa.float64(),
                 "success": pa.bool_(), "note": pa.string()}


def _records_parquet(draw, fmt, rows, names, present):
    header = _record_header(names, present)
    columns = {}
    for canonical, name in header:
        values = [row.get(canonical) for row in rows]
        values = [v.written if isinstance(v, Id) else v for v in values]
        columns[name] = pa.array(values, _RECORD_TYPES[canonical])
    return parquet_bytes(pa.table(columns), draw)


# ----------------------------------------------------------------------------------------------
# Valid judgement tables (the calibration inputs).

JUDGEMENT_FIELDS = ("query_id", "system", "judgement", "item", "judge", "judge_score", "judge_label", "human_label",
                    "human_score")
_LABEL_TEXT = {1.0: ["1", "true", "TRUE", "yes", "Yes", "[[Yes]]", " 1 ", "1.0"],
               0.0: ["0", "false", "no", "NO", "[[No]]", " no", "0.0"]}
_SCORES = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from([0.0, 1.0, 0.5, 1e-300]))


@st.composite
def judgement_case(draw, fmt: str) -> Case:
    """A valid judgement table in ``fmt`` (now and then one with a repeated key), and the rows a
    reader must return: column -> values (labels 1.0/0.0/None, scores floats/None, ids trimmed)."""
    delimited = fmt in ("csv", "tsv")
    mode = pick(draw, ID_MODES) if fmt in ("json", "jsonl") else "text"
    ids = id_strategy(fmt, mode=mode)
    present = ["query_id"] + [c for c in JUDGEMENT_FIELDS[1:] if draw(st.booleans())]
    if "judge_label" not in present and "judge_score" not in present:
        present.append(pick(draw, ["judge_label", "judge_score"]))
    n = draw(_ints(1, 8))
    rows, keys = [], set()
    for i in range(n):
        row = {"query_id": draw(ids)}
        for name in ("system", "judgement", "judge"):
            if name in present:
                row[name] = draw(ids) if draw(_ints(0, 4)) else None
        if "item" in present:
            row["item"] = draw(_ints(0, 5)) if draw(_ints(0, 4)) else None
        for name in ("judge_label", "human_label"):
            if name in present:
                row[name] = None if draw(_ints(0, 3)) == 0 else float(draw(st.booleans()))
        for name in ("judge_score", "human_score"):
            if name in present:
                row[name] = None if draw(_ints(0, 3)) == 0 else draw(_SCORES)
        key = tuple(_key_text(row.get(k)) for k in ("query_id", "system", "judgement", "item", "judge"))
        if key in keys:
            continue
        keys.add(key)
        rows.append(row)
    duplicate = draw(_ints(0, 9)) == 0
    if duplicate:
        rows.insert(draw(_ints(0, len(rows))), dict(one_of_list(draw, rows)))
    name = f"fuzz-judgements.{EXTENSION[fmt]}"
    data = _write_judgements(draw, fmt, rows, present, delimited)
    if duplicate:
        return Case("judgements", fmt, data, name, error="appears twice")
    expected = {c: [_expected_judgement(c, r.get(c)) for r in rows] for c in present}
    return Case("judgements", fmt, data, name, rows=expected)


def _key_text(value):
    if isinstance(value, Id):
        return value.expected
    return 0 if value is None else value


def _expected_judgement(column, value):
    if column in ("query_id", "system", "judgement", "judge"):
        return "" if value is None else value.expected
    if column == "item":
        return 0 if value is None else value
    return value


def _write_judgements(draw, fmt, rows, present, delimited):
    if delimited:
        table = [list(present)]
        for row in rows:
            cells = []
            for c in present:
                value = row.get(c)
                if isinstance(value, Id):
                    cells.append(value.written)
                elif value is None:
                    cells.append("")
                elif c.endswith("_label"):
                    cells.append(pick(draw, _LABEL_TEXT[value]))
                elif c == "item":
                    cells.append(str(value))
                else:
                    cells.append(repr(value))
            table.append(cells)
        quoting = pick(draw, [csv.QUOTE_MINIMAL, csv.QUOTE_ALL])
        return _csv_text(table, "," if fmt == "csv" else "\t", quoting, pick(draw, ["\n", "\r\n"])).encode("utf-8")
    items = []
    for index, row in enumerate(rows):
        item = {}
        for c in present:
            value = row.get(c)
            if value is None and index > 0 and draw(st.booleans()):
                continue  # a missing key reads as empty (the first row names every column)
            if isinstance(value, Id):
                value = value.written
            elif c.endswith("_label") and value is not None:
                value = pick(draw, [bool(value), int(value), value])
            item[c] = value
        items.append(item)
    if fmt == "json":
        return json.dumps(items, ensure_ascii=draw(st.booleans())).encode("utf-8")
    if fmt == "jsonl":
        return "".join(json.dumps(item, ensure_ascii=draw(st.booleans())) + "\n" for item in items).encode("utf-8")
    types = {"query_id": pa.string(), "system": pa.string(), "judgement": pa.string(), "judge": pa.string(),
             "item": pa.int64(), "judge_score": pa.float64(), "human_score": pa.float64(),
             "judge_label": pa.float64(), "human_label": pa.float64()}
    columns = {c: pa.array([(r.get(c).written if isinstance(r.get(c), Id) else r.get(c)) for r in rows], types[c])
               for c in present}
    return parquet_bytes(pa.table(columns), draw)


# ----------------------------------------------------------------------------------------------
# Base files from the samples, in every format.


def _head(path: Path, lines: int) -> bytes:
    with open(path, "rb") as handle:
        return b"".join(handle.readline() for _ in range(lines))


def _trec_rows(data: bytes, kind: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in data.decode("utf-8").splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        rows.append((fields[0], fields[2], fields[4] if kind == "run" else fields[3]))
    return rows


def _convert_ranked(rows, kind: str, fmt: str) -> bytes:
    """Sample rows (text) written in another format, plainly."""
    value = "score" if kind == "run" else "relevance"
    if fmt in ("csv", "tsv"):
        return _csv_text([["query_id", "doc_id", value]] + [list(r) for r in rows], "," if fmt == "csv" else "\t",
                         csv.QUOTE_MINIMAL, "\n").encode("utf-8")
    if fmt == "json":
        groups: dict[str, list] = {}
        for q, d, v in rows:
            groups.setdefault(q, []).append((d, v))
        return ("{" + ",\n".join(json.dumps(q) + ": {" + ", ".join(f"{json.dumps(d)}: {float(v)!r}" for d, v in docs) + "}"
                                 for q, docs in groups.items()) + "}").encode("utf-8")
    if fmt == "jsonl":
        return "".join(json.dumps({"query_id": q, "doc_id": d, value: float(v) if kind == "run" else int(v)}) + "\n"
                       for q, d, v in rows).encode("utf-8")
    if fmt == "parquet":
        return parquet_bytes(pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                                       value: pa.array([float(r[2]) for r in rows])}))
    raise AssertionError(fmt)


def _record_rows(path: Path, lines: int) -> list[dict]:
    return [json.loads(line) for line in _head(path, lines).splitlines() if line.strip()]


def _flat_for_csv(rows: list[dict]) -> bytes:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    table = [keys]
    for r in rows:
        cells = []
        for k in keys:
            v = r.get(k)
            if v is None:
                cells.append("")
            elif isinstance(v, bool):
                cells.append("true" if v else "false")
            elif isinstance(v, (list, dict)):
                cells.append(json.dumps(v))
            else:
                cells.append(str(v))
        table.append(cells)
    return _csv_text(table, ",", csv.QUOTE_MINIMAL, "\n").encode("utf-8")


@functools.lru_cache(maxsize=None)
def bases(kind: str, fmt: str) -> tuple[tuple[str, bytes], ...]:
    """Named base files for ``kind`` in ``fmt``, made from the samples (small heads, and a whole file)."""
    if kind in ("run", "qrels"):
        if kind == "run":
            sources = [("cranfield/run_bm25.trec", SAMPLE / "cranfield" / "run_bm25.trec"),
                       ("trec_eval/results.test", TREC_EVAL / "results.test"),
                       ("trec_eval/results.comment.test", TREC_EVAL / "results.comment.test"),
                       ("trec_eval/results.trunc", TREC_EVAL / "results.trunc")]
        else:
            sources = [("cranfield/qrels.trec", SAMPLE / "cranfield" / "qrels.trec"),
                       ("trec_eval/qrels.test", TREC_EVAL / "qrels.test"),
                       ("trec_eval/qrels.comment.test", TREC_EVAL / "qrels.comment.test"),
                       ("trec_eval/qrels.test.with-comments", TREC_EVAL / "qrels.test.with-comments")]
        out = []
        for label, path in sources:
            head = _head(path, 40)
            out.append((f"{label} (40 lines)", head if fmt == "trec" else _convert_ranked(_trec_rows(head, kind), kind, fmt)))
        label, path = sources[0]
        whole = path.read_bytes()
        out.append((f"{label} (whole)", whole if fmt == "trec" else _convert_ranked(_trec_rows(whole, kind), kind, fmt)))
        return tuple(out)
    if kind == "judgements":
        return _judgement_bases(fmt)
    files = [("llmperf_requests", 6), ("ragchecker_examples", 3), ("ragchecker_human_systems", 3), ("ragtruth_qa", 3)]
    out = []
    for stem, lines in files:
        path = SAMPLE / "rag" / f"{stem}.jsonl"
        rows = _record_rows(path, lines)
        if fmt == "jsonl":
            data = _head(path, lines)
        elif fmt == "json":
            data = json.dumps(rows, ensure_ascii=False).encode("utf-8")
        elif fmt in ("csv", "tsv"):
            if stem == "ragchecker_examples":
                continue  # RAGChecker's nested lists have no CSV form
            data = _flat_for_csv(rows)
            if fmt == "tsv":
                parsed = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
                data = _csv_text(parsed, "\t", csv.QUOTE_MINIMAL, "\n").encode("utf-8")
        else:
            data = parquet_bytes(pa.Table.from_pylist(rows))
        out.append((f"rag/{stem}.jsonl ({lines} lines as {fmt})", data))
    if fmt == "jsonl":
        out.append(("rag/ragchecker_examples.jsonl (whole)", (SAMPLE / "rag" / "ragchecker_examples.jsonl").read_bytes()))
        out.append(("rag/llmperf_requests.jsonl (whole)", (SAMPLE / "rag" / "llmperf_requests.jsonl").read_bytes()))
    return tuple(out)


def _judgement_bases(fmt: str) -> tuple[tuple[str, bytes], ...]:
    """The calibration samples (sample_data/calibration: RAGTruth, ARES, ALCE), 40 lines of each and
    the whole ARES file, in ``fmt``."""
    out = []
    for stem, lines in (("ragtruth_claim_support", 40), ("ares_labels", 40), ("alce_utility", 40), ("ares_labels", 0)):
        path = SAMPLE / "calibration" / f"{stem}.csv"
        text = path.read_bytes() if not lines else _head(path, lines)
        rows = list(csv.DictReader(io.StringIO(text.decode("utf-8"))))
        label = f"calibration/{stem}.csv ({lines or 'whole'} lines as {fmt})"
        if fmt == "csv":
            data = text
        elif fmt == "tsv":
            table = list(csv.reader(io.StringIO(text.decode("utf-8"))))
            data = _csv_text(table, "\t", csv.QUOTE_MINIMAL, "\n").encode("utf-8")
        else:
            typed = [{k: _typed_cell(k, v) for k, v in row.items()} for row in rows]
            if fmt == "jsonl":
                data = "".join(json.dumps(r) + "\n" for r in typed).encode("utf-8")
            elif fmt == "json":
                data = json.dumps(typed).encode("utf-8")
            else:
                data = parquet_bytes(pa.Table.from_pylist(typed))
        out.append((label, data))
    return tuple(out)


def _typed_cell(column: str, value: str):
    if value == "":
        return None
    if column == "item":
        return int(value)
    if column in ("judge_score", "judge_label", "human_label", "human_score"):
        return float(value)
    return value


# ----------------------------------------------------------------------------------------------
# Mutations.

HOSTILE = [
    b"\x00", b"\xff", b"\r", b"\n", b"\r\n", b'"', b"'", b"[", b"]", b"{", b"}", b",", b"\t", b" ", b"#", b"\\", b":",
    b"null", b"true", b"NaN", b"nan", b"-Infinity", b"inf", b"1e400", b"-1e400", b"1e-400", str(10**400).encode(),
    b"9" * 4000, b"9" * 5000, b"0." + b"0" * 400 + b"1", b"1" * 25, b"-0", b"+", b"e", b".", b"1e", b"1_0", b"0x1p3",
    b"[" * 70, b"[" * 5000, b"[" * 200_000, b'{"a":' * 100, b"]" * 100, b"}" * 100,
    b"\xef\xbb\xbf", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x80\xa8", b"\xc2\x85", b"\x0b", b"\x1c",
    b"\\ud800", b'"\\ud800"', b'"\\udc00\\ud800"', b"\\u0000", b"\x1f\x8b\x08", b"PAR1", b"Q0", b"2020-01-01",
    b'"2020-01-01"', b"=cmd|' /C calc'!A0", b'{"query_id": null}', b'"a":1,"a":2', b"\n#\n", b"\n\n",
    b"x" * 70_000,
]

_POSITION = st.integers(0, 2**31)


def _op():
    payload = st.one_of(st.sampled_from(HOSTILE), st.binary(min_size=1, max_size=8))
    return st.one_of(
        st.tuples(st.just("flip"), _POSITION, st.integers(1, 255)),
        st.tuples(st.just("truncate"), _POSITION),
        st.tuples(st.just("insert"), _POSITION, payload),
        st.tuples(st.just("replace"), _POSITION, st.integers(1, 16), payload),
        st.tuples(st.just("delete"), _POSITION, st.integers(1, 64)),
        st.tuples(st.just("dup_line"), _POSITION),
        st.tuples(st.just("del_line"), _POSITION),
        st.tuples(st.just("swap_lines"), _POSITION, _POSITION),
    )


WRAPS = ["plain"] * 6 + ["gzip", "gzip_truncated", "gzip_flipped", "gzip_garbage_after", "gzip_two_members",
                         "gzip_of_gzip", "gzip_original_truncated"]


def mutations(max_ops: int = MAX_MUTATIONS, wraps: bool = True):
    """A recipe: a list of edits and a wrapper (see :func:`apply`)."""
    wrap = st.tuples(st.sampled_from(WRAPS), _POSITION, st.integers(1, 255)) if wraps else st.just(("plain", 0, 0))
    return st.tuples(st.lists(_op(), min_size=1, max_size=max_ops), wrap)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def apply_op(data: bytes, op: tuple) -> bytes:
    name = op[0]
    n = len(data)
    if name == "flip":
        if not n:
            return data
        i = op[1] % n
        return data[:i] + bytes([data[i] ^ op[2]]) + data[i + 1:]
    if name == "truncate":
        return data[: op[1] % (n + 1)]
    if name == "insert":
        i = op[1] % (n + 1)
        return data[:i] + op[2] + data[i:]
    if name == "replace":
        i = op[1] % (n + 1)
        return data[:i] + op[3] + data[i + op[2]:]
    if name == "delete":
        i = op[1] % (n + 1)
        return data[:i] + data[i + op[2]:]
    lines = _lines(data)
    i = op[1] % len(lines)
    if name == "dup_line":
        line = lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"
        return b"".join(lines[:i] + [line] + lines[i:])
    if name == "del_line":
        return b"".join(lines[:i] + lines[i + 1:])
    if name == "swap_lines":
        j = op[2] % len(lines)
        lines[i], lines[j] = lines[j], lines[i]
        return b"".join(lines)
    raise AssertionError(name)


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def apply(data: bytes, recipe) -> bytes:
    ops, (wrap, position, flip) = recipe
    original = data
    for op in ops:
        data = apply_op(data, op)
    if wrap == "plain":
        return data
    if wrap == "gzip":
        return _gzip(data)
    if wrap == "gzip_truncated":
        packed = _gzip(data)
        return packed[: position % len(packed)]
    if wrap == "gzip_flipped":
        packed = _gzip(data)
        i = position % len(packed)
        return packed[:i] + bytes([packed[i] ^ flip]) + packed[i + 1:]
    if wrap == "gzip_garbage_after":
        return _gzip(data) + bytes([flip]) * (1 + position % 7)
    if wrap == "gzip_two_members":
        return _gzip(original) + _gzip(data)
    if wrap == "gzip_of_gzip":
        return _gzip(_gzip(data))
    if wrap == "gzip_original_truncated":
        packed = _gzip(original)
        return packed[: position % len(packed)]
    raise AssertionError(wrap)


def with_comment_line(data: bytes) -> bytes:
    """The same TREC file with a comment line in front (after a byte-order mark, if any)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[:3] + b"# fuzz: a comment line\n" + data[3:]
    return b"# fuzz: a comment line\n" + data


FORCE_SLOW = b'"zz_force_slow_path": [0, "x"]'


def with_slow_path_field(data: bytes) -> bytes | None:
    """JSONL with a field pyarrow's JSON reader refuses (a list of mixed types) added to the
    first object, so the line-by-line reader reads the file; None if there is no first object."""
    start = len(data) - len(data.lstrip())
    if data[start:start + 1] != b"{":
        return None
    rest = data[start + 1:]
    joiner = b"" if rest.lstrip()[:1] in (b"}", b"") else b", "
    return data[:start + 1] + FORCE_SLOW + joiner + rest
