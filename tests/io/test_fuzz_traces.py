"""Fuzzing the trace reader (issue 30): mutated OTLP JSON, OTLP protobuf and Phoenix exports through the
reader pool, as the dashboard reads them. Every input ends as records or an EvalSuiteError naming the
file; never a stopped reader (crash, hang, memory) or an exception of another type.

The bases are real: the SDK's spans (tests/trace_pipeline.py) encoded as the Collector writes them,
and Phoenix's own exports (tests/data/traces). The mutations are those of the other readers'
fuzzing (tests/fuzz_inputs.py: byte flips, truncation, hostile insertions, line edits, gzip).
EVALSUITE_FUZZ_EXAMPLES scales the number of inputs (default 100: 60 per base here, a seeded
slice); ``python benchmarks/fuzz_traces.py`` runs the 20,000-input round.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import evalsuite as es
from evalsuite import EvalSuiteError, ReaderStopped
from evalsuite.io.isolation import ReaderPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fuzz_inputs as fz  # noqa: E402
import trace_pipeline as tp  # noqa: E402

pytestmark = pytest.mark.slow  # reader processes and fuzzing: left out of the fast loop

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
OUTCOMES: collections.Counter = collections.Counter()


def _bases() -> dict[str, tuple[str, bytes]]:
    message = tp.export_request(tp.record_spans("rag-v1"))
    return {
        "otlp-json": ("traces.jsonl", (tp.collector_json(message) + "\n").encode()),
        "otlp-proto": ("traces.pb", tp.collector_proto([message])),
        "phoenix-parquet": ("spans.parquet", (DATA / "phoenix_spans.parquet").read_bytes()),
        "phoenix-csv": ("spans.csv", (DATA / "phoenix_spans.csv").read_bytes()),
        "phoenix-jsonl": ("spans.jsonl", (DATA / "phoenix_spans.jsonl").read_bytes()),
    }


BASES = _bases()
FORMAT = {"otlp-json": "otlp-json", "otlp-proto": "otlp-proto", "phoenix-parquet": "phoenix", "phoenix-csv": "phoenix",
          "phoenix-jsonl": "phoenix"}


@pytest.fixture(scope="module")
def pool():
    readers = ReaderPool(workers=2, timeout_s=20, memory_bytes=2 * 1024**3)
    yield readers
    readers.close()
    print("\ntrace fuzzing: " + ", ".join(f"{k[0]} {k[1]} {n}" for k, n in sorted(OUTCOMES.items())))


def read_in_pool(pool: ReaderPool, base: str, data: bytes, name: str, detect: bool):
    """Records or an EvalSuiteError naming the file; fails the example otherwise."""
    try:
        result = pool.read("traces", data, name, format=None if detect else FORMAT[base])
    except ReaderStopped as stop:
        pytest.fail(f"traces/{base}: the reader process was stopped ({stop.how}): {stop}\ninput {data[:300]!r}",
                    pytrace=False)
    except EvalSuiteError as error:
        message = str(error)
        assert getattr(error, "reason", None) != "the reader failed", (
            f"traces/{base}: an exception that is not an EvalSuiteError escaped the reader: {message}\n"
            f"input {data[:300]!r}")
        assert name in message, f"traces/{base}: the message does not name the file: {message!r}"
        OUTCOMES[(base, "refused")] += 1
        return None
    assert isinstance(result, es.Records)
    table = result.table
    keys = list(zip(table.column("system").to_pylist(), table.column("query_id").to_pylist()))
    assert table.num_rows >= 1 and len(set(keys)) == len(keys)
    for name_ in table.column_names:
        if name_.startswith("latency"):
            values = [v for v in table.column(name_).to_pylist() if v is not None]
            assert all(v >= 0 for v in values), f"traces/{base}: a negative {name_}"
    OUTCOMES[(base, "parsed")] += 1
    return result


@pytest.mark.parametrize("base", list(BASES))
def test_bases_read_as_five_requests(pool, base):
    name, data = BASES[base]
    result = read_in_pool(pool, base, data, name, detect=True)
    assert result is not None and len(result) == 5


@pytest.mark.parametrize("base", list(BASES))
def test_mutated_traces_are_read_or_refused_never_crash(pool, base):
    name, original = BASES[base]

    @settings(max_examples=fz.examples(60), deadline=None, derandomize=True, database=None, print_blob=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.large_base_example])
    @given(fz.mutations(), st.booleans())
    def check(recipe, detect):
        data = fz.apply(original, recipe)
        note(f"base {base}, detect {detect}")
        read_in_pool(pool, base, data, name, detect)

    check()
