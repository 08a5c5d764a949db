"""Which API key may go to which judge endpoint, and which endpoints a dashboard visitor may type.

The rules of a hosted dashboard (``docs/hosting.md`` has the table of configurations), kept here
without Streamlit so that they are tested without a page and every caller uses the same ones:

- An *operator* key (the ``judge_api_key`` secret, ``EVALSUITE_JUDGE_API_KEY`` or
  ``OPENAI_API_KEY`` in the server's environment) is used only with the *operator* endpoint
  (``judge_base_url`` / ``EVALSUITE_JUDGE_BASE_URL``). Without an operator endpoint no operator
  key is used at all (:attr:`JudgeAccess.unused_key` says so, for a start-up warning).
- A *typed* endpoint (an address a visitor enters on the Judge page) is offered only when the
  operator allows it (``judge_typed_endpoints``; by default only when the server listens on
  loopback, i.e. someone's own machine) and is used only with a key typed in the same session,
  never with an operator key.
- A typed endpoint must be ``http`` or ``https`` without user or password in the address; its
  host may not be link-local or a cloud metadata service, and, unless the operator allows it
  (``judge_allow_private_endpoints``; by default only on loopback), not a loopback, private or
  otherwise non-public address. The check is made on every address the name resolves to, again
  when each connection is opened (:func:`guarded_http_client` connects to the checked address
  itself, so a name that changes its answer cannot slip through), and a redirect to another host
  is never followed.

The CLI and the Python API are the operator's own tools: they take the endpoint and key they are
given and none of this applies to them.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import EvalSuiteError

__all__ = ["JudgeAccess", "Endpoint", "judge_access", "choose_endpoint", "check_endpoint_url", "address_refusal",
           "endpoint_identity", "is_loopback_host", "guarded_http_client", "SETTINGS"]

# Host names of cloud metadata services (AWS, GCP, Azure, Alibaba, Oracle, OpenStack, DigitalOcean).
_METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
                             "instance-data.ec2.internal", "metadata.azure.com", "metadata.internal"})
# Their addresses: the link-local ones (169.254.169.254, 169.254.170.2 ...) are refused as link-local
# already; these are the ones outside 169.254.0.0/16 and fe80::/10.
_METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "100.100.100.200",   # Alibaba Cloud
    "192.0.0.192",       # Oracle Cloud (legacy)
    "168.63.129.16",     # Azure wire server (a public address)
    "fd00:ec2::254",     # AWS IMDS over IPv6
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# The settings of this module: (environment variable, [evalsuite] secret) by name.
SETTINGS: dict[str, tuple[str | None, str | None]] = {
    "base_url": ("EVALSUITE_JUDGE_BASE_URL", "judge_base_url"),
    "model": ("EVALSUITE_JUDGE_MODEL", "judge_model"),
    "api_key": ("EVALSUITE_JUDGE_API_KEY", "judge_api_key"),
    "price_input": ("EVALSUITE_JUDGE_PRICE_INPUT", "judge_price_input"),
    "price_output": ("EVALSUITE_JUDGE_PRICE_OUTPUT", "judge_price_output"),
    "budget": ("EVALSUITE_JUDGE_BUDGET", "judge_budget"),
    "concurrency": ("EVALSUITE_JUDGE_CONCURRENCY", "judge_concurrency"),
    "typed_endpoints": ("EVALSUITE_JUDGE_TYPED_ENDPOINTS", "judge_typed_endpoints"),
    "allow_private": ("EVALSUITE_JUDGE_ALLOW_PRIVATE_ENDPOINTS", "judge_allow_private_endpoints"),
    "hosted": ("EVALSUITE_HOSTED", "hosted"),
    "sign_in": ("EVALSUITE_SIGN_IN", "sign_in"),
}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _flag(value: Any, where: str) -> bool | None:
    """True, False, or None for "auto" / unset."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise EvalSuiteError("must be true, false or auto", source="settings", field=where, value=value)


def _number(value: Any, where: str, whole: bool = False) -> float | int | None:
    if value is None or value == "":
        return None
    try:
        number = int(str(value)) if whole else float(value)
    except (TypeError, ValueError):
        raise EvalSuiteError(f"must be a {'whole number' if whole else 'number'}", source="settings", field=where,
                             value=value) from None
    if number < 0 or number != number:
        raise EvalSuiteError("must be 0 or more", source="settings", field=where, value=value)
    return number


