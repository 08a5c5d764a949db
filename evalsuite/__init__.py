"""EvalSuite: retrieval and RAG evaluation that matches trec_eval and ranx to the last digit.

``import evalsuite as es`` gives the whole public API:

- list form: :func:`precision_at_k`, :func:`recall_at_k`, :func:`hit_rate_at_k`, :func:`mrr`,
  :func:`mean_average_precision_at_k`, :func:`ndcg_at_k`;
- the metric registry: :data:`METRICS` (every metric's names, definition, source, conventions and
  test vectors; ``docs/metrics.md`` is generated from it) and :func:`metric_info`;
- files and tables: :func:`read_run`, :func:`read_qrels`, :func:`evaluate`;
- RAG and operational metrics: :func:`context_precision`, :func:`context_recall`,
  :func:`context_relevance`, :func:`faithfulness`, :func:`answer_correctness`,
  :func:`citation_recall`, :func:`citation_precision`, :func:`latency_summary`,
  :func:`task_success_rate`, :func:`failure_attribution`;
- per-request records: :func:`read_records`, :func:`evaluate_records`;
- every error is an :class:`EvalSuiteError` naming file, line, field and value; readers take
  :class:`ReadLimits` and ``isolate=True`` (a worker process with a time and memory cap).

This package never imports streamlit.
"""

from ._registry import METRICS, Metric
from .data import Qrels, Run
from .errors import EvalSuiteError, ReaderStopped
from ._evaluate import DEFAULT_METRICS, EvaluationReport, evaluate
from .io import FORMATS, detect_format, read_qrels, read_run
from .limits import ReadLimits
from .metric_names import metric_info, parse_metric
from .rag import (
    FAILURE_STAGES,
    answer_correctness,
    citation_precision,
    citation_recall,
    context_precision,
    context_recall,
    context_relevance,
    failure_attribution,
    faithfulness,
    latency_summary,
    task_success_rate,
)
from .ragas import (
    answer_relevancy,
    answer_similarity,
    aspect_critique,
    context_entity_recall,
    context_relevancy,
    context_utilization,
    factual_correctness,
)
from .ranking import (
    hit_rate_at_k,
    mean_average_precision_at_k,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from ._records_eval import RecordsReport, evaluate_records
from .records import Records, concat_records, detect_records_format, read_records
from .score import Score
from ._compare import compare, compare_per_query, compare_records, ComparisonReport

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "EvalSuiteError",
    "ReaderStopped",
    "ReadLimits",
    "METRICS",
    "Metric",
    "metric_info",
    "Score",
    "Run",
    "Qrels",
    "read_run",
    "read_qrels",
    "detect_format",
    "FORMATS",
    "evaluate",
    "EvaluationReport",
    "DEFAULT_METRICS",
    "parse_metric",
    "precision_at_k",
    "recall_at_k",
    "hit_rate_at_k",
    "mrr",
    "mean_average_precision_at_k",
    "ndcg_at_k",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "answer_correctness",
    "citation_recall",
    "citation_precision",
    "latency_summary",
    "task_success_rate",
    "failure_attribution",
    "FAILURE_STAGES",
    "answer_relevancy",
    "answer_similarity",
    "factual_correctness",
    "context_entity_recall",
    "context_utilization",
    "context_relevancy",
    "aspect_critique",
    "Records",
    "RecordsReport",
    "detect_records_format",
    "read_records",
    "concat_records",
    "evaluate_records",
    "compare",
    "compare_per_query",
    "compare_records",
    "ComparisonReport",
]
