"""The offline planner: a reasoning brief from the context, by rules rather than a model.

Its judgments state, in the engine's own words, what it read: the document asked for, the facts
the workspace gives (names, sizes, places, periods: values, never copied sentences), where the
task overrides them, which files feed which tables, and which frameworks are cited and why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.context import Context
from pipeline.citations import extract_citations
from pipeline.frameworks import Pack, load_packs
from pipeline.schemas import Brief, EvidenceRef, StepPlan
from pipeline.task_check import frameworks_not_enabled

from .citing import (MAX_CITATIONS, Pick, as_citations, best_step_for, enabled_packs, expand, expand_all,
                     explicit_picks, format_citation, group_picks, keyword_picks, topic_picks)
from .declining import GENERIC_FORMS, edit_reason, kind_reason, transform_asked, transform_reason, unwritable_form
from .catalogue import DOC_TYPES, GENERIC
from .crosswalk import direction
from .templates import TBC
from .fields import Fill, fill, missing, scope_of, values
from .questionnaire import questions_of
from .reading import Reading, read
from .revision import Revision, revise, revision_of
from .summarizer import COVERAGE
from .templates import PART_MARK, DocType
from .text import clip, looks_like_citation, lower_first
from .topics import TOPIC_WORDS, TOPICS
from .tracing import title_for, traced

# Cited when a document type's own topics give fewer than three citations in the enabled frameworks.
_FALLBACK_TOPICS = ["security_of_processing", "policy", "roles", "documented_information"]
_REQUIREMENT_SECTIONS = ("requirements", "readiness")
#: Documents whose table lists a set of requirements: a set the task names is listed whole.
_SET_DOCS = ("soa", "mapping", "gap_assessment", "audit_plan")
#: Citations one requirement step lists at most; a longer set is split over consecutive steps, so
#: that every content spec stays within its limit and every requested entry still has its row.
_PER_STEP = 40


def topics_in(text: str) -> list[str]:
    """The topics whose words a text uses, in the topic table's order."""
    lowered = text.lower()
    return [topic for topic, words in TOPIC_WORDS.items() if any(re.search(rf"\b{re.escape(w)}", lowered) for w in words)]


def cited_packs(ctx: Context, reading: Reading) -> list[Pack]:
    """The frameworks to cite: those the task names (if enabled), else those its references belong
    to, else the ones this kind of document belongs to among the enabled, else every enabled one."""
    enabled = enabled_packs(ctx.enabled_frameworks, ctx.task)
    named = [p for p in reading.task.frameworks if p in enabled]
    if named:
        return named
    by_refs = [p for p in enabled if any(f.pack_key == p.key for f in reading.task.refs)]
    if by_refs:
        return by_refs
    doc = reading.task.subject_doc or reading.task.doc
    return [p for p in enabled if p.key in doc.frameworks] or enabled


def step_topics(doc: DocType, subject: DocType | None, task_topics: list[str]) -> list[list[str]]:
    """Each step's topics, with "@subject" replaced by the subject's headline topics."""
    headline = list(subject.steps[0].topics) if subject else (task_topics or list(doc.subject_topics))
    return [[t for topic in step.topics for t in (headline if topic == "@subject" else [topic])]
            for step in doc.steps]


def requirement_picks(reading: Reading, explicit: list[Pick], packs: list[Pack], task_topics: list[str]) -> list[Pick]:
    """The rows of a mapping, statement of applicability or gap assessment: every entry of a set
    the task names (a range, an Annex A theme, a category), and for an SoA that names none, every
    control of Annex A."""
    doc = reading.task.doc
    if doc.key == "gap_assessment" and reading.register("readiness"):
        areas = " ".join(row[0] for row in reading.register("readiness").rows)
        return topic_picks(topics_in(areas), packs, TOPICS)
    groups = group_picks(reading.task.text, packs) if doc.key in _SET_DOCS else []
    if explicit or groups:
        one_level = doc.key in ("mapping", "gap_assessment")
        named = [p for pick in explicit for p in (expand(pick) if one_level else expand_all(pick))]
        return _unique(named + [p for group in groups for p in expand_all(group)])
    pair = direction(reading.task.text, reading.task.frameworks) if doc.key == "mapping" else None
    if pair and not task_topics:  # "map our ISO 27001 controls to SOC 2": every topic both frameworks govern
        shared = [t for t, refs in TOPICS.items() if pair[0].key in refs and pair[1].key in refs]
        return topic_picks(shared, list(pair), TOPICS)
    if doc.key == "soa":
        annex = [Pick(p, p.get("Annex A"), "Annex A") for p in packs if p.key.startswith("iso27001") and p.get("Annex A")]
        if annex:
            return _unique([p for group in annex for p in expand_all(group)])
    return topic_picks(task_topics or list(doc.subject_topics), packs, TOPICS)


