#!/usr/bin/env python3
"""Build the RAG sample records in ``sample_data/rag/`` from ``sample_data/sources/``.

Run from anywhere (paths are relative to this file's repository)::

    python scripts/build_sample_data.py

Reads only the raw source copies under ``sample_data/sources/`` (each with its SOURCE.md and
licence files) and writes five JSONL files of per-request records (fields as in the project's
RAG record schema; see ``sample_data/rag/README.md`` for every derivation rule):

* ``ragtruth_qa.jsonl``            <- sources/ragtruth_qa/ragtruth_qa_responses.jsonl
* ``llmperf_requests.jsonl``       <- sources/llmperf_latency/individual/*.json
* ``ragchecker_examples.jsonl``    <- sources/ragchecker/checking_outputs.json
* ``ragchecker_human_systems.jsonl`` <- sources/ragchecker/human_labeled_data.subset.json
* ``ares_judge_examples.jsonl``    <- sources/ares_fewshot/*_few_shot_prompt_for_judge_scoring.tsv

Standard library only. Output is deterministic: fixed record and key order, ``\\n`` line
endings, UTF-8, ``json.dumps(..., ensure_ascii=False)``. Counts are checked against the
figures stated in the SOURCE.md files; the script fails loudly if a source changed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "sample_data" / "sources"
OUT = ROOT / "sample_data" / "rag"


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

def write_jsonl(path: Path, records: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_json(path: Path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


# --------------------------------------------------------------------------------------------
# sentence splitter (RAGTruth)
# --------------------------------------------------------------------------------------------

# a sentence-ending run: . ! ? (one or more), optionally followed by closing quotes/brackets
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*$")
# a sentence that is only a list number such as "2." is not ended (it is a numbered-list marker)
_LIST_NUMBER = re.compile(r"\d+\.")
_WHITESPACE = re.compile(r"\s+")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into sentences; return their ``(start, end)`` character offsets.

    Rule: a sentence ends at a run of whitespace that either contains a line break, or
    follows ``.``, ``!`` or ``?`` (a run of them, optionally followed by closing quotes or
    brackets ``" ' ” ’ ) ]``), except when the sentence so far is only a list number such as
    ``2.``. The whitespace run belongs to the sentence before it, so the sentences cover the
    text exactly (``"".join(text[s:e] for s, e in spans) == text``); leading whitespace of the
    text belongs to the first sentence, trailing whitespace to the last. Text with no such
    boundary is one sentence. The empty string gives one empty sentence ``[(0, 0)]``.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _WHITESPACE.finditer(text):
        i, j = m.span()
        if j == len(text):
            break  # trailing whitespace stays with the last sentence
        so_far = text[start:i].strip()
        if not so_far:
            continue  # leading whitespace: no empty sentence
        if "\n" in m.group() or (
            _SENTENCE_END.search(so_far) and not _LIST_NUMBER.fullmatch(so_far)
        ):
            spans.append((start, j))
            start = j
    spans.append((start, len(text)))
    return spans


def sentence_flags(text: str, hallucination_spans: list[dict]) -> list[bool]:
    """Per sentence: True if no hallucination span overlaps it, else False.

    Overlap is tested against the sentence without its trailing whitespace: span
    ``[s, e)`` overlaps sentence ``[a, b)`` iff ``s < b and e > a``.
    """
    flags = []
    for a, end in split_sentences(text):
        b = a + len(text[a:end].rstrip())
        hit = any(sp["start"] < b and sp["end"] > a for sp in hallucination_spans)
        flags.append(not hit)
    return flags


# --------------------------------------------------------------------------------------------
# 1. RAGTruth QA
# --------------------------------------------------------------------------------------------

RAGTRUTH_PER_MODEL = {
    "llama-2-7b-chat": 139, "llama-2-13b-chat": 139, "gpt-4-0613": 138,
    "llama-2-70b-chat": 137, "gpt-3.5-turbo-0613": 133, "mistral-7B-instruct": 131,
}


def build_ragtruth() -> list[dict]:
    rows = read_jsonl(SOURCES / "ragtruth_qa" / "ragtruth_qa_responses.jsonl")
    records = []
    for r in rows:
        text = r["response"]
        spans = r["hallucination_spans"]
        for sp in spans:  # offsets must index the answer
            assert text[sp["start"]:sp["end"]] == sp["text"], (r["source_id"], sp)
        rec = {
            "query_id": str(r["source_id"]),
            "system": r["model"],
            "question": r["question"],
            "contexts": list(r["contexts"]),
            "answer": text,
            "answer_claims_supported": sentence_flags(text, spans),
            "success": not spans,
            # No failure_stage: es.attribute_failures gives "generation" (rule "unsupported answer
            # claims": a sentence a human hallucination span touches) and says so per request.
        }
        if spans:
            counts = Counter(sp["label_type"] for sp in spans)
            rec["error"] = "hallucination: " + ", ".join(
                f"{label} x{n}" for label, n in sorted(counts.items())
            )
        records.append(rec)

    assert len(records) == 817, len(records)
    assert dict(Counter(r["system"] for r in records)) == RAGTRUTH_PER_MODEL
    assert sum(not r["success"] for r in records) == 259
    assert len({(r["query_id"], r["system"]) for r in records}) == len(records)
    return records


# --------------------------------------------------------------------------------------------
# 2. LLMPerf leaderboard requests
# --------------------------------------------------------------------------------------------

# endpoint -> (requests, {error_code: count}) as stated in sources/llmperf_latency/SOURCE.md
LLMPERF_EXPECTED = {
    **{f"anyscale_{s}": (150, {}) for s in ("7b", "13b", "70b")},
    "bedrock_13b": (150, {-100: 97}),
    "bedrock_70b": (150, {-100: 49}),
    **{f"fireworks_{s}": (150, {}) for s in ("7b", "13b", "70b")},
    "groq_70b": (150, {}),
    **{f"lepton_{s}": (150, {429: 130}) for s in ("7b", "13b", "70b")},
    "perplexity_70b": (150, {429: 2}),
    "replicate_7b": (150, {}), "replicate_13b": (150, {}), "replicate_70b": (145, {}),
    "together_7b": (150, {}), "together_13b": (150, {-1: 1}), "together_70b": (150, {}),
}


def llmperf_failure_stage(error_code: int) -> str:
    if error_code == -100:  # LLMPerf: "Output too few tokens N"
        return "generation"
    if error_code == 429:  # provider HTTP 429, rate limited
        return "orchestration"
    return "other"


def build_llmperf() -> list[dict]:
    files = sorted((SOURCES / "llmperf_latency" / "individual").glob("*.json"))
    records = []
    for path in files:
        system = path.stem
        rows = read_json(path)
        n_expected, codes_expected = LLMPERF_EXPECTED[system]
        codes = Counter(r["error_code"] for r in rows if r["error_code"] is not None)
        assert (len(rows), dict(codes)) == (n_expected, codes_expected), system
        for index, r in enumerate(rows):
            ok = r["error_code"] is None
            rec = {
                "query_id": f"{system}-{index:03d}",
                "system": system,
                "success": ok,
                "failure_stage": None if ok else llmperf_failure_stage(r["error_code"]),
            }
            # Successes and -100 failures (a response shorter than requested: a real request with
            # real timings) carry their latencies; 429 / -1 rows hold zeros that are no measurement.
            if ok or r["error_code"] == -100:
                rec["latency_ms"] = float(r["end_to_end_latency_s"]) * 1000
                rec["latency_ttft_ms"] = float(r["ttft_s"]) * 1000
            if not ok:
                rec["error"] = r["error_msg"] or f"error_code {r['error_code']} (no message)"
            if "GEN_TEXT" in r:  # only the two bedrock files carry the generated text
                rec["answer"] = r["GEN_TEXT"]
            rec["error_code"] = r["error_code"]
            rec["number_input_tokens"] = r["number_input_tokens"]
            rec["number_output_tokens"] = r["number_output_tokens"]
            records.append(rec)

    assert len(files) == 19
    assert len(records) == 2845, len(records)
    assert sum(not r["success"] for r in records) == 539
    assert sum(not r["success"] and "latency_ms" in r for r in records) == 146  # the -100 rows
    return records


# --------------------------------------------------------------------------------------------
# 3. RAGChecker example outputs
# --------------------------------------------------------------------------------------------

def _entailed(label: str) -> bool:
    return label == "Entailment"


def build_ragchecker_examples() -> list[dict]:
    data = read_json(SOURCES / "ragchecker" / "checking_outputs.json")
    records = []
    for r in data["results"]:
        n_resp = len(r["response_claims"])
        n_gt = len(r["gt_answer_claims"])
        n_ctx = len(r["retrieved_context"])
        # RAGChecker (ragchecker/evaluator.py, check_claims):
        #   answer2response   : response claims checked against the gt answer   -> [n_resp]
        #   response2answer   : gt-answer claims checked against the response   -> [n_gt]
        #   retrieved2response: response claims checked against each chunk     -> [n_resp][n_ctx]
        #   retrieved2answer  : gt-answer claims checked against each chunk     -> [n_gt][n_ctx]
        assert len(r["answer2response"]) == n_resp
        assert len(r["response2answer"]) == n_gt
        assert len(r["retrieved2response"]) == n_resp
        assert all(len(row) == n_ctx for row in r["retrieved2response"])
        assert len(r["retrieved2answer"]) == n_gt
        assert all(len(row) == n_ctx for row in r["retrieved2answer"])

        ret2resp = [[_entailed(x) for x in row] for row in r["retrieved2response"]]
        ret2ans = [[_entailed(x) for x in row] for row in r["retrieved2answer"]]
        rec = {
            "query_id": str(r["query_id"]),
            "system": "ragchecker_example",
            "question": r["query"],
            "reference": r["gt_answer"],
            "answer": r["response"],
            "contexts": [c["text"] for c in r["retrieved_context"]],
            "context_ids": [str(c["doc_id"]) for c in r["retrieved_context"]],
            # chunk entails at least one gt-answer claim (RAGChecker's psg_useful)
            "context_useful": [any(row[k] for row in ret2ans) for k in range(n_ctx)],
            "reference_claims_supported": [any(row) for row in ret2ans],
            "answer_claims_supported": [any(row) for row in ret2resp],
            "answer_claims_in_reference": [_entailed(x) for x in r["answer2response"]],
            "reference_claims_in_answer": [_entailed(x) for x in r["response2answer"]],
            "answer_claims": r["response_claims"],
            "reference_claims": r["gt_answer_claims"],
        }
        # the derived lists must reproduce RAGChecker's own per-record metrics
        m = r["metrics"]

        def mean(xs):
            return sum(xs) / len(xs)

        assert abs(mean(rec["answer_claims_in_reference"]) - m["precision"]) < 1e-12
        assert abs(mean(rec["reference_claims_in_answer"]) - m["recall"]) < 1e-12
        assert abs(mean(rec["answer_claims_supported"]) - m["faithfulness"]) < 1e-12
        assert abs(mean(rec["reference_claims_supported"]) - m["claim_recall"]) < 1e-12
        assert abs(mean(rec["context_useful"]) - m["context_precision"]) < 1e-12
        records.append(rec)

    assert len(records) == 2
    return records


# --------------------------------------------------------------------------------------------
# 4. RAGChecker human meta-evaluation responses (8 systems)
# --------------------------------------------------------------------------------------------

def build_ragchecker_human() -> list[dict]:
    data = read_json(SOURCES / "ragchecker" / "human_labeled_data.subset.json")
    # source query_id is not unique per instance (3 ids are reused across datasets),
    # so instance_id is the record's query_id; the source query_id is kept alongside.
    seen: dict[int, dict] = {}
    records = []
    for r in data:
        iid = r["instance_id"]
        if iid in seen:  # the second annotator's record: same query and same two responses
            first = seen[iid]
            for key in ("dataset", "query_id", "query", "gt_answer"):
                assert first[key] == r[key], (iid, key)
            for side in ("model1", "model2"):
                assert first[side]["model_name"] == r[side]["model_name"], (iid, side)
                assert first[side]["response"] == r[side]["response"], (iid, side)
            continue
        seen[iid] = r
        for side in ("model1", "model2"):
            records.append({
                "query_id": str(iid),
                "system": r[side]["model_name"],
                "question": r["query"],
                "reference": r["gt_answer"],
                "answer": r[side]["response"],
                "dataset": r["dataset"],
                "dataset_query_id": str(r["query_id"]),
            })

    assert len(data) == 448 and len(seen) == 224
    assert len(records) == 448
    assert len({(r["query_id"], r["system"]) for r in records}) == len(records)
    assert set(Counter(r["system"] for r in records).values()) == {56}
    return records


# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# 5. ARES few-shot judge examples (hand-labelled context relevance, faithfulness, relevance)
# --------------------------------------------------------------------------------------------

ARES_DATASETS = ("fever", "hotpotqa", "multirc", "nq", "record", "wow")
ARES_LABELS = {"[[Yes]]": True, "[[No]]": False}


def build_ares() -> list[dict]:
    import csv

    records = []
    for dataset in ARES_DATASETS:
        path = SOURCES / "ares_fewshot" / f"{dataset}_few_shot_prompt_for_judge_scoring.tsv"
        with path.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        assert len(rows) == 7, (dataset, len(rows))
        for index, r in enumerate(rows):
            context, relevant = ARES_LABELS[r["Context_Relevance_Label"]], ARES_LABELS[r["Answer_Relevance_Label"]]
            faithful = ARES_LABELS[r["Answer_Faithfulness_Label"]]
            records.append({
                "query_id": f"{dataset}-{index}",
                "system": "ares_judge_examples",
                "question": r["Query"],
                "contexts": [r["Document"]],
                "answer": r["Answer"],
                # The one retrieved passage, judged relevant to the query or not.
                "context_relevant": [context],
                # The answer as one claim: faithful to the passage or not.
                "answer_claims_supported": [faithful],
                "success": relevant and faithful,
                "answer_relevant": relevant,
                "dataset": dataset,
            })
    assert len(records) == 42
    labels = Counter((r["context_relevant"][0], r["answer_claims_supported"][0], r["success"]) for r in records)
    # 12 irrelevant passages (all answers then unfaithful), 12 relevant passages with an unfaithful
    # answer, 18 relevant passages with a faithful, relevant answer (SOURCE.md: 7 rows x 6 files).
    assert labels == {(False, False, False): 12, (True, False, False): 12, (True, True, True): 18}, labels
    return records


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    outputs = {
        "ragtruth_qa.jsonl": build_ragtruth(),
        "llmperf_requests.jsonl": build_llmperf(),
        "ragchecker_examples.jsonl": build_ragchecker_examples(),
        "ragchecker_human_systems.jsonl": build_ragchecker_human(),
        "ares_judge_examples.jsonl": build_ares(),
    }
    for name, records in outputs.items():
        write_jsonl(OUT / name, records)
        print(f"wrote {OUT.relative_to(ROOT) / name}: {len(records)} records")


if __name__ == "__main__":
    main()
