"""Write a deliverable's tables (exports.document) as an Excel workbook, where a compliance officer
keeps registers and records of processing.

The first sheet holds the title page's facts (and, in the audit edition, the title page's parts:
models, verification, the verifier's calibration, the recap; then the notes on sections), with a
list of the tables; then one sheet per Markdown table of the document, named after the
heading it stands under, within Excel's rules for sheet names (31 characters, none of []:*?/\\,
unique whatever the case). Each table's header row is bold and frozen, with a filter; columns are
as wide as what they hold; numbers, percentages and dates are typed as such when their reading is
unambiguous (a column of clause or control references stays text), so they sort and sum.

Nothing from a model is ever written as a formula: every text cell is stored as text, and one that
a spreadsheet would read as a formula once edited (=, +, -, @) is marked as quoted text, as Excel
itself marks what is typed after an apostrophe.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from beyond_site.exports.blocks import Callout, Code, Heading, ListBlock, Paragraph, Table, plain
from beyond_site.exports.document import Deliverable

#: What a spreadsheet reads as the start of a formula (the CSV exports' guard uses the same list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
SHEET_CHARS = 31
CELL_CHARS = 32767  # Excel's limit on a cell's text
MAX_WIDTH, MIN_WIDTH = 60, 8
_NOT_IN_SHEET_NAMES = re.compile(r"[\[\]:*?/\\]")
#: Columns whose values are references, not quantities, whatever they look like ("9.10" is a clause).
_REFERENCE_HEADER = re.compile(r"\b(id|ref|reference|clause|control|article|section|version|phone|telephone|"
                               r"code|postcode|zip|iban|account)s?\b", re.IGNORECASE)
#: What a table says instead of a value: left as text without making its column text.
_PLACEHOLDERS = {"", "-", "–", "—", "n/a", "na", "tbc", "tbd", "none", "?"}


def text_cell(cell, value: str) -> None:
    """Store `value` in `cell` as text, never as a formula (the one guard for every text cell)."""
    value = value if len(value) <= CELL_CHARS else value[:CELL_CHARS - 1] + "…"
    cell.value = value
    cell.data_type = "s"  # openpyxl takes a string that starts with "=" for a formula
    if value.startswith(FORMULA_STARTS):
        cell.quotePrefix = True


@dataclass
class _Found:
    name: str  # the heading it stands under
    table: Table


def write(deliverable: Deliverable, target) -> None:
    d = deliverable
    book = Workbook()
    first = book.active
    first.title = "Document"
    found = _tables(d)
    names = _sheet_names([f.name for f in found])
    _facts(first, d, list(zip(names, found)))
    for name, item in zip(names, found):
        _table(book.create_sheet(name), item.table)
    book.properties.title = d.title[:250]
    book.properties.creator = "Beyond"
    book.save(target)


def _facts(sheet, d: Deliverable, sheets: list[tuple[str, _Found]]) -> None:
    rows = [("Title", d.title), *d.facts]
    for n, (label, value) in enumerate(rows, start=1):
        text_cell(sheet.cell(n, 1), label)
        text_cell(sheet.cell(n, 2), value)
        sheet.cell(n, 1).font = Font(bold=True)
    row = len(rows) + 2
    for part in d.parts:
        row = _part(sheet, part, row)
    if d.notes:
        text_cell(sheet.cell(row, 1), "Notes")
        sheet.cell(row, 1).font = Font(bold=True)
        for section, note in d.notes:
            row += 1
            text_cell(sheet.cell(row, 1), section.title)
            text_cell(sheet.cell(row, 2), note)
        row += 2
    text_cell(sheet.cell(row, 1), "Tables")
    sheet.cell(row, 1).font = Font(bold=True)
    if not sheets:
        text_cell(sheet.cell(row, 2), "The document has no table.")
    for name, item in sheets:
        text_cell(sheet.cell(row, 2), f"{name}: {len(item.table.rows)} rows")
        row += 1
    sheet.column_dimensions["A"].width = 24
    sheet.column_dimensions["B"].width = 90
    for cells in sheet.iter_rows(min_col=2, max_col=2):
        cells[0].alignment = Alignment(wrap_text=True, vertical="top")


def _part(sheet, part, row: int) -> int:
    """One of the audit edition's title page parts as rows of text: its title in bold, then a row
    per paragraph, list item and table row (cells joined by " · "). Returns the next free row."""
    if part.title:
        text_cell(sheet.cell(row, 1), part.title)
        sheet.cell(row, 1).font = Font(bold=True)
    for text in _lines(part.blocks):
        text_cell(sheet.cell(row, 2), text)
        row += 1
    return row + 1


def _lines(blocks: list) -> list[str]:
    lines = []
    for block in blocks:
        if isinstance(block, (Heading, Paragraph, Callout)):
            lines.append(plain(block.spans))
        elif isinstance(block, Code):
            lines.append(block.text)
        elif isinstance(block, Table):
            lines += [" · ".join(plain(cell) for cell in cells) for cells in (block.header, *block.rows)]
        elif isinstance(block, ListBlock):
            lines += [" ".join(_lines(item)) for item in block.items]
    return [text for text in lines if text.strip()]


def _tables(d: Deliverable) -> list[_Found]:
    """Every table of the document's body, with the heading it stands under (its section's title
    before the section's first heading)."""
    found = []

    def walk(blocks, under: str):
        for block in blocks:
            if isinstance(block, Heading):
                under = " ".join(plain(block.spans).split()) or under
            elif isinstance(block, Table):
                found.append(_Found(under, block))
            elif isinstance(block, ListBlock):
                for item in block.items:
                    walk(item, under)
        return under

    for section in d.sections:
        if section.released:
            walk(section.blocks, section.title)
    return found


