"""One chat request to an OpenAI-compatible endpoint, and what its failure means.

:class:`ChatEndpoint` sends one attempt of a request through the ``openai`` client (its own
retries off) with a connect timeout and a per-request timeout, and turns every way it can fail
into one of three outcomes:

- :class:`Failure`: no usable reply, with its *cause* in words a person can act on (``connection
  refused``, ``connect timeout``, ``connection failed``, ``timeout``, ``HTTP 500`` ...), whether
  the request *reached* the server (an HTTP status, or a connection that was opened and then
  stayed silent) and whether it is worth retrying (408, 429, 5xx, timeouts, connection errors);
- :class:`ModeRejected`: HTTP 400/422 to a request with a ``response_format`` (the endpoint does
  not support that output mode; the judge falls back to the next one);
- :class:`~evalsuite.errors.EvalSuiteError`: 401/403 (the key is refused) or 404 (unknown model
  or path), which stop the run, naming the host and status, never the key.

:func:`retry_after` reads a ``Retry-After`` (or ``retry-after-ms``) header; :func:`backoff_wait`
gives the wait before a retry. ``openai`` is imported when an endpoint is first used.
"""

from __future__ import annotations

import os
import random
import threading
import time
from email.utils import parsedate_to_datetime

from ..errors import EvalSuiteError
from ._base import endpoint_host
from .replies import response_record

__all__ = ["ChatEndpoint", "Failure", "ModeRejected", "retry_after", "backoff_wait", "api_key_from_environment",
           "API_KEY_VARIABLES", "CONNECT_TIMEOUT"]

#: Environment variables the key is read from, in order (never from a flag or a file).
API_KEY_VARIABLES = ("EVALSUITE_JUDGE_API_KEY", "OPENAI_API_KEY")
#: Seconds to open a connection (default): a host that does not accept within it is unreachable.
CONNECT_TIMEOUT = 5.0


def api_key_from_environment() -> str | None:
    """The API key from ``EVALSUITE_JUDGE_API_KEY`` or ``OPENAI_API_KEY`` (None when unset).

    Examples
    --------
    >>> import os
    >>> saved = {name: os.environ.pop(name, None) for name in API_KEY_VARIABLES}
    >>> api_key_from_environment() is None
    True
    >>> os.environ["OPENAI_API_KEY"] = "sk-example"
    >>> api_key_from_environment()
    'sk-example'
    >>> for name, value in saved.items():
    ...     _ = os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
    """
    for name in API_KEY_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    return None


class Failure(Exception):
    """An attempt that got no usable reply.

    Attributes
    ----------
    cause : str
        ``connection refused``, ``connect timeout``, ``connection failed``, ``timeout`` (connected,
        no reply in time), ``connection reset``, ``HTTP <status>`` or ``blocked: <why>`` (a
        typed endpoint's address refused by :func:`~evalsuite.judges.endpoints.guarded_http_client`).
    reached : bool
        The request reached the server (it answered with a status, or accepted the connection
        and then said nothing).
    retryable : bool
        Worth another attempt (408, 429, 5xx, timeouts, connection errors).
    wait : float or None
        Seconds the server asked to wait (``Retry-After``).
    """

    def __init__(self, cause: str, *, reached: bool, retryable: bool, wait: float | None = None) -> None:
        super().__init__(cause)
        self.cause, self.reached, self.retryable, self.wait = cause, reached, retryable, wait


class ModeRejected(Exception):
    """HTTP 400/422 to a request asking for an output mode (``response_format``)."""


def retry_after(exc) -> float | None:
    """Seconds from the ``Retry-After`` (or ``retry-after-ms``) header of an error response.

    Examples
    --------
    >>> class Response:
    ...     headers = {"retry-after": "2"}
    >>> class Error:
    ...     response = Response()
    >>> retry_after(Error())
    2.0
    """
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def backoff_wait(attempt: int, asked: float | None, backoff: float, max_backoff: float) -> float:
    """The wait before retry ``attempt + 1``: what the server asked (``Retry-After``) plus up to
    10 % jitter, else exponential backoff with full jitter (uniform in 0 .. backoff x 2^attempt,
    at most ``max_backoff``). Either way at most ``max_backoff`` (a server asking for an hour is
    not waited for an hour: the retries run out instead).

    Examples
    --------
    >>> 0.2 <= backoff_wait(0, 0.2, 0.5, 30) <= 0.22
    True
    >>> 0 <= backoff_wait(3, None, 0.5, 30) <= 4.0
    True
    """
    if asked is not None:
        return min(max_backoff, asked * random.uniform(1.0, 1.1))
    return random.uniform(0, min(max_backoff, backoff * 2 ** attempt))


