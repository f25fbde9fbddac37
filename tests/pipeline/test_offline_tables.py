"""The offline engine reads tables from CSV, XLSX-as-Markdown and DOCX-as-text files and maps their columns."""
from __future__ import annotations

from pathlib import Path

from pipeline.context import Document
from pipeline.providers.offline.registers import KINDS, find_register
from pipeline.providers.offline.tables import map_columns, read_tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "offline"


def _doc(name: str, path: str, kind: str = "file") -> Document:
    return Document(name, (FIXTURES / path).read_text(encoding="utf-8"), "sha-" + name, kind)


def test_it_maps_messy_csv_headers_to_the_register_columns():
    header = ("Asset #", "asset_name", "Type", "Owner (team)", "Location", "Classification level", "Last reviewed",
              "Serial no.")
    assert map_columns(header, KINDS["assets"].columns) == {
        "ID": 0, "Asset": 1, "Category": 2, "Owner": 3, "Location": 4, "Classification": 5, "Last review": 6}


def test_it_gives_a_column_that_says_two_things_to_the_better_match():
    header = ("Risk ref", "Threat / scenario", "Affected asset", "Likelihood (1-5)", "Impact (1-5)", "Risk owner")
    mapping = map_columns(header, KINDS["risks"].columns)
    assert (mapping["ID"], mapping["Risk"], mapping["Asset"], mapping["Owner"]) == (0, 1, 2, 5)


def test_it_builds_an_asset_register_from_an_inventory_csv():
    register = find_register(read_tables([_doc("asset-inventory.csv", "brightpath/asset-inventory.csv")]), "assets")
    assert register.columns == ("ID", "Asset", "Category", "Owner", "Location", "Classification", "Last review")
    assert register.rows[0] == ("BP-001", "Transport management system (TMS)", "Software", "Operations",
                                "Azure UK South", "Confidential", "2025-11-04")
    assert register.rows[6][-1] == "—"  # the CCTV recorder has no review date in the file
    assert (register.total, register.missing, register.unused) == (10, ("Status",), ("Serial no.",))


def test_it_reads_each_sheet_of_a_spreadsheet_and_each_table_of_a_word_file():
    tables = read_tables([_doc("suppliers.xlsx", "brightpath/suppliers.xlsx.txt"),
                          _doc("processing-activities.docx", "brightpath/processing-activities.docx.txt")])
    assert [(t.source, t.title, len(t.rows)) for t in tables] == [
        ("suppliers.xlsx", "Suppliers", 4), ("suppliers.xlsx", "Notes", 1),
        ("processing-activities.docx", "Brightpath Freight: processing activities", 4)]
    processing = find_register(tables, "processing")
    assert processing.rows[2][:2] == ("Depot CCTV", "Security of the depot")
    assert "Lawful basis" in processing.columns and "Transfers outside the EEA" in processing.missing
    suppliers = find_register(tables, "suppliers")
    assert [row[0] for row in suppliers.rows] == ["Moorside Payroll Services", "Microsoft", "TrackLine BV",
                                                  "SecureShred Ltd"]


def test_it_does_not_take_a_risk_list_for_an_asset_inventory():
    tables = read_tables([_doc("risk-list.xlsx", "kestrel/risk-list.xlsx.txt")])
    assert find_register(tables, "assets") is None
    assert find_register(tables, "risks").rows[1][:2] == ("KR-02", "Misconfigured S3 bucket exposes customer exports")


def test_it_joins_the_parts_of_a_long_csv_and_skips_a_headless_fragment():
    text = (FIXTURES / "brightpath" / "asset-inventory.csv").read_text(encoding="utf-8")
    lines = text.splitlines()
    parts = [Document("inv.csv (part 1 of 2)", "\n".join(lines[:5]), "s"),
             Document("inv.csv (part 2 of 2)", "\n".join(lines[5:]), "s")]
    assert len(find_register(read_tables(parts), "assets").rows) == 10
    assert read_tables(parts[1:]) == []


def test_it_repeats_no_cell_the_citation_gate_would_read_as_a_reference():
    csv = "Asset,Owner,Location,Classification\nHR files,HR,SharePoint,see A.5.12\nLaptops,IT,Office,Internal\n"
    register = find_register(read_tables([Document("assets.csv", csv)]), "assets")
    assert register.rows[0][-1] == "(see assets.csv)" and register.rows[1][-1] == "Internal"


def test_a_pipe_inside_a_cell_is_kept_when_the_engine_writes_its_tables():
    from pipeline.providers.offline.sections import table

    written = table([("Asset", "Supplier"), ("Payroll | PayServe", "HR")])
    assert "| Payroll \\| PayServe | HR |" in written  # Markdown's escape: the reader shows a "|"
    [read] = read_tables([Document("register.md", written, "sha-register")])
    assert read.rows == (("Payroll | PayServe", "HR"),)
