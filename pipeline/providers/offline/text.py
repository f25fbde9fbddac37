"""Small text helpers: sentences, and spotting anything that looks like a framework citation."""
from __future__ import annotations

import re

from pipeline.frameworks.refs import CSF_CODES

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")

# Anything a citation checker could read as a framework reference. User-supplied text (memories,
# files, the task) that matches is never echoed into a draft: the engine may only cite the brief.
_CITATION_LIKE = re.compile(
    r"\bA\s?\.?\s?\d+\.\d+|\bAnnex\s+A\b|\bArt(?:icle)?s?\b\.?\s*\d+|\bRecitals?\s+\d+|\bChapter\s+[IVX]+\b"
    r"|(?:\bclauses?|\bcl\.|§|\bsections?|\bcontrols?|\bpara(?:graph)?\.?)\s*\d+"
    r"|\b[A-Z]{2}-\d+|\b(?:" + CSF_CODES + r")\.[A-Z]{2}|\b(?:CC|PI|P|C)\d+\.\d+|\bA1\.\d"
    r"|\b(?:TSC|SOC\s?2)\s+\w*\d",
    re.IGNORECASE,
)
# Framework names carry numbers of their own; with those removed, a dotted number left next to a
# framework anchor is probably a clause reference.
_FRAMEWORK_NUMBERS = re.compile(r"27001(?::20\d\d)?|27002(?::20\d\d)?|800-53|Rev\.\s*5|2016/679|CSF\s*2\.0|20\d\d")
_ANCHOR = re.compile(r"\b(?:ISO|IEC|NIST|GDPR|SOC|CSF|Regulation|TSC)\b", re.IGNORECASE)
_DOTTED = re.compile(r"\b\d+\.\d+")


_BLOCK_START = re.compile(r"^\s*(?:#{1,6}\s|[-*+>|]\s?|\d+[.)]\s)")


def _blocks(text: str) -> list[str]:
    """Paragraphs with hard-wrapped lines joined; a heading, list item, quote or table row
    starts a block of its own."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if not line.strip():
            current = None
        elif current is None or _BLOCK_START.match(line):
            current = [line.strip()]
            blocks.append(current)
        else:
            current.append(line.strip())
    return [" ".join(lines) for lines in blocks]


def sentences(text: str) -> list[str]:
    """Split prose into sentences, dropping blanks and Markdown furniture; a sentence wrapped
    over several lines stays whole."""
    out: list[str] = []
    for block in _blocks(text):
        block = block.lstrip("#>-*+| ").strip()
        if block:
            out.extend(s.strip() for s in _SENTENCE_END.split(block) if s.strip())
    return out


def looks_like_citation(text: str) -> bool:
    """True when `text` holds anything a citation checker might read as a framework reference."""
    if _CITATION_LIKE.search(text):
        return True
    return bool(_ANCHOR.search(text) and _DOTTED.search(_FRAMEWORK_NUMBERS.sub(" ", text)))


def clip(text: str, limit: int = 220) -> str:
    """Shorten to about `limit` characters on a word boundary, marking the cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def squash(text: str) -> str:
    """Case- and whitespace-insensitive form for comparing quotes."""
    return " ".join(text.lower().replace("\u201c", '"').replace("\u201d", '"').split())


def lower_first(phrase: str) -> str:
    """"Payroll and HR" reads mid-sentence as "payroll and HR"; "CRM for prospects" keeps its capitals."""
    return phrase[:1].lower() + phrase[1:] if phrase[1:2].islower() else phrase
