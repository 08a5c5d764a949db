"""The dashboard's side of hosting for a team: who the visitor is, sign-in, limits, start-up warnings.

The rules live in :mod:`evalsuite.hosting` (sign-in and per-user limits) and
:mod:`evalsuite.judges.endpoints` (which key goes to which endpoint); this module only reads
Streamlit's secrets, the server's address, the request's headers and ``st.user`` and asks them.

- :func:`gate`: with ``sign_in = true`` every page needs sign-in (``st.login`` against the OpenID
  Connect provider of the ``[auth]`` secrets); a page without it shows only the sign-in button.
  Sign-in switched on but not configured (no ``[auth]`` section, or Authlib missing) shows that
  message and nothing else: the dashboard never opens because a setting is missing.
- :func:`user`: the signed-in user (:func:`evalsuite.hosting.user_id`) or, with sign-in off, the
  browser session; every limit is counted per :func:`user`.
- :func:`is_local`: the server listens on loopback and the browser reached it there with no proxy
  in between (someone's own machine); it decides the defaults of typed judge endpoints.
- :func:`log_startup_warnings`: once per server process, in the app's log: a judge key without a
  judge endpoint (the key is then never used), and an operator endpoint without a daily budget.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import streamlit as st

from evalsuite import hosting as rules
from evalsuite.errors import EvalSuiteError
from evalsuite.judges import endpoints

LOG = logging.getLogger("evalsuite.dashboard")
_FORWARDING_HEADERS = ("x-forwarded-for", "x-forwarded-host", "forwarded", "x-real-ip")


def _section() -> dict:
    from .settings import _secrets_section  # the one place that reads Streamlit's secrets

    return _secrets_section()


def settings() -> rules.HostingSettings:
    """Sign-in and limits of this deployment (environment first, then ``[evalsuite]`` secrets).

    Raises
    ------
    EvalSuiteError
        A setting of the wrong kind (the page shows it; :func:`gate` stops the page then).
    """
    return rules.hosting_settings(_section())


def limits() -> rules.Limits:
    """The per-user limits of this deployment (a bad setting stopped the page in :func:`gate`)."""
    return settings().limits


def is_local() -> bool:
    """The server listens on loopback and this browser reached it there, with no proxy headers."""
    if not endpoints.is_loopback_host(str(st.get_option("server.address") or "")):
        return False
    try:
        headers = {k.lower(): v for k, v in st.context.headers.items()}
    except Exception:  # no request (tests without a browser): not local
        return False
    if any(h in headers for h in _FORWARDING_HEADERS):
        return False
    return endpoints.is_loopback_host(headers.get("host"))


def judge_access() -> endpoints.JudgeAccess:
    """The Judge page's rules for this deployment and this request (raises EvalSuiteError for a bad setting)."""
    return endpoints.judge_access(_section(), os.environ, local=is_local())


@dataclass(frozen=True)
class User:
    """Who the visitor is: ``id`` for limits and ownership, ``label`` for people, ``signed_in``."""

    id: str
    label: str
    signed_in: bool


def _session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def user() -> User:
    """The signed-in user (sign-in on), else this browser session."""
    try:
        sign_in = settings().sign_in
    except EvalSuiteError:
        sign_in = True  # a bad setting never makes a visitor anonymous where sign-in may be meant
    if sign_in and _logged_in():
        info = st.user
        label = str(info.get("email") or info.get("name") or info.get("sub") or "")
        return User(rules.user_id(info.get("iss"), info.get("sub")), label, True)
    return User(rules.session_user_id(_session_id()), "anonymous", False)


def _logged_in() -> bool:
    try:
        return bool(st.user.is_logged_in)
    except Exception:
        return False


def _providers() -> list[str | None]:
    """The providers of the ``[auth]`` secrets: named ``[auth.<name>]`` sections, or the default (None)."""
    try:
        auth = st.secrets.get("auth") if st.secrets.load_if_toml_exists() else None
    except Exception:
        auth = None
    if not auth:
        return []
    named = [str(k) for k, v in auth.items() if hasattr(v, "get") and v.get("client_id")]
    if auth.get("client_id"):
        named.insert(0, None)
    return named


