"""The package layout: the evaluation package loads no UI or storage library, and public names
never shadow modules."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import evalsuite

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("streamlit", "plotly", "psycopg")


def _loaded_after_import(modules: list[str]) -> list[str]:
    code = ("import importlib, json, sys\n"
            f"for name in {modules!r}:\n    importlib.import_module(name)\n"
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_no_module_of_the_evaluation_package_loads_streamlit_plotly_or_psycopg():
    modules = [m.name for m in pkgutil.walk_packages(evalsuite.__path__, "evalsuite.")
               if m.name not in ("evalsuite.__main__", "evalsuite.display._figures", "evalsuite.display._figures_latency")]
    assert "evalsuite.storage._store" in modules and "evalsuite.display._tables_ranking" in modules
    assert _loaded_after_import(["evalsuite", *modules]) == []


def test_figures_load_plotly_only_when_asked_for():
    assert _loaded_after_import(["evalsuite.display"]) == []
    code = "import sys, evalsuite.display as d; d.metric_bars; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def test_public_functions_do_not_shadow_modules():
    modules = {m.name for m in pkgutil.iter_modules(evalsuite.__path__)}
    assert not modules & set(evalsuite.__all__), "a public name is also a module name"


# The tests mirror the package: the tests of ``evalsuite/<package>/<module>.py`` are in
# ``tests/<package>/``. A module with a test file of its own name there (``test_<module>.py``) needs
# no entry; the others are tested by a file about their concern (cross-tool references, bad input,
# the hardening of the readers, the docs), named here.
TESTED_BY = {
    "evalsuite.__main__": "cli/test_cli.py",
    "evalsuite.cli._subcommands": "cli/test_cli.py",
    "evalsuite.cli.compare": "cli/test_compare_cli.py",
    "evalsuite.cli.evaluate": "cli/test_cli.py",
    "evalsuite.cli.judge": "cli/test_judge_cli.py",
    "evalsuite.cli.ragas": "cli/test_ragas_cli.py",
    "evalsuite.display._figures": "display/test_display.py",
    "evalsuite.display._report": "display/test_display_report.py",
    "evalsuite.display._tables_comparison": "display/test_display.py",
    "evalsuite.display._tables_ranking": "display/test_display.py",
    "evalsuite.display._tables_records": "display/test_display.py",
    "evalsuite.cli._options": "io/test_output_files.py",
    "evalsuite.errors": "io/test_bad_input.py",
    "evalsuite.evaluation.engines": "evaluation/test_conventions.py",
    "evalsuite.evaluation.local": "evaluation/test_conventions.py",
    "evalsuite.evaluation.report": "evaluation/test_conventions.py",
    "evalsuite.evaluation.shards": "evaluation/test_distributed.py",
    "evalsuite.io._lines": "io/test_adversarial.py",
    "evalsuite.io._read_ranked": "io/test_io.py",
    "evalsuite.io._reader_worker": "io/test_isolation.py",
    "evalsuite.io._transit": "io/test_isolation.py",
    "evalsuite.io._held_bytes": "io/test_isolation.py",
    "evalsuite.io._rank_order": "io/test_rank_order.py",
    "evalsuite.io._reading": "io/test_io.py",
    "evalsuite.io.columns": "io/test_io.py",
    "evalsuite.io.judgement_table": "io/test_judgement_files.py",
    "evalsuite.io.limits": "io/test_hardening.py",
    "evalsuite.io.record_files": "records/test_records.py",
    "evalsuite.records.per_record": "records/test_records.py",
    "evalsuite.io.run_files": "io/test_io.py",
    "evalsuite.io.run_qrels": "io/test_io.py",
    "evalsuite.judges._base": "judges/test_llm.py",
    "evalsuite.judges.estimate": "judges/test_llm.py",
    "evalsuite.judges.outcome": "judges/test_run_limits.py",
    "evalsuite.judges.replies": "judges/test_llm.py",
    "evalsuite.judges.run_control": "judges/test_run_limits.py",
    "evalsuite.judges.scheduler": "judges/test_run_limits.py",
    "evalsuite.judges.sentences": "judges/test_ragas_judge.py",
    "evalsuite.judges.transport": "judges/test_run_limits.py",
    "evalsuite.judges.prompts": "judges/test_llm.py",
    "evalsuite.judges.ragas": "judges/test_ragas_judge.py",
    "evalsuite.judges.ragas_needs": "judges/test_ragas_judge.py",
    "evalsuite.judges.ragas_embeddings": "judges/test_ragas_judge.py",
    "evalsuite.metrics._rag_entries": "metrics/test_registry.py",
    "evalsuite.metrics._ranking_entries": "metrics/test_registry.py",
    "evalsuite.metrics._trec_eval_entries": "metrics/test_registry.py",
    "evalsuite.metrics.answer": "metrics/test_rag.py",
    "evalsuite.metrics.correctness": "metrics/test_ragas.py",
    "evalsuite.metrics.functions": "metrics/test_registry.py",
    "evalsuite.metrics._given_entries": "metrics/test_registry.py",
    "evalsuite.metrics.citation": "metrics/test_rag.py",
    "evalsuite.metrics.context": "metrics/test_rag.py",
    "evalsuite.metrics.entry": "metrics/test_registry.py",
    "evalsuite.metrics.judgement_lists": "metrics/test_rag.py",
    "evalsuite.metrics.names": "metrics/test_registry.py",
    "evalsuite.metrics.operational": "metrics/test_rag.py",
    "evalsuite.metrics.ranking_kernel": "metrics/test_ranking.py",
    "evalsuite.metrics.registry": "metrics/test_registry.py",
    "evalsuite.records.evaluation": "records/test_records.py",
    "evalsuite.records.schema": "records/test_records.py",
    "evalsuite.records.table": "records/test_records.py",
    "evalsuite.records.validation": "records/test_records.py",
    "evalsuite.records.vendors": "records/test_exports.py",
    "evalsuite.score": "metrics/test_ranking.py",
    "evalsuite.records.traces": "io/test_traces.py",
    "evalsuite.io._span_values": "io/test_traces.py",
    "evalsuite.io._phoenix_spans": "io/test_traces.py",
    "evalsuite.io._latency_table": "io/test_latency_tables.py",
    "evalsuite.display._latency": "display/test_latency_views.py",
    "evalsuite.display._figures_latency": "display/test_latency_views.py",
    "evalsuite.stats.agreement": "stats/test_calibration.py",
    "evalsuite.stats.comparison": "stats/test_compare.py",
    "evalsuite.stats.comparison_report": "stats/test_compare.py",
    "evalsuite.stats.judgement_tables": "stats/test_calibration.py",
    "evalsuite.stats.paired": "stats/test_compare.py",
    "evalsuite.stats.ppi": "stats/test_calibration.py",
    "evalsuite.stats.system_means": "stats/test_calibration.py",
    "evalsuite.storage._config": "storage/test_storage.py",
    "evalsuite.storage._model": "storage/test_storage.py",
    "evalsuite.storage._postgres": "storage/test_storage.py",
    "evalsuite.storage._schema": "storage/test_storage.py",
    "evalsuite.storage._sqlite": "storage/test_storage.py",
    "evalsuite.storage._store": "storage/test_storage.py",
    "evalsuite.utils.checks": "display/test_display.py",
    "evalsuite.utils.exact_sum": "records/test_exact_mean.py",
    "evalsuite.utils.ids": "io/test_ids.py",
    "evalsuite.utils.keys": "io/test_adversarial.py",
    "evalsuite.utils.parallel": "io/test_io.py",
    "evalsuite.version": "display/test_display_report.py",
    "evalsuite.storage._pool": "storage/test_storage.py",
    "evalsuite.storage._workspaces": "storage/test_storage.py",
    "evalsuite.storage._usage": "storage/test_hosting_store.py",
    "evalsuite.hosting": "storage/test_hosting_store.py",
    "evalsuite.display._markup": "display/test_figure_markup.py",
    "evalsuite.cli.admin": "cli/test_admin_cli.py",
}


def test_every_module_has_a_test_module():
    for module in pkgutil.walk_packages(evalsuite.__path__, "evalsuite."):
        if module.ispkg:
            continue
        parts = module.name.split(".")[1:]
        own = "/".join([*parts[:-1], f"test_{parts[-1].lstrip('_')}.py"])
        expected = TESTED_BY.get(module.name, own)
        assert (REPO / "tests" / expected).is_file(), f"{module.name}: no tests/{expected}"


def _import_times_us(code: str) -> dict[str, int]:
    """Cumulative import time per top-level module, as ``python -X importtime`` reports it."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=REPO,
                            capture_output=True, text=True, check=True)
    times = {}
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if cumulative.isdigit():  # skips the header line; a module is imported once, so its line is unique
            times[name] = int(cumulative)
    return times