def question_picks(reading: Reading) -> list[Pick]:
    """The references a questionnaire's questions quote, in whichever shipped catalogue holds them."""
    found = tuple(f for q in questions_of(reading).items for f in extract_citations(q.text))
    return explicit_picks(found, list(load_packs().values()))[0]


def _unique(picks: list[Pick]) -> list[Pick]:
    return list(dict.fromkeys(picks))


def _lower_first(phrase: str) -> str:
    """"Each department head" reads mid-sentence as "each department head"; names keep their capitals."""
    return phrase[0].lower() + phrase[1:] if phrase.split()[0] in ("The", "Each", "All", "Every") else phrase


def _fact_judgments(reading: Reading) -> list[str]:
    facts, found, out = reading.facts, values(reading), []
    for what, task_value, workspace_value in reading.overrides:
        out.append(f"Organisation {what}: {task_value}, as the task states; the workspace memories give "
                   f"{workspace_value}. The task is more specific to this document, so its {what} is used.")
    if reading.headcount and not any(w == "size" for w, *_ in reading.overrides):
        out.append(f"Organisation size: {reading.headcount} people.")
    if reading.description or reading.sector:
        out.append(f"Organisation profile: {reading.description or reading.sector}"
                   + (f" (sector: {reading.sector})." if reading.sector and reading.description else "."))
    if facts.people:
        out.append("People named: " + "; ".join(f"{p.title}: {p.name}" for p in facts.people.values()) + ".")
    for key, label in (("locations", "Locations"), ("systems", "Systems and services"), ("processors", "Processors"),
                       ("certification", "Certification targets"), ("retention", "Retention periods"),
                       ("data_categories", "Categories of personal data")):
        if key in found:
            out.append(f"{label}: {found[key]}.")
    for timed in facts.cadences[:4]:
        who = timed.who if timed.who.startswith("chaired by") else f"by {_lower_first(timed.who)}" if timed.who else ""
        out.append(f"Review cadence: {timed.what}, {timed.when}" + (f", {who}." if who else "."))
    return out


def _judgments(ctx: Context, reading: Reading, fields: Fill, packs: list[Pack], refused: list[str],
               files: list[str]) -> list[str]:
    task = reading.task
    doc = task.doc
    form = "letter" if task.is_letter else "email" if doc.key == "stakeholder_email" else "document"
    out = [f"Document type: {doc.name}" + (f", about: {fields['subject']}." if doc.has_subject else ".")
           + f" Form: {form} for {fields['audience']}."]
    out.append(f"Organisation: {reading.org}" + (f" (from {reading.org_source})." if reading.org_source
                                                 else f" (name {TBC})."))
    out += _fact_judgments(reading)
    scope, source = scope_of(ctx, reading)
    out.append(f"Scope: {scope}" + (f" (from {source})." if source else "."))
    out += files
    out.append("Frameworks cited: " + ", ".join(p.name for p in packs)
               + (" (named in the task)." if any(p in task.frameworks for p in packs) else
                  " (enabled in the workspace)." if ctx.enabled_frameworks else " (named in the task or default)."))
    for pack in frameworks_not_enabled(ctx):
        out.append(f"The task names {pack.name}, which this workspace has not enabled: it is not cited, and the "
                   "document says so.")
    for written in refused:
        out.append(f"The task names {written}, which no cited framework's catalogue holds: it is not covered, "
                   "and the document says so.")
    for need in missing(reading, doc.needs):
        out.append(f"The context does not state {need}: {TBC}.")
    out.append(f"Facts come only from the task and the workspace; the task's own facts outrank the workspace's; "
               f"anything no source states is marked {TBC}.")
    return out


