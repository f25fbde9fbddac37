"""The words of a text that carry its topic: one stop-word list and one stemmer for the whole app.

Used wherever a task is matched against titles or sentences (the framework entries a context
shows, the offline engine's choices), so that "suppliers" meets "supplier" the same way everywhere.
"""
from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+")

#: Words that carry no topic: matching titles on them would pull in half a catalogue.
STOPWORDS = frozenset("""
a an and are as at be by can do does for from has have in into is it its of on or our us their the this
that these those to was were will shall with we you your draft write prepare create make produce
please need needs new document documents policy procedure about all any each can should must
also per via which who what when how using use based
""".split())

# Longest first: the first suffix that leaves a stem of three letters or more is removed.
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s")
_STEM_LENGTH = 6


def topic_words(text: str) -> list[str]:
    """The text's topic words, lower-cased, deduplicated, in first-seen order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if (len(word) >= 3 or word.isdigit()) and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, stable stem: plural and verb endings removed, then the first six letters, so
    "suppliers" meets "supplier", "backups" meets "backup" and "classified" meets "classification"."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:_STEM_LENGTH]


def stems(text: str) -> set[str]:
    """The stems of the text's topic words."""
    return {stem(word) for word in topic_words(text)}


def overlap(a: str, b: str) -> int:
    """How many topic stems two texts share."""
    return len(stems(a) & stems(b))
