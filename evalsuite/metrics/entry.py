"""What one metric registry entry holds: :class:`Metric` and its hand-computed :class:`TestVector`.

The entries themselves are collected in :data:`evalsuite.metrics.registry.METRICS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Metric", "TestVector", "KINDS"]

KINDS = ("ranking", "context", "answer", "operational")


@dataclass(frozen=True)
class TestVector:
    """A hand-computed case: the function's keyword arguments and the value they must give.

    For ranking metrics ``qrels`` and ``run`` are ranx-shaped dicts and ``metric`` the name given
    to :func:`evalsuite.evaluate`; the list function of the entry gets the same case as lists.
    """

    __test__ = False  # not a pytest test class, whatever its name

    arguments: Mapping[str, Any]
    expected: float
    arithmetic: str


@dataclass(frozen=True)
class Metric:
    """One registered metric.

    Attributes
    ----------
    name : str
        Canonical name (ranx's where ranx has the metric): ``ndcg``, ``context_precision`` ...
    title : str
        How people write it: ``nDCG@k``, ``Context precision``.
    kind : {"ranking", "context", "answer", "operational"}
    summary : str
        One line: what it measures.
    formula : str
        The definition, in plain text.
    aliases : mapping of str -> tuple of str
        Names of the same metric in other tools (``{"trec_eval": ("ndcg_cut_k", "ndcg")}``).
    parse_names : tuple of str
        Lower-case base names :func:`evalsuite.parse_metric` accepts before ``@k`` (ranking only).
    trec_cut, trec_whole : str or None
        trec_eval's measure prefix with a cutoff (``ndcg_cut`` for ``ndcg_cut_10``) and its name
        for the whole list (``ndcg``), when trec_eval has them.
    higher_is_better : bool
    value_range : (float, float)
        Lowest and highest value (``float("inf")`` for unbounded).
    cutoff : str
        What a cutoff k means for it ("" when it takes none).
    conventions : tuple of str
        The rules it follows where tools disagree.
    source : str
        Where the definition comes from (paper or tool, with the reference).
    function : str
        The public function that computes it (``evalsuite.ndcg_at_k``).
    function_arguments : mapping
        Extra keyword arguments the function needs for this entry (``{"gains": "exponential"}``).
    pages : tuple of str
        Dashboard pages that show it.
    vectors : tuple of TestVector
        At least one hand-computed case.
    perfect : mapping or None
        Arguments of an input that must score the maximum (``None``: no such input).
    nothing_relevant : (mapping, float) or None
        An input with nothing relevant and the value the documented rule gives it.
    trec_param : str or None
        trec_eval's prefix of a measure with a real parameter (``iprec_at_recall`` for
        ``iprec_at_recall_0.10``).
    param, default_param : str, float or None
        What the real parameter is (``"recall level in [0, 1]"``; "" when the metric takes
        none) and its value when the name gives none (None: the name must give it).
    aggregate : {"mean", "sum", "geometric"}
        How per-query values make the corpus value: the mean; the sum (trec_eval's counts
        num_ret, num_rel ...); the geometric mean with each value floored at 1e-5 (trec_eval's
        gm_map, gm_bpref).
    integer : bool
        A count, printed without decimals in trec_eval's layout.

    Examples
    --------
    >>> from evalsuite import METRICS
    >>> entry = METRICS["map"]
    >>> entry.aliases["trec_eval"], entry.function
    (('map_cut_k', 'map'), 'evalsuite.mean_average_precision_at_k')
    >>> entry.vectors[0].arithmetic.split(":")[0]
    'relevant at ranks 1 (P@1 = 1/1) and 3 (P@3 = 2/3), R = 2'
    """

    name: str
    title: str
    kind: str
    summary: str
    formula: str
    aliases: Mapping[str, tuple[str, ...]]
    higher_is_better: bool
    value_range: tuple[float, float]
    cutoff: str
    conventions: tuple[str, ...]
    source: str
    function: str
    pages: tuple[str, ...]
    vectors: tuple[TestVector, ...]
    parse_names: tuple[str, ...] = ()
    trec_cut: str | None = None
    trec_whole: str | None = None
    function_arguments: Mapping[str, Any] = field(default_factory=dict)
    perfect: Mapping[str, Any] | None = None
    nothing_relevant: tuple[Mapping[str, Any], float] | None = None
    trec_param: str | None = None
    param: str = ""
    default_param: float | None = None
    aggregate: str = "mean"
    integer: bool = False

    @property
    def convention(self) -> str:
        """The conventions as one line (what reports and ``Score.params`` carry)."""
        return "; ".join(self.conventions)

    def callable(self) -> Callable:
        """The public function named by :attr:`function`."""
        import evalsuite

        return getattr(evalsuite, self.function.rsplit(".", 1)[-1])
