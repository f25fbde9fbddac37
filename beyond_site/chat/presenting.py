"""What a run looks like to a reader: badges, progress words and the view of a run's state.

Read from the database only (the event log and the rows the recorder keeps beside it), so the
page, a websocket snapshot and a reconnect all show the same thing. Wording rule (docs/verifier-contract.md): a pass
means the blind verifier found no contract violation; nothing here says "verified" or "correct".
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from django.db.models import Exists, Max, OuterRef, Subquery

from pipeline import badges, events as ev
from beyond_site.lib.markdown import markdown_to_html
from beyond_site.runs import chain, verification
from beyond_site.runs.naming import document_title
from beyond_site.runs.models import Run, RunEvent, Step
from beyond_site.runs.selectors import halt_reasons
from beyond_site.runs.sources import SourceView, mark_sources, source_views
from beyond_site.runs.unsourced import SpecificsView, mark_unsourced, specifics_view
from beyond_site.runs.trust import badge_standing, sentence as trust_sentence, standing_label
from beyond_site.runs.versions import DocumentVersion, document_version, document_versions
from beyond_site.runs.wording import engines_words, one_engine, outcome_text

# Events that move the progress line; the others (model calls, verdicts) are for the audit trail.
PROGRESS_TYPES = (
    ev.RUN_STARTED, ev.RESEARCH_STARTED, ev.RESEARCH_DONE, ev.PLANNER_STARTED, ev.PLANNER_REJECTED, ev.BRIEF_READY,
    ev.STEP_RENDERING,
    ev.STEP_VERIFYING, ev.STEP_RERENDERING, ev.STEP_RELEASED, ev.STEP_HALTED, ev.SUMMARIZER_STARTED,
    ev.SUMMARY_READY, ev.SUMMARY_FAILED, *ev.FINAL_TYPES,
)


def page_status(status: str) -> str:
    """The DOM contract's run status: a queued run is shown as running."""
    return Run.RUNNING if status == Run.QUEUED else status


def progress_text(event: RunEvent | None, total: int, released: int) -> str:
    if event is None:
        return "Queued: starting soon…"
    p = event.payload
    step = getattr(p, "step", None)
    if isinstance(p, ev.StepRendering):
        text = f"{'Rendering' if p.attempt == 1 else 'Re-rendering'} step {step} of {total}"
    else:
        words = {
            ev.RUN_STARTED: "Starting…",
            ev.RESEARCH_STARTED: "Searching the web…",
            ev.RESEARCH_DONE: "Research done: planning the brief…",
            ev.PLANNER_STARTED: "Planning the brief…",
            ev.PLANNER_REJECTED: "Planning again: the first brief was not usable…",
            ev.REQUIREMENTS_CHECKED: ("Planning again: the brief left out part of the task…"
                                      if getattr(p, "sent_back", False) else "Brief checked against the task"),
            ev.BRIEF_READY: f"Brief ready: {total} steps to draft",
            ev.REQUIREMENTS_TRACED: "Checking the document against the task…",
            ev.STEP_VERIFYING: f"Verifier inspecting step {step} of {total}",
            ev.STEP_RERENDERING: f"Re-rendering step {step} of {total}: the verifier found issues",
            ev.STEP_RELEASED: f"Released step {step} of {total}",
            ev.STEP_HALTED: f"Halted at step {step}",
            ev.SUMMARIZER_STARTED: "Summarizing…",
            ev.SUMMARY_READY: "Recap ready",
            ev.SUMMARY_FAILED: "No recap (the summarizer failed)",
            ev.RUN_COMPLETED: f"Finished: {released} of {total} steps released",
            ev.RUN_HALTED: "Halted",
            ev.RUN_FAILED: "Failed",
            ev.RUN_CANCELLED: f"Stopped: {released} of {total} steps released" if total else "Stopped",
            ev.RUN_DECLINED: "Declined: nothing was drafted",
        }
        text = words.get(event.type, "Working…")
    if total and event.type not in ev.FINAL_TYPES and event.type != ev.BRIEF_READY:
        text = f"{text} · {released} of {total} released"
    return text


