#!/usr/bin/env python3
"""Coverage and width of every interval the Calibration page shows, in simulation.

    python benchmarks/calibration_coverage.py                    # 27 cells x 2,000 repetitions
    python benchmarks/calibration_coverage.py --reps 500 --cells 3

The grid: true share of yes p in {0.03, 0.5, 0.97} x human labels n in {20, 50, 200} x judge
accuracy in {0.6, 0.8, 0.95}. In each repetition (seeded):

- n + N requests (N = 1,000 unlabelled), each with a human label ``Y ~ Bernoulli(p)`` and a judge
  verdict that is right with probability ``acc`` (``F = Y`` or ``1 - Y``), and a judge score
  ``S = 0.5 + (F - 0.5) m`` whose confidence ``m`` is Beta(2, 1) when the verdict is right and
  Beta(1, 2) when it is wrong (a judge less sure when it errs);
- the first n requests are labelled (a uniform sample), for: the judge-only interval (the judge's
  mean over all n + N, against the judge's own mean ``E[F]``), human only, PPI and PPI++ as the
  page shows them (the normal interval, or the human-only interval in its place when
  ``normal_approximation_problem`` finds a reason), accuracy, precision, recall and Cohen's kappa
  against their true values, and the PPI interval of a paired difference (a second system whose
  labels keep system A's with probability 0.8 and are redrawn otherwise: true difference 0);
- active labelling: the same n labels chosen among n + N requests by priority sampling with the
  default weights from the score (``evalsuite.stats.active``), ``active_mean`` as the page shows it,
  with the score as the judge value.

Every interval is computed vectorised over the repetitions, and for 25 repetitions of every cell
the vectorised bounds are checked against evalsuite's own functions (``mean_intervals``,
``agreement``, ``active_mean``, ``ppi_mean_difference``) to 1e-9: the table is of the intervals the
page computes. Kappa's interval is ``kappa_interval`` itself, once per distinct 2x2 table.

Prints the table (coverage % / mean width, the share of draws where PPI's own normal interval was
shown) and writes ``benchmarks/results/calibration_coverage.json``. Exits 1 when an interval
leaves its range, when the vectorised bounds differ from evalsuite's, or when a coverage falls
below nominal minus 1.5 points.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evalsuite.stats import active, agreement, intervals, ppi  # noqa: E402

SHARES = (0.03, 0.5, 0.97)
LABELS = (20, 50, 200)
ACCURACIES = (0.6, 0.8, 0.95)
UNLABELLED = 1000
CONFIDENCE = 0.95
CHECKED = 25  # repetitions per cell compared with evalsuite's own functions
INTERVALS = ("judge only", "human only", "PPI", "PPI++", "active", "accuracy", "precision", "recall", "kappa",
             "PPI difference (paired)")


def _cp(x: np.ndarray, n: np.ndarray | float):
    """Clopper-Pearson bounds, vectorised (NaN where n = 0)."""
    from scipy import stats

    n = np.broadcast_to(np.asarray(n, dtype=float), x.shape)
    a = 1 - CONFIDENCE
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x > 0, stats.beta.ppf(a / 2, x, n - x + 1), 0.0)
        high = np.where(x < n, stats.beta.ppf(1 - a / 2, x + 1, n - x), 1.0)
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def _wilson(x: np.ndarray, n: float):
    z = intervals._z(CONFIDENCE)
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(np.maximum(p * (1 - p) / n + z * z / (4 * n * n), 0))
    return np.maximum(0, centre - half), np.minimum(1, centre + half)


def _ppi(y, f, fu, tuned: bool):
    """ppi_mean (clipped) vectorised over rows, and the rows whose normal interval is shown."""
    z = intervals._z(CONFIDENCE)
    n, big_n = y.shape[1], fu.shape[1]
    lam = np.ones((len(y), 1))
    if tuned:
        cov = ((y - y.mean(1, keepdims=True)) * (f - f.mean(1, keepdims=True))).sum(1) * 2 / n
        var = np.concatenate([f, fu], 1).var(1, ddof=1)
        lam = np.clip(np.where(var > 0, cov / (2 * (1 + n / big_n) * np.where(var > 0, var, 1)), 0), 0, 1)[:, None]
    rect = y - lam * f
    theta = (lam * fu).mean(1) + rect.mean(1)
    se = np.sqrt((lam * fu).var(1) / big_n + rect.var(1) / n)
    low, high = np.clip(theta - z * se, 0, 1), np.clip(theta + z * se, 0, 1)
    yes = y.sum(1)
    need = intervals.MIN_LABELS_TUNED if tuned else intervals.MIN_LABELS
    regular = (n >= need) & (np.minimum(yes, n - yes) >= intervals.MIN_EVENTS) & \
        (np.abs(y - f).sum(1) >= intervals.MIN_EVENTS)
    return np.clip(theta, 0, 1), low, high, regular


def _draw(rng, p, acc, size):
    y = rng.random(size) < p
    right = rng.random(size) < acc
    f = np.where(right, y, ~y)
    m = np.where(right, rng.beta(2, 1, size), rng.beta(1, 2, size))
    return y.astype(float), f.astype(float), 0.5 + (f - 0.5) * m


def _kappas(tables: np.ndarray):
    """kappa_interval of each row's 2x2 table, computed once per distinct table."""
    unique, inverse = np.unique(tables, axis=0, return_inverse=True)
    found = [agreement.kappa_interval(t.reshape(2, 2)) for t in unique]
    lows = np.array([iv.low for iv in found])[inverse.ravel()]
    highs = np.array([iv.high for iv in found])[inverse.ravel()]
    return lows, highs


