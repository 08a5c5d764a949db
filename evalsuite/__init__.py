"""EvalSuite: retrieval and RAG evaluation that matches trec_eval and ranx to the last digit.

``import evalsuite as es`` gives the whole public API:

- list form: :func:`precision_at_k`, :func:`recall_at_k`, :func:`hit_rate_at_k`, :func:`mrr`,
  :func:`mean_average_precision_at_k`, :func:`ndcg_at_k`, and any ranking metric by name:
  :func:`ranking_metric`;
- the metric registry: :data:`METRICS` (every metric's names, definition, source, conventions and
  test vectors; ``docs/metrics.md`` is generated from it) and :func:`metric_info`;
- files and tables: :func:`read_run`, :func:`read_qrels`, :func:`evaluate`;
- RAG and operational metrics: :func:`context_precision`, :func:`context_recall`,
  :func:`context_relevance`, :func:`faithfulness`, :func:`answer_correctness`,
  :func:`citation_recall`, :func:`citation_precision`, :func:`latency_summary`,
  :func:`task_success_rate`, :func:`failure_attribution`;
- the rest of the RAGAS family: :func:`answer_relevancy`, :func:`answer_similarity`,
  :func:`factual_correctness`, :func:`context_entity_recall`, :func:`context_utilization`,
  :func:`context_relevancy`, :func:`aspect_critique` (from judgements, or texts plus a judge);
- failure stages from the judgements: :func:`attribute_failures`;
- per-request records: :func:`read_records`, :func:`evaluate_records`; traces (OTLP, Phoenix) as
  records: :func:`read_traces`;
- every error is an :class:`EvalSuiteError` naming file, line, field and value; readers take
  :class:`ReadLimits` and ``isolate=True`` (a worker process with a time and memory cap).

The packages, from the bottom up (each imports only the ones before it; ``tests/test_layering.py``
holds them to it): ``errors`` and ``score`` (the one exception type, the score that carries its
per-query values); ``utils`` (argument checks, id keys, a thread pool); ``storage`` (the workspace
store); ``metrics`` (the registry and every metric); ``records`` (per-request records: schema,
validation, evaluation); ``io`` (reading files within limits, in a worker process if asked);
``evaluation`` (``evaluate``, on one machine or Dask); ``judges``; ``stats`` (comparisons,
agreement, PPI); ``display`` (tables, figures, the HTML report); ``cli`` (the command line).

This package never imports streamlit. ``import evalsuite`` loads no numpy, pandas, pyarrow or
scipy: each public name imports its module the first time it is used (PEP 562), so the command
line and scripts that need one reader do not pay for the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

# Public name -> the module that defines it, in the order of ``__all__``. A name is imported on
# first use (``__getattr__`` below), so importing the package stays cheap.
_PUBLIC: dict[str, tuple[str, ...]] = {
    ".errors": ("EvalSuiteError", "ReaderStopped"),
    ".io.limits": ("ReadLimits",),
    ".metrics.registry": ("METRICS",),
    ".metrics.entry": ("Metric",),
    ".metrics.names": ("metric_info", "parse_metric"),
    ".score": ("Score",),
    ".io.run_qrels": ("Run", "Qrels"),
    ".io.run_files": ("read_run", "read_qrels", "detect_format", "FORMATS"),
    ".evaluation.engines": ("evaluate",),
    ".evaluation.report": ("EvaluationReport", "DEFAULT_METRICS"),
    ".metrics.ranking": ("precision_at_k", "recall_at_k", "hit_rate_at_k", "mrr",
                         "mean_average_precision_at_k", "ndcg_at_k", "ranking_metric"),
    ".metrics.context": ("context_precision", "context_recall", "context_relevance", "context_entity_recall",
                         "context_utilization", "context_relevancy"),
    ".metrics.answer": ("faithfulness", "answer_relevancy", "answer_similarity", "aspect_critique"),
    ".metrics.correctness": ("answer_correctness", "factual_correctness"),
    ".metrics.citation": ("citation_recall", "citation_precision"),
    ".metrics.operational": ("latency_summary", "task_success_rate", "failure_attribution", "FAILURE_STAGES"),
    ".records.table": ("Records", "concat_records"),
    ".io.record_files": ("detect_records_format", "read_records"),
    ".io.traces": ("read_traces", "detect_traces_format"),
    ".io.latency_tables": ("read_latency_table", "detect_latency_table", "LatencyTable"),  # noqa: E501
    ".records.evaluation": ("RecordsReport", "evaluate_records"),
    ".stats.comparison": ("compare", "compare_per_query", "compare_records"),
    ".stats.comparison_report": ("ComparisonReport",),
    ".records.attribution": ("attribute_failures", "with_attributed_failures", "ATTRIBUTION_RULES"),
}
_MODULE_OF = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = ["__version__", *_MODULE_OF]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'evalsuite' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load lazily
    from .errors import EvalSuiteError, ReaderStopped
    from .evaluation.engines import evaluate
    from .evaluation.report import DEFAULT_METRICS, EvaluationReport
    from .io.limits import ReadLimits
    from .io.record_files import detect_records_format, read_records
    from .io.latency_tables import LatencyTable, detect_latency_table, read_latency_table
    from .io.traces import detect_traces_format, read_traces
    from .io.run_files import FORMATS, detect_format, read_qrels, read_run
    from .io.run_qrels import Qrels, Run
    from .metrics.answer import answer_relevancy, answer_similarity, aspect_critique, faithfulness
    from .metrics.citation import citation_precision, citation_recall
    from .metrics.correctness import answer_correctness, factual_correctness
    from .metrics.context import (context_entity_recall, context_precision, context_recall, context_relevance,
                                  context_relevancy, context_utilization)
    from .metrics.entry import Metric
    from .metrics.names import metric_info, parse_metric
    from .metrics.operational import FAILURE_STAGES, failure_attribution, latency_summary, task_success_rate
    from .metrics.ranking import (hit_rate_at_k, mean_average_precision_at_k, mrr, ndcg_at_k, precision_at_k,
                                  ranking_metric, recall_at_k)
    from .metrics.registry import METRICS
    from .records.attribution import ATTRIBUTION_RULES, attribute_failures, with_attributed_failures
    from .records.evaluation import RecordsReport, evaluate_records
    from .records.table import Records, concat_records
    from .score import Score
    from .stats.comparison import compare, compare_per_query, compare_records
    from .stats.comparison_report import ComparisonReport
