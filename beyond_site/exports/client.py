"""The client edition as a customer receives it (docs/deliverables.md, "The client edition").

Whatever engine wrote the document, its text may carry what belongs to the people who made it:
where a fact came from ("(workspace memory)", "(suppliers.csv)", a Source column), the engine's
own wording ("the workspace's memories say nothing about it", "Not answered: no fact in the
workspace") and its open points ("to be confirmed"), and a long table split over parts ("…, part 2
of 3"). The client edition reads without them: sources are dropped, or become numbered endnotes
when the person exporting asks for them; each open point becomes a numbered open item, gathered in
one "Open items" list at the end; a table split into parts is one table again.

Rules on the text's shape, not a list of one engine's sentences: a parenthesis that names a file
or the workspace's records, a column headed Source, a sentence about the workspace or the task
rather than the organisation, the phrase "to be confirmed".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.citations import extract_citations
from beyond_site.exports.blocks import (Callout, Heading, ListBlock, Paragraph, Span, Table, line, plain)
from beyond_site.exports.document import Deliverable, Part, Section

TBC = re.compile(r"\bto be confirmed\b", re.I)
#: A parenthesis that says where a fact came from: a file, the workspace's records or memories.
_SOURCE_TAG = re.compile(
    r"\s*\((?:[^()]*?\b[\w .,&'-]+\.(?:docx?|xlsx?|csv|tsv|pdf|txt|md|pptx?|json)\b[^()]*|(?:from |source: ?)?"
    r"(?:the )?workspace(?:'s)? (?:memor(?:y|ies)|records?|files?|documents?)[^()]*|memory \d+[^()]*"
    r"|uploaded to this conversation|workspace records?(?:, [^()]*)?)\)", re.I)
#: A sentence about how the document was made, not about the organisation.
_CHATTER = re.compile(
    r"\b(?:the|this) (?:workspace|task|brief|context|run|engine)\b|\bworkspace(?:'s)? (?:memor|record|file|document)"
    r"|\boffline engine\b|\bno fact in the workspace\b|\bthe memories\b|\bNot answered\b", re.I)
#: A sentence about the marking itself ("... are marked to be confirmed"): the Open items list says it.
_META = re.compile(r"\bmarked (?:as )?(?:\W)?to be confirmed|\bnot settled by the information available\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z“\"(])")
#: A title of a table split over steps: "Applicability table, part 2 of 3".
PART = re.compile(r"^(?P<title>.+?),? part (?P<k>\d+) of (?P<n>\d+)$", re.I)
#: A file of the workspace named in the text ("From suppliers.csv (5 entries)").
_FILE_NAME = re.compile(r"\b[\w][\w.-]*\.(?:docx?|xlsx?|csv|tsv|pdf|txt|md|pptx?|json)\b", re.I)
_SOURCE_HEADER = re.compile(r"^(?:sources?|source documents?|from)$", re.I)


@dataclass
class _Cleaning:
    endnotes: bool
    open_items: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    #: A table column's open cells are one item: (table, column) -> (its number, the rows named).
    columns: dict[tuple[str, str], tuple[int, list[str]]] = field(default_factory=dict)

    def open_item(self, text: str) -> str:
        self.open_items.append(text)
        return f"open item {len(self.open_items)}"

    def open_cell(self, table: str, column: str, row: str) -> str:
        """An open cell: one open item per column of a table, naming every row it is open in."""
        key = (table, column)
        if key not in self.columns:
            self.open_items.append("")
            self.columns[key] = (len(self.open_items), [])
        number, rows = self.columns[key]
        rows.append(row)
        shown = "; ".join(rows[:12]) + (f"; and {len(rows) - 12} more" if len(rows) > 12 else "")
        self.open_items[number - 1] = f"{table}, {column}: {shown}"
        return f"Open item {number}"

    def endnote(self, tag: str) -> str:
        name = tag.strip(" ()")
        if name not in self.sources:
            self.sources.append(name)
        return f" [{self.sources.index(name) + 1}]"


def for_client(d: Deliverable, *, endnotes: bool = False) -> Deliverable:
    """`d` (the client edition) as a customer receives it; the open items and, when asked, the
    sources as endnotes, appended before the references."""
    cleaning = _Cleaning(endnotes)
    d.sections = merge_parts(d.sections)
    for section in d.sections:
        section.blocks = [b for block in section.blocks for b in _block(block, cleaning, section.title)]
    extra = []
    if cleaning.open_items:
        extra.append(Part("Open items", [line("These points are still open. Each is settled by the organisation "
                                              "before the document is relied on."),
                                         ListBlock(True, [[line(item)] for item in cleaning.open_items])]))
    if cleaning.sources:
        extra.append(Part("Sources", [ListBlock(True, [[line(source)] for source in cleaning.sources])]))
    d.appendices = extra + d.appendices
    d.open_items = len(cleaning.open_items)
    return d


def merge_parts(sections: list[Section]) -> list[Section]:
    """Consecutive sections that are parts of one split table ("…, part 1 of 3") as one section
    titled as the table, its parts' tables joined into one."""
    out: list[Section] = []
    for section in sections:
        match = PART.match(section.title) or PART.match(_first_heading(section))
        previous = out[-1] if out else None
        if match and previous is not None and previous.part_of == match["title"] and section.released:
            _append_tables(previous, section)
            continue
        if match:
            section.part_of = match["title"]
            section.title = match["title"]
            _retitle(section)
        out.append(section)
    return out


