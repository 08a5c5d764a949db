#!/usr/bin/env python3
"""Build the calibration samples in ``sample_data/calibration/`` from real human labels.

Run from anywhere::

    python scripts/build_calibration_sample.py

Reads only the raw source copies under ``sample_data/sources/`` (each with its SOURCE.md and
licence) and writes three judgement tables (CSV; columns as in ``evalsuite.stats.judgement_tables``):

* ``ragtruth_claim_support.csv`` <- sources/ragtruth_qa/ragtruth_qa_responses.jsonl
  (human: RAGTruth's hallucination spans, per answer sentence; judge: lexical token precision)
* ``ares_labels.csv``            <- sources/ares_fewshot/*_few_shot_prompt_for_judge_scoring.tsv
  (human: ARES's [[Yes]]/[[No]] labels; judge: lexical token overlap)
* ``alce_utility.csv``           <- sources/alce_human_eval/human_eval_utility_completed.json
  (human: ALCE's 1-5 utility ratings; judge: ALCE's recorded automatic correctness scores)

No LLM runs here, so the judge values are deterministic: a lexical judge (below), or, for ALCE,
the automatic scores recorded in the source file. The judge name in each row says which.

**The lexical judge** ("lexical token precision"): texts are normalised as in the official SQuAD
v1.1 evaluation script (lower case, punctuation and the articles a/an/the removed, whitespace
split); the score of a *text* against an *evidence* is the share of the text's tokens (counted with
multiplicity) that the evidence also holds (the precision half of SQuAD token F1, with the
evidence's token counts as the clip). Label = score >= 0.5, fixed before looking at the data.

Standard library only; deterministic output (fixed row order, ``\\n`` line endings, UTF-8).
"""

from __future__ import annotations

import collections
import csv
import json
import re
import string
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "sample_data" / "sources"
OUT = ROOT / "sample_data" / "calibration"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_sample_data import read_jsonl, split_sentences  # noqa: E402  (the RAGTruth sentence rule)

COLUMNS = ["query_id", "system", "judgement", "item", "judge", "judge_score", "judge_label", "human_label",
           "human_score"]
THRESHOLD = 0.5
LEXICAL = "lexical token precision (SQuAD normalisation), label at >= 0.5"
ALCE_JUDGE = "ALCE automatic correctness (recorded in the source), label at >= 0.5"

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def tokens(text: str) -> list[str]:
    """SQuAD v1.1 normalisation: lower case, drop punctuation, drop articles, split on whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return _ARTICLES.sub(" ", text).split()


def token_precision(text: str, evidence: str) -> float | None:
    """Share of ``text``'s tokens found in ``evidence`` (multiset clip); None for a text without tokens."""
    t = collections.Counter(tokens(text))
    if not t:
        return None
    e = collections.Counter(tokens(evidence))
    return sum((t & e).values()) / sum(t.values())


def row(query_id, system, judgement, item, judge, score, human_label, human_score=None) -> list:
    label = "" if score is None else int(score >= THRESHOLD)
    return [query_id, system, judgement, item, judge, "" if score is None else f"{score:.6f}", label,
            "" if human_label is None else int(human_label), "" if human_score is None else human_score]


def ragtruth() -> list[list]:
    """One row per answer sentence: human 1 when no hallucination span overlaps it (as in
    sample_data/rag/ragtruth_qa.jsonl's answer_claims_supported), judge = token precision of the
    sentence against the three passages joined."""
    rows = []
    for rec in read_jsonl(SOURCES / "ragtruth_qa" / "ragtruth_qa_responses.jsonl"):
        text, spans = rec["response"], rec["hallucination_spans"]
        evidence = "\n".join(rec["contexts"])
        for i, (a, b) in enumerate(split_sentences(text)):
            sentence = text[a:b]
            end = a + len(sentence.rstrip())
            supported = not any(s["start"] < end and s["end"] > a for s in spans)
            rows.append(row(str(rec["source_id"]), rec["model"], "claim_support", i, LEXICAL,
                            token_precision(sentence, evidence), supported))
    assert len({(r[0], r[1]) for r in rows}) == 817, "RAGTruth: expected 817 answers"
    return rows


def ares() -> list[list]:
    """One row per (ARES example, label type); system = the source benchmark of the example file.
    Context relevance: the query's tokens in the passage; faithfulness: the answer's tokens in the
    passage; answer relevance: the query's tokens in the answer (a lexical judge cannot do better)."""
    rows = []
    files = sorted((SOURCES / "ares_fewshot").glob("*_few_shot_prompt_for_judge_scoring.tsv"))
    for path in files:
        dataset = path.name.split("_")[0]
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t")
            for i, rec in enumerate(reader):
                qid = f"{dataset}-{i}"
                checks = (("context_relevance", rec["Query"], rec["Document"], rec["Context_Relevance_Label"]),
                          ("answer_faithfulness", rec["Answer"], rec["Document"], rec["Answer_Faithfulness_Label"]),
                          ("answer_relevance", rec["Query"], rec["Answer"], rec["Answer_Relevance_Label"]))
                for judgement, text, evidence, label in checks:
                    label = label.strip()
                    assert label in ("[[Yes]]", "[[No]]"), (path.name, i, label)
                    rows.append(row(qid, dataset, judgement, 0, LEXICAL, token_precision(text, evidence),
                                    label == "[[Yes]]"))
    assert len(rows) == 42 * 3, len(rows)
    return rows


def alce() -> list[list]:
    """One row per rated answer: human_score = utility 1..5, human_label = utility >= 4;
    judge_score = mean of ALCE's automatic correctness list (None when empty)."""
    data = json.loads((SOURCES / "alce_human_eval" / "human_eval_utility_completed.json").read_text("utf-8"))
    rows = []
    for dataset in sorted(data):
        for run in sorted(data[dataset]):
            for qid, rec in sorted(data[dataset][run].items()):
                if qid == "overall_results":
                    continue
                scores = [float(x) for x in rec["automatic_correctness_scores"]]
                score = sum(scores) / len(scores) if scores else None
                utility = int(rec["utility_score"])
                rows.append(row(qid, run, "answer_utility", 0, ALCE_JUDGE, score, utility >= 4, utility))
    assert len(rows) == 800, len(rows)
    return rows


def write(path: Path, rows: list[list]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)


def main(out: Path = OUT) -> None:
    out.mkdir(exist_ok=True)
    write(out / "ragtruth_claim_support.csv", ragtruth())
    write(out / "ares_labels.csv", ares())
    write(out / "alce_utility.csv", alce())


if __name__ == "__main__":
    main()
