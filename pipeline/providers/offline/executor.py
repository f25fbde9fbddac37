"""The offline executor: one step's Markdown from the brief, the step's template and the context.

It cites exactly the brief citations the step's content spec names, in the brief's own wording,
fills the template with the facts the context gives, and builds tables from the workspace's files.
"""
from __future__ import annotations

import re
from dataclasses import replace

from pipeline.citations import check_draft
from pipeline.context import Context
from pipeline.schemas import Brief, Citation, Issue, StepPlan
from pipeline.task_check import frameworks_not_enabled

from . import kind_sections, processing, questionnaire, record_sections, sections
from .asked import asks_blocks, is_asks_step
from .citing import format_citation
from .catalogue import DOC_TYPES, GENERIC, VARIANTS
from .kinds import OPEN_POINTS
from .templates import TBC
from .fields import Fill, fill, scope_of
from .reading import Reading, read
from .revision import compose_revision_step
from .templates import PART_MARK, StepTemplate
from .text import looks_like_citation, sentences, squash

_CITE_ID = re.compile(r"(?<![\w.])(C\d+)(?!\w|\.\d)")
_TEMPLATES: dict[str, StepTemplate] = {}
for _doc in (*DOC_TYPES, *VARIANTS, GENERIC):
    for _step in _doc.steps:
        _TEMPLATES.setdefault(_step.title.lower(), _step)


def step_citations(brief: Brief, step: StepPlan) -> list[Citation]:
    """The brief's citations this step's content spec names (by id, else by ref), in brief order."""
    named = set(_CITE_ID.findall(step.content_spec))
    cited = [c for c in brief.citations if c.id in named]
    if not named:
        cited = [c for c in brief.citations
                 if re.search(r"(?<![\w.])" + re.escape(c.ref) + r"(?![\w.(])", step.content_spec)]
    return cited


def _spec_without_citations(spec: str) -> str:
    kept = [s for s in sentences(spec.split(" Cite exactly:")[0]) if not looks_like_citation(s)]
    return " ".join(kept) or "the content set out in the plan"


def requirement_citations(brief: Brief) -> list[Citation]:
    """The citations of the steps that list requirements (a mapping table, an assessment by area)."""
    steps = [s for s in brief.steps if getattr(_TEMPLATES.get(s.title.split(PART_MARK)[0].lower()), "section", "") in ("requirements",
                                                                                                  "readiness")]
    return [c for s in steps for c in step_citations(brief, s)]


def _notes(ctx: Context, brief: Brief, step: StepPlan, fields: Fill) -> list[str]:
    """What the first step must say openly: frameworks the task names that are not cited, and
    references it names that no cited framework holds (written without the reference itself)."""
    if step.index != 1:
        return []
    out = []
    for pack in frameworks_not_enabled(ctx):
        out.append(f"**Note:** the task names {pack.name}, which is not enabled in this workspace, so this document "
                   f"does not cite it and maps nothing to it; it uses the enabled frameworks instead. A workspace "
                   f"admin can enable {pack.name} to have it cited.")
    if any("no cited framework's catalogue holds" in j for j in brief.judgments):
        out.append("**Note:** a reference the task names is not in the cited frameworks' catalogues and is not "
                   "covered here.")
    return out


def _section(reading: Reading, template: StepTemplate, brief: Brief, step: StepPlan, cited: list[Citation],
             fields: Fill) -> list[str]:
    kind, _, arg = template.section.partition(":")
    if kind == "register":
        return sections.register_blocks(reading, arg, template.table, fields)
    if kind == "legend":  # "legend:<register kind>:<column>:replace|keep"
        register, column, mode = arg.split(":")
        return sections.legend_blocks(reading, register, column, mode == "replace", template.table, fields)
    if kind == "treatment":
        return sections.treatment_blocks(reading, template.table, fields)
    if kind == "requirements":
        return sections.requirement_blocks(reading, cited, template.table, fields)
    if kind == "readiness":
        return sections.readiness_blocks(reading, cited, fields)
    if kind == "gaps":
        return sections.gap_blocks(reading, requirement_citations(brief), fields)
    if kind == "facts":
        return ["\n".join(f"- {line}" for line in sections.fact_lines(reading, fields))]
    if kind in ("incident", "impact"):
        return sections.incident_blocks(reading, fields, impact=kind == "impact")
    if kind == "practices":
        return sections.practice_blocks(reading, f"{reading.task.text} {step.title}")
    if kind in _KIND_SECTIONS:
        return _KIND_SECTIONS[kind](reading, fields)
    return _record_section(reading, kind, arg, fields)


#: The parts of a document of a kind no template covers (generic.py).
_KIND_SECTIONS = {
    "related": lambda reading, fields: kind_sections.related_blocks(reading),
    "checklist": lambda reading, fields: kind_sections.checklist_blocks(reading),
    "people": lambda reading, fields: kind_sections.people_blocks(reading),
    "profile": lambda reading, fields: kind_sections.profile_blocks(reading),
    "kind_register": kind_sections.kind_register_blocks,
    "named_parties": kind_sections.named_party_blocks,
}


