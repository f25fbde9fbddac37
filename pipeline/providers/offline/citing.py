"""Choosing the approved citation set from the framework packs, and writing a citation in a draft.

Only frameworks the workspace enables are cited; every title is the pack's own short title, and no
requirement text is ever added (the standards' wording is not ours to ship).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.citations import Found
from pipeline.frameworks import SHIPPED_FRAMEWORKS, Entry, Pack, load_packs, named_frameworks, pack_for_framework_name
from pipeline.schemas import Citation
from pipeline.words import overlap, stems

from .outcomes import CSF_OUTCOMES

MAX_CITATIONS = 12
# Entry kinds too broad to cite for a document step, or without titles of their own.
_UNCITABLE_KINDS = {"chapter", "recital", "series", "theme", "annex", "family", "function", "subcategory",
                    "enhancement", "domain", "objective"}


@dataclass(frozen=True)
class Pick:
    """A chosen pack entry and the ref to cite it by (an entry ref, or a GDPR paragraph of one)."""

    pack: Pack
    entry: Entry
    ref: str
    title: str = ""  # for entries the catalogue gives no short title (CSF subcategories)


def enabled_packs(enabled: tuple[str, ...], task: str) -> list[Pack]:
    """The packs to cite from: the workspace's enabled frameworks, else those the task names, else ISO."""
    if enabled:
        packs = [pack_for_framework_name(name) for name in enabled]
    else:
        packs = [p for p in named_frameworks(task) if p.key in SHIPPED_FRAMEWORKS] or [load_packs()["iso27001-2022"]]
    unique: list[Pack] = []
    for pack in packs:
        if pack is not None and pack not in unique:
            unique.append(pack)
    return unique


def _citable(pack: Pack, ref: str) -> Pick | None:
    entry = pack.lookup(ref)
    if entry is not None and not entry.title and entry.ref in CSF_OUTCOMES:
        return Pick(pack, entry, entry.ref, CSF_OUTCOMES[entry.ref][0])
    if entry is not None and not entry.title and entry.parent:  # CSF subcategories: cite the category
        entry, ref = pack.get(entry.parent), entry.parent
    if entry is None or entry.withdrawn or not entry.title:
        return None
    # Only GDPR paragraphs are kept below entry level: the other packs list every citable id.
    return Pick(pack, entry, ref if pack.key == "gdpr" else entry.ref)


def explicit_picks(refs: tuple[Found, ...], packs: list[Pack]) -> tuple[list[Pick], list[Found]]:
    """The references a task names (as the citation gate reads them) that an enabled pack holds;
    and those it cannot approve."""
    picks: list[Pick] = []
    refused: list[Found] = []
    for found in refs:
        pack = next((p for p in packs if p.key == found.pack_key), None)
        pick = _citable(pack, found.ref) if pack else None
        if pick is None:
            refused.append(found)
        elif pick not in picks:
            picks.append(pick)
    return picks, refused


def expand(pick: Pick) -> list[Pick]:
    """A category, family or function as the entries under it that can be cited one by one
    (PR.AA -> PR.AA-01..06); any other entry as itself."""
    children = [e for e in pick.pack.entries.values() if e.parent == pick.entry.ref and not e.withdrawn]
    out = []
    for child in children:
        label = child.title or CSF_OUTCOMES.get(child.ref, ("",))[0]
        if label:
            out.append(Pick(pick.pack, child, child.ref, "" if child.title else label))
    return out or [pick]


#: "Annex A 5", "Annex A.8", "A.5.x", "A.6.*": a whole theme of an ISO Annex A, which the citation
#: reader does not take for a reference (it is not a citable control).
_THEME = re.compile(r"\b(?:Annex\s+A[\s.]*|A\.)(?P<n>\d{1,2})(?:\.(?:x+|\*))?(?![\w.]*\d)", re.IGNORECASE)
_WHOLE_ANNEX = re.compile(r"\b(?:all|every|whole|full|complete|entire)\s+(?:of\s+)?(?:the\s+)?(?:ISO[\w/ :.-]*?\s+)?"
                          r"Annex\s+A\b(?![\s.]*\d)", re.IGNORECASE)