def _sheet_names(wanted: list[str]) -> list[str]:
    """Sheet names Excel accepts, one per table, unique whatever the case."""
    taken = {"document", "history"}  # the first sheet's; Excel keeps "History" for itself
    names = []
    for n, name in enumerate(wanted, start=1):
        base = " ".join(_NOT_IN_SHEET_NAMES.sub(" ", name).split()).strip("'") or f"Table {n}"
        candidate, k = base[:SHEET_CHARS].rstrip(" '"), 1
        while candidate.casefold() in taken:
            k += 1
            suffix = f" ({k})"
            candidate = base[:SHEET_CHARS - len(suffix)].rstrip(" '") + suffix
        taken.add(candidate.casefold())
        names.append(candidate)
    return names


def _table(sheet, table: Table) -> None:
    header = [" ".join(plain(c).split()) for c in table.header]
    rows = [[" ".join(plain(c).split()) for c in row] for row in table.rows]
    width = max(len(r) for r in [header, *rows])
    header += [""] * (width - len(header))
    rows = [r + [""] * (width - len(r)) for r in rows]
    readers = [_column_reader(header[c], [r[c] for r in rows]) for c in range(width)]
    for c, text in enumerate(header, start=1):
        cell = sheet.cell(1, c)
        text_cell(cell, text)
        cell.font = Font(bold=True)
    for r, row in enumerate(rows, start=2):
        for c, text in enumerate(row, start=1):
            cell = sheet.cell(r, c)
            typed = readers[c - 1](text) if text.strip().casefold() not in _PLACEHOLDERS else None
            if typed is None:
                text_cell(cell, text)
            else:
                cell.value, cell.number_format = typed
            cell.alignment = Alignment(wrap_text=len(text) > MAX_WIDTH, vertical="top")
    sheet.freeze_panes = "A2"
    sheet.auto_filter.ref = f"A1:{get_column_letter(width)}{len(rows) + 1}"
    for c in range(width):
        longest = max([len(header[c]) + 3, *(len(r[c]) for r in rows)])  # + the filter's button
        sheet.column_dimensions[get_column_letter(c + 1)].width = min(max(longest + 2, MIN_WIDTH), MAX_WIDTH)


