"""Exact sums of float64 values, so that a mean is the same number however the values were split.

A float sum depends on the order of its additions (numpy's pairwise sum on the length of the
array), so the mean of a column computed in one piece and the mean combined from the sums of
several pieces can differ in the last bits. Here every value is decomposed exactly into an integer
times a power of two, the integers are summed exactly per power (in float64 slices small enough
that no partial sum passes 2**53, so every addition is exact), and the result is one Python
integer: :class:`ExactSum`. Sums of pieces add up to the sum of the whole, exactly, and the mean
is rounded once (Python's integer division is correctly rounded). Used by
:func:`evalsuite.evaluate_records` (one machine) and its Dask engine (one sum per partition).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ExactSum", "exact_mean"]

# Every finite float64 is m * 2**(e - 53) with |m| < 2**53 and e >= -1073 (np.frexp); scaled by
# 2**_SHIFT, every value is an integer.
_SHIFT = 1126
_HALF = 26  # m = hi * 2**26 + lo, |hi| < 2**27, 0 <= lo < 2**26
_SLICE = 1 << 25  # 2**25 values of |hi| < 2**27 sum below 2**52: exact in float64


@dataclass(frozen=True)
class ExactSum:
    """The exact sum of some float64 values (``total / 2**1126``) and how many there were.

    Attributes
    ----------
    total : int
        The sum of the finite values, times 2**1126 (an integer: exact).
    count : int
        Number of values summed (finite or not).
    pos_inf, neg_inf : int
        Number of +inf and -inf values.
    nan : int
        Number of NaN values (callers pass defined values only; counted to stay honest).

    Examples
    --------
    >>> a = ExactSum.of([0.1, 0.2]); b = ExactSum.of([0.3])
    >>> (a + b).mean() == ExactSum.of([0.1, 0.2, 0.3]).mean() == 0.2
    True
    >>> sum([0.1, 0.2, 0.3]) / 3  # a float sum, rounded after each addition
    0.20000000000000004
    """

    total: int = 0
    count: int = 0
    pos_inf: int = 0
    neg_inf: int = 0
    nan: int = 0

    @classmethod
    def of(cls, values) -> "ExactSum":
        """The exact sum of a one-dimensional array (or sequence) of float64 values."""
        values = np.asarray(values, dtype=np.float64).ravel()
        finite = np.isfinite(values)
        pos_inf = int(np.count_nonzero(values == np.inf))
        neg_inf = int(np.count_nonzero(values == -np.inf))
        nan = int(values.size - np.count_nonzero(finite) - pos_inf - neg_inf)
        x = values if nan + pos_inf + neg_inf == 0 else values[finite]
        total = 0
        if x.size:
            mantissa, exponent = np.frexp(x)
            m = mantissa * float(1 << 53)  # an integer below 2**53 in magnitude, exactly (a power-of-two scale)
            hi = np.floor(m * (1.0 / (1 << _HALF)))  # exact, as is lo below
            lo = m - hi * float(1 << _HALF)
            low = int(exponent.min())
            bins = exponent - np.int32(low)
            width = int(bins.max()) + 1
            hi_sums = np.zeros(width, dtype=object)
            lo_sums = np.zeros(width, dtype=object)
            for start in range(0, x.size, _SLICE):
                part = slice(start, start + _SLICE)
                hi_sums += np.bincount(bins[part], weights=hi[part], minlength=width).astype(np.int64).astype(object)
                lo_sums += np.bincount(bins[part], weights=lo[part], minlength=width).astype(np.int64).astype(object)
            for b in np.flatnonzero((hi_sums != 0) | (lo_sums != 0)).tolist():
                exact = (int(hi_sums[b]) << _HALF) + int(lo_sums[b])
                total += exact << (b + low - 53 + _SHIFT)
        return cls(total, int(values.size), pos_inf, neg_inf, nan)

    def __add__(self, other: "ExactSum") -> "ExactSum":
        return ExactSum(self.total + other.total, self.count + other.count, self.pos_inf + other.pos_inf,
                        self.neg_inf + other.neg_inf, self.nan + other.nan)

    def mean(self) -> float:
        """The mean, rounded once (NaN when there are no values, or NaN among them, or both infinities)."""
        if self.count == 0 or self.nan or (self.pos_inf and self.neg_inf):
            return float("nan")
        if self.pos_inf or self.neg_inf:
            return float("inf") if self.pos_inf else float("-inf")
        return self.total / (self.count << _SHIFT)


def exact_mean(values) -> float:
    """The mean of float64 values, correctly rounded: the same whatever their order or split.

    >>> exact_mean([0.1, 0.2, 0.3])
    0.2
    >>> exact_mean([])
    nan
    """
    return ExactSum.of(values).mean()
