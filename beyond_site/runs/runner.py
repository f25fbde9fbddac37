"""The runner: executing a claimed run, holding its lease, and sweeping up what runners left.

One code path for the embedded server, `beyond_worker` and `beyond_run`: `execute_run` runs the
pipeline core and persists every event before it rings the doorbell (docs/architecture.md, "A
run's life"). Where it runs is the job interface's business (`jobs.py`, `tasks.py`).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from typing import NamedTuple

from channels.layers import get_channel_layer
from channels.db import database_sync_to_async
from django.conf import settings

from pipeline import events as ev
from pipeline.budget import Budget
from pipeline.checks import MechanicalChecks
from pipeline.context import Context
from pipeline.events import Event
from pipeline.frameworks import Pack
from pipeline.orchestrator import Orchestrator, Redo, Research, RunSettings
from pipeline.providers import close_all
from pipeline.research import FetchPolicy, search_setting
from pipeline.topology import TopologyError, parse_topology
from pipeline.window import Fitted, context_budget, known_windows, read_windows
from beyond_site.lib import leases
from beyond_site.lib.endpoints import role_providers
from beyond_site.lib.runners import runner_identity
from beyond_site.runs import jobs
from beyond_site.runs.bells import ring_doorbell, stop_group
from beyond_site.runs.budgets import run_budget
from beyond_site.runs.context import assemble_context, enabled_imported_packs
from beyond_site.runs.models import Run, RunEvent
from beyond_site.runs.redo import redo_plan
from beyond_site.runs.reaping import fail_runs_of_gone_runners, reap_stale_runs
from beyond_site.runs.projection import FINAL_STATUS
from beyond_site.runs.recorder import (EventRecorder, RecordRefused, Recorded, run_to_start,
                                       stop_reason)
from beyond_site.workspaces.frameworks import imported_packs
from beyond_site.workspaces.reading import still_reading

log = logging.getLogger("beyond.runs")


def research_plan() -> Research:
    """The operator's search backend and fetch policy; ValueError (shown as the reason the run could
    not start) when web research is not configured on this server."""
    setting = search_setting(settings.BEYOND_ENVIRONMENT)
    if not setting.configured:
        raise ValueError(setting.message)
    return Research(backend=setting.backend, fetch_policy=FetchPolicy.from_env(settings.BEYOND_ENVIRONMENT))


class LeaseLost(Exception):
    """Another runner (the reaper) took this run over: stop without writing anything more."""


class Starting(NamedTuple):
    """What a run needs from the database before its first event."""
    run: Run
    context: Context
    packs: list[Pack]
    budget: Budget
    #: Files in the run's scope still being read (workspaces/reading.py): the run waits for them.
    unread: list[str]
    #: A redo's earlier run, as plain data (runs/redo.py); None for every other run.
    redo: Redo | None = None
    #: The windows the context roles' servers said, by role, that the context was fitted to.
    said: dict[str, int] = {}


def starting(run_id: int, run: Run | None = None, said: dict[str, int] | None = None) -> Starting:
    """What a run needs from the database before its first event, read in one go: each separate
    trip to the runs' database lane waits behind every other run's writes. `run` is its row with
    its workspace, when the caller read it already."""
    run = run or run_to_start(run_id)
    if run is None:
        raise Run.DoesNotExist(f"Run {run_id} does not exist")
    imported = imported_packs()  # read once, for the context and for the mechanical checks
    budget, said = _fitted_budget(run, said)
    return Starting(run, assemble_context(run, budget=budget, imported=imported),
                    enabled_imported_packs(run.workspace, imported), run_budget(run.workspace),
                    still_reading(run.workspace_id, run.conversation_id), redo_plan(run), said)


def _fitted_budget(run: Run, said: dict[str, int] | None) -> tuple[Fitted | None, dict[str, int]]:
    """The context budget of the run's topology: the site's, or less where a model's window needs
    it (pipeline/window.py), with the windows its servers said (`said`, else what they said
    lately). A topology that cannot be read gets the site's: the run then fails on it with its own
    message."""
    try:
        topology = parse_topology(run.topology)
    except TopologyError:
        return None, {}
    said = known_windows(topology) if said is None else said
    return context_budget(topology, settings.BEYOND_CONTEXT_BUDGET_TOKENS, said), said


async def _when_files_are_read(start: Starting) -> Starting:
    """The run's start once the files in its scope have been read, waiting up to
    BEYOND_RUN_WAITS_FOR_FILES_S; the files still unread then are left out and named in the run's
    warnings (pipeline/task_check.py)."""
    run = start.run
    deadline = asyncio.get_running_loop().time() + settings.BEYOND_RUN_WAITS_FOR_FILES_S
    unread = start.unread
    while unread and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(FILE_POLL_S)
        unread = await database_sync_to_async(still_reading)(run.workspace_id, run.conversation_id)
    start = await database_sync_to_async(starting)(run.pk)
    return start._replace(context=dataclasses.replace(start.context, unread_files=tuple(start.unread)))


#: How often a run waiting for files checks whether they have been read.
FILE_POLL_S = 0.5


def starting_if_claimed_here(run_id: int) -> Starting | None:
    """`starting`, for a run this process claimed as it created it (the embedded server's
    submissions); None for a run still queued, which the task claims first."""
    run = run_to_start(run_id)  # one read for the check and the start
    return starting(run_id, run) if run is not None and run.lease_owner == runner_identity() else None


async def execute_run(run_id: int, owner: str, *, transport=None, keep_lease: bool = True,
                      operator_topology: bool = False, start: Starting | Exception | None = None) -> str:
    """Run a claimed run to its end, persisting every event before ringing the doorbell.
    Returns the final status ("lost" when the run was taken over by the reaper meanwhile).
    `keep_lease` renews the claim's lease while the run lasts; a job-engine worker, which took
    no lease, passes False. Model endpoints are reached through the guarded transport
    (lib/endpoints.py) unless the operator chose the topology itself (`operator_topology`, as
    `beyond_run --provider/--topology` does); `transport` replaces both (tests). `start` is what
    `starting` read already (or the error it raised), when the caller read it."""
    if not keep_lease:
        return await _execute(run_id, owner, transport, asyncio.Event(), operator_topology, start)
    rows = Run.objects.filter(pk=run_id, status=Run.RUNNING)
    async with leases.holding(functools.partial(database_sync_to_async(leases.renew), rows, owner), name=f"run {run_id}") as lost:
        return await _execute(run_id, owner, transport, lost, operator_topology, start)


class _Recording:
    """Records a run's events under its owner's claim, a batch at a time, then rings the doorbell
    once for the batch. The recorder is made on the first batch, so a database that refuses the
    very first query still ends in the run's failure path instead of leaving it running."""

    def __init__(self, run_id: int, owner: str, lease_lost: asyncio.Event):
        self.run_id, self.owner, self.lease_lost = run_id, owner, lease_lost
        self.recorder: EventRecorder | None = None
        self.run: Run | None = None  # the row as the run's start read it, for the recorder

    def _record(self, events: list[Event]) -> Recorded:
        if self.recorder is None:
            self.recorder = EventRecorder(self.run or Run.objects.get(pk=self.run_id), owner=self.owner)
        return self.recorder.record_many(events)

    async def __call__(self, events: list[Event]) -> Recorded:
        if self.lease_lost.is_set():
            raise LeaseLost(self.run_id)
        recorded = await database_sync_to_async(self._record)(events)
        if recorded.rows:
            await ring_doorbell(self.run_id, recorded.rows[-1].seq)
        return recorded


