"""One guard for every CSV the site writes (the usage figures, the calibration reports): no cell a
spreadsheet runs as a formula. After OWASP's "CSV Injection" guidance.

A spreadsheet runs a cell as a formula when it starts with `=`, `+`, `-` or `@` (or a tab or a
carriage return before one). Checking a cell's first character is not enough: a file is split on
whatever separator the reader's spreadsheet is set to (a semicolon in much of Europe, a tab, a pipe,
a colon, a space), so `x;=1+1` is two cells, `x` and a formula, for half the readers. Here every
text cell gets a single quote before each trigger that begins it or follows a character a
spreadsheet may split on; the quote makes the spreadsheet read text. The full-width forms
(`＝＋－＠`, which some spreadsheets take as their ASCII forms) count as triggers too. Numbers are
written as numbers (a negative number is not a formula), and text without a trigger is written as
it is, so ordinary names (`openai/gpt-4o-mini`, `2026-03`) read back unchanged.
"""
from __future__ import annotations

import csv
import io
import re
from decimal import Decimal
from typing import Iterable, Mapping, Sequence

#: What makes a spreadsheet run a cell (tab and CR only in front of the others, or alone first).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")
#: A trigger at the start of a cell, or after a character a spreadsheet may split a line on.
_TRIGGER = re.compile(r"(^|[,;|:\s])(?=[=+\-@＝＋－＠])")


def safe_cell(value):
    """`value` as a cell: numbers as they are, None as an empty cell, text defused."""
    if value is None:
        return ""
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return value
    text = str(value)
    if text.startswith(("\t", "\r")):
        text = "'" + text
    return _TRIGGER.sub(r"\1'", text)


def guarded_csv(header: Sequence[str], rows: Iterable[Sequence | Mapping]) -> str:
    """A CSV document: the header, then each row (a sequence in the header's order, or a mapping
    by its names, missing ones empty), every cell through `safe_cell`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180: a CR inside a cell is then quoted too
    writer.writerow([safe_cell(name) for name in header])
    for row in rows:
        values = [row.get(name) for name in header] if isinstance(row, Mapping) else row
        writer.writerow([safe_cell(value) for value in values])
    return out.getvalue()
