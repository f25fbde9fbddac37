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
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field

from pipeline import badges, events as ev
from pipeline.budget import Budget, Spending, token_bound
from pipeline.checks import MechanicalChecks, cut_issue, empty_draft_issue
from pipeline.context import Context
from pipeline.events import Event
from pipeline.parsing import ReplyError, parse_brief, parse_verdict
from pipeline.providers.base import Completion, CompletionRequest, PermanentError, Provider, ProviderError
from pipeline.requests import (build_executor_request, build_planner_request, build_summarizer_request,
                               build_verifier_request, planner_placeholders, verifier_placeholders)
from pipeline.requirements import (DECLINED, DELIVERABLE, DOCUMENT, UNMET, Ask, BriefCheck, check_brief, coverage,
                                   coverage_line, read_asks, send_back_note, trace, unplanned_trace)
from pipeline.research import FetchPolicy, SearchBackend, run_research
from pipeline.schemas import Brief, Issue, Requirement
from pipeline.specifics import SpecificsReader
from pipeline.task_check import task_framework_warnings, unread_file_warnings
from pipeline.topology import Topology

log = logging.getLogger("beyond.pipeline")


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


class StepHalt(Exception):
    """This step cannot be released; the message is the halt reason."""


class BudgetExceeded(Exception):
    """The run reached its budget: it halts as a whole; the message is the reason ("budget: ...")."""


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


