"""The requirement trace: the brief against the task before any step, the document against the
brief's requirements after release (docs/verifier-contract.md, "The requirement trace").

`check_brief` finds the task's asks that no requirement of the brief carries (the run sends the
brief back once, naming them); `trace` gives every requirement its status once the steps are
released: `met`, `unmet` (with why), `declined` (the planner said why it will not meet it) or
`dropped` (the brief never carried it). Nothing here calls a model or reads anything but the task,
the brief and the released text.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pipeline.schemas import Brief, Requirement

from .asks import COLUMN, DELIVERABLE, DOCUMENT, ITEM, QUESTION, SECTION, Ask, read_asks
from .document import Part, joined
from .matching import carries, shows
from .words import content_words, stems_of


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"

MET, UNMET, DECLINED, DROPPED = "met", "unmet", "declined", "dropped"
#: A requirement that carries none of the task's asks is met when its steps hold this share of its words.
_OWN_WORDS_SHARE = 0.67


@dataclass(frozen=True)
class BriefCheck:
    """The task's asks, which requirement carries each, and those no requirement carries."""

    asks: list[Ask]
    carried: dict[str, list[Ask]]
    missing: list[Ask]

    def as_json(self) -> dict:
        return {"asks": [_ask_json(a) for a in self.asks],
                "carried": {rid: [a.text for a in asks] for rid, asks in self.carried.items()},
                "missing": [_ask_json(a) for a in self.missing]}


@dataclass(frozen=True)
class Traced:
    id: str
    text: str
    steps: list[int]
    status: str
    detail: str = ""
    asks: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"id": self.id, "text": self.text, "steps": list(self.steps), "status": self.status,
                "detail": self.detail}


def _ask_json(ask: Ask) -> dict:
    return {"kind": ask.kind, "text": ask.text}


def check_brief(task: str, brief: Brief, *, asks: list[Ask] | None = None) -> BriefCheck:
    """Which of the task's asks each requirement of the brief carries, and which none does."""
    asks = read_asks(task) if asks is None else asks
    requirements = brief.requirements or []
    carried = {r.id: [a for a in asks if carries(r.text, a)] for r in requirements}
    covered = {id(a) for found in carried.values() for a in found}
    return BriefCheck(asks, carried, [a for a in asks if id(a) not in covered])


def send_back_note(missing: Iterable[Ask]) -> str:
    """What the planner is told when its brief leaves asks of the task out."""
    listed = "; ".join(f"“{a.text}” ({a.label})" for a in missing)
    return (f"The brief's requirements leave out what the task explicitly asks for: {listed}. Reply with the "
            "whole brief again: add a requirement for each, in the task's own words, carried by the steps "
            "that meet it (and say so in those steps' content_spec), or with \"steps\": [] and \"declined\" "
            "saying why the document will not meet it.")


def trace(brief: Brief, check: BriefCheck, released: Mapping[int, tuple[str, str]], *,
          extra: Iterable[tuple[Requirement, list[Ask]]] = ()) -> list[Traced]:
    """Every requirement's status once the run has released what it released: `released` maps a
    step's index to its (title, content). The brief's requirements come first, then `extra` (a
    redo's instruction, with the asks it carries), then one per ask no requirement carried
    (dropped, unless the document shows it anyway)."""
    parts = {index: Part(step_title, content) for index, (step_title, content) in released.items()}
    # The whole document, its title included: a framework the title names is named by the document.
    whole = Part(brief.title or "", joined([parts[i] for i in sorted(parts)]).text)
    heading = Part(brief.title, "") if brief.title else Part("", parts[min(parts)].text if parts else "")
    pairs = [(r, check.carried.get(r.id, [])) for r in brief.requirements or []] + list(extra)
    out = [_traced(r, asks, parts, whole, heading) for r, asks in pairs]
    next_id = _next_id([r for r, _ in pairs])
    for ask in check.missing:
        rid = f"R{next_id}"
        next_id += 1
        if _shows(whole, heading, ask):
            out.append(Traced(rid, ask.text, [], MET, "the brief did not list it, but the document has it", [ask.text]))
        else:
            out.append(Traced(rid, ask.text, [], DROPPED, f"the brief left out this {ask.label}", [ask.text]))
    return out