@dataclass
class StepView:
    index: int
    title: str
    status: str  # pending, released, halted, not_released
    badge: str | None = None
    warnings: list[str] = field(default_factory=list)
    html: str = ""
    halt_reason: str = ""
    #: Its unsourced specifics and sources (runs/unsourced.py); None when not read.
    specifics: SpecificsView | None = None
    #: A redo's step carried over from the earlier run (`run.redo_of`), not inspected again.
    carried_over: bool = False
    #: A model's pass from a verifier not calibrated to the bar (runs/trust.py `pass_standing`),
    #: and the trust sentence that says why; None for a plain pass and every other badge.
    standing: str | None = None
    trust_text: str = ""

    @property
    def badge_label(self) -> str:
        return standing_label(badges.label(self.badge), self.standing) if self.badge else ""

    @property
    def badge_tip(self) -> str:
        tip = verification.badge_tip(self.badge)
        return f"{self.trust_text} {tip}" if self.standing else tip


@dataclass
class RunView:
    run: Run
    status: str
    steps: list[StepView]
    progress: str
    recap_html: str
    warnings: list[str]
    last_seq: int
    #: For a run that did not complete: what happened, in a member's words (the recorded reason is
    #: `run.halt_reason`, shown one click away).
    outcome: str = ""
    recap_findings: list[str] = field(default_factory=list)
    #: The pages a research run collected (empty for a run without research).
    sources: list[SourceView] = field(default_factory=list)
    #: Run again already (a run is run again once: the new run has its own button).
    retried: bool = False
    #: Who checked the released steps, in words (runs/verification.py); "" while none is released.
    verification_text: str = ""
    #: The verifier's trust status when the run was created, in words (runs/trust.py); "" for a run
    #: recorded before it was kept.
    trust_text: str = ""
    #: The recap's unsourced specifics and sources (runs/unsourced.py); None when not read.
    recap_specifics: SpecificsView | None = None
    #: The run's version of its conversation's document (runs/versions.py), once it has finished.
    document: DocumentVersion | None = None
    #: Its released steps or recap, as shown, no longer match the events that released them
    #: (runs/chain.py `shown_tampered`): the page says so above them.
    tampered: bool = False

    @property
    def engines(self) -> str:
        """Which engine each role used (runs/wording.py `engines_words`)."""
        return engines_words(self.run.topology)

    @property
    def engines_mixed(self) -> bool:
        """Some roles offline and some on a model: the card names each, never "Offline engine"."""
        return not one_engine(self.run.topology)

    @property
    def open_points(self) -> int:
        """How many "to be confirmed" the released steps hold: the client edition's open items."""
        return sum(str(s.html).lower().count("to be confirmed") for s in self.steps if s.status == Step.RELEASED)

    @property
    def document_title(self) -> str:
        """The document's name (the rename form's value): read when a finished run's card is drawn."""
        return document_title(self.run)

    @property
    def declined_reason(self) -> str:
        """A declined run's whole answer: its planner's reason (it has no steps, badges or exports)."""
        return (self.run.decline_reason or "") if self.run.status == Run.DECLINED else ""

    @property
    def finished(self) -> bool:
        return self.run.status in Run.FINISHED

    @property
    def released(self) -> int:
        return sum(1 for s in self.steps if s.status == Step.RELEASED)

    @property
    def can_export(self) -> bool:
        return self.finished and self.released > 0

    @property
    def can_run_again(self) -> bool:
        return self.run.status in Run.RETRYABLE and not self.retried

    @property
    def can_regenerate(self) -> bool:
        return self.run.status == Run.COMPLETED and self.run.conversation_id is not None

    @property
    def can_redo(self) -> bool:
        """A finished run's released steps may be redone (docs/working-loop.md)."""
        return self.finished and self.run.conversation_id is not None and bool(self.run.brief)

    @property
    def duration(self) -> str:
        """How long the finished run took, from its start to its end ("" while it runs)."""
        start = self.run.started_at or self.run.created_at
        if not self.finished or not self.run.finished_at or start is None:
            return ""
        return duration_text((self.run.finished_at - start).total_seconds())


def duration_text(seconds: float) -> str:
    """A run's duration as a reader says it: "0.4 s", "12 s", "3 min 5 s", "1 h 2 min"."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def released_texts(steps: list[Step]) -> list[str]:
    """What the run's document says: the released steps' content (a source is used when it cites it)."""
    return [s.content or "" for s in steps if s.status == Step.RELEASED]


def recap_findings(findings: list[dict] | None) -> list[str]:
    """The mechanical checks' findings on a recap, one line each, for the warning shown beside it."""
    return [f"[{f.get('type')}] {f.get('detail')}" for f in findings or []]


#: A Markdown heading on the content's first line.
_FIRST_HEADING = re.compile(r"\A\s*#{1,6}[ \t]+(.*?)[ \t#]*(?:\n|\Z)")


def _plain_title(text: str) -> str:
    return " ".join(text.replace("*", "").replace("_", " ").split()).casefold().strip(" .:")


