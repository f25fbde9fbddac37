"""Read a title or quoted wording written next to a citation: a correct id with a wrong title or
wording is an altered citation, so both are kept for the gate to compare."""
from __future__ import annotations

from . import patterns as P
from .found import Found

# How each title form is written; "quote" is a claimed title, the others may be commentary.
_TITLE_FORMS = (("quote", P.TITLE_QUOTE), ("paren", P.TITLE_PAREN), ("table", P.TITLE_TABLE),
                ("dash", P.TITLE_DASH), ("colon", P.TITLE_COLON))


def attach_title(text: str, found: Found) -> int:
    """Fill `found.title_quote`/`quoted_text` from the text right after it; return where that text
    ends (also kept as `found.tail_end`)."""
    found.tail_end = _attach(text, found)
    return found.tail_end


def _attach(text: str, found: Found) -> int:
    pos = found.span[1]
    quoted = P.QUOTED_TEXT.match(text, pos)
    if quoted and _is_requirement_quote(text, pos, quoted, found):
        found.quoted_text = quoted[1].strip()
        return quoted.end()
    for form, pattern in _TITLE_FORMS:
        m = pattern.match(text, pos)
        if m and not P.NOT_A_TITLE.match(m[1]) and not _names_the_next(text, form, m.end()):
            found.title_quote, found.title_form = m[1].strip(), form
            pos = m.end()
            break
    quoted = P.QUOTED_TEXT.match(text, pos)
    if quoted and found.title_quote and _is_requirement_quote(text, pos, quoted, found):
        found.quoted_text = quoted[1].strip()
        pos = quoted.end()
    return pos


def _names_the_next(text: str, form: str, end: int) -> bool:
    """`Identify (ID): Business Environment (ID.BE)`: a dash or colon title followed by a reference
    in parentheses is that reference's title, not the previous citation's."""
    if form not in ("dash", "colon"):
        return False
    after = P.REF_IN_PARENS.match(text, end)
    return bool(after and P.NOT_A_TITLE.match(after[1]))


def _is_requirement_quote(text: str, pos: int, m, found: Found) -> bool:
    """A quote introduced by a verb or colon, or by "according to" before the citation, or long
    enough to be wording rather than a title."""
    lead = text[pos:m.start(1)]
    introduced = any(ch.isalpha() for ch in lead) or ":" in lead
    led_in = bool(P.WORDING_LEAD_IN.search(text, max(0, found.span[0] - 40), found.span[0]))
    return introduced or led_in or len(m[1].split()) > 12
