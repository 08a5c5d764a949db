"""Small helpers every package of EvalSuite shares; nothing here knows a metric or a file format.

- :mod:`~evalsuite.utils.checks`: argument checks (``rel_level``, cutoffs, ``compat``), rank and
  group positions of flat arrays, and spreadsheet-safe CSV (formula prefixes defused);
- :mod:`~evalsuite.utils.exact_sum`: exact sums of floats, so a mean does not depend on how the
  values were split (records on Dask);
- :mod:`~evalsuite.utils.keys`: 64-bit keys of id strings, for joins and duplicate checks;
- :mod:`~evalsuite.utils.parallel`: one shared thread pool for work that releases the GIL.
"""
