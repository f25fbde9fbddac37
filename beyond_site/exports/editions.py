"""The two editions of a deliverable (docs/deliverables.md).

- `client`: the document alone, as a person sends it (exports.document builds it): no badge,
  verdict, finding, model name or recap anywhere in it.
- `audit` (the default): the same document with Beyond's account of the run added: the task, the
  run, the models, the verification summary and what a pass means, the verifier's trust status
  (its calibration when the run was created), the run's warnings, the recap
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

from pipeline import badges
from pipeline.topology import ROLES
from beyond_site.exports.blocks import Heading, Span, clean, line, normalise_headings, parse, text_table, warning
from beyond_site.exports import specifics
from beyond_site.exports.client import for_client
from beyond_site.exports.document import (Options, coverage_sentence, AUDIT, CLIENT, EDITIONS, Deliverable, Part, Section, one_line, read,
                                          source_views_of)
from beyond_site.exports.specifics import unsourced_of
from beyond_site.lib.instants import instant_words
from beyond_site.runs import verification as who_checked
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import halt_reasons
from beyond_site.runs.trust import BELOW_THRESHOLDS, UNCALIBRATED, pass_standing, sentence as trust_sentence
from beyond_site.runs.wording import OFFLINE_TIP

__all__ = ["AUDIT", "CLIENT", "EDITIONS", "build"]

#: What a pass means and does not mean (docs/verifier-contract.md), on every audit edition a model checked.
PASS_MEANING = ("A pass means that the blind verifier, which sees only the brief and the section under "
                "review, found no contract violation in that section, and that the mechanical checks found "
                "no citation outside the approved set. It does not mean the content is true, complete or "
                "correct: review the document before you rely on it.")
#: What "checked mechanically" means, on every audit edition with a section no model read.
CHECKED_MEANING = ("A section checked mechanically was read by no language model: only mechanical checks ran on "
                   "it (its framework citations against the approved set, and its structure), and nothing checked "
                   "it for faithfulness to the brief. It does not mean the content is true, complete or correct: "
                   "review the document before you rely on it.")
WARNING_AUTHOR = "Beyond verification"
RECAP_CHECKED = ("The mechanical checks found problems in this recap (the sections are unaffected); "
                 "read it with them in mind:")
SOURCES_NOTE = ("The pages web research found for this document. URLs and prices in it were checked "
                "against the pages marked used; any other was flagged.")


def build(run: Run, edition: str = AUDIT, note_kind: str = "note", options: Options = Options()) -> Deliverable:
    """The deliverable of a finished run, in `edition`, with the person exporting's `options`."""
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: {' or '.join(EDITIONS)}")
    d = read(run, edition, note_kind, options)
    if edition == AUDIT:
        _audit(d)
    else:
        for_client(d, endnotes=options.endnotes)
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
    """How the run ended, who checked it, the sections per badge, every warning counted, what the
    badges mean, and the run's own warnings."""
    counts = _counts(d.sections)
    blocks = [line(_outcome(d.run, d.sections))]
    checked_by = who_checked.words(d.run.verification)
    if checked_by:
        blocks.append(line(checked_by))
    if counts:
        attached = f" Each warning is a {d.note_kind} on its section." if any(s.warnings for s in d.sections) else ""
        blocks.append(line("Sections: " + ", ".join(counts) + "." + attached))
    standing = pass_standing(d.run.verifier_trust)
    if standing and any(s.badge in (badges.PASSED, badges.PASSED_AFTER_RERENDER) for s in d.sections if s.released):
        blocks.append(warning(UNPROVEN_PASSES[standing]))
    counted = _warnings_line(d)
    if counted:
        blocks.append(line(counted))
    blocks += [line(meaning) for meaning in meaning_of(d.sections)]
    blocks += [warning(one_line(w)) for w in d.run.warnings or []]
    return [Part("Verification", blocks)]


#: What a model's passes are worth from a verifier not calibrated to the bar (runs/trust.py).
UNPROVEN_PASSES = {
    UNCALIBRATED: "Its passes are an uncalibrated verifier's: this verifier was never calibrated in the workspace "
                  "with these settings, so how often it misses a violation is not known.",
    BELOW_THRESHOLDS: "Its passes are from a verifier below the thresholds: its latest calibration does not meet "
                      "them, so read them as that verifier's opinion.",
}