def without_title_heading(content: str, title: str) -> str:
    """The step's content without a first heading that only repeats its title, which the step's
    header already shows (executors often open a step with its title)."""
    match = _FIRST_HEADING.match(content or "")
    if match and _plain_title(match.group(1)) == _plain_title(title):
        return content[match.end():]
    return content


def step_view(step: Step, halt_reasons: dict[int, str], sources: list[SourceView] = (),
              checked: str | None = None, trust: dict | None = None) -> StepView:
    """`checked`: the run's verification, for a record older than the `checked` badge; `trust` the
    run's verifier trust status (a model's pass from an uncalibrated verifier says so)."""
    view = StepView(index=step.index, title=step.title, status=step.status, carried_over=step.carried_over)
    if step.status == Step.RELEASED:
        view.badge, view.warnings = verification.shown_badge(step.badge, checked), list(step.warnings or [])
        view.standing = badge_standing(view.badge, trust)
        view.trust_text = trust_sentence(trust) if view.standing else ""
        html = mark_sources(markdown_to_html(without_title_heading(step.content, step.title)), list(sources))
        view.html = mark_unsourced(html, step.unsourced)
        view.specifics = specifics_view(step.unsourced, step.sources)
    elif step.status == Step.HALTED:
        view.badge, view.halt_reason = badges.HALTED, halt_reasons.get(step.index, "")
    return view


@dataclass
class _RunRows:
    """What a run's view is drawn from, however it was read (`run_views` for many runs at once,
    `run_view` for one): `run` carries its workspace and whether it was run again."""

    run: Run
    last_seq: int
    steps: list[Step]
    latest: RunEvent | None  # the last event that moves the progress line
    halts: dict[int, str] = field(default_factory=dict)
    sources: list[SourceView] = field(default_factory=list)


def _view(rows: _RunRows, document: DocumentVersion | None = None, tampered: bool = False) -> RunView:
    run = rows.run
    # A declined run drafted nothing: a declined redo's planned steps are not shown waiting.
    steps = [] if run.status == Run.DECLINED else [step_view(s, rows.halts, rows.sources, run.verification,
                                                             run.verifier_trust) for s in rows.steps]
    released = sum(1 for s in steps if s.status == Step.RELEASED)
    outcome = (outcome_text(run.status, run.halt_reason, released)
               if run.status in (Run.HALTED, Run.FAILED, Run.CANCELLED) else "")
    return RunView(run=run, status=page_status(run.status), steps=steps,
                   progress=progress_text(rows.latest, len(steps), released),
                   recap_html=mark_unsourced(markdown_to_html(run.summary), run.summary_unsourced),
                   warnings=list(run.warnings or []),
                   last_seq=rows.last_seq, outcome=outcome, recap_findings=recap_findings(run.summary_findings),
                   sources=rows.sources, retried=run.retried, verification_text=verification.words(run.verification),
                   trust_text=trust_sentence(run.verifier_trust),
                   recap_specifics=specifics_view(run.summary_unsourced, run.summary_sources), document=document,
                   tampered=tampered)


def run_views(run_ids) -> dict[int, RunView]:
    """The whole current state of each run, from the database, in a fixed number of queries."""
    ids = list(run_ids)
    if not ids:
        return {}
    # Read the last sequence numbers first: the state read after them is at least that new, so a
    # tail from one can only repeat (idempotent swaps), never miss.
    last_seqs = dict(RunEvent.objects.filter(run_id__in=ids).values("run_id").annotate(last=Max("seq"))
                     .values_list("run_id", "last"))
    runs = (Run.objects.select_related("workspace")
            .annotate(retried=Exists(Run.objects.filter(retry_of=OuterRef("pk")))).in_bulk(ids))
    halts = halt_reasons(ids)
    steps: dict[int, list[Step]] = defaultdict(list)
    for s in Step.objects.filter(run_id__in=ids).order_by("run_id", "index"):
        steps[s.run_id].append(s)
    sources = {e.run_id: source_views(e.payload.items, runs[e.run_id].brief, released_texts(steps[e.run_id]))
               for e in RunEvent.objects.filter(run_id__in=[pk for pk, r in runs.items() if r.research],
                                                type=ev.EVIDENCE_COLLECTED).only("run_id", "type", "data")}
    progress_events = RunEvent.objects.filter(run_id__in=ids, type__in=PROGRESS_TYPES)
    latest_seq = progress_events.filter(run_id=OuterRef("run_id")).order_by("-seq").values("seq")[:1]
    latest = {e.run_id: e for e in progress_events.filter(seq=Subquery(latest_seq))}
    documents = document_versions(r for r in runs.values() if r.is_finished)
    tampered = chain.shown_tampered(runs, steps)
    return {run_id: _view(_RunRows(run=runs[run_id], last_seq=last_seqs.get(run_id) or 0, steps=steps[run_id],
                                   latest=latest.get(run_id), halts=halts[run_id], sources=sources.get(run_id, [])),
                          documents.get(run_id), run_id in tampered)
            for run_id in ids if run_id in runs}


