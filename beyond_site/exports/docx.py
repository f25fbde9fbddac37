"""Write a deliverable (exports.document) as a Word document with python-docx.

Real Word structure throughout: the title page, headings in Word's heading styles, Markdown tables
as Word tables, lists, bold, italic, code and links (absolute http, https and mailto only); each
verification warning is a Word comment on the heading of the section it concerns, so the body
reads as the document and the review notes sit in the margin.
"""
from __future__ import annotations

import datetime as dt

from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Cm, Pt, RGBColor
from docx.text.run import Run

from pipeline import badges
from beyond_site.exports.blocks import BREAK, Code, Heading, ListBlock, Paragraph, Rule, Span, Table, starts_with_heading
from beyond_site.exports import specifics
from beyond_site.exports.document import (RECAP_CHECKED, SOURCES_NOTE, WARNING_AUTHOR, Deliverable,
                                          Section, offline_note)

LINK_COLOUR = RGBColor(0x1F, 0x4E, 0xB4)
ALIGN = {"left": WD_ALIGN_PARAGRAPH.LEFT, "right": WD_ALIGN_PARAGRAPH.RIGHT, "center": WD_ALIGN_PARAGRAPH.CENTER}


def write(deliverable: Deliverable, target) -> None:
    doc = Document()
    _title_page(doc, deliverable)
    for section in deliverable.sections:
        _section(doc, section)
    doc.add_heading("Appendix: approved citations", level=1)
    if deliverable.citations:
        rows = [[str(c.get(k) or "") for k in ("id", "framework", "ref", "title")] for c in deliverable.citations]
        _plain_table(doc, ["ID", "Framework", "Reference", "Title"], rows)
    else:
        doc.add_paragraph("The brief approved no citations.")
    if deliverable.sources:
        doc.add_heading("Appendix: sources", level=1)
        doc.add_paragraph(SOURCES_NOTE)
        _plain_table(doc, ["ID", "Title", "Address", "Fetched (UTC)", "Use"],
                     [[s["id"], s["title"], s["url"], s["fetched_at"], s["used"]] for s in deliverable.sources])
    if deliverable.unsourced and deliverable.unsourced.shown:
        doc.add_heading(specifics.HEADING, level=1)
        doc.add_paragraph(specifics.NOTE)
        doc.add_paragraph(specifics.summary_line(deliverable.unsourced))
        if deliverable.unsourced.rows:
            _plain_table(doc, specifics.HEADER, deliverable.unsourced.rows)
        if deliverable.unsourced.unread:
            doc.add_paragraph(specifics.unread_line(deliverable.unsourced))
    doc.save(target)


def _properties(doc, d: Deliverable) -> None:
    """The file's own properties (File > Info in Word). python-docx's template would otherwise say
    "python-docx" wrote it, in 2013."""
    props = doc.core_properties
    props.title = d.title[:250]
    props.subject = d.workspace[:250]
    props.author = props.last_modified_by = "Beyond"
    props.comments = f"Prepared with Beyond, run {d.run.pk}"
    props.keywords = props.category = props.content_status = ""
    props.created = props.modified = (d.run.finished_at or d.run.created_at).astimezone(dt.timezone.utc)
    props.revision = 1


def _title_page(doc, d: Deliverable) -> None:
    _properties(doc, d)
    doc.add_heading(d.title, level=0)
    for label, value in (("Task", d.task), ("Workspace", d.workspace), ("Date", d.date),
                         ("Prepared with", f"Beyond, run {d.run.pk}")):
        if not value:
            continue  # no Task line when the task is the title
        p = doc.add_paragraph()
        p.add_run(f"{label}: ").bold = True
        p.add_run(value)
    # Headings in order under the title, as the body's sections are: level 1, then 2.
    doc.add_heading("Models", level=1)
    _plain_table(doc, ["Role", "Model"], [[role.capitalize(), model] for role, model in d.models])
    note = offline_note(d.run)
    if note:
        doc.add_paragraph().add_run(note).italic = True
    doc.add_heading("Verification", level=1)
    doc.add_paragraph(d.outcome)
    if d.checked_by:
        doc.add_paragraph(d.checked_by)
    if d.counts:
        doc.add_paragraph("Sections: " + ", ".join(d.counts) + "."
                          + (" Each warning is a comment on its section." if d.warnings else ""))
    if d.warnings_line:
        doc.add_paragraph(d.warnings_line)
    for meaning in d.meaning:
        doc.add_paragraph(meaning)
    for warning in d.run_warnings:
        p = doc.add_paragraph(style="Intense Quote")
        p.add_run("Warning: ").bold = True
        p.add_run(warning)
    if d.recap:
        doc.add_heading("Recap of the run", level=2)
        if d.recap_findings:
            p = doc.add_paragraph(style="Intense Quote")
            p.add_run("Warning: ").bold = True
            p.add_run(RECAP_CHECKED + " " + "; ".join(d.recap_findings))
        _blocks(doc, d.recap)
    doc.add_paragraph().add_run().add_break(WD_BREAK.PAGE)