def test_importing_the_package_loads_no_numeric_library():
    # The command line and small scripts should not pay for pandas, pyarrow or scipy up front;
    # each public name imports its module on first use.
    code = ("import sys, evalsuite\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'pyarrow', 'scipy'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_costs_a_fraction_of_importing_numpy():
    # A loose budget as a ratio measured in one process, not an absolute time: a whole `import
    # evalsuite` must cost less than a third of `import numpy` (about 0.06 s here).
    samples = [_import_times_us("import numpy, evalsuite") for _ in range(3)]
    ratios = sorted(s["evalsuite"] / s["numpy"] for s in samples)
    assert ratios[1] < 1 / 3, ratios


def test_public_names_load_on_first_use():
    import evalsuite as es
    assert set(dir(es)) >= set(es.__all__)
    assert es.evaluate is es.evaluation.engines.evaluate
    import pytest
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        es.no_such_name


def test_reading_trec_files_and_evaluating_import_no_pandas_until_the_table_is_asked_for():
    # pandas costs about 0.25 s to import (issue 31, benchmarks/README.md); pyarrow's to_numpy and
    # pa.array import it, so the read and evaluation path builds its arrays from buffers.
    code = ("import sys, evalsuite as es\n"
            "q = es.read_qrels('sample_data/cranfield/qrels.trec')\n"
            "r = es.read_run('sample_data/cranfield/run_bm25.trec')\n"
            "rep = es.evaluate(q, r, ['ndcg@10', 'map@100', 'P_10'])\n"
            "before = 'pandas' in sys.modules\n"
            "table = rep.per_query\n"
            "print(before, 'pandas' in sys.modules, table.shape, round(table['ndcg@10'].mean(), 4), round(rep.means['ndcg@10'], 4))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "(225,", "3)", "0.3599", "0.3599"]


def test_the_command_line_prints_the_trec_eval_table_without_pandas():
    # The CSV output and per-query tables are pandas frames; the default table needs none.
    code = ("import sys\n"
            "from evalsuite.cli import main\n"
            "status = main(['sample_data/cranfield/qrels.trec', 'sample_data/cranfield/run_bm25.trec', '-m', 'map'])\n"
            "print(status, 'pandas' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stderr.split()[-2:] == ["0", "False"], done.stderr
    # map of the BM25 run as sample_data/cranfield/SOURCE.md gives it (pytrec_eval-terrier 0.5.11)
    assert "map\tall\t0.2877" in done.stdout.replace(" ", ""), done.stdout
