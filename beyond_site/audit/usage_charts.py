"""Stacked horizontal bar charts as plain geometry for a server-rendered SVG (templates/audit/_usage_chart.html).

One row per bar (a month, a model, a status), each bar made of segments (a role, a token kind),
and a note at the end of the row ("$1.20, 2 calls not reported"). Colours come from CSS classes
(static/usage.css, `usage-s0` to `usage-s5` by the series' position): the CSP allows no inline
style, and no script is needed to draw a bar. Every chart is shown beside a table of the same
numbers, which is its text equivalent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

WIDTH = 680
LABEL_X = 6            # row labels, left-aligned
PLOT_X = 150           # where 0 is
PLOT_W = 320
NOTE_X = PLOT_X + PLOT_W + 8
TOP = 24               # room for the axis labels
ROW_H = 22
BAR_H = 14
LABEL_CHARS = 22       # a longer label is cut, with its full text in the row's <title>
SERIES_CLASSES = 6     # usage-s0 .. usage-s5 in the stylesheet


@dataclass(frozen=True)
class Bar:
    label: str
    segments: tuple[tuple[str, float], ...]   # (series key, value), in series order
    note: str = ""


NICE = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)


def nice_ceiling(value: float) -> float:
    """The smallest round number (one of NICE times a power of ten) that is >= value."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in NICE:
        if step * power >= value * (1 - 1e-12):
            return step * power
    return 10 * power


def axis_end(value: float, *, whole: bool = False) -> float:
    """Where the axis ends for a largest bar of `value`: four equal steps, whole numbers for counts."""
    if not whole:
        return nice_ceiling(value)
    return 4 * max(1, math.ceil(nice_ceiling(math.ceil(value / 4))))


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def bar_chart(title: str, bars: list[Bar], series: list[tuple[str, str]],
              tick_label: Callable[[float], str] = lambda v: f"{v:g}", whole: bool = False) -> dict:
    """Everything the template needs to draw `bars`, positions precomputed.

    `series`: (key, label) pairs in drawing order; a segment's colour is its series' position.
    `whole`: the values are counts, so the ticks fall on whole numbers.
    """
    index = {key: i % SERIES_CLASSES for i, (key, _) in enumerate(series)}
    top = axis_end(max((sum(v for _, v in b.segments) for b in bars), default=0.0), whole=whole)
    scale = PLOT_W / top
    rows, y = [], TOP
    for bar in bars:
        middle = y + ROW_H / 2
        x, parts = float(PLOT_X), []
        for key, value in bar.segments:
            if value <= 0:
                continue
            width = value * scale
            parts.append({"x": round(x, 2), "w": round(max(width, 0.5), 2), "cls": f"usage-s{index.get(key, 0)}",
                          "series": dict(series).get(key, key), "value": value})
            x += width
        rows.append({"label": _short(bar.label), "full_label": bar.label, "note": bar.note, "parts": parts,
                     "text_y": middle + 4, "bar_y": middle - BAR_H / 2, "bar_h": BAR_H})
        y += ROW_H
    height = y + 8
    ticks = [{"x": round(PLOT_X + PLOT_W * i / 4, 1), "label": tick_label(top * i / 4)} for i in range(5)]
    return {"title": title, "width": WIDTH, "height": height, "rows": rows, "label_x": LABEL_X, "note_x": NOTE_X,
            "ticks": ticks, "axis_y": TOP - 8, "grid_top": TOP - 4, "grid_bottom": height - 4,
            "legend": [{"label": label, "cls": f"usage-s{index[key]}"} for key, label in series] if len(series) > 1 else [],
            "empty": not bars or all(not r["parts"] for r in rows)}
