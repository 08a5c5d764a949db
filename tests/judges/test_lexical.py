"""Lexical judges against the values the libraries document (sacrebleu's and rapidfuzz's own
test cases and docs, the SQuAD script's definition, rouge-score's LCS), and the two places we
deliberately differ from RAGAS / rouge-score's defaults (whole text; non-Latin text)."""

import pytest

from evalsuite.errors import EvalSuiteError
from evalsuite.judges.lexical import (
    bleu, chrf, exact_match, fuzzy_ratio, lexical_scores, rouge_l, token_f1,
)

# sacrebleu test/test_sentence_bleu.py (issue #98): smoothing, tokenizer, lowercase -> score.
REF = "producţia de zahăr brut se exprimă în zahăr alb;"
SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
SACREBLEU_SENTENCE = [
    ("exp", None, False, "13a", 8.493), ("none", None, False, "13a", 0.0),
    ("floor", 0.1, False, "13a", 4.51688), ("floor", 0.5, False, "13a", 10.10),
    ("add-k", 1, False, "13a", 14.882), ("add-k", 2, False, "13a", 21.389),
    ("exp", None, False, "none", 7.347), ("exp", None, False, "char", 40.8759),
    ("exp", None, True, "char", 42.0267),
]


@pytest.mark.parametrize("smooth, value, lower, tok, expected", SACREBLEU_SENTENCE)
def test_bleu_matches_sacrebleus_own_test_values(smooth, value, lower, tok, expected):
    got = bleu(SYS, REF, smooth_method=smooth, smooth_value=value, lowercase=lower, tokenize=tok)
    assert got == pytest.approx(expected / 100, abs=1e-5)


def test_bleu_zero_case_of_sacrebleu_issue_141():
    assert bleu("this is a cat", "okay thanks") == 0.0


# sacrebleu test/test_chrf.py, sentence level with eps smoothing.
CHRF_SENTENCE = [
    ("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
     "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.", 39.14078509),
    ("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
     "A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.", 31.22557079),
    ("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
     "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.", 57.15704367),
]


@pytest.mark.parametrize("hyp, ref, expected", CHRF_SENTENCE)
def test_chrf_matches_sacrebleus_own_test_values(hyp, ref, expected):
    assert chrf(hyp, ref, eps_smoothing=True) == pytest.approx(expected / 100, abs=1e-6)


def test_chrf_identical_text_is_one_and_disjoint_is_zero():
    assert chrf("Niemand hat die Absicht, eine Mauer zu errichten", "Niemand hat die Absicht, eine Mauer zu errichten") == 1.0
    assert chrf("abcdefg", "hijklmnop") == 0.0


def test_bleu_and_chrf_score_the_whole_answer_not_its_first_sentence():
    reference = "Paris is the capital of France. It lies on the Seine."
    first_only = "Paris is the capital of France."
    whole = "Paris is the capital of France. It lies on the Seine."
    # RAGAS would score both answers alike (first sentence only); the second sentence counts here.
    assert bleu(whole, reference) == 1.0 > bleu(first_only, reference)
    assert chrf(whole, reference) == 1.0 > chrf(first_only, reference)


def test_rouge_l_lcs_values():
    # rouge-score's own LCS test: "testing one two" vs target "testing one": P = 2/3, R = 1.
    assert rouge_l("testing one two", "testing one") == pytest.approx(0.8)
    # Hand-computed: LCS(a b c d e, a c e) = 3 -> P = 3/5, R = 1, F = 0.75.
    assert rouge_l("a b c d e", "a c e") == pytest.approx(0.75)
    assert rouge_l("", "a c e") == 0.0


def test_rouge_l_handles_non_latin_text_that_rouge_scores_default_drops():
    from rouge_score import rouge_scorer

    default = rouge_scorer.RougeScorer(["rougeL"]).score("我爱北京", "我爱北京")["rougeL"].fmeasure
    assert default == 0.0  # the defect being handled: every Chinese character dropped
    assert rouge_l("我爱北京", "我爱北京") == 1.0
    assert rouge_l("我爱北京", "我爱上海") == 0.5            # LCS 我爱 of 4 characters each
    assert rouge_l("東京は日本の首都です", "日本の首都は東京です") == pytest.approx(7 / 10)  # LCS 日本の首都 + です, 10 characters each
    assert rouge_l("Москва столица России", "Столица России Москва") == pytest.approx(2 / 3)  # LCS столица россии
    assert rouge_l("café au lait", "café au lait") == 1.0


@pytest.mark.parametrize("answer, reference", [
    ("The cats were running \u201chome\u201d", "the cat runs home"),       # curly quotes
    ("The cats were running home \u2014 fast", "the cat runs home fast"),  # an em dash
    ("running\u2026 cats\u00a0were", "the cat runs"),                      # ellipsis, no-break space
])
def test_rouge_l_equals_rouge_score_with_stemming_when_only_punctuation_is_non_ascii(answer, reference):
    # rouge-score's tokenizer drops everything but [a-z0-9], so such punctuation changes nothing:
    # the score is rouge-score's own with Porter stemming (it was 0.4444 against 0.8889 for the first,
    # when any non-ASCII character switched the whole pair to the Unicode tokenizer without stemming).
    from rouge_score import rouge_scorer

    expected = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(reference, answer)["rougeL"].fmeasure
    assert rouge_l(answer, reference) == pytest.approx(expected, abs=1e-12)


