"""The two editions of a deliverable (docs/deliverables.md).

- `client`: the document alone, as a person sends it (exports.document builds it): no badge,
  verdict, finding, model name or recap anywhere in it.
- `audit` (the default): the same document with Beyond's account of the run added: the task, the
  run, the models, the verification summary and what a pass means, the run's warnings, the recap
  with its findings, the notes on each section (a comment in Word, a footnote in Markdown, a note
  under the heading in the PDF) and the full citation and source appendices.

The audit edition's additions are the small builders listed in AUDIT_PARTS (parts of the title
page, in order) and SECTION_NOTES (notes on a section): a new account of the run is one function
and one line in a list, and every format writes it, since a builder returns blocks
(exports.blocks), never a format's own markup.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable

from pipeline import badges, events as ev
from pipeline.topology import ROLES
from beyond_site.exports.blocks import Heading, Span, clean, line, normalise_headings, parse, text_table, warning
from beyond_site.exports.document import AUDIT, CLIENT, EDITIONS, Deliverable, Part, Section, one_line, read
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import evidence_items, halt_reasons
from beyond_site.runs.wording import OFFLINE_TIP

__all__ = ["AUDIT", "CLIENT", "EDITIONS", "build"]

#: What a pass means and does not mean (docs/verifier-contract.md), on every audit edition.
PASS_MEANING = ("A pass means that the blind verifier, which sees only the brief and the section under "
                "review, found no contract violation in that section, and that the mechanical checks found "
                "no citation outside the approved set. It does not mean the content is true, complete or "
                "correct: review the document before you rely on it.")
WARNING_AUTHOR = "Beyond verification"
RECAP_CHECKED = ("The mechanical checks found problems in this recap (the sections are unaffected); "
                 "read it with them in mind:")
SOURCES_NOTE = ("The pages web research found for this document. URLs and prices in it were checked "
                "against the pages marked used; any other was flagged.")


def build(run: Run, edition: str = AUDIT, note_kind: str = "note") -> Deliverable:
    """The deliverable of a finished run, in `edition`."""
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: {' or '.join(EDITIONS)}")
    d = read(run, edition, note_kind)
    if edition == AUDIT:
        _audit(d)
    return d


# -- the audit edition's parts of the title page ----------------------------------------------------

def models(d: Deliverable) -> list[Part]:
    """Provider, model and effort per role; nothing else of the topology (no path, no URL)."""
    run = d.run
    rows = []
    for role in ROLES:
        if run.offline:
            rows.append([role.capitalize(), "Beyond's offline engine (no language model)"])
            continue
        cfg = (run.topology or {}).get(role) or {}
        model = " ".join(x for x in (cfg.get("provider"), cfg.get("model")) if x) or "unknown"
        rows.append([role.capitalize(), f"{model}, effort {cfg['effort']}" if cfg.get("effort") else model])
    blocks = [text_table(["Role", "Model"], rows)]
    if run.offline:
        blocks.append(line(OFFLINE_TIP, italic=True))
    return [Part("Models", blocks)]


def verification(d: Deliverable) -> list[Part]:
    """How the run ended, the sections per badge, what a pass means, and the run's own warnings."""
    counts = _counts(d.sections)
    blocks = [line(_outcome(d.run, d.sections))]
    if counts:
        attached = f" Each warning is a {d.note_kind} on its section." if any(s.warnings for s in d.sections) else ""
        blocks.append(line("Sections: " + ", ".join(counts) + "." + attached))
    blocks.append(line(PASS_MEANING))
    blocks += [warning(one_line(w)) for w in d.run.warnings or []]
    return [Part("Verification", blocks)]


def recap(d: Deliverable) -> list[Part]:
    """The summarizer's recap, below Verification, with what the mechanical checks found in it."""
    recap_blocks = normalise_headings(parse(d.run.summary or ""), 4)
    if not recap_blocks:
        return []
    findings = [clean(f"[{f.get('type')}] {f.get('detail')}") for f in d.run.summary_findings or []]
    blocks = [Heading(2, [Span("Recap of the run")])]
    if findings:
        blocks.append(warning(RECAP_CHECKED + " " + "; ".join(findings)))
    return [Part(None, blocks + recap_blocks)]


#: The audit edition's title page after its facts, in order. Each takes the deliverable and returns
#: its parts (none when it has nothing to say). The verifier's trust status (its calibration) is
#: one more such builder, after `verification`.
AUDIT_PARTS: list[Callable[[Deliverable], list[Part]]] = [
    models,
    verification,
    recap,
]


# -- the audit edition's notes on a section ----------------------------------------------------------

def warnings(section: Section) -> list[str]:
    """A section released with a warning: what the verifier found in both drafts."""
    return [f"{badges.label(section.badge)}: {one_line(w)}" for w in section.warnings]


#: Notes hung on a section's heading, in order; each takes the section (its step row is
#: `section.step`) and returns lines. The specifics a step states that no source given to the
#: executor holds (`step.unsourced`) are one more such builder, after `warnings`.
SECTION_NOTES: list[Callable[[Section], list[str]]] = [
    warnings,
]


# -- the audit edition's appendices ------------------------------------------------------------------

def citations(d: Deliverable) -> list[Part]:
    rows = [[str(c.get(k) or "") for k in ("id", "framework", "ref", "title")]
            for c in (d.run.brief or {}).get("citations") or []]
    blocks = [text_table(["ID", "Framework", "Reference", "Title"], rows)] if rows else [
        line("The brief approved no citations.")]
    return [Part("Appendix: approved citations", blocks)]


def sources(d: Deliverable) -> list[Part]:
    run = d.run
    if not run.research:
        return []
    approved = {e.get("id") for e in (run.brief or {}).get("evidence") or []}
    rows = [[e["id"], clean(e.get("title") or e.get("url") or ""), clean(e.get("url") or ""),
             (e.get("fetched_at") or "")[:16].replace("T", " "),
             "used" if e["id"] in approved and e.get("status") == "ok" else
             ("read, not used" if e.get("status") == "ok" else f"not used: {clean(e.get('reason') or '')}")]
            for e in evidence_items(list(run.events.filter(type=ev.EVIDENCE_COLLECTED)))]
    if not rows:
        return []
    return [Part("Appendix: sources", [line(SOURCES_NOTE),
                                       text_table(["ID", "Title", "Address", "Fetched (UTC)", "Use"], rows)])]


AUDIT_APPENDICES: list[Callable[[Deliverable], list[Part]]] = [
    citations,
    sources,
]


def _audit(d: Deliverable) -> None:
    run = d.run
    task = one_line(run.task)[:2000]
    if task and task != d.title:
        d.facts.insert(0, ("Task", task))
    d.facts.append(("Prepared with", f"Beyond, run {run.pk}"))
    halts = halt_reasons([run.pk])[run.pk]
    for section in d.sections:
        section.notes = [note for builder in SECTION_NOTES for note in builder(section)]
        if section.badge == badges.HALTED:
            reason = halts.get(section.index, "")
            section.missing = "This section was not released: it could not be inspected" + (
                f" ({reason})." if reason else ".")
        elif not section.released:
            section.missing = "This section was not released: the run stopped before it was inspected."
    d.parts = [part for builder in AUDIT_PARTS for part in builder(d)]
    d.appendices = [part for builder in AUDIT_APPENDICES for part in builder(d)]


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
