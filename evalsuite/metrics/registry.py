"""The metric registry: one entry per metric, read by name parsing, the docs, the dashboard and the tests.

Each :class:`Metric` holds what a user or a contributor needs to trust it: the canonical name
and the names other tools use (ranx, trec_eval, ir_measures, RAGAS, ARES, ALCE), what kind of
metric it is, which direction is better and its range, what a cutoff means for it, the
conventions it follows where tools disagree, the source of its definition, the public function
that computes it, the dashboard pages that show it, and hand-computed test vectors with the
arithmetic written out. Adding a metric means adding one entry and its kernel: the entries are in
``_ranking_entries.py`` (the measures every tool has), ``_trec_eval_entries.py`` (trec_eval's
further measures) and ``_rag_entries.py`` (context, answer, operational), in the order the
dashboard's pickers and the docs list them; :mod:`~evalsuite.metrics.entry` says what an entry holds.

``docs/metrics.md`` and ``docs/conventions.md`` are generated from this module
(``python scripts/build_docs.py``; a test checks they are current), and
``tests/metrics/test_registry.py`` runs the same checks on every entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._rag_entries import RAG_ENTRIES
from ._ranking_entries import RANKING_ENTRIES
from ._trec_eval_entries import TREC_EVAL_ENTRIES
from .entry import KINDS, Metric, TestVector

__all__ = ["Metric", "TestVector", "METRICS", "GENERAL_CONVENTIONS", "TREC_PRINT_ORDER", "TREC_FAMILY_CUTOFFS", "KINDS"]

_ENTRIES = [*RANKING_ENTRIES, *TREC_EVAL_ENTRIES, *RAG_ENTRIES]


# In the order the dashboard's pickers and the docs list them.
METRICS: Mapping[str, Metric] = MappingProxyType({m.name: m for m in _ENTRIES})

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
