"""Traces to records (evalsuite.read_traces): OTLP JSON and protobuf written by the real OpenTelemetry
SDK (tests/trace_pipeline.py, encoded by opentelemetry-exporter-otlp-proto-common), Phoenix's spans
exports written by arize-phoenix itself (tests/data/traces), and broken traces.

The expected values are the pipeline's own: the stage durations it gave the SDK, the documents
its reranker kept, the spans it failed. Phoenix's exports went through Phoenix's server and
dataframe code, so reading them and reading the SDK's OTLP must agree field by field.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

import evalsuite as es
from evalsuite.io.traces import detect_traces_format

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import trace_pipeline as tp  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
PHOENIX = ("phoenix_spans.parquet", "phoenix_spans.csv", "phoenix_spans.jsonl")


@pytest.fixture(scope="module")
def request_message():
    return tp.export_request(tp.record_spans("rag-v1"))


@pytest.fixture(scope="module")
def otlp_json(request_message) -> bytes:
    return (tp.collector_json(request_message) + "\n").encode()


def rows(records) -> dict:
    return {row["query_id"]: row for row in records.table.to_pylist()}


def test_sdk_traces_as_otlp_json_give_one_record_per_trace(otlp_json):
    records = es.read_traces(otlp_json, source_name="traces.jsonl")
    assert records.systems == ["rag-v1"]  # the resource's service.name
    assert records.warnings == []
    got = rows(records)
    assert sorted(got) == ["q1", "q2", "q3", "q4", "q5"]  # query ids from the root's metadata
    for index, query in enumerate(("q1", "q5")):
        index = 0 if query == "q1" else 4
        for field, value in tp.expected_latencies(index).items():
            assert got[query][field] == pytest.approx(value, abs=1e-9), (query, field)
    q1 = tp.REQUESTS[0]
    assert got["q1"]["question"] == q1.question and got["q1"]["answer"] == q1.answer
    assert got["q1"]["reference"] == q1.reference
    # Contexts after the reranker: its two best documents, with its scores (retriever score + 1).
    assert got["q1"]["context_ids"] == ["doc-7", "doc-2"]
    assert got["q1"]["contexts"] == [q1.documents[0][1], q1.documents[1][1]]
    assert got["q1"]["context_scores"] == pytest.approx([1.91, 1.42])
    assert (got["q1"]["prompt_tokens"], got["q1"]["completion_tokens"], got["q1"]["total_tokens"]) == (420, 30, 450)
    assert got["q1"]["success"] is True and got["q1"]["failed_span_kind"] is None


def test_the_failed_span_is_where_the_error_began(otlp_json):
    records = es.read_traces(otlp_json, source_name="traces.jsonl")
    got = rows(records)
    # q2: the tool timed out and the pipeline went on (root OK): handled, the request succeeded (Phoenix's
    # trace status is the root's); q3: the LLM failed and the root with it; q4: the retriever failed first,
    # the root after it.
    assert {q: got[q]["success"] for q in got} == {"q1": True, "q2": True, "q3": False, "q4": False, "q5": True}
    assert {q: got[q]["failed_span_kind"] for q in ("q2", "q3", "q4")} == {"q2": None, "q3": "LLM", "q4": "RETRIEVER"}
    assert got["q2"]["error"] == ("handled, the request went on: TOOL span 'web_search' in error: "
                                  "TimeoutError: web_search timed out after 60 ms")
    assert got["q3"]["answer"] is None  # the failed LLM wrote none
    assert got["q4"]["latency_ms"] == pytest.approx(130.0) and got["q4"]["latency_retrieval_ms"] == pytest.approx(120.0)
    assert got["q4"]["latency_llm_ms"] is None and got["q4"]["contexts"] is None
    stages = es.attribute_failures(records).set_index("query_id")
    assert stages.loc[["q3", "q4"], "stage"].tolist() == ["generation", "retrieval"]
    assert set(stages.loc[["q3", "q4"], "rule"]) == {"span in error"}
    assert stages.loc[["q1", "q2", "q5"], "failed"].tolist() == [False, False, False]


def test_protobuf_and_protojson_read_as_the_collector_json(request_message, otlp_json):
    from google.protobuf.json_format import MessageToJson

    expected = es.read_traces(otlp_json, source_name="t").table
    prefixed = tp.collector_proto([request_message])
    assert detect_traces_format(prefixed) == "otlp-proto"
    assert es.read_traces(prefixed, source_name="t").table.equals(expected)
    assert es.read_traces(request_message.SerializeToString(), source_name="t.pb").table.equals(expected)
    # protobuf's own JSON mapping (base64 ids, enum names), one message per line
    protojson = MessageToJson(request_message, indent=None).encode() + b"\n"
    assert es.read_traces(protojson, source_name="t").table.equals(expected)
    assert es.read_traces(gzip.compress(otlp_json), source_name="t.jsonl.gz").table.equals(expected)


def test_one_file_with_two_services_gives_two_systems(otlp_json):
    other = tp.collector_json(tp.export_request(tp.record_spans("rag-v2", tp.REQUESTS[:2]))).encode()
    records = es.read_traces(otlp_json + other + b"\n", source_name="both.jsonl")
    assert records.systems == ["rag-v1", "rag-v2"]
    assert len(records.for_system("rag-v2")) == 2


@pytest.mark.parametrize("name", PHOENIX)
def test_phoenix_exports_read_as_the_sdk_traces(name, otlp_json):
    phoenix = rows(es.read_traces(DATA / name))
    sdk = rows(es.read_traces(otlp_json, source_name="t"))
    assert sorted(phoenix) == sorted(sdk)
    fields = ["question", "answer", "reference", "contexts", "context_ids", "latency_ms", "latency_retrieval_ms",
              "latency_rerank_ms", "latency_tool_ms", "latency_llm_ms", "success", "failed_span_kind", "prompt_tokens",
              "completion_tokens", "total_tokens"]
    for query in sdk:
        for field in fields:
            # Phoenix's JSONL export has millisecond times (pandas' to_json): durations agree to 1 ms.
            if isinstance(sdk[query][field], float):
                assert phoenix[query][field] == pytest.approx(sdk[query][field], abs=1.0), (query, field)
            else:
                assert phoenix[query][field] == sdk[query][field], (query, field)


@pytest.mark.parametrize("name", PHOENIX)
def test_phoenix_evaluations_are_given_scores(name):
    records = es.read_traces(DATA / name)
    assert records.score_columns == ["qa_correctness"]
    got = rows(records)
    # make_phoenix_fixture.py's CORRECT, logged as span annotations and exported as eval.QA Correctness.*
    assert {q: got[q]["qa_correctness"] for q in got} == {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 0.0, "q5": 1.0}
    assert got["q3"]["qa_correctness_label"] == "incorrect"
    report = es.evaluate_records(records)
    assert "qa_correctness" in report.per_query.columns or "qa_correctness" in records.score_columns


def test_prices_give_cost_and_root_name_one_record_per_span(otlp_json):
    records = es.read_traces(otlp_json, source_name="t", prices={"gpt-4o-mini": (0.15, 0.60)})
    got = rows(records)
    assert got["q1"]["cost"] == pytest.approx((420 * 0.15 + 30 * 0.60) / 1e6)
    per_span = es.read_traces(otlp_json, source_name="t", root_name="generate")
    # One record per LLM span (q4 has none): its duration end to end.
    assert len(per_span) == 4
    assert sorted(per_span.table.column("latency_ms").to_pylist()) == [800.0, 810.0, 820.0, 840.0]
    with pytest.raises(es.EvalSuiteError, match="no span is named 'nope'.*'generate'"):
        es.read_traces(otlp_json, source_name="t", root_name="nope")
    with pytest.raises(es.EvalSuiteError, match="two numbers"):
        es.read_traces(otlp_json, source_name="t", prices={"gpt-4o-mini": (1.0,)})


def test_isolated_reading_equals_in_process(otlp_json):
    assert es.read_traces(otlp_json, source_name="t", isolate=True).table.equals(
        es.read_traces(otlp_json, source_name="t").table)


# ----------------------------------------------------------------------------------------------
# Broken traces: reported, never a crash.


def _line(spans: list[dict], service: str = "svc") -> bytes:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": service}}]}, "scopeSpans": [{"spans": spans}]}]}).encode() + b"\n"


def _span(span_id: str, parent: str = "", trace: str = "a" * 32, start: int = 0, end: int = 10**9, **extra) -> dict:
    return {"traceId": trace, "spanId": span_id, "parentSpanId": parent, "name": f"s{span_id[:2]}",
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), **extra}


def test_orphans_cycles_missing_roots_and_clock_skew_are_reported():
    ids = {name: f"{i:016x}" for i, name in enumerate("abcdefgh", start=1)}
    spans = [
        _span(ids["a"]),                                                   # root of trace 1
        _span(ids["b"], ids["a"], start=-0 + 5 * 10**8, end=2 * 10**9),    # ends after its parent: skew
        _span(ids["c"], "ffffffffffffffff"),                               # orphan in trace 1
        _span(ids["d"], ids["e"], trace="b" * 32),                         # trace 2: d and e a cycle,
        _span(ids["e"], ids["d"], trace="b" * 32),
        _span(ids["f"], "eeeeeeeeeeeeeeee", trace="c" * 32, start=10, end=5),  # trace 3: no root; ends first
    ]
    records = es.read_traces(_line(spans), source_name="broken.jsonl")
    text = " ".join(records.warnings)
    assert "orphan" in text and "clock skew" in text and "cycle" in text and "no root span" in text
    assert "end before they start" in text
    problems = dict(zip(records.table.column("trace_id").to_pylist(), records.table.column("trace_problems").to_pylist()))
    assert "orphan" in problems["a" * 32] and "clock skew" in problems["a" * 32]
    assert "stands in" in problems["c" * 32]
    assert "b" * 32 not in problems  # a trace made only of a cycle has no span to make a record from
    assert records.table.column("latency_ms").to_pylist() == [1000.0, None]


@pytest.mark.parametrize("span, field", [
    (_span("xyz"), "spanId"),
    (_span("0" * 16), "spanId"),
    (_span("1" * 16, trace="q" * 32), "traceId"),
    (_span("1" * 16, start="soon"), "startTimeUnixNano"),
    (_span("1" * 16, status={"code": 7}), "status.code"),
    (_span("1" * 16, attributes=[{"key": "k", "value": {"weird": 1}}]), "attributes.k"),
    (_span("1" * 16, attributes=[{"key": "k", "value": {"intValue": "9" * 30}}]), "attributes.k"),
])
def test_a_bad_span_names_file_line_span_and_field(span, field):
    data = _line([_span("2" * 16)]) + _line([span])
    with pytest.raises(es.EvalSuiteError) as caught:
        es.read_traces(data, source_name="bad.jsonl")
    error = caught.value
    assert (error.source, error.line, error.field) == ("bad.jsonl", 2, field), str(error)
    if field != "spanId":
        assert "span 1111111111111111" in str(error)


def test_not_a_trace_file_and_detection(request_message):
    assert detect_traces_format(b'{"query_id": "q1", "latency_ms": 3}\n') is None
    assert detect_traces_format((DATA / "phoenix_spans.parquet").read_bytes()) == "phoenix"
    assert detect_traces_format(b"q1 Q0 d1 1 2.5 bm25\n") is None
    with pytest.raises(es.EvalSuiteError, match="not a trace file"):
        es.read_traces(b'{"query_id": "q1"}\n', source_name="r.jsonl")
    cut = tp.collector_proto([request_message, request_message])[:-10]
    with pytest.raises(es.EvalSuiteError, match="message 2 says it has .* bytes; the file ends first"):
        es.read_traces(cut, source_name="cut.pb")
    with pytest.raises(es.EvalSuiteError, match="not an OTLP ExportTraceServiceRequest"):
        es.read_traces(b"\x0a\xff\xff\xff\x0f", source_name="bad.pb", format="otlp-proto")


def test_phoenix_evaluation_names_map_as_the_phoenix_evals_reader_maps_them():
    """Evaluations on a root span are kept under the field the registry's Phoenix export names give
    (the map records.vendors uses for phoenix.evals frames): Phoenix's document relevance is context
    relevance; a name the registry does not know keeps its own snake-case name."""
    from evalsuite.records.traces import Span, records_from_spans

    root = Span(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="rag", kind="CHAIN",
                start_ns=0, end_ns=5_000_000, attributes={
                    "input.value": "q?", "output.value": "a.", "eval.Document Relevance.score": 0.5,
                    "eval.Hallucination.score": 1.0, "eval.Faithfulness.score": 0.0, "eval.Tone.score": 0.25})
    records = records_from_spans([root], source="t.jsonl", system="s")
    row = records.table.to_pylist()[0]
    assert (row["context_relevance"], row["hallucination"], row["faithfulness"], row["tone"]) == (0.5, 1.0, 0.0, 0.25)
    assert records.score_columns == ["tone"]
