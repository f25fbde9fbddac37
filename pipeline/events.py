"""The events a run emits, one small typed payload per event type.

The orchestrator builds them, the web app persists each one before it broadcasts it (its `data`
is the payload as plain JSON), and the pages and the audit trail read them back with `load`. A
field added to a payload is added here once, for all three.

`messages` (what a model call was given) travels beside the payload, not in it: the app stores
it content-addressed instead of copying it into the event log.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from pipeline.providers.base import Message


@dataclass(frozen=True, kw_only=True)
class Payload:
    TYPE: ClassVar[str]
    #: Fields left out of the stored data while they hold their default (`load` gives the default
    #: back): what only some runs have (a redo's links) adds nothing to every other run's record.
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()


def _event(type_: str):
    def register(cls):
        cls.TYPE = type_
        cls = dataclass(frozen=True, kw_only=True)(cls)
        PAYLOADS[type_] = cls
        return cls
    return register


PAYLOADS: dict[str, type[Payload]] = {}


@_event("run_requested")
class RunRequested(Payload):
    """Who asked for what: the first event of every run's record, written by the app (the core never
    emits it) from the run as it was created, so that `beyond_audit verify` can hold the run's
    columns, its conversation and its message to it."""

    task: str
    #: {"id", "username"} of the member who started it, the username as it was then; None for a
    #: run started by a command on the server.
    requested_by: dict | None
    conversation: int | None
    message: int | None
    message_text: str | None
    topology: dict
    offline: bool
    research: bool
    #: The run this one runs again ("Run again"), or None.
    retry_of: int | None = None
    #: The verifier's trust status when the run was created (the site's runs/trust.py); None on
    #: runs recorded before it was kept.
    verifier_trust: dict | None = None
    #: A redo (docs/working-loop.md, "Redo a step"): {"run", "step", "instruction"}, the earlier
    #: run, the step redone and the member's instruction to its executor ("" for none); None otherwise.
    redo_of: dict | None = None
    #: The completed run this one regenerates (the same task anew), or None.
    regenerates: int | None = None
    #: The run whose task this one's edited task replaces ("edit and resend"), or None.
    edited_from: int | None = None

    OPTIONAL = frozenset({"redo_of", "regenerates", "edited_from"})


@_event("run_started")
class RunStarted(Payload):
    topology: dict
    offline: bool
    #: Which process executed the run (the web app sets it; it stays on the record).
    runner: str | None = None
    #: The run's spending limits ({"max_tokens", "max_cost"}); None when it has none.
    budget: dict | None = None


@_event("planner_started")
class PlannerStarted(Payload):
    attempt: int


@_event("planner_rejected")
class PlannerRejected(Payload):
    attempt: int
    error: str
    raw: str | None = None


@_event("task_checked")
class TaskChecked(Payload):
    """Run-level warnings about the task itself (e.g. a framework it names that the workspace has
    not enabled), found before any model is asked."""

    warnings: list[str]


@_event("research_started")
class ResearchStarted(Payload):
    backend: str
    queries: list[str]
    query_source: str  # "model" or "task_reader"
    notes: list[str] = field(default_factory=list)


@_event("search_done")
class SearchDone(Payload):
    query: str
    results: int
    urls: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class _PageOutcome(Payload):
    id: str
    url: str
    final_url: str | None = None
    title: str = ""
    status: str = ""  # ok, failed or refused
    reason: str | None = None
    http_status: int | None = None
    bytes: int = 0
    elapsed_s: float = 0.0
    sha256: str | None = None
    fetched_at: str | None = None


@_event("page_fetched")
class PageFetched(_PageOutcome):
    """A page fetched (read, or failed with its reason)."""


@_event("page_refused")
class PageRefused(_PageOutcome):
    """A page the fetch policy refused (an address not allowed, robots.txt...)."""


@_event("research_done")
class ResearchDone(Payload):
    pages: int
    usable: int
    failed: int
    refused: int
    elapsed_s: float
    notes: list[str] = field(default_factory=list)


@_event("evidence_collected")
class EvidenceCollected(Payload):
    """Every evidence item of the research, read or not (without their text, which is stored by
    its sha256); the run trace's `evidence` and the Sources panel are read from here."""

    items: list[dict]


@_event("brief_ready")
class BriefReady(Payload):
    brief: dict


@_event("requirements_checked")
class RequirementsChecked(Payload):
    """The task's explicit asks against the brief's requirements, before any step
    (docs/verifier-contract.md, "The requirement trace"). `sent_back`: the brief left asks out and
    the planner is asked once more, naming them; otherwise `missing` are dropped."""

    asks: list[dict]
    missing: list[dict]
    #: {requirement id: [the words of each ask it carries]}.
    carried: dict = field(default_factory=dict)
    sent_back: bool = False


