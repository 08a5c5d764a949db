"""Constants of the dashboard in one place: pages, session keys, defaults, sample files."""

from __future__ import annotations

from pathlib import Path

from evalsuite import METRICS
from evalsuite.metrics.registry import DEFAULTS
from evalsuite.stats.paired import DEFAULT_COMPARE_METRICS

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO / "sample_data"

# Sample data loaded on a session's first visit: (kind, path, system name or None).
SAMPLE_FILES = (
    ("qrels", SAMPLE_DIR / "cranfield" / "qrels.trec", None),
    ("run", SAMPLE_DIR / "cranfield" / "run_bm25.trec", "BM25"),
    ("run", SAMPLE_DIR / "cranfield" / "run_bm25l.trec", "BM25L"),
    ("records", SAMPLE_DIR / "rag" / "ragtruth_qa.jsonl", None),
    ("records", SAMPLE_DIR / "rag" / "llmperf_requests.jsonl", None),
    # Failures at retrieval (ARES's irrelevant passages) and evidence (RAGChecker's partial claim
    # recall), attributed from their judgements (issue 15; sample_data/rag/README.md).
    ("records", SAMPLE_DIR / "rag" / "ares_judge_examples.jsonl", None),
    ("records", SAMPLE_DIR / "rag" / "ragchecker_examples.jsonl", None),
)
# Titles of the Cranfield docs, shown next to doc ids in ranked lists when the ids match.
SAMPLE_DOCS = SAMPLE_DIR / "cranfield" / "docs.jsonl"

# Pages: (module name in pages/, title, URL path, icon). The first is the default page ("/").
# The URL path is the module name: on a freshly started server Streamlit's legacy pages/ mode
# finds the page file by that name (see dashboard.shell), and any other name shows "Page not found".
PAGES = (  # the navigation's material icons ship with Streamlit's frontend (no network)
    ("data", "Data", "data", ":material/upload_file:"),
    ("overview", "Overview", "overview", ":material/leaderboard:"),
    ("per_query", "Per-query", "per_query", ":material/table_rows:"),
    ("rag_quality", "RAG quality", "rag_quality", ":material/fact_check:"),
    ("label", "Label", "label", ":material/label:"),
    ("calibration", "Calibration", "calibration", ":material/balance:"),
    ("latency", "Latency", "latency", ":material/timer:"),
    ("failures", "Failures", "failures", ":material/error:"),
    ("compare", "Compare", "compare", ":material/compare_arrows:"),
    ("judge", "Judge", "judge", ":material/gavel:"),
)

# Session state keys shared by several pages (page-local keys start with the page's name).
KEY_FILES = "data_files"            # {"kind:digest": StoredFile}, in upload order
KEY_PROBLEMS = "data_problems"      # [(file name, plain-text message)] of rejected uploads
KEY_PENDING = "data_pending"        # [(kind, file name, bytes)] waiting to be read (tests inject here)
KEY_STARTED = "data_started"        # True once the sample data was offered to this session
KEY_NOTICES = "data_notices"        # [plain-text message] from the last ingest, shown once
KEY_REL_LEVEL = "rel_level"         # sidebar: minimum grade that counts as relevant (bound to the URL)
KEY_QRELS = "qrels"                 # sidebar: which qrels file is active (bound to the URL)

KEY_QRELS_ACTIVATE = "qrels_activate"  # digest of a qrels file just uploaded: made active before the picker is drawn

KINDS = ("run", "qrels", "records")

# What the Per-query and Compare pages show: ranking runs against qrels, or per-request records.
SOURCES = ("ranking runs", "per-request records")

# The browser tab's icon: an emoji, drawn by the browser itself (a ":material/...:" page icon makes
# the browser fetch the icon from fonts.gstatic.com, which fails offline).
PAGE_ICON = "\N{BAR CHART}"