async def _execute(run_id: int, owner: str, transport, lease_lost: asyncio.Event, operator_topology: bool,
                   start: Starting | Exception | None) -> str:
    record = _Recording(run_id, owner, lease_lost)
    try:
        orchestrator, providers = await _orchestrator(run_id, record, start, transport, operator_topology)
    except _CouldNotStart as exc:
        return await _fail(record, run_id, f"the run could not start: {exc}")
    watcher = asyncio.create_task(_watch_for_stop(run_id, orchestrator))
    try:
        async with contextlib.aclosing(orchestrator.event_batches()) as batches:
            async for batch in batches:
                # Who ran it stays on the record after the claim is gone.
                batch = [Event(dataclasses.replace(event.payload, runner=owner))
                         if isinstance(event.payload, ev.RunStarted) else event for event in batch]
                recorded = await record(batch)
                if recorded.stop is not None:  # releases after the click were held back, unseen
                    orchestrator.stop(recorded.stop)
                final = [row for row in recorded.rows if row.type in FINAL_STATUS]
                if final:
                    return FINAL_STATUS[final[0].type]
        return await _fail(record, run_id, "internal error: the pipeline stopped without a final event")
    except (LeaseLost, RecordRefused):
        log.warning("run %s was taken over by another runner; this one stops", run_id)
        return "lost"
    except Exception as exc:  # e.g. the database refused an event: fail the run, never leave it running
        log.exception("run %s failed while recording", run_id)
        return await _fail(record, run_id, f"internal error while recording the run ({type(exc).__name__})")
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await close_all(providers)


class _CouldNotStart(Exception):
    """A run that cannot start (a bad scripted file, a missing key, a database that refused): why."""


async def _orchestrator(run_id: int, record: _Recording, start: Starting | Exception | None, transport,
                        operator_topology: bool) -> tuple[Orchestrator, dict]:
    """The run's orchestrator and its providers, the context fitted to what their servers say."""
    providers = None
    try:
        if isinstance(start, Exception):
            raise start
        start = start if start is not None else await database_sync_to_async(starting)(run_id)
        record.run = start.run
        topology = parse_topology(start.run.topology)
        providers = role_providers(topology, operator_topology=operator_topology, transport=transport)
        said = await read_windows(topology, providers)
        if said != start.said:  # a server said another window than the context was fitted to
            start = await database_sync_to_async(starting)(run_id, said=said)
        if start.unread:
            start = await _when_files_are_read(start)
        run, ctx, packs, budget, _, redo, _ = start
        checks = MechanicalChecks(packs)
        research = research_plan() if run.research and redo is None else None  # a redo keeps its brief
    except Exception as exc:
        if not isinstance(exc, ValueError):
            log.exception("run %s could not start", run_id)
        if providers is not None:
            await close_all(providers)
        raise _CouldNotStart(str(exc) if isinstance(exc, ValueError)
                             else f"internal error ({type(exc).__name__})") from None
    return Orchestrator(ctx, topology, providers, checks=checks, settings=RunSettings(
        concurrency=settings.BEYOND_STEP_CONCURRENCY, session_id=f"beyond-run-{run_id}", research=research,
        budget=budget, redo=redo)), providers