def is_loopback_host(host: str | None) -> bool:
    """Whether a server address or a ``Host`` header names this machine only (loopback).

    Parameters
    ----------
    host : str or None
        ``127.0.0.1``, ``localhost:8501``, ``[::1]:8501``, ``0.0.0.0`` ...; None or empty (a
        Streamlit server with no ``server.address`` listens on every interface) is not loopback.

    Examples
    --------
    >>> [is_loopback_host(h) for h in ("127.0.0.1", "localhost:8501", "[::1]:80", "0.0.0.0", "", None, "app.example")]
    [True, True, True, False, False, False, False]
    """
    if not host:
        return False
    text = host.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.rsplit(":", 1)[0]
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class JudgeAccess:
    """What the operator's settings allow on the Judge page (see :func:`judge_access`).

    Attributes
    ----------
    base_url, model : str or None
        The operator's endpoint and model (None: no operator endpoint).
    price_input, price_output : float
        Price per million input / output tokens of the operator's model (0 when not set).
    budget : float or None
        The most one run may cost.
    concurrency : int or None
        Requests in flight per run.
    typed_endpoints : bool
        Visitors may type an endpoint (used only with a key they type).
    allow_private : bool
        A typed endpoint may be a loopback or private address.
    key_source : str or None
        Where the operator key came from (a setting's name), never the key; None when none is set.
    unused_key : bool
        An operator key is configured but no operator endpoint, so it is never used.
    """

    base_url: str | None = None
    model: str | None = None
    price_input: float = 0.0
    price_output: float = 0.0
    budget: float | None = None
    concurrency: int | None = None
    typed_endpoints: bool = False
    allow_private: bool = False
    key_source: str | None = None
    unused_key: bool = False
    _api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def has_operator_endpoint(self) -> bool:
        return bool(self.base_url)


def judge_access(secrets: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None, *,
                 local: bool = False) -> JudgeAccess:
    """The Judge page's rules from the operator's settings.

    Each setting is read from its environment variable if set, else from the ``[evalsuite]``
    secrets section (:data:`SETTINGS`). The key is ``EVALSUITE_JUDGE_API_KEY``, else the
    ``judge_api_key`` secret, else ``OPENAI_API_KEY``, and it belongs to the operator endpoint:
    with no endpoint it is not used.

    Parameters
    ----------
    secrets : mapping or None
        The ``[evalsuite]`` section of Streamlit's secrets (its keys, e.g. ``judge_base_url``).
    environ : mapping or None
        Environment variables; default ``os.environ``.
    local : bool
        The server listens on loopback and the browser reached it there (someone's own
        machine). Decides the defaults of typed endpoints and private addresses; ``hosted = true``
        and ``sign_in = true`` (a dashboard for a team) make it False whatever the address.

    Returns
    -------
    JudgeAccess

    Raises
    ------
    EvalSuiteError
        A setting that is not a number or not true/false/auto, naming it.

    Examples
    --------
    >>> access = judge_access({"judge_model": "m"}, {"OPENAI_API_KEY": "sk-x"}, local=False)
    >>> access.has_operator_endpoint, access.typed_endpoints, access.unused_key, access.key_source
    (False, False, True, 'OPENAI_API_KEY')
    >>> access = judge_access({"judge_base_url": "https://llm.example/v1", "judge_model": "m",
    ...                        "judge_api_key": "sk-op"}, {}, local=True)
    >>> access.base_url, access.typed_endpoints, access.allow_private, access.unused_key
    ('https://llm.example/v1', True, True, False)
    >>> "sk-op" in repr(access)
    False
    """
    secrets = secrets or {}
    environ = os.environ if environ is None else environ

    def setting(name: str) -> tuple[Any, str]:
        variable, secret = SETTINGS[name]
        if variable and str(environ.get(variable, "")).strip():
            return str(environ[variable]).strip(), variable
        value = secrets.get(secret) if secret else None
        return (value.strip() if isinstance(value, str) else value), f"evalsuite.{secret}"

    base_url, _ = setting("base_url")
    model, _ = setting("model")
    key, key_source = None, None
    for variable, secret in (("EVALSUITE_JUDGE_API_KEY", None), (None, "judge_api_key"), ("OPENAI_API_KEY", None)):
        value = environ.get(variable) if variable else secrets.get(secret)
        if value and str(value).strip():
            key, key_source = str(value).strip(), variable or f"evalsuite.{secret}"
            break
    hosted = _flag(*setting("hosted")) or _flag(*setting("sign_in"))
    local = bool(local) and not hosted
    typed = _flag(*setting("typed_endpoints"))
    private = _flag(*setting("allow_private"))
    numbers = {name: _number(*setting(name)) for name in ("price_input", "price_output", "budget")}
    concurrency = _number(*setting("concurrency"), whole=True)
    return JudgeAccess(
        base_url=str(base_url) if base_url else None, model=str(model) if model else None,
        price_input=float(numbers["price_input"] or 0.0), price_output=float(numbers["price_output"] or 0.0),
        budget=numbers["budget"], concurrency=int(concurrency) if concurrency else None,
        typed_endpoints=local if typed is None else typed, allow_private=local if private is None else private,
        key_source=key_source, unused_key=bool(key) and not base_url, _api_key=key if base_url else None)


