"""Lexical judges: deterministic text overlap between an answer and its reference.

Each function scores one answer against one reference and returns a float in 0..1 (the
libraries' 0..100 scales divided by 100). They are always available (no model, no network) and
are computed by the libraries that define them:

- BLEU and chrF by ``sacrebleu`` on the *whole* text (RAGAS's ``BleuScore`` scores only the first
  sentence of a multi-sentence answer; we do not);
- ROUGE-L by ``rouge-score``, with a Unicode tokenizer when either text holds a non-ASCII letter or digit
  (rouge-score's default tokenizer keeps only ``[a-z0-9]`` and so scores Chinese text 0);
- SQuAD token F1 and exact match, after the official SQuAD v1.1 evaluation script's
  normalisation (lower case, punctuation and the articles a/an/the removed, whitespace folded);
- ``rapidfuzz``'s ``fuzz.ratio`` (normalised Indel similarity).

:func:`lexical_scores` gives all of them for one pair; :class:`LexicalJudge` fills them in for
every record with an answer and a reference.
"""

from __future__ import annotations

import collections
import re
import string
import unicodedata
from functools import lru_cache

from ..errors import EvalSuiteError
from ..metrics.registry import LEXICAL_JUDGE_COLUMNS

__all__ = ["LexicalJudge", "bleu", "chrf", "rouge_l", "token_f1", "exact_match", "fuzzy_ratio", "lexical_scores", "LEXICAL_COLUMNS"]

#: The columns the lexical judge writes, from the registry (each has a function of its name below).
LEXICAL_COLUMNS = LEXICAL_JUDGE_COLUMNS


def _check_text(value, name: str) -> str:
    if not isinstance(value, str):
        raise EvalSuiteError("must be a string", field=name, value=value)
    return value


def _unit(value: float) -> float:
    """Clamp a float's rounding error (1.0000000000000004) into 0..1, as the records schema needs."""
    return min(1.0, max(0.0, float(value)))


def bleu(answer: str, reference: str, **options) -> float:
    """Sentence BLEU of ``answer`` against ``reference`` (sacrebleu), on the whole text, in 0..1.

    Parameters
    ----------
    answer, reference : str
        The texts; every sentence counts (RAGAS scores only the first one of the answer).
    **options
        Passed to ``sacrebleu.metrics.BLEU`` (``tokenize``, ``smooth_method``, ``lowercase`` ...);
        the defaults are sacrebleu's (13a tokenizer, exponential smoothing, effective order).

    Returns
    -------
    float
        sacrebleu's score / 100 (rounding error past 1 clamped).

    Raises
    ------
    EvalSuiteError
        A text that is not a string.

    References
    ----------
    Papineni et al., BLEU, ACL 2002; Post, A Call for Clarity in Reporting BLEU Scores, WMT 2018
    (sacrebleu). The example is sacrebleu's own test case (``test_sentence_bleu.py``: 8.493).

    Examples
    --------
    >>> round(bleu("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;",
    ...            "producţia de zahăr brut se exprimă în zahăr alb;"), 5)
    0.08493
    >>> bleu("The cat sat.", "The cat sat.")
    1.0
    """
    from sacrebleu.metrics import BLEU

    options.setdefault("effective_order", True)
    metric = BLEU(**options)
    score = metric.sentence_score(_check_text(answer, "answer"), [_check_text(reference, "reference")]).score
    return _unit(score / 100.0)


def chrf(answer: str, reference: str, **options) -> float:
    """Sentence chrF of ``answer`` against ``reference`` (sacrebleu), on the whole text, in 0..1.

    Parameters
    ----------
    answer, reference : str
        The texts.
    **options
        Passed to ``sacrebleu.metrics.CHRF`` (``char_order=6``, ``word_order=0`` (2 for chrF++),
        ``beta=2``, ``eps_smoothing=False`` by default, as sacrebleu).

    Returns
    -------
    float
        sacrebleu's score / 100 (rounding error past 1 clamped).

    Raises
    ------
    EvalSuiteError
        A text that is not a string.

    References
    ----------
    Popović, chrF: character n-gram F-score for automatic MT evaluation, WMT 2015. The example is
    sacrebleu's own test case (``test_chrf.py``, sentence level with eps smoothing: 39.14078509).

    Examples
    --------
    >>> round(chrf("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
    ...            "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.",
    ...            eps_smoothing=True), 8)
    0.39140785
    """
    from sacrebleu.metrics import CHRF

    metric = CHRF(**options)
    score = metric.sentence_score(_check_text(answer, "answer"), [_check_text(reference, "reference")]).score
    return _unit(score / 100.0)


