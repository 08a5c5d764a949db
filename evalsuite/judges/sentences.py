"""Sentences of a text as RAGAS splits them (context relevancy judges each sentence of the contexts)."""

from __future__ import annotations

import threading

__all__ = ["split_sentences"]

_SEGMENTER = None
_SEGMENTER_LOCK = threading.Lock()


def split_sentences(text: str) -> list[str]:
    """Sentences of a text, by pysbd's English rules (what RAGAS segments with), stripped, empty ones dropped.

    >>> split_sentences("Paris is the capital of France. It has 2.1 million inhabitants. ")
    ['Paris is the capital of France.', 'It has 2.1 million inhabitants.']
    """
    global _SEGMENTER
    with _SEGMENTER_LOCK:
        if _SEGMENTER is None:
            import pysbd

            _SEGMENTER = pysbd.Segmenter(language="en", clean=False)
        sentences = _SEGMENTER.segment(text)
    return [s.strip() for s in sentences if s.strip()]
