"""The RAGAS judge's embedding phase: ``answer_similarity`` (the embedding judge) and the
similarities of the questions generated for answer relevancy to the question, with one stop for
every phase (:class:`~evalsuite.judges.ragas.RagasJudge` runs it last)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..metrics.registry import JUDGED_METRICS, METRICS
from ._base import Provenance, combine_rows, row_outcome, write_columns
from .embedding import EmbeddingJudge, cosine_similarity

__all__ = ["embedding_phase", "SIMILARITY_METRICS", "column_type"]

#: The judged metrics that read ``answer_similarity``.
SIMILARITY_METRICS = frozenset(m for m in JUDGED_METRICS if "answer_similarity" in METRICS[m].columns)


def embedding_phase(judge, records, wanted: set, report):
    """The embedding phase of ``judge`` (a :class:`~evalsuite.judges.ragas.RagasJudge`): ``(records,
    records done, outcome per record)``; Ctrl-C or its ``stop`` end it at once."""
    table = records.table
    n = table.num_rows
    rows = _rows(records)
    columns: dict[str, list] = {}
    provs: list[list[Provenance]] = [[] for _ in range(n)]
    embedder = judge.embedder
    model = getattr(embedder, "model_id", None)
    host = getattr(embedder, "endpoint_host", None)
    done = np.ones(n, bool)
    similar = None
    if wanted & SIMILARITY_METRICS:
        similarity = EmbeddingJudge(embedder)
        similarity._stop = judge._stop  # one stop for every phase
        judged = similarity.judge(records)
        similar = judged.rows
        records = judged.records
        table = records.table
        judge.stats.add(rule_decided=judged.stats.rule_decided)
        done[similarity.unfinished] = False  # pairs a stop left unembedded
        if judged.stats.stopped:  # Ctrl-C while it embedded: the later phases do not run
            judge._stop.set()
    if "answer_relevancy" in wanted and "generated_questions" in table.column_names and not judge._stop.is_set():
        generated = table.column("generated_questions").to_pylist()
        old = (table.column("question_similarities").to_pylist() if "question_similarities" in table.column_names
               else [None] * n)
        sims: list = list(old)
        texts: list[str] = []
        spans = []
        for i, (row, gen) in enumerate(zip(rows, generated)):
            if gen is None or row["question"] is None:
                continue
            if not gen:
                sims[i] = []
                provs[i].append(judge._rule("question_similarities", "no generated question"))
                continue
            spans.append((i, len(texts), len(gen)))
            texts += [row["question"], *gen]
        if hasattr(embedder, "embed_partial"):
            vectors, embedded, interrupted = embedder.embed_partial(texts, stop=judge._stop) if texts else (
                np.zeros((0, 1)), np.zeros(0, bool), False)
            if interrupted:
                judge._stop.set()
        else:
            vectors, embedded = embedder.embed(texts) if texts else np.zeros((0, 1)), np.ones(len(texts), bool)
        for i, start, k in spans:
            if not embedded[start:start + 1 + k].all():
                done[i] = False
                continue
            qv = np.repeat(vectors[start:start + 1], k, axis=0)
            cos = cosine_similarity(qv, vectors[start + 1:start + 1 + k])
            sims[i] = [float(min(1.0, max(0.0, x))) for x in cos]
            provs[i].append(Provenance(column="question_similarities", judge="embedding", model=model,
                                       endpoint_host=host))
        columns["question_similarities"] = sims
    elif "answer_relevancy" in wanted and judge._stop.is_set():
        done[:] = False
    report(n, n, judge.stats)
    if columns:
        records = write_columns(records, columns, provs, {c: column_type(c) for c in columns})
    outcomes = combine_rows(similar, [row_outcome(p) if ok else None for p, ok in zip(provs, done)])
    return records, int(done.sum()), outcomes


def column_type(column: str) -> pa.DataType:
    from ..records.schema import ARROW_TYPES, field_kind

    return ARROW_TYPES[field_kind(column)]


def _rows(records) -> list[dict]:
    table = records.table
    n = table.num_rows
    cols = {name: (table.column(name).to_pylist() if name in table.column_names else [None] * n)
            for name in ("question", "answer", "reference", "contexts")}
    return [{name: cols[name][i] for name in cols} for i in range(n)]
