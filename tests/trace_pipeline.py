"""A small RAG pipeline instrumented with the real OpenTelemetry SDK and OpenInference attributes,
for the trace reader's tests (tests/io/test_traces.py) and the Phoenix fixture
(tests/data/traces/make_phoenix_fixture.py).

Each request is one trace: a CHAIN root ``rag_request`` (input.value = the question, output.value =
the answer, ``metadata`` = {"query_id", "reference"} as JSON), then a RETRIEVER (three documents
with id, content and score), a RERANKER (the best two), a TOOL call (``web_search``) and an LLM
(model name and token counts). Start and end times are given explicitly (the SDK takes them), so
every duration is known: retrieval 120 ms, rerank 40 ms, tool 60 ms, LLM 800 ms + 10 ms per
request index, end-to-end 1,100 ms + 10 ms per index. Failures are raised in the span as an
instrumented application would (``record_exception`` and an ERROR status):

- ``fail="tool"``: the tool call times out; the pipeline carries on without it (the root stays OK);
- ``fail="llm"``: the LLM call raises; the error propagates to the root;
- ``fail="retriever"``: the retriever raises; nothing after it runs.

Nothing here reads a trace through EvalSuite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from openinference.semconv.trace import (
    DocumentAttributes as D,
    OpenInferenceSpanKindValues as K,
    RerankerAttributes as R,
    SpanAttributes as S,
)
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

T0 = 1_700_000_000_000_000_000  # ns since the epoch: 2023-11-14
MS = 1_000_000


@dataclass(frozen=True)
class Request:
    query_id: str
    question: str
    reference: str
    answer: str
    documents: tuple[tuple[str, str, float], ...]  # (id, content, retriever score)
    fail: str | None = None


REQUESTS = (
    Request("q1", "What is the refund window?", "Refunds are possible within 30 days of delivery.",
            "You can get a refund within 30 days of delivery.",
            (("doc-7", "Items can be returned within 30 days of delivery.", 0.91),
             ("doc-2", "Shipping takes 3-5 business days.", 0.42),
             ("doc-9", "Gift cards never expire.", 0.13))),
    Request("q2", "Do you ship to Canada?", "Yes, Canadian orders take 5-7 business days.",
            "Yes, we ship to Canada in 5-7 business days.",
            (("doc-4", "Canadian orders take 5-7 business days.", 0.88),
             ("doc-2", "Shipping takes 3-5 business days.", 0.51),
             ("doc-1", "We ship to the US and Canada.", 0.47)), fail="tool"),
    Request("q3", "Can I pay with PayPal?", "Yes, PayPal is accepted at checkout.",
            "",
            (("doc-5", "We accept credit cards and PayPal.", 0.83),
             ("doc-6", "Prices include VAT.", 0.22),
             ("doc-9", "Gift cards never expire.", 0.10)), fail="llm"),
    Request("q4", "How long is the warranty?", "The warranty lasts two years.",
            "",
            (("doc-3", "Every product has a two-year warranty.", 0.95),
             ("doc-2", "Shipping takes 3-5 business days.", 0.30),
             ("doc-8", "Repairs are free during the warranty.", 0.61)), fail="retriever"),
    Request("q5", "Is there a student discount?", "Students get 10% off with a valid ID.",
            "Students get 10% off.",
            (("doc-10", "Students get 10% off with a valid ID.", 0.93),
             ("doc-11", "Discounts cannot be combined.", 0.35),
             ("doc-2", "Shipping takes 3-5 business days.", 0.05))),
)


class PipelineError(RuntimeError):
    pass


def _fail(span, exc: Exception) -> None:
    span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


def _documents(prefix: str, documents) -> dict:
    out = {}
    for i, (doc_id, content, score) in enumerate(documents):
        out[f"{prefix}.{i}.{D.DOCUMENT_ID}"] = doc_id
        out[f"{prefix}.{i}.{D.DOCUMENT_CONTENT}"] = content
        out[f"{prefix}.{i}.{D.DOCUMENT_SCORE}"] = score
    return out


def run_request(tracer, request: Request, index: int, start_ns: int) -> None:
    """Trace one request; times are ``start_ns`` plus the fixed stage durations."""
    t = start_ns
    root = tracer.start_span("rag_request", start_time=t, attributes={
        S.OPENINFERENCE_SPAN_KIND: K.CHAIN.value, S.INPUT_VALUE: request.question,
        S.METADATA: json.dumps({"query_id": request.query_id, "reference": request.reference})})
    context = trace.set_span_in_context(root)
    t += 5 * MS
    retrieve = tracer.start_span("retrieve", context=context, start_time=t, attributes={
        S.OPENINFERENCE_SPAN_KIND: K.RETRIEVER.value, S.INPUT_VALUE: request.question})
    t += 120 * MS
    if request.fail == "retriever":
        error = PipelineError("vector store unavailable")
        _fail(retrieve, error)
        retrieve.end(end_time=t)
        _fail(root, error)
        root.end(end_time=t + 5 * MS)
        return
    retrieve.set_attributes(_documents(S.RETRIEVAL_DOCUMENTS, request.documents))
    retrieve.end(end_time=t)
    ranked = sorted(request.documents, key=lambda d: -d[2])[:2]
    rerank = tracer.start_span("rerank", context=context, start_time=t, attributes={
        S.OPENINFERENCE_SPAN_KIND: K.RERANKER.value, R.RERANKER_QUERY: request.question,
        R.RERANKER_MODEL_NAME: "cross-encoder/ms-marco-MiniLM-L-6-v2", R.RERANKER_TOP_K: 2,
        **_documents(R.RERANKER_INPUT_DOCUMENTS, request.documents),
        **_documents(R.RERANKER_OUTPUT_DOCUMENTS, [(i, c, round(s + 1.0, 2)) for i, c, s in ranked])})
    t += 40 * MS
    rerank.end(end_time=t)
    tool = tracer.start_span("web_search", context=context, start_time=t, attributes={
        S.OPENINFERENCE_SPAN_KIND: K.TOOL.value, S.TOOL_NAME: "web_search", S.INPUT_VALUE: request.question})
    t += 60 * MS
    if request.fail == "tool":
        _fail(tool, TimeoutError("web_search timed out after 60 ms"))  # the pipeline carries on without it
    else:
        tool.set_attribute(S.OUTPUT_VALUE, "no results")
    tool.end(end_time=t)
    llm = tracer.start_span("generate", context=context, start_time=t, attributes={
        S.OPENINFERENCE_SPAN_KIND: K.LLM.value, S.LLM_MODEL_NAME: "gpt-4o-mini", S.INPUT_VALUE: request.question,
        S.LLM_TOKEN_COUNT_PROMPT: 420 + index, S.LLM_TOKEN_COUNT_COMPLETION: 30 + index,
        S.LLM_TOKEN_COUNT_TOTAL: 450 + 2 * index})
    t += (800 + 10 * index) * MS
    if request.fail == "llm":
        error = PipelineError("the model returned HTTP 500")
        _fail(llm, error)
        llm.end(end_time=t)
        _fail(root, error)
        root.end(end_time=t + 5 * MS)
        return
    llm.set_attribute(S.OUTPUT_VALUE, request.answer)
    llm.end(end_time=t)
    root.set_attribute(S.OUTPUT_VALUE, request.answer)
    root.set_status(Status(StatusCode.OK))
    root.end(end_time=t + 75 * MS)


def record_spans(service: str, requests=REQUESTS, start_ns: int = T0, exporter=None, resource_extra=None):
    """Trace ``requests`` one after another under ``service.name`` = ``service`` (and any other
    resource attributes in ``resource_extra``); returns the finished SDK spans
    (``ReadableSpan``), in the order they ended (none when ``exporter`` sends them elsewhere)."""
    exporter = exporter or InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service, **(resource_extra or {})}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("evalsuite.tests.trace_pipeline")
    for index, request in enumerate(requests):
        run_request(tracer, request, index, start_ns + index * 2_000 * MS)
    provider.force_flush()
    spans = list(exporter.get_finished_spans()) if hasattr(exporter, "get_finished_spans") else []
    provider.shutdown()
    return spans


def expected_latencies(index: int) -> dict:
    """The stage durations (ms) of request ``index`` when nothing fails."""
    return {"latency_ms": 1_100.0 + 10 * index, "latency_retrieval_ms": 120.0, "latency_rerank_ms": 40.0,
            "latency_tool_ms": 60.0, "latency_llm_ms": 800.0 + 10 * index}


# ----------------------------------------------------------------------------------------------
# Encoding as the exporters write files.


def export_request(spans):
    """The spans as one OTLP ``ExportTraceServiceRequest`` (protobuf message), encoded by
    opentelemetry-exporter-otlp-proto-common as the OTLP exporters send it."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(spans)


def collector_json(message) -> str:
    """One ``ExportTraceServiceRequest`` as the Collector's file exporter writes a line (OTLP/JSON,
    opentelemetry-proto's "JSON Protobuf Encoding"): protobuf's JSON mapping with the OTLP
    exceptions - trace and span ids as hex, not base64; enums as integers."""
    import base64

    from google.protobuf.json_format import MessageToDict

    document = MessageToDict(message, use_integers_for_enums=True)

    def hex_ids(node):
        if isinstance(node, dict):
            return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") else hex_ids(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [hex_ids(v) for v in node]
        return node

    return json.dumps(hex_ids(document), separators=(",", ":"))


def collector_proto(messages) -> bytes:
    """Messages as the Collector's file exporter writes them with ``format: proto``: each
    serialised message preceded by its length as a 4-byte big-endian unsigned integer."""
    out = bytearray()
    for message in messages:
        body = message.SerializeToString()
        out += len(body).to_bytes(4, "big") + body
    return bytes(out)
