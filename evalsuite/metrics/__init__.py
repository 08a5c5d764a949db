"""Every metric: the registry of their definitions, name parsing, and the functions that compute them.

- :mod:`~evalsuite.metrics.registry`: :data:`METRICS`, one :class:`~evalsuite.metrics.entry.Metric`
  per metric (names in other tools, direction, range, conventions, source, test vectors); the
  entries are in ``_ranking_entries.py``, ``_trec_eval_entries.py`` and ``_rag_entries.py``;
- :mod:`~evalsuite.metrics.names`: metric names as users write them (``ndcg@10``, ``P_5``,
  ``ndcg_cut.10``) parsed into a :class:`~evalsuite.metrics.names.MetricSpec`;
- :mod:`~evalsuite.metrics.ranking_kernel`: the ranking kernel, every ranking metric vectorised over
  all queries; :mod:`~evalsuite.metrics.ranking`: the list functions (``precision_at_k`` ...);
- :mod:`~evalsuite.metrics.judgement_lists`: per-request judgement lists, what the RAG metrics read;
- :mod:`~evalsuite.metrics.context`, :mod:`~evalsuite.metrics.answer`,
  :mod:`~evalsuite.metrics.correctness`, :mod:`~evalsuite.metrics.citation`: the RAG metrics
  (RAGAS, ARES, ALCE), each with its per-request kernel (``<metric>_values``);
- :mod:`~evalsuite.metrics.functions`: each entry's list function and kernel, resolved from the
  dotted paths the entries give;
- :mod:`~evalsuite.metrics.operational`: latency, task success, failure stages.

The public functions are also names of the package root (``evalsuite.ndcg_at_k``).
"""