def test_squad_exact_match_and_token_f1_follow_the_official_script():
    assert exact_match("The Denver Broncos!", "denver broncos") == 1.0
    assert exact_match("Denver", "Denver Broncos") == 0.0
    assert token_f1("Broncos won", "the Denver Broncos") == 0.5
    assert token_f1("Denver Broncos Denver", "Denver Broncos") == pytest.approx(0.8)  # P 2/3, R 1
    assert token_f1("", "") == 1.0 and token_f1("a", "Denver") == 0.0  # "a" is an article: empty vs one token


def test_fuzzy_ratio_matches_rapidfuzz_documentation():
    assert fuzzy_ratio("this is a test", "this is a test!") == pytest.approx(0.9655172413793103)
    assert fuzzy_ratio("", "") == 1.0


def test_lexical_scores_all_in_unit_range_and_bad_input_raises():
    scores = lexical_scores("Paris is the capital of France.", "The capital of France is Paris.")
    assert set(scores) == {"bleu", "chrf", "rouge_l", "token_f1", "exact_match", "fuzzy_ratio"}
    assert all(0.0 <= v <= 1.0 for v in scores.values())
    with pytest.raises(EvalSuiteError, match="unknown lexical judge"):
        lexical_scores("a", "b", metrics=["meteor"])
    with pytest.raises(EvalSuiteError, match="field 'answer'"):
        bleu(None, "b")


def test_lexical_judge_writes_columns_and_provenance():
    import json

    import evalsuite as es
    from evalsuite.judges import LexicalJudge

    records = es.Records.from_rows([
        {"query_id": "q1", "answer": "Paris is the capital of France.", "reference": "The capital of France is Paris."},
        {"query_id": "q2", "answer": "No reference here."},
        {"query_id": "q3", "answer": "我爱北京", "reference": "我爱上海"}])
    judged = LexicalJudge(similarity="rouge_l").judge(records)
    table = judged.records.table
    assert table.column("token_f1").to_pylist() == [1.0, None, 0.0]  # SQuAD tokens: no spaces in Chinese
    assert table.column("rouge_l").to_pylist()[2] == 0.5
    assert table.column("answer_similarity").to_pylist() == table.column("rouge_l").to_pylist()
    assert table.column("bleu").to_pylist()[0] == pytest.approx(bleu("Paris is the capital of France.",
                                                                     "The capital of France is Paris."))
    prov = json.loads(table.column("judge_provenance")[0].as_py())
    assert {p["column"] for p in prov} == {"bleu", "chrf", "rouge_l", "token_f1", "exact_match", "fuzzy_ratio",
                                           "answer_similarity"}
    assert [p["model"] for p in prov if p["column"] == "answer_similarity"] == [
        f"rouge_l, {next(p['model'] for p in prov if p['column'] == 'rouge_l')}"]  # which score filled it, by what
    assert any(p["model"].startswith("sacrebleu ") for p in prov)
    # The judged records are valid records: written to Parquet and read back unchanged.
    import io

    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    back = es.read_records(buffer.getvalue(), format="parquet")
    assert back.table.column("rouge_l").to_pylist() == table.column("rouge_l").to_pylist()
    assert "judge_provenance" in back.extra_columns
    with pytest.raises(EvalSuiteError):
        LexicalJudge(metrics=["bleu"], similarity="rouge_l")


def test_ctrl_c_inside_a_records_scores_leaves_that_record_unscored_whole(monkeypatch):
    """A KeyboardInterrupt between two of a record's scores: the record gets none of them (it got
    some, so its metrics were averaged over different records), it is not counted, the counts match
    the file, and records not scored keep the values their file gave."""
    import evalsuite.judges._base as base
    from evalsuite.judges.lexical import LexicalJudge
    from evalsuite.records.table import Records

    rows = [{"query_id": f"q{i}", "system": "s", "answer": "the cat sat", "reference": "the cat sat down",
             "token_f1": 0.25} for i in range(5)]
    real = base.Provenance
    made = []

    def provenance(*args, **kwargs):
        made.append(1)
        if len(made) == 5:  # record q1's second score
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "Provenance", provenance)
    judge = LexicalJudge(metrics=["bleu", "rouge_l", "token_f1"])
    result = judge.judge(Records.from_rows(rows))
    table = result.records.table
    assert result.done == 1 and result.stats.judgements == 3 and result.stats.stopped == "interrupted"
    assert result.rows == ["answered", None, None, None, None]
    for name in ("bleu", "rouge_l"):
        values = table.column(name).to_pylist()
        assert values[0] is not None and values[1:] == [None] * 4
    assert table.column("token_f1").to_pylist()[1:] == [0.25] * 4  # what the file gave, kept