def _first_heading(section: Section) -> str:
    first = section.blocks[0] if section.blocks else None
    return plain(first.spans).strip() if isinstance(first, Heading) else ""


def _retitle(section: Section) -> None:
    """A part's own heading ("…, part 1 of 3") reads as the table's."""
    for block in section.blocks:
        if isinstance(block, Heading):
            match = PART.match(plain(block.spans))
            if match:
                block.spans = [Span(match["title"])]
            break


def _append_tables(into: Section, part: Section) -> None:
    tables = [b for b in into.blocks if isinstance(b, Table)]
    for block in part.blocks:
        if isinstance(block, Table) and tables and _same_header(tables[-1], block):
            tables[-1].rows.extend(block.rows)
        elif isinstance(block, Table):
            into.blocks.append(block)
            tables.append(block)


def _same_header(a: Table, b: Table) -> bool:
    return [plain(c).strip().lower() for c in a.header] == [plain(c).strip().lower() for c in b.header]


def _block(block, cleaning: _Cleaning, where: str) -> list:
    if isinstance(block, Paragraph):
        spans = _spans(block.spans, cleaning, where)
        return [Paragraph(spans, block.quote)] if plain(spans).strip() else []
    if isinstance(block, Callout):
        return [Callout(_spans(block.spans, cleaning, where))]
    if isinstance(block, Heading):
        return [Heading(block.level, [Span(_untagged(plain(block.spans), cleaning))])]
    if isinstance(block, ListBlock):
        items = [[b for inner in item for b in _block(inner, cleaning, where)] for item in block.items]
        items = [item for item in items if item]
        return [ListBlock(block.ordered, items, block.start)] if items else []
    if isinstance(block, Table):
        return [_table(block, cleaning, where)]
    return [block]


def _spans(spans: list[Span], cleaning: _Cleaning, where: str) -> list[Span]:
    """A paragraph's spans with its chatter's sentences left out, its sources and open points made
    client's words. Formatting inside a cleaned sentence is kept span by span."""
    out = []
    for span in spans:
        text = _untagged(span.text, cleaning)
        kept = []
        for sentence in _SENTENCE.split(text):
            if _META.search(sentence):
                continue
            if TBC.search(sentence):
                sentence = _open_point(sentence, cleaning, where)
            elif _CHATTER.search(sentence):
                continue
            kept.append(sentence)
        text = " ".join(kept) if text.strip() else text
        if text:
            out.append(Span(text, span.bold, span.italic, span.code, span.href))
    return out


def _open_point(sentence: str, cleaning: _Cleaning, where: str) -> str:
    """A sentence with an open point: the point goes to the Open items list, the sentence names it.
    A sentence that is only about what the workspace lacks reads "Open item N." in its place."""
    item = " ".join(TBC.sub("", _SOURCE_TAG.sub("", sentence)).split()).strip(" :;,.-–()")
    if _CHATTER.search(sentence) or len(item.split()) < 2:
        number = cleaning.open_item(f"{where}: to settle" + (f" ({item})" if item and not _CHATTER.search(item) else ""))
        return number[:1].upper() + number[1:] + "."
    number = cleaning.open_item(f"{where}: {item}")
    return TBC.sub(f"see {number}", sentence)


def _untagged(text: str, cleaning: _Cleaning) -> str:
    if cleaning.endnotes:
        text = _SOURCE_TAG.sub(lambda m: cleaning.endnote(m.group(0)), text)
    else:
        text = _SOURCE_TAG.sub("", text)
    return _FILE_NAME.sub("the organisation's records", text)


def _table(table: Table, cleaning: _Cleaning, where: str) -> Table:
    keep = [c for c, cell in enumerate(table.header) if not _SOURCE_HEADER.match(plain(cell).strip())]
    header = [table.header[c] for c in keep]
    names = [plain(h).strip() for h in header]
    rows = []
    for row in table.rows:
        cells = [row[c] if c < len(row) else [] for c in keep]
        label = _row_label(cells)
        rows.append([_cell(cell, cleaning, where, names[n], label) for n, cell in enumerate(cells)])
    return Table(header, rows, [table.align[c] if c < len(table.align) else None for c in keep])


def _row_label(cells: list[list[Span]]) -> str:
    """What names a row for a reader: the reference it is about ("A.5.1"), else its first cell with
    words in it (not a number)."""
    texts = [" ".join(_SOURCE_TAG.sub("", plain(c)).split()) for c in cells]
    label = next((t for t in texts if re.search(r"[A-Za-z]{2}", t)), texts[0] if texts else "a row")
    refs = extract_citations(label)
    return refs[0].ref if refs else label[:120]


def _cell(cell: list[Span], cleaning: _Cleaning, where: str, column: str, row: str) -> list[Span]:
    """A cell that is only an open point ("to be confirmed", "Justification to be confirmed", "Not
    answered: ...") names its column's open item; any other keeps its words."""
    said = plain(cell)
    rest = [w for w in TBC.sub("", said).replace(":", " ").split() if w.lower() not in column.lower().split()]
    if said.strip().lower().startswith("not answered") or (TBC.search(said) and (len(rest) < 2 or _CHATTER.search(said))):
        what = " ".join(rest).strip(" ()") if TBC.search(said) and not _CHATTER.search(said) else ""
        return [Span(cleaning.open_cell(where, column, f"{row} ({what})" if what else row))]
    return _spans(cell, cleaning, f"{where}, {row}, {column}")