class Orchestrator:
    """Runs one task: planner, then executors and the blind verifier per step, then the summarizer."""

    def __init__(self, ctx: Context, topology: Topology, providers: Mapping[str, Provider], *,
                 settings: RunSettings = RunSettings(), checks: MechanicalChecks | None = None):
        self.ctx = ctx
        self.topology = topology
        self.providers = providers
        self.settings = settings
        self.checks = checks or MechanicalChecks()
        self.brief: Brief | None = None
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._step_tasks: dict[int, asyncio.Task] = {}
        self._driver: asyncio.Task | None = None
        self._released_steps: set[int] = set()
        self._stop_reason: str | None = None
        self._spending = Spending(settings.budget)
        self._budget_reason: str | None = None
        # Declared by the provider, never guessed from a model's name; a provider that does not
        # say is not taken for a model (a pass it gives is shown for no more than it is).
        self._checked_by = (badges.BY_MODEL if getattr(providers["verifier"], "language_model", False)
                            else badges.MECHANICAL)
        self._specifics = SpecificsReader(self.checks.packs) if settings.list_specifics else None
        #: The context each step's last executor call was given: its released draft's sources.
        self._given: dict[int, Context] = {}
        self._sources_indexed: asyncio.Future | None = None
        #: What each released step released, in this run (carried over or inspected), for the recap.
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
        """The same events as `events()`, grouped: a batch is the next event and those already
        waiting behind it (`limit` at most). A consumer slower than the run (a database writing
        each batch in one transaction) then catches up in a few writes instead of falling behind
        one event at a time; a fast consumer gets small batches, so nothing waits for a batch.

        Once nothing is waiting, the batch waits one turn of the event loop for more: what
        happens at once often comes a turn apart (the steps a brief starts begin rendering on the
        next turn; a finished step's release comes from the task that awaited it), and a write,
        a doorbell and a page's read are then made once for the burst instead of twice."""
        self._driver = driver = asyncio.create_task(self._drive())
        try:
            finished = False
            while not finished:
                batch: list[Event] = []
                event = await self._queue.get()
                while event is not None:
                    batch.append(event)
                    if len(batch) >= limit:
                        break
                    if self._queue.empty():
                        await asyncio.sleep(0)
                        if self._queue.empty():
                            break
                    event = self._queue.get_nowait()
                finished = event is None
                if batch:
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
        if self._stop_reason is not None or self._budget_reason is not None or self._driver is None \
                or self._driver.done():
            return
        self._stop_reason = reason
        # Every step at once, before any of them can hand its concurrency slot to a waiting one.
        self._cancel_steps_after(0)
        self._driver.cancel()

    def _emit(self, payload: ev.Payload, messages=None, texts=None) -> None:
        self._queue.put_nowait(Event(payload, messages, texts))

    async def _drive(self) -> None:
        try:
            budget = self.settings.budget
            self._emit(ev.RunStarted(topology=self.topology.as_json(),
                                     offline=any(getattr(p, "offline", False) for p in self.providers.values()),
                                     budget=budget.as_json() if budget.limited else None))
            task_warnings = task_framework_warnings(self.ctx) + unread_file_warnings(self.ctx)
            if task_warnings:
                self._emit(ev.TaskChecked(warnings=task_warnings))
            if self.settings.redo is not None:
                if await self._redo(self.settings.redo):
                    await self._summarize(self.brief, self._trace_requirements(self.brief))
                    self._emit(ev.RunCompleted())
                return
            if self.settings.research is not None:
                await self._research(self.settings.research)
            self.brief = await self._plan()
            if self.brief is None:
                return
            if self.brief.declined:
                # The planner cannot do this task faithfully: it says so rather than write
                # another document. Nothing is rendered, and nothing is summed up.
                self._emit(unplanned_trace(self._asks, DECLINED, self.brief.decline_reason))
                self._emit(ev.RunDeclined(reason=self.brief.decline_reason))
                return
            if await self._render_and_release(self.brief):
                await self._summarize(self.brief, self._trace_requirements(self.brief))
                self._emit(ev.RunCompleted())
        except BudgetExceeded:  # a call the driver made itself (planner, research, summarizer)
            await self._halt_over_budget()
        except asyncio.CancelledError:
            if self._stop_reason is None and self._budget_reason is None:
                raise
            # Our own stop, or a step's call over budget: the cancellation is handled here, so
            # later awaits run normally.
            asyncio.current_task().uncancel()
            if self._stop_reason is None:
                await self._halt_over_budget()
                return
            await self._settle_steps()
            for step in self.brief.steps if self.brief else ():
                if step.index not in self._released_steps:
                    self._emit(ev.StepNotReleased(step=step.index))
            self._emit(ev.RunCancelled(reason=self._stop_reason))
        except Exception as exc:  # a bug of ours must fail the run loudly, never release anything
            log.exception("run crashed")
            await self._settle_steps()  # the failure must be the run's last word
            self._emit(ev.RunFailed(reason=f"internal error: {type(exc).__name__}"))
        finally:
            await self._settle_steps()
            self._queue.put_nowait(None)

    async def _settle_steps(self, after: int = 0) -> None:
        """Cancel the step tasks after step `after` and wait until they have stopped."""
        await asyncio.gather(*self._cancel_steps_after(after), return_exceptions=True)

    # -- the budget ------------------------------------------------------------------------------
    def _over_budget(self, reason: str) -> BudgetExceeded:
        """Halt the whole run over its budget: like a stop, every step is cancelled at once (their
        calls in flight are recorded as cancelled), and nothing that was not yet released will
        be. The caller raises the result in its own task."""
        if self._budget_reason is None and self._stop_reason is None:
            self._budget_reason = reason
            current = asyncio.current_task()
            for task in self._step_tasks.values():
                if task is not current:
                    task.cancel()
            if self._driver is not None and self._driver is not current:
                self._driver.cancel()
        return BudgetExceeded(self._budget_reason or reason)

    async def _halt_over_budget(self) -> None:
        await self._settle_steps()
        # Steps whose inspection had ended before the budget ran out are released in order, as
        # a step halt lets the steps before it be released; none of them needs another call.
        for step in self.brief.steps if self.brief else ():
            task = self._step_tasks.get(step.index)
            if step.index in self._released_steps:
                continue
            if task is None or not task.done() or task.cancelled() or task.exception() or task.result().halted:
                break
            await self._release(step, task.result())
        reason = self._budget_reason or "budget: reached"
        unreleased = [s.index for s in self.brief.steps if s.index not in self._released_steps] if self.brief else []
        if unreleased:
            self._emit(ev.StepHalted(step=unreleased[0], reason=reason))
            for later in unreleased[1:]:
                self._emit(ev.StepNotReleased(step=later))
        if self.brief is not None:
            self._trace_requirements(self.brief)
        self._emit(ev.RunHalted(step=unreleased[0] if unreleased else None, reason=reason))

    # -- model calls -----------------------------------------------------------------------------
    async def _call(self, request: CompletionRequest) -> Completion:
        """One model call, recorded as a model_call event whatever its outcome, reserved against the
        run's budget before it starts and settled after (pipeline/budget.py); BudgetExceeded instead
        of a call that may not start or of a reply that went over."""
        cfg = self.topology.role(request.role)
        provider = self.providers[request.role]
        free = getattr(provider, "offline", False)
        what = f"{_a(request.role)} call ({cfg.provider} {cfg.model})"
        refused = self._budget_reason or self._spending.before_call()
        if refused:
            raise self._over_budget(refused)
        reservation = None
        if not free:  # may wait for the calls in flight to leave room under the budget
            reservation = await self._spending.reserve(what, f"{cfg.provider} {cfg.model}",
                                                       token_bound(request, request.max_tokens or cfg.max_tokens))
            if isinstance(reservation, str):
                raise self._over_budget(reservation)
        started = time.monotonic()
        completion: Completion | None = None
        error: ProviderError | None = None
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
            # that arrives as the call completes, and a cancelled step would go on paying.
            async with asyncio.timeout(self.settings.call_timeout_s):
                completion = await provider.complete(request)
        except TimeoutError:
            error = ProviderError("timeout", f"no reply within {self.settings.call_timeout_s:g} s")
        except asyncio.CancelledError:
            # A later step stopped by a halt: the call still happened, may have been paid for, and
            # the record says so.
            self._spending.settle(reservation, None, cancelled=True, free=free)
            counted = (f" (counted against the run's budget as {reservation.describe()})"
                       if reservation is not None and self.settings.budget.limited else "")
            self._emit_call(request, cfg, started, None,
                            ProviderError("cancelled", f"the run no longer needs this call{counted}"))
            raise
        except ProviderError as exc:
            error = exc
        except Exception as exc:  # a provider bug is that call's crash, not the run's
            log.exception("provider %s crashed", cfg.provider)
            error = ProviderError("crash", f"the provider failed unexpectedly ({type(exc).__name__})")
        self._emit_call(request, cfg, started, completion, error)
        over = self._spending.settle(reservation, completion, free=free)
        if over:
            raise self._over_budget(over)
        if error:
            raise error
        return completion

    def _emit_call(self, request: CompletionRequest, cfg, started: float, completion: Completion | None,
                   error: ProviderError | None) -> None:
        usage = completion.usage if completion else None  # None: not reported, which is not zero
        self._emit(ev.ModelCall(
            role=request.role, step=request.step_index, attempt=request.attempt,
            provider=cfg.provider, model=cfg.model, effort=_effort_sent(self.providers[request.role], request),
            model_served=completion.model_served if completion else None,
            latency_s=round(completion.latency_s if completion and completion.latency_s else time.monotonic() - started, 4),
            usage={"input": usage.input, "cache_read": usage.cache_read, "cache_write": usage.cache_write,
                   "output": usage.output, "reasoning": usage.reasoning} if usage else None,
            cost=completion.cost if completion else None,
            cost_source=completion.cost_source if completion else None,
            transport_retries=(completion or error).transport_retries,
            finish_reason=completion.finish_reason if completion else None,
            error=str(error) if error else None,
        ), messages=request.messages)

    # -- research --------------------------------------------------------------------------------
    async def _research(self, research: Research) -> None:
        """Search, fetch and read pages before the brief; every page becomes an evidence item (read
        or not, with its reason), the planner and executors see the readable ones, and the
        integrity gate holds the drafts to the ones the brief approves."""
        planner = self.providers["planner"]
        result = await run_research(self.ctx, backend=research.backend, fetch_policy=research.fetch_policy,
                                    query_provider=_RecordedCalls(self, planner), role_cfg=self.topology.planner,
                                    on_event=self._emit_research)
        texts = {item.sha256: item.text for item in result.items if item.usable}
        self._emit(ev.EvidenceCollected(items=[item.as_json(with_text=False) for item in result.items]),
                   texts=texts)
        self.ctx = dataclasses.replace(self.ctx, evidence=result.for_context())
        self.checks = self.checks.with_evidence(result.items)

    def _emit_research(self, event: dict) -> None:
        data = dict(event)
        self._emit(ev.load(data.pop("type"), data))

    # -- planner ---------------------------------------------------------------------------------
    async def _plan(self) -> Brief | None:
        """The brief, held to the task (docs/verifier-contract.md, "The requirement trace"): a brief
        whose requirements leave out an explicit ask of the task is sent back once, naming what is
        missing; what is still missing then is recorded dropped. None when the run failed."""
        brief, reply, attempt, error = await self._ask_planner(attempts=(1, 2))
        if brief is None:
            tries = "one attempt" if attempt == 1 else "two attempts"
            self._emit(unplanned_trace(self._asks, UNMET, "no brief was written, so nothing was drafted"))
            self._emit(ev.RunFailed(reason=f"the planner gave no valid brief in {tries}; last error: {error}"))
            return None
        if not brief.declined:
            check = check_brief(self.ctx.task, brief, asks=self._asks)
            if check.missing:
                self._emit(ev.RequirementsChecked(**check.as_json(), sent_back=True))
                again, *_ = await self._ask_planner(attempts=(attempt + 1,),
                                                    rejected=(reply, send_back_note(check.missing)))
                if again is not None and not again.declined:
                    brief, check = again, check_brief(self.ctx.task, again, asks=self._asks)
            self._check = check
            self._emit(ev.RequirementsChecked(**check.as_json()))
        self._emit(ev.BriefReady(brief=brief.model_dump(mode="json")))
        warnings = [] if brief.declined else self.checks.brief_warnings(brief)
        if warnings:
            self._emit(ev.BriefChecked(warnings=warnings))
        return brief

    async def _ask_planner(self, attempts: tuple[int, ...], rejected: tuple[str | None, str] | None = None):
        """(brief, its reply, the attempt, None) for the first usable reply over `attempts`, or (None,
        None, the last attempt, its error). After an unusable reply the planner is told why; after a
        transport error the same request is sent again."""
        cfg, error = self.topology.planner, "no attempt"
        for attempt in attempts:
            self._emit(ev.PlannerStarted(attempt=attempt))
            request = build_planner_request(self.ctx, cfg, retry_error=rejected[1] if rejected else None,
                                            previous_reply=rejected[0] if rejected else None,
                                            session_id=self.settings.session_id)
            reply: str | None = None
            try:
                reply = (await self._call(request)).text
                return parse_brief(reply, placeholders=planner_placeholders()), reply, attempt, None
            except (ProviderError, ReplyError) as exc:
                error = str(exc)
                rejected = (reply, str(exc)) if isinstance(exc, ReplyError) else rejected
                self._emit(ev.PlannerRejected(attempt=attempt, error=str(exc), raw=reply))
                if isinstance(exc, PermanentError):
                    break  # the second attempt is for an unusable reply; the same request would fail again
        return None, None, attempt, error

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
    async def _render_and_release(self, brief: Brief) -> bool:
        """Start every step, release in order; False when the run halted."""
        semaphore = asyncio.Semaphore(max(1, self.settings.concurrency))
        self._index_sources(brief)
        for step in brief.steps:
            self._step_tasks[step.index] = asyncio.create_task(self._step(brief, step.index, semaphore))
        for step in brief.steps:
            outcome: StepOutcome = await self._step_tasks[step.index]
            if outcome.halted:
                await self._halt_from(brief, outcome)
                return False
            await self._release(step, outcome)
        return True

    async def _redo(self, redo: Redo) -> bool:
        """A redo's steps in document order: the redone one rendered and inspected under the usual
        rules (it starts at once), the others released as the earlier run released them, flagged as
        carried over and not inspected again. A step the earlier run did not release cannot be
        carried: the redo halts there, as a run halts at a step it cannot release. A redo whose
        instruction changed nothing is declined: the same text is no new version. False when the
        run halted or was declined."""
        self.brief = brief = Brief.model_validate(redo.brief)
        self._emit(ev.BriefReady(brief=brief.model_dump(mode="json")))
        self._check_redo(brief, redo)
        self._index_sources(brief)
        task = self._step_tasks[redo.step] = asyncio.create_task(self._step(brief, redo.step, asyncio.Semaphore(1)))
        outcome: StepOutcome = await task
        earlier = redo.carried.get(redo.step)
        if redo.instruction and not outcome.halted and earlier is not None and \
                " ".join((earlier.content or "").split()) == " ".join((outcome.content or "").split()):
            self._emit(ev.RunDeclined(reason=(
                f"The instruction was not applied: step {redo.step} came back word for word as it was, so there is "
                "no new version to release. The engine that drafted it cannot make this change; run the redo with "
                "a language model (Settings), or edit the exported document by hand. The document is unchanged.")))
            return False
        for step in brief.steps:
            if step.index == redo.step:
                if outcome.halted:
                    await self._halt_from(brief, outcome)
                    return False
                await self._release(step, outcome)
            elif not await self._carry(brief, step, redo):
                return False
        return True

    def _check_redo(self, brief: Brief, redo: Redo) -> None:
        """The earlier brief's requirements, held to the task as the first run read it, and the
        instruction's own asks as one more requirement of the redone step."""
        self._check = check_brief(self.ctx.task, brief, asks=self._asks)
        asked = [a for a in read_asks(redo.instruction) if a.kind not in (DOCUMENT, DELIVERABLE)]
        if asked:
            number = max([int(r.id[1:]) for r in brief.requirements or [] if r.id[1:].isdigit()], default=0) + 1
            number += len(self._check.missing)
            requirement = Requirement(id=f"R{number}", text=redo.instruction[:500], steps=[redo.step])
            self._extra_requirements = [(requirement, asked)]

    async def _carry(self, brief: Brief, step, redo: Redo) -> bool:
        carried = redo.carried.get(step.index)
        if carried is None or carried.content is None:
            await self._halt_from(brief, StepOutcome(step.index, halt_reason=(
                f"run {redo.run} did not release this step, so the redo has nothing to carry over; "
                "run the task again instead")))
            return False
        self._emit(ev.StepReleased(step=step.index, title=step.title, badge=carried.badge, content=carried.content,
                                   warnings=list(carried.warnings), checked_by=carried.checked_by,
                                   carried_over=True, carried_from=redo.run))
        self._released_steps.add(step.index)
        self._outcomes[step.index] = StepOutcome(step.index, carried.badge, carried.content, list(carried.warnings))
        if carried.unsourced is not None:  # as the earlier run read them: nothing is read again
            self._emit(ev.SpecificsListed(step=step.index, unsourced=list(carried.unsourced),
                                          sources=list(carried.sources or [])))
        return True

    def _index_sources(self, brief: Brief) -> None:
        """Index what the executors are given (the run's context and its brief) on a thread while
        the steps render: on a large context this is the costly part of the reading, and the event
        loop, which may be serving pages, stays free meanwhile."""
        if self._specifics is not None:
            self._sources_indexed = asyncio.ensure_future(asyncio.to_thread(self._specifics.index, self.ctx, brief))

    async def _release(self, step, outcome: StepOutcome) -> None:
        self._emit(ev.StepReleased(step=outcome.index, title=step.title, badge=outcome.badge,
                                   content=outcome.content, warnings=outcome.warnings, checked_by=self._checked_by))
        self._released_steps.add(outcome.index)
        self._outcomes[outcome.index] = outcome
        await self._list_specifics(outcome.index, outcome.content, self._given.get(outcome.index))

    async def _list_specifics(self, step: int | None, text: str, given: Context | None) -> None:
        """After a release (or the recap): its specifics against what the executor was given, as
        an advisory event. It runs once the release is in the queue, and nothing it does, a
        failure included, can change what was released or what any model is sent. The context was
        indexed on a thread while the steps rendered (`_index_sources`); reading one step is
        quick."""
        if self._specifics is None or given is None:
            return
        try:
            if self._sources_indexed is not None and not self._sources_indexed.done():
                await self._sources_indexed  # only when the steps came faster than the index
            listing = self._specifics.read(text or "", given, self.brief)
        except Exception as exc:  # advisory: a bug here is reported on the record, never a halt
            log.exception("reading the specifics of step %s failed", step)
            self._emit(ev.SpecificsListed(step=step, error=f"internal error ({type(exc).__name__})"))
            return
        self._emit(ev.SpecificsListed(step=step, unsourced=listing.unsourced, sources=listing.sources))

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

    async def _step(self, brief: Brief, index: int, semaphore: asyncio.Semaphore) -> StepOutcome:
        try:
            async with semaphore:
                return await self._inspect_step(brief, index)
        except StepHalt as halt:
            self._cancel_steps_after(index)
            return StepOutcome(index, halt_reason=str(halt))
        except BudgetExceeded as over:  # the run as a whole halts; the driver was told already
            return StepOutcome(index, halt_reason=str(over))
        except Exception as exc:
            log.exception("step %s crashed", index)
            self._cancel_steps_after(index)
            return StepOutcome(index, halt_reason=f"internal error ({type(exc).__name__})")

    async def _inspect_step(self, brief: Brief, index: int) -> StepOutcome:
        by_model = self._checked_by == badges.BY_MODEL
        first = await self._render(brief, index, 1)
        issues = await self._verify(brief, index, 1, first.text, truncated=first.truncated)
        if not issues:
            return self._released(index, badges.PASSED if by_model else badges.CHECKED, first)
        self._emit(ev.StepRerendering(step=index, issues=[i.model_dump() for i in issues]))
        second = await self._render(brief, index, 2, issues=issues, failed_draft=first.text)
        issues_again = await self._verify(brief, index, 2, second.text, truncated=second.truncated)
        if empty_draft_issue(second.text):  # a warning would release it: an empty step halts instead
            raise StepHalt("the executor's draft was empty on the second attempt too; an empty step is never released"
                           if empty_draft_issue(first.text) else
                           "the executor's re-rendered draft was empty; an empty step is never released")
        if not issues_again:
            return self._released(index, badges.PASSED_AFTER_RERENDER if by_model else badges.CHECKED, second)
        warning = ("Released with a warning: the verifier found issues in this step twice "
                   "(it was inspected twice and did not pass). Issues: "
                   + "; ".join(f"[{i.type}] {i.detail}" for i in issues_again))
        return self._released(index, badges.WARNING, second, [warning])

    @staticmethod
    def _released(index: int, badge: str, draft: Completion, warnings: list[str] | None = None) -> StepOutcome:
        if empty_draft_issue(draft.text):  # the last guard: no path releases a draft with nothing in it
            raise StepHalt("the executor's draft was empty; an empty step is never released")
        warnings = list(warnings or [])
        if draft.truncated:
            warnings.insert(0, "Truncated: the model's output limit cut this step off before its end.")
        elif draft.truncated is None:
            warnings.insert(0, "Completeness unknown: this step was streamed through a gateway that can hide a "
                               "cut, so it may end early.")
        return StepOutcome(index, badge=badge, content=draft.text, warnings=warnings)

    async def _render(self, brief: Brief, index: int, attempt: int, *, issues: list[Issue] | None = None,
                      failed_draft: str | None = None) -> Completion:
        self._emit(ev.StepRendering(step=index, attempt=attempt, total=len(brief.steps)))
        redo = self.settings.redo
        request = build_executor_request(self.ctx, brief, index, self.topology.executor, attempt=attempt,
                                         issues=issues, failed_draft=failed_draft,
                                         session_id=self.settings.session_id,
                                         instruction=redo.instruction if redo and redo.step == index else "")
        self._given[index] = request.payload["context"]
        try:
            completion = await self._call(request)
        except ProviderError as exc:
            raise StepHalt(f"the executor failed on attempt {attempt} ({exc})") from None
        self._emit(ev.AttemptDrafted(step=index, attempt=attempt, draft=completion.text,
                                     truncated=completion.truncated))
        return completion

    async def _verify(self, brief: Brief, index: int, attempt: int, draft: str, *, truncated: bool | None = False
                      ) -> list[Issue]:
        """The issues found in this exact draft (empty: a pass), or StepHalt when the verifier
        gave no parseable verdict in two calls on it. A truncated draft is never a pass."""
        self._emit(ev.StepVerifying(step=index, attempt=attempt, total=len(brief.steps)))
        model_issues: list[Issue] | None = None
        for _ in (1, 2):
            request = build_verifier_request(brief, index, draft, self.topology.verifier, attempt=attempt,
                                             session_id=self.settings.session_id)
            raw: str | None = None
            try:
                raw = (await self._call(request)).text
                verdict = parse_verdict(raw, placeholders=verifier_placeholders())
            except (ProviderError, ReplyError) as exc:
                self._emit(ev.VerdictRecorded(step=index, attempt=attempt, source="model", raw=raw,
                                              parsed=None, error=str(exc)))
                continue
            self._emit(ev.VerdictRecorded(step=index, attempt=attempt, source="model", raw=raw,
                                          parsed=verdict.as_json(), error=None))
            model_issues = verdict.issues
            break
        if model_issues is None:
            raise StepHalt(f"the verifier gave no parseable verdict in two calls on attempt {attempt}")
        cut = [issue for issue in (empty_draft_issue(draft), cut_issue(truncated)) if issue]
        found = cut + self.checks.draft_issues(brief, draft)
        mechanical = {"pass": not found, "issues": [i.model_dump() for i in found]}
        self._emit(ev.VerdictRecorded(step=index, attempt=attempt, source="mechanical", raw=None,
                                      parsed=mechanical, error=None))
        return list(model_issues) + list(found)

    # -- summarizer ------------------------------------------------------------------------------
    async def _summarize(self, brief: Brief, gaps: str | None = None) -> None:
        """The recap. When a requirement of the task is not met, its first line says so (`gaps`),
        whatever the summarizer wrote: nothing presents such a document as answering the task."""
        released = [{"index": o.index, "title": brief.step(o.index).title, "badge": o.badge, "content": o.content}
                    for _, o in sorted(self._outcomes.items())]
        error = ""
        for attempt in (1, 2):
            self._emit(ev.SummarizerStarted(attempt=attempt))
            request = build_summarizer_request(brief, released, self.topology.summarizer, gaps=gaps,
                                               session_id=self.settings.session_id)
            try:
                text = (await self._call(request)).text.strip()
            except ProviderError as exc:
                error = str(exc)
                continue
            if text:
                # The recap is model output shown to the user: the mechanical checks run on it too,
                # and the page shows their findings beside it; it never gets a badge of its own.
                findings = self.checks.recap_issues(brief, text)
                if gaps and not text.lstrip("-* ").startswith(gaps):
                    text = f"{gaps}\n\n{text}"
                self._emit(ev.SummaryReady(summary=text, findings=[i.model_dump() for i in findings]))
                # The recap restates the steps: read against the executors' own sources, a fact
                # a step invented stays unsourced when the recap repeats it.
                await self._list_specifics(None, text, self.ctx)
                return
            error = "the summarizer replied with no text"
        self._emit(ev.SummaryFailed(
            error=error, warning=f"No recap: the summarizer failed twice ({error}). The released steps are unaffected."))


class _RecordedCalls:
    """A role's provider seen through the orchestrator's `_call`, so that a call made on the run's
    behalf by a helper (the research queries) is recorded like every other model call."""

    def __init__(self, orchestrator: Orchestrator, provider: Provider):
        self._orchestrator = orchestrator
        self.offline = getattr(provider, "offline", False)

    async def complete(self, request: CompletionRequest) -> Completion:
        return await self._orchestrator._call(request)


def _a(role: str) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"


def _effort_sent(provider: Provider, request: CompletionRequest) -> str | None:
    # An HTTP provider knows whether its endpoint's profile sends the effort at all.
    effort_sent = getattr(provider, "effort_sent", None)
    return effort_sent(request) if effort_sent else request.effort
