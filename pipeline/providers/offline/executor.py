"""The offline executor: one step's Markdown from the brief, the step's template and the context.

It cites exactly the brief citations the step's content spec names, in the brief's own wording,
and quotes context text only when that text cannot be read as a framework citation.
"""
from __future__ import annotations

import re

from pipeline.citations import check_draft
from pipeline.context import Context
from pipeline.schemas import Brief, Citation, Issue, StepPlan

from .citing import format_citation
from .doctypes import OPEN_POINTS, DOC_TYPES, GENERIC, TBC
from .planner import placeholders
from .reading import classify, org_name, relevant_quotes
from .templates import DocType, StepTemplate
from pipeline.words import overlap

from .text import looks_like_citation, sentences, squash

_CITE_ID = re.compile(r"(?<![\w.])(C\d+)(?!\w|\.\d)")
_TEMPLATES: dict[str, StepTemplate] = {}
for _doc in (*DOC_TYPES, GENERIC):
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


def memories_for_step(ctx: Context, brief: Brief, step: StepPlan) -> list[str]:
    """The memories this step quotes: each memory once, in the step it shares most words with.

    A memory that fits no step, but is about the organisation or the task, goes to step 1, so the
    document always carries the facts it was given.
    """
    org = org_name(ctx)
    steps = [s for s in brief.steps if _TEMPLATES.get(s.title.lower()) is not OPEN_POINTS] or brief.steps
    chosen = []
    for memory in ctx.memories:
        if looks_like_citation(memory):
            continue
        scores = [overlap(memory, f"{s.title} {_spec_without_citations(s.content_spec)}") for s in steps]
        if max(scores) > 0:
            home = steps[scores.index(max(scores))].index
        else:
            home = steps[0].index if org in memory or overlap(memory, brief.task) else None
        if home == step.index:
            chosen.append(memory)
    return chosen


def _table(rows: list[tuple[str, ...]]) -> str:
    def line(cells): return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"
    return "\n".join([line(rows[0]), line(tuple("---" for _ in rows[0])), *map(line, rows[1:])])


def _spec_without_citations(spec: str) -> str:
    kept = [s for s in sentences(spec.split(" Cite exactly:")[0]) if not looks_like_citation(s)]
    return " ".join(kept) or "the content set out in the plan"


def _body(ctx: Context, brief: Brief, step: StepPlan, doc: DocType, fill) -> list[str]:
    template = _TEMPLATES.get(step.title.lower())
    cited = step_citations(brief, step)
    blocks: list[str] = []
    if template is None:  # a brief from another planner: deliver its spec plainly
        blocks.append(f"This section covers: {_spec_without_citations(step.content_spec)}")
        blocks.append(f"Details the context does not state are {TBC}.")
    else:
        if template.intro:
            blocks.append(template.intro.format_map(fill))
        if template.bullets:
            blocks.append("\n".join(f"- {b.format_map(fill)}" for b in template.bullets))
        if template.table:
            rows = [tuple(c.format_map(fill) for c in row) for row in template.table]
            if len(rows) == 1:  # a header only: one row per cited reference (a statement of applicability)
                rows += [(format_citation(c),) + (TBC,) * (len(rows[0]) - 1) for c in cited]
            blocks.append(_table(rows))
    if template is OPEN_POINTS:
        open_points = [j for j in brief.judgments if TBC in j and not j.startswith("Facts come only")
                       and not looks_like_citation(j)]
        open_points.append(f"Approval of this document by {fill['org']} management: {TBC}.")
        blocks.append("\n".join(f"- {p}" for p in open_points))
    if doc.key != "stakeholder_email" and template is not OPEN_POINTS:
        query = f"{step.title} {_spec_without_citations(step.content_spec)}"
        facts = memories_for_step(ctx, brief, step)
        if facts:
            blocks.append("Facts from the workspace memories:\n" + "\n".join(f'- "{m}"' for m in facts))
        for quote in relevant_quotes(ctx, query):
            blocks.append(f'> "{quote.text}" (from {quote.source})')
    if cited:
        blocks.append("This section addresses " + "; ".join(format_citation(c) for c in cited) + ".")
    if template is not None and template.closing:
        blocks.append(template.closing.format_map(fill))
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
    doc, subject = classify(ctx.task or brief.task)
    fill = placeholders(ctx, doc, subject)
    blocks = [f"## {step.title}", *_body(ctx, brief, step, doc, fill)]
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
