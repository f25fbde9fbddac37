"""Starting, claiming and executing runs: one code path for the chat, `beyond_run` and workers."""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import logging
import os
from typing import NamedTuple

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from pipeline import events as ev
from pipeline.budget import Budget
from pipeline.context import Context
from pipeline.frameworks import Pack
from pipeline.events import Event
from pipeline.checks import MechanicalChecks
from pipeline.orchestrator import Orchestrator, Research, RunSettings
from pipeline.research import FetchPolicy, search_setting
from pipeline.providers import build_role_providers, close_all
from pipeline.topology import ROLES, Topology, parse_shorthand, parse_topology
from beyond_site.lib.db import db
from beyond_site.lib.endpoints import endpoint_policy
from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.lib.prepared import Param, Prepared, insert
from beyond_site.runs import chain, jobs
from beyond_site.runs.budgets import check_submission, run_budget
from beyond_site.runs.context import assemble_context, enabled_imported_packs
from beyond_site.workspaces.frameworks import imported_packs
from beyond_site.runs.models import Run, RunEvent
from beyond_site.runs.provenance import person
from beyond_site.runs.reaping import fail_runs_of_gone_runners, lease, reap_stale_runs
from beyond_site.runs.recorder import FINAL_STATUS, EventRecorder, RecordRefused, Recorded, stop_reason
from beyond_site.runs.runners import runner_identity
from beyond_site.workspaces.models import Conversation, Message, Workspace

log = logging.getLogger("beyond.runs")


def run_group(run_id: int) -> str:
    return f"run-{run_id}"


def stop_group(run_id: int) -> str:
    """Where a stop request rings: the runner executing the run listens there."""
    return f"run-{run_id}-stop"


def resolve_topology(workspace: Workspace, override: Topology | None = None) -> Topology:
    """The override, else the workspace's own topology, else BEYOND_PROVIDER for all roles."""
    if override is not None:
        return override
    if workspace.topology:
        return parse_topology(workspace.topology)
    return parse_shorthand(settings.BEYOND_PROVIDER)


class ConversationDeleted(ValueError):
    """No new run joins a deleted conversation."""


TITLE_CHARS = 80


def conversation_title(task: str) -> str:
    """A conversation is named after its first task: whole if it is short, else cut at the last
    word that fits, with an ellipsis."""
    words = " ".join(without_bidi_controls(task).split())
    if len(words) <= TITLE_CHARS:
        return words or "New conversation"
    cut = words[:TITLE_CHARS - 1]
    at_word = cut.rsplit(" ", 1)[0]
    if words[TITLE_CHARS - 1] != " " and len(at_word) >= TITLE_CHARS // 2:  # not inside a word, unless it is long
        cut = at_word
    return cut.rstrip(" ,;:.-") + "…"


def research_plan() -> Research:
    """The operator's search backend and fetch policy; ValueError (shown as the reason the run could
    not start) when web research is not configured on this server."""
    setting = search_setting(os.environ)
    if not setting.configured:
        raise ValueError(setting.message)
    return Research(backend=setting.backend, fetch_policy=FetchPolicy.from_env(os.environ))


_BY_KEY = Prepared(lambda: Run.objects.filter(workspace_id=Param("workspace_id"), idempotency_key=Param("key"))
                   .order_by()[:1])


@dataclasses.dataclass(frozen=True)
class StartHere:
    """Embedded mode: how a request starts the run it creates. The run is created already claimed
    by this process, and its execution is handed to the event loop the moment the transaction
    that creates it commits, from the request's own thread: no trip through the runs' database
    lane to claim it (under a burst of submissions that lane is the queue every run's start waits
    in), and no wait for the response to be rendered. A client that leaves mid-request does not
    keep its run from starting: the hand-off happens in the thread, which finishes its work."""
    owner: str
    loop: asyncio.AbstractEventLoop

    @classmethod
    def for_request(cls) -> StartHere | None:
        """Call on the event loop; None in the scaled mode, where a worker claims the run's job."""
        return cls(runner_identity(), asyncio.get_running_loop()) if settings.BEYOND_RUN_IN_PROCESS else None

    def hand_off(self, run_id: int) -> None:
        """At the commit, in the request's thread: read what the run needs to start (here, not in
        the runs' lane, where under load it would wait behind the other runs' writes, and the run
        with it), then give the run to the event loop. A read that fails fails the run there."""
        try:
            start: Starting | Exception = _starting(run_id)
        except Exception as exc:
            start = exc
        try:
            self.loop.call_soon_threadsafe(_execute_claimed, run_id, self.owner, start)
        except RuntimeError:  # the server is shutting down: the run is failed as interrupted on its restart
            log.warning("run %s was created as the server stopped; it will be failed as interrupted", run_id)