def _section(doc, section: Section) -> None:
    content = section.blocks if section.released else []
    if starts_with_heading(content):
        first, rest = content[0], content[1:]
        heading = doc.add_heading(level=first.level)
        _spans(heading, first.spans)
    else:
        heading, rest = doc.add_heading(section.title, level=1), content
    if section.warnings:
        if not heading.runs:  # a heading that is all link: anchor the comments on an empty run
            heading.add_run("")
        label = badges.label(section.badge)
        for warning in section.warnings:
            doc.add_comment(heading.runs, text=f"{label}: {' '.join(warning.split())}", author=WARNING_AUTHOR,
                            initials="B")
    _blocks(doc, rest)
    if not section.released:
        doc.add_paragraph().add_run(section.note).italic = True


def _blocks(doc, items: list, depth: int = 0) -> None:
    for block in items:
        if isinstance(block, Heading):
            _spans(doc.add_heading(level=block.level), block.spans)
        elif isinstance(block, Paragraph):
            _spans(doc.add_paragraph(style="Quote" if block.quote else None), block.spans)
        elif isinstance(block, Code):
            p = doc.add_paragraph()
            run = p.add_run(block.text)
            run.font.name, run.font.size = "Courier New", Pt(9)
        elif isinstance(block, ListBlock):
            _list(doc, block, depth)
        elif isinstance(block, Table):
            _table(doc, block)
        elif isinstance(block, Rule):
            doc.add_paragraph("* * *").alignment = WD_ALIGN_PARAGRAPH.CENTER


def _list(doc, block: ListBlock, depth: int) -> None:
    """Bullets in Word's list styles; numbers written out, so each list starts at its own first
    number (python-docx's numbered style would continue the previous list's count)."""
    for n, item in enumerate(block.items, start=block.start):
        lead = item[0] if item and isinstance(item[0], Paragraph) else Paragraph([])
        if block.ordered:
            p = doc.add_paragraph(style="List Paragraph")
            p.paragraph_format.left_indent = Cm(0.9 * (depth + 1))
            p.paragraph_format.first_line_indent = Cm(-0.6)
            p.add_run(f"{n}.\t")
        else:
            p = doc.add_paragraph(style="List Bullet" + (f" {min(depth + 1, 3)}" if depth else ""))
        _spans(p, lead.spans)
        _blocks(doc, item[1:] if item and item[0] is lead else item, depth + 1)


def _table(doc, block: Table) -> None:
    width = max(len(r) for r in [block.header, *block.rows])
    table = doc.add_table(rows=1 + len(block.rows), cols=width)
    table.style = "Table Grid"
    for r, cells in enumerate([block.header, *block.rows]):
        for c in range(width):
            paragraph = table.cell(r, c).paragraphs[0]
            _spans(paragraph, cells[c] if c < len(cells) else [], bold=r == 0)
            align = block.align[c] if c < len(block.align) else None
            if align:
                paragraph.alignment = ALIGN[align]
    _repeat_header(table)


def _plain_table(doc, header: list[str], rows: list[list[str]]) -> None:
    table = doc.add_table(rows=1 + len(rows), cols=len(header))
    table.style = "Table Grid"
    for r, cells in enumerate([header, *rows]):
        for c, value in enumerate(cells):
            run = table.cell(r, c).paragraphs[0].add_run(value)
            run.bold = r == 0 or None
    _repeat_header(table)


def _repeat_header(table) -> None:
    """The header row repeats at the top of each page a long table runs over."""
    properties = table.rows[0]._tr.get_or_add_trPr()
    repeat = OxmlElement("w:tblHeader")
    repeat.set(qn("w:val"), "true")
    properties.append(repeat)


def _spans(paragraph, spans: list[Span], bold: bool = False) -> None:
    for span in spans:
        if span == BREAK:
            paragraph.add_run().add_break()
            continue
        run = _hyperlink_run(paragraph, span.href) if span.href else paragraph.add_run()
        run.text = span.text
        run.bold = (span.bold or bold) or None
        run.italic = span.italic or None
        if span.code:
            run.font.name = "Courier New"


def _hyperlink_run(paragraph, url: str):
    """A run inside a w:hyperlink to `url` (python-docx reads hyperlinks but has no call to add one)."""
    rel_id = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel_id)
    paragraph._p.append(link)
    run_element = OxmlElement("w:r")
    link.append(run_element)
    run = Run(run_element, paragraph)
    run.font.color.rgb = LINK_COLOUR
    run.font.underline = True
    return run

