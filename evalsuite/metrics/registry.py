"""The metric registry: one entry per metric, and the only list of metric names.

Each :class:`Metric` holds what a user or a contributor needs to trust it: the canonical name
and the names other tools use (ranx, trec_eval, ir_measures; RAGAS, DeepEval, TruLens, Phoenix,
ARES and ALCE exports), what kind of metric it is, which direction is better and its range, what
a cutoff means for it, the conventions it follows where tools disagree, the source of its
definition, the record columns it reads and what a missing verdict means, what a judge needs to
fill them, its per-request kernel and its list function, the dashboard pages that show it, and
hand-computed test vectors with the arithmetic written out. Adding a metric means adding one
entry and its kernel: the entries are in ``_ranking_entries.py`` (the measures every tool has),
``_trec_eval_entries.py`` (trec_eval's further measures) and ``_rag_entries.py`` (context,
answer, operational), in the order the dashboard's pickers and the docs list them;
``_given_entries.py`` holds the scores other tools compute that EvalSuite reads as given.
:mod:`~evalsuite.metrics.entry` says what an entry holds.

Everything else that lists metrics reads this module: name parsing and the ranking kernel's
dispatch, the record schema's fields and the column names of other tools' exports (the tables
below), the judges' planners, evaluate_records, the dashboard's pickers, the command line's
defaults. ``docs/metrics.md``, ``docs/conventions.md`` and the field table of
``docs/records.md`` are generated from it (``python scripts/build_docs.py``; a test checks they
are current), and ``tests/metrics/test_registry.py`` runs the same checks on every entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._given_entries import GIVEN_ENTRIES
from ._rag_entries import RAG_ENTRIES
from ._ranking_entries import RANKING_ENTRIES
from ._trec_eval_entries import TREC_EVAL_ENTRIES
from .entry import EXPORT_TOOLS, KINDS, GivenScore, Metric, TestVector

__all__ = ["Metric", "GivenScore", "TestVector", "METRICS", "GIVEN_SCORES", "LEXICAL_JUDGE_COLUMNS", "DEFAULTS", "TREC_OFFICIAL",
           "GENERAL_CONVENTIONS", "TREC_PRINT_ORDER", "TREC_FAMILY_CUTOFFS", "KINDS", "EXPORT_NAMES", "READ_EXPORTS",
           "RECORD_INPUTS", "PER_CHUNK_INPUTS", "GIVEN_NAMES", "LOWER_IS_BETTER", "JUDGED_METRICS", "judge_columns"]

_ENTRIES = [*RANKING_ENTRIES, *TREC_EVAL_ENTRIES, *RAG_ENTRIES]


# In the order the dashboard's pickers and the docs list them.
METRICS: Mapping[str, Metric] = MappingProxyType({m.name: m for m in _ENTRIES})
#: Scores other tools compute that EvalSuite reads as given, by the record field they are kept under.
GIVEN_SCORES: Mapping[str, GivenScore] = MappingProxyType({g.name: g for g in GIVEN_ENTRIES})
#: The columns the lexical judge fills (:mod:`evalsuite.judges.lexical`), in the order it offers them.
LEXICAL_JUDGE_COLUMNS: tuple[str, ...] = tuple(g.name for g in GIVEN_ENTRIES if g.judge == "lexical")

#: Default selections of ranking metrics (names as parse_metric accepts them), by who uses them.
DEFAULTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    # evaluate(), the Dask engine and `evalsuite --engine dask` without -m
    "evaluate": ("ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100", "hit_rate@10"),
    # compare(), `evalsuite compare` and the Compare page
    "compare": ("ndcg@10", "map@100", "mrr@10", "recall@100"),
    # the Overview page's metrics (each at the page's cutoffs)
    "dashboard": ("ndcg", "map", "mrr", "precision", "recall"),
    # per request from records' context_ids and relevant_ids, at evaluate_records' k
    "records": ("precision", "recall", "hit_rate", "mrr", "map", "ndcg"),
})
#: What trec_eval prints without -m (its "official" set): measure families, in its order.
TREC_OFFICIAL = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                 "iprec_at_recall", "P")

# trec_eval's measure table, for the command line: the order trec_eval prints measures in (the
# families EvalSuite computes) and the cutoffs a bare family name stands for (`-m P`).
TREC_PRINT_ORDER = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                    "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
                    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
                    "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj")
TREC_FAMILY_CUTOFFS = {
    "Rprec_mult": (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    "relative_P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "unj": (5, 10, 20),
    "iprec_at_recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}

# Conventions that hold for every ranking metric (docs/conventions.md): (topic, decision, who agrees).
GENERAL_CONVENTIONS = (
    ("order of a run", "score descending as float64; ties broken by doc id descending (byte order); the rank "
     "column is ignored when scores exist", "trec_eval 10 (trec_eval 9 and pytrec_eval compare scores as float32; "
     "ranx keeps insertion order)"),
    ("relevant", "grade >= `rel_level` (default 1); grades <= 0 never relevant; negative grades not counted in R",
     "trec_eval"),
    ("queries averaged over", "the qrels' queries; a qrels query missing from the run scores 0; run queries "
     "without qrels are dropped and reported (`queries=\"intersection\"` for trec_eval's default)",
     "trec_eval -c, ranx `make_comparable=True`"),
    ("qrels query with no relevant doc", "kept; every metric 0; the count is reported", "all tools"),
    ("duplicate doc for a query", "an error naming both lines (`duplicates=\"max\"` keeps the higher score)",
     "trec_eval"),
    ("non-integer grade in a qrels file", "an error naming file, line and value",
     "pytrec_eval (trec_eval truncates silently)"),
    ("extra columns after the TREC run tag", "ignored, with a warning", "trec_eval"),
    ("an id, in every format", "ASCII whitespace trimmed from both ends, every other character kept byte for "
     "byte (`q1, d1, 2.0` names doc `d1`; U+00A0 stays); a warning when ids differ only by invisible characters "
     "([ids](#ids-in-every-format))", "trec_eval (splits TREC lines on exactly the ASCII whitespace)"),
    ("a missing judgement (None) in a RAG judgement list", "excluded and counted, never read as False", ""),
    ("a corpus value of a RAG metric", "the mean over the requests where it is defined, with coverage "
     "(defined / total)", ""),
)


# -- tables derived from the entries (what the readers, the judges and the pages read) -----------

def _exports(tool: str) -> dict[str, str]:
    names: dict[str, str] = {}
    for entry in (*METRICS.values(), *GIVEN_SCORES.values()):
        for name in entry.exports.get(tool, ()):
            names[name] = entry.name
    return names


#: Tool -> {the name a metric has in that tool's exports: its name here}.
EXPORT_NAMES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {tool: MappingProxyType(_exports(tool)) for tool in EXPORT_TOOLS})
#: The tools whose per-request exports the record readers map by these names: RAGAS result
#: columns, DeepEval metricsData names, TruLens feedback columns, Phoenix evaluator names. ARES
#: writes its labels as "[[Yes]]"/"[[No]]" judgement strings and ALCE's eval.py per-run
#: percentages, so their names are listed in the docs but no reader maps them.
READ_EXPORTS = ("ragas", "deepeval", "trulens", "phoenix")

#: Record column -> its kind in the record schema, for every column a metric reads (the
#: ``critique_<name>`` pattern aside), in registry order.
RECORD_INPUTS: Mapping[str, str] = MappingProxyType(
    {i.column: i.kind for m in METRICS.values() for i in m.inputs if not i.pattern})
#: Judgement columns with one item per retrieved chunk (their length must match ``contexts``).
PER_CHUNK_INPUTS = tuple(dict.fromkeys(i.column for m in METRICS.values() for i in m.inputs
                                       if i.per == "retrieved chunk"))
#: Per-request values a records file may carry already computed (a RAGAS export's columns): the
#: RAG metrics (one column each; aspect critiques are named by the user) and the given scores.
GIVEN_NAMES = (*(m.name for m in METRICS.values() if m.kind in ("context", "answer")
                 and not any(i.pattern for i in m.inputs)), *GIVEN_SCORES)
#: Names (metrics and given scores) where a lower value is better.
LOWER_IS_BETTER = frozenset(e.name for e in (*METRICS.values(), *GIVEN_SCORES.values()) if not e.higher_is_better)
#: The metrics a judge can fill the inputs of (the Judge page, ``evalsuite ragas``, the RAGAS judge).
JUDGED_METRICS = tuple(m.name for m in METRICS.values() if m.needs is not None)


def judge_columns(judge: str, metrics=None) -> tuple[str, ...]:
    """The input columns of ``metrics`` (default all) that ``judge`` fills, in registry order.

    >>> judge_columns("llm", ["faithfulness", "answer_correctness"])
    ('answer_claims_supported', 'answer_claims_in_reference', 'reference_claims_in_answer')
    """
    entries = METRICS.values() if metrics is None else [METRICS[m] for m in metrics]
    return tuple(dict.fromkeys(i.column for m in entries for i in m.inputs if judge in i.judges))