@dataclass(frozen=True)
class Endpoint:
    """The endpoint, model and key a judge run uses (from :func:`choose_endpoint`).

    Attributes
    ----------
    origin : {"operator", "typed"}
        Whose endpoint it is.
    base_url : str or None
    model : str
    allow_private : bool
        For a typed endpoint: may it be a private address (connections are checked with it).
    options : dict
        Prices, budget and concurrency of the operator's settings (empty for a typed endpoint:
        the visitor's own, entered on the page).
    """

    origin: str
    base_url: str | None
    model: str
    allow_private: bool = False
    options: dict = field(default_factory=dict)
    api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def guarded(self) -> bool:
        """A typed endpoint: every connection is checked (:func:`guarded_http_client`)."""
        return self.origin == "typed"


def choose_endpoint(access: JudgeAccess, typed_url: str | None = None, typed_model: str | None = None,
                    typed_key: str | None = None, *, resolve: Callable | None = None) -> Endpoint:
    """The endpoint of a judge run: the operator's, or one the visitor typed, with its key.

    A typed endpoint is used only when ``access.typed_endpoints`` allows it, after
    :func:`check_endpoint_url`, and only with ``typed_key`` (the visitor's, possibly None):
    never with the operator's key. Without a typed URL the operator's endpoint is used with the
    operator's key.

    Parameters
    ----------
    access : JudgeAccess
    typed_url, typed_model, typed_key : str or None
        What the visitor entered on the page (None or empty: nothing).
    resolve : callable or None
        ``socket.getaddrinfo``-like resolver for the URL check (tests pass one).

    Returns
    -------
    Endpoint

    Raises
    ------
    EvalSuiteError
        A typed endpoint that is not allowed here or whose address is refused, or no endpoint
        (or no model) at all; the message says which setting the operator can change.

    Examples
    --------
    >>> operator = judge_access({"judge_base_url": "https://llm.example/v1", "judge_model": "op",
    ...                          "judge_api_key": "sk-op"}, {}, local=False)
    >>> chosen = choose_endpoint(operator)
    >>> chosen.origin, chosen.model, chosen.api_key
    ('operator', 'op', 'sk-op')
    >>> local = judge_access({"judge_api_key": "sk-op"}, {}, local=True)
    >>> chosen = choose_endpoint(local, "http://127.0.0.1:8080/v1", "qwen")
    >>> chosen.origin, chosen.api_key is None
    ('typed', True)
    >>> choose_endpoint(operator, "http://127.0.0.1:8080/v1", "qwen")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: field 'endpoint': this dashboard judges only with its operator's endpoint ...
    """
    typed_url = (typed_url or "").strip()
    if typed_url:
        if not access.typed_endpoints:
            raise EvalSuiteError("this dashboard judges only with its operator's endpoint (the operator can allow "
                                 "typed endpoints with judge_typed_endpoints = true)", field="endpoint")
        url = check_endpoint_url(typed_url, allow_private=access.allow_private, resolve=resolve)
        model = (typed_model or "").strip()
        if not model:
            raise EvalSuiteError("name the model of your endpoint", field="model")
        return Endpoint("typed", url, model, allow_private=access.allow_private,
                        api_key=(typed_key or "").strip() or None)
    if not access.has_operator_endpoint:
        raise EvalSuiteError("no judge endpoint: " + (
            "enter your endpoint's address" if access.typed_endpoints else
            "the operator has configured none (judge_base_url)") + (
            "; the API key in the server's settings is used only with an operator endpoint" if access.unused_key
            else ""), field="endpoint")
    if not access.model:
        raise EvalSuiteError("the operator's settings name no judge model (judge_model)", field="model")
    options: dict[str, Any] = {"price_input": access.price_input, "price_output": access.price_output}
    if access.budget:
        options["budget"] = access.budget
    if access.concurrency:
        options["concurrency"] = access.concurrency
    return Endpoint("operator", access.base_url, access.model, options=options, api_key=access._api_key)


