"""Seeded random runs and qrels, and the same data evaluated by ranx and pytrec_eval."""

from __future__ import annotations

import numpy as np


def random_collection(seed: int, n_queries: int = 300, max_docs: int = 150, graded: bool = True,
                      n_missing_from_run: int = 10, n_missing_from_qrels: int = 10, ties: bool = False):
    """A run and qrels as {query: {doc: value}} dicts, with no tied scores (even in float32);
    with ``ties`` each query's scores take only a few values (exact in float32), so most docs tie.

    Some qrels queries are absent from the run, some run queries have no qrels, some queries
    have only non-relevant judgements, some retrieve nothing relevant; grades 0..3 (or 0/1)
    and a few -1.
    """
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    n_total = n_queries + n_missing_from_qrels
    for i in range(n_total):
        qid = f"q{i:04d}"
        n_docs = int(rng.integers(1, max_docs + 1))
        pool = rng.choice(5000, size=n_docs + 40, replace=False)
        docs = [f"d{d}" for d in pool[:n_docs]]
        # Distinct scores that stay distinct in float32: a permutation of well-spaced values.
        scores = (rng.permutation(n_docs) + 1) * 0.5 + rng.integers(0, 1000) * 1000.0
        if ties:
            scores = rng.integers(0, 6, size=n_docs) * 0.25 + float(rng.integers(0, 100))
        if i >= n_missing_from_run or i >= n_queries:
            run[qid] = {d: float(s) for d, s in zip(docs, scores)}
        if i < n_queries:
            judged = {}
            n_judged = int(rng.integers(0, 25))
            for d in rng.choice(pool, size=min(n_judged, len(pool)), replace=False):
                grade = int(rng.integers(0, 4)) if graded else int(rng.integers(0, 2))
                if graded and rng.random() < 0.05:
                    grade = -1
                judged[f"d{d}"] = grade
            if not judged:
                judged[f"d{pool[0]}"] = 0
            qrels[qid] = judged
    return qrels, run


def in_trec_order(run: dict) -> dict:
    """The run with each query's docs inserted in trec_eval's order (score descending, ties by doc id
    descending), so that a tool that keeps insertion order for ties (ranx) ranks as EvalSuite does."""
    return {q: dict(sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)) for q, docs in run.items()}
