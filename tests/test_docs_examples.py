"""The README's and docs/*.md's code examples run, so the docs cannot drift from the code (the
fast loop checks that every example parses and names modules, functions and subcommands that
exist; the slow test runs them all, as CI does).

Every fenced ``python`` block runs, in order, in one namespace per document: a block with ``>>>``
prompts as a doctest (its outputs must match), any other block as a script; a script followed by
a plain fence (```` ``` ```` with no language) must print those lines, in order (the README's
comparison table: a changed p-value fails here). Every ``evalsuite ...`` / ``python -m evalsuite
...`` line of a ``bash`` block runs too and must exit 0 (``evalsuite compare``: 0 or 1, its
verdict). The examples run in a scratch folder holding the files they name (``records.jsonl``,
``qrels.trec`` ..., made from ``sample_data/``) and ``sample_data`` itself; the local endpoint the
docs use (``http://127.0.0.1:8080/v1``) is a loopback test server that answers every prompt with
a scripted reply.

A block preceded by ``<!-- not run: reason -->`` cannot run here (a Slurm or Kubernetes cluster, a
container runtime): it must still parse, and every ``evalsuite`` module and name it imports or
uses as ``es.<name>`` must exist, so a moved module fails here even then.
"""

from __future__ import annotations

import ast
import doctest
import io
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

import evalsuite as es
from judge_server import JudgeServer, scripted_reply


REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ENDPOINT = "http://127.0.0.1:8080/v1"
_FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[A-Za-z]*)\s*$")
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>.+?)\s*-->")


@dataclass
class Block:
    lang: str
    code: str
    line: int
    not_run: str | None
    output: str | None = None  # a plain fence right after it: what it prints


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a markdown file, with the output block that follows a script."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, lang, start = len(match["indent"]), match["lang"], i
        body = []
        i += 1
        while i < len(lines) and not _FENCE.match(lines[i]):
            body.append(lines[i][indent:])
            i += 1
        i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = _NOT_RUN.search(before)
        code = "\n".join(body) + "\n"
        if lang == "" and found and found[-1].lang == "python" and found[-1].output is None \
                and found[-1].line > start - 12:
            found[-1].output = code
            continue
        found.append(Block(lang, code, start + 1, marker["why"] if marker else None))
    return found


def _scratch(folder: Path) -> None:
    """The files the examples name, made from the sample data."""
    samples = REPO / "sample_data"
    (folder / "sample_data").symlink_to(samples)
    cranfield = samples / "cranfield"
    shutil.copy(cranfield / "qrels.trec", folder / "qrels.trec")
    for name, source in (("baseline.trec", "run_bm25.trec"), ("candidate.trec", "run_bm25l.trec"),
                         ("other.trec", "run_bm25l.trec")):
        shutil.copy(cranfield / source, folder / name)
    import gzip

    lines = (cranfield / "run_bm25.trec").read_bytes().splitlines(keepends=True)
    for part in range(2):
        with gzip.open(folder / f"run.{part}.trec.gz", "wb") as handle:
            handle.writelines(lines[part::2])
    rag = [line for line in (samples / "rag" / "ragtruth_qa.jsonl").read_text(encoding="utf-8").splitlines()][:4]
    (folder / "records.jsonl").write_text("\n".join(rag) + "\n", encoding="utf-8")
    (folder / "answers.jsonl").write_text("\n".join(rag[:2]) + "\n", encoding="utf-8")


def _reply(body: dict) -> str:
    """The scripted judge's reply; for a prompt it has no script for (the RAGAS judge's own), a
    well-formed yes (a reply the prompt cannot use is a missing judgement, counted, never a crash)."""
    import json

    try:
        return scripted_reply(body)
    except (StopIteration, KeyError, IndexError):
        return json.dumps({"verdict": "yes", "questions": ["What does the answer say?"], "entities": ["Paris"]})


@pytest.fixture(autouse=True)
def bare_main():
    """The docs start Dask clusters, whose workers are spawned and re-run the file of
    sys.modules["__main__"]: after the Streamlit AppTests in the same session that is app.py, and
    the workers die ("Nanny failed to start"). A bare __main__ while an example runs."""
    import types

    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = saved


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    _scratch(folder)
    with JudgeServer(reply=_reply) as server:
        saved = {k: os.environ.get(k) for k in ("EVALSUITE_DATA_DIR", "EVALSUITE_STORE_URL")}
        os.environ["EVALSUITE_DATA_DIR"] = str(folder / "store")
        os.environ.pop("EVALSUITE_STORE_URL", None)
        cwd = Path.cwd()
        os.chdir(folder)
        try:
            yield folder, server.base_url
        finally:
            os.chdir(cwd)
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def _source(code: str) -> str:
    """A block's Python source (a doctest's statements without prompts and outputs)."""
    if ">>>" not in code:
        return code
    return "".join(example.source for example in doctest.DocTestParser().get_examples(code))


