"""The client edition as a customer receives it (docs/deliverables.md, "The client edition"): no source
tags, file names, workspace wording or engine placeholders; open points gathered as numbered open
items at the end; a table split over parts one table again; sources as endnotes only when asked."""
from __future__ import annotations

import pytest
import io

from docx import Document as Docx
from docx.oxml.ns import qn
from openpyxl import load_workbook

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports.document import Options
from beyond_site.exports.formats import FORMATS
from tests import scripting
from tests.site.chat_support import new_run, record, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)

PROFILE = """## Profile

Harbourline runs two depots in Cork (workspace memory). Backups go to a second region (harbourline-it-policy.docx).
The workspace's memories say nothing about the insurer: to be confirmed.

| Question | Answer | Source |
|---|---|---|
| Who is the DPO? | Aoife Byrne | workspace memory |
| Is there cyber insurance? | Not answered: no fact in the workspace | — |
| Where are backups kept? | A second region | harbourline-it-policy.docx |
"""
PART = """## Applicability table, part {k} of 2

| Control | Applicable | Justification |
|---|---|---|
| {control} | Yes | {why} |
"""


def step(k: int, title: str, content: str) -> Event:
    return Event(ev.StepReleased(step=k, title=title, badge="passed", content=content, checked_by="model"))


@pytest.fixture
def run(alice):
    run = new_run(workspace_with(member=alice), alice, task="Answer the customer's questions and the SoA")
    brief = scripting.brief(3)
    brief["title"] = "Security answers for Harbourline"
    record(run, Event(ev.BriefReady(brief=brief)), step(1, "Profile", PROFILE),
           step(2, "Applicability table, part 1 of 2", PART.format(k=1, control="A.5.1", why="Policies in place")),
           step(3, "Applicability table, part 2 of 2", PART.format(k=2, control="A.5.2", why="Owner to be confirmed")),
           Event(ev.RunCompleted()))
    return run


def client_text(run, ext: str, options: Options = Options()) -> str:
    body = FORMATS[ext].render(run, "client", options)
    if ext == "docx":  # the body's paragraphs and table cells in reading order
        body_xml = Docx(io.BytesIO(body)).element.body
        return "\n".join("".join(t.text or "" for t in para.iter(qn("w:t"))) for para in body_xml.iter(qn("w:p")))
    return body.decode().replace("\\", "")


@pytest.mark.parametrize("ext", ["md", "docx"])
def test_the_client_edition_has_no_sources_files_or_workspace_wording(run, ext):
    text = client_text(run, ext)
    for said in ("workspace memory", ".docx", "workspace", "Not answered", "Source", "part 1 of", "part 2 of"):
        assert said.lower() not in text.lower(), said
    assert "Harbourline runs two depots in Cork." in text and "Aoife Byrne" in text


@pytest.mark.parametrize("ext", ["md", "docx"])
def test_open_points_are_numbered_open_items_gathered_at_the_end(run, ext):
    text = client_text(run, ext)
    body, _, items = text.partition("Open items")
    assert items, "an Open items list"
    assert "to be confirmed" not in body.lower()
    assert "open item 1" in body.lower() and "open item 3" in body.lower()
    assert "Owner" in items and "cyber insurance" in items


def test_a_table_split_over_parts_is_one_table(run):
    text = client_text(run, "md")
    assert text.count("| Control | Applicable | Justification |") == 1
    assert text.count("## Applicability table") == 1 and "A.5.1" in text and "A.5.2" in text


def test_a_split_table_is_one_sheet_of_the_workbook(run):
    book = load_workbook(io.BytesIO(FORMATS["xlsx"].render(run, "client")))
    named = [name for name in book.sheetnames if name.startswith("Applicability")]
    assert named == ["Applicability table"]
    assert book[named[0]].max_row == 3  # the header and both parts' rows


def test_sources_become_numbered_endnotes_when_asked(run):
    text = client_text(run, "md", Options(endnotes=True))
    assert "depots in Cork [1]." in text and "second region [2]." in text
    _, _, sources = text.partition("## Sources")
    assert "harbourline-it-policy.docx" in sources


def test_the_audit_edition_keeps_everything_as_released(run):
    text = FORMATS["md"].render(run, "audit").decode()
    assert "(workspace memory)" in text and "to be confirmed" in text and "part 1 of 2" in text
