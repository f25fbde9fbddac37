"""Normalise titles and quoted wording before comparing them: case, whitespace, quote marks and
Unicode dashes differ between a brief and a faithful draft without changing what is cited."""
from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from pipeline.frameworks.refs import clean

_QUOTES = dict.fromkeys(map(ord, "\"'“”„«»‘’`´"), None)


@lru_cache(maxsize=4096)   # a draft compares the same titles and approved texts again and again
def norm_text(text: str) -> str:
    """Lower case, one space, no quote marks, unified dashes, no trailing punctuation."""
    text = clean(text).translate(_QUOTES).lower()
    text = re.sub(r"\s*([,;:])\s*", r"\1 ", text)
    return re.sub(r"[\s.,;:!]+$", "", text).strip()


def quote_fragments(quote: str) -> list[str]:
    """A quote with ellipses is several fragments, each of which must appear in the source."""
    return [f for f in (norm_text(part) for part in re.split(r"\.\.\.|…|\[\.\.\.\]", quote)) if f]


def quote_matches(quote: str, source: str) -> bool:
    """True if every fragment of `quote` appears, in order, in `source` (both normalised)."""
    haystack = norm_text(source)
    pos = 0
    for fragment in quote_fragments(quote):
        found = haystack.find(fragment.strip(" []"), pos)
        if found < 0:
            return False
        pos = found + len(fragment)
    return True


def similar(a: str, b: str) -> float:
    return SequenceMatcher(None, norm_text(a), norm_text(b)).ratio()
