"""Interval bar charts as plain geometry for a server-rendered SVG (templates/calibration/_chart.html).

A chart is groups of rows; each row is a rate in [0, 1] drawn as a bar, its Wilson 95% interval as
a whisker, and a note ("3/34"). Colours come from CSS classes (static/calibration.css): the CSP
allows no inline style, and no script is needed to draw a bar.
"""
from __future__ import annotations

from dataclasses import dataclass

WIDTH = 760
LABEL_X = 8            # row labels, left-aligned
PLOT_X = 250           # where 0% is
PLOT_W = 380           # 0% to 100%
NOTE_X = PLOT_X + PLOT_W + 10
TOP = 26               # room for the axis labels
ROW_H = 20
GROUP_H = 22
BAR_H = 12
TICKS = (0, 25, 50, 75, 100)


@dataclass(frozen=True)
class Row:
    label: str
    rate: float | None            # None: nothing to measure
    ci: tuple[float, float] | None
    note: str
    series: str = ""              # a CSS modifier: the contract, or "labels"


def _x(value: float) -> float:
    return round(PLOT_X + max(0.0, min(1.0, value)) * PLOT_W, 1)


def interval_chart(title: str, groups: list[tuple[str, list[Row]]]) -> dict:
    """Everything the template needs to draw `groups`, positions precomputed."""
    y, drawn = TOP, []
    for name, rows in groups:
        if not rows:
            continue
        drawn.append({"kind": "group", "label": name, "y": y + GROUP_H - 7})
        y += GROUP_H
        for row in rows:
            middle = y + ROW_H / 2
            item = {"kind": "row", "label": row.label, "note": row.note, "series": row.series or "default",
                    "text_y": middle + 4, "bar_y": middle - BAR_H / 2, "bar_h": BAR_H, "middle": middle,
                    "x0": PLOT_X, "empty": row.rate is None, "has_ci": row.ci is not None and row.rate is not None}
            if row.rate is not None:
                item["bar_w"] = round(_x(row.rate) - PLOT_X, 1)
            if item["has_ci"]:
                item["lo"], item["hi"] = _x(row.ci[0]), _x(row.ci[1])
                item["cap_top"], item["cap_bottom"] = middle - 4, middle + 4
            drawn.append(item)
            y += ROW_H
    height = y + 8
    return {"title": title, "width": WIDTH, "height": height, "items": drawn, "note_x": NOTE_X, "label_x": LABEL_X,
            "ticks": [{"x": _x(t / 100), "label": f"{t}%"} for t in TICKS], "axis_y": TOP - 10,
            "grid_top": TOP - 4, "grid_bottom": height - 4, "empty": not drawn}


def percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value} s"


def time_left(value: float | None) -> str:
    """A calibration's time left at its pace so far, in words ("" before the first result)."""
    if value is None:
        return ""
    minutes = round(value / 60)
    if minutes < 1:
        return "under a minute left"
    if minutes < 90:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60:02d} min left"
