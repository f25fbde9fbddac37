"""The offline planner: a reasoning brief (SPEC 3) from the context, by rules rather than a model."""
from __future__ import annotations

from pipeline.context import Context
from pipeline.schemas import Brief, EvidenceRef, StepPlan

from .citing import (MAX_CITATIONS, Pick, as_citations, best_step_for, enabled_packs, explicit_picks,
                     format_citation, keyword_picks, named_packs, topic_picks)
from .doctypes import TBC
from .reading import audience_of, classify, context_text, org_name, scope_of, subject_of
from .templates import DocType
from .text import clip, looks_like_citation
from .topics import TOPICS

# Cited when a document type's own topics give fewer than three citations in the enabled frameworks.
_FALLBACK_TOPICS = ["security_of_processing", "policy", "roles", "documented_information"]


_GREETINGS = {"the board": "Dear members of the board,", "customers": "Dear customer,", "suppliers": "Dear partners,",
              "the auditors": "Dear auditors,"}


class _Fill(dict):
    """str.format_map that leaves unknown placeholders alone instead of failing."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def placeholders(ctx: Context, doc: DocType, subject: DocType | None) -> _Fill:
    """The values the templates' {org}, {scope}, {audience} and {subject} stand for."""
    subj = subject_of(ctx.task, doc, subject)
    audience = audience_of(ctx.task, doc)
    # Lower-case the first letter for use mid-sentence, unless it starts an acronym ("ISMS scope").
    lowered = subj if subj[:2].isupper() else subj[0].lower() + subj[1:]
    return _Fill(org=org_name(ctx), scope=scope_of(ctx)[0], audience=audience, subject=subj, subject_lower=lowered,
                 greeting=_GREETINGS.get(audience, "Dear colleagues,"))


def step_topics(doc: DocType, subject: DocType | None) -> list[list[str]]:
    """Each step's topics, with "@subject" replaced by the subject's headline topics."""
    headline = list(subject.steps[0].topics) if subject else list(doc.subject_topics)
    return [[t for topic in step.topics for t in (headline if topic == "@subject" else [topic])]
            for step in doc.steps]


def _judgments(ctx: Context, doc: DocType, subject: DocType | None, fill: _Fill, packs, refused) -> list[str]:
    out = [f"Document type: {doc.name}" + (f", about: {fill['subject']}." if doc.has_subject else ".")]
    named_in_memory = fill["org"] not in (ctx.workspace_name.strip(), "the organisation")
    out.append(f"Organisation: {fill['org']}" + (" (named in the workspace memories)." if named_in_memory else
               " (workspace name)." if ctx.workspace_name.strip() else f" (name {TBC})."))
    out += [f'Workspace memory: "{clip(m, 200)}"' for m in ctx.memories[:6] if not looks_like_citation(m)]
    scope, source = scope_of(ctx)
    out.append(f"Scope: {scope}" + (f" (from {source})." if source else "."))
    out.append(f"Audience: {fill['audience']}.")
    out.append("Frameworks cited: " + ", ".join(p.name for p in packs)
               + (" (enabled in the workspace)." if ctx.enabled_frameworks else " (named in the task or default)."))
    for pack in named_packs(ctx.task):
        if pack not in packs:
            out.append(f"The task mentions {pack.name}, which this workspace has not enabled: it is not cited.")
    for written in refused:
        out.append(f"The task names {written}, which no enabled framework's catalogue holds: it is not cited.")
    docs = [d.name for d in ctx.uploads + ctx.files if not looks_like_citation(d.name)]
    if docs:
        out.append("Sources in the context: " + ", ".join(docs[:8]) + ".")
    known = context_text(ctx)
    for label, cues in doc.needs:
        if not any(cue in known for cue in cues):
            out.append(f"The context does not state {label}: {TBC}.")
    out.append(f"Facts come only from the context; anything it does not state is marked {TBC}.")
    return out


def plan(ctx: Context) -> Brief:
    """The brief for `ctx`: document type, judgments, approved citations and the step plan."""
    doc, subject = classify(ctx.task)
    fill = placeholders(ctx, doc, subject)
    packs = enabled_packs(ctx.enabled_frameworks, ctx.task)
    topics = step_topics(doc, subject)
    explicit, refused = explicit_picks(ctx.task, packs)
    picks: list[Pick] = []
    for pick in explicit + topic_picks([t for ts in topics for t in ts], packs, TOPICS):
        if pick not in picks:
            picks.append(pick)
    if len(picks) < 6:  # title overlap is a weaker signal than the curated map: only to fill a thin set
        picks += [p for p in keyword_picks(ctx.task, packs) if p not in picks]
    if len(picks) < 3:
        picks += [p for p in topic_picks(_FALLBACK_TOPICS, packs, TOPICS) if p not in picks][:3 - len(picks)]
    picks = picks[:MAX_CITATIONS]
    citations = as_citations(picks)

    per_step = [[n for n, p in enumerate(picks) if p in step_picks]
                for step_picks in (topic_picks(ts, packs, TOPICS) for ts in topics)]
    placed = {n for ids in per_step for n in ids}
    citing_steps = [i for i, ts in enumerate(topics) if ts] or list(range(len(topics)))
    for n, pick in enumerate(picks):
        if n not in placed:  # explicit, keyword and fallback picks join the closest citing step
            target = citing_steps[best_step_for(pick, [doc.steps[i].title for i in citing_steps])]
            per_step[target].append(n)

    steps = []
    for i, template in enumerate(doc.steps):
        spec = template.spec.format_map(fill)
        ids = sorted(set(per_step[i]))
        if ids:
            named = "; ".join(f"{citations[n].id} = {format_citation(citations[n])}" for n in ids)
            spec += f" Cite exactly: {named}."
        else:
            spec += " No framework citation is needed in this step."
        steps.append(StepPlan(index=i + 1, title=template.title, content_spec=spec))
    # Every page the research could read is approved: the engine cannot judge a page's worth,
    # and the integrity gate still holds each URL and price to the approved pages' text.
    evidence = [EvidenceRef(id=e.id, url=e.url, title=e.title[:500]) for e in ctx.evidence] or None
    return Brief(task=ctx.task.strip() or doc.name, judgments=_judgments(ctx, doc, subject, fill, packs, refused),
                 citations=citations, steps=steps, evidence=evidence)