def _names_used(code: str) -> list[str]:
    """``evalsuite`` modules and names a block imports, and ``es.<name>`` it uses."""
    tree = ast.parse(code)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "evalsuite":
            out += [f"{node.module}:{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [f"{a.name}:" for a in node.names if a.name.split(".")[0] == "evalsuite"]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "es":
            out.append(f"evalsuite:{node.attr}")
    return out


def _check_names(code: str) -> None:
    import importlib

    for item in _names_used(code):
        module, _, name = item.partition(":")
        imported = importlib.import_module(module)
        if name:
            assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), item


def _commands(code: str) -> list[list[str]]:
    """The ``evalsuite`` commands of a bash block (continuation lines joined, comments and output
    redirections dropped), as argument lists."""
    import shlex

    out = []
    for line in re.sub(r"\\\n\s*", " ", code).splitlines():
        try:
            parts = shlex.split(line, comments=True)
        except ValueError:
            continue
        if ">" in parts:
            parts = parts[:parts.index(">")]
        if parts[:1] == ["evalsuite"] or parts[:3] == ["python", "-m", "evalsuite"] or (
                parts[:2] == ["python", "-c"] and len(parts) > 2 and "evalsuite" in parts[2]):
            out.append(parts)
    return out


def _run_python(block: Block, namespace: dict, endpoint: str, where: str) -> None:
    code = block.code.replace(ENDPOINT, f"{endpoint}")
    if ">>>" in code:
        test = doctest.DocTestParser().get_doctest(code, namespace, where, where, block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report = io.StringIO()
        runner.run(test, out=report.write, clear_globs=False)
        namespace.update(test.globs)
        assert runner.failures == 0, report.getvalue()
        return
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(code, where, "exec"), namespace)
    if block.output is not None:
        expected = [line.rstrip() for line in block.output.strip("\n").splitlines()]
        lines = [line.rstrip() for line in printed.getvalue().splitlines()]
        starts = [i for i, line in enumerate(lines) if line == expected[0]]
        assert any(lines[i:i + len(expected)] == expected for i in starts), \
            f"{where} printed:\n{printed.getvalue()}\nnot the lines the docs show:\n{block.output}"


def _run_bash(block: Block, endpoint: str, where: str) -> None:
    for parts in _commands(block.code):
        parts = [p.replace(ENDPOINT, endpoint) for p in parts]
        args = [sys.executable, *(["-m", *parts] if parts[0] == "evalsuite" else parts[1:])]
        result = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        allowed = (0, 1) if args[1:4] == ["-m", "evalsuite", "compare"] else (0,)
        assert result.returncode in allowed, f"{where}: {' '.join(parts)}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_example_parses_and_names_what_exists(path):
    """The fast part (every run of the fast loop): a moved module or a renamed function fails here."""
    for block in blocks(path):
        if block.lang == "python":
            _check_names(_source(block.code))
        elif block.lang == "bash":
            for parts in _commands(block.code):
                if parts[0] == "evalsuite" or parts[:2] == ["python", "-m"]:
                    subcommand = parts[1] if parts[0] == "evalsuite" else parts[3] if len(parts) > 3 else ""
                    from evalsuite.cli._subcommands import SUBCOMMANDS

                    assert subcommand in SUBCOMMANDS or not subcommand.isidentifier() or subcommand.startswith("-"), \
                        f"{path.name}:{block.line}: evalsuite has no subcommand {subcommand!r}"


@pytest.mark.slow  # about 35 s: the embedding model, judge runs against the loopback server, a Dask cluster
@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_examples_of_the_docs_run(path, scratch):
    _, endpoint = scratch
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for block in blocks(path):
        where = f"{path.relative_to(REPO)}:{block.line}"
        if block.lang == "python":
            _check_names(_source(block.code))
            if block.not_run is None:
                _run_python(block, namespace, endpoint, where)
                ran += 1
        elif block.lang == "bash" and block.not_run is None:
            _run_bash(block, endpoint, where)
            ran += bool(_commands(block.code))
    assert ran or not any(b.lang in ("python", "bash") and b.not_run is None for b in blocks(path))


def test_the_harness_finds_the_readmes_comparison_output():
    readme = blocks(REPO / "README.md")
    compare = next(b for b in readme if b.lang == "python" and "es.compare(" in b.code)
    assert compare.output is not None and "recall@100" in compare.output
    assert es.EvalSuiteError  # the names the harness resolves come from the package
