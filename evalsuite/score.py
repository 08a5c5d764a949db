"""The value every EvalSuite metric returns: a float (the corpus mean) that keeps its details."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Score"]


class Score(float):
    """A metric's corpus value that also carries its per-query values and parameters.

    It is a ``float`` (``score + 1``, ``f"{score:.4f}"``, ``score > 0.5`` all work) equal to the
    mean of ``per_query`` over the entries where the metric is defined (non-NaN), unless the
    metric defines another corpus value (a latency percentile, say), given as ``value``.

    Attributes
    ----------
    per_query : numpy.ndarray, shape (n,), float64
        One value per query or request, aligned with the input order (or with ``query_ids``);
        NaN where the metric is undefined for that entry.
    query_ids : tuple of str or None
        Ids aligned with ``per_query`` when the input had ids (files, data frames); None for
        positional list input.
    params : dict
        Everything that defines the number: metric name, cutoff ``k``, ``gains``,
        ``rel_level``, ``n`` (entries), ``n_defined`` and ``coverage`` (defined / n), and the
        conventions applied.

    Parameters
    ----------
    per_query : sequence of float or numpy.ndarray, shape (n,)
        One value per query or request; NaN where undefined. Stored read-only as float64.
    params : mapping, optional
        Becomes :attr:`params`; ``n``, ``n_defined`` and ``coverage`` are filled in when absent.
    query_ids : sequence of str, length n, optional
        Ids aligned with ``per_query``.
    value : float, optional
        The corpus value when it is not the mean of the defined entries (a percentile, say).

    Raises
    ------
    ValueError
        ``per_query`` is not one-dimensional or not numbers.

    Examples
    --------
    >>> score = Score([1.0, 0.0, float("nan")], {"metric": "hit_rate@1"}, query_ids=["q1", "q2", "q3"])
    >>> score  # mean over the 2 defined values (1 + 0) / 2; coverage 2 of 3
    Score(hit_rate@1=0.5000, n=3, coverage=0.667)
    >>> score + 1, f"{score:.2f}", score > 0.4, score.name
    (1.5, '0.50', True, 'hit_rate@1')
    >>> score.to_series().to_dict()
    {'q1': 1.0, 'q2': 0.0, 'q3': nan}
    >>> Score([120.0, 400.0], {"metric": "latency_p50"}, value=260.0)  # (120 + 400) / 2, given as value
    Score(latency_p50=260.0000, n=2, coverage=1.000)
    """

    per_query: np.ndarray
    params: dict[str, Any]
    query_ids: tuple[str, ...] | None

    def __new__(
        cls,
        per_query: Sequence[float] | np.ndarray,
        params: Mapping[str, Any] | None = None,
        query_ids: Sequence[str] | None = None,
        value: float | None = None,
    ) -> "Score":
        values = np.asarray(per_query, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError("per_query must be one-dimensional")
        defined = ~np.isnan(values)
        n_defined = int(defined.sum())
        if value is None:
            value = float(values[defined].mean()) if n_defined else float("nan")
        obj = super().__new__(cls, value)
        obj.per_query = values
        obj.per_query.setflags(write=False)
        obj.query_ids = tuple(query_ids) if query_ids is not None else None
        info = dict(params or {})
        info.setdefault("n", int(values.size))
        info.setdefault("n_defined", n_defined)
        info.setdefault("coverage", (n_defined / values.size) if values.size else 0.0)
        obj.params = info
        return obj

    @property
    def name(self) -> str | None:
        """The metric name (``params["metric"]``), e.g. ``"ndcg@10"``."""
        return self.params.get("metric")

    def to_series(self):
        """Per-query values as a pandas Series indexed by query id (or position)."""
        import pandas as pd

        index = pd.Index(self.query_ids, name="query_id") if self.query_ids is not None else None
        return pd.Series(self.per_query, index=index, name=self.name)

    def __repr__(self) -> str:
        name = self.params.get("metric", "score")
        return f"Score({name}={float(self):.4f}, n={self.params['n']}, coverage={self.params['coverage']:.3f})"

    def __reduce__(self):
        return (Score, (np.asarray(self.per_query), self.params, self.query_ids, float(self)))
