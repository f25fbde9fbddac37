"""Violation drafts made mechanically from clean ones, one known violation each.

- altered_id: an approved citation's id changed to a neighbouring id the brief does not approve;
- altered_title: the title (or the name of the GDPR point) written for an approved citation
  replaced by another entry's, or a wrong title added next to it;
- altered_wording: wording quoted for an approved citation changed (an obligation softened, a
  deadline moved), or a sentence quoting changed wording added;
- unapproved_citation: a real catalogue entry the brief does not approve added;
- contradicted_judgment: a sentence contradicting one of the brief's judgments added;
- removed_requirement: the part delivering one item the step's content spec requires removed.
Each maker returns None when its violation does not apply to the draft (no titled citation, no
item it can remove, ...).
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import replace

from pipeline.citations import CitationGate, extract_citations
from pipeline.citations.attribution import attributions
from pipeline.citations.found import Found
from pipeline.citations.normalise import quote_matches
from pipeline.frameworks import Pack
from pipeline.frameworks.packset import PackSet
from pipeline.frameworks.refs import catalogue_ref
from pipeline.months import MONTH_PATTERN
from pipeline.schemas import Brief

from .blocks import append_sentence, line_of, prose_paragraphs, remove_block, sentence_of
from .drafts import CorpusDraft, Truth, draft_id

CITATION_ISSUES = ("altered_citation", "invented_citation")


def make_violation(clean: CorpusDraft, kind: str, rng: random.Random, packs: PackSet) -> CorpusDraft | None:
    """A copy of `clean` with one violation of type `kind`, or None when it does not apply."""
    made = _MAKERS[kind](clean, rng, packs)
    if made is None:
        return None
    text, truth = made
    if text == clean.text:
        return None
    return replace(clean, draft_id=draft_id(clean.brief, clean.step, text), text=text, truth=truth)


# ---- citations in the draft -----------------------------------------------------------------

def _approved(brief: Brief, text: str, packs: PackSet) -> tuple[CitationGate, list[tuple[Found, Pack, object]]]:
    gate = CitationGate(brief, packs)
    found = extract_citations(text, packs)
    spans = [f.span for f in found]
    result = []
    for item in found:
        pack, citation = gate.approval(item)
        if citation is not None and spans.count(item.span) == 1:     # not one of a range or list
            result.append((item, pack, citation))
    return gate, result


def _truth(kind: str, detail: str, text: str, pos: int, changed: str, reported_as) -> Truth:
    return Truth(kind, detail, changed, sentence_of(text, pos), tuple(reported_as))


# ---- altered_id -----------------------------------------------------------------------------

_LAST_PART = re.compile(r"(\d+|[a-z])(?=\)?\.?$)")


def _neighbour(pack: Pack, ref: str, gate: CitationGate) -> str | None:
    """An id next to `ref` in the catalogue that exists and that the brief does not approve."""
    if pack.scheme == "gdpr":
        m = re.fullmatch(r"(Art\. \d+(?:\(\d+\))*)\(([a-z])\)", ref)
        if m:      # a point: another point of the same paragraph
            options = [p for p in pack.point_names if p.startswith(m[1] + "(") and p.count("(") == ref.count("(")]
        else:      # a paragraph: the next one; an article: the next article
            para = re.fullmatch(r"(Art\. \d+)\((\d+)\)", ref)
            options = [f"{para[1]}({int(para[2]) + 1})"] if para else \
                [e.ref for e in pack.entries.values() if e.kind == "article"]
    else:
        entry = pack.get(ref)
        if entry is None:
            return None
        options = [e.ref for e in pack.entries.values()
                   if e.parent == entry.parent and e.kind == entry.kind and not e.withdrawn]
    options = [o for o in options if o != ref and not gate.approves(pack, o) and _LAST_PART.search(o)]
    if not options:
        return None
    later = [o for o in options if _order(pack, o) > _order(pack, ref)]
    return (later or options)[0]


def _order(pack: Pack, ref: str) -> tuple:
    return tuple(int(n) if n.isdigit() else ord(n) for n in re.findall(r"\d+|[a-z]", ref))


def _rewrite(surface: str, old: str, new: str) -> str | None:
    """`surface` with the last part of `old` (as written, zero padding kept) replaced by `new`'s."""
    old_part, new_part = _LAST_PART.search(old)[1], _LAST_PART.search(new)[1]
    if old_part.isdigit() != new_part.isdigit():
        return None
    pattern = rf"0*{int(old_part)}(?!\d)" if old_part.isdigit() else rf"(?<=\(){old_part}(?=\))"
    spots = list(re.finditer(pattern, surface))
    if not spots:
        return None
    spot = spots[-1]
    written = spot[0]
    if new_part.isdigit() and written != old_part:      # written unlike the canonical form: "PR.AA-1", "AC-02"
        new_part = new_part.zfill(len(written)) if written.startswith("0") else str(int(new_part))
    return surface[:spot.start()] + new_part + surface[spot.end():]