def _next_id(requirements: list[Requirement]) -> int:
    numbers = [int(r.id[1:]) for r in requirements if r.id[1:].isdigit()]
    return max(numbers, default=0) + 1


def _traced(requirement: Requirement, asks: list[Ask], parts: dict[int, Part], whole: Part, heading: Part) -> Traced:
    base = dict(id=requirement.id, text=requirement.text, steps=list(requirement.steps), asks=[a.text for a in asks])
    if requirement.declined is not None:
        return Traced(**base, status=DECLINED, detail=requirement.declined)
    missing_steps = [i for i in requirement.steps if i not in parts]
    if missing_steps:
        what = "was" if len(missing_steps) == 1 else "were"
        return Traced(**base, status=UNMET,
                      detail=f"step {', '.join(map(str, missing_steps))} {what} not released")
    own = joined([parts[i] for i in requirement.steps])
    if not asks:
        asks = [a for a in read_asks(requirement.text) if a.kind not in (DOCUMENT, DELIVERABLE)]
    if not asks:
        return _by_own_words(base, requirement.text, own)
    absent = [a for a in asks if not _shows(own, heading, a)]
    elsewhere = [a for a in absent if _shows(whole, heading, a)]
    if absent and len(elsewhere) == len(absent):
        return Traced(**base, status=MET, detail="found in other steps than the brief gave it")
    if absent:
        return Traced(**base, status=UNMET, detail="; ".join(_why(a) for a in absent if a not in elsewhere))
    return Traced(**base, status=MET)


def _shows(part: Part, heading: Part, ask: Ask) -> bool:
    if ask.kind == DOCUMENT:
        return shows(heading, ask)
    return shows(part, ask)


def _by_own_words(base: dict, text: str, own: Part) -> Traced:
    words = content_words(text)
    have = len(stems_of(" ".join(words)) & own.stems)
    if words and have >= _OWN_WORDS_SHARE * len(stems_of(" ".join(words))):
        return Traced(**base, status=MET)
    return Traced(**base, status=UNMET, detail="its steps do not say what it asks")


#: Why an ask is not met, by its kind ({} is its words).
_WHY = {DOCUMENT: "the title does not name a {}", COLUMN: "no table has a column “{}”",
        DELIVERABLE: "no part of the document is a {}", SECTION: "no section on {}",
        QUESTION: "the question “{}” is not answered", ITEM: "“{}” is not covered"}


def _why(ask: Ask) -> str:
    return _WHY.get(ask.kind, "“{}” is not in the text").format(ask.text)


def unplanned(asks: list[Ask], status: str, why: str) -> list[Traced]:
    """The task's asks when no brief planned them (the run declined, or no brief came)."""
    return [Traced(f"R{n}", clip(ask.text, 500), [], status, why) for n, ask in enumerate(asks, 1)]


def coverage(traced: list[Traced]) -> dict:
    return {"met": sum(t.status == MET for t in traced), "total": len(traced)}


def coverage_line(traced: list[Traced]) -> str | None:
    """"Covers k of n requirements of the task. Not covered: ..." or None when all are met."""
    gaps = [t for t in traced if t.status != MET]
    if not gaps:
        return None
    counts = coverage(traced)
    listed = "; ".join(f"{t.id} “{_short(t.text)}” ({_gap_words(t)})" for t in gaps)
    return f"Covers {counts['met']} of {counts['total']} requirements of the task. Not covered: {listed}."


def _gap_words(t: Traced) -> str:
    if t.status == DECLINED:
        return f"declined: {_short(t.detail, 120)}"
    if t.status == DROPPED:
        return "dropped: the brief left it out"
    return _short(t.detail, 160)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rsplit(" ", 1)[0] + "…"
