"""Statistics: is a difference between systems real, and how far to trust a judge.

- :mod:`~evalsuite.stats.paired`: paired tests on per-query differences (randomization, t-test,
  Wilcoxon, Tukey HSD), effect size, win/tie/loss, p-value corrections;
- :mod:`~evalsuite.stats.resampling`: sign-flip tests and bootstrap intervals of many systems and
  metrics at once (blocks of resamples, vectorised);
- :mod:`~evalsuite.stats.comparison`: ``compare``, ``compare_per_query``, ``compare_records``:
  every system against a baseline on every metric;
- :mod:`~evalsuite.stats.comparison_report`: :class:`~evalsuite.stats.comparison_report.ComparisonReport`,
  their result as a table, text, CSV, LaTeX and a CI verdict;
- :mod:`~evalsuite.stats.judgement_tables`: what a judge and a person said about each item;
- :mod:`~evalsuite.stats.intervals`: intervals inside the range of what they estimate (shares,
  kappa);
- :mod:`~evalsuite.stats.agreement`: a judge's agreement with human labels (accuracy, kappa,
  rank correlation, reliability), with intervals;
- :mod:`~evalsuite.stats.ppi`: prediction-powered means of a judged metric, corrected with a few
  human labels; :mod:`~evalsuite.stats.system_means`: the same per system of a judgement table;
- :mod:`~evalsuite.stats.active`: which request to label next (active statistical inference) and
  the estimate from labels chosen that way;
- :mod:`~evalsuite.stats.label_files`: human labels as CSV or JSONL files;
- :mod:`~evalsuite.stats.sample_size`: how many labels for an interval width, how many queries
  for a test's power (topic set size design).

``compare`` and the other public functions of the comparison are also names of the package root.
"""
