"""The record of one specific found in a text, and the kinds there are."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

QUANTITY, PERCENTAGE, AMOUNT, DATE, DURATION = "quantity", "percentage", "amount", "date", "duration"
PERSON, ORGANISATION, EMAIL, PHONE = "person", "organisation", "email", "phone"
#: Every kind, in the order a reader meets them in the docs.
KINDS = (QUANTITY, PERCENTAGE, AMOUNT, DATE, DURATION, PERSON, ORGANISATION, EMAIL, PHONE)
#: How a reader calls each kind (the marker's explanation, the export's table).
KIND_LABELS = {QUANTITY: "number", PERCENTAGE: "percentage", AMOUNT: "amount", DATE: "date",
               DURATION: "duration or deadline", PERSON: "person's name", ORGANISATION: "organisation",
               EMAIL: "e-mail address", PHONE: "phone number"}


@dataclass(frozen=True)
class Specific:
    """A specific as written (`text`, `span` in the text read) and the keys of the fact it states:
    two spellings of one fact share a key ("24 h", "24 hours", "a day"); a different value never
    does. A specific is sourced when one of its keys is found in a source."""

    kind: str
    text: str
    span: tuple[int, int]
    keys: tuple[tuple, ...]


class _Folding(dict):
    """str.translate's table for `fold`, filled as characters are met."""

    def __missing__(self, code: int) -> str:
        low = chr(code).lower()
        base = unicodedata.normalize("NFKD", low)[:1] if len(low) == 1 else low[:1]
        mapped = self[code] = base if base.isalnum() else (low[:1] if low[:1].isalnum() else " ")
        return mapped


_FOLDING = _Folding()


def fold(text: str) -> str:
    """Lower case without accents ("Élodie" -> "elodie"), anything but a letter or a digit as a
    space: the same length as `text`, so offsets in the folded text point at the same characters."""
    return text.translate(_FOLDING)


_WORD_END = re.compile(r"[^a-z0-9]+")


def plain_words(text: str) -> str:
    """Folded, with everything but letters and digits as single spaces: "C. Martin" -> "c martin"."""
    return _WORD_END.sub(" ", fold(text)).strip()
