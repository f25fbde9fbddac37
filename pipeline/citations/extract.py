"""Extract framework citations from free text: a tokeniser plus a small stateful parser.

An anchor (framework name, "Article", "clause", "Annex A", ...) lets the next bare number be read
as a citation; after a citation, separators and range operators let elided items follow
("Articles 15, 16 and 17", "AC-2(1), (2) and (4)", "PR.AA-01–06"). Anything else in between
ends the list, so numbers no anchor governs (dates, versions, amounts, the document's own section
numbers) are never citations. Ids are tokenised whole before any range operator is read, since
hyphens also sit inside ids (`AC-2`, `PR.AA-01`).

Imported catalogues whose ids follow no shipped grammar are read from their own ids
(`catalogue_ids.py`); imported 800-53 or CSF catalogues are read like the shipped ones, and the
gate decides which catalogue a citation belongs to.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from pipeline.frameworks import get_pack
from pipeline.frameworks.packset import PackSet
from pipeline.frameworks.refs import (CSF_FUNCTIONS, csf_ref, gdpr_article_ref, iso_ref, nist_ref,
                                      parse_gdpr_parts, roman_to_int, soc2_ref)

from . import patterns as P
from .catalogue_ids import catalogue_ids
from .found import Found
from .titles import attach_title

ISO22, ISO13 = "iso27001-2022", "iso27001-2013"


@dataclass
class _List:
    """The citation list being read: what an elided item or range end continues from."""
    kind: str                 # iso_clause | iso_annex | gdpr | recital | chapter | nist | csf | soc2
    last: Found
    parts: dict = field(default_factory=dict)
    expect: str | None = None  # "item" after a separator, "range" after a range operator


class _Editions:
    """Where the text names an ISO edition, to read each ISO citation's edition: a two-level Annex A
    id such as A.8.1 exists in both editions with different meanings."""

    def __init__(self, text: str):
        self.positions: list[int] = []
        self.editions: list[str] = []
        self.breaks = [m.start() for m in P.PARAGRAPH_BREAK.finditer(text)]

    def add(self, pos: int, edition: str | None) -> None:
        if edition:
            self.positions.append(pos)
            self.editions.append(edition)

    def _paragraph(self, pos: int) -> int:
        return bisect.bisect(self.breaks, pos)

    def at(self, pos: int) -> str | None:
        """Edition of the nearest ISO anchor in the same paragraph, before or after `pos`."""
        i = bisect.bisect(self.positions, pos)
        best, best_distance = None, None
        for j in (i - 1, i):
            if 0 <= j < len(self.positions) and self._paragraph(self.positions[j]) == self._paragraph(pos):
                distance = abs(self.positions[j] - pos)
                if best_distance is None or distance < best_distance:
                    best, best_distance = self.editions[j], distance
        return best


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.found: list[Found] = []
        self.editions = _Editions(text)
        self.list: _List | None = None
        self.anchor: tuple[str, dict] | None = None   # (kind, info) waiting for a bare number
        self.consumed = 0                              # text up to here already belongs to a citation

    # ---- emitting ------------------------------------------------------------------------

    def _iso_pack(self, pos: int, numbers: list[str], annex: bool) -> tuple[str, str | None, bool]:
        edition = self.editions.at(pos)
        if edition:
            return (ISO13 if edition == "2013" else ISO22), edition, True
        if annex and len(numbers) == 3:     # only the 2013 Annex A has three-level ids
            return ISO13, "2013", False
        return ISO22, "2022", False

    def emit(self, pack_key: str, ref: str, start: int, end: int, **extra) -> Found:
        found = Found(pack_key, ref, (start, end), self.text[start:end], **extra)
        self.found.append(found)
        return found

    def emit_iso(self, numbers: list[str], annex: bool, start: int, end: int) -> Found:
        key, edition, explicit = self._iso_pack(start, numbers, annex)
        return self.emit(key, iso_ref(numbers, annex), start, end, edition=edition, explicit_edition=explicit)

    def start_list(self, kind: str, found: Found, **parts) -> None:
        self.list = _List(kind, found, parts)
        self.consumed = max(self.consumed, attach_title(self.text, found))

    # ---- ranges --------------------------------------------------------------------------

    def expand_range(self, first: Found, last_ref: str, start: int, end: int, **extra) -> Found:
        """Emit the catalogue entries after `first` up to `last_ref`, at the level written."""
        pack = get_pack(first.pack_key)
        span = (first.span[0], end)
        members = pack.between(first.ref, last_ref)
        if pack.get(first.ref) and not pack.get(first.ref).withdrawn:
            # CSF numbering has gaps where withdrawn ids sit: a range means the live ones.
            members = [e for e in members if not e.withdrawn]
        refs = [e.ref for e in members[1:]] if members else [last_ref]
        first.span, first.surface = span, self.text[span[0]:span[1]]
        last = first
        for ref in refs:
            extra.update(edition=first.edition, explicit_edition=first.explicit_edition)
            last = self.emit(first.pack_key, ref, *span, **extra)
        return last

    def add(self, kind: str, pack_key: str, ref: str, start: int, end: int, parts: dict, **extra) -> None:
        """A new item: a range end if a range operator preceded it in the same list, else a citation."""
        lst = self.list
        if lst and lst.expect == "range" and lst.kind == kind and lst.last.pack_key == pack_key:
            found = self.expand_range(lst.last, ref, start, end, **extra)
        else:
            found = self.emit(pack_key, ref, start, end, **extra)
        self.start_list(kind, found, **parts)

    # ---- token handlers ------------------------------------------------------------------

    def foreign(self, start: int, end: int) -> bool:
        """A keyword-anchored number that belongs to another instrument (a contract, NIS2, BDSG)."""
        return bool(P.FOREIGN_SUFFIX.match(self.text, end) or P.FOREIGN_PREFIX.search(self.text, max(0, start - 40), start))

    def on_id(self, kind: str, start: int, end: int, g: tuple) -> None:
        if kind == "annex_id":
            numbers = g[0].split(".")
            key, edition, explicit = self._iso_pack(start, numbers, True)
            self.add("iso_annex", key, iso_ref(numbers, True), start, end, {"numbers": numbers},
                     edition=edition, explicit_edition=explicit)
        elif kind == "nist_id":
            family, number, enhancement, items = g
            item_list = re.findall(r"[a-z]|\d{1,2}", items or "")
            self.add("nist", "nist-800-53r5", nist_ref(family, number, enhancement, item_list), start, end,
                     {"family": family, "number": number})
        elif kind == "csf_id":
            function, category, number = g
            self.add("csf", "nist-csf-2.0", csf_ref(function, category, number), start, end,
                     {"function": function, "category": category})
        elif kind == "csf_function":
            if CSF_FUNCTIONS.get(g[0].upper()) == g[1]:
                self.add("csf", "nist-csf-2.0", g[1], start, end, {"function": g[1], "category": None})
        elif kind == "soc2_id":
            series = g[0] or g[1]
            self.add("soc2", "soc2-tsc-2017", soc2_ref(series, g[2], g[3]), start, end, {"series": series})
        elif kind == "gdpr_point":
            letter, article, paragraph = g
            parts = [paragraph, letter] if paragraph else [letter]
            self.add("gdpr", "gdpr", gdpr_article_ref(article, parts), start, end, {"article": article, "parts": parts})
        elif kind == "gdpr_para":
            paragraph, article = g
            self.add("gdpr", "gdpr", gdpr_article_ref(article, [paragraph]), start, end,
                     {"article": article, "parts": [paragraph]})
        elif kind == "iso_section":
            numbers = g[0].split(".")
            written = re.sub(r"\s+of\s+(?:the\s+)?$", "", self.text[start:end])   # "section 9.2"
            found = self.emit_iso(numbers, False, start, start + len(written))
            self.start_list("iso_clause", found, numbers=numbers)

    def on_gdpr_number(self, number: str, start: int, num_start: int) -> None:
        """`Art. 30(1)(a)`, `Article 5.1.f`, `Art. 30 para. 1 lit. a`: read the sub-parts after the number."""
        article = number.split(".")[0]
        after = num_start + len(article)
        parts, used = _gdpr_parts_at(self.text, after)
        end = after + used
        if self.foreign(start, end):
            self.list = None
            self.consumed = end
            return
        self.consumed = end
        self.add("gdpr", "gdpr", gdpr_article_ref(article, parts), start, end, {"article": article, "parts": parts})

    def on_anchored(self, anchor: str, info: dict, kind: str, start: int, end: int, g: tuple) -> None:
        """The first bare item after a keyword or framework-name anchor."""
        anchor_start = start if anchor == "iso_name" else info["start"]
        paren, number = (g[0], g[1]) if kind == "num" else (None, None)
        if anchor == "gdpr" and number:
            self.on_gdpr_number(number, anchor_start, start)
        elif anchor == "recital" and number and number.isdigit():
            self.add("recital", "gdpr", f"Recital {int(number)}", anchor_start, end, {})
        elif anchor == "chapter" and kind == "roman" and roman_to_int(g[0]):
            if not self.foreign(anchor_start, end):
                self.add("chapter", "gdpr", f"Chapter {g[0]}", anchor_start, end, {})
        elif anchor in ("clause", "iso_name") and number:
            numbers = number.split(".")
            # "clause 12.4" is a contract's clause, unless an ISO name stands right before it.
            in_range = 1 <= int(numbers[0]) <= 10 or info.get("iso")
            if in_range and not self.foreign(anchor_start, end):
                annex = info.get("annex", False) and len(numbers) >= 2
                found = self.emit_iso(numbers, annex, anchor_start, end)
                self.start_list("iso_annex" if annex else "iso_clause", found, numbers=numbers)
        elif anchor in ("annex", "control") and number and "." in number:
            numbers = number.split(".")
            if 5 <= int(numbers[0]) <= 18 and not self.foreign(anchor_start, end):
                found = self.emit_iso(numbers, True, anchor_start, end)
                self.start_list("iso_annex", found, numbers=numbers)

    def on_elided(self, kind: str, start: int, end: int, g: tuple) -> None:
        """A bare item continuing the current list: `16` after `Articles 15,`, `(2)` after `AC-2(1),`."""
        lst = self.list
        assert lst is not None
        paren, number = (g[0], g[1]) if kind == "num" else (None, None)
        parts = lst.parts
        if lst.kind == "gdpr":
            if number:
                self.on_gdpr_number(number, start, start)
            elif (paren or kind == "paren_letter") and parts.get("parts"):
                item = paren or g[0]
                new_parts = list(parts["parts"])
                # replace the last sub-part of the same sort: (1) and (2); (a), (b) and (f)
                for i in range(len(new_parts) - 1, -1, -1):
                    if new_parts[i].isdigit() == item.isdigit():
                        new_parts = new_parts[:i] + [item]
                        break
                else:
                    new_parts.append(item)
                self.add("gdpr", "gdpr", gdpr_article_ref(parts["article"], new_parts), start, end,
                         {"article": parts["article"], "parts": new_parts})
        elif lst.kind in ("iso_clause", "iso_annex") and number:
            numbers = number.split(".")
            annex = lst.kind == "iso_annex"
            if annex and len(numbers) < 2:
                return
            self.add(lst.kind, lst.last.pack_key, iso_ref(numbers, annex), start, end, {"numbers": numbers},
                     edition=lst.last.edition, explicit_edition=lst.last.explicit_edition)
        elif lst.kind == "nist" and paren:
            self.add("nist", "nist-800-53r5", nist_ref(parts["family"], parts["number"], paren), start, end, parts)
        elif lst.kind == "csf" and number and number.isdigit() and parts.get("category"):
            self.add("csf", "nist-csf-2.0", csf_ref(parts["function"], parts["category"], number), start, end, parts)
        elif lst.kind == "soc2" and number and number.count(".") == 1:
            major, minor = number.split(".")
            self.add("soc2", "soc2-tsc-2017", soc2_ref(parts["series"], major, minor), start, end, parts)
        elif lst.kind == "recital" and number and number.isdigit():
            self.add("recital", "gdpr", f"Recital {int(number)}", start, end, {})
        elif lst.kind == "chapter" and kind == "roman" and roman_to_int(g[0]):
            self.add("chapter", "gdpr", f"Chapter {g[0]}", start, end, {})

    # ---- main loop -----------------------------------------------------------------------

    _ANCHORS = {"gdpr_kw": "gdpr", "recital_kw": "recital", "chapter_kw": "chapter",
                "clause_kw": "clause", "annex_kw": "annex", "control_kw": "control"}
    _IDS = {"annex_id", "nist_id", "csf_id", "csf_function", "soc2_id", "gdpr_point", "gdpr_para", "iso_section"}
    _ITEMS = {"num", "paren_letter", "roman"}

    def run(self) -> list[Found]:
        text = self.text
        all_tokens = list(P.tokens(text))
        for kind, start, end, g in all_tokens:      # editions first: an anchor may follow its ids
            if kind == "fw_iso":
                self.editions.add(start, g[1] or g[3])
        previous_end = 0
        for kind, start, end, g in all_tokens:
            if start < self.consumed:
                continue
            if text[max(previous_end, self.consumed):start].strip():
                self.list, self.anchor = None, None   # words in between end any list or anchor
            previous_end = end
            anchor, self.anchor = self.anchor, None
            if kind == "noise" or kind.startswith("fw_"):
                self.list = None
                if kind == "fw_iso":
                    self.anchor = ("iso_name", {"annex": (g[0] or g[2]) == "27002"})
                continue
            if kind in self._ANCHORS:
                # "ISO 27001 clause 9.2" / "ISO 27002 control 5.9": the keyword decides.
                self.anchor = (self._ANCHORS[kind], {"start": start, "iso": bool(anchor and anchor[0] == "iso_name")})
                self.list = None
                continue
            if kind in self._IDS:
                self.on_id(kind, start, end, g)
            elif kind == "sep":
                if self.list:
                    self.list.expect = "item"
            elif kind == "range":
                if self.list:
                    self.list.expect = "range"
            elif kind in self._ITEMS:
                if anchor:
                    self.list = None
                    self.on_anchored(anchor[0], anchor[1], kind, start, end, g)
                elif self.list and self.list.expect:
                    self.on_elided(kind, start, end, g)
                else:
                    self.list = None
        self.found.sort(key=lambda f: f.span[0])
        return self.found


def _gdpr_parts_at(text: str, pos: int) -> tuple[list[str], int]:
    """GDPR sub-parts written right after position `pos` (a short window: they are adjacent)."""
    return parse_gdpr_parts(text[pos:pos + 60])


def extract_citations(text: str, packs: PackSet | None = None) -> list[Found]:
    """Every framework citation asserted in `text`, with canonical refs and original spans.

    `packs` adds imported catalogues: those with their own id grammar are searched for their ids;
    an imported 800-53 or CSF catalogue needs nothing more, its ids read like the shipped ones.
    """
    if not text:
        return []
    found = _Parser(text).run()
    for pack in packs.own_scheme() if packs else ():
        found += catalogue_ids(pack).find(text)
    found.sort(key=lambda f: f.span[0])
    return found
