"""Every metric of the RAGAS reference from raw records: question, answer, contexts, reference.

:class:`RagasJudge` runs the judges (``evalsuite.judges``) a chosen set of metrics needs and
writes the judgement columns the metric functions read, with ``judge_provenance`` for each
value. The LLM judge's own prompts fill faithfulness, context precision / recall / relevance
and answer correctness's claim lists; this module's prompts (:data:`RAGAS_PROMPTS`, versioned
by hash as the judge's) fill the rest, through the same :meth:`LLMJudge.ask` (cache, output
modes, retries, budget, missing judgements counted). Similarities come from the embedding
judge's embedder (MiniLM by default, or an ``/v1/embeddings`` endpoint).

What each metric needs, and which judge fills which of its columns, is its registry entry
(``METRICS[name].needs`` and ``.inputs``); :func:`coverage_of` says which records have it. Nothing here decides that a small model's verdicts are right: the tests check arithmetic
and plumbing against recorded replies.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Callable

import pyarrow as pa

from ..errors import EvalSuiteError
from ..metrics.context import entities_found
from ..metrics.registry import JUDGED_METRICS, METRICS, judge_columns
from ._base import JudgedRecords, JudgeStats, Provenance, combine_rows, row_outcome, write_columns
from .prompts import RAGAS_PROMPTS, _critique_prompt
from .ragas_embeddings import SIMILARITY_METRICS, _rows, column_type, embedding_phase
from .scheduler import Ask
from .sentences import split_sentences
from .ragas_needs import critique_column


def _judged_by(judge: str, metrics) -> set:
    """The metrics with an input column ``judge`` fills (the registry's ``Input.judges``)."""
    return {m for m in metrics if any(judge in i.judges for i in METRICS[m].inputs)}


# The metrics that read answer_similarity, which the embedding judge fills.
def _needs_llm(metric: str) -> bool:
    return "llm" in METRICS[metric].needs.judges


__all__ = ["RagasJudge", "score_texts", "split_sentences", "RagasEstimate"]


@dataclass
class RagasEstimate:
    """What a run is expected to take, shown before it starts.

    Attributes
    ----------
    requests : int
        LLM requests (claims and entities counted as one request per text; verdicts per text or chunk).
    prompt_tokens, completion_tokens : int
        About 4 characters a token (the LLM judge's rule).
    cost : float
        At the LLM judge's prices.
    texts_to_embed : int
        Texts the embedder runs on (no price modelled).
    base : object
        The LLM judge's own estimate for its columns (or None).
    """

    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    texts_to_embed: int
    base: Any = None

    def __str__(self) -> str:
        return (f"about {self.requests} judge requests, {self.prompt_tokens:,} input and {self.completion_tokens:,} "
                f"output tokens, cost about {self.cost:.4f}; {self.texts_to_embed} texts to embed")


class RagasJudge:
    """Fill the judgement columns of the chosen RAGAS metrics from raw records.

    Parameters
    ----------
    llm : evalsuite.judges.LLMJudge or None
        The chat judge (needed by every metric but answer similarity).
    embedder : MiniLMEmbedder, EndpointEmbedder or None
        For answer similarity and answer relevancy (None builds MiniLM on first use).
    metrics : sequence of str
        Which of :data:`JUDGED_METRICS` to judge (default all).
    strictness : int >= 1
        Questions generated per answer for answer relevancy (RAGAS: 3).
    aspects : mapping of str -> str
        Aspect critiques: name -> definition (the criterion in words).
    aspect_strictness : int, odd
        Votes per aspect and request (RAGAS ``strictness``; default 1). Each vote is its own request
        (numbered); at temperature 0 a deterministic model gives the same vote each time.

    Raises
    ------
    EvalSuiteError
        An unknown metric, strictness < 1, an even aspect_strictness, a bad aspect name, an LLM
        metric without ``llm``.

    Examples
    --------
    >>> from evalsuite import Records
    >>> from evalsuite.judges import LLMJudge
    >>> judge = RagasJudge(LLMJudge("m", base_url="http://127.0.0.1:9/v1", cache=":memory:"),
    ...                    metrics=["context_entity_recall"])
    >>> rows = [{"query_id": "q1", "reference": "", "contexts": ["Paris."]}]
    >>> judged = judge.judge(Records.from_rows(rows))  # empty reference: no entities, decided by rule
    >>> judged.records.table.column("reference_entities_in_contexts").to_pylist()
    [[]]
    """

    def __init__(self, llm=None, embedder=None, *, metrics=JUDGED_METRICS, strictness: int = 3,
                 aspects: dict[str, str] | None = None, aspect_strictness: int = 1) -> None:
        metrics = tuple(metrics)
        for m in metrics:
            if m not in JUDGED_METRICS:
                raise EvalSuiteError(f"unknown metric; use {', '.join(JUDGED_METRICS)}", field="metrics", value=m)
        if isinstance(strictness, bool) or not isinstance(strictness, int) or strictness < 1:
            raise EvalSuiteError("strictness must be a whole number >= 1", field="strictness", value=strictness)
        if isinstance(aspect_strictness, bool) or not isinstance(aspect_strictness, int) or aspect_strictness < 1 \
                or aspect_strictness % 2 == 0:
            raise EvalSuiteError("aspect_strictness must be an odd whole number (majority vote)",
                                 field="aspect_strictness", value=aspect_strictness)
        self.aspects = {}
        for name, definition in (aspects or {}).items():
            critique_column(name)
            if not isinstance(definition, str) or not definition.strip():
                raise EvalSuiteError("an aspect needs a definition", field=f"aspects[{name}]", value=definition)
            self.aspects[name] = definition.strip()
        if "aspect_critique" in metrics and not self.aspects:
            raise EvalSuiteError("aspect_critique needs at least one aspect (name: definition)", field="aspects")
        if llm is None and any(_needs_llm(m) for m in metrics):
            raise EvalSuiteError("these metrics need an LLM judge", field="llm",
                                 value=", ".join(m for m in metrics if _needs_llm(m)))
        self.llm = llm
        self._embedder = embedder
        self.metrics = metrics
        self.strictness = strictness
        self.aspect_strictness = aspect_strictness
        self.stats = llm.stats if llm is not None else JudgeStats()
        self._stop = threading.Event()

    # -- planning -------------------------------------------------------------------------------

    @property
    def embedder(self):
        if self._embedder is None:
            from .embedding import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    def _base_judgements(self) -> tuple[str, ...]:
        """The LLM judge's own columns the chosen metrics read."""
        return judge_columns("llm", self.metrics)

    def estimate(self, records) -> RagasEstimate:
        """Requests, tokens and cost before the run (the LLM judge's estimate for its columns
        plus this module's requests at about 4 characters a token)."""
        base = None
        requests = prompt_chars = completion = embed = 0
        base_j = self._base_judgements()
        if base_j and self.llm is not None:
            saved = self.llm.judgements
            self.llm.judgements = base_j
            try:
                base = self.llm.estimate(records)
            finally:
                self.llm.judgements = saved
        m = set(self.metrics)
        planned: dict[tuple, tuple[int, int]] = {}  # one entry per distinct request: (prompt characters, output)
        texts: set = set()
        for row in _rows(records):
            q, a, r, c = row["question"] or "", row["answer"], row["reference"], row["contexts"]
            if "answer_relevancy" in m and a and a.strip() and row["question"]:
                planned[("questions", a)] = (len(a) + 300, 30 * self.strictness)
                planned[("noncommittal", q, a)] = (len(a) + len(q) + 300, 8)
                embed += self.strictness + 1
            if "context_entity_recall" in m and r and r.strip() and c is not None:
                planned[("entities", r)] = (len(r) + 250, len(r) // 12 + 8)
                joined = "\n\n".join(c)
                planned[("entities", joined)] = (len(joined) + 250, len(joined) // 12 + 8)
            if "context_utilization" in m and a and c:
                for x in c:
                    planned[("useful", q, a, x)] = (len(x) + len(a) + len(q) + 250, 8)
            if "context_relevancy" in m and c and row["question"]:
                planned[("sentences", q, tuple(c))] = (sum(map(len, c)) + len(q) + 350, sum(map(len, c)) // 20 + 12)
            if "aspect_critique" in m and a is not None and row["question"]:
                for name in self.aspects:
                    for k in range(self.aspect_strictness):
                        planned[("critique", name, k, q, a)] = (len(a) + len(q) + 350, 8)
            if SIMILARITY_METRICS & m and a and r and a.strip() and r.strip():
                texts.update((a, r))
        embed += len(texts)  # each distinct text is embedded once
        requests = len(planned)  # identical requests are sent once
        prompt_chars = sum(chars for chars, _ in planned.values())
        completion = sum(out for _, out in planned.values())
        pt, ct = prompt_chars // 4, completion
        cost = 0.0 if self.llm is None else self.llm._cost(pt, ct)
        if base is not None:
            requests += base.requests - base.cached
            pt += base.prompt_tokens
            ct += base.completion_tokens
            cost += base.cost
        return RagasEstimate(requests, pt, ct, cost, embed, base)

    def stop(self) -> None:
        """Ask a running :meth:`judge` to stop in whatever phase it is: no new call is sent, calls
        in flight get a moment to finish, a forward pass of the embedder ends at once; the
        records judged so far are returned and a rerun resumes from the cache."""
        self._stop.set()
        if self.llm is not None:
            self.llm.stop()

    # -- the run --------------------------------------------------------------------------------

    def score_texts(self, metric: str, texts, **options):
        """A metric of the RAGAS family from raw texts, judged by this judge: :func:`score_texts`
        (what ``es.answer_relevancy(texts=..., judge=...)`` and the other list functions call)."""
        return score_texts(metric, texts, self, **options)

    def judge(self, records, *, progress: Callable[[int, int, JudgeStats], None] | None = None) -> JudgedRecords:
        """``records`` with the judgement columns of the chosen metrics and ``judge_provenance``.

        Parameters
        ----------
        records : evalsuite.Records
        progress : callable, optional
            ``progress(done, total, stats)``: steps done of all phases (LLM base judgements,
            this module's LLM judgements, embeddings), one step per record and phase.

        Returns
        -------
        JudgedRecords
            ``done`` counts the records whose every phase finished; after :meth:`stop` the rest
            keep the columns they had (null), and a rerun answers the finished calls from the cache.

        Raises
        ------
        EvalSuiteError
            The endpoint refused the key or does not know the model; an embedder failure.
        """
        n = len(records)
        base_j = self._base_judgements()
        m = set(self.metrics)
        own_llm = _judged_by("ragas", m)
        embeds = _judged_by("embedding", m)
        phases = [p for p, on in (("base", base_j and self.llm is not None), ("llm", own_llm), ("embed", embeds)) if on]
        total = n * len(phases)
        offset = 0
        done = {phase: 0 for phase in phases}
        outcomes: dict = {}  # per phase, per record: row_outcome (None: not finished)

        def report(done, _total, stats):
            if progress is not None:
                progress(offset + done, total, stats)

        try:  # Ctrl-C in any phase: the phases done so far are kept, and the part of the one it stopped
            if "base" in phases:
                saved = self.llm.judgements
                self.llm.judgements = base_j
                try:
                    judged = self.llm.judge(records, progress=report)
                finally:
                    self.llm.judgements = saved
                records = judged.records
                done["base"], outcomes["base"] = judged.done, judged.rows
                offset += n
            if "llm" in phases and not self._stopped():
                records, outcomes["llm"] = self._own_llm(records, own_llm, report)
                done["llm"] = sum(o is not None for o in outcomes["llm"])
                offset += n
            if "embed" in phases and not self._stopped():
                with self._deadline_timer():
                    records, done["embed"], outcomes["embed"] = embedding_phase(self, records, embeds, report)
        except KeyboardInterrupt:
            self.stop()
        if self._stopped():
            reason = self.llm.control.reason if self.llm is not None else None
            self.stats.stopped = self.stats.stopped or reason or "interrupted"
        rows = combine_rows(*(outcomes.get(p, [None] * n) for p in phases)) if phases else None
        return JudgedRecords(records, self.stats, min(done.values()) if done else n, rows)

    @contextlib.contextmanager
    def _deadline_timer(self):
        """The LLM judge's deadline also ends the embedding phase (which sends no request it could check)."""
        remaining = self.llm.control.remaining() if self.llm is not None else None
        if remaining is None:
            yield
            return

        def expire():
            self.llm.control.stop("deadline", f"the deadline of {self.llm.control.deadline:g} s passed")
            self._stop.set()

        timer = threading.Timer(max(0.0, remaining), expire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _stopped(self) -> bool:
        return self._stop.is_set() or (self.llm is not None and self.llm.control.stopped)

    def _own_llm(self, records, wanted: set, report):
        rows = _rows(records)
        results = self.llm.run_flows(rows, lambda row: self._flow(row, wanted), progress=report)
        names = self._own_columns(wanted)
        table = records.table
        old = {c: (table.column(c).to_pylist() if c in table.column_names else [None] * len(rows)) for c in names}
        columns = {c: [old[c][i] if r is None else r[0].get(c, old[c][i]) for i, r in enumerate(results)] for c in names}
        types = {c: column_type(c) for c in names}
        provenance = [[] if r is None else r[1] for r in results]
        return write_columns(records, columns, provenance, types), [None if r is None else row_outcome(r[1])
                                                                      for r in results]

    def _own_columns(self, wanted: set) -> list[str]:
        """The columns this judge's prompts fill for ``wanted`` (the registry's inputs judged by
        "ragas"), with the questions generated for answer relevancy and one column per aspect."""
        names = ["generated_questions"] if "answer_relevancy" in wanted else []
        for metric in (m for m in self.metrics if m in wanted):
            for item in METRICS[metric].inputs:
                if "ragas" not in item.judges:
                    continue
                names += [critique_column(a) for a in self.aspects] if item.pattern else [item.column]
        return list(dict.fromkeys(names))

    def _rule(self, column: str, why: str) -> Provenance:
        self.stats.add(rule_decided=1)
        return Provenance(column=column, judge="rule", status=f"rule: {why}")

    def judge_one(self, row: dict, wanted: set | None = None) -> tuple[dict, list[Provenance]]:
        """This module's judgement columns of one record (question, answer, contexts, reference)."""
        wanted = set(self.metrics) if wanted is None else wanted
        result = self.llm.run_flows([row], lambda r: self._flow(r, wanted))[0]
        return result if result is not None else ({}, [])

    def _flow(self, row: dict, wanted: set):
        """This module's requests of one record as a flow (:mod:`evalsuite.judges.scheduler`): every
        request that needs no other's answer at once, then the contexts' entities."""
        q, a, r, c = row.get("question"), row.get("answer"), row.get("reference"), row.get("contexts")
        out: dict[str, Any] = {}
        provs: list[Provenance] = []
        asks: list[tuple[Any, Ask]] = []  # (where the answer goes, what is asked)
        if "answer_relevancy" in wanted:
            if q is None or a is None:
                out["generated_questions"] = out["answer_noncommittal"] = None
            elif not a.strip():
                provs.append(self._rule("generated_questions", "empty answer: noncommittal, no question"))
                out["generated_questions"], out["answer_noncommittal"] = [], [True]
            else:
                asks.append(("generated_questions", Ask(RAGAS_PROMPTS["generated_questions"], "generated_questions",
                                                        {"answer": a, "n": self.strictness})))
                asks.append(("answer_noncommittal", Ask(RAGAS_PROMPTS["answer_noncommittal"], "answer_noncommittal",
                                                        {"question": q, "answer": a})))
        entities = "context_entity_recall" in wanted and r is not None and c is not None
        if "context_entity_recall" in wanted and not entities:
            out["reference_entities"] = out["context_entities"] = out["reference_entities_in_contexts"] = None
        elif entities:
            if not r.strip():
                provs.append(self._rule("reference_entities", "empty reference: no entities"))
                out["reference_entities"] = []
            else:
                asks.append(("reference_entities", Ask(RAGAS_PROMPTS["entities"], "reference_entities", {"text": r})))
        if "context_utilization" in wanted:
            if q is None or a is None or c is None:
                out["context_useful_for_answer"] = None
            elif not c:
                provs.append(self._rule("context_useful_for_answer", "no contexts"))
                out["context_useful_for_answer"] = []
            else:
                out["context_useful_for_answer"] = [None] * len(c)
                for i, chunk in enumerate(c):
                    asks.append((("context_useful_for_answer", i), Ask(
                        RAGAS_PROMPTS["context_useful_for_answer"], "context_useful_for_answer",
                        {"question": q, "answer": a, "chunk": chunk}, index=i)))
        if "context_relevancy" in wanted:
            if q is None or c is None:
                out["context_sentences_relevant"] = None
            else:
                sentences = [s for chunk in c for s in split_sentences(chunk)]
                if not sentences:
                    provs.append(self._rule("context_sentences_relevant", "no context sentences"))
                    out["context_sentences_relevant"] = []
                else:
                    numbered = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(sentences))
                    asks.append((("context_sentences_relevant", len(sentences)), Ask(
                        RAGAS_PROMPTS["context_sentences_relevant"], "context_sentences_relevant",
                        {"premise": q, "claims": numbered}, n_claims=len(sentences))))
        if "aspect_critique" in wanted:
            for name, definition in self.aspects.items():
                column = critique_column(name)
                if q is None or a is None:
                    out[column] = None
                    continue
                prompt = _critique_prompt(name, definition)
                out[column] = [None] * self.aspect_strictness
                for k in range(self.aspect_strictness):
                    asks.append(((column, k), Ask(prompt, column, {"question": q, "answer": a, "vote": k + 1,
                                                                     "votes": self.aspect_strictness})))
        answers = (yield [ask for _, ask in asks]) if asks else []
        for (where, _), (value, prov) in zip(asks, answers):
            provs.append(prov)
            if where == "generated_questions":
                out[where] = None if value is None else value[: self.strictness]
            elif where == "answer_noncommittal":
                out[where] = [value]
            elif where == "reference_entities":
                out[where] = value
            elif where[0] == "context_sentences_relevant":
                out[where[0]] = [None] * where[1] if value is None else value
            else:
                out[where[0]][where[1]] = value
        if entities:
            gn, joined = out["reference_entities"], "\n\n".join(c)
            if gn == [] or not joined.strip():
                if gn != []:
                    provs.append(self._rule("context_entities", "no contexts: no entities"))
                cn = []
            else:
                ((cn, prov),) = yield [Ask(RAGAS_PROMPTS["entities"], "context_entities", {"text": joined})]
                provs.append(prov)
            out["context_entities"] = cn
            out["reference_entities_in_contexts"] = None if gn is None or cn is None else entities_found([gn], [cn])[0]
        return out, provs


def score_texts(metric: str, texts, judge: RagasJudge, **options):
    """A metric of the RAGAS family (:mod:`evalsuite.metrics.answer`, :mod:`evalsuite.metrics.correctness`, :mod:`evalsuite.metrics.context`)
    from raw texts: judge them, then score the judgements.

    What ``es.answer_relevancy(texts=..., judge=...)`` (and the other list functions) call.

    Parameters
    ----------
    metric : str
        A metric a judge can fill the inputs of (:data:`~evalsuite.metrics.registry.JUDGED_METRICS`:
        ``answer_relevancy``, ``factual_correctness``, ``aspect_critique``, ``faithfulness`` ...).
    texts : evalsuite.Records or sequence of dict
        Per request ``question``, ``answer``, ``contexts`` (list of str), ``reference`` as the
        metric needs (its registry entry's ``needs``); ``query_id`` optional.
    judge : RagasJudge
        Its LLM judge, embedder, strictness and aspects are used for this metric alone.
    **options
        The metric function's own options (``compat``, ``threshold``, ``mode``, ``beta``, ``name``
        of the aspect when the judge has several).

    Returns
    -------
    Score
        As the metric function, plus ``params["judged"]``: the judge run's counts.

    Raises
    ------
    EvalSuiteError
        ``judge`` not a RagasJudge, an unknown metric, texts that are not records or dicts.

    Examples
    --------
    >>> from evalsuite.judges import LLMJudge
    >>> judge = RagasJudge(LLMJudge("m", base_url="http://127.0.0.1:9/v1", cache=":memory:"),
    ...                    metrics=["context_relevancy"])
    >>> score_texts("context_relevancy", [{"question": "Who?", "contexts": []}], judge)  # no sentence: undefined
    Score(context_relevancy=nan, n=1, coverage=0.000)
    """
    from ..metrics.functions import list_function
    from ..records.table import Records

    if not isinstance(judge, RagasJudge):
        raise EvalSuiteError("judge must be a RagasJudge (evalsuite.judges.ragas)", field="judge",
                             value=type(judge).__name__)
    if metric not in JUDGED_METRICS:
        raise EvalSuiteError(f"no judge fills this metric's judgements; use {', '.join(JUDGED_METRICS)}",
                             field="metric", value=metric)
    if isinstance(texts, Records):
        records = texts
    else:
        if isinstance(texts, (str, bytes)) or not all(isinstance(t, dict) for t in texts):
            raise EvalSuiteError("texts must be Records or one dict per request", field="texts")
        records = Records.from_rows([{"query_id": str(i + 1), **t} for i, t in enumerate(texts)])
    aspects = judge.aspects
    if metric == "aspect_critique":
        name = options.get("name") or (next(iter(aspects)) if len(aspects) == 1 else None)
        if name not in aspects:
            raise EvalSuiteError("name the aspect to score", field="name", value=name)
        aspects = {name: aspects[name]}
        options["name"] = name
    one = RagasJudge(judge.llm, judge._embedder, metrics=[metric], strictness=judge.strictness,
                     aspects=aspects if metric == "aspect_critique" else None, aspect_strictness=judge.aspect_strictness)
    judged = one.judge(records)
    judge._embedder = one._embedder  # keep a loaded model for the next call
    table = judged.records.table
    entry = METRICS[metric]
    present = set(table.column_names)
    if metric == "aspect_critique":
        column = critique_column(options["name"])
        arguments = {entry.inputs[0].argument: table.column(column).to_pylist() if column in present else None}
    else:  # the registry's inputs, by argument name (the columns the judge filled)
        chosen = entry.usable_inputs(present) or tuple(i for i in entry.inputs if i.required)
        arguments = {i.argument: table.column(i.column).to_pylist() if i.column in present else None for i in chosen}
    score = list_function(entry)(**arguments, **options)
    score.params["judged"] = judged.stats.as_dict()
    return score
