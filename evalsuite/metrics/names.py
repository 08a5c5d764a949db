"""Metric names: ranx style (``ndcg@10``) and trec_eval aliases (``ndcg_cut_10``), parsed once."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import EvalSuiteError
from .entry import Metric
from .registry import METRICS

__all__ = ["MetricSpec", "parse_metric", "metric_info", "RANKING_METRICS"]

_RANKING = [m for m in METRICS.values() if m.kind == "ranking"]

# Canonical base name -> what it computes (shown in error messages and the docs).
RANKING_METRICS = {m.name: f"{m.title}: {m.summary}" for m in _RANKING}

# Lower-cased spellings accepted for each base in ranx style ``base@k``.
_BASE_ALIASES = {alias: m.name for m in _RANKING for alias in m.parse_names}

# trec_eval measure names (case-sensitive, as trec_eval prints them).
_TREC_CUT = {m.trec_cut: m.name for m in _RANKING if m.trec_cut}
_TREC_WHOLE = {m.trec_whole: m.name for m in _RANKING if m.trec_whole}

_TREC_PATTERN = re.compile(r"^(%s)_(\S+)$" % "|".join(map(re.escape, _TREC_CUT)))

# Metrics with a real-valued parameter instead of a cutoff: trec_eval ``iprec_at_recall_0.10``,
# ``iprec_at_recall@0.1``, ranx ``rbp.95`` (persistence 0.95).
_TREC_PARAM = {m.trec_param: m.name for m in _RANKING if m.trec_param}
_TREC_PARAM_PATTERN = re.compile(r"^(%s)_(\S+)$" % "|".join(map(re.escape, _TREC_PARAM))) if _TREC_PARAM else None
_PARAM_METRICS = {m.name for m in _RANKING if m.param}


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name.

    Attributes
    ----------
    name : str
        The name as the caller wrote it (used as the report column).
    base : str
        Canonical metric (a key of ``RANKING_METRICS``).
    k : int or None
        Cutoff; None means the whole ranked list.
    """

    name: str
    base: str
    k: int | None
    param: float | None = field(default=None, repr=False)

    @property
    def canonical(self) -> str:
        """ranx-style name, e.g. ``ndcg@10``, ``map``, ``rbp.95``, ``iprec_at_recall@0.1``."""
        if self.param is not None:
            if self.base == "rbp":
                return f"rbp.{repr(self.param)[2:]}"
            return f"{self.base}@{self.param:g}"
        return self.base if self.k is None else f"{self.base}@{self.k}"

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name for the same measure, or None when trec_eval has none."""
        entry = METRICS[self.base]
        if self.param is not None:
            return f"{entry.trec_param}_{self.param:.2f}" if entry.trec_param else None
        if self.k is None:
            return entry.trec_whole
        return f"{entry.trec_cut}_{self.k}" if entry.trec_cut else None

    @property
    def gains(self) -> str | None:
        """``"linear"`` or ``"exponential"`` for nDCG, else None."""
        if self.base == "ndcg":
            return "linear"
        if self.base == "ndcg_burges":
            return "exponential"
        return None


MAX_CUTOFF = 10**9  # more than any ranked list; keeps k a machine integer


def _parse_k(name: str, text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,10}", text) and re.fullmatch(r"[0-9]+", text):
        raise EvalSuiteError(f"the cutoff k is too large (at most {MAX_CUTOFF:,})", field="metric", value=name)
    if not re.fullmatch(r"[0-9]+", text):
        raise EvalSuiteError(
            "the cutoff k must be a positive whole number, as in ndcg@10 or P_10",
            field="metric", value=name,
        )
    k = int(text)
    if k <= 0:
        raise EvalSuiteError("the cutoff k must be at least 1", field="metric", value=name)
    if k > MAX_CUTOFF:
        raise EvalSuiteError(f"the cutoff k is too large (at most {MAX_CUTOFF:,})", field="metric", value=name)
    return k


def _parse_param(name: str, base: str, text: str) -> float:
    """The real parameter of ``iprec_at_recall`` (a recall level in [0, 1]) or ``rbp`` (persistence
    in (0, 1); ranx writes ``rbp.95`` for 0.95)."""
    if base == "rbp" and re.fullmatch(r"[0-9]{1,15}", text):
        text = f"0.{text}"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    low_ok = value >= 0 if base != "rbp" else value > 0
    high_ok = value <= 1 if base != "rbp" else value < 1
    if base == "rprec_mult":
        high_ok = value < float("inf")
    if not (low_ok and high_ok):
        entry = METRICS[base]
        example = f"{entry.trec_param}_0.20 or " if entry.trec_param else ""
        raise EvalSuiteError(f"{base} takes a {entry.param}, as in {example}{entry.parse_names[0]}@0.5",
                             field="metric", value=name)
    return value


def parse_metric(name: str) -> MetricSpec:
    """Parse one metric name into a :class:`MetricSpec`.

    Accepts ranx style (``precision@10``, ``recall@100``, ``hit_rate@10``, ``mrr``, ``mrr@10``,
    ``map``, ``map@100``, ``ndcg@10``, ``ndcg_burges@10``, ``judged@10``; case-insensitive,
    ``P@10`` too) and trec_eval names (``P_10``, ``recall_100``, ``success_10``,
    ``recip_rank``, ``map_cut_100``, ``ndcg_cut_10``, ``map``, ``ndcg``).

    Parameters
    ----------
    name : str
        The metric name; surrounding whitespace is ignored. ranx names are case-insensitive,
        trec_eval names are matched as trec_eval prints them.

    Returns
    -------
    MetricSpec
        ``name`` as given, canonical ``base`` (a key of ``RANKING_METRICS``) and cutoff ``k``
        (None: the whole ranked list).

    Raises
    ------
    EvalSuiteError
        Unknown name, or a cutoff that is not a whole number >= 1 (or is above 10**9); a name
        that is not a non-empty string.

    References
    ----------
    ranx metric names (Bassani, ECIR 2022); trec_eval measure names (``trec_eval -m``).

    Examples
    --------
    >>> parse_metric("ndcg_cut_10")
    MetricSpec(name='ndcg_cut_10', base='ndcg', k=10)
    >>> spec = parse_metric("P@5")
    >>> spec.canonical, spec.trec_name
    ('precision@5', 'P_5')
    >>> parse_metric("recip_rank").canonical  # no cutoff: the whole list
    'mrr'
    >>> parse_metric("ndcg@0")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: field 'metric', value 'ndcg@0': the cutoff k must be at least 1
    """
    if not isinstance(name, str) or not name.strip():
        raise EvalSuiteError("a metric name must be a non-empty string", field="metric", value=name)
    text = name.strip()
    if text in _TREC_WHOLE:
        return MetricSpec(name, _TREC_WHOLE[text], None)
    match = _TREC_PATTERN.match(text)
    if match:
        return MetricSpec(name, _TREC_CUT[match.group(1)], _parse_k(name, match.group(2)))
    match = _TREC_PARAM_PATTERN.match(text) if _TREC_PARAM_PATTERN else None
    if match:
        base = _TREC_PARAM[match.group(1)]
        return MetricSpec(name, base, None, _parse_param(name, base, match.group(2)))
    base, at, cutoff = text.partition("@")
    if not at and "." in base and _BASE_ALIASES.get(base.split(".", 1)[0].lower()) in _PARAM_METRICS:
        base, at, cutoff = *base.split(".", 1)[:1], ".", base.split(".", 1)[1]  # ranx rbp.95
    canonical = _BASE_ALIASES.get(base.lower())
    if canonical is None:
        known = ", ".join(sorted(RANKING_METRICS))
        raise EvalSuiteError(
            f"unknown metric; known: {known} (ranx style, e.g. ndcg@10) or trec_eval names "
            "(P_10, recall_100, success_10, recip_rank, map_cut_100, ndcg_cut_10, map, ndcg)",
            field="metric", value=name,
        )
    if canonical in _PARAM_METRICS:
        entry = METRICS[canonical]
        if not at:
            if entry.default_param is None:
                raise EvalSuiteError(f"{canonical} needs its parameter ({entry.param})", field="metric", value=name)
            return MetricSpec(name, canonical, None, entry.default_param)
        return MetricSpec(name, canonical, None, _parse_param(name, canonical, cutoff))
    if not at:
        # No cutoff: the whole ranked list (ranx k=0, trec_eval map / recip_rank / ndcg).
        return MetricSpec(name, canonical, None)
    if not METRICS[canonical].cutoff:
        raise EvalSuiteError(f"{canonical} takes no cutoff: it is computed over the whole ranked list",
                             field="metric", value=name)
    return MetricSpec(name, canonical, _parse_k(name, cutoff))


def metric_info(name: str) -> Metric:
    """The registry entry of a metric, by canonical name or any name :func:`parse_metric` accepts.

    Parameters
    ----------
    name : str
        ``"ndcg"``, ``"ndcg@10"``, ``"ndcg_cut_10"``, ``"P_5"``, ``"faithfulness"`` ...

    Returns
    -------
    Metric

    Raises
    ------
    EvalSuiteError
        The name is not a registered metric.

    Examples
    --------
    >>> metric_info("ndcg_cut_10").source.split(",")[0]
    'Järvelin & Kekäläinen'
    >>> metric_info("faithfulness").higher_is_better
    True
    """
    if isinstance(name, str) and name.strip() in _TREC_WHOLE:  # trec_eval's "rbp" is not ranx's rbp.p
        return METRICS[_TREC_WHOLE[name.strip()]]
    if isinstance(name, str) and name.strip() in METRICS:
        return METRICS[name.strip()]
    return METRICS[parse_metric(name).base]
