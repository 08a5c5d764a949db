"""The design the folders show, held by a test (in the spirit of import-linter's "layers" and
"forbidden" contracts; read with ``ast``, no dependency): which package may import which, no
import circle (function-level imports included), no private name imported across packages, no
module over 600 lines, and ``evalsuite`` never imports streamlit.

Every ``import`` statement of ``evalsuite/``, ``dashboard/``, ``pages/`` and ``app.py`` counts,
wherever it stands (module level, inside a function, behind a condition), except those under
``if TYPE_CHECKING:``, which never run. Two tables of modules imported by name are read as imports
too: the package root's lazy public names (``evalsuite/__init__.py``, ``_PUBLIC``) and the command
line's subcommands (``evalsuite/cli/_subcommands.py``, ``SUBCOMMANDS``).

A rule is broken only with an entry in :data:`EXCEPTIONS`, which says why and which issue removes
it; an entry that no longer applies fails the test too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600

# The layers, bottom first. A module may import its own unit and the units of lower layers; units
# of one layer are independent of each other. A module's unit is the longest name below that is
# a prefix of its dotted name.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("evalsuite.errors", "evalsuite.version"),  # the one exception type; the version
    ("evalsuite.score", "evalsuite.hosting"),   # a float that carries its per-query values; hosting rules
    ("evalsuite.utils", "evalsuite.storage"),   # shared helpers; the workspace store
    ("evalsuite.metrics",),                     # the registry and every metric
    ("evalsuite.records",),                     # per-request records: schema, validation, evaluation
    ("evalsuite.io",),                          # reading files (runs, qrels, records), limits, isolation
    ("evalsuite.evaluation", "evalsuite.judges"),  # evaluate() on one machine or Dask; the judges
    ("evalsuite.stats",),                       # comparisons, agreement, prediction-powered means
    ("evalsuite.display",),                     # tables, figures, the HTML report
    ("evalsuite.cli",),                         # the command line
    ("evalsuite",),                             # the package root (lazy public names) and __main__
    ("dashboard",),                             # Streamlit-only code under the pages
    ("pages", "app"),                           # the pages and the app's entry point
)

# Allowed breaks of a rule: what, why, and which issue removes it.
EXCEPTIONS: dict[tuple[str, str], str] = {
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _files() -> dict[str, Path]:
    paths = [*ROOT.glob("evalsuite/**/*.py"), *ROOT.glob("dashboard/**/*.py"), *ROOT.glob("pages/**/*.py"),
             ROOT / "app.py"]
    return {_module_name(p): p for p in sorted(paths)}


FILES = _files()


def _package_of(module: str) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to the package itself)."""
    path = FILES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _unit_of(module: str) -> str:
    units = [u for layer in LAYERS for u in layer]
    return max((u for u in units if module == u or module.startswith(u + ".")), key=len)


