"""What a deliverable of a finished run contains, in reading order: the one source of every format
(Markdown in exports.md, DOCX in exports.docx, PDF in exports.pdf, the tables in exports.xlsx).

A deliverable is what a compliance officer sends on as it is: a title page (title, organisation,
version, date, status, classification), the document itself (the released steps' content, with no
step numbers or badges in the body) and the approved citations as references, on pages that carry
the document's short title in their header and its version, status, classification and page
number in their footer. That is the client edition, built here; the audit edition adds Beyond's
own account of the run to it (exports.editions).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.utils.text import slugify

from pipeline import badges, events as ev
from pipeline.citations import extract_citations
from beyond_site.exports.blocks import (Paragraph, clean, line, normalise_headings, parse, plain,
                                        starts_with_heading, text_table)
from beyond_site.runs.models import Run, Step
from beyond_site.runs import verification
from beyond_site.runs.naming import SHORT_TITLE_CHARS, cut, document_title, file_stem, one_line, short_title  # noqa: F401
from beyond_site.runs.selectors import evidence_items
from beyond_site.runs.sources import USED, source_views
from beyond_site.runs.versions import DocumentVersion, document_version

CLIENT, AUDIT = "client", "audit"
EDITIONS = (CLIENT, AUDIT)
#: What each format calls a note hung on a section (the audit edition's warnings).
NOTE_KINDS = {"docx": "comment", "md": "footnote", "pdf": "note", "xlsx": "note"}
#: A section the run did not release, as the client edition says it: the reader learns that a part
#: is missing without the pipeline's vocabulary (the audit edition says why).
MISSING = "This section is not included in this version of the document."
#: The header's title is cut to this many characters (runs/naming.py).
#: The offline engine's line naming the citations a section covers: a note to the verifier about
#: the section, not part of the document a client reads (pipeline/providers/offline/executor.py).
_ADDRESSES = re.compile(r"^This section addresses [^\n]*\.$")


@dataclass(frozen=True)
class Options:
    """What the person exporting chooses: the classification printed on the document (None: the
    workspace's), and, in the client edition, sources as numbered endnotes instead of left out."""

    classification: str | None = None
    endnotes: bool = False


#: The classifications offered when exporting, beside the workspace's own.


@dataclass
class Section:
    """One step of the run as the reader meets it."""

    index: int
    title: str
    blocks: list = field(default_factory=list)  # exports.blocks; empty when not released
    badge: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: The step's row (None for none): what the audit edition's section notes read.
    step: Step | None = None
    #: The audit edition's notes on this section, one line each: a comment in Word, a footnote in
    #: Markdown, a note under the heading in the PDF. Empty in the client edition.
    notes: list[str] = field(default_factory=list)
    missing: str = ""  # why a section has no content
    #: The table this section is a part of ("…, part 2 of 3"), once its title says so (exports.client).
    part_of: str = ""

    @property
    def released(self) -> bool:
        return self.badge in badges.RELEASE_BADGES


@dataclass
class Part:
    """A titled part outside the body: the audit edition's title page parts, the appendices."""

    title: str | None  # a level-1 heading; None: the blocks follow the part before
    blocks: list


@dataclass
class Deliverable:
    run: Run
    edition: str
    title: str
    #: The title page's facts, in order: (label, value).
    facts: list[tuple[str, str]]
    version: DocumentVersion
    paper: str  # "a4" or "letter"
    header: str  # the short title, on every page
    footer: str  # "Version 2 · Draft · Internal", on every page beside "Page N of M"
    sections: list[Section]
    #: The audit edition's parts of the title page (verification, recap...); none in the client's.
    parts: list[Part] = field(default_factory=list)
    appendices: list[Part] = field(default_factory=list)
    note_kind: str = "note"
    date: str = ""
    #: How many open points the client edition gathered into its Open items list (exports.client).
    open_items: int = 0

    @property
    def notes(self) -> list[tuple[Section, str]]:
        return [(s, n) for s in self.sections for n in s.notes]


def read(run: Run, edition: str = CLIENT, note_kind: str = "note", options: Options = Options()) -> Deliverable:
    """The client edition of a finished run's deliverable (exports.editions adds the audit's parts)."""
    workspace = run.workspace
    version = document_version(run)
    sections = [_section(step, edition, run.verification) for step in Step.objects.filter(run=run).order_by("index")]
    when = run.finished_at or run.created_at
    title = document_title(run)
    classification = clean(options.classification if options.classification is not None
                           else workspace.export_classification).strip()[:60]
    number = version.number or 1
    facts = [("Organisation", clean(workspace.export_organisation).strip() or clean(workspace.name)),
             ("Version", str(number)), ("Date", when.date().isoformat()), ("Status", version.status)]
    if classification:
        facts.append(("Classification", classification))
    footer = " · ".join(x for x in (f"Version {number}", version.status, classification) if x)
    # A document that misses part of the task says so, in the client's edition too (the person
    # exporting it confirmed it first: exports.views).
    gaps = [Part("Requirements of the task", [line(run.requirements_gaps)])] if run.requirements_gaps else []
    return Deliverable(run=run, edition=edition, title=title, facts=facts, version=version,
                       paper=workspace.export_paper or "a4", header=cut(title, SHORT_TITLE_CHARS), footer=footer,
                       sections=sections, parts=gaps, appendices=_references(run, cited_only=edition == CLIENT),
                       note_kind=note_kind,
                       date=when.date().isoformat())


def coverage_sentence(run: Run) -> str:
    """"Covers 3 of 5 requirements of the task. Not covered: ..." or that it covers them all."""
    if run.requirements_gaps:
        return run.requirements_gaps
    total = run.requirements_total or 0
    return f"Covers all {total} requirement{'s' * (total != 1)} of the task."


def _section(step: Step, edition: str, checked: str | None) -> Section:
    """`checked`: the run's verification, for a record older than the `checked` badge."""
    section = Section(step.index, clean(step.title), step=step)
    if step.status == Step.RELEASED:
        section.badge = verification.shown_badge(step.badge, checked)
        section.warnings = [clean(w) for w in step.warnings or []]
        blocks = parse(step.content or "")
        if edition == CLIENT:
            blocks = [b for b in blocks if not (isinstance(b, Paragraph) and _ADDRESSES.match(plain(b.spans)))]
        # Every section opens at heading level 1: its own first heading, or its title.
        section.blocks = normalise_headings(blocks, 1 if starts_with_heading(blocks) else 2)
    else:
        section.badge = badges.HALTED if step.status == Step.HALTED else None
        section.missing = MISSING
    return section


def _references(run: Run, cited_only: bool) -> list[Part]:
    """The approved citations (and the research pages the document cites), as a client reads them:
    in the client edition only those the released text cites, so that a reader meets no framework
    the document does not use; the audit edition lists every one the brief approved."""
    approved = (run.brief or {}).get("citations") or []
    if cited_only:
        written = cited_refs(run)
        approved = [c for c in approved if (c.get("ref") or "") in written]
    rows = [[str(c.get(k) or "") for k in ("framework", "ref", "title")] for c in approved]
    blocks = [text_table(["Framework", "Reference", "Title"], rows)] if rows else []
    cited = [view for view in source_views_of(run) if view.use == USED]
    if cited:
        blocks.append(line("Sources:"))
        blocks.append(text_table(["Title", "Address"], [[clean(v.title or v.url), clean(v.url)] for v in cited]))
    return [Part("References", blocks)] if blocks else []


def cited_refs(run: Run) -> set[str]:
    """The references the released text of `run` cites, as the citation gate reads them."""
    released = Step.objects.filter(run=run, status=Step.RELEASED).values_list("content", flat=True)
    return {f.ref for text in released for f in extract_citations(text or "")} | {
        f.ref.split("(")[0] for text in released for f in extract_citations(text or "")}


def source_views_of(run: Run) -> list:
    """A research run's pages, each with whether the released document cites it (runs/sources.py)."""
    if not run.research:
        return []
    released = Step.objects.filter(run=run, status=Step.RELEASED).values_list("content", flat=True)
    return source_views(evidence_items(list(run.events.filter(type=ev.EVIDENCE_COLLECTED))), run.brief, released)


def nothing_to_export(run: Run) -> str | None:
    """Why a finished run has no document to export (None when it has one): a declined run released nothing."""
    if run.status == Run.DECLINED:
        return (f"Run {run.pk} declined the task and released nothing, so there is no document to export: "
                f"{one_line(run.decline_reason)}")
    return None


def filename(run: Run, ext: str, edition: str = AUDIT) -> str:
    """The client edition is named as a person would send it (the title and the version); the audit
    edition after the run it accounts for."""
    # ASCII letters, digits and dashes only: safe in a header and on any file system.
    stem = file_stem(document_title(run))
    if edition == CLIENT:
        name = f"{stem}-v{document_version(run).number or 1}.{ext}"
    else:
        name = f"beyond-run-{run.pk}-{stem}.{ext}"
    return re.sub(r"[^a-z0-9.-]", "", name)