def _cause_of(exc) -> tuple[str, bool]:
    """The cause of a transport error in words, and whether the request reached the server."""
    inner = exc.__cause__ or exc.__context__
    name = type(inner).__name__ if inner is not None else ""
    text = str(inner or exc)
    if text.startswith("refused: "):  # the typed endpoint's guard (evalsuite.judges.endpoints)
        return "blocked: " + text[len("refused: "):], False
    if "Timeout" in type(exc).__name__ or "Timeout" in name:
        if name in ("ConnectTimeout", "PoolTimeout"):
            return "connect timeout", False
        return "timeout", True
    if name == "ConnectError":
        lowered = text.lower()
        if "refused" in lowered or "errno 111" in lowered or "errno 61" in lowered:
            return "connection refused", False
        return "connection failed", False
    if name in ("RemoteProtocolError", "ReadError", "WriteError"):
        return "connection reset", True
    return "connection failed", False


class ChatEndpoint:
    """An OpenAI-compatible chat endpoint, one attempt at a time (see the module).

    Parameters
    ----------
    model : str
        Model id (only for messages).
    base_url : str or None
        Endpoint; None for the ``openai`` client's default.
    api_key : str or None
        The key (``"no-key"`` is sent when None: local servers need none).
    timeout : float
        Seconds per request: at most this long waiting for any byte of the reply.
    connect_timeout : float
        Seconds to open the connection.
    http_client : httpx client or None
        The ``openai`` client's HTTP client (the dashboard's guarded one for a typed endpoint).
    """

    def __init__(self, model: str, base_url: str | None, api_key: str | None, *, timeout: float,
                 connect_timeout: float = CONNECT_TIMEOUT, http_client=None) -> None:
        self.model = model
        self.base_url = base_url
        self.host = endpoint_host(base_url) or "api.openai.com"
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self._api_key = api_key
        self._http_client = http_client
        self._client = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never shows the key
        return f"ChatEndpoint(host={self.host!r}, model={self.model!r})"

    def prepare(self) -> None:
        """Import ``openai`` and make the client now (seconds on a busy machine), so that the
        time is not taken as the endpoint's silence."""
        self._get_client()

    def _get_client(self):
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError:  # pragma: no cover - openai is in requirements.txt
                    raise EvalSuiteError("the LLM judge needs the openai package: pip install openai",
                                         field="judge", value="llm") from None
                self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key or "no-key",
                                             timeout=openai.Timeout(self.timeout, connect=self.connect_timeout),
                                             max_retries=0, http_client=self._http_client)
            return self._client

    def send(self, request: dict, timeout: float | None = None) -> dict:
        """One attempt; the response as the cache keeps it (:func:`~evalsuite.judges.replies.response_record`).

        Parameters
        ----------
        request : dict
            The chat request (model, messages, response_format, sampling, max_tokens).
        timeout : float or None
            Seconds for this attempt (a run's deadline may leave less than the endpoint's timeout).

        Raises
        ------
        Failure, ModeRejected, EvalSuiteError
            See the module.
        """
        import openai

        client = self._get_client()
        seconds = self.timeout if timeout is None else max(0.05, min(self.timeout, timeout))
        limits = openai.Timeout(seconds, connect=min(self.connect_timeout, seconds))
        started = time.perf_counter()
        try:
            completion = client.chat.completions.create(**request, timeout=limits)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if "response_format" in request:
                raise ModeRejected() from None
            raise Failure(f"HTTP {exc.status_code}", reached=True, retryable=False) from None
        except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as exc:
            what = "does not know the model or path" if exc.status_code == 404 else "refused the API key"
            raise EvalSuiteError(f"the endpoint {what} (HTTP {exc.status_code})", source=self.host,
                                 field="model" if exc.status_code == 404 else "api key",
                                 value=self.model if exc.status_code == 404 else None) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            retryable = status in (408, 429) or status >= 500
            raise Failure(f"HTTP {status}", reached=True, retryable=retryable,
                          wait=retry_after(exc) if retryable else None) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            cause, reached = _cause_of(exc)
            raise Failure(cause, reached=reached, retryable=not cause.startswith("blocked")) from None
        except openai.APIResponseValidationError:
            raise Failure("malformed response", reached=True, retryable=False) from None
        return response_record(completion, (time.perf_counter() - started) * 1000)

    def close(self) -> None:
        """Close the connections this endpoint opened (requests still in flight in other threads
        fail); an HTTP client passed in belongs to the caller and stays open."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None and self._http_client is None:
            try:
                client.close()
            except Exception:  # closing while a request is in flight may raise in httpx; nothing to keep
                pass
