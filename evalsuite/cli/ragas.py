"""``evalsuite ragas RECORDS -o judged.parquet [--metrics ...] [--aspect name=definition ...]``.

Every metric of the RAGAS reference from records holding question, answer, contexts and
reference: shows which records have the fields each metric needs and the estimate (requests,
tokens, cost), runs :class:`evalsuite.judges.ragas.RagasJudge` with a progress line, writes the
judged records (Parquet or JSONL) and prints each system's means with their coverage. Endpoint
settings as ``evalsuite judge`` (flags, else ``EVALSUITE_JUDGE_MODEL`` / ``EVALSUITE_JUDGE_BASE_URL``,
else the TOML ``[judge]`` table; the key only from the environment), and so are the bounds of a
run (``--timeout``, ``--connect-timeout``, ``--breaker``, ``--deadline``, ``--max-missing``). Ctrl-C
stops within about 2 s in every phase (the LLM judge's, this module's, the embeddings): the records
judged so far are written, every answered call is cached, and rerunning resumes without
repeating one.

Exit codes as ``evalsuite judge`` (:mod:`evalsuite.judges.outcome`): 0 done, 2 bad input or
settings, 3 budget, 4 too many judgements missing, 5 endpoint failing, 6 deadline, 130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import sys

from ..errors import EvalSuiteError
from ._options import add_output, add_read_bounds, read_limits

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    from ..judges.ragas_needs import JUDGED_METRICS

    parser = argparse.ArgumentParser(
        prog="evalsuite ragas",
        description="Every RAGAS metric from question, answer, contexts and reference: judge, write, summarise.")
    parser.add_argument("records", help="records file (JSONL, JSON, CSV/TSV, Parquet; .gz too)")
    add_output(parser, required=True, what="judged records: .parquet (or .jsonl); never an input, an existing file "
               "only with --force")
    parser.add_argument("--metrics", help=f"comma-separated, default all but aspect_critique: {', '.join(JUDGED_METRICS)}")
    parser.add_argument("--aspect", action="append", default=[], metavar="NAME=DEFINITION",
                        help="an aspect critique (repeatable), e.g. --aspect 'concise=Answers in two sentences'")
    parser.add_argument("--strictness", type=int, default=3, help="questions generated per answer (default 3)")
    parser.add_argument("--aspect-strictness", type=int, default=1, help="votes per aspect, odd (default 1)")
    parser.add_argument("--model", help="chat model id; env EVALSUITE_JUDGE_MODEL")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint; env EVALSUITE_JUDGE_BASE_URL")
    parser.add_argument("--embedding-model", help="embeddings endpoint model (default the bundled all-MiniLM-L6-v2)")
    parser.add_argument("--embedding-base-url", help="embeddings endpoint (with --embedding-model)")
    parser.add_argument("--config", help="TOML file with a [judge] table (never the key)")
    parser.add_argument("--concurrency", type=int, help="requests in flight (default 8)")
    parser.add_argument("--max-tokens", type=int, help="output token cap per LLM request (default 1024)")
    parser.add_argument("--price-input", type=float, help="price per million input tokens")
    parser.add_argument("--price-output", type=float, help="price per million output tokens")
    parser.add_argument("--budget", type=float, help="stop before the cost could pass this")
    parser.add_argument("--cache", help="judge cache file")
    parser.add_argument("--compat", choices=("ragas",), help="RAGAS's arithmetic where it differs")
    parser.add_argument("--estimate-only", action="store_true", help="print coverage and estimate, then stop")
    parser.add_argument("--system", help="system name for records without one")
    from .judge import add_run_limits

    add_run_limits(parser)
    add_read_bounds(parser)
    return parser


def _aspects(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, definition = item.partition("=")
        if not sep or not name.strip() or not definition.strip():
            raise EvalSuiteError("an aspect is NAME=DEFINITION", field="--aspect", value=item)
        out[name.strip()] = definition.strip()
    return out


def build_judge(settings: dict, metrics, aspects, strictness, aspect_strictness, embedding_model=None,
                embedding_base_url=None):
    """The :class:`RagasJudge` for command-line (and dashboard) settings."""
    from ..judges import JudgeCache
    from .judge import _build_judge
    from ..judges.embedding import EndpointEmbedder
    from ..judges.ragas import RagasJudge
    from ..metrics.registry import METRICS

    llm = None
    if any("llm" in METRICS[m].needs.judges for m in metrics if m in METRICS and METRICS[m].needs):
        llm = _build_judge("llm", {k: v for k, v in settings.items() if k not in ("judgements", "metrics")})
    embedder = None
    if embedding_base_url:
        if not embedding_model:
            raise EvalSuiteError("an embeddings endpoint needs --embedding-model", field="embedding_model")
        embedder = EndpointEmbedder(embedding_model, base_url=embedding_base_url,
                                    cache=llm.cache if llm is not None else JudgeCache(settings.get("cache")),
                                    timeout=settings.get("timeout", 30.0),
                                    connect_timeout=settings.get("connect_timeout", 5.0))
    return RagasJudge(llm, embedder, metrics=metrics, aspects=aspects, strictness=strictness,
                      aspect_strictness=aspect_strictness)


class _NothingJudged(Exception):
    """No record was finished: the means table is left out."""


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalsuite ragas``; returns the exit code."""
    from .judge import _Progress, _settings, check_max_missing, ending, interrupted, summary
    from ..judges.run_control import deferred_interrupt
    from ..io.record_files import check_output, write_records
    from ..judges.ragas_needs import JUDGED_METRICS, coverage_of
    from ..io.record_files import read_records
    from ..records.evaluation import evaluate_records

    args = build_parser().parse_args(argv)
    try:
        # --estimate-only writes nothing: an existing output is no reason to refuse it
        check_output(args.output, inputs=[args.records], force=args.force or args.estimate_only)
        settings = _settings(args)
        check_max_missing(settings)
        aspects = _aspects(args.aspect)
        metrics = settings.get("metrics") or [m for m in JUDGED_METRICS if m != "aspect_critique" or aspects]
        if aspects and "aspect_critique" not in metrics:
            metrics = [*metrics, "aspect_critique"]
        try:
            records = read_records(args.records, system=args.system, limits=read_limits(args))
            for metric, info in coverage_of(records, metrics).items():
                missing = f"; missing fields: {', '.join(info['missing_fields'])}" if info["missing_fields"] else ""
                print(f"evalsuite ragas: {metric}: needs {', '.join(info['fields'])}; {info['records_with_fields']:,} of "
                      f"{info['records']:,} records have them{missing}", file=sys.stderr)
            judge = build_judge(settings, metrics, aspects, args.strictness, args.aspect_strictness,
                                args.embedding_model, args.embedding_base_url)
            print(f"evalsuite ragas: estimate: {judge.estimate(records)}", file=sys.stderr)
        except KeyboardInterrupt:
            return interrupted("ragas", "before judging")
        if args.estimate_only:
            return 0
        progress = _Progress()
        try:
            result = judge.judge(records, progress=progress)  # Ctrl-C in any phase: the records judged so far
        except KeyboardInterrupt:
            progress.close()
            return interrupted("ragas", "while the judged records were assembled")
        # From here Ctrl-C waits (exit 130 after): the judged records are written and summed up, never cut short.
        with deferred_interrupt() as caught:
            progress.close()
            write_records(result.records, args.output, inputs=[args.records], force=args.force)
            print(f"evalsuite ragas: wrote {args.output}", file=sys.stderr)
            for line in summary("ragas", result, len(records),
                                judge.llm.endpoint_host if judge.llm is not None else None):
                print(line, file=sys.stderr)
        if caught:
            result.stats.stopped = "interrupted"
        try:
            if not result.done:  # a stop before the first record was finished: no column to average
                raise _NothingJudged
            report = evaluate_records(result.records, compat=args.compat)
            print("system\tmetric\tmean\tcoverage")
            for system, scores in report.scores.items():
                for metric, score in scores.items():
                    value = float(score)
                    print(f"{system}\t{metric}\t{'nan' if math.isnan(value) else f'{value:.4f}'}\t"
                          f"{score.params['coverage']:.3f}")
        except KeyboardInterrupt:  # the records are written; only the summary table is cut short
            result.stats.stopped = "interrupted"
        except _NothingJudged:
            print("evalsuite ragas: no record was judged, so there are no means to show", file=sys.stderr)
    except EvalSuiteError as exc:
        print(f"evalsuite ragas: error: {exc}", file=sys.stderr)
        return 2
    return ending("ragas", result.stats, settings.get("max_missing"))