def run_cell(args) -> dict:
    p, n, acc, reps, seed = args
    rng = np.random.default_rng(seed)
    total = n + UNLABELLED
    y, f, s = _draw(rng, p, acc, (reps, total))
    yl, fl, fu = y[:, :n], f[:, :n], f[:, n:]
    res: dict[str, tuple] = {}
    problems: list[str] = []

    q = p * acc + (1 - p) * (1 - acc)  # the judge's yes rate
    p_e = p * q + (1 - p) * (1 - q)
    truth = {"judge only": q, "human only": p, "PPI": p, "PPI++": p, "active": p, "accuracy": acc,
             "precision": p * acc / q, "recall": acc, "kappa": (acc - p_e) / (1 - p_e), "PPI difference (paired)": 0.0}

    res["judge only"] = _cp(f.sum(1), total)
    res["human only"] = _cp(yl.sum(1), n)
    shown = {}
    for name, tuned in (("PPI", False), ("PPI++", True)):
        _, low, high, regular = _ppi(yl, fl, fu, tuned)
        hl, hh = res["human only"]
        res[name] = (np.where(regular, low, hl), np.where(regular, high, hh))
        shown[name] = float(regular.mean())

    tp = (yl * fl).sum(1)
    fp = ((1 - yl) * fl).sum(1)
    fn = (yl * (1 - fl)).sum(1)
    tn = n - tp - fp - fn
    res["accuracy"] = _cp(tp + tn, n)
    res["precision"] = _cp(tp, tp + fp)
    res["recall"] = _cp(tp, tp + fn)
    res["kappa"] = _kappas(np.stack([tn, fp, fn, tp], 1).astype(int))

    # A second system, paired: its labels keep A's with probability 0.8 (same share p, difference 0).
    keep = rng.random((reps, total)) < 0.8
    y2 = np.where(keep, y, (rng.random((reps, total)) < p).astype(float))
    right2 = rng.random((reps, total)) < acc
    f2 = np.where(right2, y2, 1 - y2)
    dy, df = yl - y2[:, :n], fl - f2[:, :n]
    dfu = fu - f2[:, n:]
    z = intervals._z(CONFIDENCE)
    rect = dy - df
    theta = dfu.mean(1) + rect.mean(1)
    se = np.sqrt(dfu.var(1) / UNLABELLED + rect.var(1) / n)
    lo_d, hi_d = np.clip(theta - z * se, -1, 1), np.clip(theta + z * se, -1, 1)
    reg_a = _ppi(yl, fl, fu, False)[3]
    reg_b = _ppi(y2[:, :n], f2[:, :n], f2[:, n:], False)[3]
    regular_d = reg_a & reg_b & (np.abs(dy - df).sum(1) >= intervals.MIN_EVENTS)
    half_steps = (dy + 1) / 2  # in [0, 1]: share_interval's Wilson, or Clopper-Pearson when all are 0 or 1
    binary_d = np.all((half_steps == 0) | (half_steps == 1), axis=1)
    wl, wh = _wilson(half_steps.sum(1), n)
    cl, ch = _cp(half_steps.sum(1), n)
    wl, wh = 2 * np.where(binary_d, cl, wl) - 1, 2 * np.where(binary_d, ch, wh) - 1
    res["PPI difference (paired)"] = (np.where(regular_d, lo_d, wl), np.where(regular_d, hi_d, wh))
    shown["PPI difference (paired)"] = float(regular_d.mean())

    # Active labelling: the same budget n among all n + N requests, weights from the score.
    u = np.sqrt(s * (1 - s))
    w = active.DEFAULT_MIX + (1 - active.DEFAULT_MIX) * u / u.mean(1, keepdims=True)
    keys = rng.random((reps, total)) / w
    tau = np.sort(keys, 1)[:, n:n + 1]
    sampled = keys < tau
    pi = np.minimum(1.0, tau * w)
    inverse = np.where(sampled, 1 / pi, 0.0)
    terms = s + (y - s) * inverse
    theta = terms.mean(1)
    se = terms.std(1) / math.sqrt(total)
    lo_a, hi_a = np.clip(theta - z * se, 0, 1), np.clip(theta + z * se, 0, 1)
    ys = np.where(sampled, y, 0)
    yes = ys.sum(1)
    regular_a = (n >= intervals.MIN_LABELS) & (np.minimum(yes, n - yes) >= intervals.MIN_EVENTS) & \
        (np.where(sampled, np.abs(y - s), 0).sum(1) >= intervals.MIN_EVENTS)
    wsum, w2sum = inverse.sum(1), (inverse * inverse).sum(1)
    hajek = (inverse * y).sum(1) / wsum
    n_eff = wsum ** 2 / w2sum
    cl, ch = _cp(np.clip(hajek * n_eff, 0, n_eff), n_eff)
    res["active"] = (np.where(regular_a, lo_a, cl), np.where(regular_a, hi_a, ch))
    shown["active"] = float(regular_a.mean())

    # The vectorised bounds are evalsuite's: check a few repetitions against its own functions.
    for r in range(min(CHECKED, reps)):
        m = ppi.mean_intervals(yl[r], fl[r], fu[r])
        mt = ppi.mean_intervals(yl[r], fl[r], fu[r], tuned=True)
        a = agreement.agreement(fl[r], yl[r])
        d = ppi.ppi_mean_difference((yl[r], fl[r], fu[r]), (y2[r, :n], f2[r, :n], f2[r, n:]), paired=True)
        order_pi = np.where(sampled[r], pi[r], np.nan)
        act = active.active_mean(s[r], np.where(sampled[r], y[r], np.nan), order_pi)
        pi_check = active.inclusion_probabilities(keys[r], w[r], sampled[r])
        expected = {"judge only": m["judge"], "human only": m["human"], "PPI": m["ppi"], "PPI++": mt["ppi"],
                    "accuracy": a.accuracy, "precision": a.precision, "recall": a.recall, "kappa": a.kappa,
                    "PPI difference (paired)": d, "active": act}
        for name, iv in expected.items():
            got = (res[name][0][r], res[name][1][r])
            if not (np.allclose(got, (iv.low, iv.high), atol=1e-9, equal_nan=True)):
                problems.append(f"p={p} n={n} acc={acc} rep {r}: {name} vectorised {got} != evalsuite "
                                f"{(iv.low, iv.high)}")
        if not np.allclose(pi_check, order_pi, equal_nan=True):
            problems.append(f"p={p} n={n} acc={acc} rep {r}: inclusion probabilities differ")

    out = {"p": p, "n": n, "acc": acc, "reps": reps, "problems": problems, "shown": shown, "intervals": {}}
    bounds = {"kappa": (-1, 1), "PPI difference (paired)": (-1, 1)}
    for name in INTERVALS:
        low, high = res[name]
        defined = ~np.isnan(low) & ~np.isnan(high)
        lo_b, hi_b = bounds.get(name, (0, 1))
        outside = int(((low[defined] < lo_b - 1e-12) | (high[defined] > hi_b + 1e-12) |
                       (low[defined] > high[defined])).sum())
        covered = (low[defined] <= truth[name]) & (truth[name] <= high[defined])
        out["intervals"][name] = {"truth": truth[name], "coverage": float(covered.mean()) if defined.any() else None,
                                  "width": float((high - low)[defined].mean()) if defined.any() else None,
                                  "defined": float(defined.mean()), "outside_range": outside}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--cells", type=int, default=27, help="run only the first CELLS cells of the grid")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    cells = [(p, n, acc) for p in SHARES for n in LABELS for acc in ACCURACIES][: args.cells]
    jobs = [(p, n, acc, args.reps, args.seed + i) for i, (p, n, acc) in enumerate(cells)]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(run_cell, jobs))
    seconds = time.perf_counter() - start

    nominal = 100 * CONFIDENCE
    floor = nominal - 1.5
    failures = [pr for r in results for pr in r["problems"]]
    print(f"{'p':>5} {'n':>4} {'acc':>5}  " + "  ".join(f"{name:>14}" for name in INTERVALS))
    lowest = {name: 101.0 for name in INTERVALS}
    for r in results:
        cells_text = []
        for name in INTERVALS:
            iv = r["intervals"][name]
            if iv["outside_range"]:
                failures.append(f"p={r['p']} n={r['n']} acc={r['acc']}: {name} left its range {iv['outside_range']} times")
            if iv["coverage"] is None:
                cells_text.append(f"{'-':>14}")
                continue
            cov = 100 * iv["coverage"]
            lowest[name] = min(lowest[name], cov)
            if cov < floor:
                failures.append(f"p={r['p']} n={r['n']} acc={r['acc']}: {name} covers {cov:.1f}% < {floor}%")
            cells_text.append(f"{cov:5.1f}% {iv['width']:.3f}".rjust(14))
        print(f"{r['p']:5.2f} {r['n']:4d} {r['acc']:5.2f}  " + "  ".join(cells_text))
    print("\nShare of draws where the normal (PPI / active) interval itself is shown (else human only):")
    for r in results:
        print(f"  p={r['p']:.2f} n={r['n']:3d} acc={r['acc']:.2f}: " +
              ", ".join(f"{k} {100 * v:.0f}%" for k, v in r["shown"].items()))
    mc_se = 100 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / args.reps)
    print(f"\nLowest coverage per interval: " + ", ".join(f"{k} {v:.1f}%" for k, v in lowest.items()))
    print(f"Monte Carlo standard error of a 95% coverage with {args.reps} repetitions: {mc_se:.2f} points; "
          f"{seconds:.0f} s on {args.workers} workers")
    out_dir = Path(__file__).resolve().parent / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "calibration_coverage.json").write_text(json.dumps({
        "reps": args.reps, "seed": args.seed, "unlabelled": UNLABELLED, "seconds": seconds,
        "machine": platform.platform(), "cpus": os.cpu_count(), "cells": results}, indent=1))
    for problem in failures:
        print("FAIL:", problem)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
