#!/usr/bin/env python3
"""Calibration statistics next to their reference tools, as ratios (same process, same data).

    python benchmarks/calibration.py [--rounds 5]

- PPI mean interval: ``evalsuite.stats.ppi.ppi_mean`` vs ``ppi_py.ppi_mean_ci`` (lam = 1 and
  tuned), n = 10,000 labelled, N = 1,000,000 unlabelled;
- agreement: ``evalsuite.stats.agreement.agreement`` (confusion matrix, accuracy, kappa with its
  interval, precision, recall, Wilson intervals) vs scikit-learn's ``confusion_matrix`` +
  ``cohen_kappa_score`` + ``precision_score`` + ``recall_score`` + ``accuracy_score`` (no
  intervals), on 1,000,000 binary pairs.

Prints the median time of each and the ratio evalsuite / reference (below 1: evalsuite faster).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evalsuite.stats import agreement, ppi  # noqa: E402


def median_time(fn, rounds: int) -> float:
    fn()  # warm-up (imports, caches)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import ppi_py
    from sklearn import metrics

    rng = np.random.default_rng(0)
    n, big_n = 10_000, 1_000_000
    y = (rng.random(n) < 0.7).astype(float)
    f = np.where(rng.random(n) < 0.2, 1 - y, y)
    fu = (rng.random(big_n) < 0.72).astype(float)
    rows = []
    for tuned in (False, True):
        lam = None if tuned else 1
        ours = median_time(lambda: ppi.ppi_mean(y, f, fu, tuned=tuned), args.rounds)
        ref = median_time(lambda: ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam), args.rounds)
        rows.append((f"ppi_mean ({'PPI++' if tuned else 'PPI'}), n=10k, N=1M", ours, "ppi_py.ppi_mean_ci", ref))

    m = 1_000_000
    human = (rng.random(m) < 0.6).astype(int)
    judge = np.where(rng.random(m) < 0.2, 1 - human, human)

    def sklearn_all():
        metrics.confusion_matrix(human, judge)
        metrics.accuracy_score(human, judge)
        metrics.cohen_kappa_score(human, judge)
        metrics.precision_score(human, judge)
        metrics.recall_score(human, judge)

    ours = median_time(lambda: agreement.agreement(judge, human), args.rounds)
    ref = median_time(sklearn_all, args.rounds)
    rows.append(("agreement, 1M pairs (with intervals)", ours, "scikit-learn, 5 functions (no intervals)", ref))
    print(f"{'what':45s} {'evalsuite':>10s} {'reference':>10s} {'ratio':>6s}  reference tool")
    for what, ours, tool, ref in rows:
        print(f"{what:45s} {ours:10.4f} {ref:10.4f} {ours / ref:6.2f}  {tool}")


if __name__ == "__main__":
    main()
