"""The functions each registry entry names: its list function (:attr:`Metric.function`) and its
per-request kernel (:attr:`Metric.kernel`).

The entries name their functions by dotted path, so the registry (pure data, read by name parsing
and the ranking kernel) imports no metric code; this module, at the top of the metrics package,
imports every metric module and resolves the names. Nothing in the package imports it back.

Examples
--------
>>> from evalsuite.metrics.registry import METRICS
>>> list_function(METRICS["faithfulness"])([[True, None, False]])
Score(faithfulness=0.5000, n=1, coverage=1.000)
>>> kernel(METRICS["faithfulness"])([[True, None, False], [None]]).tolist()
[0.5, nan]
>>> kernel(METRICS["ndcg_burges"]).__qualname__
'RankingKernel.ndcg'
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import EvalSuiteError
from . import answer, citation, context, correctness, operational, ranking, ranking_kernel
from .entry import Metric

__all__ = ["list_function", "kernel", "resolve"]

# Every public function of the metric modules, by the dotted path of its definition.
_MODULES = (answer, citation, context, correctness, operational, ranking)
_DEFINED = {f"{module.__name__}.{name}": getattr(module, name) for module in _MODULES for name in module.__all__}
_DEFINED.update({f"{ranking_kernel.__name__}.RankingKernel.{name}": getattr(ranking_kernel.RankingKernel, name)
                 for name in vars(ranking_kernel.RankingKernel) if not name.startswith("_") and name != "compute"})
# The list functions by their public name on the package root (``evalsuite.ndcg_at_k``), as entries give them.
_PUBLIC = {f"evalsuite.{name}": getattr(module, name) for module in _MODULES for name in module.__all__}


def resolve(path: str) -> Callable:
    """The function (or kernel method) of a dotted path an entry gives.

    Raises
    ------
    EvalSuiteError
        No metric module defines that name.
    """
    found = _PUBLIC.get(path) or _DEFINED.get(path)
    if found is None:
        raise EvalSuiteError("no metric function of this name", field="function", value=path)
    return found


def list_function(entry: Metric) -> Callable:
    """The entry's public list function (``evalsuite.ndcg_at_k``, ``evalsuite.faithfulness`` ...)."""
    return resolve(entry.function)


def kernel(entry: Metric) -> Callable:
    """The entry's per-request kernel: a function of the input columns for RAG and operational
    metrics, a method of :class:`~evalsuite.metrics.ranking_kernel.RankingKernel` for ranking ones."""
    return resolve(entry.kernel)
