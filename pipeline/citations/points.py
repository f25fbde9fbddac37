"""Names of sub-provisions: "Art. 5(1)(c) (storage limitation)" names another point of Article 5.

People name GDPR points and paragraphs (the principles of Art. 5(1), the lawful bases of Art. 6(1),
the security measures of Art. 32(1)); a name that belongs to a different sub-provision of the same
article is an altered citation. The names are pack data (`Pack.point_names`). A name is recognised
only when it is written as a name: in parentheses, a table cell, a dash or colon title or an
appositive after the citation, or right before it ("data minimisation (Art. 5(1)(c))",
"legitimate interests under Art. 6(1)(f)"); and only as a whole known name, never as a word
found somewhere in a description.
"""
from __future__ import annotations

import re
from functools import lru_cache

from pipeline.frameworks import Pack
from pipeline.frameworks.refs import catalogue_ref

from .approved import relation
from .found import Found
from .normalise import norm_text

_FILLER = re.compile(r"^(?:the|a|an)\s+|\s+(?:principle|lawful basis|legal basis|basis|ground|condition)s?$")
_BEFORE = re.compile(r"(?:\s+(?:principle|lawful basis|legal basis|basis|ground|condition)s?)?\s*"
                     r"(?:\(|\b(?:under|in|of|per|pursuant to)\b)\s*(?:(?:the\s+)?(?:EU\s+|UK\s+)?GDPR,?)?\s*$", re.I)
_MAY_CONNECT = re.compile(r"(?:\(|\b(?:under|in|of|per|to|GDPR,?))\s*$", re.I)
_LISTED = re.compile(r"(?:\band|\bor|&|/)\s*$")
_APPOSITIVE = re.compile(r",\s*(?:the\s+)?([^,;:.()\n\"“”]{2,60}?)\s*(?=[,;)]|\.(?:\s|$))")


def _name_key(text: str) -> str:
    return _FILLER.sub("", _FILLER.sub("", norm_text(text)))


@lru_cache(maxsize=32)
def _names_by_article(pack: Pack) -> dict[str, dict[str, frozenset[str]]]:
    """article (catalogue entry) -> name key -> the sub-provisions that name belongs to."""
    index: dict[str, dict[str, set[str]]] = {}
    for ref, names in pack.point_names.items():
        article = catalogue_ref(pack.scheme, ref)
        for name in names:
            index.setdefault(article, {}).setdefault(_name_key(name), set()).add(ref)
    return {article: {key: frozenset(refs) for key, refs in names.items()} for article, names in index.items()}


def has_named_points(pack: Pack, ref: str) -> bool:
    return bool(pack.point_names) and catalogue_ref(pack.scheme, ref) in _names_by_article(pack)


def named_point(pack: Pack, ref: str, written: str) -> tuple[str, bool] | None:
    """The sub-provision `written` is the name of, and whether `ref` may carry that name (it is that
    sub-provision, part of it or a whole it belongs to); None when `written` names none of the
    article's sub-provisions."""
    if not pack.point_names:
        return None
    refs = _names_by_article(pack).get(catalogue_ref(pack.scheme, ref), {}).get(_name_key(written))
    if not refs:
        return None
    own = any(relation(pack, other, ref) in ("same", "narrower", "broader") for other in refs)
    return min(refs), own


def names_around(text: str, found: Found, pack: Pack) -> list[str]:
    """Names of the article's sub-provisions written right before the citation or as an appositive
    after it (the title written after it is read with the other titles)."""
    names = _names_by_article(pack).get(catalogue_ref(pack.scheme, found.ref), {})
    written: list[str] = []
    start = found.span[0]
    connective = (_MAY_CONNECT.search(text, max(0, start - 12), start)   # cheap test first: most
                  and _BEFORE.search(text[max(0, start - 40):start]))    # citations have no name
    stem = norm_text(text[max(0, start - 120):start - len(connective[0])]) if connective else ""
    if stem:
        best = max((key for key in names if stem.endswith(key) and re.match(r"(?:^|\W)$", stem[:-len(key)][-1:])),
                   key=len, default=None)
        if best and not _LISTED.search(stem[:-len(best)]):
            written.append(best)
    if found.title_quote is None and text.startswith(",", found.end):
        appositive = _APPOSITIVE.match(text, found.end)
        if appositive and _name_key(appositive[1]) in names:
            written.append(appositive[1])
    return written
