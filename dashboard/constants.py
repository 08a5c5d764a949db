"""Constants of the dashboard in one place: pages, session keys, defaults, sample files."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO / "sample_data"

# Sample data loaded on a session's first visit: (kind, path, system name or None).
SAMPLE_FILES = (
    ("qrels", SAMPLE_DIR / "cranfield" / "qrels.trec", None),
    ("run", SAMPLE_DIR / "cranfield" / "run_bm25.trec", "BM25"),
    ("run", SAMPLE_DIR / "cranfield" / "run_bm25l.trec", "BM25L"),
    ("records", SAMPLE_DIR / "rag" / "ragtruth_qa.jsonl", None),
    ("records", SAMPLE_DIR / "rag" / "llmperf_requests.jsonl", None),
)
# Titles of the Cranfield docs, shown next to doc ids in ranked lists when the ids match.
SAMPLE_DOCS = SAMPLE_DIR / "cranfield" / "docs.jsonl"

# Pages: (module name in pages/, title, URL path, icon). The first is the default page ("/").
# The URL path is the module name: on a freshly started server Streamlit's legacy pages/ mode
# finds the page file by that name (see dashboard.shell), and any other name shows "Page not found".
PAGES = (
    ("data", "Data", "data", ":material/upload_file:"),
    ("overview", "Overview", "overview", ":material/leaderboard:"),
    ("per_query", "Per-query", "per_query", ":material/table_rows:"),
    ("rag_quality", "RAG quality", "rag_quality", ":material/fact_check:"),
    ("latency", "Latency", "latency", ":material/timer:"),
    ("failures", "Failures", "failures", ":material/error:"),
    ("compare", "Compare", "compare", ":material/compare_arrows:"),
)

# Session state keys shared by several pages (page-local keys start with the page's name).
KEY_FILES = "data_files"            # {"kind:digest": StoredFile}, in upload order
KEY_PROBLEMS = "data_problems"      # [(file name, plain-text message)] of rejected uploads
KEY_PENDING = "data_pending"        # [(kind, file name, bytes)] waiting to be read (tests inject here)
KEY_STARTED = "data_started"        # True once the sample data was offered to this session
KEY_NOTICES = "data_notices"        # [plain-text message] from the last ingest, shown once
KEY_REL_LEVEL = "rel_level"         # sidebar: minimum grade that counts as relevant (bound to the URL)
KEY_QRELS = "qrels"                 # sidebar: which qrels file is active (bound to the URL)

KINDS = ("run", "qrels", "records")

BASE_METRICS = ("ndcg", "map", "mrr", "precision", "recall", "hit_rate", "ndcg_burges")
DEFAULT_BASE_METRICS = ("ndcg", "map", "mrr", "precision", "recall")
CUTOFFS = (1, 3, 5, 10, 20, 50, 100, 1000)
DEFAULT_CUTOFFS = (10, 100)
RANKED_LIST_DEPTH = 20

TESTS = ("permutation", "t-test", "wilcoxon")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "none")

# Latency charts: bins and ECDF points sent to the browser per system.
HISTOGRAM_BINS = 60
ECDF_POINTS = 400
SCATTER_POINTS = 5000