# -- typed values ----------------------------------------------------------------------------------

_INT = re.compile(r"^[+-]?(?:0|[1-9]\d{0,14})$")
_DECIMAL = re.compile(r"^[+-]?(?:0|[1-9]\d{0,14})\.(\d{1,10})$")
#: Grouped thousands, read only where one reading is possible: two groups or more ("1,200,000"),
#: or groups then the other mark as decimal point ("1,234.50", "1.234,50"), or spaces ("1 200").
_GROUPED = [
    (re.compile(r"^([+-]?[1-9]\d{0,2}(?:,\d{3}){2,})$"), ",", None),
    (re.compile(r"^([+-]?[1-9]\d{0,2}(?:,\d{3})+)\.(\d{1,10})$"), ",", "."),
    (re.compile(r"^([+-]?[1-9]\d{0,2}(?:\.\d{3}){2,})$"), ".", None),
    (re.compile(r"^([+-]?[1-9]\d{0,2}(?:\.\d{3})+),(\d{1,10})$"), ".", ","),
    (re.compile(r"^([+-]?[1-9]\d{0,2}(?:[  \u202f]\d{3})+)(?:[.,](\d{1,10}))?$"), " ", None),
]
_PERCENT = re.compile(r"^([+-]?\d{1,15}(?:\.\d{1,10})?)\s?%$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTHS = {m: n for n, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")], start=1) for m in names}
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2})\s+([A-Za-z]+)\.?\s+(\d{4})$")
_MONTH_DAY_YEAR = re.compile(r"^([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})$")


def _number(text: str):
    text = text.strip()
    if _INT.match(text):
        return int(text), "0"
    match = _DECIMAL.match(text)
    if match:
        return float(text), "0." + "0" * len(match.group(1))
    for pattern, group, point in _GROUPED:
        match = pattern.match(text)
        if match:
            whole = re.sub(r"[,.  \u202f]", "", match.group(1))
            decimals = match.group(2) if match.lastindex and match.lastindex >= 2 else None
            if decimals:
                return float(f"{whole}.{decimals}"), "#,##0." + "0" * len(decimals)
            return int(whole), "#,##0"
    return None


def _percent(text: str):
    match = _PERCENT.match(text.strip())
    if not match:
        return None
    digits = match.group(1).partition(".")[2]
    return float(match.group(1)) / 100, "0" + ("." + "0" * len(digits) if digits else "") + "%"


def _date(text: str):
    text = text.strip()
    try:
        match = _ISO_DATE.match(text)
        if match:
            return dt.date(*map(int, match.groups())), "yyyy-mm-dd"
        match = _DAY_MONTH_YEAR.match(text)
        if match and match.group(2).casefold() in _MONTHS:
            return dt.date(int(match.group(3)), _MONTHS[match.group(2).casefold()], int(match.group(1))), "yyyy-mm-dd"
        match = _MONTH_DAY_YEAR.match(text)
        if match and match.group(1).casefold() in _MONTHS:
            return dt.date(int(match.group(3)), _MONTHS[match.group(1).casefold()], int(match.group(2))), "yyyy-mm-dd"
    except ValueError:  # 2027-02-30
        return None
    return None


def _column_reader(header: str, values: list[str]):
    """How a column's cells are read: as the one kind of value all its cells are (numbers,
    percentages or dates; placeholders such as "n/a" aside), else as text. A column of
    references ("Clause", "Control", "ID") is text whatever its cells look like."""
    text = lambda value: None  # noqa: E731
    if _REFERENCE_HEADER.search(header):
        return text
    filled = [v for v in values if v.strip().casefold() not in _PLACEHOLDERS]
    if not filled:
        return text
    for reader in (_number, _percent, _date):
        if all(reader(v) is not None for v in filled):
            return reader
    return text