def _altered_id(clean: CorpusDraft, rng: random.Random, packs: PackSet):
    gate, occurrences = _approved(clean.brief, clean.text, packs)
    rng.shuffle(occurrences)
    for found, pack, _ in occurrences:
        ref = catalogue_ref(pack.scheme, found.ref) if pack.scheme != "gdpr" else found.ref
        if ref != found.ref:
            continue                                   # a statement item such as AC-2a.: leave it
        new_ref = _neighbour(pack, ref, gate)
        surface = _rewrite(found.surface, ref, new_ref) if new_ref else None
        if surface is None:
            continue
        start, end = found.span
        text = clean.text[:start] + surface + clean.text[end:]
        if not any(f.ref == new_ref and f.span[0] == start for f in extract_citations(text, packs)):
            continue
        return text, _truth("altered_id", f"{ref} changed to {new_ref}", text, start, surface, CITATION_ISSUES)
    return None


# ---- altered_title --------------------------------------------------------------------------

def _other_title(pack: Pack, ref: str, gate: CitationGate) -> str | None:
    if pack.point_names.get(ref):
        neighbour = _neighbour(pack, ref, gate)
        if neighbour and pack.point_names.get(neighbour):
            return pack.point_names[neighbour][0]
    entry = pack.get(ref)
    if entry is None:
        return None
    titles = [e.title for e in pack.entries.values()
              if e.parent == entry.parent and e.kind == entry.kind and e.ref != ref and len(e.title) >= 8]
    later = [e.title for e in pack.entries.values() if e.ref != ref and e.parent == entry.parent
             and e.kind == entry.kind and len(e.title) >= 8 and _order(pack, e.ref) > _order(pack, ref)]
    return (later or titles or [None])[0]


def _altered_title(clean: CorpusDraft, rng: random.Random, packs: PackSet):
    gate, occurrences = _approved(clean.brief, clean.text, packs)
    rng.shuffle(occurrences)
    for found, pack, citation in occurrences:     # a title written next to the citation: change it
        if not found.title_quote or found.ref != (catalogue_ref(pack.scheme, found.ref) if pack.scheme != "gdpr"
                                                  else found.ref):
            continue
        other = _other_title(pack, found.ref, gate)
        at = clean.text.find(found.title_quote, found.span[1], found.end)
        if not other or at < 0:
            continue
        text = clean.text[:at] + other + clean.text[at + len(found.title_quote):]
        return text, _truth("altered_title", f"the title of {found.ref} changed to \"{other}\"", text, at, other,
                            ("altered_citation",))
    for found, pack, citation in occurrences:     # no title written: add a wrong one
        entry = pack.get(found.ref)
        other = _other_title(pack, found.ref, gate) if entry and entry.title else None
        after = clean.text[found.end:found.end + len(entry.title) + 3] if entry else ""
        if (not other or found.title_quote or after[:1] in (")", ",", "|") or after.strip()[:1] in ("(", "|")
                or entry.title.lower() in after.lower() or line_of(clean.text, found.end).lstrip().startswith("|")):
            continue                              # inside parentheses, a table, or the title is written bare
        text = clean.text[:found.end] + f" ({other})" + clean.text[found.end:]
        return text, _truth("altered_title", f"the title \"{other}\" added to {found.ref}", text, found.end,
                            f"({other})", ("altered_citation",))
    return None


# ---- altered_wording ------------------------------------------------------------------------

