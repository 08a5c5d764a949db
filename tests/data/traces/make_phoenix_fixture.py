"""Write the Phoenix spans exports with Phoenix itself (arize-phoenix 20.26.1 made the committed
files; run in a venv of its own: `python -m venv /tmp/phoenix && /tmp/phoenix/bin/pip install
arize-phoenix==20.26.1`, then `/tmp/phoenix/bin/python tests/data/traces/make_phoenix_fixture.py`).

The fake pipeline of tests/trace_pipeline.py (the real OpenTelemetry SDK, OpenInference
attributes) is traced into a Phoenix server started in this process (``px.launch_app``, a
temporary database, loopback only), under the project ``rag-phoenix``; one evaluation per request
(``QA Correctness``, score 1 or 0, typed in: no LLM is called) is logged as a span annotation on
its root span; then the spans are exported as a Phoenix user exports them: the client's
``get_spans_dataframe`` with the evaluations joined (``eval.<name>.score``, as
``TraceDataset.get_spans_dataframe`` names them), saved with pandas' ``to_parquet``, ``to_csv``
and ``to_json(orient="records", lines=True)``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/: trace_pipeline

os.environ.setdefault("PHOENIX_PORT", "6016")
os.environ.setdefault("PHOENIX_HOST", "127.0.0.1")
os.environ["PHOENIX_TELEMETRY_ENABLED"] = "false"

import pandas as pd  # noqa: E402
import phoenix as px  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402

import trace_pipeline  # noqa: E402

PROJECT = "rag-phoenix"
CORRECT = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 0.0, "q5": 1.0}


def main() -> None:
    session = px.launch_app(use_temp_dir=True)
    base = f"http://127.0.0.1:{os.environ['PHOENIX_PORT']}"
    from opentelemetry.sdk.resources import Resource  # noqa: F401  (the pipeline sets the resource)

    exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces")
    trace_pipeline.record_spans(PROJECT, exporter=exporter, resource_extra={"openinference.project.name": PROJECT})
    from phoenix.client import Client

    client = Client(base_url=base)
    for _ in range(60):
        frame = client.spans.get_spans_dataframe(project_identifier=PROJECT)
        if len(frame) >= 22:
            break
        time.sleep(0.5)
    roots = frame[frame["parent_id"].isna()]
    query_ids = roots["attributes.metadata"].map(lambda m: (m if isinstance(m, dict) else __import__("json").loads(m))["query_id"])
    annotations = pd.DataFrame({"span_id": roots["context.span_id"].to_numpy(),
                                "score": [CORRECT[q] for q in query_ids],
                                "label": ["correct" if CORRECT[q] else "incorrect" for q in query_ids]})
    client.spans.log_span_annotations_dataframe(dataframe=annotations, annotation_name="QA Correctness",
                                                annotator_kind="CODE")
    time.sleep(2)
    spans = client.spans.get_spans_dataframe(project_identifier=PROJECT)
    stored = client.spans.get_span_annotations_dataframe(spans_dataframe=spans, project_identifier=PROJECT)
    print(stored.reset_index().columns.tolist())
    evals = stored.reset_index().set_index("span_id")
    export = spans.copy()
    for part in ("score", "label"):
        export[f"eval.QA Correctness.{part}"] = export["context.span_id"].map(evals[f"result.{part}"])
    print(export.columns.tolist())
    export.to_parquet(HERE / "phoenix_spans.parquet")
    export.to_csv(HERE / "phoenix_spans.csv")
    export.to_json(HERE / "phoenix_spans.jsonl", orient="records", lines=True)
    session.end()


if __name__ == "__main__":
    main()
