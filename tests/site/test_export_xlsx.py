"""The tables back to Excel: one sheet per Markdown table, typed where unambiguous, never a formula."""
from __future__ import annotations

import datetime as dt
import io
import zipfile

import pytest
from openpyxl import load_workbook

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports import xlsx
from beyond_site.exports.formats import FORMATS
from tests import scripting
from tests.site.chat_support import client_for, new_run, record, released, workspace_with
from tests.site.export_support import ROWS, STEP_WARNING, rich_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def run(alice):
    return rich_run(workspace_with(member=alice), alice)


def book(body: bytes):
    return load_workbook(io.BytesIO(body))


def values(sheet) -> list[list]:
    return [[c.value for c in row] for row in sheet.iter_rows()]


def test_one_sheet_per_table_with_the_cells_of_the_markdown_tables(run):
    workbook = book(FORMATS["xlsx"].render(run, "client"))
    assert workbook.sheetnames == ["Document", "Register of processing", "Assets"]
    register = workbook["Register of processing"]
    assert values(register) == [
        ["Activity", "Legal basis", "Retention (years)", "Review date"],
        ["Payroll", "Art. 6(1)(b)", 6, dt.datetime(2027, 3, 14)],
        ["Recruitment", "Art. 6(1)(a)", 2, dt.datetime(2026, 11, 30)],
        ['=HYPERLINK("http://evil.example","x")', "Consent", 1, "n/a"]]
    assert register["D2"].number_format == "yyyy-mm-dd" and register["C2"].data_type == "n"
    assets = values(workbook["Assets"])
    assert assets[0] == ["ID", "Asset", "Owner"] and len(assets) == ROWS + 1
    assert assets[-1] == [f"A-{ROWS:03d}", f"Laptop {ROWS}", f"IT team {ROWS % 4}"]


def test_the_header_row_is_bold_and_frozen_and_the_columns_fit(run):
    sheet = book(FORMATS["xlsx"].render(run, "client"))["Register of processing"]
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref == "A1:D4"
    assert all(cell.font.b for cell in sheet[1])
    widths = {col: sheet.column_dimensions[col].width for col in "ABCD"}
    assert widths["A"] >= len('=HYPERLINK("http://evil.example","x")') and widths["C"] >= len("Retention (years)")
    assert all(width <= xlsx.MAX_WIDTH for width in widths.values())


def test_model_text_is_never_written_as_a_formula(run):
    body = FORMATS["xlsx"].render(run, "client")
    cell = book(body)["Register of processing"]["A4"]
    assert cell.data_type == "s" and cell.quotePrefix  # stays text even when edited in Excel
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        sheets = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")]
    assert not any("<f>" in s or "<f " in s for s in sheets)


def test_the_first_sheet_has_the_title_pages_facts_and_the_audit_editions_notes(run):
    client = values(book(FORMATS["xlsx"].render(run, "client"))["Document"])
    assert client[:6] == [["Title", "Records of processing for the HR department"], ["Organisation", "Acme"],
                          ["Version", "1"], ["Date", run.finished_at.date().isoformat()], ["Status", "Draft"],
                          ["Classification", "Internal"]]
    assert not any(STEP_WARNING in str(v) for row in client for v in row)
    audit = values(book(FORMATS["xlsx"].render(run, "audit"))["Document"])
    assert ["Part 2", f"Warning: {STEP_WARNING}"] in audit
    # The audit edition's title page parts come after the facts: the models and the verification.
    labels = [row[0] for row in audit]
    assert labels.index("Models") < labels.index("Verification") < labels.index("Notes")
    assert any(str(row[1]).startswith("Executor · ") for row in audit)
    assert not {"Models", "Verification"} & {row[0] for row in client}


def test_sheet_names_follow_excels_rules():
    names = xlsx._sheet_names(["Register: [draft] / v2?", "Register: [draft] / v2?", "register  draft   v2",
                               "A" * 40, "A" * 40, "History", "", "'quoted'"])
    assert names == ["Register draft v2", "Register draft v2 (2)", "register draft v2 (3)", "A" * 31,
                     "A" * 27 + " (2)", "History (2)", "Table 7", "quoted"]
    assert all(len(n) <= 31 for n in names)


@pytest.mark.parametrize("header,cells,expected", [
    ("Retention (years)", ["6", "10", "n/a"], [6, 10, None]),
    ("Clause", ["9.2", "9.10"], [None, None]),  # references stay text: 9.10 is not 9.1
    ("Score", ["9.2", "9.10"], [9.2, 9.1]),
    ("Headcount", ["1,200", "15"], [None, None]),  # 1,200 may be 1.2 or 1200: left as written
    ("Amount", ["1,200,000", "1.234,50", "1 500"], [1200000, 1234.5, 1500]),
    ("Share", ["12%", "7.5 %"], [0.12, 0.075]),
    ("Due", ["2027-03-14", "14 March 2027", "Mar 3, 2027"], [dt.date(2027, 3, 14)] * 2 + [dt.date(2027, 3, 3)]),
    ("Due", ["14/03/2027", "2027-03-14"], [None, None]),  # day-first or month-first: text
    ("Owner", ["IT", "42"], [None, None]),
    ("Code", ["007"], [None]),
])
def test_cells_are_typed_only_when_their_reading_is_unambiguous(header, cells, expected):
    reader = xlsx._column_reader(header, cells)
    got = [None if c.strip().casefold() in xlsx._PLACEHOLDERS else (reader(c) or (None,))[0] for c in cells]
    assert got == expected


def test_a_document_without_tables_gives_the_facts_sheet_alone(alice):
    run = new_run(workspace_with(member=alice), alice, task="Stakeholder email")
    record(run, Event(ev.BriefReady(brief=scripting.brief(1))), released(1, "Dear all,"), Event(ev.RunCompleted()))
    workbook = book(FORMATS["xlsx"].render(run, "client"))
    assert workbook.sheetnames == ["Document"]
    assert ["Tables", "The document has no table."] in values(workbook["Document"])


def test_the_export_link_gives_the_workbook(run, alice):
    response = client_for(alice).get(f"/w/{run.workspace.slug}/runs/{run.pk}/export.xlsx?edition=client")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert response["Content-Disposition"].endswith('records-of-processing-for-the-hr-department-v1.xlsx"')
    assert book(response.content).sheetnames[1:] == ["Register of processing", "Assets"]


@pytest.mark.parametrize("value", ["＝HYPERLINK(\"http://evil.example\",\"x\")", "＋1+2", "－3", "＠SUM(A1)",
                                   "=1+1", "@cmd", "\t=1"])
def test_a_cell_that_opens_like_a_formula_stays_text_full_width_forms_too(value):
    from openpyxl import Workbook

    cell = Workbook().active["A1"]
    xlsx.text_cell(cell, value)
    assert cell.data_type == "s" and cell.quotePrefix and cell.value == value
