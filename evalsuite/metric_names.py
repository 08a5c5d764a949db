"""Metric names: ranx style (``ndcg@10``) and trec_eval aliases (``ndcg_cut_10``), parsed once."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import EvalSuiteError

__all__ = ["MetricSpec", "parse_metric", "RANKING_METRICS"]

# Canonical base name -> what it computes (shown in error messages and the docs).
RANKING_METRICS = {
    "precision": "precision@k: relevant docs in the top k / k",
    "recall": "recall@k: relevant docs in the top k / relevant docs judged",
    "hit_rate": "hit_rate@k: 1 if a relevant doc is in the top k (trec_eval success_k)",
    "mrr": "mrr or mrr@k: 1 / rank of the first relevant doc (trec_eval recip_rank)",
    "map": "map or map@k: average precision, divided by all relevant docs (trec_eval map_cut_k)",
    "ndcg": "ndcg or ndcg@k: nDCG with linear gains (trec_eval ndcg_cut_k)",
    "ndcg_burges": "ndcg_burges@k: nDCG with exponential gains 2^g - 1",
    "judged": "judged@k: share of the top k docs that have a judgement (any grade)",
}

# Lower-cased spellings accepted for each base in ranx style ``base@k``.
_BASE_ALIASES = {
    "precision": "precision", "p": "precision",
    "recall": "recall", "r": "recall",
    "hit_rate": "hit_rate", "hits": "hit_rate", "success": "hit_rate", "hitrate": "hit_rate",
    "mrr": "mrr", "recip_rank": "mrr", "rr": "mrr",
    "map": "map", "ap": "map",
    "ndcg": "ndcg",
    "ndcg_burges": "ndcg_burges", "ndcg_exp": "ndcg_burges",
    "judged": "judged",
}

# trec_eval measure names (case-sensitive, as trec_eval prints them).
_TREC_CUT = {
    "P": "precision",
    "recall": "recall",
    "success": "hit_rate",
    "map_cut": "map",
    "ndcg_cut": "ndcg",
}
_TREC_WHOLE = {"map": "map", "recip_rank": "mrr", "ndcg": "ndcg"}

_TREC_PATTERN = re.compile(r"^(P|recall|success|map_cut|ndcg_cut)_(\S+)$")


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

    @property
    def canonical(self) -> str:
        """ranx-style name, e.g. ``ndcg@10`` or ``map``."""
        return self.base if self.k is None else f"{self.base}@{self.k}"

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name for the same measure, or None when trec_eval has none."""
        if self.k is None:
            return {"map": "map", "mrr": "recip_rank", "ndcg": "ndcg"}.get(self.base)
        prefix = {"precision": "P", "recall": "recall", "hit_rate": "success", "map": "map_cut", "ndcg": "ndcg_cut"}.get(self.base)
        return f"{prefix}_{self.k}" if prefix else None

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


def parse_metric(name: str) -> MetricSpec:
    """Parse one metric name into a :class:`MetricSpec`.

    Accepts ranx style (``precision@10``, ``recall@100``, ``hit_rate@10``, ``mrr``, ``mrr@10``,
    ``map``, ``map@100``, ``ndcg@10``, ``ndcg_burges@10``, ``judged@10``; case-insensitive,
    ``P@10`` too) and trec_eval names (``P_10``, ``recall_100``, ``success_10``,
    ``recip_rank``, ``map_cut_100``, ``ndcg_cut_10``, ``map``, ``ndcg``).

    Raises
    ------
    EvalSuiteError
        Unknown name, or a cutoff that is not a whole number >= 1.
    """
    if not isinstance(name, str) or not name.strip():
        raise EvalSuiteError("a metric name must be a non-empty string", field="metric", value=name)
    text = name.strip()
    if text in _TREC_WHOLE:
        return MetricSpec(name, _TREC_WHOLE[text], None)
    match = _TREC_PATTERN.match(text)
    if match:
        return MetricSpec(name, _TREC_CUT[match.group(1)], _parse_k(name, match.group(2)))
    base, at, cutoff = text.partition("@")
    canonical = _BASE_ALIASES.get(base.lower())
    if canonical is None:
        known = ", ".join(sorted(RANKING_METRICS))
        raise EvalSuiteError(
            f"unknown metric; known: {known} (ranx style, e.g. ndcg@10) or trec_eval names "
            "(P_10, recall_100, success_10, recip_rank, map_cut_100, ndcg_cut_10, map, ndcg)",
            field="metric", value=name,
        )
    if not at:
        # No cutoff: the whole ranked list (ranx k=0, trec_eval map / recip_rank / ndcg).
        return MetricSpec(name, canonical, None)
    return MetricSpec(name, canonical, _parse_k(name, cutoff))