def start_run(workspace: Workspace, task: str, *, user=None, conversation: Conversation | None = None,
              topology: Topology | None = None, idempotency_key: str | None = None,
              research: bool = False, run_here: bool = False, retry_of: Run | None = None,
              start: StartHere | None = None) -> tuple[Run, bool]:
    """Queue a run for `task` as a new message of `conversation` (a new conversation when None);
    returns (run, created). A replayed submission (the same idempotency key) creates nothing and
    returns the run that key already started, in that run's own conversation. A submission over
    one of the workspace's caps raises BudgetRefused (runs/budgets.py) and creates nothing. In the
    scaled mode the job that executes the run is queued in the same transaction as the run itself,
    unless the caller executes it itself (`run_here`, as `beyond_run` does). With `start` (the
    embedded mode's requests), the run is created claimed by this process and starts once the
    transaction commits."""
    task = without_bidi_controls(task)  # they make a task read otherwise than it is (lib/inputs.py)
    if idempotency_key:
        existing = _BY_KEY.instances(workspace_id=workspace.pk, key=idempotency_key)
        if existing:
            return existing[0], False
    if conversation is not None and conversation.deleted_at is not None:
        raise ConversationDeleted("This conversation was deleted: start a new one.")
    topo = resolve_topology(workspace, topology)
    try:
        with transaction.atomic():  # a new conversation exists only with its run
            check_submission(workspace, user)  # locks the workspace row when it caps submissions
            if conversation is None:
                conversation = insert(Conversation(workspace=workspace, title=conversation_title(task), created_by=user))
            else:
                if not conversation.messages.exists():
                    # A conversation started by an upload takes its first task's name.
                    conversation.title = conversation_title(task)
                conversation.save(update_fields=["title", "updated_at"])  # most recent first in the list
            message = insert(Message(conversation=conversation, text=task, author=user))
            claimed = _claimed_now(start.owner) if start is not None else {}
            run = insert(Run(workspace=workspace, conversation=conversation, message=message, task=task,
                             topology=topo.as_json(), created_by=user, idempotency_key=idempotency_key,
                             created_by_name=user.get_username() if getattr(user, "pk", None) else "",
                             offline=any(topo.role(r).provider == "offline" for r in ROLES),
                             research=research, retry_of=retry_of, **claimed))
            if start is not None:
                transaction.on_commit(functools.partial(start.hand_off, run.pk))
            elif jobs.engine_enabled() and not run_here:
                jobs.run_job(run.pk).defer(run_id=run.pk)
    except IntegrityError:
        # Two submissions with one key raced: the other one won, and that run is this task's run.
        return Run.objects.get(workspace=workspace, idempotency_key=idempotency_key), False
    return run, True


class NotRetryable(ValueError):
    """Only a run that failed, halted or was stopped can be run again."""


def run_again(run: Run, *, user, idempotency_key: str | None = None,
              start: StartHere | None = None) -> tuple[Run, bool]:
    """The same task as a new run in the same conversation, linked to `run` (which stays on record)."""
    if run.status not in Run.RETRYABLE:
        raise NotRetryable("Only a run that failed, halted or was stopped can be run again.")
    return start_run(run.workspace, run.task, user=user, conversation=run.conversation, retry_of=run,
                     research=run.research, idempotency_key=idempotency_key, start=start)


def _claimed_now(owner: str, *, with_lease: bool = True) -> dict:
    """The fields of a run claimed by `owner` now."""
    now = timezone.now()
    return {"status": Run.RUNNING, "lease_owner": owner, "lease_expires_at": now + lease() if with_lease else None,
            "started_at": now}


def claim_run(run_id: int, owner: str, *, with_lease: bool = True) -> bool:
    """Take a queued run. Portable across SQLite and PostgreSQL: a conditional UPDATE, and the
    claim holds only if exactly one row changed (as healthchecks' sendalerts does). A runner
    outside the job engine takes a lease it must renew; a job-engine worker takes none (the
    engine's worker heartbeats tell whether it is alive)."""
    changed = Run.objects.filter(pk=run_id, status=Run.QUEUED).update(**_claimed_now(owner, with_lease=with_lease))
    return changed == 1


def claim_next_run(owner: str) -> int | None:
    for run_id in Run.objects.filter(status=Run.QUEUED).order_by("created_at", "id").values_list("id", flat=True)[:5]:
        if claim_run(run_id, owner):
            return run_id
    return None


