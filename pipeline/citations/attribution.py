"""Quoted wording attributed to a citation away from it: `Clause 9.2 of ISO/IEC 27001:2022 states
that "…"`, `as A.5.15 puts it, "…"`, `under Article 28(3) GDPR, the processor "…"`, `"…" (Art. 30(1))`.

A quote next to its citation is read with the citation's title (`titles.py`); this module finds
the rest. Drafts quote many things besides requirements (a policy's own wording, a person, a
term in scare quotes), so a quote counts as the citation's wording only where the grammar says
the citation says it:
- strong: the citation is the subject of a verb of saying right before the quote ("A.5.15 states:",
  "as A.5.15 puts it,"), or the quote follows "according to <citation>", or ends with it;
- weak: a few words stand between ("AC-2 requires that organizations", "under Art. 28(3), the
  processor", `"…" (Art. 30(1))`); then the quote must also read as requirement wording (an
  obligation word such as "shall" or "must", or eight words or more).
A pronoun or a verb of saying with another subject in between ("under A.5.15, our policy states")
attributes the quote to someone else.

The gate then compares an attributed quote with the approved citation's `text`. Where the brief
gives no `text`, a quote is still fine when it is the approved or catalogue title or the name of
the point cited, or (weakly attributed) the brief's own words; any other wording is requirement
wording the brief does not contain, an `altered_citation`, as it is next to the citation.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

from . import patterns as P
from .found import Found

_SP = P.SPACE
_QUOTE = re.compile(r'"([^"\n]{2,1200})"|“([^”“\n]{2,1200})”|„([^“”„\n]{2,1200})[“”]|«\s?([^»«\n]{2,1200}?)\s?»')
_VERB = (r"(?:states?|stated|requires?|required|says?|said|reads?|provides?|stipulates?|mandates?|specif(?:y|ies)|"
         r"sets?{SP}+out|lays?{SP}+down|puts?{SP}+it|words?{SP}+it|phrases?{SP}+it|demands?|obliges?|prescribes?|"
         r"declares?|insists?|is{SP}+(?:explicit|clear|unambiguous))").replace("{SP}", _SP)
_ADVERB = r"(?:also|further|itself|explicitly|expressly|clearly|simply|plainly|specifically)"
_SAYING = re.compile(rf"\b{_VERB}\b|\bput{_SP}+it\b|\baccording{_SP}+to\b", re.I)
_OBLIGATION = re.compile(r"\b(?:shall|must|should|required|requires?|is to|are to|has to|have to|may not|ensures?)\b",
                         re.I)
_NOT_NP = frozenset("we our us you your they their them i my me he she his her it its this these those nothing "
                    "not no never what which who".split())
_WORDS = rf"(?P<np>[\w'’\-]+(?:{_SP}+[\w'’\-]+){{0,4}}?)"
_MODAL = rf"(?:{_SP}+(?:shall|must|should|to|is{_SP}+to|are{_SP}+to))?"
_SEPARATED = re.compile(r"^[\s,;/&]*(?:and|or|as well as)?[\s,]*$")


@dataclass
class Attribution:
    """A quote the draft attributes to one or more citations (a list shares its verb)."""

    citations: list[Found]
    quote: str
    strong: bool


@lru_cache(maxsize=16)
def _grammar(extra_names: tuple[str, ...]) -> dict[str, re.Pattern]:
    names = "|".join([P.FRAMEWORK_NAME, *map(re.escape, extra_names)])
    qual = (rf"(?:{_SP}*,?{_SP}*(?:(?:of|in|under|from){_SP}+)?(?:the{_SP}+)?"
            rf"(?:{names}|Annex{_SP}+A|[Rr]egulation|[Ss]tandard|[Ff]ramework|[Cc]riteria)(?:{_SP}*,)?)?")
    verb = rf"{qual}{_SP}*(?:,{_SP}*(?:which|that){_SP}+)?(?:{_ADVERB}{_SP}+)?{_VERB}(?:{_SP}+that)?{_SP}*[:,]?{_SP}*"
    return {
        "strong_after": re.compile(rf"^{verb}$"),
        "weak_after": re.compile(rf"^{verb}{_WORDS}{_MODAL}{_SP}*[:,]?{_SP}*$"),
        "strong_lead": re.compile(rf"^{qual}{_SP}*[,:]?{_SP}*$"),
        "weak_lead": re.compile(rf"^{qual}{_SP}*,?{_SP}*(?:{_WORDS}{_MODAL})?{_SP}*[:,]?{_SP}*$"),
        "paren_after_quote": re.compile(rf"^{_SP}*\({_SP}*(?:(?:{names}){_SP}*,?{_SP}*)?$"),
        "according_after_quote": re.compile(
            rf"^{_SP}*,?{_SP}*(?:according{_SP}+to|as{_SP}+(?:stated|set{_SP}+out|worded|laid{_SP}+down|required|"
            rf"written)\s+(?:in|by)){_SP}+(?:the{_SP}+)?(?:(?:{names}){_SP}*,?{_SP}*)?$"),
        "as_after_quote": re.compile(rf"^{_SP}*,?{_SP}*as{_SP}+$"),
        "verb_after_citation": re.compile(rf"{qual}{_SP}*(?:{_ADVERB}{_SP}+)?{_VERB}\b"),
    }


_STRONG_LEAD = P.WORDING_LEAD_IN
_WEAK_LEAD = re.compile(rf"\b(?:under|per|pursuant{_SP}+to|in{_SP}+line{_SP}+with|in{_SP}+accordance{_SP}+with|"
                        rf"following){_SP}*$", re.I)


def _noun_phrase_ok(m: re.Match) -> bool:
    np = m.groupdict().get("np")
    if not np:
        return True
    words = [w.lower() for w in re.split(r"\s+", np)]
    return not any(w in _NOT_NP for w in words) and not _SAYING.search(np)


def reads_as_requirement(quote: str) -> bool:
    return bool(_OBLIGATION.search(quote)) or len(quote.split()) >= 8


def attributions(text: str, found: list[Found], extra_names: tuple[str, ...] = ()) -> list[Attribution]:
    """Quotes in `text` attributed to citations among `found` (sorted by position), other than the
    ones written right after a citation (already in `Found.quoted_text` or `title_quote`)."""
    if not found or '"' not in text and "“" not in text and "„" not in text and "«" not in text:
        return []
    grammar = _grammar(extra_names)
    starts = [f.span[0] for f in found]
    result: list[Attribution] = []
    for m in _QUOTE.finditer(text):
        qs, qe = m.start(), m.end()
        quote = next(g for g in m.groups() if g is not None).strip()
        i = bisect.bisect_right(starts, qs)           # found[:i] start at or before the quote
        if i and any(f.span[0] <= qs < f.end for f in found[max(0, i - 3):i]):
            continue                                  # a title or wording read with its citation
        attribution = _before_quote(text, found, i, qs, grammar) or _after_quote(text, found, i, qs, qe, grammar)
        if attribution is None:
            continue
        citations, strong = attribution
        if strong or reads_as_requirement(quote):
            result.append(Attribution(citations, quote, strong))
    return result


def _before_quote(text: str, found: list[Found], i: int, qs: int, grammar) -> tuple[list[Found], bool] | None:
    """`<citation> states that "…"`, `according to <citation>, "…"`, `under <citation>, the processor "…"`."""
    if not i:
        return None
    k = max(range(max(0, i - 3), i), key=lambda j: found[j].end)
    last = found[k]
    if last.end > qs or qs - last.end > 160:
        return None
    group = _group_back(text, found, k)
    gap = text[last.end:qs]
    lead = text[max(0, group[0].span[0] - 60):group[0].span[0]]
    if grammar["strong_after"].match(gap) or (_STRONG_LEAD.search(lead) and grammar["strong_lead"].match(gap)):
        return group, True
    weak = grammar["weak_after"].match(gap) or (_WEAK_LEAD.search(lead) and grammar["weak_lead"].match(gap))
    if weak and _noun_phrase_ok(weak):
        return group, False
    return None


def _after_quote(text: str, found: list[Found], i: int, qs: int, qe: int,
                 grammar) -> tuple[list[Found], bool] | None:
    """`"…" (Art. 30(1))`, `"…", according to Art. 30(1)`, `"…", as A.5.15 puts it`."""
    if i >= len(found) or found[i].span[0] - qe > 80:
        return None
    first = found[i]
    line_start = text.rfind("\n", 0, qs) + 1
    if _SAYING.search(text[max(line_start, qs - 200):qs]):
        return None                                   # the sentence names its own speaker
    gap = text[qe:first.span[0]]
    group = _group_forward(text, found, i)
    if grammar["according_after_quote"].match(gap):
        return group, True
    if grammar["as_after_quote"].match(gap) and grammar["verb_after_citation"].match(text, group[-1].end):
        return group, True
    if grammar["paren_after_quote"].match(gap):
        return group, False
    return None


def _group_back(text: str, found: list[Found], k: int) -> list[Found]:
    group = [found[k]]
    while k and (found[k - 1].span == found[k].span or _SEPARATED.match(text[found[k - 1].end:found[k].span[0]])):
        k -= 1
        group.insert(0, found[k])
    return group


def _group_forward(text: str, found: list[Found], k: int) -> list[Found]:
    group = [found[k]]
    while k + 1 < len(found) and (found[k + 1].span == found[k].span
                                  or _SEPARATED.match(text[found[k].end:found[k + 1].span[0]])):
        k += 1
        group.append(found[k])
    return group
