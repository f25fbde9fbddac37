"""Dates in the forms people write them, read to one key per date.

"14/03/2027", "14.03.2027", "2027-03-14", "14 March 2027", "14th of March, 2027", "March 14, 2027"
are one date. Numeric dates are read day first (the European convention) unless the day-first
reading is impossible ("03/14/2027" is then March 14). A month without a day ("March 2027"), a
quarter ("Q1 2027") and a year ("in 2027") are specifics too; a source's full date also states
its month and its year, so a draft's "March 2027" finds the source that says "14 March 2027".
"""
from __future__ import annotations

import re
from datetime import date

from pipeline.months import MONTH_NUMBERS

from .found import DATE, Specific

_MONTH = r"(?P<%s>" + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<%s>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<%s>(?:19|20)\d\d)"
# Each form behind a lookahead on its first character: most places of a long source start none.
_DATE = re.compile("|".join((
    r"(?=\d)\b(?P<iy>(?:19|20)\d\d)-(?P<im>[01]\d)-(?P<id>[0-3]\d)\b",
    r"(?=\d)(?<![\d/.])(?P<nd>[0-3]?\d)(?P<sep>[/.])(?P<nm>[01]?\d)(?P=sep)(?P<ny>(?:19|20)\d\d|\d\d)(?![\d/]|\.\d)",
    rf"(?=\d)\b{_DAY % 'd1'}(?:\s+of)?\s+{_MONTH % 'm1'},?\s+{_YEAR % 'y1'}\b",
    rf"(?=[adfjmnosADFJMNOS])\b{_MONTH % 'm2'}\s+{_DAY % 'd2'},?\s+{_YEAR % 'y2'}\b",
    rf"(?=[adfjmnosADFJMNOS])\b{_MONTH % 'm3'},?\s+{_YEAR % 'y3'}\b",
    rf"(?=[Qq])\bQ(?P<q>[1-4])\s+{_YEAR % 'qy'}\b",
    r"(?=[12])(?<![\w:/.\-#§])(?P<year>(?:19|20)\d\d)(?![\w:/\-]|\.\d)",
)), re.I)


def _full(year: int, month: int, day: int) -> tuple | None:
    try:
        date(year, month, day)
    except ValueError:
        return None
    return ("date", year, month, day)


def _numeric(day: int, month: int, year: int) -> tuple | None:
    if year < 100:
        year += 2000
    return _full(year, month, day) or _full(year, day, month)


def _keys(m: re.Match) -> tuple | None:
    g = m.groupdict()
    if g["iy"]:
        return _full(int(g["iy"]), int(g["im"]), int(g["id"]))
    if g["nd"]:
        return _numeric(int(g["nd"]), int(g["nm"]), int(g["ny"]))
    for d, mo, y in (("d1", "m1", "y1"), ("d2", "m2", "y2")):
        if g[d]:
            return _full(int(g[y]), MONTH_NUMBERS[g[mo].lower()], int(g[d]))
    if g["m3"]:
        if g["m3"].lower() == "may" and m.group(0)[0].islower():
            return None  # "may 2027" in running text is more often the verb
        return ("month", int(g["y3"]), MONTH_NUMBERS[g["m3"].lower()])
    if g["q"]:
        return ("quarter", int(g["qy"]), int(g["q"]))
    return ("year", int(g["year"]))


def dates(text: str, *, source: bool = False):
    for m in _DATE.finditer(text):
        key = _keys(m)
        if key is None:
            continue
        keys = [key]
        if source:  # a full date also says its month, quarter and year
            if key[0] == "date":
                keys += [("month", key[1], key[2]), ("quarter", key[1], (key[2] - 1) // 3 + 1), ("year", key[1])]
            elif key[0] == "month":
                keys += [("quarter", key[1], (key[2] - 1) // 3 + 1), ("year", key[1])]
            elif key[0] == "quarter":
                keys.append(("year", key[1]))
        yield Specific(DATE, m.group(0), m.span(), tuple(keys))
