"""User text inside markdown: one escaping rule for every label, message, spinner and status.

Streamlit renders markdown in widget labels, ``st.spinner``, ``st.status``, ``st.toast``,
expander and tab titles, alert bodies and captions, so a file or system name such as
``**x**`` or ``![x](http://...)`` must be escaped before it goes into any of them.
"""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")


def plain(text: object) -> str:
    """``text`` with every markdown/HTML special character backslash-escaped, for use inside
    markdown (it then shows exactly as written)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))
