"""Model-made Markdown as a small tree of blocks, the one shape both writers (Markdown and DOCX)
walk. Parsed with the site's one Markdown parser (lib.markdown.MARKDOWN: raw HTML is text there, never
markup), so whatever a model wrote, a writer only ever meets these blocks and plain text runs.

Links keep their target only when it is an absolute http, https or mailto URL (the rule the page
applies); an image becomes its description, linked to its source under the same rule, so an
export never loads anything from elsewhere when it is opened.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from beyond_site.lib.markdown import MARKDOWN, is_safe_link

# XML 1.0 forbids most control characters (python-docx raises on them): model text is cleaned of them.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(value) -> str:
    return _CONTROL.sub("", str(value or ""))


@dataclass(frozen=True)
class Span:
    """A run of text with one formatting; `href` set for link text."""

    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    href: str | None = None


BREAK = Span("\n")  # a hard line break inside a paragraph


@dataclass
class Heading:
    level: int  # 1..6 as written in the Markdown
    spans: list[Span]


@dataclass
class Paragraph:
    spans: list[Span]
    quote: bool = False


@dataclass
class ListBlock:
    ordered: bool
    items: list[list] = field(default_factory=list)  # each item: a list of blocks
    start: int = 1


@dataclass
class Code:
    text: str


@dataclass
class Table:
    header: list[list[Span]]
    rows: list[list[list[Span]]]
    align: list[str | None]  # "left", "right", "center" or None per column


@dataclass
class Rule:
    pass


@dataclass
class Callout:
    """A warning set apart from the text around it (Word's Intense Quote, a Markdown quote, a
    shaded box in the PDF): written by Beyond about the document, never model text as a block."""

    spans: list[Span]


def line(text: str, italic: bool = False) -> Paragraph:
    """A paragraph of Beyond's own words (no Markdown in them)."""
    return Paragraph([Span(clean(text), italic=italic)])


def warning(text: str) -> Callout:
    return Callout([Span("Warning: ", bold=True), Span(clean(text))])


def text_table(header: list[str], rows: list[list[str]]) -> Table:
    """A table of plain text cells (the title page's, the appendices')."""
    return Table([[Span(clean(h))] for h in header], [[[Span(clean(c))] if c else [] for c in row] for row in rows],
                 [None] * len(header))


def parse(markdown: str) -> list:
    """The blocks of `markdown`, in order."""
    tokens = MARKDOWN.parse(clean(markdown))
    blocks, _ = _blocks(tokens, 0, None, quote=False)
    return blocks


def _blocks(tokens, i: int, until: str | None, quote: bool):
    """Blocks from tokens[i] up to the closing token `until`; returns (blocks, index after it)."""
    out: list = []
    while i < len(tokens):
        tok = tokens[i]
        if until and tok.type == until:
            return out, i + 1
        if tok.type == "heading_open":
            out.append(Heading(int(tok.tag[1]), spans(tokens[i + 1].children or [])))
            i += 3
        elif tok.type == "paragraph_open":
            out.append(Paragraph(spans(tokens[i + 1].children or []), quote=quote))
            i += 3
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            ordered = tok.type == "ordered_list_open"
            block = ListBlock(ordered, start=int(tok.attrs.get("start", 1)) if ordered else 1)
            close = "ordered_list_close" if ordered else "bullet_list_close"
            i += 1
            while tokens[i].type != close:
                item, i = _blocks(tokens, i + 1, "list_item_close", quote)  # tokens[i] is list_item_open
                block.items.append(item)
            out.append(block)
            i += 1
        elif tok.type == "blockquote_open":
            inner, i = _blocks(tokens, i + 1, "blockquote_close", quote=True)
            out.extend(inner)
        elif tok.type in ("fence", "code_block"):
            out.append(Code(tok.content.rstrip("\n")))
            i += 1
        elif tok.type == "table_open":
            table, i = _table(tokens, i + 1)
            out.append(table)
        elif tok.type == "hr":
            out.append(Rule())
            i += 1
        else:  # html_block cannot occur (html is off); anything else carries no text of its own
            i += 1
    return out, i


_ALIGN = re.compile(r"text-align:(left|right|center)")


def _table(tokens, i: int):
    header, rows, align, row = [], [], [], None
    while tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            if tok.type == "th_open":
                match = _ALIGN.search(str(tok.attrs.get("style", "")))
                align.append(match.group(1) if match else None)
            row.append(spans(tokens[i + 1].children or []))
        elif tok.type == "tr_close":
            if header:
                rows.append(row)
            else:
                header = row
        i += 1
    return Table(header, rows, align), i + 1


def spans(children) -> list[Span]:
    """Inline tokens as flat spans: emphasis and links become attributes of the text they hold."""
    out: list[Span] = []
    bold = italic = False
    href: str | None = None
    for child in children:
        kind = child.type
        if kind == "strong_open":
            bold = True
        elif kind == "strong_close":
            bold = False
        elif kind == "em_open":
            italic = True
        elif kind == "em_close":
            italic = False
        elif kind == "link_open":
            target = str(child.attrs.get("href", ""))
            href = target if is_safe_link(target) else None
        elif kind == "link_close":
            href = None
        elif kind == "text" and child.content:
            out.append(Span(child.content, bold, italic, False, href))
        elif kind == "code_inline":
            out.append(Span(child.content, bold, italic, True, href))
        elif kind == "softbreak":
            out.append(Span(" ", bold, italic, False, href))
        elif kind == "hardbreak":
            out.append(BREAK)
        elif kind == "image":
            source = str(child.attrs.get("src", ""))
            description = child.content or "image"
            out.append(Span(f"[{description}]", bold, italic, False, source if is_safe_link(source) else None))
    return out


def plain(spans_: list[Span]) -> str:
    return "".join(s.text for s in spans_)


def starts_with_heading(blocks: list) -> bool:
    return bool(blocks) and isinstance(blocks[0], Heading)


def normalise_headings(items: list, top: int) -> list:
    """`items` with their headings moved so the highest one is at level `top` and the others keep
    their distance from it (clamped to 1..6): a model's "##" section and "#" section read alike."""
    levels = [b.level for b in items if isinstance(b, Heading)]
    if not levels:
        return items
    shift = top - min(levels)
    for block in items:
        if isinstance(block, Heading):
            block.level = max(1, min(6, block.level + shift))
    return items