def address_refusal(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address, *,
                    allow_private: bool = False) -> str | None:
    """Why a typed endpoint may not connect to ``address`` (None when it may).

    Link-local addresses (169.254.0.0/16, fe80::/10: where cloud metadata services answer),
    the known metadata addresses outside them, unspecified, multicast and reserved addresses are
    always refused; loopback, private (RFC 1918, fc00::/7), shared (100.64.0.0/10) and every other
    non-public address unless ``allow_private``. An IPv4 address inside IPv6 (``::ffff:a.b.c.d``,
    NAT64 ``64:ff9b::/96``) is judged as that IPv4 address.

    Examples
    --------
    >>> address_refusal("169.254.169.254")
    'a link-local address (where cloud metadata services answer)'
    >>> address_refusal("::ffff:169.254.169.254")
    'a link-local address (where cloud metadata services answer)'
    >>> address_refusal("10.1.2.3"), address_refusal("10.1.2.3", allow_private=True)
    ('a private or loopback address', None)
    >>> address_refusal("100.100.100.200", allow_private=True)
    'a cloud metadata service'
    >>> address_refusal("93.184.215.14") is None
    True
    """
    ip = ipaddress.ip_address(address) if not isinstance(address, (ipaddress.IPv4Address, ipaddress.IPv6Address)) \
        else address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _METADATA_ADDRESSES:
        return "a cloud metadata service"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_loopback:  # ::1 is also in IPv6's reserved ::/8
        return None if allow_private else "a private or loopback address"
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved:
        return "not an address of one host"
    if not ip.is_global and not allow_private:
        return "a private or loopback address"
    return None


