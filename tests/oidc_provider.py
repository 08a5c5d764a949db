"""A local OpenID Connect provider on 127.0.0.1 for the sign-in tests and the hosted load benchmark.

It is ``oidc-provider-mock`` (PyPI; a test provider built on Authlib: discovery, JWKS, authorization
code flow with PKCE, ID tokens) served by werkzeug on a loopback port, never an outside service.
Any client id and secret are accepted; on its authorization form the test types the subject
(``sub``) to sign in as. :func:`streamlit_secrets` writes the secrets file a dashboard needs to
sign in against it (``[auth]`` for ``st.login``, ``[evalsuite]`` for EvalSuite's own settings).
"""

from __future__ import annotations

import secrets
import threading
from pathlib import Path

import werkzeug.serving


class OIDCProvider:
    """``with OIDCProvider() as idp: idp.issuer`` (``http://127.0.0.1:<port>``)."""

    def __enter__(self) -> "OIDCProvider":
        import logging

        import oidc_provider_mock

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = werkzeug.serving.make_server("127.0.0.1", 0, oidc_provider_mock.app(), threaded=True)
        self.port = self._server.server_port
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.metadata_url = f"{self.issuer}/.well-known/openid-configuration"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def write_secrets(path: Path, sections: dict[str, dict]) -> Path:
    """Write a secrets.toml of ``{section: {key: value}}`` (strings, numbers, booleans; a dict value
    is the table ``[section.key]``)."""
    lines = []
    for section, values in sections.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in values.items() if not isinstance(value, dict))
        lines.append("")
        for key, table in ((k, v) for k, v in values.items() if isinstance(v, dict)):  # [section.key] tables
            lines.append(f"[{section}.{key}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
            lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def auth_section(provider: OIDCProvider, app_port: int) -> dict:
    """The ``[auth]`` secrets of a dashboard on ``app_port`` signing in against ``provider``."""
    return {"redirect_uri": f"http://127.0.0.1:{app_port}/oauth2callback", "cookie_secret": secrets.token_hex(32),
            "client_id": "evalsuite-test", "client_secret": secrets.token_hex(16),
            "server_metadata_url": provider.metadata_url}


def sign_in(tab, subject: str, timeout: float = 60.0) -> None:
    """On a dashboard page showing the sign-in button: sign in as ``subject`` on the provider's form."""
    tab.get_by_role("button", name="Sign in").click()
    tab.wait_for_selector('input[name="sub"]', timeout=timeout * 1000)
    tab.fill('input[name="sub"]', subject)
    tab.get_by_role("button", name="Authorize").click()
    tab.wait_for_selector('[data-testid="stSidebarNav"]', timeout=timeout * 1000)


class OIDCProviderProcess:
    """The same provider in a process of its own (``python tests/oidc_provider.py PORT``), for a
    benchmark whose own process is busy driving browsers: the provider then answers in time."""

    def __enter__(self) -> "OIDCProviderProcess":
        import socket
        import subprocess
        import sys
        import time
        import urllib.request

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self._proc = subprocess.Popen([sys.executable, __file__, str(self.port)], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.metadata_url = f"{self.issuer}/.well-known/openid-configuration"
        for _ in range(200):
            try:
                with urllib.request.urlopen(self.metadata_url, timeout=2):
                    return self
            except OSError:
                time.sleep(0.1)
        self._proc.kill()
        raise RuntimeError("the OpenID provider did not start")

    def __exit__(self, *exc) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=10)


if __name__ == "__main__":
    import sys

    import oidc_provider_mock

    werkzeug.serving.make_server("127.0.0.1", int(sys.argv[1]), oidc_provider_mock.app(), threaded=True).serve_forever()
