"""Numbers that state a fact: durations and deadlines, percentages, amounts, and counts of things.

Each finder yields `Specific`s. With `source=True` it reads a source, liberally: more spellings
give keys there (every number gets a key with each of the words around it), so that a draft's
specific finds the source that states it in other words. A draft is read strictly: only a number
with its unit is a specific, never a section number, a list marker or a citation.
"""
from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from pipeline.integrity import find_prices
from pipeline.integrity.prices import FAMILIES

from .found import AMOUNT, DURATION, PERCENTAGE, QUANTITY, Specific, fold
from .numbers import DIGITS, NUMBER, WORDS, number_value, numbers_in, shown

# -- durations and deadlines ---------------------------------------------------------------------
# (family, factor): "s" counts seconds (minutes to weeks convert), "m" months (a year is 12),
# "bd" business days (a working day is not a calendar day). Days and months never convert: "30
# days" and "one month" are different deadlines.
_UNIT_NAMES = {
    "s": ("s", 1), "sec": ("s", 1), "secs": ("s", 1), "second": ("s", 1), "seconds": ("s", 1),
    "min": ("s", 60), "mins": ("s", 60), "minute": ("s", 60), "minutes": ("s", 60),
    "h": ("s", 3600), "hr": ("s", 3600), "hrs": ("s", 3600), "hour": ("s", 3600), "hours": ("s", 3600),
    "d": ("s", 86400), "day": ("s", 86400), "days": ("s", 86400),
    "wk": ("s", 604800), "wks": ("s", 604800), "week": ("s", 604800), "weeks": ("s", 604800),
    "mo": ("m", 1), "mos": ("m", 1), "month": ("m", 1), "months": ("m", 1),
    "quarter": ("m", 3), "quarters": ("m", 3),
    "y": ("m", 12), "yr": ("m", 12), "yrs": ("m", 12), "year": ("m", 12), "years": ("m", 12),
}
_ONE_LETTER = {"s", "h", "d", "y"}  # read only right after digits ("24h", "30 d"), never after words
_UNIT = "|".join(sorted(_UNIT_NAMES, key=len, reverse=True))
_SPAN = re.compile(
    rf"(?P<num>{NUMBER})(?P<sep>[ \u00a0\u202f\-]?)(?:(?P<qual>business|working|calendar)[ \-])?(?P<unit>{_UNIT})\b", re.I)
#: "within a day", "once an hour": "a" is one only after these words ("a day" alone is no deadline).
_ONE_SPAN = re.compile(rf"(?=[aoAO])\b(?P<one>an?|one)\s+(?:(?P<qual>business|working|calendar)\s+)?(?P<unit>{_UNIT})\b",
                       re.I)
_LEAD = re.compile(r"\b(?:within|in|every|each|per|once|for|after|under|over|than|up to|about)\s+$", re.I)
#: How often, in one word or a set phrase: each is the span between two occurrences.
_FREQUENCIES = {
    "daily": ("s", 86400), "weekly": ("s", 604800), "fortnightly": ("s", 1209600), "monthly": ("m", 1),
    "quarterly": ("m", 3), "semi-annually": ("m", 6), "semiannually": ("m", 6), "biannually": ("m", 6),
    "half-yearly": ("m", 6), "twice a year": ("m", 6), "annually": ("m", 12), "yearly": ("m", 12),
    "once a year": ("m", 12), "every year": ("m", 12), "each year": ("m", 12),
    "nightly": ("s", 86400), "every night": ("s", 86400), "each night": ("s", 86400), "every day": ("s", 86400),
    "each day": ("s", 86400), "every week": ("s", 604800), "each week": ("s", 604800), "every month": ("m", 1),
    "each month": ("m", 1), "every quarter": ("m", 3), "each quarter": ("m", 3),
}
#: Said in a source, these also give a span ("an annual review"); in a draft they are too common
#: to be read as a specific of their own.
_SOURCE_FREQUENCIES = {"annual": ("m", 12), "bi-annual": ("m", 6), "biannual": ("m", 6), "semi-annual": ("m", 6)}
_FREQUENCY = re.compile(r"\b(?:%s)\b" % "|".join(re.escape(k) for k in sorted(_FREQUENCIES, key=len, reverse=True)),
                        re.I)
