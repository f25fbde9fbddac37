"""Write a deliverable (exports.document) as Markdown.

The model's Markdown is not copied: it is parsed into blocks (exports.blocks) and written again,
with every character that could start markup in someone else's renderer escaped. Raw HTML in
model output (`<script>`, `<img onerror>`) therefore arrives as visible text, a `javascript:` link
as its words, and only absolute http, https and mailto links stay links.
"""
from __future__ import annotations

import re

from beyond_site.exports.blocks import (
    BREAK, Callout, Code, Heading, ListBlock, Paragraph, Rule, Span, Table, starts_with_heading,
)
from beyond_site.exports.document import Deliverable, Part, Section

_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>#|!&~])")


def text(value: str) -> str:
    """Plain text as Markdown that renders as exactly that text."""
    return "\n".join(_line_safe(line) for line in _MARKDOWN_PUNCTUATION.sub(r"\\\1", value).split("\n"))


def _line_safe(line: str) -> str:
    """Escape a construct that only means something at the start of a line (a list, a rule)."""
    stripped = line.lstrip()
    match = re.match(r"([-+=])|(\d+)([.)])", stripped)
    if not match:
        return stripped
    if match.group(1):
        return "\\" + stripped
    return match.group(2) + "\\" + stripped[len(match.group(2)):]


def _code_span(value: str) -> str:
    ticks = "`" * (max((len(t) for t in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def _url(href: str) -> str:
    return re.sub(r"[\s()<>]", lambda m: f"%{ord(m.group(0)):02X}", href)


def _styled(span: Span) -> str:
    if span.code:
        body = _code_span(span.text)
    else:
        body = _MARKDOWN_PUNCTUATION.sub(r"\\\1", span.text)
    marker = ("**" if span.bold else "") + ("*" if span.italic else "")
    if not marker or not body.strip():
        return body
    lead, core, trail = re.match(r"^(\s*)(.*?)(\s*)$", body, re.S).groups()
    return f"{lead}{marker}{core}{marker[::-1]}{trail}"


def inline(spans: list[Span]) -> str:
    """Spans as one line of Markdown (a hard break as a backslash line end)."""
    out, i = [], 0
    while i < len(spans):
        span = spans[i]
        if span is BREAK or span == BREAK:
            out.append("\\\n")
            i += 1
            continue
        if span.href:
            j = i
            while j < len(spans) and spans[j].href == span.href and spans[j] != BREAK:
                j += 1
            label = "".join(_styled(s) for s in spans[i:j]) or _MARKDOWN_PUNCTUATION.sub(r"\\\1", span.href)
            out.append(f"[{label}]({_url(span.href)})")
            i = j
            continue
        out.append(_styled(span))
        i += 1
    lines = "".join(out).split("\n")
    return "\n".join(_line_safe(line) for line in lines)


def blocks(items: list, level_shift: int = 1, tight: bool = False) -> list[str]:
    """Blocks as Markdown lines, a blank line between blocks (`tight`: none before a nested list);
    headings one level down (the document's title is the only first-level heading)."""
    out: list[str] = []
    for block in items:
        if out and not (tight and isinstance(block, ListBlock)):
            out.append("")
        out.extend(_block(block, level_shift))
    return out


def _block(block, level_shift: int) -> list[str]:
    if isinstance(block, Heading):
        return ["#" * min(block.level + level_shift, 6) + " " + inline(block.spans).replace("\\\n", " ")]
    if isinstance(block, Paragraph):
        lines = inline(block.spans).split("\n")
        return [f"> {line}" for line in lines] if block.quote else lines
    if isinstance(block, Code):
        fence = "`" * max(3, max((len(t) for t in re.findall(r"`{3,}", block.text)), default=0) + 1)
        return [fence, *block.text.split("\n"), fence]
    if isinstance(block, ListBlock):
        return _list(block, level_shift)
    if isinstance(block, Table):
        return table([[inline(c) for c in block.header]], [[inline(c) for c in row] for row in block.rows],
                     block.align)
    if isinstance(block, Rule):
        return ["---"]
    if isinstance(block, Callout):
        return [f"> {line}" for line in inline(block.spans).split("\n")]
    return []


def _list(block: ListBlock, level_shift: int) -> list[str]:
    out = []
    for n, item in enumerate(block.items, start=block.start):
        marker = f"{n}. " if block.ordered else "- "
        lines = blocks(item, level_shift, tight=True) or [""]
        out.append(marker + lines[0])
        out.extend((" " * len(marker) + line) if line else "" for line in lines[1:])
    return out


def table(header: list[list[str]], rows: list[list[str]], align=None) -> list[str]:
    """A pipe table from cells already written as Markdown (a line break inside a cell becomes a space)."""
    width = max(len(r) for r in header + rows)
    align = list(align or []) + [None] * width
    def row(cells):
        cells = [c.replace("\\\n", " ").replace("\n", " ") for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"
    rule = {"left": ":---", "right": "---:", "center": ":---:", None: "---"}
    return [row(header[0]), "| " + " | ".join(rule[a] for a in align[:width]) + " |", *(row(r) for r in rows)]


def _section(section: Section, first_note: int) -> list[str]:
    content = section.blocks if section.released else []
    lines = [] if starts_with_heading(content) else ["## " + text(section.title), ""]
    lines += blocks(content) if content else []
    lines = lines[:-1] if lines[-1] == "" else lines
    markers = "".join(f"[^n{first_note + n}]" for n in range(len(section.notes)))
    lines[0] += markers  # every section opens with a heading: the notes hang on it
    if section.missing:
        lines += ["", f"*{text(section.missing)}*"]
    for n, note in enumerate(section.notes):
        lines += ["", f"[^n{first_note + n}]: {text(' '.join(note.split()))}"]
    return lines


def _part(part: Part) -> list[str]:
    return ([f"## {text(part.title)}", ""] if part.title else []) + blocks(part.blocks)


def write(deliverable: Deliverable) -> str:
    d = deliverable
    facts = [f"**{text(label)}:** {text(value)}" for label, value in d.facts]
    out = ["# " + text(d.title), "", *(f + "  " for f in facts[:-1]), *facts[-1:]]
    for part in d.parts:
        out += ["", *_part(part)]
    out += ["", "---", ""]
    number = 1
    for section in d.sections:
        out += _section(section, number) + [""]
        number += len(section.notes)
    for part in d.appendices:
        out += _part(part) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def section_text(section: Section) -> str:
    """One section on its own (the chat's copy of a step): its heading, then its content."""
    return "\n".join(_section(section, 1)) + "\n"
