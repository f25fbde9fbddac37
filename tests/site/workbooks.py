"""Excel workbooks built in the tests: an inventory with formulas, and hostile ones (no tests here)."""
from __future__ import annotations

import io
import re
import zipfile

import openpyxl

INVENTORY = [
    ("Asset #", "Asset", "Type", "Owner (team)", "Location", "Classification level", "Last reviewed", "Value"),
    ("XL-001", "Payroll system", "Software", "Finance", "PayServe (hosted)", "Confidential", "2025-10-01", 1200),
    ("XL-002", "Staff laptops | fleet", "Hardware", "IT", "Lyon office", "Internal", "2025-11-04", 640),
    ("XL-003", "Patient records (MediFlow)", "Software", "Clinical", "MediFlow SA, France", "Restricted", "2025-09-12", 300),
]


def save(workbook) -> bytes:
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def inventory_xlsx(marker: str = "") -> bytes:
    """An asset inventory sheet (a cell carries `marker` if given), a totals row whose formula has a
    cached value, and a second sheet."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Inventory"
    for row in INVENTORY:
        sheet.append(list(row))
    if marker:
        sheet["B5"] = marker
    sheet["H6"] = "=SUM(H2:H4)"
    workbook.create_sheet("Notes").append(["Reviewed by the ISM in November."])
    return with_cached_value(save(workbook), "xl/worksheets/sheet1.xml", "H6", "2140")


def with_cached_value(data: bytes, member: str, cell: str, value: str) -> bytes:
    """`data` with a cached value written after the formula of `cell` (as Excel does on saving)."""
    def patch(xml: bytes) -> bytes:
        pattern = re.compile(rf'(<c r="{cell}"[^>]*>\s*<f>[^<]*</f>)(\s*<v>\s*</v>|\s*<v/>)?'.encode())
        patched, n = pattern.subn(lambda m: m.group(1) + f"<v>{value}</v>".encode(), xml)
        assert n == 1, xml[:500]
        return patched
    return rewrite(data, {member: patch})


def rewrite(data: bytes, changes: dict, extra: dict[str, bytes] | None = None) -> bytes:
    """A copy of the ZIP `data` with members changed by {name: function(bytes) -> bytes} and added."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            target.writestr(info.filename, changes.get(info.filename, lambda b: b)(content))
        for name, content in (extra or {}).items():
            target.writestr(name, content)
    return out.getvalue()


def huge_dimension_xlsx() -> bytes:
    """One real cell, but rows declared down to Excel's last row: padding would explode."""
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "only cell"
    def patch(xml: bytes) -> bytes:
        xml = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1:XFD1048576"/>', xml)
        return xml.replace(b"</sheetData>", b'<row r="1048576"><c r="XFD1048576" t="inlineStr">'
                                            b"<is><t>far away</t></is></c></row></sheetData>")
    return rewrite(save(workbook), {"xl/worksheets/sheet1.xml": patch})


def many_rows_xlsx(rows: int) -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Log"
    for n in range(rows):
        sheet.append([n, "x"])
    return save(workbook)


def bomb_xlsx() -> bytes:
    """A small upload whose sheet XML inflates hugely (whitespace compresses ~1000:1)."""
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "bomb"
    padding = b" " * (60 * 1000 * 1000)
    return rewrite(save(workbook), {"xl/worksheets/sheet1.xml": lambda xml: xml.replace(b"<sheetData>", b"<sheetData>" + padding)})


def external_link_xlsx() -> bytes:
    """A workbook with an external link part, as Excel writes one for ='[other.xlsx]Sheet1'!A1."""
    link = (b'<?xml version="1.0" encoding="UTF-8"?><externalLink xmlns="http://schemas.openxmlformats.org/'
            b'spreadsheetml/2006/main"><externalBook r:id="rId1" xmlns:r="http://schemas.openxmlformats.org/'
            b'officeDocument/2006/relationships"><sheetNames><sheetName val="Sheet1"/></sheetNames></externalBook>'
            b"</externalLink>")
    return rewrite(inventory_xlsx(), {}, {"xl/externalLinks/externalLink1.xml": link})
