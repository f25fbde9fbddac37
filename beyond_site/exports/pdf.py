"""Write a deliverable (exports.document) as a PDF with fpdf2, laid out like the DOCX.

The workspace's paper size; on every page the short title in the header and the version, status,
classification and "Page N of M" in the footer; the title page; headings, paragraphs with bold,
italic, code and links (absolute http, https and mailto only), lists, code blocks, and Markdown
tables as real tables whose header row is repeated at the top of every page they run over. The
audit edition's notes on a section stand in place, under its heading, in a marked box.

Text is set in DejaVu Sans, shipped in exports/fonts (docs/deliverables.md says why): PDF's own
fonts cover Latin-1 only, and model text has curly quotes, dashes and names in other scripts.
Everything is written in reading order, so text extracted from the file reads as the document.
"""
from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from pathlib import Path

from fpdf import FPDF, FontFace
from fpdf.enums import Align, TableCellFillMode, WrapMode, XPos, YPos

from beyond_site.exports.blocks import (BREAK, Callout, Code, Heading, ListBlock, Paragraph, Rule, Span, Table,
                                        plain, starts_with_heading)
from beyond_site.exports.document import Deliverable, Part, Section
from beyond_site.exports.layout import table_layout

FONTS = Path(__file__).resolve().parent / "fonts"
SANS, MONO = "DejaVuSans", "DejaVuSansMono"
FONT_FILES = {"": "DejaVuSans.ttf", "B": "DejaVuSans-Bold.ttf", "I": "DejaVuSans-Oblique.ttf",
              "BI": "DejaVuSans-BoldOblique.ttf"}
MONO_FILE = "DejaVuSansMono.ttf"
PAPER = {"a4": "A4", "letter": "Letter"}
MARGIN = 70.87  # 2.5 cm, as in the DOCX
BODY, LINE = 10, 14  # points
HEADING_SIZES = {0: 22, 1: 16, 2: 13, 3: 11.5}
TEXT, GREY, LINK, RULE = (0x1A, 0x1A, 0x1A), (0x55, 0x55, 0x55), (0x1F, 0x4E, 0xB4), (0xBB, 0xBB, 0xBB)
NOTE_BAR, CODE_FILL, HEAD_FILL = (0xB4, 0x6A, 0x00), (0xF2, 0xF2, 0xF2), (0xE8, 0xE8, 0xE8)
INDENT = 18
PADDING = 3


class _Pages(FPDF):
    def __init__(self, d: Deliverable):
        super().__init__(unit="pt", format=PAPER[d.paper])
        self.d = d
        self.loaded: set[tuple[str, str]] = set()
        self.set_margins(MARGIN, MARGIN, MARGIN)
        self.set_auto_page_break(True, MARGIN)
        self.set_title(d.title)
        self.set_author("Beyond")
        self.set_creator(f"Beyond, run {d.run.pk}")
        self.set_subject(dict(d.facts).get("Organisation", ""))
        self.set_creation_date((d.run.finished_at or d.run.created_at).astimezone(dt.timezone.utc))

    def set_font(self, family=None, style="", size=0):
        # A font is read when first used (about 0.1 s each): most documents never use every style.
        family = {SANS.lower(): SANS, MONO.lower(): MONO}.get(str(family or self.font_family).lower(), family)
        face = (family, str(getattr(style, "style", style) or "").upper().replace("U", ""))  # a table passes an enum
        if family in (SANS, MONO) and face not in self.loaded:
            self.loaded.add(face)
            self.add_font(family, face[1], FONTS / (FONT_FILES[face[1]] if family == SANS else MONO_FILE))
        super().set_font(family, style, size)

    def header(self):
        self.set_font(SANS, "", 8.5)
        self.set_text_color(*GREY)
        self.set_xy(self.l_margin, MARGIN / 2)
        self.cell(self.epw, 12, self.d.header, align=Align.L)
        self.set_draw_color(*RULE)
        self.set_line_width(0.5)
        self.line(self.l_margin, MARGIN / 2 + 15, self.w - self.r_margin, MARGIN / 2 + 15)
        self.set_text_color(*TEXT)
        self.set_xy(self.l_margin, self.t_margin)

    def footer(self):
        self.set_font(SANS, "", 8.5)
        self.set_text_color(*GREY)
        y = self.h - MARGIN / 2 - 6
        self.set_xy(self.l_margin, y)
        self.cell(self.epw * 0.7, 12, self.d.footer, align=Align.L)
        self.set_xy(self.l_margin + self.epw * 0.7, y)
        self.cell(self.epw * 0.3, 12, f"Page {self.page_no()} of {{nb}}", align=Align.R)
        self.set_text_color(*TEXT)


