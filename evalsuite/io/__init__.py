"""Reading untrusted files: runs, qrels and per-request records, within limits, in-process or in a
worker process that no file can crash, freeze or exhaust.

- :mod:`~evalsuite.io.limits`: :class:`~evalsuite.io.limits.ReadLimits`, the size, line, column,
  depth and decompression caps every reader checks;
- ``_reading.py`` (bytes in within limits, gzip, format detection, JSON and Parquet with limits)
  and ``_lines.py`` (line maps for messages): what every reader shares;
- :mod:`~evalsuite.io.run_qrels`: :class:`~evalsuite.io.run_qrels.Run` and
  :class:`~evalsuite.io.run_qrels.Qrels`, flat arrays with per-query offsets, and how they are built;
- :mod:`~evalsuite.io.columns`: checked id and value columns, and which column is which (shared by
  the builders and the Dask engine);
- :mod:`~evalsuite.io.run_files`: ``read_run`` and ``read_qrels`` (TREC, CSV/TSV, JSON, JSONL,
  Parquet; the parsers are in ``_read_ranked.py``);
- :mod:`~evalsuite.io.record_files`: ``read_records`` (JSONL, JSON, CSV/TSV, Parquet; RAGAS,
  DeepEval, TruLens, Phoenix, RAGChecker exports) and writing records back;
- :mod:`~evalsuite.io.judgement_files`: judgement tables and human-label files (the calibration
  inputs; :class:`~evalsuite.io.judgement_table.JudgementTable`), through the same reader;
- ``_parquet_size.py``: a Parquet file's decoded size bounded from its page headers;
- :mod:`~evalsuite.io.traces`: ``read_traces`` (OTLP JSON and protobuf, Phoenix's spans export;
  the Phoenix parser is ``_phoenix_spans.py``, the span values all formats share
  ``_span_values.py``), one record per trace;
- :mod:`~evalsuite.io.latency_tables`: ``read_latency_table`` (percentile tables: EvalSuite's,
  LLMPerf summaries, Locust stats), summaries that are never read as requests;
- :mod:`~evalsuite.io.isolation`: the pool of reader processes behind ``isolate=True``
  (the worker program is ``_reader_worker.py``).

The readers are also names of the package root (``evalsuite.read_run``).
"""
