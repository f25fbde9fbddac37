"""The offline planner's title and requirement trace (docs/offline-engine.md, "Requirements").

The engine is deterministic, so its planner knows what its executor will write: it drafts each
step, finds which of the task's asks each draft shows, adds a section for the points no template
writes, and lists every ask as a requirement carried by the steps that show it, or declined with
the reason when no step can. The run's own trace then checks the released text again, as it
does for any planner.
"""
from __future__ import annotations

import re

from pipeline.context import Context
from pipeline.requirements import DELIVERABLE, DOCUMENT, Ask, read_asks
from pipeline.requirements.asks import NOT_A_SCOPE, until_list_end
from pipeline.requirements.asks import COLUMN, FRAMEWORK, ITEM, NAME, QUESTION, QUOTED, REFERENCE, SECTION, SPECIFIC
from pipeline.requirements.document import Part
from pipeline.requirements.matching import shows
from pipeline.requirements.names import framework_keys, same_framework
from pipeline.schemas import Brief, Requirement, StepPlan
from pipeline.task_check import frameworks_not_enabled

from .asked import asks_spec, asks_title
from .kinds import OPEN_POINTS
from .executor import compose
from .reading import Reading
from .text import clip

#: Asks a section of their own can show: the task's words, set out with the workspace's facts.
_ADDABLE = (ITEM, SECTION, COLUMN, QUOTED, NAME, SPECIFIC, QUESTION)
#: Titles of the sections that close a document: the asks section goes in before them.
_CLOSING = re.compile(r"\b(?:open points|next steps|review|approval|sign-off|lessons learned|maintenance"
                      r"|document control)\b", re.I)
_CONNECT = "connect a language model in Settings and run the task with it"


def traced(ctx: Context, reading: Reading, brief: Brief, title: str) -> Brief:
    """`brief` with its title, a section for what no template writes, and its requirements."""
    asks = read_asks(ctx.task)
    brief = _rebuilt(brief, title=title)
    drafts = _drafts(ctx, brief)
    unshown = [a for a in asks if a.kind in _ADDABLE and not _shown_in(a, drafts, title)]
    points = _points(ctx.task, unshown)
    if points:
        brief = _with_asks_step(brief, points)
        drafts = _drafts(ctx, brief)
    requirements = [_requirement(f"R{n}", ask, drafts, title, ctx, reading) for n, ask in enumerate(asks, 1)]
    steps = [_annotated(step, [r.id for r in requirements if step.index in r.steps]) for step in brief.steps]
    return _rebuilt(brief, requirements=[r.model_dump(exclude_none=True) for r in requirements],
                    steps=[s.model_dump() for s in steps])


_TAIL = re.compile(r"\s+(?=(?:for|to|on|about|covering|regarding)\s)", re.I)
#: Where a title's tail stops: a clause of its own ("... giving assurance about ...").
_CLAUSE_WORD = re.compile(r"\s(?:(?!(?:steer|train|process|onboard|offboard|host|logg|monitor|market|engineer|account"
                          r"|bank|hous|nurs|manufactur|test|plann|report|fund|pric|bill|consult|learn|meet|build"
                          r"|shipp|print|recruit|staff|car|publish|phish|mapp|cloth)ing\b)\w+ing|who|that|which|so"
                          r"|because|with)\b", re.I)
_OWNED = re.compile(r"^(?:(?:this|that|our|the|a|an)\s+)+", re.I)


def title_for(task: str, name: str) -> str:
    """The document's title in its own words: the kind of document the task names, with the
    scope or recipient it gives right after ("Acceptable use policy for laptops and mobile
    phones", "Letter to Harbour Bank"); the engine's name for the kind when the task names none.
    Never the task itself."""
    kind = next((a for a in read_asks(task) if a.kind == DOCUMENT), None)
    if kind is None:
        return name
    words = _OWNED.sub("", kind.text)
    if kind.keys and kind.keys[0] == "questionnaire":
        return clip(f"Answers to the {words}", 100)
    title = words[:1].upper() + words[1:]
    tail = _TAIL.match(task, kind.span[1])
    if tail:
        phrase, _ = until_list_end(task, tail.end())
        phrase = _CLAUSE_WORD.split(phrase, 1)[0].rstrip(" ,")
        scope = phrase.split(None, 1)[1] if " " in phrase else ""
        if phrase and len(phrase) <= 70 and not NOT_A_SCOPE.match(scope) or phrase.lower().startswith("to "):
            title += " " + phrase
    return clip(title, 100)