def gate() -> None:
    """Stop the page unless the visitor may see it: signed in when sign-in is on (see the module doc)."""
    try:
        current = settings()
    except EvalSuiteError as exc:
        st.error(f"This dashboard's settings are not valid, so it does not open: {exc}", icon=":material/error:")
        st.stop()
    if not current.sign_in or _logged_in():
        return
    # Every page's address shows the sign-in screen (a hidden navigation, so no page list and no
    # "page not found" for a deep link); after signing in the provider returns to the home page.
    from .constants import PAGES

    def screen(title: str):
        page = lambda: _sign_in_screen(current)  # noqa: E731 (one function per page: Streamlit tells them apart)
        page.__name__ = f"sign_in_{title}"
        return page

    paths = ["sign-in"] + [url_path for _, _, url_path, _ in PAGES]
    pages = [st.Page(screen(path), title="Sign in", url_path=path, default=(i == 0)) for i, path in enumerate(paths)]
    st.navigation(pages, position="hidden").run()
    st.stop()


def _sign_in_screen(current: rules.HostingSettings) -> None:
    from streamlit.auth_util import is_authlib_installed

    providers = _providers()
    if current.sign_in_provider is not None:
        providers = [p for p in providers if p == current.sign_in_provider]
    st.title("EvalSuite")
    if not providers or not is_authlib_installed():
        st.error("Sign-in is required here but is not configured: the operator must add an [auth] section with an "
                 "OpenID Connect provider to the secrets" + ("" if is_authlib_installed() else
                                                              " and install Authlib (pip install 'streamlit[auth]')")
                 + ". Nothing of this dashboard is shown until then.", icon=":material/lock:")
        return
    st.info("Sign in to use this dashboard: your uploads, workspaces and judge runs are kept under your account.",
            icon=":material/lock:")
    for provider in providers:
        label = "Sign in" if provider is None else f"Sign in with {provider}"
        if st.button(label, key=f"sign_in_{provider or 'default'}", type="primary", icon=":material/login:"):
            st.login(provider) if provider is not None else st.login()


def sidebar_identity() -> None:
    """Who is signed in, and the sign-out button (sign-in on only)."""
    try:
        if not settings().sign_in or not _logged_in():
            return
    except EvalSuiteError:
        return
    from .text import plain

    st.caption("Signed in as " + plain(user().label))
    if st.button("Sign out", key="sign_out", icon=":material/logout:"):
        st.logout()


def count_upload(size: int) -> None:
    """Count an upload of ``size`` bytes toward the user's daily total.

    Raises
    ------
    EvalSuiteError
        Over ``upload_mb_per_day`` (the message says how much was used), or a limit is set but
        the store that counts it is unavailable (never read uncounted).
    """
    current = limits()
    if current.upload_bytes_per_day is None:
        return
    from .workspace_store import get_store

    store, error = get_store()
    if store is None:
        raise EvalSuiteError(f"uploads are limited per day here and the store that counts them is unavailable "
                             f"({error}); try again later", field="upload")
    store.record_upload(user().id, int(size), current)


@st.cache_resource(show_spinner=False)
def log_startup_warnings() -> tuple[str, ...]:
    """Warn once per server process, in the app's log, about settings that leave a key unused or
    spending unlimited; returns the warnings (for tests)."""
    warnings = []
    try:
        access = endpoints.judge_access(_section(), os.environ, local=False)
        current = settings()
    except EvalSuiteError as exc:
        warnings.append(f"a hosting setting is not valid: {exc}")
        access, current = None, None
    if access is not None and access.unused_key:
        warnings.append(f"a judge API key is configured ({access.key_source}) but no judge endpoint "
                        "(judge_base_url / EVALSUITE_JUDGE_BASE_URL): the dashboard never sends this key anywhere; "
                        "name the endpoint it belongs to, e.g. judge_base_url = \"https://api.openai.com/v1\"")
    if access is not None and access.has_operator_endpoint and current is not None:
        if current.limits.judge_daily_budget is None and current.limits.judge_daily_budget_total is None:
            warnings.append("the judge endpoint has no daily budget (judge_daily_budget, judge_daily_budget_total): "
                            "every visitor may spend without limit")
        if not (access.price_input or access.price_output):
            warnings.append("the judge endpoint has no prices (judge_price_input, judge_price_output): costs and "
                            "budgets count 0")
    for text in warnings:
        LOG.warning("EvalSuite: %s", text)
    return tuple(warnings)