@_event("requirements_traced")
class RequirementsTraced(Payload):
    """Each requirement's status in the released text: [{"id", "text", "steps", "status", "detail"}],
    the coverage {"met", "total"}, and the line the card, the recap and the exports show when a
    requirement is not met (None when all are)."""

    requirements: list[dict]
    coverage: dict
    gaps: str | None = None


@_event("brief_checked")
class BriefChecked(Payload):
    """Run-level warnings about the brief (e.g. approved citations a catalogue contradicts)."""

    warnings: list[str]


@_event("step_rendering")
class StepRendering(Payload):
    step: int
    attempt: int
    total: int


@_event("attempt_drafted")
class AttemptDrafted(Payload):
    step: int
    attempt: int
    draft: str
    #: True: the output limit cut it off; None: nothing can tell (a gateway that masks cut streams).
    truncated: bool | None


@_event("step_verifying")
class StepVerifying(Payload):
    step: int
    attempt: int
    total: int


@_event("verdict_recorded")
class VerdictRecorded(Payload):
    step: int
    attempt: int
    source: str  # "model" or "mechanical"
    raw: str | None
    parsed: dict | None
    error: str | None


@_event("step_rerendering")
class StepRerendering(Payload):
    step: int
    issues: list[dict]


@_event("step_released")
class StepReleased(Payload):
    step: int
    title: str
    badge: str
    content: str
    warnings: list[str] = field(default_factory=list)
    #: Who inspected the released content: `model` (a language model as the blind verifier) or
    #: `mechanical` (a verifier that is not one, e.g. the offline engine's); None in events
    #: recorded before it was (runs/verification.py infers those).
    checked_by: str | None = None
    #: A redo's step carried over unchanged from the earlier run `carried_from`: released as it was
    #: there, with its badge and warnings from there, and not inspected again in this run.
    carried_over: bool = False
    carried_from: int | None = None

    OPTIONAL = frozenset({"carried_over", "carried_from"})


@_event("step_halted")
class StepHalted(Payload):
    step: int
    reason: str


@_event("step_not_released")
class StepNotReleased(Payload):
    step: int


@_event("summarizer_started")
class SummarizerStarted(Payload):
    attempt: int


@_event("summary_ready")
class SummaryReady(Payload):
    summary: str
    #: The mechanical checks' findings on the recap (issues as dicts); the page shows them beside it.
    findings: list[dict] = field(default_factory=list)


@_event("specifics_listed")
class SpecificsListed(Payload):
    """Advisory (docs/verifier-contract.md, "Unsourced specifics"): the specifics of a released
    step, or of the recap (`step` None), read against what the executor was given. It never holds
    a release back and never joins a verdict. `unsourced`: [{"text", "kind"}]; `sources`:
    [{"kind", "ref", "text", "specifics"}]; `error`: why the reading failed, when it did."""

    step: int | None
    unsourced: list[dict] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)
    error: str | None = None


@_event("summary_failed")
class SummaryFailed(Payload):
    error: str
    warning: str


@_event("model_call")
class ModelCall(Payload):
    role: str
    provider: str
    model: str
    #: The reasoning effort sent to the endpoint; None when its profile sends none.
    effort: str | None
    step: int | None = None
    attempt: int | None = None
    model_served: str | None = None
    latency_s: float = 0.0
    #: {"input", "cache_read", "cache_write", "output", "reasoning"}; None when not reported.
    usage: dict | None = None
    cost: float | None = None
    #: "reported" (the endpoint says it is the charge) or "estimated" (e.g. a gateway's figure).
    cost_source: str | None = None
    transport_retries: int = 0
    finish_reason: str | None = None
    error: str | None = None
    #: The sha256 of the stored messages the call was given (set by the app when it records them).
    context: str | None = None


@_event("run_completed")
class RunCompleted(Payload):
    pass


@_event("run_halted")
class RunHalted(Payload):
    #: The step the run halted at; None when no step was left to halt (a budget reached while
    #: planning, or during the recap after every step was released).
    step: int | None
    reason: str


@_event("run_failed")
class RunFailed(Payload):
    reason: str


@_event("run_cancelled")
class RunCancelled(Payload):
    """A member stopped the run: what was released stays, nothing more is."""

    reason: str


@_event("run_declined")
class RunDeclined(Payload):
    """The planner declined the task: nothing is released and the conversation's document stays."""

    reason: str


