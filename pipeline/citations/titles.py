"""Read a title or quoted wording written next to a citation (CITATIONS.md trap 8)."""
from __future__ import annotations

from . import patterns as P
from .found import Found

# How each title form is written; "quote" is a claimed title, the others may be commentary.
_TITLE_FORMS = (("quote", P.TITLE_QUOTE), ("paren", P.TITLE_PAREN), ("table", P.TITLE_TABLE),
                ("dash", P.TITLE_DASH), ("colon", P.TITLE_COLON))


def attach_title(text: str, found: Found) -> int:
    """Fill `found.title_quote`/`quoted_text` from the text right after it; return where that text ends."""
    pos = found.span[1]
    quoted = P.QUOTED_TEXT.match(text, pos)
    if quoted and _is_requirement_quote(text, pos, quoted):
        found.quoted_text = quoted[1].strip()
        return quoted.end()
    for form, pattern in _TITLE_FORMS:
        m = pattern.match(text, pos)
        if m and not P.NOT_A_TITLE.match(m[1]):
            found.title_quote, found.title_form = m[1].strip(), form
            pos = m.end()
            break
    quoted = P.QUOTED_TEXT.match(text, pos)
    if quoted and found.title_quote and _is_requirement_quote(text, pos, quoted):
        found.quoted_text = quoted[1].strip()
        pos = quoted.end()
    return pos


def _is_requirement_quote(text: str, pos: int, m) -> bool:
    """A quote introduced by a verb or colon, or long enough to be wording rather than a title."""
    lead = text[pos:m.start(1)]
    introduced = any(ch.isalpha() for ch in lead) or ":" in lead
    return introduced or len(m[1].split()) > 12
