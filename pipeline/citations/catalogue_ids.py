"""Citations of an imported catalogue whose ids follow no shipped grammar, read from the catalogue.

Such a catalogue's ids are known only from its entries, so the patterns come from them: every id
is turned into a shape (its leading letters kept, digits and later letters generalised), and text
of a shape the catalogue uses is a citation of it, listed or not (an id of the right shape that
the catalogue lacks is an invented one). Ids without a leading word, such as `3.1.1`, look like
any section or version number: they count only right after the catalogue's name, the rule every
bare number follows here.
"""
from __future__ import annotations

import re
from functools import lru_cache

from pipeline.frameworks import Pack
from pipeline.frameworks.refs import clean

from . import patterns as P
from .found import Found
from .titles import attach_title

_RUN = re.compile(r"[A-Za-z]+|\d+|\s+|.")
_CUE = rf"(?:{P.SPACE}*,?{P.SPACE}*(?:(?:requirements?|controls?|sections?|§){P.SPACE}*)?)"


def norm_id(text: str) -> str:
    """An id compared loosely: case, spaces, dashes and leading zeros do not matter."""
    return re.sub(r"\b0+(?=\d)|(?<=\D)0+(?=\d)", "", clean(text).lower().replace(" ", ""))


def _shape(ref: str) -> str:
    out, first = [], True
    for run in _RUN.findall(ref):
        if run.isalpha():
            out.append(f"(?i:{re.escape(run)})" if first else f"[A-Za-z]{{{len(run)}}}")
            first = False
        elif run.isdigit():
            out.append(r"\d{1,4}")
        elif run.isspace():
            out.append(f"{P.SPACE}?")
        else:
            out.append(P.DASH if run == "-" else re.escape(run))
    return "".join(out)


def _self_identifying(ref: str) -> bool:
    lead = re.match(r"[A-Za-z]+", ref)
    return bool(lead) and len(lead[0]) >= 2


def _alternation(shapes: set[str]) -> str:
    return "|".join(sorted(shapes, key=lambda s: (-len(s), s)))


class CatalogueIds:
    """One imported catalogue's ids: canonical lookup and finding them in text."""

    def __init__(self, pack: Pack):
        self.pack = pack
        self.by_norm: dict[str, str] = {}
        free, anchored = set(), set()
        for ref in pack.entries:
            self.by_norm.setdefault(norm_id(ref), ref)
            if any(ch.isdigit() for ch in ref):
                (free if _self_identifying(ref) else anchored).add(_shape(ref))
        edge = r"(?![\w]|[.\-(]\w)"
        self._free = re.compile(rf"(?<![\w.\-])(?:{_alternation(free)}){edge}") if free else None
        names = sorted({n for n in (pack.name, pack.key, *pack.aliases) if n}, key=len, reverse=True)
        self._anchored = re.compile(
            rf"(?<!\w)(?i:{'|'.join(map(re.escape, names))}){_CUE}((?:{_alternation(anchored)})){edge}"
        ) if anchored and names else None

    def ref(self, written: str) -> str:
        """The catalogue's own spelling of `written`, or `written` cleaned when it has no such id."""
        return self.by_norm.get(norm_id(written)) or clean(written)

    def find(self, text: str) -> list[Found]:
        found: list[Found] = []
        if self._free:
            found += [self._found(text, m.start(), m.end()) for m in self._free.finditer(text)]
        if self._anchored:
            found += [self._found(text, m.start(1), m.end(1)) for m in self._anchored.finditer(text)]
        return found

    def _found(self, text: str, start: int, end: int) -> Found:
        found = Found(self.pack.key, self.ref(text[start:end]), (start, end), text[start:end])
        attach_title(text, found)
        return found


@lru_cache(maxsize=32)
def catalogue_ids(pack: Pack) -> CatalogueIds:
    """The (cached) id reader of an imported pack; packs are compared by identity."""
    return CatalogueIds(pack)
