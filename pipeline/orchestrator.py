"""The release state machine (docs/verifier-contract.md), as an async generator of events.

Steps render and verify concurrently (they depend only on the brief); release is strictly in
document order, and the outcome is the one the steps would have had run one by one. The rule that
matters most: a step is released only after a parseable verdict was recorded for exactly the
content released. Every path that cannot reach such a verdict (verifier errors twice, executor
error, a crash in our own code) halts instead.

Two more rules say no more than what happened. A pass is `passed` only when the verifier's
provider declares that a language model reads its requests; a verifier that is not one (the
offline engine's) gives `checked`. And a brief that declines the task ends the run `declined`:
nothing is rendered, nothing released, no recap.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing

from pipeline import badges, events as ev
from pipeline.calls import BudgetExceeded, ModelCalls
from pipeline.checks import MechanicalChecks
from pipeline.context import Context
from pipeline.events import Event, batches
from pipeline.inspection import StepHalt, StepInspector
from pipeline.planning import Planning
from pipeline.providers.base import Provider, declared
from pipeline.requirements import (DECLINED, Ask, BriefCheck, check_brief, coverage, coverage_line,
                                   instruction_requirement, read_asks, trace, unplanned_trace)
from pipeline.run_terms import CarriedStep, Redo, Research, RunSettings, StepOutcome
from pipeline.schemas import Brief, Requirement
from pipeline.specifics import RunListing, SpecificsReader
from pipeline.task_check import task_framework_warnings, unread_file_warnings
from pipeline.topology import Topology

# The run's terms are imported from here by the callers that make a run.
__all__ = ["Orchestrator", "BudgetExceeded", "CarriedStep", "Redo", "Research", "RunSettings", "StepHalt",
           "StepOutcome"]

log = logging.getLogger("beyond.pipeline")


class Orchestrator:
    """Runs one task: planner, then executors and the blind verifier per step, then the summarizer.
    A redo is the same release loop serving another plan: the earlier brief, one step to inspect,
    the others carried over as the earlier run released them."""

    def __init__(self, ctx: Context, topology: Topology, providers: Mapping[str, Provider], *,
                 settings: RunSettings = RunSettings(), checks: MechanicalChecks | None = None):
        self.ctx = ctx
        self.topology = topology
        self.providers = providers
        self.settings = settings
        self.checks = checks or MechanicalChecks()
        self.brief: Brief | None = None
        self.calls = ModelCalls(topology, providers, budget=settings.budget, call_timeout_s=settings.call_timeout_s,
                                emit=self._emit, halt_all=self._halt_all)
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._step_tasks: dict[int, asyncio.Task] = {}
        self._driver: asyncio.Task | None = None
        self._stop_reason: str | None = None
        # Declared by the provider, never guessed from a model's name; a provider that does not
        # say is not taken for a model (a pass it gives is shown for no more than it is).
        self._checked_by = (badges.BY_MODEL if declared(providers["verifier"], "language_model")
                            else badges.MECHANICAL)
        self._inspector: StepInspector | None = None
        self._listing = RunListing(SpecificsReader(self.checks.packs) if settings.list_specifics else None, self._emit)
        #: What each released step released, in this run (carried over or inspected): the steps
        #: released so far, and what the recap sums up.
        self._outcomes: dict[int, StepOutcome] = {}
        # The requirement trace (pipeline/requirements): the task's asks, read before any model
        # is asked; the brief's check against them; a redo instruction's own requirement.
        self._asks = read_asks(ctx.task)
        self._check: BriefCheck | None = None
        self._extra_requirements: list[tuple[Requirement, list[Ask]]] = []

    # -- the public face -------------------------------------------------------------------------
    async def events(self) -> AsyncIterator[Event]:
        """Yield every event of the run, the last one being run_completed, run_halted, run_failed,
        run_cancelled or run_declined."""
        async with aclosing(self.event_batches(limit=1)) as batches:
            async for batch in batches:
                for event in batch:
                    yield event

    async def event_batches(self, limit: int = 200) -> AsyncIterator[list[Event]]:
        """The same events as `events()`, grouped as `events.batches` groups them."""
        self._driver = driver = asyncio.create_task(self._drive())
        try:
            async for batch in batches(self._queue, limit):
                yield batch
            await driver  # surfaces a bug in _drive rather than hiding it
        finally:
            if not driver.done():
                driver.cancel()
                await asyncio.gather(driver, return_exceptions=True)

    def stop(self, reason: str) -> None:
        """Stop the run where it is: nothing more is released, the model calls in flight are
        cancelled (and recorded as such), and the run ends with run_cancelled. A run that has
        already ended, or that is halting over its budget, is left as it is."""
        if self._stop_reason is not None or self.calls.budget_reason is not None or self._driver is None \
                or self._driver.done():
            return
        self._stop_reason = reason
        # Every step at once, before any of them can hand its concurrency slot to a waiting one.
        self._cancel_steps_after(0)
        self._driver.cancel()

    def _emit(self, payload: ev.Payload, messages=None, texts=None) -> None:
        self._queue.put_nowait(Event(payload, messages, texts))

    def _planning(self) -> Planning:
        return Planning(self.ctx, self.topology, self.calls, self.checks, self._emit, self._asks,
                        self.settings.session_id)

    async def _drive(self) -> None:
        try:
            await self._run()
        except BudgetExceeded:  # a call the driver made itself (planner, research, summarizer)
            await self._halt_over_budget()
        except asyncio.CancelledError:
            if self._stop_reason is None and self.calls.budget_reason is None:
                raise
            # Our own stop, or a step's call over budget: the cancellation is handled here, so
            # later awaits run normally.
            asyncio.current_task().uncancel()
            if self._stop_reason is None:
                await self._halt_over_budget()
                return
            await self._settle_steps()
            for step in self.brief.steps if self.brief else ():
                if step.index not in self._outcomes:
                    self._emit(ev.StepNotReleased(step=step.index))
            self._emit(ev.RunCancelled(reason=self._stop_reason))
        except Exception as exc:  # a bug of ours must fail the run loudly, never release anything
            log.exception("run crashed")
            await self._settle_steps()  # the failure must be the run's last word
            self._emit(ev.RunFailed(reason=f"internal error: {type(exc).__name__}"))
        finally:
            await self._settle_steps()
            self._queue.put_nowait(None)

    async def _run(self) -> None:
        budget = self.settings.budget
        self._emit(ev.RunStarted(topology=self.topology.as_json(),
                                 offline=any(declared(p, "offline") for p in self.providers.values()),
                                 budget=budget.as_json() if budget.limited else None))
        task_warnings = task_framework_warnings(self.ctx) + unread_file_warnings(self.ctx)
        if task_warnings:
            self._emit(ev.TaskChecked(warnings=task_warnings))
        if self.settings.redo is not None:
            released = await self._redo(self.settings.redo)
        else:
            if self.settings.research is not None:
                self.ctx, self.checks = await self._planning().research(self.settings.research)
            self.brief, self._check = await self._planning().plan()
            if self.brief is None:
                return
            if self.brief.declined:
                # The planner cannot do this task faithfully: it says so rather than write
                # another document. Nothing is rendered, and nothing is summed up.
                self._emit(unplanned_trace(self._asks, DECLINED, self.brief.decline_reason))
                self._emit(ev.RunDeclined(reason=self.brief.decline_reason))
                return
            released = await self._release_in_order(self.brief)
        if released:
            await self._summarize(self.brief, self._trace_requirements(self.brief))
            self._emit(ev.RunCompleted())

    async def _settle_steps(self, after: int = 0) -> None:
        """Cancel the step tasks after step `after` and wait until they have stopped."""
        await asyncio.gather(*self._cancel_steps_after(after), return_exceptions=True)

    # -- the budget ------------------------------------------------------------------------------
    def _halt_all(self, reason: str) -> bool:
        """Every step and the driver stopped for the budget (see ModelCalls.over_budget); False
        when the run was already stopping."""
        if self._stop_reason is not None:
            return False
        current = asyncio.current_task()
        for task in self._step_tasks.values():
            if task is not current:
                task.cancel()
        if self._driver is not None and self._driver is not current:
            self._driver.cancel()
        return True

    async def _halt_over_budget(self) -> None:
        await self._settle_steps()
        # Steps whose inspection had ended before the budget ran out are released in order, as
        # a step halt lets the steps before it be released; none of them needs another call.
        for step in self.brief.steps if self.brief else ():
            task = self._step_tasks.get(step.index)
            if step.index in self._outcomes:
                continue
            if task is None or not task.done() or task.cancelled() or task.exception() or task.result().halted:
                break
            await self._release(step, task.result())
        reason = self.calls.budget_reason or "budget: reached"
        unreleased = [s.index for s in self.brief.steps if s.index not in self._outcomes] if self.brief else []
        if unreleased:
            self._emit(ev.StepHalted(step=unreleased[0], reason=reason))
            for later in unreleased[1:]:
                self._emit(ev.StepNotReleased(step=later))
        if self.brief is not None:
            self._trace_requirements(self.brief)
        self._emit(ev.RunHalted(step=unreleased[0] if unreleased else None, reason=reason))

    def _trace_requirements(self, brief: Brief) -> str | None:
        """Each requirement's status in what this run released, as an event; the gaps' line, or
        None when every requirement is met."""
        if self._check is None:
            return None
        released = {i: (brief.step(i).title, o.content or "") for i, o in self._outcomes.items() if o.content}
        traced = trace(brief, self._check, released, extra=self._extra_requirements)
        gaps = coverage_line(traced)
        self._emit(ev.RequirementsTraced(requirements=[t.as_json() for t in traced], coverage=coverage(traced),
                                         gaps=gaps))
        return gaps

    # -- steps -----------------------------------------------------------------------------------
    def _start_steps(self, brief: Brief, indexes: list[int], concurrency: int) -> None:
        """Start rendering and inspecting these steps at once (`concurrency` at a time)."""
        self._inspector = StepInspector(
            self.ctx, self.topology, self.calls, self.checks, self._emit, self._checked_by, self.settings.session_id,
            (self.settings.redo.step, self.settings.redo.instruction) if self.settings.redo else None)
        self._listing.index(self.ctx, brief)
        semaphore = asyncio.Semaphore(max(1, concurrency))
        for index in indexes:
            self._step_tasks[index] = asyncio.create_task(self._step(index, semaphore))

    async def _release_in_order(self, brief: Brief, carried: Redo | None = None) -> bool:
        """Release every step in document order: an inspected one once its inspection ends, a
        carried one as the earlier run released it. False when the run halted there."""
        if not self._step_tasks:
            self._start_steps(brief, [step.index for step in brief.steps], self.settings.concurrency)
        for step in brief.steps:
            if step.index not in self._step_tasks:
                if not await self._carry(brief, step, carried):
                    return False
                continue
            outcome: StepOutcome = await self._step_tasks[step.index]
            if outcome.halted:
                await self._halt_from(brief, outcome)
                return False
            await self._release(step, outcome)
        return True

    async def _redo(self, redo: Redo) -> bool:
        """A redo's plan: the earlier brief, the redone step rendered and inspected under the usual
        rules (it starts at once), the others carried over as the earlier run released them and not
        inspected again (a step it did not release cannot be: the redo halts there). A redo whose
        instruction changed nothing is declined: the same text is no new version. False when the
        run halted or was declined."""
        self.brief = brief = Brief.model_validate(redo.brief)
        self._emit(ev.BriefReady(brief=brief.model_dump(mode="json")))
        # The earlier brief's requirements, held to the task as the first run read it, and the
        # instruction's own asks as one more requirement of the redone step.
        self._check = check_brief(self.ctx.task, brief, asks=self._asks)
        self._extra_requirements = instruction_requirement(brief, self._check, redo.instruction, redo.step)
        self._start_steps(brief, [redo.step], 1)
        outcome: StepOutcome = await self._step_tasks[redo.step]
        earlier = redo.carried.get(redo.step)
        if redo.instruction and not outcome.halted and earlier is not None and \
                " ".join((earlier.content or "").split()) == " ".join((outcome.content or "").split()):
            self._emit(ev.RunDeclined(reason=(
                f"The instruction was not applied: step {redo.step} came back word for word as it was, so there is "
                "no new version to release. The engine that drafted it cannot make this change; run the redo with "
                "a language model (Settings), or edit the exported document by hand. The document is unchanged.")))
            return False
        return await self._release_in_order(brief, carried=redo)

    async def _carry(self, brief: Brief, step, redo: Redo) -> bool:
        carried = redo.carried.get(step.index)
        if carried is None or carried.content is None:
            await self._halt_from(brief, StepOutcome(step.index, halt_reason=(
                f"run {redo.run} did not release this step, so the redo has nothing to carry over; "
                "run the task again instead")))
            return False
        for payload in carried.released(step.title, redo.run):
            self._emit(payload)
        self._outcomes[step.index] = StepOutcome(step.index, carried.badge, carried.content, list(carried.warnings))
        return True

    async def _release(self, step, outcome: StepOutcome) -> None:
        self._emit(ev.StepReleased(step=outcome.index, title=step.title, badge=outcome.badge,
                                   content=outcome.content, warnings=outcome.warnings, checked_by=self._checked_by))
        self._outcomes[outcome.index] = outcome
        await self._listing.read(outcome.index, outcome.content, self._inspector.given.get(outcome.index), self.brief)

    async def _halt_from(self, brief: Brief, outcome: StepOutcome) -> None:
        # Later steps may still be mid-call: stop them and let them settle first, so that the
        # halt is the last word of the run and nothing of theirs is recorded after it.
        await self._settle_steps(after=outcome.index)
        self._emit(ev.StepHalted(step=outcome.index, reason=outcome.halt_reason))
        for later in brief.steps[outcome.index:]:
            self._emit(ev.StepNotReleased(step=later.index))
        self._trace_requirements(brief)
        self._emit(ev.RunHalted(step=outcome.index, reason=f"step {outcome.index}: {outcome.halt_reason}"))

    def _cancel_steps_after(self, index: int) -> list[asyncio.Task]:
        # Whatever their verdicts, later steps can no longer be released: stop paying for them.
        tasks = [task for later, task in self._step_tasks.items() if later > index]
        for task in tasks:
            task.cancel()
        return tasks

    async def _step(self, index: int, semaphore: asyncio.Semaphore) -> StepOutcome:
        try:
            async with semaphore:
                return await self._inspector.inspect(self.brief, index)
        except StepHalt as halt:
            self._cancel_steps_after(index)
            return StepOutcome(index, halt_reason=str(halt))
        except BudgetExceeded as over:  # the run as a whole halts; the driver was told already
            return StepOutcome(index, halt_reason=str(over))
        except Exception as exc:
            log.exception("step %s crashed", index)
            self._cancel_steps_after(index)
            return StepOutcome(index, halt_reason=f"internal error ({type(exc).__name__})")

    # -- summarizer ------------------------------------------------------------------------------
    async def _summarize(self, brief: Brief, gaps: str | None = None) -> None:
        """The recap of what this run released; its specifics are read against the executors' own
        sources, so a fact a step invented stays unsourced when the recap repeats it."""
        released = [{"index": o.index, "title": brief.step(o.index).title, "badge": o.badge, "content": o.content}
                    for _, o in sorted(self._outcomes.items())]
        text = await self._planning().recap(brief, released, gaps)
        if text is not None:
            await self._listing.read(None, text, self.ctx, brief)
