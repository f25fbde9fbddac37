"""How wide each column of a table is on paper (docs/deliverables.md, "Tables that print").

The rule both the PDF and the DOCX follow: no header word is ever broken (a header "Implementation
status" wraps between its words, never inside "Implementation"); a body word breaks only when it is
longer than a third of the page (a URL). Columns first get what their longest unbreakable word
needs, then share what is left by how much more their text would take on one line. When the words
do not fit the page, the table is set smaller, then on a landscape page, then smaller still.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Font sizes a table is tried at, largest first (points).
SIZES = (9.0, 8.0, 7.0, 6.5, 6.0, 5.5)
#: A body word wider than this share of the table's width may break (a long URL).
LONG_WORD = 1 / 3
#: Room added to each column's narrowest width (points): the renderer compares a word with its cell in
#: its own rounding, and a word measured to fit exactly may still be broken.
SLACK = 1.0

Measure = Callable[[str, bool, float], float]  # (text, bold, size) -> width in points


@dataclass(frozen=True)
class Layout:
    widths: list[float]
    size: float
    landscape: bool


def table_layout(header: list[str], rows: list[list[str]], *, portrait: float, landscape: float,
                 measure: Measure, padding: float) -> Layout:
    """Column widths for `header` and `rows` on a portrait page `portrait` points wide, else on a
    landscape page `landscape` points wide."""
    for width, turned in ((portrait, False), (landscape, True)):
        for size in SIZES:
            needs = _needs(header, rows, measure, size, padding, width)
            if sum(needs) <= width:
                return Layout(_shared(needs, _preferred(header, rows, measure, size, padding), width), size, turned)
    size = SIZES[-1]
    heads = [max((measure(w, True, size) for w in h.split()), default=0) + 2 * padding + SLACK for h in header]
    return Layout(_shared(heads, _preferred(header, rows, measure, size, padding), landscape), size, True)


def _needs(header, rows, measure: Measure, size: float, padding: float, width: float) -> list[float]:
    """What each column cannot do with less: its widest header word, its widest body word (up to a
    third of the page)."""
    out = []
    for c, head in enumerate(header):
        longest = max((measure(w, True, size) for w in head.split()), default=0)
        body = max((measure(w, False, size) for row in rows if c < len(row) for w in row[c].split()), default=0)
        out.append(max(longest, min(body, width * LONG_WORD)) + 2 * padding + SLACK)
    return out


def _preferred(header, rows, measure: Measure, size: float, padding: float) -> list[float]:
    """What each column would take with its longest cell on one line."""
    return [max([measure(head, True, size), *(measure(row[c], False, size) for row in rows if c < len(row))])
            + 2 * padding for c, head in enumerate(header)]


def _shared(needs: list[float], preferred: list[float], width: float) -> list[float]:
    """`needs` widened to fill `width`, the room shared by how much more each would take."""
    room = width - sum(needs)
    if room <= 0:
        return needs
    wants = [max(p - n, 0) for p, n in zip(preferred, needs)]
    total = sum(wants)
    if total <= room:  # everything fits on one line: the rest shared by size
        spare = room - total
        grown = [n + w for n, w in zip(needs, wants)]
        return [g + spare * g / sum(grown) for g in grown]
    return [n + room * w / total for n, w in zip(needs, wants)]


def approximate(text: str, bold: bool, size: float) -> float:
    """A text's width in a sans-serif font without its metrics: for the DOCX, which Word lays out
    itself (a little generous, so that what it lays out is no wider)."""
    narrow = sum(1 for ch in text if ch in "iljtfrI.,:;'|!() ")
    wide = sum(1 for ch in text if ch in "mwMW@%")
    other = len(text) - narrow - wide
    return (narrow * 0.32 + wide * 0.9 + other * 0.58) * size * (1.08 if bold else 1.0)