_SOURCE_FREQUENCY = re.compile(r"\b(?:%s)\b" % "|".join(re.escape(k) for k in _SOURCE_FREQUENCIES), re.I)


def span_key(value: Decimal, family: str, factor: int) -> tuple:
    return ("span", family, shown(value * factor))


def durations(text: str, *, source: bool = False):
    for m in _SPAN.finditer(text):
        unit = m.group("unit").lower()
        if unit in _ONE_LETTER and not (m.group("num")[-1].isdigit() and m.group("sep") in ("", " ")):
            continue
        if m.group("unit") != unit and len(unit) <= 3 and m.group("unit").isupper():
            continue  # "5 D", "3 MO": not units
        value = number_value(m.group("num"))
        if value is not None:
            yield _span(text, m, m.start(), value)
    for m in _ONE_SPAN.finditer(text):
        if m.group("unit").lower() not in _ONE_LETTER and _LEAD.search(text, max(0, m.start() - 12), m.start()):
            yield _span(text, m, m.start(), Decimal(1))
    for pattern, table in ((_FREQUENCY, _FREQUENCIES), *(((_SOURCE_FREQUENCY, _SOURCE_FREQUENCIES),) if source else ())):
        for m in pattern.finditer(text):
            family, factor = table[m.group(0).lower()]
            yield Specific(DURATION, m.group(0), m.span(), (span_key(Decimal(1), family, factor),))


def _span(text: str, m: re.Match, start: int, value: Decimal) -> Specific:
    family, factor = _UNIT_NAMES[m.group("unit").lower()]
    if (m.group("qual") or "").lower() in ("business", "working"):
        family = "bd"
    return Specific(DURATION, text[start:m.end()], (start, m.end()), (span_key(value, family, factor),))


# -- percentages ---------------------------------------------------------------------------------
_PERCENT = re.compile(rf"(?P<num>{NUMBER})[ \u00a0\u202f]?(?:%|per[ \-]?cent\b|percent\b)", re.I)


def percentages(text: str, *, source: bool = False):
    for m in _PERCENT.finditer(text):
        value = number_value(m.group("num"))
        if value is not None:
            yield Specific(PERCENTAGE, m.group(0), m.span(), (("pct", shown(value)),))


# -- amounts -------------------------------------------------------------------------------------
def amounts(text: str, *, source: bool = False):
    """Prices as the integrity gate reads them (pipeline.integrity.prices), so both agree on what an
    amount is. In a source, "$" also stands for each dollar, and each dollar for "$"."""
    for price in find_prices(text):
        currencies = {price.currency}
        if source:
            currencies |= FAMILIES.get(price.currency, set())
            currencies |= {family for family, members in FAMILIES.items() if price.currency in members}
        keys = tuple(("amount", c, shown(price.value)) for c in sorted(currencies))
        yield Specific(AMOUNT, price.surface, price.span, keys)


