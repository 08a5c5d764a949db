"""Write docs/metrics.md and docs/conventions.md from the metric registry (evalsuite/metrics/registry.py).

    python scripts/build_docs.py          # write both files
    python scripts/build_docs.py --check  # exit 1 if either differs from what would be written

tests/metrics/test_registry.py runs the check, so CI fails when the registry changed and the docs did not.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evalsuite.metrics.registry import GENERAL_CONVENTIONS, KINDS, METRICS  # noqa: E402
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


def metrics_markdown() -> str:
    lines = ["# Metrics", "",
             "Generated from the metric registry (`evalsuite/metrics/registry.py`) by `python scripts/build_docs.py`;",
             "do not edit by hand. Every test vector below is run by `tests/metrics/test_registry.py`.", ""]
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
                         if m.function_arguments else ""),
                      f"- **Better:** {'higher' if m.higher_is_better else 'lower'}; range {_range(*m.value_range)}"]
            if m.cutoff:
                lines.append(f"- **Cutoff:** {m.cutoff}")
            if m.aliases:
                lines.append("- **Names in other tools:** " + "; ".join(
                    f"{tool}: {', '.join(f'`{n}`' for n in names)}" for tool, names in m.aliases.items()))
            if m.parse_names:
                lines.append("- **Accepted here:** " + ", ".join(f"`{n}@k`" for n in m.parse_names)
                             + (f", `{m.trec_cut}_k`" if m.trec_cut else "") + (f", `{m.trec_whole}`" if m.trec_whole else ""))
            lines.append("- **Conventions:** " + "; ".join(m.conventions))
            lines.append(f"- **Source:** {m.source}")
            lines.append(f"- **Dashboard pages:** {', '.join(m.pages)}")
            lines += ["", "Examples (hand-computed):", ""]
            for vector in m.vectors:
                lines.append(f"- `{_call(m, vector)}` = {vector.expected:.6g}: {vector.arithmetic}")
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


OUTPUTS = {REPO / "docs" / "metrics.md": metrics_markdown, REPO / "docs" / "conventions.md": conventions_markdown}


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