def _file_judgments(reading: Reading) -> list[str]:
    out = []
    for step in reading.task.doc.steps:
        kind = step.section.split(":", 1)[1] if step.section.startswith("register:") else ""
        register = reading.register(kind) if kind else None
        if register:
            out.append(f"{step.title}: rows from {', '.join(register.sources)} ({register.total} rows), "
                       f"columns {', '.join(register.columns)}.")
    if reading.task.doc.key == "gap_assessment" and reading.register("readiness"):
        register = reading.register("readiness")
        out.append(f"Assessment areas: from {', '.join(register.sources)} ({register.total} areas).")
    return out


def _coverage(doc: DocType, requested: list[Pick], approved: list[Pick], refused: list[str]) -> list[str]:
    """What part of a requested set of requirements the document covers, in words (no reference:
    the recap repeats it, and it cites only what the brief approves)."""
    if doc.key not in _SET_DOCS or not requested:
        return []
    what = "controls" if doc.key == "soa" else "requirements"
    line = f"{COVERAGE}all {len(approved)} {what} asked for are drafted, one row each"
    if refused:
        line += f"; {len(refused)} reference(s) the task names are in no enabled catalogue and are not drafted"
    return [line + "."]


def decline_reason(ctx: Context, reading: Reading, revision: Revision | None) -> str | None:
    """Why the engine cannot do this task faithfully, or None when it can: it transforms text, asks
    a change to the conversation's document other than adding or removing a section, or asks for a
    kind of document the engine has no template for."""
    transform = transform_asked(ctx.task)
    if transform:
        return transform_reason(transform)
    if revision is not None:
        return None if revision.applied else edit_reason(revision.verb)
    if reading.task.doc is GENERIC:
        form = unwritable_form(ctx.task)
        if form or not GENERIC_FORMS.search(ctx.task):
            return kind_reason(form, [lower_first(d.name) for d in DOC_TYPES])
    return None


def _declined(ctx: Context, reason: str) -> Brief:
    return Brief(task=clip(ctx.task.strip(), 2000) or "the task", decline_reason=reason,
                 judgments=[f"Declined: {reason}"], steps=[])


def plan(ctx: Context) -> Brief:
    """The brief for `ctx`: document type, judgments, approved citations and the step plan; for a
    follow-up that changes the conversation's latest document, the revised document's; a declined
    brief (no step) when the engine cannot do the task faithfully."""
    reading = read(ctx)
    revision = revision_of(ctx)
    reason = decline_reason(ctx, reading, revision)
    if reason is not None:
        return _declined(ctx, reason)
    if revision is not None:
        first = next((m.text for m in ctx.history if m.role == "user"), ctx.task)
        return traced(ctx, reading, revise(ctx, revision, reading.org), title_for(first, "Revised document"))
    doc = reading.task.doc
    scope, _ = scope_of(ctx, reading)
    fields = fill(reading, scope)
    packs = cited_packs(ctx, reading)
    task_topics, topics = _topics(ctx, reading)
    chosen = _choose_citations(ctx, reading, packs, task_topics, topics)
    steps = _steps(ctx, doc, fields, chosen, _placement(doc, chosen, topics, packs))
    judgments = _judgments(ctx, reading, fields, packs, chosen.refused, _file_judgments(reading))
    judgments += _coverage(doc, chosen.requested, [p for p in chosen.picks if p in chosen.requested], chosen.refused)
    # Every page the research could read is approved: the engine cannot judge a page's worth,
    # and the integrity gate still holds each URL and price to the approved pages' text.
    evidence = [EvidenceRef(id=e.id, url=e.url, title=e.title[:500]) for e in ctx.evidence] or None
    brief = Brief(task=clip(ctx.task.strip(), 2000) or doc.name, judgments=judgments, citations=chosen.citations,
                  steps=steps, evidence=evidence)
    return traced(ctx, reading, brief, title_for(ctx.task, doc.name))


def _topics(ctx: Context, reading) -> tuple[list, list]:
    """The topics the task names (for the kinds that follow the task's topics), and each step's."""
    doc, subject = reading.task.doc, reading.task.subject_doc
    task_topics = topics_in(ctx.task) if doc.follows_task_topics else []
    if task_topics and subject is not None:  # "map our access control practices": the whole subject's topics
        task_topics += [t for step in subject.steps for t in step.topics if t not in task_topics]
    return task_topics, step_topics(doc, subject, task_topics)