def _record_section(reading: Reading, kind: str, arg: str, fields: Fill) -> list[str]:
    """The parts of the record-based documents (data/kinds/)."""
    if kind == "statements":
        concepts = arg.split(",")
        if reading.task.doc.key == "assurance_letter":
            return record_sections.prose_blocks(reading, concepts)
        return record_sections.statement_blocks(reading, concepts)
    if kind == "answers":
        return questionnaire.answer_blocks(reading)
    if kind == "unanswered":
        return questionnaire.unanswered_blocks(reading, fields["questionnaire_owner"])
    if kind == "retention":
        return record_sections.retention_blocks(reading)
    if kind == "review_schedule":
        return record_sections.review_schedule_blocks(reading, fields)
    if kind == "test_schedule":
        return record_sections.test_schedule_blocks(reading, fields)
    if kind == "processing":
        return processing.activity_blocks(reading, arg, fields)
    if kind == "processor_notice":
        return processing.notice_blocks(reading, fields)
    if kind == "findings":
        return record_sections.findings_blocks(reading, arg)
    if kind == "audit_inputs":
        return record_sections.audit_input_blocks(reading)
    return []


def _template(reading: Reading, step: StepPlan) -> StepTemplate | None:
    """The step's template: the document type's own first, as two types may share a step title;
    a part of a split table ("Applicability table, part 2 of 3") is its table's."""
    title = step.title.split(PART_MARK)[0].lower()
    own = next((t for t in reading.task.doc.steps if t.title.lower() == title), None)
    return own or _TEMPLATES.get(title)


def _body(ctx: Context, reading: Reading, brief: Brief, step: StepPlan, fields: Fill) -> list[str]:
    template = _template(reading, step)
    cited = step_citations(brief, step)
    blocks: list[str] = _notes(ctx, brief, step, fields)
    if template is None and is_asks_step(step):
        blocks += asks_blocks(reading, step.content_spec)
    elif template is None:  # a brief from another planner: deliver its spec plainly
        blocks.append(f"This section covers: {_spec_without_citations(step.content_spec)}")
        blocks.append(f"Details the context does not state are {TBC}.")
    else:
        if template.intro:
            blocks.append(template.intro.format_map(fields))
        if template.bullets:
            blocks.append("\n".join(f"- {b.format_map(fields)}" for b in template.bullets))
        if template.section:
            blocks += _section(reading, template, brief, step, cited, fields)
        elif template.table:
            rows = [tuple(c.format_map(fields) for c in row) for row in template.table]
            blocks.append(sections.table(rows))
    if template is OPEN_POINTS:
        open_points = [j for j in brief.judgments if TBC in j and not j.startswith("Facts come only")
                       and not looks_like_citation(j)]
        open_points.append(f"Approval of this document by {fields['org']} management: {TBC}.")
        blocks.append("\n".join(f"- {p}" for p in open_points))
    written = "\n".join(blocks)
    uncited = [c for c in cited if format_citation(c) not in written]
    if uncited:
        blocks.append("This section addresses " + "; ".join(format_citation(c) for c in uncited) + ".")
    if template is not None and template.closing:
        blocks.append(template.closing.format_map(fields))
    return blocks


def _drop_quoted(draft: str, quotes: list[str]) -> str:
    """Remove the sentences (or list items and table rows) that contain any of `quotes`."""
    wanted = [squash(q) for q in quotes if q.strip()]
    if not wanted:
        return draft
    kept = []
    for line in draft.splitlines():
        if line.startswith("#") or not any(w in squash(line) for w in wanted):
            kept.append(line)
        elif not line.lstrip().startswith(("-", "|", ">", "*")):
            rest = [s for s in re.split(r"(?<=[.!?])\s+", line) if not any(w in squash(s) for w in wanted)]
            if rest:
                kept.append(" ".join(rest))
    return "\n".join(kept)


def _gate_quotes(brief: Brief, draft: str) -> list[str]:
    """Spans the mechanical citation gate would flag; a safety net for quoted user text."""
    return [issue.quote for issue in check_draft(brief, draft) if issue.quote]


def compose(ctx: Context, brief: Brief, step: StepPlan, *, issues: list[Issue] | None = None) -> str:
    """The step's Markdown draft. On a re-render, the spans the issues quote are left out."""
    ctx = ctx if ctx.task.strip() else replace(ctx, task=brief.task)
    reading = read(ctx)
    fields = fill(reading, scope_of(ctx, reading)[0])
    revised = compose_revision_step(ctx, reading, brief, step, fields)
    if revised is not None:
        return revised
    blocks = [f"## {step.title}", *_body(ctx, reading, brief, step, fields)]
    if issues and any(i.type == "step_contract" for i in issues):
        blocks.insert(1, f"This section delivers: {_spec_without_citations(step.content_spec)}")
    draft = "\n\n".join(blocks)
    draft = _drop_quoted(draft, [i.quote for i in issues or []])
    missing = [c for c in step_citations(brief, step) if format_citation(c) not in draft]
    if missing:  # a dropped sentence carried a citation the step needs: cite it again, exactly
        draft += "\n\nThis section addresses " + "; ".join(format_citation(c) for c in missing) + "."
    for _ in range(3):  # dropping one span never adds another, so this settles quickly
        flagged = _gate_quotes(brief, draft)
        if not flagged:
            break
        draft = _drop_quoted(draft, flagged)
    return draft.strip() + "\n"
