"""Evaluating a run against qrels: :func:`~evalsuite.evaluation.engines.evaluate` and its two engines.

- :mod:`~evalsuite.evaluation.engines`: ``evaluate()``, the entry point; ``engine="local"`` or
  ``engine="dask"``;
- :mod:`~evalsuite.evaluation.local`: the single-machine engine (a keyed join of run and qrels,
  then the ranking kernel of :mod:`evalsuite.metrics.ranking_kernel`);
- :mod:`~evalsuite.evaluation.distributed`: the Dask engine, for runs larger than memory: shards
  read on the workers, a shuffle by query id, the single-machine engine on each partition;
- :mod:`~evalsuite.evaluation.records_dask`: :func:`evalsuite.evaluate_records` and
  :func:`evalsuite.attribute_failures` of records files on Dask, one partition per file, with the
  single-machine numbers;
- :mod:`~evalsuite.evaluation.report`: :class:`~evalsuite.evaluation.report.EvaluationReport` and
  how both engines assemble it from per-query values, so their numbers and words are the same.

``evaluate`` is also a name of the package root (``evalsuite.evaluate``).
"""
