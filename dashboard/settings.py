"""The dashboard's settings from Streamlit's secrets: the one place that reads them.

:func:`_secrets_section` is the ``[evalsuite]`` section of ``.streamlit/secrets.toml`` (the reader
pool, the store and the judge endpoint take their settings from it, after the environment).
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st


def _secrets_section() -> dict:
    """The ``[evalsuite]`` secrets section (empty without a secrets file). Loading the secrets
    first also exposes root-level secrets such as ``EVALSUITE_STORE_URL`` as environment variables."""
    try:
        if not st.secrets.load_if_toml_exists():
            return {}
        section = st.secrets.get("evalsuite")
    except Exception:  # an unreadable secrets file must not stop the dashboard
        return {}
    return {str(k): v for k, v in section.items()} if isinstance(section, Mapping) else {}
