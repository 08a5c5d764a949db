"""The examples in the public docstrings run, as doctests, and print what they say."""

import doctest
import importlib
import pkgutil

import pytest

import evalsuite

MODULES = sorted(m.name for m in pkgutil.walk_packages(evalsuite.__path__, "evalsuite.")
                 if m.name not in ("evalsuite.__main__", "evalsuite.io._reader_worker"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed"
