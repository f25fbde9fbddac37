"""A file's own scheme for a register's column: the legend, key or scoring sheet beside the data.

An asset workbook whose Classification column holds "C0".."C5" defines those levels on its Legend
sheet; a risk list scored 1 to 5 explains the scores on its Scales sheet. That table is the scheme
the document uses, never a generic one of the engine's.
"""
from __future__ import annotations

import re

from .reading import Reading
from .registers import KINDS, fits
from .tables import Table

_TITLE = re.compile(r"legend|\bkey\b|scheme|scale|scoring|lookup|definition|classification|levels?|criteria|rating", re.I)


def legend_for(reading: Reading, kind: str, column: str) -> Table | None:
    """The table in the register's own files that defines the values of its `column`: the one whose
    cells hold most of those values, else one titled as a legend or scale."""
    register = reading.register(kind)
    if register is None or column not in register.columns:
        return None
    at = register.columns.index(column)
    values = {row[at].strip().lower() for row in register.rows} - {"", "—"}
    best: tuple[int, Table] | None = None
    for table in reading.tables:
        if table.source not in register.sources or fits(table, KINDS[kind]) or len(table.rows) < 2:
            continue
        hits = max(len(values & {row[i].strip().lower() for row in table.rows}) for i in range(len(table.header)))
        titled = bool(_TITLE.search(table.title))
        score = hits * 2 + titled
        if (hits >= max(1, len(values) // 2) or titled) and (best is None or score > best[0]):
            best = (score, table)
    return best[1] if best else None