# How approved wording is changed: an obligation softened, a deadline or a scope moved.
_WORDING_CHANGES = [
    (r"\bshall not\b", "may"), (r"\bshall\b", "may"), (r"\bmust\b", "may"), (r"\bonly\b", "also"),
    (r"\b72 hours\b", "7 days"), (r"\bone month\b", "three months"), (r"\btwo further months\b", "six further months"),
    (r"\bwithout undue delay\b", "when convenient"), (r"\bappropriate\b", "minimal"), (r"\bEach\b", "Some"),
    (r"\bRetain\b", "Delete"), (r"\bReview\b", "Occasionally check"), (r"\bDisable\b", "Flag"),
    (r"\bEmploy\b", "Consider"), (r"\bUniquely\b", "Loosely"), (r"\bunderstood\b", "ignored"),
    (r"\bestablished\b", "discussed"), (r"\bmonitored\b", "occasionally sampled"), (r"\bmanaged\b", "listed"),
]


def _alter(quote: str, rng: random.Random) -> str | None:
    options = [(pattern, repl) for pattern, repl in _WORDING_CHANGES if re.search(pattern, quote)]
    if not options:
        return None
    pattern, repl = rng.choice(options)
    return re.sub(pattern, repl, quote, count=1)


def _altered_wording(clean: CorpusDraft, rng: random.Random, packs: PackSet):
    gate, occurrences = _approved(clean.brief, clean.text, packs)
    quoted: list[tuple[str, object]] = [(f.quoted_text, c) for f, _, c in occurrences if f.quoted_text]
    found = extract_citations(clean.text, packs)
    for attribution in attributions(clean.text, found):
        citations = [gate.approval(f)[1] for f in attribution.citations]
        quoted += [(attribution.quote, c) for c in citations if c is not None]
    quoted = [(q, c) for q, c in quoted if c.text and quote_matches(q, c.text)]
    rng.shuffle(quoted)
    for quote, citation in quoted:                    # wording the draft quotes: change it
        altered = _alter(quote, rng)
        at = clean.text.find(quote)
        if altered and at >= 0 and not quote_matches(altered, citation.text):
            text = clean.text[:at] + altered + clean.text[at + len(quote):]
            return text, _truth("altered_wording", f"the wording quoted for {citation.ref} changed", text, at, altered,
                                CITATION_ISSUES)
    paragraphs = prose_paragraphs(clean.text)
    for found, pack, citation in occurrences:        # none quoted: add a sentence quoting changed wording
        if not citation.text:
            continue
        first = re.split(r"(?<=[.;:])\s", citation.text.strip())[0].rstrip(".;:")
        altered = _alter(first, rng)
        end = next((e for s, e in paragraphs if s <= found.span[0] <= e), None)
        if altered and end is not None and not quote_matches(altered, citation.text):
            sentence = f'{found.surface} states that "{altered}".'
            text = append_sentence(clean.text, end, sentence)
            return text, _truth("altered_wording", f"a sentence quoting changed wording of {citation.ref} added",
                                text, end + 1, altered, CITATION_ISSUES)
    return None


# ---- unapproved_citation --------------------------------------------------------------------

def _display(pack: Pack, ref: str) -> str:
    if (pack.scheme or "").startswith("iso27001") and not ref.startswith("A."):
        return f"clause {ref}"
    return ref


def _unapproved(clean: CorpusDraft, rng: random.Random, packs: PackSet):
    gate, occurrences = _approved(clean.brief, clean.text, packs)
    if not occurrences:
        return None
    found, pack, citation = rng.choice(occurrences)
    kinds = {e.kind for e in (pack.lookup(f.ref) for f, p, _ in occurrences if p is pack) if e is not None}
    candidates = [e for e in pack.entries.values() if e.kind in kinds and e.title and not e.withdrawn
                  and not gate.approves(pack, e.ref)
                  and not any(o.ref.startswith(e.ref) for o in (pack.lookup(f.ref) for f, _, _ in occurrences) if o)]
    if not candidates:
        return None
    # A neighbour of the cited entry reads like a plausible mistake; a far-away one like noise.
    home = pack.lookup(found.ref)
    near = [e for e in candidates if home is not None and e.parent == home.parent and e.parent is not None]
    entry = rng.choice(near or candidates)
    written = _display(pack, entry.ref)
    paragraphs = prose_paragraphs(clean.text)
    beside = found.end == found.span[1] and not line_of(clean.text, found.end).lstrip().startswith("|")
    if paragraphs and (rng.random() < 0.5 or not beside):
        _, end = rng.choice(paragraphs)
        text = append_sentence(clean.text, end, f"This also supports {written} ({entry.title}).")
        pos = end + 1
    elif beside:
        pos = found.end
        text = clean.text[:pos] + f" and {written}" + clean.text[pos:]
    else:
        return None
    if not any(f.ref == entry.ref for f in extract_citations(text, packs)):
        return None
    return text, _truth("unapproved_citation", f"{entry.ref} ({pack.name}) added", text, pos, written, CITATION_ISSUES)