@dataclass
class _Chosen:
    """The approved citations and why: what the task asks for (`requested`), the requirement
    picks among them (`required`), the references it named (`explicit`) and those refused."""
    picks: list
    requested: list
    required: list
    explicit: list
    refused: list[str]
    citations: list = field(default_factory=list)


def _choose_citations(ctx: Context, reading, packs, task_topics: list, topics: list) -> _Chosen:
    doc = reading.task.doc
    explicit, unapproved = explicit_picks(reading.task.refs, packs)
    off = {p.key for p in frameworks_not_enabled(ctx)}  # their references are the not-enabled note's to explain
    refused = [found.surface.strip() for found in unapproved if found.pack_key not in off]
    if doc.quotes_questions:  # a question quoting a reference is written whole, so the reference is approved
        explicit = _unique(explicit + question_picks(reading))
        refused = []
    required = requirement_picks(reading, explicit, packs, task_topics)
    # What the task asks for is approved whole; the engine's own choices fill up to the usual number.
    requested = _unique(required + explicit)
    picks = list(requested)
    for pick in topic_picks([t for ts in topics for t in ts], packs, TOPICS):
        if pick not in picks:
            picks.append(pick)
    if not doc.cites:  # a questionnaire's answers, a letter: only what the task itself names
        picks = list(requested)
    elif len(picks) < 6:  # title overlap is a weaker signal than the curated map: only to fill a thin set
        picks += [p for p in keyword_picks(ctx.task, packs) if p not in picks]
    if doc.cites and len(picks) < 3:
        picks += [p for p in topic_picks(_FALLBACK_TOPICS, packs, TOPICS) if p not in picks][:3 - len(picks)]
    picks = picks[:max(MAX_CITATIONS, len(requested))]
    return _Chosen(picks, requested, required, explicit, refused, as_citations(picks))


def _placement(doc, chosen: _Chosen, topics: list, packs) -> list[list[int]]:
    """The citations (by position in `chosen.picks`) each template step cites."""
    picks = chosen.picks
    per_step = [[n for n, p in enumerate(picks) if p in step_picks]
                for step_picks in (topic_picks(ts, packs, TOPICS) for ts in topics)]
    home = next((i for i, s in enumerate(doc.steps) if s.section in _REQUIREMENT_SECTIONS), None)
    if home is not None:
        per_step[home] += [n for n, p in enumerate(picks) if p in chosen.required or p in chosen.explicit]
    placed = {n for ids in per_step for n in ids}
    citing_steps = [i for i, ts in enumerate(topics) if ts] or list(range(len(topics)))
    for n, pick in enumerate(picks):
        if n not in placed:  # explicit, keyword and fallback picks join the closest citing step
            target = citing_steps[best_step_for(pick, [doc.steps[i].title for i in citing_steps])]
            per_step[target].append(n)
    return per_step


def _steps(ctx: Context, doc, fields: dict, chosen: _Chosen, per_step: list[list[int]]) -> list[StepPlan]:
    """The template's steps with their specs filled, a step citing many split into parts."""
    citations = chosen.citations
    notes = [f"Say that {p.name} is not enabled in this workspace and is not cited." for p in frameworks_not_enabled(ctx)]
    notes += (["Say that a reference the task names is not in the cited frameworks and is not covered."]
              if chosen.refused else [])
    planned: list[tuple[str, str]] = []  # (title, content spec)
    for i, template in enumerate(doc.steps):
        spec = template.spec.format_map(fields)
        if i == 0 and notes:
            spec += " " + " ".join(notes)
        ids = sorted(set(per_step[i]))
        parts = [ids[k:k + _PER_STEP] for k in range(0, len(ids), _PER_STEP)] or [[]]
        for k, part in enumerate(parts, 1):
            title = template.title if len(parts) == 1 else f"{template.title}{PART_MARK}{k} of {len(parts)}"
            if part:
                named = "; ".join(f"{citations[n].id} = {format_citation(citations[n])}" for n in part)
                planned.append((title, f"{spec} Cite exactly: {named}."))
            else:
                planned.append((title, f"{spec} No framework citation is needed in this step."))
    return [StepPlan(index=n, title=title, content_spec=spec) for n, (title, spec) in enumerate(planned, 1)]
