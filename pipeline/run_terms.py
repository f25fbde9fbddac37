"""The terms of one run, as plain data: its settings, the web research it does first, a redo's
earlier run, and what a step's inspection released (docs/verifier-contract.md)."""
from __future__ import annotations

from dataclasses import dataclass, field

from pipeline import events as ev
from pipeline.budget import Budget
from pipeline.research import FetchPolicy, SearchBackend


@dataclass(frozen=True)
class Research:
    """Web research before the brief: where to search, and the policy every fetch obeys."""

    backend: SearchBackend
    fetch_policy: FetchPolicy


@dataclass(frozen=True)
class CarriedStep:
    """One step of the earlier run as it was released there (a redo carries it over unchanged).
    `content` None: the earlier run did not release it, and a redo cannot carry it."""

    index: int
    title: str
    badge: str | None
    content: str | None
    warnings: list[str] = field(default_factory=list)
    checked_by: str | None = None
    #: Its unsourced specifics and their sources as read in the earlier run (None: not read).
    unsourced: list[dict] | None = None
    sources: list[dict] | None = None

    def released(self, title: str, run: int) -> list[ev.Payload]:
        """Its release in the redo of run `run`, flagged as carried over, with its specifics as the
        earlier run read them (nothing is read again)."""
        payloads: list[ev.Payload] = [ev.StepReleased(
            step=self.index, title=title, badge=self.badge, content=self.content, warnings=list(self.warnings),
            checked_by=self.checked_by, carried_over=True, carried_from=run)]
        if self.unsourced is not None:
            payloads.append(ev.SpecificsListed(step=self.index, unsourced=list(self.unsourced),
                                               sources=list(self.sources or [])))
        return payloads


@dataclass(frozen=True)
class Redo:
    """Redo one released step of a finished run (docs/working-loop.md): the earlier run's brief,
    its steps (plain data), the step to render and inspect anew, and the member's instruction to
    that step's executor (never shown to the verifier)."""

    run: int
    step: int
    brief: dict
    carried: dict[int, CarriedStep]
    instruction: str = ""


@dataclass(frozen=True)
class RunSettings:
    #: Steps rendered and verified at once within one run.
    concurrency: int = 8
    #: A last guard, above the providers' own timeouts and transport retries (an HTTP attempt may
    #: take 15 minutes, and it may be tried four times): a call that hangs longer is a timeout.
    call_timeout_s: float = 7200.0
    session_id: str | None = None
    #: Web research before the brief; None for a run without it (the integrity gate then does not run).
    research: Research | None = None
    #: Tokens and cost the run may spend (pipeline/budget.py); reaching a limit halts the run.
    budget: Budget = Budget()
    #: Read each released step and the recap for unsourced specifics (pipeline/specifics):
    #: advisory events after the release; nothing any model is sent changes.
    list_specifics: bool = True
    #: A redo instead of a plan: the brief is the earlier run's, one step is rendered, the others
    #: are carried over (`Redo`); None for every other run.
    redo: Redo | None = None


@dataclass
class StepOutcome:
    index: int
    badge: str | None = None
    content: str | None = None
    warnings: list[str] = field(default_factory=list)
    halt_reason: str | None = None

    @property
    def halted(self) -> bool:
        return self.halt_reason is not None