def _resolve(host: str, port: int, resolve: Callable | None) -> list:
    resolver = resolve or socket.getaddrinfo
    try:
        infos = resolver(host, port, 0, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise EvalSuiteError(f"the endpoint's host cannot be resolved ({exc.__class__.__name__})", field="endpoint",
                             value=host) from None
    return [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]


def check_endpoint_url(url: str, *, allow_private: bool = False, resolve: Callable | None = None) -> str:
    """Check an endpoint address a visitor typed; return it without a trailing slash.

    Parameters
    ----------
    url : str
        ``http(s)://host[:port]/path``.
    allow_private : bool
        Loopback and private addresses are allowed (the operator's setting).
    resolve : callable or None
        ``socket.getaddrinfo``-like; every address the host resolves to must pass
        :func:`address_refusal`.

    Returns
    -------
    str

    Raises
    ------
    EvalSuiteError
        Not http(s), a user or password in the address, no host, a metadata host name, or an
        address that is refused; the message says which (and never echoes a password).

    Examples
    --------
    >>> check_endpoint_url("http://127.0.0.1:8080/v1/", allow_private=True)
    'http://127.0.0.1:8080/v1'
    >>> check_endpoint_url("http://127.0.0.1:8080/v1")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: field 'endpoint', value '127.0.0.1': this endpoint is a private or loopback address ...
    >>> check_endpoint_url("https://user:pw@llm.example/v1")
    Traceback (most recent call last):
    ...
    evalsuite.errors.EvalSuiteError: field 'endpoint': an endpoint address may not hold a user name or password
    """
    text = (url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise EvalSuiteError("not a valid address", field="endpoint", value=text[:200]) from None
    if parts.scheme.lower() not in ("http", "https"):
        raise EvalSuiteError("an endpoint address starts with http:// or https://", field="endpoint", value=text[:200])
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise EvalSuiteError("an endpoint address may not hold a user name or password", field="endpoint")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise EvalSuiteError("the endpoint address names no host", field="endpoint", value=text[:200])
    if host in _METADATA_NAMES:
        raise EvalSuiteError("this endpoint is a cloud metadata service", field="endpoint", value=host)
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    for ip in _resolve(host, port, resolve):
        why = address_refusal(ip, allow_private=allow_private)
        if why:
            shown = host if host == str(ip) else f"{host} ({ip})"
            hint = " (the operator can allow them with judge_allow_private_endpoints = true)" \
                if why.startswith("a private") else ""
            raise EvalSuiteError(f"this endpoint is {why}{hint}", field="endpoint", value=shown)
    return text.rstrip("/")


def endpoint_identity(base_url: str | None) -> str:
    """The endpoint as the judge cache tells endpoints apart: scheme, host, port and path.

    No user, password, query or fragment; the host in lower case; the default port written out;
    None stands for the ``openai`` client's default endpoint (``OPENAI_BASE_URL`` or OpenAI's).

    Examples
    --------
    >>> endpoint_identity("HTTP://LLM.Example/v1/")
    'http://llm.example:80/v1'
    >>> endpoint_identity("https://user:secret@llm.example:8443/v1?key=abc")
    'https://llm.example:8443/v1'
    """
    url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    scheme = parts.scheme.lower()
    port = port or {"https": 443, "http": 80}.get(scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}{parts.path.rstrip('/')}"


# ----------------------------------------------------------------------------------------------
# Connections of typed endpoints.


def _http_modules():
    """The HTTP client modules the installed ``openai`` uses (``httpx2``/``httpcore2`` in openai 3,
    ``httpx``/``httpcore`` before)."""
    try:
        import httpcore2 as httpcore
        import httpx2 as httpx
    except ImportError:
        import httpcore
        import httpx
    return httpx, httpcore


def guarded_http_client(*, allow_private: bool, timeout: float = 60.0, resolve: Callable | None = None):
    """An HTTP client for the ``openai`` client of a typed endpoint (``openai.OpenAI(http_client=...)``).

    Every connection resolves the host, checks every address with :func:`address_refusal` and
    connects to the checked address itself (TLS still verifies the host name), so a DNS answer
    that changes after the page's check cannot reach a refused address; a redirect to another
    host (scheme, name or port) is refused, not followed; proxies from the environment are not
    used (they would hide the address connected to).

    Parameters
    ----------
    allow_private : bool
        As :func:`address_refusal`.
    timeout : float
        Seconds per request.
    resolve : callable or None
        ``socket.getaddrinfo``-like (tests).

    Returns
    -------
    httpx.Client
        ``httpx2.Client`` with the ``openai`` releases that use httpx2.
    """
    httpx, httpcore = _http_modules()

    class CheckedBackend(httpcore.SyncBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            addresses = _resolve(host, port, resolve)
            for ip in addresses:
                why = address_refusal(ip, allow_private=allow_private)
                if why:
                    raise httpcore.ConnectError(f"refused: the endpoint's host is {why}")
            return super().connect_tcp(str(addresses[0]), port, timeout=timeout, local_address=local_address,
                                       socket_options=socket_options)

    def same_host_only(response) -> None:
        if response.is_redirect:
            target = response.next_request.url if response.next_request is not None else None
            source = response.request.url
            if target is None or (target.scheme, target.host, target.port) != (source.scheme, source.host, source.port):
                raise httpx.ConnectError("refused: the endpoint redirected to another host", request=response.request)

    transport = httpx.HTTPTransport(trust_env=False)
    # The default transport's pool with the checking network backend (httpx has no parameter for it).
    transport._pool = httpcore.ConnectionPool(ssl_context=getattr(transport._pool, "_ssl_context", None),
                                              network_backend=CheckedBackend(), max_connections=100,
                                              max_keepalive_connections=20, keepalive_expiry=5.0)
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=True, trust_env=False,
                        event_hooks={"response": [same_host_only]})
