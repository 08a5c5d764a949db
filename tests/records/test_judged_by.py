"""Which judge filled a column (evalsuite/records/judged_by.py): read from judge_provenance as the
judges write it, so a judge's values are never labelled as the file's own."""

import json

import numpy as np
import pyarrow as pa

from evalsuite.judges import Provenance
from evalsuite.records.judged_by import filled_by


def provenance(*entries) -> str:
    # As the judges write it (judges/_base.write_columns: Provenance.as_dict, json with ", " and ": ").
    return json.dumps([p.as_dict() for p in entries], ensure_ascii=False)


def test_the_judges_that_filled_a_column_and_the_values_the_file_gave():
    lexical = Provenance("answer_similarity", "lexical", model='rouge_l, "rouge-score" 0.1.2')
    embedding = Provenance("answer_similarity", "embedding", model="all-MiniLM-L6-v2")
    other = Provenance("bleu", "lexical", model="sacrebleu 2.4")
    table = pa.table({"judge_provenance": [provenance(other, lexical), provenance(embedding), None, "[]"]})
    assert filled_by(table, "answer_similarity", np.array([0])) == \
        'filled by the lexical judge (rouge_l, "rouge-score" 0.1.2)'  # a quoted model name read back whole
    assert filled_by(table, "answer_similarity", np.array([0, 1, 2, 3])) == (
        'filled by the lexical judge (rouge_l, "rouge-score" 0.1.2), the embedding judge (all-MiniLM-L6-v2); '
        "2 of 4 values given in the file")
    assert filled_by(table, "answer_similarity", np.array([2, 3])) is None  # the file's own values
    assert filled_by(table, "exact_match", np.array([0, 1])) is None  # no entry names that column


def test_values_decided_by_rule_alone_and_records_without_provenance():
    rule = Provenance("answer_similarity", "rule", status="rule: one text empty: 0")
    assert filled_by(pa.table({"judge_provenance": [provenance(rule)]}), "answer_similarity", np.array([0])) == \
        "filled by rule (empty texts)"
    assert filled_by(pa.table({"answer": ["x"]}), "answer_similarity", np.array([0])) is None
    assert filled_by(pa.table({"judge_provenance": [1]}), "answer_similarity", np.array([0])) is None