# Scripts written without spaces between words: every character is a token.
_NO_SPACE_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "HANGUL", "TIBETAN")
_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=4096)
def _char_is_unspaced(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(_NO_SPACE_SCRIPTS)


class _UnicodeTokenizer:
    """Lower-cased Unicode word runs; characters of unspaced scripts (CJK, Thai ...) one by one."""

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = []
        for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
            if word.isascii():
                tokens.append(word)
                continue
            run = []
            for char in word:
                if _char_is_unspaced(char):
                    if run:
                        tokens.append("".join(run))
                        run = []
                    tokens.append(char)
                else:
                    run.append(char)
            if run:
                tokens.append("".join(run))
        return tokens


def _has_non_ascii_word(text: str) -> bool:
    """Whether ``text`` holds a letter or digit outside ASCII (after NFKC, as the tokenizer sees it)."""
    if text.isascii():
        return False
    return any(not word.isascii() for word in _WORD.findall(unicodedata.normalize("NFKC", text)))


@lru_cache(maxsize=4)
def _rouge_scorer(unicode: bool, use_stemmer: bool):
    from rouge_score import rouge_scorer

    if unicode:
        return rouge_scorer.RougeScorer(["rougeL"], tokenizer=_UnicodeTokenizer())
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l(answer: str, reference: str, *, use_stemmer: bool = True) -> float:
    """ROUGE-L F-measure of ``answer`` against ``reference`` (rouge-score), in 0..1.

    Parameters
    ----------
    answer, reference : str
        The texts. When neither holds a non-ASCII letter or digit, rouge-score's own tokenizer is
        used (lower case, ``[a-z0-9]+`` tokens, so curly quotes and dashes are dropped; Porter
        stemming with ``use_stemmer``, as RAGAS's ``RougeScore``). Otherwise a Unicode tokenizer
        is used for both: NFKC, case-folded word runs, and each
        character of a script written without spaces (CJK, kana, Hangul, Thai ...) as a token;
        no stemming. rouge-score's default would drop every non-Latin letter and score 0.
    use_stemmer : bool
        Porter stemming of English tokens (texts without non-ASCII letters or digits only).

    Returns
    -------
    float
        ROUGE-L F1 (LCS-based, summary-level LCS is not used).

    Raises
    ------
    EvalSuiteError
        A text that is not a string.

    References
    ----------
    Lin, ROUGE: A Package for Automatic Evaluation of Summaries, 2004; Google's ``rouge-score``.

    Examples
    --------
    >>> round(rouge_l("testing one two", "testing one"), 4)  # LCS 2: P = 2/3, R = 1
    0.8
    >>> rouge_l("我爱北京", "我爱上海")  # LCS 我爱: P = R = 2/4
    0.5
    """
    answer, reference = _check_text(answer, "answer"), _check_text(reference, "reference")
    # Only a non-ASCII letter or digit needs the Unicode tokenizer: punctuation such as curly quotes
    # or an em dash is dropped by rouge-score's own, which then stems as RAGAS does.
    unicode = _has_non_ascii_word(answer) or _has_non_ascii_word(reference)
    scorer = _rouge_scorer(unicode, use_stemmer and not unicode)
    return float(scorer.score(reference, answer)["rougeL"].fmeasure)


def _squad_normalise(text: str) -> str:
    """SQuAD v1.1 ``normalize_answer``: lower, drop punctuation, articles, extra whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(answer: str, reference: str) -> float:
    """SQuAD exact match: 1.0 when the normalised texts are equal, else 0.0.

    Parameters
    ----------
    answer, reference : str
        The texts, normalised as the official SQuAD v1.1 script does (lower case, ASCII
        punctuation and the articles a/an/the removed, whitespace folded).

    Returns
    -------
    float
        1.0 or 0.0.

    Raises
    ------
    EvalSuiteError
        A text that is not a string.

    References
    ----------
    Rajpurkar et al., SQuAD: 100,000+ Questions for Machine Comprehension of Text, EMNLP 2016;
    ``evaluate-v1.1.py``.

    Examples
    --------
    >>> exact_match("The Denver Broncos!", "denver broncos")
    1.0
    """
    return float(_squad_normalise(_check_text(answer, "answer")) == _squad_normalise(_check_text(reference, "reference")))


def token_f1(answer: str, reference: str) -> float:
    """SQuAD token F1 of the normalised answer and reference tokens (bag of tokens), in 0..1.

    Parameters
    ----------
    answer, reference : str
        The texts, normalised as in :func:`exact_match`, split on whitespace.

    Returns
    -------
    float
        2PR/(P+R) over shared tokens (counted with multiplicity); 0.0 when nothing is shared;
        1.0 when both normalise to nothing (SQuAD v2's rule for two empty answers).

    Raises
    ------
    EvalSuiteError
        A text that is not a string.

    References
    ----------
    Rajpurkar et al., EMNLP 2016; ``evaluate-v1.1.py`` (``f1_score``), ``evaluate-v2.0.py`` for
    empty answers.

    Examples
    --------
    >>> token_f1("Broncos won", "the Denver Broncos")  # 1 shared: P = 1/2, R = 1/2
    0.5
    """
    pred = _squad_normalise(_check_text(answer, "answer")).split()
    gold = _squad_normalise(_check_text(reference, "reference")).split()
    if not pred and not gold:
        return 1.0
    common = collections.Counter(pred) & collections.Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def fuzzy_ratio(answer: str, reference: str) -> float:
    """rapidfuzz's ``fuzz.ratio`` (normalised Indel similarity) / 100, in 0..1.

    Parameters
    ----------
    answer, reference : str
        The texts, compared character by character as given (no normalisation).

    Returns
    -------
    float
        ``1 - indel_distance / (len(answer) + len(reference))``; 1.0 for two empty texts.

    Raises
    ------
    EvalSuiteError
        A text that is not a string.

    References
    ----------
    rapidfuzz documentation, ``fuzz.ratio`` (its example: 96.55172413793103).

    Examples
    --------
    >>> fuzzy_ratio("this is a test", "this is a test!")
    0.9655172413793103
    """
    from rapidfuzz import fuzz

    a, b = _check_text(answer, "answer"), _check_text(reference, "reference")
    if not a and not b:
        return 1.0
    return fuzz.ratio(a, b) / 100.0


_FUNCTIONS = {f.__name__: f for f in (bleu, chrf, rouge_l, token_f1, exact_match, fuzzy_ratio)}
# The library behind each function (its version goes into the provenance); the SQuAD ones are the script's.
_LIBRARIES = {bleu: "sacrebleu", chrf: "sacrebleu", rouge_l: "rouge-score", fuzzy_ratio: "rapidfuzz"}


def lexical_scores(answer: str, reference: str, metrics=LEXICAL_COLUMNS) -> dict[str, float]:
    """Every lexical score of one answer against its reference.

    Parameters
    ----------
    answer, reference : str
        The texts.
    metrics : sequence of str
        Which of ``bleu``, ``chrf``, ``rouge_l``, ``token_f1``, ``exact_match``, ``fuzzy_ratio``.

    Returns
    -------
    dict of str -> float
        Each score in 0..1, by name.

    Raises
    ------
    EvalSuiteError
        An unknown metric name, or a text that is not a string.

    Examples
    --------
    >>> scores = lexical_scores("Paris is the capital of France.", "The capital of France is Paris.")
    >>> scores["exact_match"], scores["token_f1"]
    (0.0, 1.0)
    """
    out = {}
    for name in metrics:
        if name not in _FUNCTIONS:
            raise EvalSuiteError(f"unknown lexical judge; use one of {', '.join(LEXICAL_COLUMNS)}", field="metric",
                                 value=name)
        out[name] = float(_FUNCTIONS[name](answer, reference))
    return out


class LexicalJudge:
    """Fill the lexical score columns (``bleu``, ``chrf``, ``rouge_l``, ``token_f1``,
    ``exact_match``, ``fuzzy_ratio``) of every record with an answer and a reference.

    Parameters
    ----------
    metrics : sequence of str
        Which scores (default all of :data:`LEXICAL_COLUMNS`).
    similarity : str or None
        Also write this score to ``answer_similarity`` (e.g. ``"rouge_l"``) so the answer
        correctness and similarity metrics use it; None (default) leaves that field alone.

    Notes
    -----
    The scores are extra columns of the records (kept, shown and exported like any other);
    a record without an answer or a reference gets null scores. Provenance: one entry per
    record naming the library and its version as the model.

    Examples
    --------
    >>> from evalsuite import Records
    >>> records = Records.from_rows([{"query_id": "q1", "answer": "Paris.", "reference": "Paris"},
    ...                              {"query_id": "q2", "answer": "Lyon"}])
    >>> judged = LexicalJudge(metrics=["exact_match", "token_f1"]).judge(records).records
    >>> judged.table.column("exact_match").to_pylist(), judged.table.column("token_f1").to_pylist()
    ([1.0, None], [1.0, None])
    """

    kind = "lexical"

    def __init__(self, metrics=LEXICAL_COLUMNS, similarity: str | None = None) -> None:
        unknown = [m for m in metrics if m not in _FUNCTIONS]
        if unknown or (similarity is not None and similarity not in metrics):
            raise EvalSuiteError(f"unknown lexical judge (or similarity not among the metrics); use {', '.join(LEXICAL_COLUMNS)}",
                                 field="metric", value=(unknown or [similarity])[0])
        self.metrics = tuple(metrics)
        self.similarity = similarity
        from ._base import JudgeStats

        self.stats = JudgeStats()

    def estimate(self, records) -> str:
        """What the run will do, in words."""
        n = sum(1 for a, r in _answer_reference(records) if a is not None and r is not None)
        return f"{n} answer/reference pairs, {len(self.metrics)} lexical scores each (no model, no cost)"

    def judge(self, records, *, progress=None):
        """``records`` with the score columns and ``judge_provenance``; see the class."""
        import pyarrow as pa

        from ._base import JudgedRecords, Provenance, row_outcome, write_columns
        from .run_control import deferred_interrupt

        versions = _versions()
        pairs = _answer_reference(records)
        columns: dict[str, list] = {m: [None] * len(pairs) for m in self.metrics}
        provenance = [[] for _ in pairs]
        reached = 0
        try:  # Ctrl-C: the records scored so far are written (the others unscored)
            for i, (answer, reference) in enumerate(pairs):
                reached = i
                if answer is None or reference is None:
                    continue
                scores = lexical_scores(answer, reference, self.metrics)
                for name, value in scores.items():
                    columns[name][i] = value
                    provenance[i].append(Provenance(column=name, judge="lexical", model=versions[name]))
                reached = i + 1
                if progress is not None and (i + 1) % 100 == 0:
                    progress(i + 1, len(pairs), self.stats)
        except KeyboardInterrupt:
            self.stats.stopped = "interrupted"
        else:
            reached = len(pairs)
        # Counted from what was stored, not as it went: a Ctrl-C inside a record's stores leaves that
        # record unscored as a whole (never some of its scores), and the counts match the file.
        for i, entries in enumerate(provenance):
            if 0 < len(entries) < len(self.metrics):
                entries.clear()
                for name in self.metrics:
                    columns[name][i] = None
        done = sum(1 for entries in provenance if entries)
        self.stats.add(judgements=done * len(self.metrics))
        types = {m: pa.float64() for m in columns}
        if self.similarity is not None:
            old = (records.table.column("answer_similarity").to_pylist()
                   if "answer_similarity" in records.table.column_names else [None] * len(pairs))
            columns["answer_similarity"] = [old[i] if v is None else v for i, v in enumerate(columns[self.similarity])]
            types["answer_similarity"] = pa.float64()
            for i, value in enumerate(columns[self.similarity]):
                if value is not None:  # the similarity's own entry: which score fills it, by which library
                    provenance[i].append(Provenance(column="answer_similarity", judge="lexical",
                                                    model=f"{self.similarity}, {versions[self.similarity]}"))
        scored = [bool(entries) for entries in provenance]
        for name in self.metrics:  # a record this run did not score keeps what its file gave
            if name in records.table.column_names:
                given = records.table.column(name).to_pylist()
                columns[name] = [value if scored[i] else given[i] for i, value in enumerate(columns[name])]
        with deferred_interrupt() as caught:
            judged = write_columns(records, columns, provenance, types)
        if caught:
            self.stats.stopped = "interrupted"
        rows = [row_outcome(p) if i < reached else None for i, p in enumerate(provenance)]
        return JudgedRecords(judged, self.stats, done, rows)


def _answer_reference(records) -> list[tuple]:
    table = records.table
    n = table.num_rows
    get = lambda name: table.column(name).to_pylist() if name in table.column_names else [None] * n  # noqa: E731
    return list(zip(get("answer"), get("reference")))


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    def v(package):
        try:
            return f"{package} {version(package)}"
        except PackageNotFoundError:  # pragma: no cover
            return package

    return {name: v(_LIBRARIES[f]) if f in _LIBRARIES else "SQuAD v1.1 script" for name, f in _FUNCTIONS.items()}
