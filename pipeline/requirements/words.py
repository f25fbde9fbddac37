"""How the requirement trace compares words: folded, stemmed, and with acronyms spelled out.

A requirement is in the task's words and a document says the same thing its own way ("DPA status"
as a column "Data processing agreement status", "reviews" for "review"): two phrases match when
every content word of the one is found in the other, by stem, or spelled as the initials of words
that are there.
"""
from __future__ import annotations

import re

from pipeline.specifics.found import fold
from pipeline.words import stem

#: Words that carry nothing a document must show: articles, pronouns, connectors, verbs of asking.
FILLER = frozenset("""
a an and or the of for to in on at by with from into as per via our their its his her my your we us you
this that these those each every all any some both either which who whom whose what where when how
is are be been being was were will shall should must can could may might would do does did has have had
also plus including include includes included covering cover covers such etc new existing current
please draft write prepare create produce make build give turn convert update revise add set up out
after before within under over than least most minimum maximum
""".split())

_WORD = re.compile(r"[a-z0-9]+")
_ACRONYM = re.compile(r"\b[A-Z][A-Za-z]?[A-Z]{1,5}s?\b")


def words(text: str) -> list[str]:
    """The folded words of `text` ("Data-processing agreement" -> data, processing, agreement)."""
    return _WORD.findall(fold(text))


def content_words(text: str) -> list[str]:
    """The words of `text` that say something, in order, without repeats."""
    return list(dict.fromkeys(w for w in words(text) if w not in FILLER))


def stems_of(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def acronyms(text: str) -> list[str]:
    """Acronyms as written ("DPA", "SoA", "RTOs" -> "RTO"), upper-cased."""
    return [a[:-1].upper() if a.endswith("s") and not a.isupper() else a.upper() for a in _ACRONYM.findall(text)]


_SKIPPED_IN_INITIALS = frozenset({"the", "a", "an", "and", "our"})


def initials(text: str) -> str:
    """The initials of a phrase's words ("statement of applicability" -> "soa")."""
    return "".join(w[0] for w in words(text) if w not in _SKIPPED_IN_INITIALS)


def spelled_out(acronym: str, text: str) -> bool:
    """True when one line (or table cell) of `text` has consecutive words whose initials spell
    `acronym` ("DPA" in "data processing agreement"): within a line, so that a long document's
    initials cannot spell it by chance."""
    letters = acronym.lower()
    if len(letters) < 2:
        return False
    for line in re.split(r"[\n|]", text):
        if letters in initials(line):
            return True
    return False


def _compound_of(word: str, have: set[str]) -> bool:
    """"lockout" against a text that writes "locked", "passkeys" against "passkey-based": one
    word of four letters or more begins the other."""
    if len(word) < 5 or len(have) > 400:
        return False
    return any(len(h) >= 4 and (word.startswith(h) or h.startswith(word[:6])) for h in have)


def phrase_in(phrase: str, text: str, *, text_stems: set[str] | None = None) -> bool:
    """Every content word of `phrase` is in `text` (by stem), an acronym counting when `text`
    spells it out, and a spelled-out phrase counting when `text` uses its acronym."""
    have = text_stems if text_stems is not None else stems_of(text)
    wanted = content_words(phrase)
    if not wanted:
        return False
    missing = [w for w in wanted if stem(w) not in have and not _compound_of(w, have)]
    if not missing:
        return True
    written = {a.lower() for a in acronyms(phrase)}
    if missing and all(w in written and spelled_out(w, text) for w in missing):
        return True
    # "Statement of Applicability" against a text that writes "SoA".
    short = initials(phrase)
    return len(short) >= 3 and stem(short) in have
