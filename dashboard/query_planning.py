"""Compare's "How many queries" section: from the per-query differences of two systems, the queries
a paired t-test and a randomisation test need to detect a difference of a given size with power 0.8,
and the difference the queries at hand can detect (topic set size design, Sakai 2016), so that "not
significant" can be read as "no difference" or as "too few queries"."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import ui
from evalsuite.errors import EvalSuiteError
from evalsuite.stats import sample_size

POWER = 0.8
#: Past this many queries (by the t-test) the randomisation test's power is not resampled here: each
#: step of its search draws 2,000 sets of that many queries, seconds of a shared server's time, and
#: the two tests agree closely on sums of that many differences.
RANDOMISATION_CAP = 10_000


@st.cache_data(show_spinner=False, max_entries=32)
def _randomisation_queries(differences: tuple[float, ...], difference: float, alpha: float) -> int | None:
    """Cached: the resampled search runs once per set of differences and target."""
    return sample_size.queries_for_power(float(np.std(differences, ddof=1)), difference, alpha, POWER,
                                         test="randomisation", differences=differences)


def plan_table(differences, difference: float, alpha: float) -> tuple[pd.DataFrame, str]:
    """The section's table (one row per test) and its sentence, from per-query differences.

    Parameters
    ----------
    differences : sequence of float
        Per-query differences (system - baseline), undefined ones left out.
    difference : float > 0
        The difference in mean that matters.
    alpha : float in (0, 1)

    Returns
    -------
    (pandas.DataFrame, str)
        Columns ``test``, ``queries for power 0.8`` (text: a whole number, "over a million", or for
        the randomisation test "not resampled past 10,000" when the t-test needs more than
        :data:`RANDOMISATION_CAP`), ``queries now`` (int), ``detectable now`` (text: the t-test's
        minimum detectable difference with the queries at hand, 4 decimals; "t-test only" on the
        randomisation row); the sentence says which case it is.

    Raises
    ------
    EvalSuiteError
        Fewer than 2 differences, or every difference equal (no variance to plan from).
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    if len(d) < 2:
        raise EvalSuiteError("at least 2 queries with a difference are needed to plan from", field="queries",
                             value=len(d))
    sd = float(np.std(d, ddof=1))
    if not sd > 0:
        raise EvalSuiteError("every per-query difference is the same: there is no variance to plan from",
                             field="differences", value=float(d[0]))
    n = len(d)
    t_needed = sample_size.queries_for_power(sd, difference, alpha, POWER)
    r_needed = (_randomisation_queries(tuple(float(x) for x in d), difference, alpha)
                if t_needed is not None and t_needed <= RANDOMISATION_CAP else None)
    detectable = sample_size.detectable_difference(sd, n, alpha, POWER)
    # Text cells: where a figure is not computed the table says why (a missing number shows as "None").
    t_text = str(t_needed) if t_needed is not None else "over a million"
    r_text = (str(r_needed) if r_needed is not None
              else "over a million" if t_needed is None else f"not resampled past {RANDOMISATION_CAP:,}")
    table = pd.DataFrame({"test": ["paired t-test", "randomisation (sign flips)"],
                          "queries for power 0.8": [t_text, r_text],
                          "queries now": [n, n],
                          "detectable now": [f"{detectable:.4f}", "t-test only"]})
    if t_needed is None:
        verdict = f"A difference of {difference:g} would need more than a million queries at this variance."
    elif t_needed <= n:
        verdict = (f"The {n} queries are enough: a true difference of {difference:g} would be significant at "
                   f"alpha = {alpha:g} in {POWER:.0%} of such comparisons, so \"not significant\" speaks against a "
                   "difference that large.")
    else:
        verdict = (f"Too few queries for a difference of {difference:g}: {t_needed} are needed (t-test), {n} were "
                   f"compared; with {n} the t-test detects {detectable:.4g} with power {POWER:g}. \"Not significant\" "
                   "here does not mean \"no difference\".")
    if t_needed is not None and t_needed > RANDOMISATION_CAP:
        verdict += f" The randomisation test's power is not resampled past {RANDOMISATION_CAP:,} queries."
    return table, verdict


def _largest_difference(metric: str) -> float:
    """The largest difference in mean the metric allows (its registry range's width: 1 for nDCG,
    MAP, faithfulness ...), so an impossible target cannot be typed; 1e6 when unbounded or unknown."""
    from evalsuite.metrics import registry
    from evalsuite.metrics.names import parse_metric

    try:
        base = parse_metric(metric).base
    except EvalSuiteError:  # a records column or a name the parser does not know: no bound from the registry
        base = metric
    entry = registry.METRICS.get(base) or registry.GIVEN_SCORES.get(base)
    low, high = getattr(entry, "value_range", (-math.inf, math.inf))
    width = high - low
    return float(width) if math.isfinite(width) and width > 0 else 1e6


def section(differences, metric: str, alpha: float) -> None:
    """Draw the section under Compare's per-query differences of ``metric``."""
    st.subheader("How many queries")
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    observed = abs(float(d.mean())) if len(d) else 0.0
    default = float(f"{observed:.2g}") if observed > 0 else 0.01
    largest = _largest_difference(metric)
    target = ui.bound(st.number_input, f"Difference in mean {ui.plain(metric)} that matters", 1e-4, largest,
                      min(max(default, 1e-4), largest), format="%.4f", key="compare_plan_difference",
                      help="The smallest difference worth detecting (Sakai's minimum detectable difference); "
                           "it starts at the observed difference.")
    try:
        table, verdict = plan_table(d, float(target), alpha)
    except EvalSuiteError as exc:
        st.info(f"No plan: {ui.plain(exc)}")
        return
    st.dataframe(table, hide_index=True, width="stretch", key="compare_plan_table")
    st.caption(verdict + f" From the standard deviation of the {len(d)} per-query differences "
               f"({float(np.std(d, ddof=1)):.4f}); t-test: exact power under the noncentral t; randomisation: "
               "power resampled from the observed differences shifted to the target (Sakai, Topic set size design, "
               "Information Retrieval Journal 2016).")
