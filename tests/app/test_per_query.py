"""The Per-query page: ranking runs against evaluate(), and the per-request records view."""

from __future__ import annotations

import json

import pandas as pd

import evalsuite as es

from .helpers import RAG, open_page, texts


def test_per_query_numbers_equal_evaluate(cranfield):
    qrels, runs = cranfield
    at = open_page("per_query", query={"per_query_system": "BM25L", "per_query_metric": "recall",
                                       "per_query_k": "20", "per_query_query": "17"})
    table = at.dataframe[0].value.set_index("query_id")
    expected = es.evaluate(qrels, runs["BM25L"], ["recall@20"]).per_query["recall@20"]
    pd.testing.assert_series_equal(table["recall@20"].sort_index(), expected.sort_index(), check_names=False,
                                   check_index_type=False)
    ranked = at.dataframe[1].value
    reference = runs["BM25L"].query("17")
    assert ranked["doc_id"].tolist() == reference["doc_id"].iloc[: len(ranked)].tolist()
    judgements = qrels.query("17")
    for doc, label in zip(ranked["doc_id"], ranked["label"]):
        grade = judgements.get(doc)
        assert label == ("unjudged" if grade is None else
                         f"relevant ({grade:g})" if grade >= 1 else f"not relevant ({grade:g})")


def test_per_query_records_view_shows_the_request():
    at = open_page("per_query", query={"per_query_source": "per-request records",
                                       "per_query_record_system": "gpt-4-0613", "per_query_query": "14300"})
    row = next(json.loads(line) for line in (RAG / "ragtruth_qa.jsonl").open()
               if '"14300"' in line and '"gpt-4-0613"' in line)
    shown = texts(at.text)
    assert row["question"] in shown and row["answer"] in shown
    contexts = next(df.value for df in at.dataframe if "context" in df.value.columns)
    assert contexts["context"].tolist() == row["contexts"]
    # Judgements as the file has them (Python True/False/None), never numpy reprs such as np.True_.
    judgements = next(df.value for df in at.dataframe if "values" in df.value.columns).set_index("field")
    assert judgements.loc["answer_claims_supported", "values"] == str(row["answer_claims_supported"])
    assert "np." not in " ".join(judgements["values"])
