"""Is the title or wording a draft writes for an approved citation the approved one?

A written title may be the brief's title, the catalogue's, a name of the sub-provision cited, or
commentary (the lenient forms: parentheses, dash, colon, table cell); it is wrong when it is
another entry's title, another sub-provision's name, or a near miss of the right title. A claimed
title (in quotes) must be the right one. Quoted wording must be found in the approved `text`.
"""
from __future__ import annotations

from functools import lru_cache

from pipeline.frameworks import Entry, Pack
from pipeline.schemas import Citation

from .found import Found
from .normalise import norm_text, quote_matches, similar
from .points import named_point

_LENIENT_MIN_TITLE = 8       # shorter pack titles ("General", "Tasks") are too common to recognise


def title_problem(found: Found, citation: Citation, entry: Entry | None, pack: Pack) -> str | None:
    """None if the title written for `found` fits; otherwise why it is a wrong title."""
    written = norm_text(found.title_quote or "")
    titles = [t for t in (citation.title, entry.title if entry else "") if t]
    normal = [norm_text(t) for t in titles]
    if any(written == t or (found.title_form != "quote" and written.startswith(t)) for t in normal):
        return None
    if citation.text and quote_matches(found.title_quote or "", citation.text):
        return None
    point = named_point(pack, found.ref, found.title_quote or "")
    if point is not None:
        return None if point[1] else f" (the name of {point[0]})"
    if found.title_form == "quote":
        return ""
    other = _other_title(pack, found, written)
    if other:
        return f" (the title of {other})"
    if any(similar(written, t) >= 0.75 or (len(written) > 12 and t.startswith(written)) for t in normal):
        return "" if not any(t.startswith(written) for t in normal) else None
    return None


def wording_problem(quote: str, ref: str, citation: Citation, entry: Entry | None, pack: Pack) -> str | None:
    """None if `quote` is the approved wording (or title, or the cited point's name) of `citation`."""
    if citation.text and quote_matches(quote, citation.text):
        return None
    titles = [t for t in (citation.title, entry.title if entry else "") if t]
    if any(norm_text(quote) == norm_text(t) for t in titles):
        return None
    point = named_point(pack, ref, quote)
    if point is not None and point[1]:
        return None
    if not citation.text:
        return f"the draft quotes requirement wording for {ref} that the brief does not contain"
    return f"the wording quoted for {ref} differs from the approved text \"{_short(citation.text)}\""


def point_name_problem(written: str, found: Found, citation: Citation, pack: Pack) -> str | None:
    """A sub-provision name written around the citation that belongs to another sub-provision."""
    if norm_text(written) == norm_text(citation.title):
        return None
    point = named_point(pack, found.ref, written)
    if point is None or point[1]:
        return None
    return f"{found.ref} is named \"{written}\", the name of {point[0]}"


def _other_title(pack: Pack, found: Found, written: str) -> str | None:
    """The ref whose title the draft wrote instead, if it is another entry of the same framework."""
    for ref, title in _recognisable_titles(pack):
        if ref != found.ref and (
                written == title or (found.title_form in ("dash", "colon", "table") and written.startswith(title + " "))):
            return ref
    return None


@lru_cache(maxsize=32)
def _recognisable_titles(pack: Pack) -> tuple[tuple[str, str], ...]:
    """(ref, normalised title) of a pack's entries whose titles are long enough to recognise, in
    catalogue order; normalised once per pack rather than on every wrong title."""
    return tuple((entry.ref, title) for entry in pack.entries.values()
                 if len(title := norm_text(entry.title)) >= _LENIENT_MIN_TITLE)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
