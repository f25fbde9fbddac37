"""Write a deliverable (exports.document) as a Word document with python-docx.

Real Word structure throughout: the page size of the workspace with a header and a footer on every
page, the title page, headings in Word's heading styles, Markdown tables as Word tables, lists,
bold, italic, code and links (absolute http, https and mailto only); each of the audit edition's
notes is a Word comment on the heading of the section it concerns, so the body reads as the
document and the review notes sit in the margin.
"""
from __future__ import annotations

import datetime as dt

from docx import Document
from docx.enum.section import WD_ORIENT, WD_SECTION
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK, WD_TAB_ALIGNMENT
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Cm, Emu, Inches, Pt, RGBColor
from docx.text.run import Run

from beyond_site.exports.blocks import (BREAK, Callout, Code, Heading, ListBlock, Paragraph, Rule, Span, Table,
                                        plain, starts_with_heading)
from beyond_site.exports.document import Deliverable, Part, Section
from beyond_site.exports.editions import WARNING_AUTHOR
from beyond_site.exports.layout import approximate, table_layout

LINK_COLOUR = RGBColor(0x1F, 0x4E, 0xB4)
ALIGN = {"left": WD_ALIGN_PARAGRAPH.LEFT, "right": WD_ALIGN_PARAGRAPH.RIGHT, "center": WD_ALIGN_PARAGRAPH.CENTER}


PAPER = {"a4": (Cm(21.0), Cm(29.7)), "letter": (Inches(8.5), Inches(11))}
MARGIN = Cm(2.5)
#: Word's own cell margins (left and right, 0.19 cm), in points, for the table layout.
CELL_PADDING = 5.4
FURNITURE_COLOUR = RGBColor(0x55, 0x55, 0x55)


def write(deliverable: Deliverable, target) -> None:
    d = deliverable
    doc = Document()
    _page(doc, d)
    _title_page(doc, d)
    for section in d.sections:
        _section(doc, section)
    for part in d.appendices:
        _part(doc, part)
    doc.save(target)


def _page(doc, d: Deliverable) -> None:
    """The paper, the margins, and the furniture of every page: the short title in the header; the
    version, status and classification in the footer, with "Page N of M" as Word fields (Word and
    LibreOffice count the pages when they lay the document out)."""
    section = doc.sections[0]
    section.page_width, section.page_height = PAPER[d.paper]
    for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        setattr(section, side, MARGIN)
    right = section.page_width - 2 * MARGIN
    header = section.header.paragraphs[0]
    _furniture(header.add_run(d.header))
    footer = section.footer.paragraphs[0]
    footer.paragraph_format.tab_stops.add_tab_stop(right, WD_TAB_ALIGNMENT.RIGHT)
    for part in (d.footer, "\tPage ", _field("PAGE"), " of ", _field("NUMPAGES")):
        if isinstance(part, str):
            _furniture(footer.add_run(part))
        else:
            footer._p.append(part)


def _furniture(run) -> None:
    run.font.size = Pt(9)
    run.font.color.rgb = FURNITURE_COLOUR


def _field(code: str):
    """A simple Word field (PAGE, NUMPAGES) with "1" as its last shown value."""
    field = OxmlElement("w:fldSimple")
    field.set(qn("w:instr"), f" {code} ")
    run = OxmlElement("w:r")
    properties = OxmlElement("w:rPr")
    size = OxmlElement("w:sz")
    size.set(qn("w:val"), "18")
    properties.append(size)
    run.append(properties)
    shown = OxmlElement("w:t")
    shown.text = "1"
    run.append(shown)
    field.append(run)
    return field


def _properties(doc, d: Deliverable) -> None:
    """The file's own properties (File > Info in Word). python-docx's template would otherwise say
    "python-docx" wrote it, in 2013."""
    props = doc.core_properties
    props.title = d.title[:250]
    props.subject = dict(d.facts).get("Organisation", "")[:250]
    props.author = props.last_modified_by = "Beyond"
    props.comments = f"Prepared with Beyond, run {d.run.pk}" if d.parts else ""  # the audit edition's
    props.keywords = props.category = ""
    props.content_status = d.version.status
    props.version = str(d.version.number or 1)
    props.created = props.modified = (d.run.finished_at or d.run.created_at).astimezone(dt.timezone.utc)
    props.revision = d.version.number or 1


def _title_page(doc, d: Deliverable) -> None:
    _properties(doc, d)
    doc.add_heading(d.title, level=0)
    for label, value in d.facts:
        p = doc.add_paragraph()
        p.add_run(f"{label}: ").bold = True
        p.add_run(value)
    for part in d.parts:
        _part(doc, part)
    doc.add_paragraph().add_run().add_break(WD_BREAK.PAGE)


def _part(doc, part: Part) -> None:
    if part.title:
        doc.add_heading(part.title, level=1)
    _blocks(doc, part.blocks)


def _section(doc, section: Section) -> None:
    content = section.blocks if section.released else []
    if starts_with_heading(content):
        first, rest = content[0], content[1:]
        heading = doc.add_heading(level=first.level)
        _spans(heading, first.spans)
    else:
        heading, rest = doc.add_heading(section.title, level=1), content
    if section.notes:
        if not heading.runs:  # a heading that is all link: anchor the comments on an empty run
            heading.add_run("")
        for note in section.notes:
            doc.add_comment(heading.runs, text=" ".join(note.split()), author=WARNING_AUTHOR, initials="B")
    _blocks(doc, rest)
    if section.missing:
        doc.add_paragraph().add_run(section.missing).italic = True


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
        elif isinstance(block, Callout):
            _spans(doc.add_paragraph(style="Intense Quote"), block.spans)


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
    texts = [[" ".join(plain(c).split()) for c in row] + [""] * (width - len(row)) for row in [block.header, *block.rows]]
    page = doc.sections[-1]
    portrait = min(page.page_width, page.page_height) - page.left_margin - page.right_margin
    landscape = max(page.page_width, page.page_height) - page.left_margin - page.right_margin
    layout = table_layout(texts[0], texts[1:], portrait=Emu(portrait).pt, landscape=Emu(landscape).pt,
                          measure=approximate, padding=CELL_PADDING)
    if layout.landscape:
        _orient(doc, WD_ORIENT.LANDSCAPE)
    table = doc.add_table(rows=1 + len(block.rows), cols=width)
    table.style = "Table Grid"
    table.autofit = False
    size = Pt(max(layout.size, 7))
    # Row by row: python-docx's table.cell(r, c) walks the whole grid at each call.
    for r, (row, cells) in enumerate(zip(table.rows, [block.header, *block.rows])):
        for c, cell in enumerate(row.cells):
            cell.width = Pt(layout.widths[c])
            paragraph = cell.paragraphs[0]
            _spans(paragraph, cells[c] if c < len(cells) else [], bold=r == 0)
            for run in paragraph.runs:
                run.font.size = size
            align = block.align[c] if c < len(block.align) else None
            if align:
                paragraph.alignment = ALIGN[align]
    _repeat_header(table)
    if layout.landscape:
        _orient(doc, WD_ORIENT.PORTRAIT)


def _orient(doc, orientation) -> None:
    """A new section on a new page, turned: a wide table's page, then back to the document's."""
    previous = doc.sections[-1]
    section = doc.add_section(WD_SECTION.NEW_PAGE)
    long, short = max(previous.page_width, previous.page_height), min(previous.page_width, previous.page_height)
    section.orientation = orientation
    section.page_width, section.page_height = (long, short) if orientation == WD_ORIENT.LANDSCAPE else (short, long)


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

