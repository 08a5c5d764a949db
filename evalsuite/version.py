"""EvalSuite's version, in one place: the package root, ``pyproject.toml``, the HTML report's stamp
and the workspace store read it from here (so neither imports the package root for it)."""

__version__ = "0.1.0"
