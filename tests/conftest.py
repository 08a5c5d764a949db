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


# Markers (registered in pyproject.toml) are declared in each test file (``pytestmark = ...``), so
# a renamed or moved file keeps them: `python -m pytest -m "not browser and not slow"` is the fast
# local loop; CI runs everything. A browser test without its marker would slip into the fast loop,
# so that is an error here rather than a silent default.
def pytest_collection_modifyitems(config, items):
    unmarked = sorted({item.nodeid.split("::")[0] for item in items
                       if "browser" in Path(str(item.fspath)).parts and item.get_closest_marker("browser") is None})
    if unmarked:
        raise pytest.UsageError(f"browser tests without pytestmark = pytest.mark.browser: {', '.join(unmarked)}")