def meaning_of(sections: list[Section]) -> list[str]:
    """What the released sections' badges mean: a pass's meaning where a model checked, the
    mechanical checks' where none did (both in a run that has both)."""
    shown = {s.badge for s in sections if s.released}
    mechanical = badges.CHECKED in shown
    by_model = bool(shown & {badges.PASSED, badges.PASSED_AFTER_RERENDER}) or not mechanical
    return [PASS_MEANING] * by_model + [CHECKED_MEANING] * mechanical


def _warnings_line(d: Deliverable) -> str:
    """Every warning of the run counted, the recap's findings included: "" when there is none."""
    parts = [(sum(len(s.warnings) for s in d.sections), "on sections"), (len(d.run.warnings or []), "on the run"),
             (len(d.run.summary_findings or []), "in the recap")]
    total = sum(n for n, _ in parts)
    if not total:
        return ""
    return f"Warnings: {total} (" + ", ".join(f"{n} {where}" for n, where in parts if n) + ")."


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


def verifier_trust(d: Deliverable) -> list[Part]:
    """What was known of the verifier when the run was created: its latest calibration in the
    workspace, "never calibrated", or no model to calibrate (runs/trust.py). Nothing for a run
    recorded before trust statuses were kept."""
    said = trust_sentence(d.run.verifier_trust)
    return [Part("Verifier calibration", [line(said)])] if said else []


#: The audit edition's title page after its facts, in order. Each takes the deliverable and returns
#: its parts (none when it has nothing to say).
def requirements(d: Deliverable) -> list[Part]:
    """The requirement trace: how much of the task the document covers, and each requirement."""
    run = d.run
    if run.requirements_total is None:
        return []
    rows = [[r.get("id", ""), r.get("text", ""), r.get("status", ""), r.get("detail", "")] for r in run.requirements or []]
    return [Part("Requirements of the task", [line(coverage_sentence(run)),
                                              text_table(["Id", "Requirement", "Status", "Detail"], rows)])]


AUDIT_PARTS: list[Callable[[Deliverable], list[Part]]] = [
    requirements,
    models,
    verification,
    verifier_trust,
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
    """Every page of a research run, and whether the document cites it (runs/sources.py)."""
    rows = [[v.id, clean(v.title or v.url), clean(v.url), instant_words(v.fetched_at), clean(v.use_words)]
            for v in source_views_of(d.run)]
    if not rows:
        return []
    return [Part("Appendix: sources", [line(SOURCES_NOTE),
                                       text_table(["ID", "Title", "Address", "Fetched", "Use"], rows)])]


def unsourced(d: Deliverable) -> list[Part]:
    """The specifics of the sections and the recap found in nothing the executor was given
    (exports/specifics.py, docs/verifier-contract.md)."""
    found = unsourced_of(d.run)
    if not found.shown:
        return []
    blocks = [line(specifics.NOTE), line(specifics.summary_line(found))]
    if found.rows:
        blocks.append(text_table(specifics.HEADER, found.rows))
    if found.unread:
        blocks.append(line(specifics.unread_line(found)))
    return [Part(specifics.HEADING, blocks)]


AUDIT_APPENDICES: list[Callable[[Deliverable], list[Part]]] = [
    citations,
    sources,
    unsourced,
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
    if run.status == Run.DECLINED:
        return f"The run was declined: {one_line(run.decline_reason)} Nothing was drafted."
    if run.status == Run.COMPLETED:
        every = "The section was" if total == 1 else f"All {total} sections were"
        by = {badges.MECHANICAL: "after mechanical checks only (no language model read them)",
              badges.MIXED: "after inspection, by the blind verifier or, where marked, by mechanical checks only"
              }.get(run.verification, "after inspection by the blind verifier")
        return f"{every} released {by}.{caution}"
    reason = f" ({one_line(run.halt_reason)})" if run.halt_reason else ""
    stopped = {Run.HALTED: "halted", Run.FAILED: "failed", Run.CANCELLED: "was stopped"}.get(run.status, run.status)
    return (f"The run {stopped}{reason}: {released} of {total} {'section was' if released == 1 else 'sections were'} "
            f"released; the others are missing from this document.{caution}")


def _sections(n: int) -> str:
    return "1 section" if n == 1 else f"{n} sections"
