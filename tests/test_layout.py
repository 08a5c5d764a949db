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