def may_stop(run: Run, user, membership) -> bool:
    """The member who started a run may stop it, and so may the workspace's admins."""
    from_admin = membership is not None and membership.role == membership.ADMIN
    return from_admin or (run.created_by_id is not None and run.created_by_id == getattr(user, "pk", None))


def request_stop(run_id: int, user) -> bool:
    """Stop a queued or running run; False when it had already finished. A queued run is cancelled
    at once (taking it with the same claim a runner would, so no runner starts it meanwhile); a
    running one is marked, and its runner, told through the stop bell or its own check, stops it.
    From the mark on, nothing more of it is released."""
    now = timezone.now()
    if claim_run(run_id, "stopper"):
        Run.objects.filter(pk=run_id).update(stopped_by=user)
        recorder = EventRecorder(Run.objects.get(pk=run_id), owner="stopper")
        recorder.stopper = person(user.pk, user.get_username())  # named in the final event, as any stop
        recorder.record(Event(ev.RunCancelled(reason=stop_reason(user.get_username()))))
        return True
    return Run.objects.filter(pk=run_id, status=Run.RUNNING, stop_requested_at=None).update(
        stop_requested_at=now, stopped_by=user) == 1


async def ring_stop_bell(run_id: int) -> None:
    layer = get_channel_layer()
    if layer is not None:
        try:
            await layer.group_send(stop_group(run_id), {"type": "run.stop"})
        except Exception:  # the runner also checks the database on its own
            log.warning("stop bell for run %s failed", run_id, exc_info=True)


