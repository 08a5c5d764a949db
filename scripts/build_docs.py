"""Write docs/metrics.md, docs/conventions.md and the field table of docs/records.md from the metric
registry (evalsuite/metrics/registry.py) and the record schema (evalsuite/records/schema.py).

    python scripts/build_docs.py          # write the files
    python scripts/build_docs.py --check  # exit 1 if one differs from what would be written

tests/metrics/test_registry.py runs the check, so CI fails when the registry changed and the docs did not.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evalsuite.metrics.registry import (  # noqa: E402
    EXPORT_NAMES, GENERAL_CONVENTIONS, GIVEN_SCORES, KINDS, METRICS, READ_EXPORTS,
)
from evalsuite.utils.ids import ID_CONVENTION  # noqa: E402

KIND_TITLES = {"ranking": "Ranking metrics (runs against qrels)", "context": "Context metrics (RAG retrieval)",
               "answer": "Answer metrics (RAG generation)", "operational": "Operational metrics"}


def _range(low: float, high: float) -> str:
    def text(x: float) -> str:
        return "inf" if math.isinf(x) else f"{x:g}"

    return f"[{text(low)}, {text(high)}]"


def _call(metric, vector) -> str:
    args = dict(vector.arguments)
    if metric.kind == "ranking":
        return f"evaluate({args['qrels']!r}, {args['run']!r}, [{args['metric']!r}])"
    extra = {**args, **metric.function_arguments}
    return f"{metric.function.rsplit('.', 1)[-1]}({', '.join(f'{k}={v!r}' for k, v in extra.items())})"


def parameter_letter(metric) -> str:
    """The letter that stands for a metric's real parameter in its accepted names (``r`` for the
    recall level of iprec_at_recall): the first one-letter word of :attr:`Metric.param`."""
    found = re.search(r"\b([a-z])\b", metric.param)
    return found.group(1) if found else "x"


def accepted_names(metric) -> list[str]:
    """The names :func:`evalsuite.parse_metric` accepts for a ranking metric, as the docs write them:
    ``k`` stands for a cutoff, the parameter letter for a real parameter."""
    names: list[str] = []
    if metric.param:
        letter = parameter_letter(metric)
        names += [f"{n}@{letter}" for n in metric.parse_names]
        if metric.default_param is not None:
            names += list(metric.parse_names)
        if metric.trec_param:
            names.append(f"{metric.trec_param}_{letter}")
    elif metric.cutoff:
        names += [f"{n}@k" for n in metric.parse_names]
        if metric.trec_cut:
            names.append(f"{metric.trec_cut}_k")
    else:
        names += list(metric.parse_names)
    if metric.trec_whole:
        names.append(metric.trec_whole)
    return list(dict.fromkeys(names))


def _names_in_tools(m) -> str:
    tools = {**m.aliases, **m.exports}
    return "; ".join(f"{tool}: {', '.join(f'`{n}`' for n in names)}" for tool, names in tools.items())


def _input_line(i) -> str:
    judges = f"; filled by the {' or '.join(i.judges)} judge" if i.judges else ""
    stand_in = f"; with the other entity list, instead of `{i.instead_of}`" if i.instead_of else ""
    optional = "" if i.required else " (optional)"
    return f"  - `{i.column}` (argument `{i.argument}`{optional}): per {i.per}, {i.meaning}{judges}{stand_in}"


def _rag_lines(m) -> list[str]:
    lines = []
    if m.inputs:
        lines.append("- **Reads:**")
        lines += [_input_line(i) for i in m.inputs]
    if m.missing:
        lines.append(f"- **A missing verdict:** {m.missing}" + (f" ({m.missing_source})" if m.missing_source else ""))
    if m.needs is not None:
        lines.append(f"- **A judge needs:** {', '.join(f'`{f}`' for f in m.needs.fields)}; "
                     f"judges: {', '.join(m.needs.judges)}")
    return lines


def metrics_markdown() -> str:
    lines = ["# Metrics", "",
             "Generated from the metric registry (`evalsuite/metrics/registry.py`) by `python scripts/build_docs.py`;",
             "do not edit by hand. Every test vector below is run by `tests/metrics/test_registry.py`, through the",
             "list function, `evaluate` or `evaluate_records`, the dashboard's loader and the Dask engine.",
             "",
             "Names: `k` stands for a cutoff (`ndcg@10`); a metric with a cutoff given without one",
             "(`ndcg`, `map`) is computed over the whole ranked list. A letter after `@` stands for a real",
             "parameter (`iprec_at_recall@0.5`). Every name under **Accepted here** parses (a test reads this",
             "file and parses each one).", ""]
    for kind in KINDS:
        entries = [m for m in METRICS.values() if m.kind == kind]
        lines += [f"- {KIND_TITLES[kind]}: " + ", ".join(f"[{m.title}](#{m.name})" for m in entries)]
    lines.append("")
    for kind in KINDS:
        lines += [f"## {KIND_TITLES[kind]}", ""]
        for m in (m for m in METRICS.values() if m.kind == kind):
            lines += [f'<a id="{m.name}"></a>', f"### {m.title} (`{m.name}`)", "", f"{m.summary[0].upper()}{m.summary[1:]}.", "",
                      f"- **Definition:** {m.formula}",
                      f"- **Computed by:** `{m.function}`"
                      + (f" with {', '.join(f'`{k}={v!r}`' for k, v in m.function_arguments.items())}"
                         if m.function_arguments else "")
                      + f"; per-request kernel `{m.kernel}`"
                      + (f" with {', '.join(f'`{k}={v!r}`' for k, v in m.kernel_arguments.items())}"
                         if m.kernel_arguments else ""),
                      f"- **Better:** {'higher' if m.higher_is_better else 'lower'}; range {_range(*m.value_range)}"]
            if m.cutoff:
                lines.append(f"- **Cutoff:** {m.cutoff}")
            if m.aliases or m.exports:
                lines.append("- **Names in other tools:** " + _names_in_tools(m))
            if m.kind == "ranking" and accepted_names(m):
                lines.append("- **Accepted here:** " + ", ".join(f"`{n}`" for n in accepted_names(m)))
            lines += _rag_lines(m)
            lines.append("- **Conventions:** " + "; ".join(m.conventions))
            lines.append(f"- **Source:** {m.source}")
            lines.append(f"- **Dashboard pages:** {', '.join(m.pages)}")
            lines += ["", "Examples (hand-computed):", ""]
            for vector in m.vectors:
                lines.append(f"- `{_call(m, vector)}` = {vector.expected:.6g}: {vector.arithmetic}")
            lines.append("")
    lines += ["## Scores other tools compute (read as given)", "",
              "A records file may carry these per-request scores (a RAGAS result, a DeepEval test run, a Phoenix",
              "frame); EvalSuite keeps them under the name below and shows them as given, without computing them.",
              "", "| name | what | names in the exports | better |", "|---|---|---|---|"]
    for g in GIVEN_SCORES.values():
        names = "; ".join(f"{tool}: {', '.join(f'`{n}`' for n in names)}" for tool, names in g.exports.items())
        lines.append(f"| `{g.name}` | {g.source} | {names} | {'higher' if g.higher_is_better else 'lower'} |")
    lines.append("")
    return "\n".join(lines)


def conventions_markdown() -> str:
    lines = ["# Conventions where tools disagree", "",
             "Generated from the metric registry (`evalsuite/metrics/registry.py`) by `python scripts/build_docs.py`;",
             "do not edit by hand. `tests/evaluation/test_conventions.py` pins each rule with a hand-computed case.", "",
             "## Every ranking metric", "", "| topic | EvalSuite | who agrees |", "|---|---|---|"]
    lines += [f"| {topic} | {rule} | {who} |" for topic, rule, who in GENERAL_CONVENTIONS]
    lines += ["", "## Each metric", "", "| metric | conventions | source |", "|---|---|---|"]
    lines += [f"| [{m.title}](metrics.md#{m.name}) | {'; '.join(m.conventions)} | {m.source} |" for m in METRICS.values()]
    lines += ["", "## Ids in every format", "", ID_CONVENTION.rstrip("\n")]
    lines.append("")
    return "\n".join(lines)


RECORDS_MD = REPO / "docs" / "records.md"
FIELDS_BEGIN = "<!-- fields: generated by scripts/build_docs.py from the registry and the record schema -->"
FIELDS_END = "<!-- end of the generated fields -->"
EXPORTS_BEGIN = "<!-- export names: generated by scripts/build_docs.py from the registry -->"
EXPORTS_END = "<!-- end of the generated export names -->"


def _feeds(column: str) -> str:
    """The metrics that read a record column (the registry's inputs)."""
    return ", ".join(m.name for m in METRICS.values() if any(i.column == column for i in m.inputs))


# How the docs write each kind of record value (evalsuite.records.schema's kinds).
KIND_TYPES = {"labels": "list[bool or null]", "grades": "list[float 0..1 or null]", "texts": "list[str]",
              "score": "float 0..1", "flag": "bool", "text": "str or null", "latency": "float"}


def fields_markdown() -> str:
    """The table of record fields: the schema's own fields, every column a metric reads (from the
    registry: its meaning, and the metrics and judges it feeds), then the schema's other fields."""
    from evalsuite.records.schema import FIELD_NOTES, FIELD_NOTES_AFTER

    lines = ["| field | type | meaning | feeds |", "|---|---|---|---|"]
    for field, (kind, meaning, extra) in FIELD_NOTES.items():
        lines.append(f"| `{field}` | {kind} | {meaning} | {', '.join(x for x in (extra, _judged(field)) if x)} |")
    seen = set()
    for metric in METRICS.values():
        for i in metric.inputs:
            if i.column in seen:
                continue
            seen.add(i.column)
            meaning = i.meaning if i.per == "request" else f"per {i.per}: {i.meaning}"
            lines.append(f"| `{i.column}` | {KIND_TYPES[i.kind]} | {meaning} | {_feeds(i.column)} |")
    for field, (kind, meaning, extra) in FIELD_NOTES_AFTER.items():
        lines.append(f"| `{field}` | {kind} | {meaning} | {extra} |")
    return "\n".join(lines)


def _judged(field: str) -> str:
    """The metrics whose judges read a record field (their ``needs``)."""
    judged = [m.name for m in METRICS.values() if m.needs is not None and field in m.needs.fields]
    return f"judges of {', '.join(judged)}" if judged else ""


def exports_markdown() -> str:
    """The metric names of other tools' exports that the readers map (the registry's exports)."""
    lines = ["| tool | name in its export | read as |", "|---|---|---|"]
    for tool in READ_EXPORTS:
        for name, canonical in EXPORT_NAMES[tool].items():
            lines.append(f"| {tool} | `{name}` | `{canonical}` |")
    return "\n".join(lines)


def records_markdown() -> str:
    """docs/records.md with its generated parts replaced (the rest is written by hand)."""
    text = RECORDS_MD.read_text(encoding="utf-8")
    for begin, end, build in ((FIELDS_BEGIN, FIELDS_END, fields_markdown),
                              (EXPORTS_BEGIN, EXPORTS_END, exports_markdown)):
        head, found, rest = text.partition(begin)
        _, found_end, tail = rest.partition(end)
        if not (found and found_end):
            raise SystemExit(f"docs/records.md lacks the markers {begin!r} ... {end!r}")
        text = f"{head}{begin}\n{build()}\n{end}{tail}"
    return text


OUTPUTS = {REPO / "docs" / "metrics.md": metrics_markdown, REPO / "docs" / "conventions.md": conventions_markdown,
           RECORDS_MD: records_markdown}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is not current")
    args = parser.parse_args(argv)
    stale = []
    for path, build in OUTPUTS.items():
        text = build()
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.relative_to(REPO))
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("not current (run python scripts/build_docs.py): " + ", ".join(map(str, stale)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