#: Pauses between the attempts to record a run's failure: a database refusing connections under
#: load usually accepts one again within a second or two.
FAIL_RETRIES_S = (0.5, 1.0, 2.0)


async def _fail(record, run_id: int, reason: str) -> str:
    for pause in (*FAIL_RETRIES_S, None):
        try:
            await record([Event(ev.RunFailed(reason=reason))])
            return Run.FAILED
        except (LeaseLost, RecordRefused):
            return "lost"
        except Exception:
            if pause is None:
                log.exception("run %s: could not record its failure; the reaper will", run_id)
                return Run.FAILED
            log.warning("run %s: recording its failure failed; trying again", run_id, exc_info=True)
            await asyncio.sleep(pause)
    return Run.FAILED


#: How often a runner checks the database for a stop request the stop bell did not bring.
STOP_CHECK_S = 5.0


def _stop_requested(run_id: int) -> str | None:
    row = (Run.objects.filter(pk=run_id).exclude(stop_requested_at=None)
           .values_list("stopped_by__username", flat=True))
    return stop_reason(row[0]) if row else None


async def _listen_for_stop_bell(run_id: int):
    """A channel in the run's stop group, or None when there is no channel layer or it failed."""
    layer = get_channel_layer()
    if layer is None:
        return None, None
    try:
        channel = await layer.new_channel()
        await layer.group_add(stop_group(run_id), channel)
    except Exception:  # the database check below still stops the run
        log.warning("run %s: cannot listen for the stop bell", run_id, exc_info=True)
        return None, None
    return layer, channel


async def _watch_for_stop(run_id: int, orchestrator: Orchestrator) -> None:
    """Stop the orchestrator when a member asks to: at once when the stop bell rings, else at the
    next check of the database (the bell, like the doorbell, is best effort). There is no check
    before the first wait: every batch of events recorded checks for a stop too (runs/recorder.py),
    the run's first batch among them, and under load each extra query at a run's start waits in the
    runs' lane behind the other runs' writes."""
    layer, channel = await _listen_for_stop_bell(run_id)
    try:
        while True:
            try:
                async with asyncio.timeout(STOP_CHECK_S):
                    await (layer.receive(channel) if channel else asyncio.sleep(STOP_CHECK_S))
            except TimeoutError:
                pass
            except Exception:  # a channel layer that failed: keep checking the database
                log.warning("run %s: the stop bell failed; checking the database only", run_id, exc_info=True)
                channel = None
                await asyncio.sleep(STOP_CHECK_S)
            reason = await database_sync_to_async(_stop_requested)(run_id)
            if reason:
                orchestrator.stop(reason)
                return
    finally:
        if channel:
            with contextlib.suppress(Exception):
                await layer.group_discard(stop_group(run_id), channel)


async def ring_reaped(run_ids: list[int]) -> None:
    """Tell the open pages of runs just failed by a reaper, so they show it at once."""
    for run_id in run_ids:
        seq = await database_sync_to_async(RunEvent.objects.filter(run_id=run_id).count)()
        await ring_doorbell(run_id, seq)


# -- the sweeps: what runners left behind ----------------------------------------------------------

#: Seconds between two sweeps of the embedded server.
SWEEP_S = 15


async def sweep_once() -> list[int]:
    """Fail the runs whose runner is gone (this very server before it restarted, a `beyond_run`
    that died) and mark the other work abandoned the same way; then take up the work left
    pending (queued runs, files still to read, calibrations queued). Returns the runs failed."""
    failed = await database_sync_to_async(fail_runs_of_gone_runners, thread_sensitive=False)()
    failed += await database_sync_to_async(reap_stale_runs, thread_sensitive=False)()
    await ring_reaped(failed)
    await database_sync_to_async(jobs.reap_abandoned, thread_sensitive=False)()
    if jobs.executes_here():
        for name, kwargs in await database_sync_to_async(jobs.pending_work, thread_sensitive=False)():
            await database_sync_to_async(jobs.resume, thread_sensitive=False)(name, kwargs)
    return failed


async def sweep_forever() -> None:
    """The embedded server's sweeper (started once by the runtime): its first pass, at the
    server's start, fails at once the runs this server was executing before it restarted."""
    while True:
        try:
            await sweep_once()
        except Exception:
            log.exception("runner sweep failed")
        await asyncio.sleep(SWEEP_S)
