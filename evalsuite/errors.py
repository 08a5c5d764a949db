"""The one exception type EvalSuite raises for bad input, and helpers to build its messages."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["EvalSuiteError", "ReaderStopped", "reading_errors", "not_unicode_error", "shorten"]


def shorten(value: Any, limit: int = 80) -> str:
    """Return ``repr(value)`` cut to ``limit`` characters so a huge field cannot flood a message."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4300-digit printing limit
        text = f"<{type(value).__name__} too large to print>"
    except RecursionError:  # a list or dict nested past the interpreter's recursion limit
        text = f"<{type(value).__name__} nested too deeply to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class EvalSuiteError(ValueError):
    """Bad input to EvalSuite: a file, an argument or a value that cannot be evaluated.

    The message names where the problem is (file, line, field and value when they are known),
    so a person can find and fix it; the same facts are attributes for programs (the dashboard
    shows them as a message, never as a traceback).

    Attributes
    ----------
    source : str or None
        File name (or argument name) the problem was found in.
    line : int or None
        1-based line number in ``source`` (a row number for Parquet, ``line_label="row"``).
    field : str or None
        Column or field name (``"score"``, ``"grade"``, ``"query_id"`` ...).
    value : object or None
        The offending value, as read.
    reason : str
        What is wrong, in plain words.

    Parameters
    ----------
    reason : str
        What is wrong, in plain words; the message ends with it.
    source, line, field, value
        As the attributes above, keyword-only; each is left out of the message when None.
    has_value : bool or None, keyword-only
        True shows ``value`` even when it is None (a null read from the file), False never
        shows it; None (default) shows it when it is not None.
    line_label : str, keyword-only
        Word before the line number: "line" (default) or "row" (Parquet).

    Examples
    --------
    >>> error = EvalSuiteError("a grade must be a finite number", source="qrels.txt", line=3, field="grade",
    ...                        value="high")
    >>> print(error)
    qrels.txt, line 3, field 'grade', value 'high': a grade must be a finite number
    >>> error.line, error.field, error.value, isinstance(error, ValueError)
    (3, 'grade', 'high', True)
    >>> from evalsuite import precision_at_k
    >>> try:
    ...     precision_at_k([{"d1"}], [["d1"]], k=0)
    ... except EvalSuiteError as exc:
    ...     print(exc)
    field 'k', value 0: k must be >= 1
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
        value: Any = None,
        has_value: bool | None = None,
        line_label: str = "line",
    ) -> None:
        self.reason = reason
        self.source = source
        self.line = line
        self.field = field
        self.value = value
        where = ""
        if source is not None:
            where = str(source)
            if line is not None:
                where += f", {line_label} {line}"
        elif line is not None:
            where = f"{line_label} {line}"
        parts = []
        if where:
            parts.append(where)
        if field is not None:
            parts.append(f"field '{field}'")
        if has_value or (has_value is None and value is not None):
            parts.append(f"value {shorten(value)}")
        prefix = ": ".join([", ".join(parts)]) if parts else ""
        super().__init__(f"{prefix}: {reason}" if prefix else reason)


class ReaderStopped(EvalSuiteError):
    """An isolated reader was stopped: it crashed, ran past its time limit or its memory cap.

    Raised by :func:`evalsuite.io.isolation.read_isolated` (and ``read_run(..., isolate=True)``);
    the calling process is unaffected. ``how`` is ``"crashed"``, ``"timeout"`` or ``"memory"``.

    Parameters
    ----------
    reason : str
        What happened and what to try, in plain words.
    how : {"crashed", "timeout", "memory"}, keyword-only
        Why the reader was stopped (also the attribute ``how``); "timeout" also when every
        reader stayed busy past the time limit.
    source : str or None, keyword-only
        The file's name.

    Examples
    --------
    >>> stopped = ReaderStopped("reading took longer than 30 s and was stopped", how="timeout",
    ...                         source="run.trec")
    >>> print(stopped)
    run.trec: reading took longer than 30 s and was stopped
    >>> stopped.how, isinstance(stopped, EvalSuiteError)
    ('timeout', True)
    """

    def __init__(self, reason: str, *, how: str, source: str | None = None) -> None:
        super().__init__(reason, source=source)
        self.how = how


def not_unicode_error(exc: UnicodeEncodeError, source: str | None) -> EvalSuiteError:
    """The error for text holding a lone surrogate (JSON's \\ud800 escapes can produce one)."""
    return EvalSuiteError("text that is not valid Unicode: a lone surrogate (JSON escapes such as \\ud800 can "
                          "produce one); fix the id or text", source=source, field="text",
                          value=exc.object[max(0, exc.start - 20): exc.end + 20])


@contextlib.contextmanager
def reading_errors(source: str | None):
    """Turn what escapes a reader's specific checks into an :class:`EvalSuiteError` naming ``source``.

    The readers name file, line, field and value wherever they can; this is the last resort for
    failures deep inside a library (pyarrow, the json module, zlib) on hostile input, so that a
    caller only ever sees EvalSuiteError for bad input.
    """
    import pyarrow as pa

    try:
        yield
    except EvalSuiteError:
        raise
    except UnicodeDecodeError as exc:
        raise EvalSuiteError(f"bytes that are not UTF-8 text ({exc.reason}); save the file as UTF-8", source=source,
                             field="bytes", value=exc.object[exc.start:exc.end]) from None
    except UnicodeEncodeError as exc:
        raise EvalSuiteError("text that is not valid Unicode: a lone surrogate (JSON escapes such as \\ud800 can "
                             "produce one); fix the id or text", source=source, field="text",
                             value=exc.object[max(0, exc.start - 20): exc.end + 20]) from None
    except RecursionError:
        raise EvalSuiteError("data nested too deeply to read", source=source) from None
    except MemoryError:
        raise EvalSuiteError("not enough memory to read this file", source=source) from None
    except (OverflowError, pa.ArrowException) as exc:
        raise EvalSuiteError(f"could not be read ({type(exc).__name__}: {str(exc)[:200]})", source=source) from None
