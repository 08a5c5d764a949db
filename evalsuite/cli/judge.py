"""``evalsuite judge RECORDS --judge llm|embedding|lexical ... -o judged.parquet``.

Reads per-request records, shows what the run will take (requests, cached, tokens, cost), runs
the judge with a progress line on stderr (records, requests, cache hits, rate, cost so far, ETA,
and the requests waiting and for how long, every half second even when nothing finishes) and
writes the judged records (Parquet or JSONL, by the output's extension), then a summary: requests
that reached the endpoint and those that could not connect, missing judgements and failed
attempts by cause. Ctrl-C stops in any phase within about 2 s: calls in flight get a moment to
finish, the records judged so far are written, the cache keeps every answered call, and
rerunning the same command with ``--force`` (the output exists then) resumes without repeating one.
The output is never an input, an existing file is replaced only with ``--force``, and it is
written under a temporary name and renamed into place. Endpoint settings come from flags, else
the environment (``EVALSUITE_JUDGE_MODEL``, ``EVALSUITE_JUDGE_BASE_URL``), else a TOML config file
(``[judge]`` table); the API key only from the environment (``EVALSUITE_JUDGE_API_KEY`` or
``OPENAI_API_KEY``).

Exit codes (:mod:`evalsuite.judges.outcome`): 0 done, 2 bad input or settings, 3 stopped by the
budget, 4 too many judgements missing (all, or more than ``--max-missing``, default 10 %),
5 endpoint failing (the circuit breaker opened), 6 the ``--deadline`` passed, 130 interrupted.
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

_CONFIG_KEYS = {"model", "base_url", "judgements", "concurrency", "timeout", "connect_timeout", "max_retries", "max_tokens",
                "price_input", "price_output", "budget", "cache", "metrics", "similarity", "deadline", "breaker",
                "max_missing"}
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
    add_run_limits(parser)
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


def add_run_limits(parser: argparse.ArgumentParser) -> None:
    """The flags that bound a run in time and say when it failed (``judge`` and ``ragas``)."""
    from ..judges.outcome import DEFAULT_MAX_MISSING
    from ..judges.run_control import DEFAULT_BREAKER

    parser.add_argument("--timeout", type=float, help="seconds per request, waiting for the reply (default 30)")
    parser.add_argument("--connect-timeout", type=float, help="seconds to open a connection (default 5)")
    parser.add_argument("--max-retries", type=int, help="retries after 429/5xx/timeouts/connection errors (default 4)")
    parser.add_argument("--breaker", type=int, help=f"stop after this many failed requests in a row, or when no reply "
                        f"comes for 1.5 x the timeout while requests wait: exit 5 (default {DEFAULT_BREAKER})")
    parser.add_argument("--deadline", type=float, help="seconds the run may take; then it stops as on Ctrl-C, writes "
                        "what was judged and exits 6")
    parser.add_argument("--max-missing", type=float, help="share of the judgements asked for that may be missing "
                        f"(default {DEFAULT_MAX_MISSING:g}); more, or all, exits 4")


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
                                                   timeout=settings.get("timeout", 30.0),
                                                   connect_timeout=settings.get("connect_timeout", 5.0)))
        return EmbeddingJudge()
    from ..judges.llm import LLMJudge

    if not settings.get("model"):
        raise EvalSuiteError("the LLM judge needs a model: --model, EVALSUITE_JUDGE_MODEL or the config file",
                             field="model")
    options = {k: settings[k] for k in ("judgements", "concurrency", "timeout", "connect_timeout", "max_retries",
                                        "max_tokens", "price_input", "price_output", "budget", "deadline", "breaker")
               if k in settings}
    return LLMJudge(settings["model"], base_url=settings.get("base_url"), cache=cache, **options)


class _Progress:
    """The run's status on stderr: one line rewritten at most 5 times a second on a terminal, a
    new line every 10 s otherwise (a CI log); it shows the requests waiting and for how long, so
    a run that waits on a slow or silent endpoint shows it."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.last = 0.0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.shown = False

    def __call__(self, done: int, total: int, stats) -> None:
        now = time.perf_counter()
        if now - self.last < (0.2 if self.tty else 10.0) and done < total:
            return
        self.last = now
        elapsed = now - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = f"ETA {(total - done) / rate:.0f} s" if rate > 0 else "ETA -"
        waiting = getattr(stats, "in_flight", 0)
        wait = f" | waiting for {waiting} requests (oldest {stats.waiting_s:.0f} s)" if waiting else ""
        failed = sum(getattr(stats, "failures", {}).values())
        failures = f" | {failed:,} failed attempts" if failed else ""
        line = (f"{done:,}/{total:,} | {stats.judgements:,} judgements ({stats.cache_hits:,} cached){wait}{failures} "
                f"| {rate:.1f}/s | cost {stats.cost:.4f} | {eta}")
        self.stream.write(f"\r{line}   " if self.tty else f"{line}\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\n")