# ---- contradicted_judgment ------------------------------------------------------------------

_NEGATIONS = [
    (r"\bmust not\b", "may"), (r"\bmust\b", "need not"), (r"\bshall\b", "need not"),
    (r"\bis required\b", "is not required"), (r"\bare required\b", "are not required"),
    (r"\bout of scope\b", "in scope"), (r"\bin scope\b", "out of scope"), (r"\bexcluded\b", "included"),
    (r"\bprohibited\b", "allowed"), (r"\bnot\s", ""), (r"\bno\b", "some"),
]


def negate(judgment: str) -> str | None:
    """A sentence contradicting `judgment`, by rule (a number doubled, an obligation lifted, a scope
    flipped); None when no rule applies."""
    number = re.search(rf"(?<![\d.:/-])(\d{{1,3}})(?![\d.:/-])(?!\s*(?:{MONTH_PATTERN}))", judgment)
    if number and int(number[1]) > 0:
        return judgment[:number.start(1)] + str(int(number[1]) * 2) + judgment[number.end(1):]
    for pattern, repl in _NEGATIONS:
        if re.search(pattern, judgment):
            return re.sub(pattern, repl, judgment, count=1)
    return None


def _contradicted(clean: CorpusDraft, rng: random.Random, packs: PackSet):
    judgments = list(enumerate(clean.brief.judgments))
    rng.shuffle(judgments)
    paragraphs = prose_paragraphs(clean.text)
    if not paragraphs:
        return None
    for index, judgment in judgments:
        sentence = clean.contradictions[index] if index < len(clean.contradictions) else negate(judgment)
        if not sentence:
            continue
        sentence = sentence.strip()
        sentence = sentence if sentence.endswith((".", "!", "?")) else sentence + "."
        _, end = rng.choice(paragraphs)
        text = append_sentence(clean.text, end, sentence)
        return text, _truth("contradicted_judgment", f"contradicts judgment {index + 1}: {judgment}", text, end + 1,
                            sentence, ("contradiction",))
    return None


# ---- removed_requirement --------------------------------------------------------------------

def _items(clean: CorpusDraft) -> list[tuple[str, str]]:
    """The content-spec items of the draft and the line delivering each: the seed corpus names
    them; for other drafts, headings that share a word with exactly one item of the content spec."""
    if clean.items:
        return list(clean.items)
    spec = clean.brief.step(clean.step).content_spec
    wanted = [i.strip(" .") for i in re.split(r",|;|\band\b", spec) if len(i.strip()) > 3]
    headings = re.findall(r"^(#{1,6} .+)$", clean.text, re.M)
    items = []
    for item in wanted:
        words = {w for w in re.findall(r"[a-z]{4,}", item.lower())}
        hits = [h for h in headings if words & set(re.findall(r"[a-z]{4,}", h.lower()))]
        if len(hits) == 1:
            items.append((item, hits[0]))
    return items


def _removed(clean: CorpusDraft, rng: random.Random, packs: PackSet):
    items = _items(clean)
    rng.shuffle(items)
    for item, marker in items:
        removed = remove_block(clean.text, marker)
        if removed is None or not removed[0].strip():
            continue
        text, gone = removed
        return text, Truth("removed_requirement", f"removed the part delivering \"{item}\"", gone, "",
                           ("step_contract",))
    return None


_MAKERS: dict[str, Callable] = {
    "altered_id": _altered_id,
    "altered_title": _altered_title,
    "altered_wording": _altered_wording,
    "unapproved_citation": _unapproved,
    "contradicted_judgment": _contradicted,
    "removed_requirement": _removed,
}