#: Entry kinds that group citable entries: a request for one is a request for all under it.
GROUP_KINDS = {"theme", "family", "series", "category", "domain", "function", "annex"}


def group_picks(task: str, packs: list[Pack]) -> list[Pick]:
    """The Annex A themes a task names ("Annex A 5", "A.8.x") or the whole Annex A ("all Annex A
    controls"), in the enabled ISO packs, as picks to expand."""
    wanted = [f"A.{m['n']}" for m in _THEME.finditer(task)] + (["Annex A"] if _WHOLE_ANNEX.search(task) else [])
    out: list[Pick] = []
    for pack in packs:
        if not pack.key.startswith("iso27001"):
            continue
        for ref in wanted:
            entry = pack.get(ref)
            if entry is not None and entry.kind in GROUP_KINDS:
                out.append(Pick(pack, entry, entry.ref))
    return out


def expand_all(pick: Pick) -> list[Pick]:
    """A group as every citable entry under it, however deep (Annex A -> its themes -> their controls)."""
    if pick.entry.kind not in GROUP_KINDS:
        return [pick]
    children = [e for e in pick.pack.entries.values() if e.parent == pick.entry.ref and not e.withdrawn]
    if not children:
        return [pick]
    return [p for child in children for p in expand_all(Pick(pick.pack, child, child.ref))
            if p.entry.title or p.title]


def topic_picks(topics: list[str], packs: list[Pack], table: dict) -> list[Pick]:
    """The curated refs of `topics` in every enabled pack, in topic then framework order."""
    picks: list[Pick] = []
    for topic in topics:
        for pack in packs:
            for ref in table.get(topic, {}).get(pack.key, ()):
                pick = _citable(pack, ref)
                if pick and pick not in picks:
                    picks.append(pick)
    return picks


def keyword_picks(task: str, packs: list[Pack], limit: int = 2) -> list[Pick]:
    """Entries whose title shares at least two content words with the task (or all of a short title)."""
    task_stems = stems(task)
    scored = []
    for p, pack in enumerate(packs):
        for n, entry in enumerate(pack.entries.values()):
            if entry.kind in _UNCITABLE_KINDS or entry.withdrawn or not entry.title:
                continue
            title_stems = stems(entry.title)
            shared = len(task_stems & title_stems)
            if shared >= 2 or (shared and shared == len(title_stems) and len(title_stems) > 1):
                scored.append((-shared, p, n, Pick(pack, entry, entry.ref)))
    scored.sort(key=lambda s: s[:3])
    return [s[3] for s in scored[:limit]]


def as_citations(picks: list[Pick]) -> list[Citation]:
    """Number the picks C1..Cn as the brief's approved set."""
    return [Citation(id=f"C{i}", framework=p.pack.name, ref=p.ref, title=p.title or p.entry.title)
            for i, p in enumerate(picks, 1)]


def best_step_for(pick: Pick, step_titles: list[str]) -> int:
    """Index (0-based) of the step whose title is closest to the entry's title; the first on a tie."""
    scores = [overlap(pick.title or pick.entry.title, title) for title in step_titles]
    return scores.index(max(scores))


def format_citation(citation: Citation) -> str:
    """How a draft writes an approved citation, e.g. `ISO/IEC 27001:2022 A.5.9 (Inventory of ...)`."""
    ref = citation.ref
    if citation.framework.startswith("ISO") and ref[:1].isdigit():
        ref = f"clause {ref}"  # a bare number after "ISO" is ambiguous to a reader; say what it is
    written = f"{citation.framework} {ref} ({citation.title})"
    if citation.text:
        written += f': "{citation.text}"'
    return written