# -- counts of things ----------------------------------------------------------------------------
#: Words after a number that make it no fact of its own: grammar, the document's own structure, and
#: the run's own vocabulary (a recap's "6 passed", "4 references").
_NOT_A_THING = set("""a an the of to and or but per is are was were be been in on at by for from with as that
which who than times x more less fewer other others out percent of each main following above below after
before during into onto among between about across against without
step steps section sections item items point points part parts page pages row rows column columns table tables
figure figures appendix appendices annex annexes phase phases stage stages option options level levels tier
tiers question questions chapter chapters paragraph paragraphs line lines example examples case cases bullet
bullets clause clauses article articles control controls requirement requirements criterion criteria principle
principles category categories domain domains theme themes heading headings area areas key
passed failed released halted warning warnings reference references citation citations issue issues finding
findings attempt attempts draft drafts re-render re-renders
checked answered unanswered marked listed shown drafted covered met unmet declined dropped included excluded
carried""".split())
#: Words that qualify a noun rather than name the thing counted ("37 full-time staff").
_QUALIFIERS = set("""new full-time part-time additional active external internal permanent temporary current
existing former dedicated separate distinct different named authorised authorized critical key major minor
open closed high medium low registered approved trained certified remote on-site onsite""".split())
#: Numbers written after these are labels, not counts ("Step 3", "version 2", "Article 30").
_LABELS = set("""step section table figure appendix annex part chapter clause article art paragraph item version
v phase level tier no number page line rule principle control requirement iso category class type grade
room floor building release edition revision rev sp q option point bullet ref reference id""".split())
#: Words for one thing counted, so that a synonym of the same count is the same fact.
_SYNONYMS = {"employee": "person", "staff": "person", "people": "person", "personnel": "person", "worker": "person",
             "fte": "person", "headcount": "person", "member": "person", "individual": "person",
             "gigabyte": "gb", "terabyte": "tb", "megabyte": "mb", "kilobyte": "kb", "petabyte": "pb",
             "kilometre": "km", "kilometer": "km", "kilogram": "kg", "metre": "m", "meter": "m"}
_COUNT = re.compile(rf"(?<![A-Za-z\-])(?P<num>{DIGITS}|\b{WORDS}\b)[ \u00a0\u202f]+(?P<w1>[A-Za-z][A-Za-z\-]*)"
                    rf"(?:[ \u00a0\u202f]+(?P<w2>[A-Za-z][A-Za-z\-]*))?", re.I)
_LABEL_BEFORE = re.compile(r"([A-Za-z]+)\.?[ \u00a0\u202f]*(?:n[o°]\.?[ \u00a0\u202f]*)?$")
_LINE_START = re.compile(r"(?:^|\n)[ \t>]*(?:#{1,6}[ \t]*|[-*+][ \t]+)?$")


@lru_cache(maxsize=8192)
def lemma(word: str) -> str:
    """A noun's dictionary form, folded, with synonyms of one thing counted made one."""
    w = fold(word).strip("-")
    if w in _SYNONYMS:
        return _SYNONYMS[w]
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "ches", "shes", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    return _SYNONYMS.get(w, w)


def counts(text: str, *, source: bool = False):
    if source:
        yield from _source_counts(text)
        return
    for m in _COUNT.finditer(text):
        num, w1, w2 = m.group("num"), m.group("w1"), m.group("w2")
        if num.lower() in ("one", "zero") or w1.lower() in _NOT_A_THING or w1.lower() in _UNIT_NAMES:
            continue
        before = text[max(0, m.start() - 24):m.start()]
        label = _LABEL_BEFORE.search(before)
        if label and label.group(1).lower() in _LABELS:
            continue
        if _LINE_START.search(before) and w1[0].isupper():
            continue  # a numbered heading or list item: the document's own numbering
        value = number_value(num)
        if value is None:
            continue
        noun, end = w1, m.end("w1")
        if w1.lower() in _QUALIFIERS and w2 and w2.lower() not in _NOT_A_THING:
            noun, end = w2, m.end("w2")
        yield Specific(QUANTITY, text[m.start():end], (m.start(), end), (("qty", shown(value), lemma(noun)),))


_NEAR_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*")
NEAR = 3


def _source_counts(text: str):
    """Every number with each of the words near it: "a staff of 37" states 37 staff."""
    for value, start, end in numbers_in(text):
        after = _NEAR_WORD.findall(text, end, min(len(text), end + 40))[:NEAR]
        before = _NEAR_WORD.findall(text, max(0, start - 40), start)[-NEAR:]
        number = shown(value)
        keys = tuple({("qty", number, lemma(w)) for w in (*after, *before)})
        if keys:
            yield Specific(QUANTITY, text[start:end], (start, end), keys)
