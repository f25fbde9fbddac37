"""What a deliverable of a finished run contains, in reading order: the one source of both formats
(Markdown in exports.markdown, DOCX in exports.docx).

A deliverable is what a compliance officer sends on as it is: a title page (task, workspace, date,
the models, the verification summary and what a pass does and does not mean), then the document
itself (the released steps' content, with no step numbers or badges in the body), each warning
attached to the section it concerns, and the approved citations at the end.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from django.utils.text import slugify

from pipeline import badges, events as ev
from pipeline.topology import ROLES
from beyond_site.exports.blocks import clean, normalise_headings, parse, starts_with_heading
from beyond_site.runs.models import Run, Step
from beyond_site.runs.queue import conversation_title
from beyond_site.runs.selectors import evidence_items, halt_reasons
from beyond_site.runs.wording import OFFLINE_TIP

#: What a pass means and does not mean (docs/verifier-contract.md), on every deliverable.
PASS_MEANING = ("A pass means that the blind verifier, which sees only the brief and the section under "
                "review, found no contract violation in that section, and that the mechanical checks found "
                "no citation outside the approved set. It does not mean the content is true, complete or "
                "correct: review the document before you rely on it.")
NOT_RELEASED = "This section was not released: the run stopped before it was inspected."
WARNING_AUTHOR = "Beyond verification"
RECAP_CHECKED = ("The mechanical checks found problems in this recap (the sections are unaffected); "
                 "read it with them in mind:")
SOURCES_NOTE = ("The pages web research found for this document. URLs and prices in it were checked "
                "against the pages marked used; any other was flagged.")


@dataclass
class Section:
    """One step of the run as the reader meets it."""

    index: int
    title: str
    blocks: list = field(default_factory=list)  # exports.blocks; empty when not released
    badge: str | None = None
    warnings: list[str] = field(default_factory=list)
    note: str = ""  # why a section has no content

    @property
    def released(self) -> bool:
        return self.badge in badges.RELEASE_BADGES


@dataclass
class Deliverable:
    run: Run
    title: str  # document_title(run)
    #: This run's instruction, when it is not the title already (a follow-up's, or a renamed conversation's).
    task: str
    workspace: str
    date: str
    models: list[tuple[str, str]]  # (role, "provider model, effort")
    sections: list[Section]
    citations: list[dict]
    outcome: str  # one sentence: how the run ended
    counts: list[str]  # "2 passed", "1 passed after a re-render", ...
    run_warnings: list[str]
    recap: list  # the summarizer's recap as blocks (empty without one)
    #: What the mechanical checks found in the recap, one line each (it is shown with them, never bare).
    recap_findings: list[str] = field(default_factory=list)
    #: A research run's pages: [{"id", "title", "url", "fetched_at", "used"}] (the Sources appendix).
    sources: list[dict] = field(default_factory=list)

    @property
    def warnings(self) -> list[tuple[Section, str]]:
        return [(s, w) for s in self.sections for w in s.warnings]


def build(run: Run) -> Deliverable:
    """The deliverable of a finished run."""
    halts = halt_reasons([run.pk])[run.pk]
    sections = []
    for step in Step.objects.filter(run=run).order_by("index"):
        section = Section(step.index, clean(step.title))
        if step.status == Step.RELEASED:
            section.badge, section.warnings = step.badge, [clean(w) for w in step.warnings or []]
            blocks = parse(step.content or "")
            # Every section opens at heading level 1: its own first heading, or its title.
            section.blocks = normalise_headings(blocks, 1 if starts_with_heading(blocks) else 2)
        elif step.status == Step.HALTED:
            section.badge = badges.HALTED
            reason = halts.get(step.index, "")
            section.note = "This section was not released: it could not be inspected" + (f" ({reason})." if reason else ".")
        else:
            section.note = NOT_RELEASED
        sections.append(section)
    when = run.finished_at or run.created_at
    title, task = document_title(run), one_line(run.task)[:2000]
    return Deliverable(
        run=run, title=title, task="" if task == title else task, workspace=run.workspace.name, date=when.date().isoformat(),
        models=_models(run), sections=sections, citations=list((run.brief or {}).get("citations") or []),
        outcome=_outcome(run, sections), counts=_counts(sections),
        run_warnings=[clean(w) for w in run.warnings or []], recap=normalise_headings(parse(run.summary or ""), 4),
        recap_findings=[clean(f"[{f.get('type')}] {f.get('detail')}") for f in run.summary_findings or []],
        sources=_sources(run))


def _sources(run: Run) -> list[dict]:
    if not run.research:
        return []
    approved = {e.get("id") for e in (run.brief or {}).get("evidence") or []}
    return [{"id": e["id"], "title": clean(e.get("title") or e.get("url") or ""), "url": clean(e.get("url") or ""),
             "fetched_at": (e.get("fetched_at") or "")[:16].replace("T", " "),
             "used": "used" if e["id"] in approved and e.get("status") == "ok" else
                     ("read, not used" if e.get("status") == "ok" else f"not used: {clean(e.get('reason') or '')}")}
            for e in evidence_items(list(run.events.filter(type=ev.EVIDENCE_COLLECTED)))]


def _models(run: Run) -> list[tuple[str, str]]:
    """Provider, model and effort per role; nothing else of the topology (no path, no URL)."""
    if run.offline:
        return [(role, "Beyond's offline engine (no language model)") for role in ROLES]
    rows = []
    for role in ROLES:
        cfg = (run.topology or {}).get(role) or {}
        model = " ".join(x for x in (cfg.get("provider"), cfg.get("model")) if x) or "unknown"
        rows.append((role, f"{model}, effort {cfg['effort']}" if cfg.get("effort") else model))
    return rows


def _counts(sections: list[Section]) -> list[str]:
    counted = Counter(s.badge for s in sections if s.released)
    out = [f"{counted[b]} {badges.phrase(b)}" for b in badges.RELEASE_BADGES if counted[b]]
    missing = sum(not s.released for s in sections)
    if missing:
        out.append(f"{missing} not released")
    return out


def _outcome(run: Run, sections: list[Section]) -> str:
    released = sum(s.released for s in sections)
    total = len(sections)
    # A warning is said first, not left to the counts: those sections failed inspection twice.
    warned = sum(s.released and s.badge == badges.WARNING for s in sections)
    caution = (f" {_sections(warned)} {'was' if warned == 1 else 'were'} released with a warning: the verifier "
               "found issues in both drafts, listed beside the section; fix them before use." if warned else "")
    if run.status == Run.COMPLETED:
        every = "The section was" if total == 1 else f"All {total} sections were"
        return f"{every} released after inspection by the blind verifier.{caution}"
    reason = f" ({one_line(run.halt_reason)})" if run.halt_reason else ""
    stopped = {Run.HALTED: "halted", Run.FAILED: "failed", Run.CANCELLED: "was stopped"}.get(run.status, run.status)
    return (f"The run {stopped}{reason}: {released} of {total} {'section was' if released == 1 else 'sections were'} "
            f"released; the others are missing from this document.{caution}")


def _sections(n: int) -> str:
    return "1 section" if n == 1 else f"{n} sections"


def offline_note(run: Run) -> str | None:
    return OFFLINE_TIP if run.offline else None


def one_line(text) -> str:
    return " ".join(clean(text).split())


def document_title(run: Run) -> str:
    """What the document is called: its conversation's name when a member renamed it, else the task
    that began the conversation, whole (the conversation's own name for it is cut to fit the list).
    A follow-up's instruction ("add a section on cloud assets") asks for a revision of that
    document: it is not the document's name."""
    conversation = run.conversation
    if conversation is None:
        return one_line(run.task)[:300]
    first = conversation.runs.order_by("pk").values_list("task", flat=True).first() or run.task
    named = one_line(conversation.title)
    if not named or named == one_line(conversation_title(first)):
        return one_line(first)[:300]
    return named[:300]


def filename(run: Run, ext: str) -> str:
    # ASCII letters, digits and dashes only: safe in a header and on any file system.
    stem = slugify(document_title(run))[:50].strip("-") or "run"
    return re.sub(r"[^a-z0-9.-]", "", f"beyond-run-{run.pk}-{stem}.{ext}")