def _rebuilt(brief: Brief, **changes) -> Brief:
    return Brief.model_validate({**brief.model_dump(mode="json", exclude_none=True), **changes})


def _drafts(ctx: Context, brief: Brief) -> dict[int, Part]:
    return {step.index: Part(step.title, compose(ctx, brief, step)) for step in brief.steps}


def _shown_in(ask: Ask, drafts: dict[int, Part], title: str) -> list[int] | bool:
    if ask.kind == DOCUMENT:
        return [1] if shows(Part(title, ""), ask) else []
    return [index for index, part in drafts.items() if shows(part, ask)]


def _points(task: str, asks: list[Ask]) -> list[str]:
    """What the asks section sets out: an item in the task's words, or for a value or a name the
    clause of the task it is in ("hosted on Microsoft Azure by PayServe Ltd")."""
    points: list[str] = []
    for ask in asks:
        point = ask.text if ask.kind in (ITEM, SECTION, COLUMN, QUOTED, QUESTION) else clause_of(task, ask.span)
        if point and not any(point.lower() in p.lower() for p in points):
            points = [p for p in points if p.lower() not in point.lower()] + [point]
    return points


_CLAUSE_EDGE = re.compile(r"[.;:!?\n,]")
_LEADING_ASK = re.compile(r"^(?:please\s+)?(?:(?:draft|write|prepare|create|produce|make|build|give|turn|update|"
                          r"answer)\s+)?(?:(?:a|an|the|our|this|that)\s+)?", re.I)


def clause_of(task: str, span: tuple[int, int]) -> str:
    """The part of the task between punctuation that holds `span`, without the verb that asks."""
    start = max((m.end() for m in _CLAUSE_EDGE.finditer(task, 0, span[0])), default=0)
    end_match = _CLAUSE_EDGE.search(task, span[1])
    end = end_match.start() if end_match else len(task)
    clause = _LEADING_ASK.sub("", " ".join(task[start:end].split()))
    return clip(clause, 160)


def _with_asks_step(brief: Brief, points: list[str]) -> Brief:
    """The asks section, placed before the sections that close the document."""
    steps = list(brief.steps)
    at = next((n for n, s in enumerate(steps) if s.title == OPEN_POINTS.title or _CLOSING.search(s.title)), len(steps))
    steps.insert(at, StepPlan(index=at + 1, title=asks_title(points), content_spec=asks_spec(points)))
    renumbered = [{**s.model_dump(), "index": n} for n, s in enumerate(steps, 1)]
    return _rebuilt(brief, steps=renumbered)


def _requirement(rid: str, ask: Ask, drafts: dict[int, Part], title: str, ctx: Context, reading: Reading) -> Requirement:
    text = clip(ask.text, 500)
    reason = _declined_at_once(ask, ctx)
    steps = [] if reason else _shown_in(ask, drafts, title)
    if steps:
        return Requirement(id=rid, text=text, steps=steps)
    return Requirement(id=rid, text=text, steps=[], declined=reason or _why_not(ask, reading))


def _declined_at_once(ask: Ask, ctx: Context) -> str | None:
    """A framework the workspace has not enabled is not cited, whatever a step says about it."""
    if ask.kind != FRAMEWORK:
        return None
    for pack in frameworks_not_enabled(ctx):
        if same_framework(ask.keys[0], framework_keys(pack.name)):
            return (f"{pack.name} is not enabled in this workspace, so the document cannot cite it; a workspace "
                    "admin can enable it in the workspace settings.")
    return None


def _why_not(ask: Ask, reading: Reading) -> str:
    if ask.kind == DELIVERABLE:
        return (f"The offline engine writes one document per task: ask for the {ask.text} in a task of its own, "
                f"or {_CONNECT}.")
    if ask.kind == DOCUMENT:
        return f"The offline engine has no template for a {ask.text}; to have one written, {_CONNECT}."
    if ask.kind == REFERENCE:
        return (f"No catalogue the document cites holds {ask.text}, so it is not covered; enable the framework "
                "that defines it, or name a reference of an enabled one.")
    if ask.kind == FRAMEWORK:
        return (f"The offline engine has no catalogue for {ask.text}: it cannot cite or map it; {_CONNECT}, or "
                "add its requirements to the workspace's files.")
    return (f"The offline engine could not place “{ask.text}” in this kind of document; {_CONNECT}, or add it "
            "to the document by hand.")


def _annotated(step: StepPlan, ids: list[str]) -> StepPlan:
    if not ids:
        return step
    spec = f"{step.content_spec} Requirements it carries: {', '.join(ids)}."
    return StepPlan(index=step.index, title=step.title, content_spec=spec[:4000])
