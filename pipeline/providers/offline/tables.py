"""Tables in the workspace's files: read them, and map their real columns to a document's columns.

The extraction layer hands files over as text: a CSV file as its raw text, an XLSX file as one
Markdown pipe table per sheet (each after a line `## Sheet: <name>`), a DOCX file as paragraph
lines with each table as a Markdown pipe table. A long file may arrive in parts named
"name (part k of n)"; parts are joined back when they follow each other.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from pipeline.context import Document
from pipeline.words import stem

_PART = re.compile(r"^(?P<name>.+) \(part (?P<k>\d+) of (?P<n>\d+)\)$")
_SHEET = re.compile(r"^#{1,6}\s*Sheet:\s*(?P<name>.+?)\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s+(?P<name>.+?)\s*#*\s*$")
_SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")
# Header words too common to tell two columns apart.
_FILLER = frozenset({"of", "the", "and", "a", "an", "in", "to", "for", "is", "are"})
# Read no more of one table than a document could show.
MAX_ROWS = 500


@dataclass(frozen=True)
class Table:
    """One table of a file: where it came from, its title (sheet or nearest heading), header and rows."""

    source: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def whole_documents(docs: Iterable[Document]) -> list[tuple[str, str, bool]]:
    """(name, text, starts at the beginning) per document, with consecutive parts joined back."""
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for doc in docs:
        match = _PART.match(doc.name)
        name, k = (match["name"], int(match["k"])) if match else (doc.name, 1)
        groups.setdefault((name, doc.sha256), []).append((k, doc.text))
    out = []
    for (name, _), parts in groups.items():
        parts.sort()
        run_start, texts, previous = parts[0][0], [], None
        for k, text in parts:
            if previous is not None and k != previous + 1:  # a gap: what follows is a fragment of its own
                out.append((name, "\n".join(texts), run_start == 1))
                run_start, texts = k, []
            texts.append(text)
            previous = k
        out.append((name, "\n".join(texts), run_start == 1))
    return out


def _csv_table(name: str, text: str) -> Table | None:
    sample = text[:4096]
    first = sample.splitlines()[0] if sample.strip() else ""
    delimiter = max((",", ";", "\t"), key=first.count)
    rows = [[c.strip() for c in row] for row in csv.reader(io.StringIO(text), delimiter=delimiter)]
    rows = [row for row in rows if any(row)]
    if len(rows) < 2 or len(rows[0]) < 2:
        return None
    header = tuple(h or f"Column {i + 1}" for i, h in enumerate(rows[0]))
    width = len(header)
    body = tuple(tuple((row + [""] * width)[:width]) for row in rows[1:MAX_ROWS + 1])
    return Table(name, name.rsplit(".", 1)[0], header, body)


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.replace("\x00", "|").strip() for c in inner.replace("\\|", "\x00").split("|")]


def _pipe_tables(name: str, text: str) -> list[Table]:
    tables: list[Table] = []
    lines = text.splitlines()
    title, i = "", 0
    while i < len(lines):
        line = lines[i].strip()
        sheet, heading = _SHEET.match(line), _HEADING.match(line)
        if sheet or heading:
            title = (sheet or heading)["name"]
        is_table = (line.startswith("|") and i + 1 < len(lines)
                    and all(_SEPARATOR_CELL.match(c) for c in _cells(lines[i + 1]) if c) and "-" in lines[i + 1])
        if not is_table:
            i += 1
            continue
        header = tuple(h or f"Column {n + 1}" for n, h in enumerate(_cells(line)))
        width, body, i = len(header), [], i + 2
        while i < len(lines) and lines[i].strip().startswith("|"):
            cells = _cells(lines[i])
            if any(cells) and len(body) < MAX_ROWS:
                body.append(tuple((cells + [""] * width)[:width]))
            i += 1
        if body:
            tables.append(Table(name, title, header, tuple(body)))
    return tables


def read_tables(docs: Iterable[Document]) -> list[Table]:
    """Every table in `docs`: CSV files whole, Markdown pipe tables anywhere else.

    A CSV fragment whose first part is missing has no header row, so it is left out.
    """
    tables: list[Table] = []
    for name, text, from_start in whole_documents(docs):
        if name.lower().endswith((".csv", ".tsv")):
            table = _csv_table(name, text) if from_start else None
            tables.extend([table] if table else [])
        else:
            tables.extend(_pipe_tables(name, text))
    return tables


@lru_cache(maxsize=4096)
def header_stems(cell: str) -> frozenset[str]:
    """A header cell as stems: "Owner (team)" -> {owner, team}, "Asset #" -> {asset, no}."""
    text = cell.lower().replace("#", " no ").replace("n°", " no ")
    return frozenset(stem(w) for w in re.findall(r"[^\W_]+", text) if w not in _FILLER)


def _match(cell: frozenset[str], synonym: frozenset[str]) -> int:
    if not cell or not synonym:
        return 0
    if cell == synonym:
        return 100
    if synonym <= cell:
        return 50 + len(synonym)
    if cell <= synonym:
        return 30 + len(cell)
    return 0


def map_columns(header: tuple[str, ...], wanted: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Which source column (by index) feeds each wanted column, matched on synonyms.

    The best-matching pairs are taken first and a source column feeds one wanted column only, so
    "Risk owner" goes to the owner even though it also says "risk".
    """
    cells = [header_stems(h) for h in header]
    pairs = []
    for w, (column, synonyms) in enumerate(wanted.items()):
        for s, cell in enumerate(cells):
            best = max((_match(cell, header_stems(syn)) for syn in (column, *synonyms)), default=0)
            if best:
                pairs.append((-best, w, s, column))
    mapping: dict[str, int] = {}
    for _, _, s, column in sorted(pairs):
        if column not in mapping and s not in mapping.values():
            mapping[column] = s
    return mapping
