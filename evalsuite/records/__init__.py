"""Per-request records of RAG systems: what a record holds, how it is checked, how it is evaluated.

- :mod:`~evalsuite.records.schema`: the canonical fields, their kinds and Arrow types, the column
  names of other tools (RAGAS, DeepEval, TruLens, Phoenix, RAGChecker) mapped to them;
- :mod:`~evalsuite.records.vendors`: the exports whose shape is not a plain rename (RAGChecker,
  DeepEval test runs, TruLens, Phoenix);
- :mod:`~evalsuite.records.validation`: every value converted to its field's kind, or an error
  naming row, field and value;
- :mod:`~evalsuite.records.table`: :class:`~evalsuite.records.table.Records` and how one is built
  and combined;
- :mod:`~evalsuite.records.evaluation`: :func:`~evalsuite.records.evaluation.evaluate_records`,
  every metric the records' fields allow, per system (corpus values as exact means, the same
  however the records are split);
- :mod:`~evalsuite.records.per_record`: the per-request values (the registry loop) and the scope
  that makes each per-system choice from all the records (one machine, or every Dask partition);
- :mod:`~evalsuite.records.attribution`: the failure stage of each failed request, from its
  judgements (or, for traces, the span where its first error began);
- :mod:`~evalsuite.records.traces`: records built from trace spans (stages, failures, tokens);
- :mod:`~evalsuite.records.pairing`: the key that pairs two systems' requests (query id,
  question text, request index).

Files of records are read (and written) by :mod:`evalsuite.io.record_files`. The public names
are also names of the package root (``evalsuite.Records``, ``evalsuite.evaluate_records``).
"""
