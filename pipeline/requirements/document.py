"""A released document as the requirement trace reads it: per step, its text, headings, table
headers, values and references, each read once."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from pipeline.citations import extract_citations
from pipeline.specifics import find_specifics
from pipeline.specifics.found import fold

from .names import framework_keys
from .words import stems_of

_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s+(.+?)\s*#*\s*$|\*\*([^*\n]{2,120})\*\*\s*:?\s*$)", re.M)
_WRITTEN_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a|an)\b", re.I)
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}")


@dataclass
class Part:
    """The text of one step (or several), read for what the trace looks for."""

    title: str
    text: str

    @cached_property
    def headings(self) -> list[str]:
        found = [m.group(1) or m.group(2) for m in _HEADING.finditer(self.text)]
        return [self.title, *found] if self.title else found

    @cached_property
    def header_cells(self) -> list[str]:
        """The cells of every table's header row (the row above a |---| line)."""
        lines = self.text.splitlines()
        cells = []
        for n, line in enumerate(lines[:-1]):
            row = _TABLE_ROW.match(line)
            if row and _SEPARATOR.match(lines[n + 1]) and (n == 0 or not _TABLE_ROW.match(lines[n - 1])):
                cells += [c.strip() for c in row.group(1).split("|")]
        return cells

    @cached_property
    def lines(self) -> list[str]:
        return [line for line in self.text.splitlines() if line.strip()]

    @cached_property
    def stems(self) -> set[str]:
        return stems_of(self.title + "\n" + self.text)

    @cached_property
    def folded(self) -> str:
        return " " + " ".join(fold(self.title + "\n" + self.text).split()) + " "

    @cached_property
    def specific_keys(self) -> set:
        """The keys of every value the text states, read as a draft is (a number with its unit, a
        date, a name), frequencies in words ("annually") included."""
        return {key for s in self._specifics for key in s.keys}

    @cached_property
    def number_keys(self) -> set:
        """The same, written with a number: "reviewed annually" does not state "12 months of log
        retention", though both are a span of twelve months."""
        return {key for s in self._specifics if _WRITTEN_NUMBER.search(s.text) for key in s.keys}

    @cached_property
    def _specifics(self) -> list:
        return find_specifics(self.title + "\n" + self.text)

    @cached_property
    def numbers(self) -> set[str]:
        return set(re.findall(r"(?<![\d.,])\d[\d,]*(?![\d,]*\d)", self.text.replace(",", "")))

    @cached_property
    def references(self) -> set[tuple[str, str]]:
        return {(f.pack_key, f.ref) for f in extract_citations(self.title + "\n" + self.text)}

    @cached_property
    def frameworks(self) -> set[str]:
        return framework_keys(self.title + "\n" + self.text)


def joined(parts: list[Part]) -> Part:
    return Part("", "\n\n".join(f"## {p.title}\n{p.text}" if p.title else p.text for p in parts))
