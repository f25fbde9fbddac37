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
from openpyxl.worksheet.datavalidation import DataValidation

from beyond_site.exports.blocks import Callout, Code, Heading, ListBlock, Paragraph, Table, plain
from beyond_site.exports.client import PART
from beyond_site.exports.document import Deliverable
from beyond_site.lib.csv_guard import FORMULA_STARTS  # the one list of formula triggers, full-width ones too
from pipeline.months import MONTH_NUMBERS

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
    return _joined(found)


def _joined(found: list[_Found]) -> list[_Found]:
    """A table split over parts ("Applicability table, part 2 of 3") is one sheet."""
    out: list[_Found] = []
    for item in found:
        match = PART.match(item.name)
        name = match["title"] if match else item.name
        previous = out[-1] if out else None
        if match and previous is not None and previous.name == name and _same_columns(previous.table, item.table):
            previous.table.rows.extend(item.table.rows)
            continue
        out.append(_Found(name, Table(item.table.header, list(item.table.rows), item.table.align)))
    return out


def _same_columns(a: Table, b: Table) -> bool:
    return [plain(c).strip().lower() for c in a.header] == [plain(c).strip().lower() for c in b.header]


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
    header, rows = _ids_apart(header, rows)
    width = len(header)
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
        _closed_set(sheet, c + 1, header[c], [r[c] for r in rows], readers[c])


# -- ids apart from names, closed sets -------------------------------------------------------------

#: "ISO/IEC 27001:2022 A.5.1 (Policies for information security)", "A.5.1 Policies...", "CC6.1 - Logical access".
_ID_AND_NAME = re.compile(r"^(?P<id>.{0,40}?(?:[A-Z]{1,3}[.\-]?\d+(?:[.\-]\d+)*(?:\(\d+\))*|Art\.\s?\d+(?:\(\d+\))*"
                          r"|\d+(?:\.\d+)+))\s*(?:\((?P<name1>[^()]+)\)|[-–:]\s*(?P<name2>.+)|\s(?P<name3>[A-Z].+))$")


def _ids_apart(header: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """A column whose cells are a reference and its name ("A.5.1 (Policies for ...)") as two
    columns, the id and the name, so that a register sorts and filters on either."""
    for c in range(len(header)):
        split = [_ID_AND_NAME.match(r[c]) for r in rows if r[c].strip()]
        if split and all(split) and len(split) >= max(1, len(rows) // 2):
            header = header[:c] + [header[c] or "Reference", f"{header[c] or 'Reference'} name"] + header[c + 1:]
            out = []
            for r in rows:
                m = _ID_AND_NAME.match(r[c]) if r[c].strip() else None
                name = (m["name1"] or m["name2"] or m["name3"]).strip() if m else ""
                out.append(r[:c] + [m["id"].strip() if m else r[c], name] + r[c + 1:])
            return header, out
    return header, rows


#: Words of a header whose column takes one of a few values (a list to pick from in Excel).
_CLOSED_HEADER = re.compile(r"\b(?:applicab\w*|status|likelihood|impact|severity|criticality|priority|level|rating"
                            r"|risk|decision|treatment|signed|in place|yes/no|applies|result|outcome)\b", re.I)
_MOST_CHOICES = 8


def _closed_set(sheet, column: int, header: str, values: list[str], reader) -> None:
    """A data-validation list on a column with a closed set of values: one a header names as such
    (applicability, status, likelihood...), with few distinct values each used more than once."""
    if reader is not _text_reader and reader is not _yes_no:
        return
    distinct = sorted({v.strip() for v in values if v.strip() and v.strip().casefold() not in _PLACEHOLDERS})
    if not (2 <= len(distinct) <= _MOST_CHOICES) or len(values) < 2 * len(distinct) and not _CLOSED_HEADER.search(header):
        return
    if not _CLOSED_HEADER.search(header) and reader is not _yes_no:
        return
    listed = ",".join(v.replace('"', "'").replace(",", " ") for v in distinct)
    if len(listed) > 250:  # Excel's limit on a list typed in the rule
        return
    rule = DataValidation(type="list", formula1=f'"{listed}"', allow_blank=True)
    rule.error, rule.errorTitle = f"Choose one of: {', '.join(distinct)}.", header[:32] or "Value"
    sheet.add_data_validation(rule)
    rule.add(f"{get_column_letter(column)}2:{get_column_letter(column)}{len(values) + 1}")


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
        if match and match.group(2).casefold() in MONTH_NUMBERS:
            return dt.date(int(match.group(3)), MONTH_NUMBERS[match.group(2).casefold()], int(match.group(1))), "yyyy-mm-dd"
        match = _MONTH_DAY_YEAR.match(text)
        if match and match.group(1).casefold() in MONTH_NUMBERS:
            return dt.date(int(match.group(3)), MONTH_NUMBERS[match.group(1).casefold()], int(match.group(2))), "yyyy-mm-dd"
    except ValueError:  # 2027-02-30
        return None
    return None


_YES = {"yes", "y", "true"}
_NO = {"no", "n", "false"}


def _yes_no(text: str):
    low = text.strip().casefold()
    return (True, "General") if low in _YES else (False, "General") if low in _NO else None


def _text_reader(value: str):
    return None


def _column_reader(header: str, values: list[str]):
    """How a column's cells are read: as the one kind of value all its cells are (numbers,
    percentages, dates, yes or no; placeholders such as "n/a" aside), else as text. A column of
    references ("Clause", "Control", "ID") is text whatever its cells look like."""
    if _REFERENCE_HEADER.search(header):
        return _text_reader
    filled = [v for v in values if v.strip().casefold() not in _PLACEHOLDERS]
    if not filled:
        return _text_reader
    for reader in (_number, _percent, _date, _yes_no):
        if all(reader(v) is not None for v in filled):
            return reader
    return _text_reader