def _layer_of(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    return skipped


def _string_table(tree: ast.AST, name: str) -> list[str]:
    """Module names held as strings by a table assigned to ``name`` (dict keys, or tuples' first items)."""
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and isinstance(node.value, ast.Dict):
            out = []
            for key, value in zip(node.value.keys, node.value.values):
                if name == "_PUBLIC":
                    out.append(ast.literal_eval(key))
                else:
                    out.append(ast.literal_eval(value)[0])
            return out
    raise AssertionError(f"no table {name}")


def _resolve(relative: str, package: str) -> str:
    level = len(relative) - len(relative.lstrip("."))
    base = package.split(".")
    base = base[: len(base) - (level - 1)] if level > 1 else base
    rest = relative[level:]
    return ".".join(base + ([rest] if rest else []))


def _imports() -> list[tuple[str, str, tuple[str, ...], int]]:
    """(importer, imported project module, names taken from it, line) for every import."""
    out = []
    for module, path in FILES.items():
        tree = ast.parse(path.read_text(), str(path))
        skipped = _type_checking_nodes(tree)
        package = _package_of(module)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in FILES:
                        out.append((module, alias.name, (), node.lineno))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve("." * node.level + (node.module or ""), package) if node.level else node.module
                if target.split(".")[0] not in ("evalsuite", "dashboard", "pages"):
                    continue
                names = []
                for alias in node.names:
                    if f"{target}.{alias.name}" in FILES:  # `from package import module`
                        out.append((module, f"{target}.{alias.name}", (), node.lineno))
                    else:
                        names.append(alias.name)
                if names:
                    assert target in FILES, f"{module}:{node.lineno}: {target} is no module of the project"
                    out.append((module, target, tuple(names), node.lineno))
    root = ast.parse(FILES["evalsuite"].read_text())
    out += [("evalsuite", _resolve(m, "evalsuite"), (), 0) for m in _string_table(root, "_PUBLIC")]
    table = ast.parse(FILES["evalsuite.cli._subcommands"].read_text())
    out += [("evalsuite.cli", _resolve(m, "evalsuite.cli"), (), 0) for m in _string_table(table, "SUBCOMMANDS")]
    return out


IMPORTS = _imports()


def _edge(importer: str, imported: str) -> str:
    return f"{importer} -> {imported}"


def _graph(skip_exceptions: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for importer, imported, _, _ in IMPORTS:
        if importer != imported and not (skip_exceptions and ("import", _edge(importer, imported)) in EXCEPTIONS):
            graph[importer].add(imported)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(FILES):
        if v not in index:
            visit(v)
    return found


def _layer_breaks() -> list[tuple[str, str, int]]:
    """Imports of a unit that is not below the importer's (exceptions not taken into account)."""
    out = []
    for importer, imported, _, line in IMPORTS:
        a, b = _unit_of(importer), _unit_of(imported)
        if a != b and _layer_of(b) >= _layer_of(a):
            out.append((importer, imported, line))
    return out


def _long_modules() -> list[tuple[str, int]]:
    lengths = [(str(p.relative_to(ROOT)), len(p.read_text().splitlines())) for p in FILES.values()]
    return [(name, n) for name, n in lengths if n > MAX_LINES]


def test_every_module_belongs_to_a_layer():
    units = {_unit_of(m) for m in FILES}
    assert units <= {u for layer in LAYERS for u in layer}


def test_no_import_runs_against_the_layers():
    wrong = [f"{a}:{line} imports {b} ({_unit_of(a)} may not import {_unit_of(b)})"
             for a, b, line in _layer_breaks() if ("import", _edge(a, b)) not in EXCEPTIONS]
    assert not wrong, "\n".join(wrong)


def test_no_import_circle():
    circles = _circles(_graph(skip_exceptions=True))
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_no_private_name_crosses_a_package():
    wrong = []
    for importer, imported, names, line in IMPORTS:
        if _package_of(importer) == _package_of(imported):
            continue
        private_module = any(part.startswith("_") and not part.startswith("__") for part in imported.split("."))
        private_names = [n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
        if private_module or private_names:
            wrong.append(f"{importer}:{line} takes {', '.join(private_names) or 'a private module'} from {imported}")
    assert not wrong, "\n".join(wrong)


def test_evalsuite_never_imports_streamlit():
    wrong = []
    for module, path in FILES.items():
        if not module.startswith("evalsuite"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            wrong += [f"{module}:{node.lineno}" for n in names if n.split(".")[0] == "streamlit"]
    assert not wrong, wrong


def test_no_module_over_600_lines():
    long = [f"{name}: {n} lines" for name, n in _long_modules() if ("lines", name) not in EXCEPTIONS]
    assert not long, "\n".join(long)


def test_every_exception_is_still_needed():
    needed = {("lines", name) for name, _ in _long_modules()}
    needed |= {("import", _edge(a, b)) for a, b, _ in _layer_breaks()}
    for circle in _circles(_graph(skip_exceptions=False)):
        members = set(circle)
        needed |= {("import", _edge(a, b)) for a, b, _, _ in IMPORTS if a in members and b in members}
    stale = sorted(set(EXCEPTIONS) - needed)
    assert not stale, f"exceptions that no longer apply (remove them): {stale}"


def test_the_rules_catch_what_they_are_for():
    # The checks themselves, on made-up imports: a circle, an upward import, a private name.
    graph = {"evalsuite.io.run_files": {"evalsuite.io.isolation"}, "evalsuite.io.isolation": {"evalsuite.io.run_files"}}
    assert _circles(graph) == [["evalsuite.io.isolation", "evalsuite.io.run_files"]]
    assert _layer_of(_unit_of("evalsuite.metrics.ranking")) < _layer_of(_unit_of("evalsuite.judges.llm"))
    assert _unit_of("evalsuite.io._reading") == "evalsuite.io" and _unit_of("evalsuite") == "evalsuite"
    assert _package_of("evalsuite.io._reading") == "evalsuite.io" and _package_of("evalsuite.io") == "evalsuite.io"
