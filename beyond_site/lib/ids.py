"""What an id is, said once: ASCII digits for a number from 1 to 2^63-1 (the range of a 64-bit
primary key on every database Beyond runs on).

Anything else is no id, and is refused before any `int()` or query: "²" and other Unicode digits
pass `str.isdigit()` but not `int()`; 0 and negative numbers are no row's id; a number past 2^63-1
makes SQLite raise OverflowError and PostgreSQL a DataError, each a 500. The URLs take ids with
`<id:name>` (`IdConverter`, registered here: a path with something else in its place matches
nothing, a 404); forms and query strings with `parse_id` (or `lib/inputs.object_id`, which says
why in a 400).
"""
from __future__ import annotations

import re

from django.urls import register_converter

MAX_ID = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")


def parse_id(value) -> int | None:
    """`value` (a str, or an int) as an id, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        number = int(value)
    else:
        return None
    return number if 0 < number <= MAX_ID else None


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            raise ValueError(f"{value!r} is not an id")  # the path does not match: a 404
        return number

    def to_url(self, value) -> str:
        return str(value)


register_converter(IdConverter, "id")
