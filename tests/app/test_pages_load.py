"""Every dashboard page, with the sample data and without data."""

from __future__ import annotations

import pytest

from .helpers import PAGES, TITLES, open_page, texts


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_with_sample_data(page):
    at = open_page(page)
    assert texts(at.title) == [TITLES[page]]
    assert not at.error, texts(at.error)


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_data(page):
    at = open_page(page, clear=True)
    assert texts(at.title) == [TITLES[page]]
    assert not at.error, texts(at.error)
    if page != "data":
        assert at.info, "an empty page says what is missing"
        assert not at.dataframe
