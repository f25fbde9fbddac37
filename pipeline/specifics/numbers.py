"""Numbers as people write them: digits with their separators, and number words.

One reading per written number: grouped thousands are a comma or a space (no-break and narrow
spaces included) before exactly three digits ("1,200", "1 200"); a comma before one or two digits
is a decimal comma ("3,5"); a dot is a decimal point unless the number has two or more dot groups
("1.200.000"). A page written in another convention ("1.200" for twelve hundred) is read as 1.2,
so the two spellings do not match: that errs on the side of listing, never of a thousandfold
value passing as sourced.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_VALUES: dict[str, int] = {w: n for n, w in enumerate(_UNITS)}
WORD_VALUES.update({w: 20 + 10 * n for n, w in enumerate(_TENS)})
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6}
_SIMPLE = "|".join(sorted([*WORD_VALUES, *_SCALES], key=len, reverse=True))
#: A number in words: "six", "twenty-four", "one hundred and twenty", "two thousand".
WORDS = rf"(?:{_SIMPLE})(?:(?:[ \-]|\s+and\s+)(?:{_SIMPLE}))*"
#: A number in digits (see the module docstring for the one reading of its separators).
DIGITS = (r"(?<![\d.,])(?=\d)(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,]\d)"
          r"|\d{1,3}(?:\.\d{3}){2,}|\d+(?:[.,]\d+)?)(?![\d])(?![.,]\d)")
#: The lookaheads let the search skip, at a glance, the places no number can start.
NUMBER = rf"(?:{DIGITS}|\b(?=[efhmnostzEFHMNOSTZ]){WORDS}\b)"
_NUMBER = re.compile(NUMBER, re.I)


def digits_value(text: str) -> Decimal | None:
    """The value of a number written in digits, in the one reading above."""
    text = re.sub(r"[ \u00a0\u202f]", "", text)
    if text.count(".") >= 2:
        text = text.replace(".", "")
    elif re.fullmatch(r"\d+,\d{1,2}", text):
        text = text.replace(",", ".")
    else:
        text = text.replace(",", "")
    try:
        return Decimal(text).normalize()
    except InvalidOperation:
        return None


def words_value(text: str) -> Decimal | None:
    """The value of a number written in words ("twenty-four" is 24); None for anything else."""
    total, current, seen = 0, 0, False
    for word in re.split(r"[\s\-]+", text.lower()):
        if word == "and" or not word:
            continue
        if word in WORD_VALUES:
            current += WORD_VALUES[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
        seen = True
    return Decimal(total + current) if seen else None


def number_value(text: str) -> Decimal | None:
    """A written number's value, digits or words."""
    text = text.strip()
    if text and text[0].isdigit():
        return digits_value(text)
    if text.lower() in ("a", "an", "one"):
        return Decimal(1)
    return words_value(text)


def shown(value: Decimal) -> str:
    """A value as a key writes it: "24", "1.5" (no exponent, no trailing zeros)."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def numbers_in(text: str):
    """(value, start, end) of every number in `text`, digits or words."""
    for m in _NUMBER.finditer(text):
        value = number_value(m.group(0))
        if value is not None:
            yield value, m.start(), m.end()
