#!/usr/bin/env python3
"""Active against uniform labelling on RAGTruth's real human labels: interval width against the
number of labels, the share of labels active selection saves at equal width, and coverage by
resampling.

    python benchmarks/label_savings.py                 # 1,000 resamplings per population
    python benchmarks/label_savings.py --reps 200

The data: ``sample_data/calibration/ragtruth_claim_support.csv`` (817 RAGTruth answers of 6 LLMs,
5,667 sentences; the human label of a sentence is 1 when no annotated hallucination span overlaps
it; the judge is the sample's lexical judge, SQuAD-normalised token precision against the
evidence, verdict at >= 0.5). One record per answer, as on the Label page:

- the judge's value ``f`` = the share of the answer's sentences the judge calls supported (what the
  Label page proposes from, and what the estimate corrects);
- the human label ``y`` = 1 when people marked no sentence of the answer as hallucinated (the
  Label page's yes/no: "is this answer faithful to its contexts?").

Populations: every answer (817) and each system's answers (131-139). The target is the
population's mean of ``y`` (every answer has its human label, so the truth is known). In each
resampling (seeded), for each number of labels ``n``:

- uniform: the first ``n`` answers of a random order are labelled; the interval is the one the
  Label/Calibration pages show for a uniform task (``ppi.mean_intervals``: PPI, or the human-only
  Clopper-Pearson interval in its place when ``normal_approximation_problem`` names a reason);
- active: the first ``n`` answers of the priority-sampling order with the default weights from the
  judge's value (``active.sampling_weights``, ``labelling_order``, ``inclusion_probabilities``),
  and ``active.active_mean`` as the pages show it.

Labels saved at equal width: for each ``n`` of uniform selection, the number of active labels
whose mean width equals uniform's mean width at ``n`` (linear interpolation along the active
curve), as ``1 - n_active / n``. Prints the tables and writes
``benchmarks/results/label_savings.json``; exits 1 when a shown interval leaves [0, 1].
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from evalsuite.stats import active, ppi  # noqa: E402

DATA = ROOT / "sample_data" / "calibration" / "ragtruth_claim_support.csv"
CONFIDENCE = 0.95
ALL_LABELS = (20, 40, 60, 80, 100, 150, 200, 300, 400)
SYSTEM_LABELS = (20, 30, 40, 50, 60, 80, 100)


def answers(judge: str = "label") -> pd.DataFrame:
    """One row per answer: system, judge value f (share of sentences the judge calls supported, or
    with ``judge="score"`` the mean of its token-precision scores), human label y."""
    table = pd.read_csv(DATA, dtype={"query_id": str})
    table = table[table["judgement"] == "claim_support"]
    column = "judge_label" if judge == "label" else "judge_score"
    per = table.groupby(["query_id", "system"]).agg(f=(column, "mean"), y=("human_label", "min"))
    return per.reset_index()


def run_population(f: np.ndarray, y: np.ndarray, grid, reps: int, seed: int, tuned: bool) -> dict:
    m = len(f)
    truth = float(y.mean())
    weights = active.sampling_weights(f)
    rng = np.random.default_rng(seed)
    out = {mode: {n: {"low": [], "high": [], "normal": 0} for n in grid} for mode in ("uniform", "active")}
    for r in range(reps):
        order = rng.permutation(m)
        for n in grid:
            lab = order[:n]
            rest = order[n:]
            iv = ppi.mean_intervals(y[lab], f[lab], f[rest], CONFIDENCE, tuned)["ppi"]
            cell = out["uniform"][n]
            cell["low"].append(iv.low)
            cell["high"].append(iv.high)
            cell["normal"] += not iv.note
        _, keys = active.labelling_order(weights, seed=int(rng.integers(2**31)))
        ranked = np.argsort(keys, kind="stable")
        for n in grid:
            labelled = np.zeros(m, dtype=bool)
            labelled[ranked[:n]] = True
            pi = active.inclusion_probabilities(keys, weights, labelled)
            iv = active.active_mean(f, np.where(labelled, y, np.nan), pi, CONFIDENCE, tuned)
            cell = out["active"][n]
            cell["low"].append(iv.low)
            cell["high"].append(iv.high)
            cell["normal"] += not iv.note
    result = {"m": m, "truth": truth, "judge_mean": float(f.mean()), "curves": {}}
    for mode, cells in out.items():
        rows = []
        for n, cell in cells.items():
            low, high = np.array(cell["low"]), np.array(cell["high"])
            rows.append({"n": n, "width": float(np.mean(high - low)),
                         "coverage": float(np.mean((low <= truth) & (truth <= high))),
                         "normal_shown": cell["normal"] / reps,
                         "outside_range": int(np.sum((low < 0) | (high > 1) | (low > high)))})
        result["curves"][mode] = rows
    result["saved"] = savings(result["curves"]["uniform"], result["curves"]["active"])
    return result


def savings(uniform: list[dict], act: list[dict]) -> list[dict]:
    """For each n of uniform selection: the active labels reaching the same mean width."""
    an = np.array([r["n"] for r in act], dtype=float)
    aw = np.array([r["width"] for r in act])
    rows = []
    for r in uniform:
        w = r["width"]
        if w > aw[0] or w < aw[-1]:
            rows.append({"n_uniform": r["n"], "width": w, "n_active": None, "saved": None})
            continue
        # the active curve falls with n: interpolate n along it (np.interp needs increasing x)
        n_active = float(np.interp(w, aw[::-1], an[::-1]))
        rows.append({"n_uniform": r["n"], "width": w, "n_active": n_active, "saved": 1 - n_active / r["n"]})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--tuned", action="store_true", help="PPI++ and tuned active inference (lambda in [0, 1])")
    parser.add_argument("--judge", choices=("label", "score"), default="label",
                        help="the judge's value per answer: share of sentences it calls supported (label) or its "
                             "mean token-precision score (score)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "label_savings.json"))
    args = parser.parse_args(argv)
    data = answers(args.judge)
    started = time.perf_counter()
    populations = {"all answers": data}
    populations.update({s: part for s, part in data.groupby("system")})
    results = {}
    for i, (name, part) in enumerate(populations.items()):
        grid = ALL_LABELS if name == "all answers" else SYSTEM_LABELS
        grid = tuple(n for n in grid if n < len(part))
        results[name] = run_population(part["f"].to_numpy(float), part["y"].to_numpy(float), grid, args.reps,
                                       args.seed + i, args.tuned)
        res = results[name]
        print(f"\n{name}: {res['m']} answers, human share of faithful answers {res['truth']:.3f}, "
              f"judge mean {res['judge_mean']:.3f}")
        print(f"{'n':>5} {'uniform width':>14} {'cover':>6} {'normal':>7} {'active width':>13} {'cover':>6} "
              f"{'normal':>7} {'active n at uniform width':>26} {'saved':>6}")
        for u, a, s in zip(res["curves"]["uniform"], res["curves"]["active"], res["saved"]):
            saved = "" if s["saved"] is None else f"{100 * s['saved']:5.1f}%"
            n_act = "" if s["n_active"] is None else f"{s['n_active']:.1f}"
            print(f"{u['n']:>5} {u['width']:>14.4f} {100 * u['coverage']:>5.1f}% {100 * u['normal_shown']:>6.1f}% "
                  f"{a['width']:>13.4f} {100 * a['coverage']:>5.1f}% {100 * a['normal_shown']:>6.1f}% "
                  f"{n_act:>26} {saved:>6}")
    seconds = time.perf_counter() - started
    bad = sum(r["outside_range"] for res in results.values() for c in res["curves"].values() for r in c)
    report = {"reps": args.reps, "seed": args.seed, "tuned": args.tuned, "judge": args.judge, "seconds": seconds,
              "machine": platform.platform(), "cpus": os.cpu_count(), "data": str(DATA.relative_to(ROOT)),
              "populations": results}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(f"\n{seconds:.0f} s; {bad} intervals outside [0, 1]; written {args.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