def write(deliverable: Deliverable, target) -> None:
    pdf = _Pages(deliverable)
    _Writer(pdf).document(deliverable)
    target.write(bytes(pdf.output()))


class _Writer:
    def __init__(self, pdf: _Pages):
        self.pdf = pdf
        self.note_number = 0
        self.widths: dict[tuple[str, bool, float], float] = {}

    # -- the document's parts ---------------------------------------------------------------------

    def document(self, d: Deliverable) -> None:
        pdf = self.pdf
        pdf.add_page()
        self.heading(0, [Span(d.title)])
        for label, value in d.facts:
            self.spans([Span(f"{label}: ", bold=True), Span(value)])
        for part in d.parts:
            self.part(part)
        for section in d.sections:
            if section is d.sections[0]:
                pdf.add_page()  # the title page ends here
            self.section(section)
        if not d.sections:
            pdf.add_page()
        for part in d.appendices:
            self.part(part)

    def part(self, part: Part) -> None:
        if part.title:
            self.heading(1, [Span(part.title)])
        self.blocks(part.blocks)

    def section(self, section: Section) -> None:
        content = section.blocks if section.released else []
        if starts_with_heading(content):
            self.heading(content[0].level, content[0].spans)
            content = content[1:]
        else:
            self.heading(1, [Span(section.title)])
        for note in section.notes:
            self.note_number += 1
            self.boxed([Span(f"Note {self.note_number}: ", bold=True), Span(note)])
        self.blocks(content)
        if section.missing:
            self.spans([Span(section.missing, italic=True)])

    # -- blocks -------------------------------------------------------------------------------------

    def blocks(self, items: list, depth: int = 0) -> None:
        for block in items:
            if isinstance(block, Heading):
                self.heading(block.level, block.spans)
            elif isinstance(block, Paragraph):
                if block.quote:
                    with self.indented(INDENT):
                        self.spans(block.spans, colour=GREY)
                else:
                    self.spans(block.spans)
            elif isinstance(block, ListBlock):
                self.list(block, depth)
            elif isinstance(block, Table):
                self.table(block)
            elif isinstance(block, Code):
                self.code(block.text)
            elif isinstance(block, Callout):
                self.boxed(block.spans)
            elif isinstance(block, Rule):
                pdf = self.pdf
                pdf.set_draw_color(*RULE)
                pdf.line(pdf.l_margin, pdf.y + 4, pdf.w - pdf.r_margin, pdf.y + 4)
                pdf.ln(12)

    def heading(self, level: int, spans: list[Span]) -> None:
        pdf = self.pdf
        size = HEADING_SIZES.get(level, BODY + 0.5)
        # A heading is never left alone at the foot of a page: it goes with the text it heads.
        if pdf.y + size * 1.4 + 3 * LINE > pdf.page_break_trigger:
            pdf.add_page()
        elif pdf.y > pdf.t_margin + 1:
            pdf.ln(size * 0.6)
        pdf.set_x(pdf.l_margin)
        pdf.set_font(SANS, "B", size)
        pdf.set_text_color(*TEXT)
        pdf.multi_cell(0, size * 1.3, " ".join(plain(spans).split()) or " ", align=Align.L,
                       new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(size * 0.25)

    def spans(self, spans: list[Span], colour=TEXT, after: float = 6) -> None:
        """A paragraph: its spans in their fonts, wrapped at the current margins."""
        pdf = self.pdf
        pdf.set_x(pdf.l_margin)
        for span in spans:
            if span == BREAK:
                pdf.ln(LINE)
                pdf.set_x(pdf.l_margin)
                continue
            if span.code:
                pdf.set_font(MONO, "", BODY - 1)
            else:
                pdf.set_font(SANS, ("B" if span.bold else "") + ("I" if span.italic else "") + ("U" if span.href else ""),
                             BODY)
            pdf.set_text_color(*(LINK if span.href else colour))
            pdf.write(LINE, span.text, link=span.href or "", wrapmode=WrapMode.WORD)
        pdf.set_text_color(*TEXT)
        pdf.ln(LINE)
        pdf.ln(after)

    def list(self, block: ListBlock, depth: int) -> None:
        pdf = self.pdf
        for n, item in enumerate(block.items, start=block.start):
            marker = f"{n}." if block.ordered else "•"
            lead = item[0] if item and isinstance(item[0], Paragraph) else Paragraph([])
            rest = item[1:] if item and item[0] is lead else item
            if pdf.y + LINE > pdf.page_break_trigger:
                pdf.add_page()
            pdf.set_font(SANS, "", BODY)
            pdf.set_xy(pdf.l_margin, pdf.y)
            pdf.cell(INDENT, LINE, marker)
            with self.indented(INDENT):
                pdf.set_xy(pdf.l_margin, pdf.y)
                self.spans(lead.spans, after=2)
                self.blocks(rest, depth + 1)
        pdf.ln(4)

    def table(self, block: Table) -> None:
        pdf = self.pdf
        rows = [block.header, *block.rows]
        width = max(len(r) for r in rows)
        texts = [[" ".join(plain(c).split()) for c in row] + [""] * (width - len(row)) for row in rows]
        # A hair under the page's width, so that rounding never takes a table past the margin.
        portrait = min(pdf.w, pdf.h) - pdf.l_margin - pdf.r_margin - 0.01
        layout = table_layout(texts[0], texts[1:], portrait=portrait, landscape=max(pdf.w, pdf.h) - 2 * MARGIN - 0.01,
                              measure=self.measure, padding=PADDING)
        turned = layout.landscape and pdf.cur_orientation != "L"
        if turned:  # a table too wide for the page gets a landscape page of its own
            pdf.add_page(orientation="L")
        pdf.set_font(SANS, "", layout.size)
        pdf.set_text_color(*TEXT)
        pdf.set_draw_color(*RULE)
        pdf.set_line_width(0.5)
        total = min(sum(layout.widths), pdf.epw - 0.01)
        with pdf.table(col_widths=layout.widths, width=total, align="LEFT", text_align="LEFT",
                       line_height=layout.size * 1.3, padding=PADDING, repeat_headings=1,
                       headings_style=FontFace(emphasis="BOLD", fill_color=HEAD_FILL, size_pt=layout.size),
                       cell_fill_mode=TableCellFillMode.NONE, wrapmode=WrapMode.WORD) as table:
            for r, cells in enumerate(rows):
                row = table.row()
                for c in range(width):
                    spans = cells[c] if c < len(cells) else []
                    links = {s.href for s in spans}
                    href = links.pop() if len(links) == 1 and spans and spans[0].href else None
                    row.cell(texts[r][c], link=href)
        if turned:
            pdf.add_page(orientation="P")
        else:
            pdf.ln(8)

    def measure(self, text: str, bold: bool, size: float) -> float:
        """The width of `text` set in the body font at `size` (the table layout's measure)."""
        key = (text, bold, size)
        if key not in self.widths:
            self.pdf.set_font(SANS, "B" if bold else "", size)
            self.widths[key] = self.pdf.get_string_width(text)
        return self.widths[key]

    def code(self, text: str) -> None:
        pdf = self.pdf
        pdf.set_x(pdf.l_margin)
        pdf.set_font(MONO, "", BODY - 1.5)
        pdf.set_fill_color(*CODE_FILL)
        pdf.multi_cell(0, LINE - 2, text or " ", fill=True, align=Align.L, wrapmode=WrapMode.CHAR,
                       new_x=XPos.LMARGIN, new_y=YPos.NEXT, padding=4)
        pdf.ln(6)

    def boxed(self, spans: list[Span]) -> None:
        """A note set apart: indented, with a coloured bar beside it (on each page it runs over)."""
        pdf = self.pdf
        page, top = pdf.page, pdf.y
        with self.indented(10):
            self.spans(spans, after=0)
        bottom = pdf.y - 2
        pdf.set_draw_color(*NOTE_BAR)
        pdf.set_line_width(2)
        x = pdf.l_margin + 3
        if pdf.page == page:
            pdf.line(x, top + 2, x, bottom)
        else:  # the box ran over a page break: a bar on the page where it ends
            pdf.line(x, pdf.t_margin, x, bottom)
        pdf.set_line_width(0.5)
        pdf.ln(8)

    @contextmanager
    def indented(self, by: float):
        """Move the left margin in for a block, and back after it."""
        self.pdf.set_left_margin(self.pdf.l_margin + by)
        try:
            yield
        finally:
            self.pdf.set_left_margin(self.pdf.l_margin - by)
