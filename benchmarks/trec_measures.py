"""trec_eval's default and all_trec measures: EvalSuite next to pytrec_eval (trec_eval's own C code).

Times the computation only (both tools get their inputs already in memory: EvalSuite a Qrels and
a Run, pytrec_eval its dicts), for the measures both compute, on seeded synthetic collections
(graded qrels, about 20 judgements per query, some ties). Prints the medians and the ratio
pytrec_eval / EvalSuite, and checks that the means agree.

    python benchmarks/trec_measures.py --sizes 1kx100,2kx1000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import evalsuite as es  # noqa: E402
from evalsuite.cli.evaluate import expand_measures  # noqa: E402

PYTREC = {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
          "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg",
          "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
          "num_nonrel_judged_ret"}


def collection(n_queries: int, n_docs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(n_queries):
        qid = str(q + 1)
        docs = [f"d{d}" for d in rng.choice(n_docs * 5, size=n_docs, replace=False)]
        scores = np.round(rng.random(n_docs) * 50) / 4  # ties
        run[qid] = dict(zip(docs, scores.tolist()))
        judged = rng.choice(docs + [f"x{i}" for i in range(10)], size=20, replace=False)
        qrels[qid] = {d: int(g) for d, g in zip(judged, rng.integers(0, 4, size=20))}
    return qrels, run


def median_time(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1kx100,2kx1000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    import pytrec_eval

    names = [m for m in expand_measures(["all_trec"]) if not m.startswith(("rbp", "unj"))]  # trec_eval 9 lacks them
    status = 0
    print("| size | measures | EvalSuite (s) | pytrec_eval (s) | pytrec_eval / EvalSuite | max |mean diff| |")
    print("|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        queries, docs = (int(p.replace("k", "000")) for p in size.split("x"))
        qrels, run = collection(queries, docs)
        es_qrels, es_run = es.Qrels.from_dict(qrels), es.Run.from_dict(run)
        ours = median_time(lambda: es.evaluate(es_qrels, es_run, names), args.rounds)
        theirs = median_time(lambda: pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run), args.rounds)
        report = es.evaluate(es_qrels, es_run, names)
        reference = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
        compared = [m for m in names if not m.startswith(("iprec", "11pt", "gm_", "num_"))]  # trec_eval 9 rounding
        worst = max(abs(report.means[m] - float(np.mean([reference[q][m] for q in reference]))) for m in compared)
        status |= worst > 1e-9
        print(f"| {size} | {len(names)} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.1f} | {worst:.1e} |", flush=True)
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
