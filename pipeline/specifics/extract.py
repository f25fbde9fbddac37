"""Find the specifics of a text: every kind's finder, then one specific per place.

Where two readings overlap, the more specific kind wins (an e-mail address before the name in it,
an amount before the year it holds, a date before the phone number its digits could make, a
duration before the count of "3 working days"). Framework citations are the citation gate's
(pipeline.citations) and are never specifics; nor are framework names ("ISO/IEC 27001:2022",
"NIST SP 800-53 Rev. 5"), web addresses (the integrity gate's), or the document's own numbering.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import replace

from pipeline.citations import extract_citations
from pipeline.frameworks.packset import PackSet
from pipeline.integrity import find_urls

from .contacts import emails, phones
from .dates import dates
from .found import Specific
from .measures import amounts, counts, durations, percentages
from .names import organisations, persons

#: The finders in order of precedence.
FINDERS = (emails, amounts, dates, phones, percentages, durations, counts, organisations, persons)
_FRAMEWORK_NAMES = re.compile(
    r"\bISO(?:/IEC)?\s*\d{4,5}(?:-\d+)?(?::\s?\d{4})?|\bNIST\s+(?:SP\s+)?\d{3}-\d+[A-Za-z]?(?:\s+Rev(?:ision)?\.?\s*\d+)?"
    r"|\bCSF\s+\d\.\d|\bSOC\s*[123]\b(?:\s+Type\s+(?:I{1,2}|[12]))?|\bPCI[\s\-]DSS(?:\s+v?\d(?:\.\d)*)?"
    r"|\b(?:Regulation|Directive)\s+(?:\((?:EU|EC)\)\s+)?(?:No\s+)?\d{2,4}/\d{2,4}(?:/\w+)?|\b\d{4}/\d{2,4}/(?:EU|EC)\b"
    r"|\bTSC\s+\d{4}|\bHIPAA\b|\bDORA\b|\bNIS\s?2\b", re.I)


def excluded_spans(text: str, packs: PackSet | None = None) -> list[tuple[int, int]]:
    """Where nothing is a specific: citations, framework names and web addresses."""
    spans = [(f.span[0], f.end) for f in extract_citations(text, packs)]
    spans += [m.span() for m in _FRAMEWORK_NAMES.finditer(text)]
    spans += [u.span for u in find_urls(text)]
    return sorted(spans)


#: What a line must hold for a finder to find anything in it: a source of a hundred thousand
#: tokens is then read by these finders only where it could state what they look for.
_TRIGGERS = {
    amounts: re.compile(r"[$€£¥₹₩₽₺₪₫₴₦₱฿]|\b[A-Z]{3}\b|(?i:dollar|euro|pound|franc|\byen\b|\bkr\b|zł|kč)"),
    percentages: re.compile(r"%|(?i:per[ \-]?cent)"),
    dates: re.compile(r"(?:19|20)\d\d|\d[/.]\d"),
}


def _read_source(text: str, finder):
    trigger = _TRIGGERS.get(finder)
    if trigger is None:
        yield from finder(text, source=True)
        return
    end = 0
    for m in trigger.finditer(text):
        if m.start() < end:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        for specific in finder(text[start:end], source=True):
            yield replace(specific, span=(specific.span[0] + start, specific.span[1] + start))


class _Taken:
    """Spans already given to a specific or excluded, to tell whether a new one overlaps them."""

    def __init__(self, spans):
        self.starts, self.ends = [], []
        for start, end in spans:
            self.add(start, end)

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect(self.starts, start)
        self.starts.insert(i, start)
        self.ends.insert(i, end)

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.starts, end)
        # Spans never overlap each other, so only the nearest one before `end` can reach `start`.
        return i > 0 and self.ends[i - 1] > start


def find_specifics(text: str, packs: PackSet | None = None, *, source: bool = False) -> list[Specific]:
    """The specifics of a released step or a recap, in text order. With `source`, a source's
    specifics, read liberally (pipeline/specifics/measures.py) and all of them, overlaps included:
    a source states every fact any reading of it gives."""
    if not text:
        return []
    if source:
        return [s for finder in FINDERS for s in _read_source(text, finder)]
    taken = _Taken(excluded_spans(text, packs))
    found: list[Specific] = []
    for finder in FINDERS:
        for specific in finder(text):
            if not taken.overlaps(*specific.span):
                taken.add(*specific.span)
                found.append(specific)
    return sorted(found, key=lambda s: s.span)