# The metric pickers list the registry's metrics (evalsuite/metrics/registry.py), in its order.
# Metrics with a real parameter (iprec_at_recall, rbp, Rprec_mult) are left out: the pickers combine a
# metric with cutoffs; a metric that takes no cutoff (bpref, r_precision) is shown once, whole list.
BASE_METRICS = tuple(m.name for m in METRICS.values() if m.kind == "ranking" and "Per-query" in m.pages and not m.param)
DEFAULT_BASE_METRICS = DEFAULTS["dashboard"]
# "all": no cutoff, the whole ranked list (trec_eval's map, ndcg, recip_rank; set_P, set_recall).
WHOLE_LIST = "all"
CUTOFFS = (1, 3, 5, 10, 20, 50, 100, 1000, WHOLE_LIST)
DEFAULT_CUTOFFS = (10, 100)
RANKED_LIST_DEPTH = 20
# trec_eval's names of the default metrics over the whole list, for captions and column help.
WHOLE_LIST_TREC = {m: METRICS[m].trec_whole for m in DEFAULT_BASE_METRICS if METRICS[m].trec_whole}

TESTS = ("permutation", "t-test", "wilcoxon", "tukey")
# Compare tests per-query differences of means: a geometric mean (gm_map) is left out.
COMPARE_RUN_METRICS = tuple(dict.fromkeys(b if k == WHOLE_LIST or not METRICS[b].cutoff else f"{b}@{k}"
                                          for b in BASE_METRICS if METRICS[b].aggregate == "mean" for k in CUTOFFS))
COMPARE_DEFAULT_RUN_METRICS = DEFAULT_COMPARE_METRICS
COMPARE_DEFAULT_RECORD_METRICS = 4    # the first this many quality metrics both systems have
# RAG quality: display order; metrics a records file allows beyond these (ranking metrics) follow.
RAG_ORDER = tuple(m.name for m in METRICS.values() if m.kind in ("context", "answer") or m.name == "success")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "westfall_young", "none")

# Latency charts: bins and ECDF points sent to the browser per system.
HISTOGRAM_BINS = 60
ECDF_POINTS = 400
SCATTER_POINTS = 5000
LATENCY_RATE_BINS = 10               # latency bins of the success-rate chart (0/1 quality metrics)

# Saved workspaces ("Save and share", ``?ws=`` links). The URL parameter is not bound to a widget.
WS_PARAM = "ws"
KEY_WS_KNOWN = "ws_known"            # {workspace id: {"name", "link", "token" or None, "role"}} of this session
KEY_WS_ACTIVE = "ws_active"          # {"id", "name", "fingerprint"}: the workspace the session's data equals
KEY_WS_ATTEMPTED = "ws_attempted"    # the last ``ws`` value from the URL this session tried to open
KEY_WS_PROBLEM = "ws_problem"        # {"id", "message", "level"} when opening it failed or was partial
KEY_SHARE_RESULT = "ws_share_result"  # the last save's link and owner token, shown until dismissed
# Store caps the dashboard asks for on the local SQLite default (MiB), unless configured: a run of
# 7 million TREC lines (about 250 MB, see .streamlit/config.toml) still fits. PostgreSQL keeps the
# store's own defaults (50 and 200 MiB), meant for hosted databases and small containers.
LOCAL_MAX_DATASET_MB = 300
LOCAL_MAX_WORKSPACE_MB = 1024
# Text the workspace store keeps (evalsuite.storage): names of workspaces, systems and files.
MAX_WORKSPACE_NAME_CHARS = 200
MAX_SYSTEM_CHARS = 2000
MAX_FILENAME_CHARS = 255
STORE_RETRY_SECONDS = 60.0          # a store that could not be opened is tried again after this

# Report export: the Overview and Compare selections last used (plain session keys, kept across
# pages, unlike widget state), so a report made on any page carries them.
KEY_REPORT_OVERVIEW = "report_overview"
KEY_REPORT_COMPARE = "report_compare"
RECORDS_K = 10                       # cutoff of the ranking metrics computed from records