def summary(name: str, result, n_records: int, host: str | None) -> list[str]:
    """The lines that end a run: records judged (those whose every judgement is missing apart),
    requests that reached the endpoint and those that could not connect, missing judgements and
    failed attempts by cause, tokens and cost."""
    from ..judges.outcome import describe

    stats = result.stats
    where = f" to {host}" if host else ""
    unreached = (f" ({stats.unreached:,} more could not connect)" if stats.unreached else "")
    shared = f", {stats.shared:,} by an identical request in flight" if stats.shared else ""
    missing = sum(stats.missing.values())
    judged = result.counts(n_records)
    return [f"evalsuite {name}: {judged}; {stats.judgements:,} judgements "
            f"({stats.cache_hits - stats.shared:,} from the cache{shared}); {stats.rule_decided:,} decided by rule",
            f"evalsuite {name}: {stats.calls:,} requests sent{where}{unreached}, {stats.retries:,} retries; "
            f"failed attempts: {describe(stats.failures)}",
            f"evalsuite {name}: missing judgements: {missing:,}" + (f" ({describe(stats.missing)})" if missing else "")
            + f"; tokens {stats.prompt_tokens:,} in / {stats.completion_tokens:,} out; cost {stats.cost:.4f}"]


def ending(name: str, stats, max_missing: float | None) -> int:
    """Print how the run ended (when not done) and return its exit code."""
    from ..judges.outcome import DEFAULT_MAX_MISSING, run_outcome

    outcome = run_outcome(stats, DEFAULT_MAX_MISSING if max_missing is None else max_missing)
    hints = {"budget": "rerun with a larger --budget and --force (the output exists now) to resume (answered calls "
                       "are cached)",
             "interrupted": "rerun the same command with --force (the output exists now) to resume (answered calls "
                            "are cached)",
             "deadline": "rerun with --force to continue (answered calls are cached)",
             "endpoint failing": "check the endpoint, then rerun with --force to continue (answered calls are cached)",
             "missing": "see the causes above; rerun with --force to ask again for the missing ones"}
    if outcome.status == "budget":
        print(f"evalsuite {name}: stopped before the budget would be passed; {hints['budget']}", file=sys.stderr)
    elif outcome.status != "done":
        why = "" if outcome.message in ("", outcome.status) else f": {outcome.message}"
        print(f"evalsuite {name}: {outcome.status}{why}; {hints[outcome.status]} (exit {outcome.exit_code})",
              file=sys.stderr)
    return outcome.exit_code


def check_max_missing(settings: dict) -> None:
    value = settings.get("max_missing")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1):
        raise EvalSuiteError("must be a share from 0 to 1 (0.1: a tenth of the judgements)", field="max_missing",
                             value=value)


def interrupted(name: str, what: str) -> int:
    print(f"evalsuite {name}: interrupted {what}; nothing was written", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalsuite judge``; returns the exit code."""
    args = build_parser().parse_args(argv)
    from ..io.record_files import read_records
    from ..judges.run_control import deferred_interrupt

    try:
        # --estimate-only writes nothing: an existing output is no reason to refuse it
        check_output(args.output, inputs=[args.records], force=args.force or args.estimate_only)
        settings = _settings(args)
        check_max_missing(settings)
        phase = "while reading the records"
        try:
            records = read_records(args.records, system=args.system, limits=read_limits(args))
            phase = "while the judge was set up"
            judge = _build_judge(args.judge, settings)
            phase = "while the run was estimated"
            print(f"evalsuite judge: {len(records):,} records from {args.records}; estimate: {judge.estimate(records)}",
                  file=sys.stderr)
        except KeyboardInterrupt:
            return interrupted("judge", f"{phase}, before any judgement")
        if args.estimate_only:
            return 0
        progress = _Progress()
        try:
            result = judge.judge(records, progress=progress)  # Ctrl-C is caught inside: the result is partial
        except KeyboardInterrupt:  # between its phases (e.g. while the judged columns are assembled)
            progress.close()
            return interrupted("judge", "while the judged records were assembled")
        # From here Ctrl-C waits (exit 130 after): the judged records are written and summed up, never cut short.
        with deferred_interrupt() as caught:
            progress.close()
            write_records(result.records, args.output, inputs=[args.records], force=args.force)
            print(f"evalsuite judge: wrote {args.output}", file=sys.stderr)
            for line in summary("judge", result, len(records), getattr(judge, "endpoint_host", None)):
                print(line, file=sys.stderr)
    except EvalSuiteError as exc:
        print(f"evalsuite judge: error: {exc}", file=sys.stderr)
        return 2
    if caught:
        result.stats.stopped = "interrupted"
    return ending("judge", result.stats, settings.get("max_missing"))
