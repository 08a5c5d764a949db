"""Comparison statistics at MS MARCO scale: EvalSuite's shared resampling pass next to scipy per metric.

    python benchmarks/compare.py                 # 7,000 queries, 4 metrics, 10,000 resamples
    python benchmarks/compare.py --queries 2000 --rounds 1

Per-query values are generated (seeded) with the shapes real metrics have: nDCG@10 and MAP@100
continuous in [0, 1] with many zeros, MRR@10 in {0, 1/10, ..., 1/2, 1}, R@100 in multiples of
1/R (many exact ties between systems). Measured in one process, side by side:

- **evalsuite, 2 systems**: ``compare_per_query`` of two systems on the 4 metrics: the whole
  report (randomisation test, BCa interval, Holm correction, effect sizes, W/T/L);
- **scipy per metric**: what a report cost before: per metric one ``scipy.stats.permutation_test``
  (sign flips, same resamples, batched) and one ``scipy.stats.bootstrap`` (BCa, batched), then
  Holm over the 4 p-values;
- **evalsuite, 10 systems vs a baseline**: 40 rows; also with the Westfall-Young correction,
  and all 55 pairs of the 11 systems (220 rows).

Rounds are interleaved (EvalSuite, scipy, ten systems, Westfall-Young in each round) and the
ratio to scipy is taken within a round, so a busy period of a shared machine hits both sides.

Agreement: every interval equals scipy's (same seed and batch, so the same resampled queries) to
1e-4 of its width (to rounding, but for resampled means tied with the observed one, which BCa's
bias correction counts), every p-value is within 5 Monte Carlo standard deviations of scipy's. The script exits 1
if not. Results go to stdout and ``benchmarks/results/compare.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
import scipy.stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalsuite.stats.comparison import compare_per_query  # noqa: E402
from evalsuite.stats.paired import adjust_p_values  # noqa: E402
from evalsuite.stats.resampling import BLOCK_ELEMENTS  # noqa: E402

METRICS = ("ndcg@10", "map@100", "mrr@10", "recall@100")


def per_query_tables(n_queries: int, n_systems: int, seed: int = 0) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ids = pd.Index([f"q{1_000_000 + i}" for i in range(n_queries)], name="query_id")
    quality = rng.beta(1.2, 2.0, n_queries)  # how easy each query is: shared by all systems
    n_relevant = rng.integers(1, 8, n_queries)
    tables = {}
    for s in range(n_systems):
        skill = 0.0 if s == 0 else rng.normal(0.0, 0.01)
        q = np.clip(quality + skill + rng.normal(0, 0.12, n_queries), 0, 1)
        ndcg = np.where(q < 0.15, 0.0, q)
        ap = np.where(q < 0.2, 0.0, q ** 1.3)
        first = np.clip(np.ceil((1 - q) * 12), 1, 11)
        mrr = np.where(first > 10, 0.0, 1.0 / first)
        recall = np.round(np.clip(q + 0.3, 0, 1) * n_relevant) / n_relevant
        tables["baseline" if s == 0 else f"system{s}"] = pd.DataFrame(
            {"ndcg@10": ndcg, "map@100": ap, "mrr@10": mrr, "recall@100": recall}, index=ids)
    return tables


def mean_statistic(x, axis=-1):
    return np.mean(x, axis=axis)


def scipy_report(base: pd.DataFrame, other: pd.DataFrame, n_resamples: int, seed: int) -> dict:
    """The report's statistics with scipy called per metric (what EvalSuite did before)."""
    out = {}
    for metric in METRICS:
        d = other[metric].to_numpy() - base[metric].to_numpy()
        batch = max(1, min(n_resamples, BLOCK_ELEMENTS // d.size))
        p = scipy.stats.permutation_test((d,), mean_statistic, permutation_type="samples", vectorized=True,
                                         n_resamples=n_resamples, batch=batch, rng=np.random.default_rng(seed)).pvalue
        ci = scipy.stats.bootstrap((d,), mean_statistic, n_resamples=n_resamples, vectorized=True, batch=batch,
                                   method="BCa", rng=np.random.default_rng(seed)).confidence_interval
        out[metric] = (float(p), float(ci.low), float(ci.high))
    adjusted = adjust_p_values([v[0] for v in out.values()], "holm")
    return {m: (*v, float(a)) for (m, v), a in zip(out.items(), adjusted)}


def timed(fn, rounds: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=7_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median and min reported)")
    parser.add_argument("--scipy-rounds", type=int, default=3,
                        help="how many of the rounds also time scipy (10-40 s each on 2 cores)")
    args = parser.parse_args()
    B, n = args.resamples, args.queries
    tables = per_query_tables(n, 11)
    two = {k: tables[k] for k in ("baseline", "system1")}
    ours = lambda: compare_per_query(two, list(METRICS), n_resamples=B)  # noqa: E731
    ours()  # imports scipy.stats and warms the caches once, for both sides
    results = {}
    ten = lambda: compare_per_query(tables, list(METRICS), n_resamples=B)  # noqa: E731
    wy = lambda: compare_per_query(tables, list(METRICS), n_resamples=B, correction="westfall_young")  # noqa: E731
    # Interleaved rounds (ours, scipy, ours with ten systems, Westfall-Young), so that a busy
    # period of the shared machine hits both sides of a ratio; the ratio is taken within a round.
    times: dict[str, list[float]] = {"ours": [], "scipy": [], "ten": [], "wy": []}
    report = ten_report = theirs = None
    for r in range(args.rounds):
        t_two, report = timed(ours, 1)
        times["ours"].append(t_two)
        if r < args.scipy_rounds:
            start = time.perf_counter()
            theirs = scipy_report(two["baseline"], two["system1"], B, 0)
            times["scipy"].append(time.perf_counter() - start)
        t_ten, ten_report = timed(ten, 1)
        times["ten"].append(t_ten)
        times["wy"].append(timed(wy, 1)[0])
    ratios = [s_ / o for s_, o in zip(times["scipy"], times["ours"])]
    t_ours, t_scipy = statistics.median(times["ours"]), statistics.median(times["scipy"])
    t_ten, t_wy = statistics.median(times["ten"]), statistics.median(times["wy"])
    results["two_systems"] = {"evalsuite_s": times["ours"], "scipy_per_metric_s": times["scipy"],
                              "speedup_per_round": ratios, "evalsuite_median_s": t_ours,
                              "scipy_median_s": t_scipy, "speedup_median": statistics.median(ratios)}
    # Agreement with scipy on the same per-query differences.
    ok = True
    for row in report.table.itertuples():
        p, low, high, _ = theirs[row.metric]
        q = min(max(p / 2, 1 / B), 0.5)
        tol = 5 * math.sqrt(2 * 4 * q * (1 - q) / B) + 2 / B
        # Same resampled queries; the means differ from scipy's np.mean by rounding only, but a
        # resampled mean that equals the observed one exactly (ties are common for MRR and recall)
        # can land on either side of it, which moves BCa's bias correction a little: 1e-4 of the
        # interval's width allows that and nothing more.
        ci_tol = 1e-4 * (high - low)
        agree = abs(row.p_value - p) <= tol and abs(row.ci_low - low) <= ci_tol and abs(row.ci_high - high) <= ci_tol
        ok &= agree
        results.setdefault("agreement", []).append({
            "metric": row.metric, "p_evalsuite": row.p_value, "p_scipy": p, "p_tolerance": tol,
            "ci_evalsuite": [row.ci_low, row.ci_high], "ci_scipy": [low, high], "agree": bool(agree)})

    pairs = lambda: compare_per_query(tables, list(METRICS), n_resamples=B, pairs="all")  # noqa: E731
    t_pairs, pairs_report = timed(pairs, 1)
    results["ten_vs_baseline"] = {"rows": len(ten_report.table), "evalsuite_s": times["ten"],
                                  "scipy_per_row_estimate_s": t_scipy / len(METRICS) * len(ten_report.table)}
    results["ten_vs_baseline_westfall_young"] = {"evalsuite_s": times["wy"]}
    results["all_pairs_11_systems"] = {"rows": len(pairs_report.table), "evalsuite_s": t_pairs}
    results["machine"] = {"cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
                          "processor": platform.processor() or platform.machine(), "python": platform.python_version(),
                          "numpy": np.__version__, "scipy": scipy.__version__, "pandas": pd.__version__,
                          "queries": n, "resamples": B, "metrics": list(METRICS), "rounds": args.rounds,
                          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    out = ROOT / "benchmarks" / "results" / "compare.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")

    print(f"{n:,} queries, {len(METRICS)} metrics, {B:,} resamples; median (min) of {args.rounds} interleaved "
          f"rounds (scipy: {args.scipy_rounds})")
    print(f"  2 systems, whole report    evalsuite {t_ours:6.2f} s ({min(times['ours']):.2f})   scipy per metric "
          f"{t_scipy:6.2f} s ({min(times['scipy']):.2f})   x{statistics.median(ratios):.0f} within a round "
          f"(per round: {', '.join(f'{x:.0f}' for x in ratios)})")
    print(f"  10 systems vs baseline     evalsuite {t_ten:6.2f} s ({min(times['ten']):.2f})   ({len(ten_report.table)} "
          f"rows; scipy per row would take about {results['ten_vs_baseline']['scipy_per_row_estimate_s']:.0f} s)")
    print(f"  same, Westfall-Young       evalsuite {t_wy:6.2f} s ({min(times['wy']):.2f})")
    print(f"  all pairs of 11 systems    evalsuite {t_pairs:6.2f} s   ({len(pairs_report.table)} rows, 1 round)")
    print(f"  agreement with scipy: {'OK' if ok else 'FAIL'}")
    for a in results["agreement"]:
        print(f"    {a['metric']:<11} p {a['p_evalsuite']:.4f} vs {a['p_scipy']:.4f} (tol {a['p_tolerance']:.4f})  "
              f"CI [{a['ci_evalsuite'][0]:+.5f}, {a['ci_evalsuite'][1]:+.5f}] vs "
              f"[{a['ci_scipy'][0]:+.5f}, {a['ci_scipy'][1]:+.5f}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
