"""``evalsuite judge RECORDS --judge llm|embedding|lexical ... -o judged.parquet``.

Reads per-request records, shows what the run will take (requests, cached, tokens, cost), runs
the judge with a progress line on stderr (records, requests, cache hits, rate, cost so far, ETA)
and writes the judged records (Parquet or JSONL, by the output's extension). Ctrl-C stops
cleanly: calls in flight finish, the records judged so far are written, and rerunning the same
command with ``--force`` (the output exists then) resumes from the cache. The output is never an
input, an existing file is replaced only with ``--force``, and it is written under a temporary name
and renamed into place. Endpoint settings come from flags, else the environment
(``EVALSUITE_JUDGE_MODEL``, ``EVALSUITE_JUDGE_BASE_URL``), else a TOML config file (``[judge]``
table); the API key only from the environment (``EVALSUITE_JUDGE_API_KEY`` or ``OPENAI_API_KEY``).

Exit codes: 0 done, 2 bad input or settings, 3 stopped by the budget, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib

from ..errors import EvalSuiteError
from ..io.record_files import check_output, write_records
from ._options import add_output, add_read_bounds, read_limits

__all__ = ["build_parser", "main"]

_CONFIG_KEYS = {"model", "base_url", "judgements", "concurrency", "timeout", "max_retries", "max_tokens", "price_input",
                "price_output", "budget", "cache", "metrics", "similarity"}
_ENV = {"model": "EVALSUITE_JUDGE_MODEL", "base_url": "EVALSUITE_JUDGE_BASE_URL"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalsuite judge",
        description="Fill the judgement columns of per-request records with an LLM, embedding or lexical judge.")
    parser.add_argument("records", help="records file (JSONL, JSON, CSV/TSV, Parquet; .gz too)")
    parser.add_argument("--judge", required=True, choices=("llm", "embedding", "lexical"), help="which judge")
    add_output(parser, required=True, what="judged records: .parquet (or .jsonl); never an input, an existing file "
               "only with --force")
    parser.add_argument("--model", help="model id (llm: required; embedding: an endpoint's model, default the "
                        "bundled all-MiniLM-L6-v2); env EVALSUITE_JUDGE_MODEL")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1; "
                        "env EVALSUITE_JUDGE_BASE_URL (the key only from EVALSUITE_JUDGE_API_KEY or OPENAI_API_KEY)")
    parser.add_argument("--config", help="TOML file with a [judge] table of these settings (never the key)")
    parser.add_argument("--judgements", help="llm: comma-separated columns to fill (default all: answer_claims_supported, "
                        "reference_claims_supported, answer_claims_in_reference, reference_claims_in_answer, "
                        "context_useful, context_relevant)")
    parser.add_argument("--concurrency", type=int, help="llm: requests in flight (default 8)")
    parser.add_argument("--timeout", type=float, help="seconds per request (default 60)")
    parser.add_argument("--max-retries", type=int, help="llm: retries after 429/5xx/timeouts (default 4)")
    parser.add_argument("--max-tokens", type=int, help="llm: output token cap per request (default 1024)")
    parser.add_argument("--price-input", type=float, help="llm: price per million input tokens (default 0)")
    parser.add_argument("--price-output", type=float, help="llm: price per million output tokens (default 0)")
    parser.add_argument("--budget", type=float, help="llm: stop before the cost could pass this")
    parser.add_argument("--cache", help="judge cache file (default judge_cache.sqlite3 in EVALSUITE_DATA_DIR, ~/.evalsuite)")
    parser.add_argument("--metrics", help="lexical: comma-separated (bleu, chrf, rouge_l, token_f1, exact_match, fuzzy_ratio)")
    parser.add_argument("--similarity", help="lexical: also write this score to answer_similarity")
    parser.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    parser.add_argument("--system", help="system name for records without one")
    add_read_bounds(parser)
    return parser


def _settings(args) -> dict:
    """Flags, else environment, else the config file."""
    config: dict = {}
    if args.config:
        try:
            with open(args.config, "rb") as handle:
                document = tomllib.load(handle)
        except OSError as exc:
            raise EvalSuiteError(f"cannot read the config file ({exc.strerror})", source=args.config) from None
        except tomllib.TOMLDecodeError as exc:
            raise EvalSuiteError(f"not a TOML file: {exc}", source=args.config) from None
        config = document.get("judge", document)
        if not isinstance(config, dict):
            raise EvalSuiteError("the [judge] entry must be a table", source=args.config, field="judge")
        for key in config:
            if "key" in key.lower() or "token" in key.lower() and key != "max_tokens" or "secret" in key.lower():
                raise EvalSuiteError("the API key is read only from the environment (EVALSUITE_JUDGE_API_KEY or "
                                     "OPENAI_API_KEY), never from a file", source=args.config, field=key)
            if key not in _CONFIG_KEYS:
                raise EvalSuiteError(f"unknown setting; use {', '.join(sorted(_CONFIG_KEYS))}", source=args.config,
                                     field=key, value=config[key])
    out = {}
    for key in _CONFIG_KEYS:
        flag = getattr(args, key, None)
        if flag is not None:
            out[key] = flag
        elif key in _ENV and os.environ.get(_ENV[key]):
            out[key] = os.environ[_ENV[key]]
        elif key in config:
            out[key] = config[key]
    for key in ("judgements", "metrics"):
        if isinstance(out.get(key), str):
            out[key] = [part.strip() for part in out[key].split(",") if part.strip()]
    return out


def _build_judge(kind: str, settings: dict):
    from ..judges import JudgeCache

    if kind == "lexical":
        from ..judges.lexical import LEXICAL_COLUMNS, LexicalJudge

        return LexicalJudge(metrics=settings.get("metrics") or LEXICAL_COLUMNS, similarity=settings.get("similarity"))
    cache = JudgeCache(settings.get("cache"))
    if kind == "embedding":
        from ..judges.embedding import EmbeddingJudge, EndpointEmbedder

        if settings.get("base_url"):
            if not settings.get("model"):
                raise EvalSuiteError("an embeddings endpoint needs --model", field="model")
            return EmbeddingJudge(EndpointEmbedder(settings["model"], base_url=settings["base_url"], cache=cache,
                                                   timeout=settings.get("timeout", 60.0)))
        return EmbeddingJudge()
    from ..judges.llm import LLMJudge

    if not settings.get("model"):
        raise EvalSuiteError("the LLM judge needs a model: --model, EVALSUITE_JUDGE_MODEL or the config file",
                             field="model")
    options = {k: settings[k] for k in ("judgements", "concurrency", "timeout", "max_retries", "max_tokens",
                                        "price_input", "price_output", "budget") if k in settings}
    return LLMJudge(settings["model"], base_url=settings.get("base_url"), cache=cache, **options)


class _Progress:
    """One status line on stderr, rewritten at most 5 times a second."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int, total: int, stats) -> None:
        now = time.perf_counter()
        if now - self.last < 0.2 and done < total:
            return
        self.last = now
        elapsed = now - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        self.stream.write(f"\r{done:,}/{total:,} records | {stats.judgements:,} judgements ({stats.cache_hits:,} cached) "
                          f"| {rate:.1f} records/s | cost {stats.cost:.4f} | ETA {eta:.0f} s   ")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalsuite judge``; returns the exit code."""
    args = build_parser().parse_args(argv)
    from ..io.record_files import read_records

    try:
        # --estimate-only writes nothing: an existing output is no reason to refuse it
        check_output(args.output, inputs=[args.records], force=args.force or args.estimate_only)
        settings = _settings(args)
        records = read_records(args.records, system=args.system, limits=read_limits(args))
        judge = _build_judge(args.judge, settings)
        print(f"evalsuite judge: {len(records):,} records from {args.records}; estimate: {judge.estimate(records)}",
              file=sys.stderr)
        if args.estimate_only:
            return 0
        progress = _Progress()
        try:
            result = judge.judge(records, progress=progress)
        finally:
            progress.close()
        write_records(result.records, args.output, inputs=[args.records], force=args.force)
    except EvalSuiteError as exc:
        print(f"evalsuite judge: error: {exc}", file=sys.stderr)
        return 2
    stats = result.stats
    missing = ", ".join(f"{n} {reason}" for reason, n in sorted(stats.missing.items())) or "none"
    print(f"evalsuite judge: wrote {args.output}: {result.done:,} of {len(records):,} records judged; "
          f"{stats.judgements:,} judgements ({stats.cache_hits:,} from the cache, {stats.calls:,} requests sent, "
          f"{stats.retries:,} retries, {stats.rule_decided:,} decided by rule); missing: {missing}; "
          f"tokens {stats.prompt_tokens:,} in / {stats.completion_tokens:,} out; cost {stats.cost:.4f}",
          file=sys.stderr)
    if stats.stopped == "budget":
        print("evalsuite judge: stopped before the budget would be passed; rerun with a larger --budget and "
              "--force (the output exists now) to resume (answered calls are cached)", file=sys.stderr)
        return 3
    if stats.stopped == "interrupted":
        print("evalsuite judge: interrupted; rerun the same command with --force (the output exists now) to resume "
              "(answered calls are cached)", file=sys.stderr)
        return 130
    return 0