def run_view(run_id: int) -> RunView:
    """The whole current state of a run, from the database (the snapshot): a live page reads it at
    its snapshot, at the recap and at the run's end, in a few small queries."""
    found = _read_run(run_id)
    run = found.run
    if run is None:
        raise Run.DoesNotExist(f"Run {run_id} does not exist")
    halts, sources = {}, []
    for e in found.marks:
        if e.type == ev.STEP_HALTED:
            halts[e.payload.step] = e.payload.reason
        elif run.research:
            sources = source_views(e.payload.items, run.brief, released_texts(found.steps))
    document = document_version(run) if run.is_finished else None
    return _view(_RunRows(run=run, last_seq=found.last_seq or 0, steps=found.steps, latest=found.latest, halts=halts,
                          sources=sources), document, bool(chain.shown_tampered({run.pk: run}, {run.pk: found.steps})))


class RunRead(NamedTuple):
    """What `run_view` reads of one run, in this order (the last seq first, as in `run_views`)."""

    last_seq: int | None
    #: with its workspace and `retried` (whether it was run again); None when there is no such run
    run: Run | None
    steps: list[Step]
    #: the step_halted and evidence_collected events, by seq (type and data at least)
    marks: list[RunEvent]
    #: the last event that moves the progress line (type and data at least)
    latest: RunEvent | None


def _read_run(run_id: int) -> RunRead:
    events = RunEvent.objects.filter(run_id=run_id)
    last = events.order_by("-seq").values_list("seq", flat=True).first()
    run = (Run.objects.select_related("workspace")
           .annotate(retried=Exists(Run.objects.filter(retry_of=OuterRef("pk")))).filter(pk=run_id).first())
    return RunRead(last, run, list(Step.objects.filter(run_id=run_id).order_by("index")),
                   list(events.filter(type__in=(ev.STEP_HALTED, ev.EVIDENCE_COLLECTED)).order_by("seq")
                        .only("run_id", "type", "data")),
                   events.filter(type__in=PROGRESS_TYPES).order_by("-seq").only("run_id", "seq", "type", "data").first())


def changed_steps(new) -> set[int]:
    """The steps whose card the events `new` change: released, halted, not released, or given
    their specifics (which may come in a batch after their release)."""
    return {e.payload.step for e in new
            if e.type in ev.STEP_TYPES or (e.type == ev.SPECIFICS_LISTED and e.data.get("step") is not None)}


def recap_changed(new) -> bool:
    return any(e.type in (ev.SUMMARY_READY, ev.SUMMARY_FAILED)
               or (e.type == ev.SPECIFICS_LISTED and e.data.get("step") is None) for e in new)


def tail_view(run: Run, new: list[RunEvent], all_steps: list[Step]) -> RunView:
    """What the frequent events change (the steps, the progress line), without rebuilding the whole
    run: from `run` (its live fields, as just read) and `all_steps` (the run's steps by index, as
    just read). The view's `steps` holds the steps those events changed: all of them when the
    brief has just planned them."""
    planned = any(e.type == ev.BRIEF_READY for e in new)
    changed = changed_steps(new)
    halts = {e.payload.step: e.payload.reason for e in new if e.type == ev.STEP_HALTED}
    steps = [step_view(s, halts, trust=run.verifier_trust) for s in all_steps if planned or s.index in changed]
    moved = [e for e in new if e.type in PROGRESS_TYPES]
    released = sum(1 for s in all_steps if s.status == Step.RELEASED)
    progress = progress_text(moved[-1], len(all_steps), released) if moved else ""
    return RunView(run=run, status=page_status(run.status), steps=steps, progress=progress, recap_html="",
                   warnings=[], last_seq=new[-1].seq)


def queued_view(run: Run) -> RunView:
    """The view of a run just created, before anything ran: no events, no steps (built without
    reading anything; the page's websocket snapshot brings whatever happened since)."""
    return RunView(run=run, status=page_status(run.status), steps=[], progress=progress_text(None, 0, 0),
                   recap_html="", warnings=[], last_seq=0, trust_text=trust_sentence(run.verifier_trust))
