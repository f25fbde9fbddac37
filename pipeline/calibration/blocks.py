"""Small edits of Markdown drafts: find the block delivering an item, remove it, add a sentence."""
from __future__ import annotations

import re

_HEADING = re.compile(r"^(#{1,6})\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s")


def line_of(text: str, pos: int) -> str:
    """The line of `text` around position `pos`."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start:end if end >= 0 else len(text)]


def sentence_of(text: str, pos: int) -> str:
    """The sentence of `text` around position `pos` (a table row is one sentence)."""
    line_start = text.rfind("\n", 0, pos) + 1
    line = line_of(text, pos)
    if line.lstrip().startswith("|"):
        return line.strip()
    offset = pos - line_start
    start = 0
    for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z\"“(*])", line):
        if m.start() >= offset:
            return line[start:m.start()].strip()
        start = m.end()
    return line[start:].strip()


def remove_block(text: str, marker: str) -> tuple[str, str] | None:
    """Remove the block whose first line starts with `marker`: a heading with its section, a table
    row, a list item (with its indented continuation) or a paragraph. Returns (new text, removed
    text), or None when no line, or more than one, starts with the marker."""
    lines = text.split("\n")
    hits = [i for i, line in enumerate(lines) if line.strip().startswith(marker)]
    if len(hits) != 1:
        return None
    first = hits[0]
    line = lines[first].strip()
    if heading := _HEADING.match(line):
        level = len(heading[1])
        last = next((j for j in range(first + 1, len(lines))
                     if (h := _HEADING.match(lines[j].strip())) and len(h[1]) <= level), len(lines))
    elif line.startswith("|"):
        last = first + 1
    elif _LIST_ITEM.match(lines[first]):
        last = first + 1
        while last < len(lines) and lines[last].startswith(("  ", "\t")) and lines[last].strip():
            last += 1
    else:
        last = next((j for j in range(first, len(lines)) if not lines[j].strip()), len(lines))
    removed = "\n".join(lines[first:last]).strip()
    kept = lines[:first] + lines[last:]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n", removed


def prose_paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph of running text: not a heading, table, list or email header line."""
    spans = []
    for m in re.finditer(r"(?:^|\n\n)([^\n](?:.|\n(?!\n))*)", text):
        body = m[1]
        first = body.lstrip()
        if (not first or _HEADING.match(first) or first.startswith(("|", "Subject:", "**")) or _LIST_ITEM.match(first)
                or len(body.split()) < 6 or not body.rstrip().endswith(".")):
            continue
        spans.append((m.start(1), m.start(1) + len(body.rstrip())))
    return spans


def append_sentence(text: str, end: int, sentence: str) -> str:
    """Add `sentence` at position `end` (the end of a paragraph), after a space."""
    return text[:end] + " " + sentence + text[end:]
