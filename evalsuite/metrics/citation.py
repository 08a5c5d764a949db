"""Citation metrics (ALCE): are the answer's statements backed by the passages they cite, and are
the cited passages relevant. Judgement lists and the undefined cases are described in
:mod:`evalsuite.metrics.judgement_lists`.
"""

from __future__ import annotations

import numpy as np

from ..score import Score
from .judgement_lists import _share_metric, share_values

__all__ = [
    "citation_recall",
    "citation_precision",
    "citation_recall_values",
    "citation_precision_values",
]


def citation_recall(statements_cited_supported) -> Score:
    """Citation recall (ALCE): statements fully supported by their citations / statements.

    Parameters
    ----------
    statements_cited_supported : sequence of list of (bool | None), length n_requests
        Per request, per statement of the answer: do its cited passages entail it. None inside
        a list: not judged.

    Returns
    -------
    Score
        Mean over requests with a judged statement; ``.per_query``, shape (n_requests,),
        undefined (NaN) for a request without one; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list.

    References
    ----------
    Gao et al. 2023, "Enabling Large Language Models to Generate Text with Citations" (ALCE),
    EMNLP 2023.

    Examples
    --------
    >>> citation_recall([[True, False, True]])  # 2 of 3 statements supported by their citations
    Score(citation_recall=0.6667, n=1, coverage=1.000)
    """
    return _share_metric("citation_recall", statements_cited_supported, "statements_cited_supported",
                         "statements supported by their citations / statements")


def citation_precision(citations_relevant) -> Score:
    """Citation precision (ALCE): relevant citations / citations.

    Parameters
    ----------
    citations_relevant : sequence of list of (bool | None), length n_requests
        Per request, per citation: is it needed to support its statement. A request without
        citations is undefined (ALCE's script scores it 0).

    Returns
    -------
    Score
        Mean over requests with a judged citation; ``.per_query``, shape (n_requests,), NaN
        where undefined; ``params``: coverage, ``unjudged``.

    Raises
    ------
    EvalSuiteError
        A label that is not True/False/None, a request entry that is not a list.

    References
    ----------
    Gao et al. 2023 (ALCE), EMNLP 2023.

    Examples
    --------
    >>> citation_precision([[True, True, False, True], []])  # 3 of 4 citations; no citations: undefined
    Score(citation_precision=0.7500, n=2, coverage=0.500)
    """
    return _share_metric("citation_precision", citations_relevant, "citations_relevant",
                         "relevant citations / citations")


def citation_recall_values(statements_cited_supported, *, compat: str | None = None) -> np.ndarray:
    """Per-request citation recall (the kernel of ``METRICS["citation_recall"]``).

    >>> citation_recall_values([[True, False, True], [None]]).round(4).tolist()
    [0.6667, nan]
    """
    return share_values(statements_cited_supported, "statements_cited_supported")


def citation_precision_values(citations_relevant, *, compat: str | None = None) -> np.ndarray:
    """Per-request citation precision (the kernel of ``METRICS["citation_precision"]``).

    >>> citation_precision_values([[True, True, False, True], []]).tolist()
    [0.75, nan]
    """
    return share_values(citations_relevant, "citations_relevant")
