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


# Markers by file (registered in pyproject.toml): `python -m pytest -m "not browser and not slow"`
# is the fast local loop; CI runs everything.
_REFERENCE_FILES = {"test_reference_tools.py", "test_trec_eval_fixtures.py", "test_properties.py"}
_SLOW_FILES = {"test_fuzz_readers.py", "test_isolation.py", "test_hardening.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath))
        if "browser" in path.parts:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)
        if path.name in _REFERENCE_FILES:
            item.add_marker(pytest.mark.reference)
        if path.name in _SLOW_FILES:
            item.add_marker(pytest.mark.slow)
