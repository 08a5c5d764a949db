"""One run and one qrels, generated, written in every format the readers take (TREC, CSV, TSV,
JSON, JSONL, Parquet, each also gzip-compressed): every format must give the same ids and the same
metrics, to the last bit, as the TREC file (issue 29; the id rule is docs/conventions.md "Ids in
every format").

Ids are drawn from characters that made formats disagree before the rule (U+00A0, U+2003, U+1680,
U+3000, U+200B, U+0085, U+001C..U+001F), characters a delimited format must quote (',', '"',
tab-free punctuation), digits with leading zeros (a CSV reader must not read them as numbers) and
non-ASCII letters; outside TREC an id may carry ASCII whitespace around it, which the rule trims.
TREC cannot hold ASCII whitespace inside an id, so no id has any.

EVALSUITE_ROUND_TRIP_EXAMPLES (default 30) sets the number of generated pairs; the figure reported
for issue 29 is a run of 1,000.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalsuite as es

FORMATS = ("trec", "csv", "tsv", "json", "jsonl", "parquet")
METRICS = ["map", "ndcg@10", "ndcg", "P@5", "recip_rank", "recall@100", "num_ret", "num_rel_ret", "bpref",
           "Rprec"]
EXAMPLES = int(os.environ.get("EVALSUITE_ROUND_TRIP_EXAMPLES") or 30)

_CHARACTERS = list("abcXYZ019é中,\"'=#-._:;|/\\") + ["\u00a0", "\u2003", "\u1680", "\u3000", "\u200b", "\x85", "\x1c",
                                                     "\x1d", "\x1e", "\x1f", "\u2028"]
_ID = st.text(st.sampled_from(_CHARACTERS), min_size=1, max_size=6).filter(lambda t: not t.startswith("#"))
_SCORE = st.one_of(st.floats(-1e9, 1e9, allow_nan=False, width=64), st.sampled_from([0.0, 1.0, 0.5, -2.0, 1e-300]))


@st.composite
def run_and_qrels(draw):
    """({query: {doc: score}}, {query: {doc: grade}}) with 1-4 queries of 1-6 docs."""
    queries = draw(st.lists(_ID, min_size=1, max_size=4, unique=True))
    docs = draw(st.lists(_ID, min_size=1, max_size=8, unique=True))
    run, qrels = {}, {}
    for query in queries:
        ranked = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=6, unique=True))
        run[query] = {doc: draw(_SCORE) for doc in ranked}
        judged = draw(st.lists(st.sampled_from(docs), min_size=0, max_size=6, unique=True))
        if judged:
            qrels[query] = {doc: draw(st.integers(-1, 3)) for doc in judged}
    if not qrels:
        qrels[queries[0]] = {docs[0]: 1}
    return run, qrels


def _rows(mapping) -> list[tuple[str, str, float]]:
    return [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]


def _write(fmt: str, kind: str, mapping, pad) -> bytes:
    value = "score" if kind == "run" else "relevance"
    rows = _rows(mapping)
    if fmt == "trec":
        if kind == "run":
            return "".join(f"{q} Q0 {d} {i + 1} {s!r} sys\n" for i, (q, d, s) in enumerate(rows)).encode()
        return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows).encode()
    padded = [(pad() + q + pad(), pad() + d + pad(), v) for q, d, v in rows]
    if fmt in ("csv", "tsv"):
        out = io.StringIO()
        writer = csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n",
                            quoting=csv.QUOTE_NONNUMERIC if kind == "run" else csv.QUOTE_MINIMAL)
        writer.writerow(["query_id", "doc_id", value])
        writer.writerows([(q, d, v) for q, d, v in padded])
        return out.getvalue().encode()
    if fmt == "json":
        document: dict = {}
        for q, d, v in padded:
            document.setdefault(q, {})[d] = v
        return json.dumps(document, ensure_ascii=False).encode()
    if fmt == "jsonl":
        return "".join(json.dumps({"query_id": q, "doc_id": d, value: v}) + "\n" for q, d, v in padded).encode()
    sink = io.BytesIO()
    values = pa.array([v for _, _, v in padded], pa.float64() if kind == "run" else pa.int64())
    pq.write_table(pa.table({"query_id": [q for q, _, _ in padded], "doc_id": [d for _, d, _ in padded],
                             value: values}), sink)
    return sink.getvalue()


def _read(kind: str, fmt: str, data: bytes, compressed: bool):
    reader = es.read_run if kind == "run" else es.read_qrels
    name = f"{kind}.{fmt}" + (".gz" if compressed else "")
    return reader(gzip.compress(data, mtime=0) if compressed else data, format=fmt, source_name=name)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(run_and_qrels(), st.randoms(use_true_random=False))
def test_a_run_and_qrels_score_the_same_in_every_format(pair, random):
    run_map, qrels_map = pair

    def pad() -> str:
        return random.choice(["", "", "", " ", "\t", "  ", " \x0b", "\x0c"])

    baseline = None
    for fmt in FORMATS:
        run_data, qrels_data = _write(fmt, "run", run_map, pad), _write(fmt, "qrels", qrels_map, pad)
        for compressed in (False, True):
            label = fmt + (".gz" if compressed else "")
            run, qrels = _read("run", fmt, run_data, compressed), _read("qrels", fmt, qrels_data, compressed)
            assert set(run.query_ids.tolist()) == set(run_map), label
            assert set(qrels.query_ids.tolist()) == set(qrels_map), label
            for query, docs in qrels_map.items():
                assert qrels.query(query) == {d: float(g) for d, g in docs.items()}, f"{label}: qrels of {query!r}"
            for query, docs in run_map.items():
                frame = run.query(query)
                assert dict(zip(frame["doc_id"].tolist(), frame["score"].tolist())) == docs, f"{label}: {query!r}"
            per_query = es.evaluate(qrels, run, metrics=METRICS).per_query
            if baseline is None:
                baseline = per_query
            else:
                pd.testing.assert_frame_equal(per_query, baseline, check_exact=True, obj=f"{label} against trec")