async def ring_doorbell(run_id: int, seq: int) -> None:
    """Tell consumers that event `seq` exists. Best effort by design: consumers read the events
    from the database, so a lost ring costs latency, never a step."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        await layer.group_send(run_group(run_id), {"type": "run.event", "seq": seq})
    except Exception:  # the doorbell must never break the run
        log.warning("doorbell for run %s seq %s failed", run_id, seq, exc_info=True)


class LeaseLost(Exception):
    """Another runner (the reaper) took this run over: stop without writing anything more."""


async def execute_run(run_id: int, owner: str, *, transport=None, keep_lease: bool = True,
                      operator_topology: bool = False, start: Starting | Exception | None = None) -> str:
    """Run a claimed run to its end, persisting every event before ringing the doorbell.
    Returns the final status ("lost" when the run was taken over by the reaper meanwhile).
    `keep_lease` renews the claim's lease while the run lasts; a job-engine worker, which took
    no lease, passes False. Model endpoints are reached through the guarded transport
    (lib/endpoints.py) unless the operator chose the topology itself (`operator_topology`, as
    `beyond_run --provider/--topology` does); `transport` replaces both (tests). `start` is what
    `_starting` read already (or the error it raised), when the caller read it."""
    lease_lost = asyncio.Event()
    heartbeat = asyncio.create_task(_keep_lease(run_id, owner, lease_lost)) if keep_lease else None
    try:
        return await _execute(run_id, owner, transport, lease_lost, operator_topology, start)
    finally:
        if heartbeat is not None:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)


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
        recorded = await db(self._record)(events)
        if recorded.rows:
            await ring_doorbell(self.run_id, recorded.rows[-1].seq)
        return recorded


_RUN = Prepared(lambda: Run.objects.select_related("workspace").filter(pk=Param("pk")).order_by())


class Starting(NamedTuple):
    """What a run needs from the database before its first event."""
    run: Run
    context: Context
    packs: list[Pack]
    budget: Budget


def _starting(run_id: int) -> Starting:
    """What a run needs from the database before its first event, read in one go: each separate
    trip to the runs' database lane waits behind every other run's writes."""
    [run] = _RUN.instances(pk=run_id)
    imported = imported_packs()  # read once, for the context and for the mechanical checks
    return Starting(run, assemble_context(run, imported=imported), enabled_imported_packs(run.workspace, imported),
                    run_budget(run.workspace))


async def _execute(run_id: int, owner: str, transport, lease_lost: asyncio.Event, operator_topology: bool,
                   start: Starting | Exception | None) -> str:
    record = _Recording(run_id, owner, lease_lost)
    try:
        if isinstance(start, Exception):
            raise start
        run, ctx, packs, budget = start if start is not None else await db(_starting)(run_id)
        record.run = run
        topology = parse_topology(run.topology)
        checks = MechanicalChecks(packs)
        research = research_plan() if run.research else None
        providers = build_role_providers(topology, openrouter_base_url=settings.OPENROUTER_BASE_URL,
                                         transport=transport,
                                         address_policy=None if operator_topology else endpoint_policy())
    except Exception as exc:  # bad scripted file, missing key, a database that refused: a failed run
        message = str(exc) if isinstance(exc, ValueError) else f"internal error ({type(exc).__name__})"
        if not isinstance(exc, ValueError):
            log.exception("run %s could not start", run_id)
        return await _fail(record, run_id, f"the run could not start: {message}")

    orchestrator = Orchestrator(ctx, topology, providers, checks=checks, settings=RunSettings(
        concurrency=settings.BEYOND_STEP_CONCURRENCY, session_id=f"beyond-run-{run_id}", research=research,
        budget=budget))
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
            reason = await db(_stop_requested)(run_id)
            if reason:
                orchestrator.stop(reason)
                return
    finally:
        if channel:
            with contextlib.suppress(Exception):
                await layer.group_discard(stop_group(run_id), channel)


def renew_lease(run_id: int, owner: str) -> bool:
    return Run.objects.filter(pk=run_id, status=Run.RUNNING, lease_owner=owner).update(
        lease_expires_at=timezone.now() + lease()) == 1


async def _keep_lease(run_id: int, owner: str, lost: asyncio.Event) -> None:
    while True:
        await asyncio.sleep(settings.BEYOND_RUN_HEARTBEAT_S)
        try:
            if not await db(renew_lease)(run_id, owner):
                if not await db(Run.objects.filter(pk=run_id, status=Run.RUNNING).exists)():
                    return  # finished: nothing left to hold
                lost.set()
                return
        except Exception:  # a busy database now is no reason to give the run up; try again
            log.warning("could not renew the lease of run %s", run_id, exc_info=True)


async def ring_reaped(run_ids: list[int]) -> None:
    """Tell the open pages of runs just failed by a reaper, so they show it at once."""
    for run_id in run_ids:
        seq = await db(RunEvent.objects.filter(run_id=run_id).count)()
        await ring_doorbell(run_id, seq)


# -- the embedded home of the runner: tasks on the ASGI server's own event loop -------------------
_background: set[asyncio.Task] = set()
_sweeper: asyncio.Task | None = None
_chain_checker: asyncio.Task | None = None
SWEEP_S = 15


def _spawn(coro) -> asyncio.Task:
    # A fresh context: a task created inside a request would inherit the request's asgiref
    # thread-sensitive executor, which shuts down with the request ("CurrentThreadExecutor
    # already quit"), and every database call of the run would then fail.
    task = asyncio.get_running_loop().create_task(coro, context=contextvars.Context())
    _background.add(task)  # the loop keeps only weak references to tasks
    task.add_done_callback(_background.discard)
    return task


def ensure_sweeper() -> None:
    """Embedded mode: keep one sweeper task on this server's loop (call from its event loop).
    Called on the first submission and the first websocket connect after a (re)start: its first
    pass fails at once the runs this server was executing before it restarted, and runs the
    queued ones, without waiting for new work."""
    global _sweeper, _chain_checker
    if not settings.BEYOND_RUN_IN_PROCESS:
        return
    if _sweeper is None or _sweeper.done() or _sweeper.get_loop() is not asyncio.get_running_loop():
        _sweeper = _spawn(_sweep_forever())
    # Beside it, the periodic check of the record (runs/chain.py), a task of its own: a long
    # verification never holds up queued runs.
    if _chain_checker is None or _chain_checker.done() or _chain_checker.get_loop() is not asyncio.get_running_loop():
        _chain_checker = _spawn(chain.check_periodically())


def _execute_claimed(run_id: int, owner: str, start: Starting | Exception) -> None:
    """Embedded mode, on the event loop: execute a run this process claimed as it created it."""
    _spawn(_execute_logged(run_id, owner, start))
    ensure_sweeper()


async def _execute_logged(run_id: int, owner: str, start: Starting | Exception) -> None:
    try:
        await execute_run(run_id, owner, start=start)
    except Exception:
        log.exception("run %s failed in the background runner", run_id)


async def work_once(owner: str) -> int | None:
    """Fail the runs of dead runners, then claim and execute one queued run, if any."""
    await ring_reaped(await db(fail_runs_of_gone_runners)())
    await ring_reaped(await db(reap_stale_runs)())
    run_id = await db(claim_next_run)(owner)
    if run_id is not None:
        await execute_run(run_id, owner)
    return run_id


async def _sweep_forever() -> None:
    # Picks up what a restart left behind: queued runs nobody scheduled, and runs whose runner
    # died (failed, never released).
    while True:
        try:
            while await work_once(runner_identity()) is not None:
                pass
        except Exception:
            log.exception("runner sweep failed")
        await asyncio.sleep(SWEEP_S)
