"""What one metric registry entry holds: :class:`Metric`, the judgement columns it reads
(:class:`Input`), what a judge needs to fill them (:class:`Needs`) and its hand-computed
:class:`TestVector`; :class:`GivenScore` for a score other tools compute and EvalSuite reads as given.

The entries themselves are collected in :data:`evalsuite.metrics.registry.METRICS` and
:data:`evalsuite.metrics.registry.GIVEN_SCORES`. An entry names its functions (``function``,
``kernel``) by dotted path; :mod:`evalsuite.metrics.functions` resolves them, so the data here
imports no metric code and no module of the package imports the registry back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Metric", "Input", "Needs", "TestVector", "GivenScore", "KINDS", "EXPORT_TOOLS", "JUDGE_KINDS"]

KINDS = ("ranking", "context", "answer", "operational")
#: Tools whose exports name metrics (:attr:`Metric.exports`): RAGAS result columns, DeepEval
#: ``metricsData`` names, TruLens feedback columns, Phoenix evaluator names, ARES label columns and
#: ALCE's score keys.
EXPORT_TOOLS = ("ragas", "deepeval", "trulens", "phoenix", "ares", "alce")
#: Judges that can fill a judgement column (:attr:`Input.judges`): ``llm`` the LLM judge's claim
#: and verdict prompts (:mod:`evalsuite.judges.llm`), ``ragas`` the RAGAS judge's own prompts (an
#: LLM too, :mod:`evalsuite.judges.ragas`), ``embedding`` and ``lexical`` the other judges.
JUDGE_KINDS = ("llm", "ragas", "embedding", "lexical")


@dataclass(frozen=True)
class Input:
    """One record column a metric reads, in the order of its list function's arguments.

    Attributes
    ----------
    column : str
        The record field (docs/records.md); ``critique_<name>`` stands for every column of that
        form, one metric value per column.
    argument : str
        The list function's argument it is passed as.
    kind : str
        The field's kind in the record schema: ``labels`` (list of True/False/None), ``grades``
        (list of numbers in 0..1), ``texts``, ``score`` (a number in 0..1), ``flag``, ``text``,
        ``latency``.
    per : str
        What one item of the list is (``retrieved chunk``, ``answer claim`` ...; ``request`` for
        a single value). A ``retrieved chunk`` list has one item per entry of ``contexts``.
    meaning : str
        What an item says (True = ...).
    judges : tuple of str
        The judges that can fill it (:data:`JUDGE_KINDS`); () when only a file gives it.
    required : bool
        Needed with the list function's default options (False: optional).
    instead_of : str
        The column of another input this one (with the others naming the same column) replaces
        when that column is absent: context entity recall's two entity lists stand in for its
        per-entity judgements. "" for an input of its own.
    """

    column: str
    argument: str
    kind: str
    per: str
    meaning: str
    judges: tuple[str, ...] = ()
    required: bool = True
    instead_of: str = ""

    @property
    def pattern(self) -> bool:
        """True for a column name that stands for many (``critique_<name>``)."""
        return "<" in self.column


@dataclass(frozen=True)
class Needs:
    """What a judge reads to fill a metric's judgement columns.

    Attributes
    ----------
    fields : tuple of str
        Record fields that must be present (``question``, ``answer``, ``reference``, ``contexts``).
    judges : tuple of str
        Judge kinds that run: ``llm`` (any chat model: the LLM and RAGAS judges' prompts),
        ``embedding``, ``lexical``.
    """

    fields: tuple[str, ...]
    judges: tuple[str, ...]


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
        The public list function that computes it (``evalsuite.ndcg_at_k``; trec_eval's further
        measures ``evalsuite.ranking_metric``).
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
    inputs : tuple of Input
        The record columns the metric reads, in the list function's argument order (RAG and
        operational metrics; ranking metrics read runs and qrels).
    missing : str
        What a missing verdict (None in a judgement list, a null column value) means for the
        metric; ``missing_source`` names the tool whose rule it is ("" for EvalSuite's general
        rule: undefined for that request, and the coverage says so).
    needs : Needs or None
        What a judge reads to fill the inputs (None: no judge of EvalSuite fills them).
    exports : mapping of str -> tuple of str
        The metric's names in other tools' exports (:data:`EXPORT_TOOLS`), which the record
        readers map to it.
    kernel : str
        Dotted path of the per-request kernel: for a RAG metric a function of the input columns
        (Arrow arrays, None for an absent optional one) and ``compat`` returning one float per
        request (NaN = undefined); for a ranking metric the method of
        :class:`~evalsuite.metrics.ranking_kernel.RankingKernel` that ``evaluate`` dispatches to.
    kernel_arguments : mapping
        Fixed keyword arguments of the kernel for this entry (``{"exponential": True}``).
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
    >>> [i.column for i in METRICS["answer_correctness"].inputs]
    ['answer_claims_in_reference', 'reference_claims_in_answer', 'answer_similarity']
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
    inputs: tuple[Input, ...] = ()
    missing: str = ""
    missing_source: str = ""
    needs: Needs | None = None
    exports: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    kernel: str = ""
    kernel_arguments: Mapping[str, Any] = field(default_factory=dict)

    @property
    def convention(self) -> str:
        """The conventions as one line (what reports and ``Score.params`` carry)."""
        return "; ".join(self.conventions)

    @property
    def columns(self) -> tuple[str, ...]:
        """The record columns of :attr:`inputs`, in argument order."""
        return tuple(i.column for i in self.inputs)

    def usable_inputs(self, present) -> tuple[Input, ...] | None:
        """The inputs to pass when the columns in ``present`` are given, or None when they do not
        make the metric: every required input, or all of those that stand in for it
        (:attr:`Input.instead_of`), and the optional inputs present.

        >>> from evalsuite.metrics.registry import METRICS
        >>> entry = METRICS["context_entity_recall"]
        >>> [i.argument for i in entry.usable_inputs({"reference_entities", "context_entities"})]
        ['reference_entities', 'context_entities']
        >>> entry.usable_inputs({"reference_entities"}) is None
        True
        """
        chosen: list[Input] = []
        for item in self.inputs:
            if item.instead_of:
                continue
            if item.column in present:
                chosen.append(item)
                continue
            stand_ins = [i for i in self.inputs if i.instead_of == item.column]
            if stand_ins and all(i.column in present for i in stand_ins):
                chosen += stand_ins
            elif item.required:
                return None
        return tuple(chosen) if chosen else None


@dataclass(frozen=True)
class GivenScore:
    """A per-request score other tools compute and EvalSuite reads as given (not computed here).

    Attributes
    ----------
    name : str
        The record field it is kept under.
    summary : str
        What it measures, and whose definition.
    exports : mapping of str -> tuple of str
        Its names in other tools' exports (:data:`EXPORT_TOOLS`).
    higher_is_better : bool
    value_range : (float, float)
    source : str
        The tool (and module) that defines it.
    judge : str or None
        The EvalSuite judge that can fill it (``"lexical"``: :mod:`evalsuite.judges.lexical`
        computes it with the library named in ``source``), else None (read as given only).

    Examples
    --------
    >>> from evalsuite.metrics.registry import GIVEN_SCORES
    >>> GIVEN_SCORES["hallucination"].higher_is_better
    False
    """

    name: str
    summary: str
    exports: Mapping[str, tuple[str, ...]]
    source: str
    higher_is_better: bool = True
    value_range: tuple[float, float] = (0.0, 1.0)
    judge: str | None = None
