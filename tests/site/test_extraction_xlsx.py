"""Excel workbooks: every sheet as a Markdown table, formulas as their cached values, and hostile
workbooks refused with a clear message (through the real worker subprocess)."""
from __future__ import annotations

import openpyxl
import pytest

from beyond_site.workspaces.extraction import ExtractionError, Limits
from tests.site.test_extraction import extract, sniff_kind
from pipeline.context import Document
from pipeline.providers.offline.registers import find_register
from pipeline.providers.offline.tables import read_tables
from tests.site.workbooks import (
    bomb_xlsx, external_link_xlsx, huge_dimension_xlsx, inventory_xlsx, many_rows_xlsx, rewrite, save,
)

MiB = 1024 * 1024


def refused(data: bytes, code: str, limits: Limits = Limits()) -> str:
    with pytest.raises(ExtractionError) as caught:
        extract(data, "book.xlsx", limits)
    assert caught.value.code == code, (caught.value.code, str(caught.value))
    assert "Traceback" not in str(caught.value)
    return str(caught.value)


def test_it_turns_each_sheet_into_a_markdown_table_after_a_sheet_line():
    result = extract(inventory_xlsx(), "inventory.xlsx")
    assert (result.kind, result.sheets, result.pages) == ("xlsx", 2, None)
    assert result.mime == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    lines = result.text.split("\n")
    assert lines[:4] == ["## Sheet: Inventory", "",
                         "| Asset # | Asset | Type | Owner (team) | Location | Classification level | Last reviewed | Value |",
                         "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    assert "| XL-002 | Staff laptops \\| fleet | Hardware | IT | Lyon office | Internal | 2025-11-04 | 640 |" in lines
    assert "## Sheet: Notes" in lines and "| Reviewed by the ISM in November. |" in lines


def test_a_formula_gives_the_value_excel_cached_for_it():
    lines = extract(inventory_xlsx(), "inventory.xlsx").text.split("\n")
    assert "|  |  |  |  |  |  |  | 2140 |" in lines
    assert "SUM" not in "\n".join(lines)


def test_the_offline_engine_reads_the_inventory_as_an_asset_register():
    text = extract(inventory_xlsx(), "inventory.xlsx").text
    register = find_register(read_tables([Document("inventory.xlsx", text, "sha")]), "assets")
    assert [row[0] for row in register.rows[:3]] == ["XL-001", "XL-002", "XL-003"]
    assert register.rows[1][1] == "Staff laptops | fleet"  # the escaped pipe stays in its cell


def test_dates_and_numbers_read_as_people_write_them():
    import datetime

    workbook = openpyxl.Workbook()
    workbook.active.append(["Date", "Time", "Ratio", "Count", "Flag"])
    workbook.active.append([datetime.datetime(2026, 3, 1), datetime.datetime(2026, 3, 1, 9, 30), 0.25, 7.0, True])
    lines = extract(save(workbook), "x.xlsx").text.split("\n")
    assert "| 2026-03-01 | 2026-03-01T09:30:00 | 0.25 | 7 | TRUE |" in lines


def test_it_sniffs_a_workbook_by_content():
    assert sniff_kind(inventory_xlsx(), "renamed.txt") == "xlsx"


def test_it_refuses_a_zip_bomb_before_parsing():
    bomb = bomb_xlsx()
    assert len(bomb) < 1 * MiB
    message = refused(bomb, "zip_bomb")
    assert message.startswith("This Excel workbook was refused because") and "expands" in message


def test_it_refuses_a_sheet_declared_down_to_the_last_row():
    message = refused(huge_dimension_xlsx(), "too_large")
    assert "rows" in message or "cells" in message


def test_it_refuses_too_many_rows_naming_the_sheet():
    message = refused(many_rows_xlsx(60), "too_large", Limits(max_sheet_rows=50))
    assert message == ("The sheet “Log” of this workbook has more than 50 rows, which is the limit. "
                       "Split it, or upload the part the document needs.")


def test_it_refuses_too_many_cells():
    message = refused(many_rows_xlsx(60), "too_large", Limits(max_cells=100))
    assert "more than 100 cells" in message


def test_it_refuses_external_links_with_what_to_do():
    message = refused(external_link_xlsx(), "external_links")
    assert "Break Link" in message


def test_it_refuses_external_data_connections():
    data = rewrite(inventory_xlsx(), {}, {"xl/connections.xml": b"<connections/>"})
    refused(data, "external_links")


def test_it_refuses_a_workbook_openpyxl_cannot_parse():
    data = rewrite(inventory_xlsx(), {"xl/workbook.xml": lambda xml: b"<not a workbook"})
    refused(data, "corrupt")
