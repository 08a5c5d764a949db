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
               if m.name not in ("evalsuite.__main__", "evalsuite.display._figures")]
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


# Tests that are about a concern rather than one module (cross-tool references, bad input, the
# hardening of the readers, the docs) are named for it; every evaluation module with a public
# job has its own test module.
TESTED_ELSEWHERE = {
    "evalsuite.__main__": "test_cli.py", "evalsuite._reader_worker": "test_isolation.py",
    "evalsuite._lines": "test_adversarial.py", "evalsuite._keys": "test_adversarial.py",
    "evalsuite._parallel": "test_io.py", "evalsuite._validate": "test_display.py",
    "evalsuite._reading": "test_io.py", "evalsuite._read_ranked": "test_io.py",
    "evalsuite._records_eval": "test_records.py", "evalsuite._paired_stats": "test_compare.py",
    "evalsuite._comparison_report": "test_compare.py", "evalsuite._evaluate": "test_conventions.py",
    "evalsuite.data": "test_io.py", "evalsuite.score": "test_ranking.py", "evalsuite.errors": "test_bad_input.py",
    "evalsuite.limits": "test_hardening.py", "evalsuite.metric_names": "test_registry.py",
    "evalsuite.display._figures": "test_display.py", "evalsuite.display._tables_ranking": "test_display.py",
    "evalsuite.display._tables_records": "test_display.py", "evalsuite.display._report": "test_display_report.py",
    "evalsuite.storage._model": "test_storage.py", "evalsuite.storage._schema": "test_storage.py",
    "evalsuite.storage._sqlite": "test_storage.py", "evalsuite.storage._postgres": "test_storage.py",
    "evalsuite.storage._store": "test_storage.py", "evalsuite.storage._config": "test_storage.py",
    "evalsuite.judges._base": "test_llm.py", "evalsuite.judges.prompts": "test_llm.py",
    "evalsuite.storage._pool": "test_storage.py", "evalsuite.storage._workspaces": "test_storage.py",
    "evalsuite.storage._usage": "test_hosting_store.py", "evalsuite.hosting": "test_hosting_store.py",
    "evalsuite.display._markup": "test_figure_markup.py",
}


def test_every_module_has_a_test_module():
    tests = {p.name for p in (REPO / "tests").glob("test_*.py")}
    for module in pkgutil.walk_packages(evalsuite.__path__, "evalsuite."):
        name = module.name
        if module.ispkg:
            continue
        own = f"test_{name.rsplit('.', 1)[-1].lstrip('_')}.py"
        expected = TESTED_ELSEWHERE.get(name, own)
        assert expected in tests, f"{name}: no {expected}"


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
    assert es.evaluate is es._evaluate.evaluate
    import pytest
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        es.no_such_name
