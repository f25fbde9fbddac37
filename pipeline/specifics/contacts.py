"""E-mail addresses and phone numbers.

An address is one whatever its case. A phone number is its digits: "+33 1 23 45 67 89",
"01 23 45 67 89" and "01.23.45.67.89" are one number (compared on their last nine digits, so a
country code or a trunk zero written or not changes nothing); a digit more or less is another.
"""
from __future__ import annotations

import re

from .found import EMAIL, PHONE, Specific

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_PHONE = re.compile(r"(?<![\w+/.\-])(?:\+\d{1,3}[ .\-]?(?:\(0\)[ .\-]?)?|\(0?\d{1,4}\)[ .\-]?|0)\d{1,4}"
                    r"(?:[ .\-]\d{2,4}){1,5}(?![\w/]|[.\-]\d)")


def emails(text: str, *, source: bool = False):
    for m in _EMAIL.finditer(text):
        yield Specific(EMAIL, m.group(0), m.span(), (("email", m.group(0).lower()),))


def phone_key(text: str) -> tuple:
    digits = re.sub(r"\D", "", text)
    return ("phone", digits[-9:])


def phones(text: str, *, source: bool = False):
    for m in _PHONE.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 8 <= len(digits) <= 15:
            yield Specific(PHONE, m.group(0), m.span(), (phone_key(m.group(0)),))
