"""Shared paths and helpers for the test suite."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
TREC = DATA / "trec_eval"
SAMPLE = ROOT / "sample_data"
CRANFIELD = SAMPLE / "cranfield"


def read_trec_eval_output(path: Path) -> dict[tuple[str, str], str]:
    """trec_eval's text output as {(measure, query or 'all'): value text}."""
    out = {}
    for line in path.read_text().splitlines():
        measure, query, value = (part.strip() for part in line.split("\t"))
        out[(measure, query)] = value
    return out


@pytest.fixture(scope="session")
def trec_dir() -> Path:
    return TREC
