"""User text inside markdown: one escaping rule for every label, message, spinner and status.

Streamlit renders markdown in widget labels, ``st.spinner``, ``st.status``, ``st.toast``,
expander and tab titles, alert bodies and captions, so a file or system name such as
``**x**`` or ``![x](http://...)`` must be escaped before it goes into any of them.

Backslash escapes are not enough for links: Streamlit's markdown (remark-gfm) turns
``http://...``, ``https://...``, ``www.`` and ``name@domain`` into live links by searching the
text *after* escapes are resolved. :func:`plain` therefore also puts an invisible WORD JOINER
(U+2060) inside each of those patterns, so no link can form and the text still reads as written.
"""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")

# U+2060 WORD JOINER: zero width, no line break opportunity, not whitespace or punctuation, so
# remark-gfm's literal-autolink patterns (https?://, www., and the @ of an e-mail address)
# cannot match across it.
WORD_JOINER = "\u2060"
# Where a word joiner goes: between ':' and '//' (http://, https:// in any case), between 'www'
# and '.' (any case), and after every '@'.
_AUTOLINK_BREAKS = re.compile(r"(?<=:)(?=//)|(?<=[wW]{3})(?=\.)|(?<=@)")


def plain(text: object) -> str:
    """``text`` for use inside markdown: it then shows exactly as written, and never as a link.

    Every markdown/HTML special character is backslash-escaped, and a WORD JOINER (U+2060,
    invisible) is put inside ``://``, ``www.`` and after ``@``, which markdown would otherwise
    turn into a live link whatever escapes precede them.
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _AUTOLINK_BREAKS.sub(WORD_JOINER, str(text)))
