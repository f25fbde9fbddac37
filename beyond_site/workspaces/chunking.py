"""Token estimates and stable chunking of document text.

One token estimate for the whole app, cheap and consistent rather than exact: the budget is a
guard rail, and a model-specific tokenizer would make the same workspace fit differently for
different models.
"""
from __future__ import annotations

import math
import re

CHUNK_TOKENS = 1500
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def estimate_tokens(text: str) -> int:
    """About four UTF-8 bytes per token."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def _pieces(paragraph: str, max_tokens: int) -> list[str]:
    """A paragraph too long for one chunk, cut at line ends, then at whitespace, then anywhere."""
    if estimate_tokens(paragraph) <= max_tokens:
        return [paragraph]
    max_chars = max_tokens  # at least one token per character, whatever the script
    for separator in ("\n", " "):
        parts = paragraph.split(separator)
        if len(parts) > 1:
            return _pack(parts, separator, max_tokens)
    return [paragraph[i:i + max_chars] for i in range(0, len(paragraph), max_chars)]


def _pack(parts: list[str], separator: str, max_tokens: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        for piece in _pieces(part, max_tokens) if estimate_tokens(part) > max_tokens else [part]:
            cost = estimate_tokens(piece + separator)
            if current and size + cost > max_tokens:
                chunks.append(separator.join(current))
                current, size = [], 0
            current.append(piece)
            size += cost
    if current:
        chunks.append(separator.join(current))
    return chunks


def split_into_chunks(text: str, max_tokens: int = CHUNK_TOKENS) -> list[str]:
    """Consecutive paragraphs grouped into chunks of at most `max_tokens` (estimated).

    Stable: the same text always gives the same chunks, so an unchanged document renders the
    same excerpts and its context blobs are reused.
    """
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text)]
    chunks = _pack([p for p in paragraphs if p], "\n\n", max_tokens)
    return [c for c in chunks if c.strip()]
