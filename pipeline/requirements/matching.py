"""Whether a text shows an ask: the one rule per kind of ask, used both to tell whether a brief's
requirement carries an ask and whether a released document meets it."""
from __future__ import annotations

import re

from pipeline.specifics.found import fold

from .asks import (COLUMN, DELIVERABLE, DOCUMENT, FRAMEWORK, ITEM, NAME, QUESTION, QUOTED, REFERENCE, SECTION,
                   SPECIFIC, Ask)
from .document import Part
from .names import same_framework
from .words import acronyms, content_words, phrase_in, spelled_out, stems_of
from pipeline.words import stem

#: A question is answered in a row that repeats most of its words.
_QUESTION_SHARE = 0.6


def carries(text: str, ask: Ask) -> bool:
    """True when a requirement written as `text` carries `ask` (it states the same thing)."""
    return shows(Part("", text), ask, loose=True)


def shows(part: Part, ask: Ask, *, loose: bool = False) -> bool:
    """True when `part` shows `ask` anywhere in its text. `loose` (a requirement's own words): a
    column or a section need only be named, not be a table header or a heading."""
    if ask.kind == SPECIFIC:
        return _value_in(part, ask)
    if ask.kind == FRAMEWORK:
        return same_framework(ask.keys[0], part.frameworks)
    if ask.kind == REFERENCE:
        return all(_reference_in(part, key) or (loose and _written(key[1], part.text)) for key in ask.keys)
    if ask.kind == QUOTED:
        return f" {' '.join(fold(ask.text).split())} " in part.folded
    if ask.kind == NAME:
        return _name_in(part, ask)
    if ask.kind == QUESTION:
        return _question_in(part, ask.text)
    if loose or ask.kind in (ITEM, SECTION):
        return any(phrase_in(ask.text, line) for line in [part.title, *part.lines]) or \
            (loose and phrase_in(ask.text, part.title + "\n" + part.text, text_stems=part.stems))
    if ask.kind == COLUMN:
        return any(phrase_in(ask.text, cell) for cell in part.header_cells)
    if ask.kind in (DOCUMENT, DELIVERABLE):
        return any(phrase_in(ask.text, heading) for heading in part.headings)
    return False


def _value_in(part: Part, ask: Ask) -> bool:
    """The same value, however written; a value the task writes with a number is met only by one
    written with a number too (not by "annually" elsewhere in the document)."""
    written = part.number_keys if re.search(r"\d", ask.text) else part.specific_keys
    for key in ask.keys:
        if key[0] == "number":
            if key[1] in part.numbers:
                return True
        elif key in written:
            return True
    return False


def _reference_in(part: Part, key: tuple[str, str]) -> bool:
    pack, ref = key
    if pack == "article":
        pattern = rf"\b(?:Art(?:icle)?s?\.?|Clauses?|Sections?|§)\s*{re.escape(ref)}(?![\d.])"
        return bool(re.search(pattern, part.title + "\n" + part.text, re.I))
    return any(p == pack and (r == ref or r.startswith(ref + "(") or r.startswith(ref + ".")) for p, r in part.references)


def _written(ref: str, text: str) -> bool:
    """A reference written as such in a requirement's own words ("9.3", "Art. 33")."""
    return bool(re.search(rf"(?<![\w.]){re.escape(ref)}(?![\w]|\.\d)", text))


def _name_in(part: Part, ask: Ask) -> bool:
    if ask.keys and any(key in part.specific_keys for key in ask.keys):
        return True
    folded = " ".join(fold(ask.text).split())
    if folded and f" {folded} " in part.folded:
        return True
    return any(spelled_out(a, part.text) for a in acronyms(ask.text) if len(a) == len(ask.text.strip()))


def _question_in(part: Part, question: str) -> bool:
    wanted = {stem(w) for w in content_words(question)}
    if not wanted:
        return False
    need = max(1, round(len(wanted) * _QUESTION_SHARE))
    return any(len(wanted & stems_of(line)) >= need for line in part.lines)