# The type names other code compares with.
RUN_STARTED, BRIEF_READY, BRIEF_CHECKED = RunStarted.TYPE, BriefReady.TYPE, BriefChecked.TYPE
TASK_CHECKED = TaskChecked.TYPE
PLANNER_STARTED, PLANNER_REJECTED = PlannerStarted.TYPE, PlannerRejected.TYPE
STEP_RENDERING, ATTEMPT_DRAFTED, STEP_VERIFYING = StepRendering.TYPE, AttemptDrafted.TYPE, StepVerifying.TYPE
VERDICT_RECORDED, STEP_RERENDERING = VerdictRecorded.TYPE, StepRerendering.TYPE
STEP_RELEASED, STEP_HALTED, STEP_NOT_RELEASED = StepReleased.TYPE, StepHalted.TYPE, StepNotReleased.TYPE
SUMMARIZER_STARTED, SUMMARY_READY, SUMMARY_FAILED = SummarizerStarted.TYPE, SummaryReady.TYPE, SummaryFailed.TYPE
MODEL_CALL = ModelCall.TYPE
RESEARCH_STARTED, SEARCH_DONE, RESEARCH_DONE = ResearchStarted.TYPE, SearchDone.TYPE, ResearchDone.TYPE
PAGE_FETCHED, PAGE_REFUSED, EVIDENCE_COLLECTED = PageFetched.TYPE, PageRefused.TYPE, EvidenceCollected.TYPE
RUN_COMPLETED, RUN_HALTED, RUN_FAILED = RunCompleted.TYPE, RunHalted.TYPE, RunFailed.TYPE
RUN_CANCELLED, RUN_DECLINED = RunCancelled.TYPE, RunDeclined.TYPE
SPECIFICS_LISTED = SpecificsListed.TYPE
RUN_REQUESTED = RunRequested.TYPE
REQUIREMENTS_CHECKED, REQUIREMENTS_TRACED = RequirementsChecked.TYPE, RequirementsTraced.TYPE

FINAL_TYPES = frozenset({RUN_COMPLETED, RUN_HALTED, RUN_FAILED, RUN_CANCELLED, RUN_DECLINED})
STEP_TYPES = frozenset({STEP_RELEASED, STEP_HALTED, STEP_NOT_RELEASED})


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def fields_of(payload: Payload) -> dict[str, Any]:
    """The payload's fields and their values, the values themselves (not copies): what `asdict`
    gives for these flat payloads of plain JSON, without its deep copy of every value."""
    cls = type(payload)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    data = {name: getattr(payload, name) for name in names}
    for name in cls.OPTIONAL:
        if not data[name]:  # their defaults are all falsy (False, None)
            del data[name]
    return data


def load(type_: str, data: dict[str, Any]) -> Payload:
    """A stored event's payload, typed again; keys the payload does not know are ignored (a field
    added later, or the app's own additions), missing ones take their defaults."""
    cls = PAYLOADS[type_]
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class Event:
    payload: Payload
    messages: tuple[Message, ...] | None = None
    #: Texts the event refers to by sha256 (evidence pages), stored content-addressed by the app.
    texts: dict[str, str] | None = None

    @property
    def type(self) -> str:
        return self.payload.TYPE

    @property
    def data(self) -> dict:
        """The payload as plain JSON, as it is stored."""
        data = asdict(self.payload)
        for name in self.payload.OPTIONAL:
            if not data[name]:
                del data[name]
        return data

    @property
    def is_final(self) -> bool:
        return self.type in FINAL_TYPES


async def batches(queue: asyncio.Queue[Event | None], limit: int = 200) -> AsyncIterator[list[Event]]:
    """A run's events from `queue` (None ends them), grouped: a batch is the next event and those
    already waiting behind it (`limit` at most). A consumer slower than the run (a database writing
    each batch in one transaction) then catches up in a few writes instead of falling behind one
    event at a time; a fast consumer gets small batches, so nothing waits for a batch.

    Once nothing is waiting, the batch waits one turn of the event loop for more: what happens at
    once often comes a turn apart (the steps a brief starts begin rendering on the next turn; a
    finished step's release comes from the task that awaited it), and a write, a doorbell and a
    page's read are then made once for the burst instead of twice."""
    finished = False
    while not finished:
        batch: list[Event] = []
        event = await queue.get()
        while event is not None:
            batch.append(event)
            if len(batch) >= limit:
                break
            if queue.empty():
                await asyncio.sleep(0)
                if queue.empty():
                    break
            event = queue.get_nowait()
        finished = event is None
        if batch:
            yield batch
