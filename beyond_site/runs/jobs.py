"""Work done off a request, one way: `defer("task.name", **kwargs)`.

Tasks are registered by name (`@task(...)`, in each app's `tasks.py`) and deferred by name, so
this module imports nothing of the apps that define them. Where a deferred task runs depends on
the deployment, never on the caller (docs/architecture.md, "Background work"):

- **Scaled mode** (BEYOND_RUN_IN_PROCESS off, PostgreSQL): a job of the engine (procrastinate),
  queued in the caller's transaction, so it exists exactly when the rows it works on do;
  `beyond_worker` processes execute it.
- **Embedded mode** (the default): the process that serves the page executes it, on its event loop
  (async tasks) or on its queue's threads (sync tasks, e.g. reading a file in a subprocess), from
  the moment the caller's transaction commits. The server's runtime (`beyond_site/runtime`) gives
  this module its loop as it starts (`serve_here`). A process with no loop of its own (a command,
  a test) defers nothing: the work stays pending in its rows, and `run_now` does it in the
  foreground where the caller wants to wait (`beyond_workspace add-file`).

Every task is `func(job, **kwargs)`: `job.owner` is the identity it claims its rows under
(lib/leases.py), `job.leased` says whether it must hold a lease (no engine heartbeat watches an
in-process task), `job.prepared` what its `prepare` hook read in the committing thread.

Work left pending (a process stopped before its loop took it, a command's run) is found again by
each task's `pending` hook, at every sweep of the embedded runtime and of the scaled mode's
housekeeping.
"""
from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from procrastinate.contrib.django import app as engine

from beyond_site.lib.runners import job_owner, runner_identity

log = logging.getLogger("beyond.jobs")

ENGINE_APP = "procrastinate.contrib.django"

#: The queues, each served apart (a worker of its own in every `beyond_worker`, threads or a
#: limit of its own in the embedded runtime), so a long calibration never delays a run, and
#: reaping never waits for a free run slot.
RUNS_QUEUE, HOUSEKEEPING_QUEUE, AUDIT_QUEUE = "runs", "housekeeping", "audit"
FILES_QUEUE, CALIBRATION_QUEUE, EXPORTS_QUEUE = "files", "calibration", "exports"
QUEUES = (RUNS_QUEUE, HOUSEKEEPING_QUEUE, AUDIT_QUEUE, FILES_QUEUE, CALIBRATION_QUEUE, EXPORTS_QUEUE)


@dataclass(frozen=True)
class Job:
    owner: str
    #: True when no job engine watches this job: it must hold a lease on its rows and renew it.
    leased: bool
    prepared: Any = None


@dataclass(frozen=True)
class Task:
    name: str
    func: Callable
    queue: str
    #: Read in the committing thread before an in-process task is handed to the loop (the
    #: database is at hand there; on the loop it would wait in a lane). Its error is given to
    #: the task as `job.prepared`, for the task to record.
    prepare: Callable[..., Any] | None = None
    #: Returns the kwargs of work of this kind left pending (no live owner), for the sweeps.
    pending: Callable[[], list[dict]] | None = None
    #: Marks work of this kind whose runner is gone (returns how many rows), for the sweeps.
    reap: Callable[[], int] | None = None
    #: The key that one member's work is counted by, for the fair share of a queue's threads.
    share_key: Callable[..., Any] | None = None
    #: Engine options: a lock per job (one at a time per key), retries, and a schedule for the
    #: periodic housekeeping (a cron line; the embedded runtime runs its own loop instead).
    lock: Callable[..., str] | None = None
    retry: Any = None
    periodic: str | None = None

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.func)


TASKS: dict[str, Task] = {}


def task(name: str, *, queue: str, **options):
    """Register `func(job, **kwargs)` as the task `name` (with the engine too in the scaled mode)."""
    if queue not in QUEUES:
        raise ValueError(f"unknown queue {queue!r}")

    def register(func):
        TASKS[name] = Task(name, func, queue, **options)
        if apps.is_installed(ENGINE_APP):
            _register_with_engine(TASKS[name])
        return func
    return register


def engine_enabled() -> bool:
    """True in the scaled mode: background work is executed by `beyond_worker` processes."""
    return not settings.BEYOND_RUN_IN_PROCESS and apps.is_installed(ENGINE_APP)


def executes_here() -> bool:
    """True where this process executes the work it defers (the embedded server, once its
    runtime has started)."""
    return _home.loop is not None and not _home.loop.is_closed() and not engine_enabled()


def defer(name: str, **kwargs) -> None:
    """Have the task `name` done off this request: queued with the engine in the caller's
    transaction (scaled mode), or handed to this process's runtime once it commits (embedded
    mode; nothing now when this process serves no loop: the work stays pending)."""
    found = TASKS[name]
    if engine_enabled():
        engine_job(name, **kwargs).defer(**kwargs)
    elif executes_here():
        transaction.on_commit(functools.partial(_home.hand_off, found, kwargs))


def run_now(name: str, **kwargs):
    """Do the task `name` in the foreground, here (a command that waits for its result)."""
    found = TASKS[name]
    job = Job(owner=runner_identity(), leased=True,
              prepared=_prepared(found, kwargs))
    if found.is_async:
        return asyncio.run(found.func(job, **kwargs))
    return found.func(job, **kwargs)


def pending_work() -> list[tuple[str, dict]]:
    """Every piece of work left pending, as (task name, kwargs), for the sweeps."""
    return [(name, kwargs) for name, t in TASKS.items() if t.pending for kwargs in t.pending()]


def reap_abandoned() -> int:
    """Mark the work of every kind whose runner is gone; returns how many rows."""
    return sum(t.reap() for t in TASKS.values() if t.reap)


def _prepared(found: Task, kwargs: dict):
    if found.prepare is None:
        return None
    try:
        return found.prepare(**kwargs)
    except Exception as exc:
        return exc


# -- the scaled mode: the job engine ------------------------------------------------------------

def engine_job(name: str, **kwargs):
    """The engine's job for the task `name` on `kwargs`, ready to `.defer(**kwargs)` (or
    `.defer_async`): its lock lets no two jobs of one key run at once, its queueing lock lets no
    second one wait in the queue."""
    found = TASKS[name]
    lock = found.lock(**kwargs) if found.lock else None
    return engine.configure_task(found.name, queue=found.queue, lock=lock, queueing_lock=lock)


def _register_with_engine(found: Task) -> None:
    # A periodic job is given the time it was scheduled for, which the tasks do not use.
    if found.is_async:
        async def as_job(context, timestamp=None, **kwargs):
            return await found.func(Job(owner=job_owner(context.job.id), leased=False), **kwargs)
    else:
        def as_job(context, timestamp=None, **kwargs):
            return found.func(Job(owner=job_owner(context.job.id), leased=False), **kwargs)
    registered = engine.task(name=found.name, queue=found.queue, pass_context=True, retry=found.retry or False,
                             queueing_lock=found.name if found.periodic else None)(as_job)
    if found.periodic:
        engine.periodic(cron=found.periodic, periodic_id=found.name)(registered)


# -- the embedded mode: this process's loop and threads ------------------------------------------


@dataclass
class _Home:
    """The loop (and the threads) this process executes deferred work on, once the runtime gives
    it one; None in a process that serves nothing."""

    loop: asyncio.AbstractEventLoop | None = None
    #: How a sync task is run: `(task, job, kwargs)`, given by the runtime (its queues' threads,
    #: runtime/embedded.py).
    run_sync: Callable[[Task, Job, dict], Any] | None = None
    running: set = field(default_factory=set)

    def hand_off(self, found: Task, kwargs: dict) -> None:
        """At the commit, in the committing thread: prepare, then give the task to the loop."""
        if self.loop is None:  # this process stopped serving meanwhile: the work stays pending
            return
        job = Job(owner=runner_identity(), leased=True, prepared=_prepared(found, kwargs))
        if found.is_async:
            coro = found.func(job, **kwargs)
            try:
                self.loop.call_soon_threadsafe(self.spawn, coro)
            except RuntimeError:  # the loop has closed: the work stays pending for the next start
                coro.close()  # never started; unclosed, Python would warn that it was never awaited
                log.warning("%s was deferred as the server stopped; it stays pending", found.name)
        elif self.run_sync is not None:
            self.run_sync(found, job, kwargs)
        else:  # a loop served with no threads (a test's): the work stays pending for a sweep
            log.warning("%s has no threads to run on here; it stays pending", found.name)

    def spawn(self, coro) -> asyncio.Task:
        """The one place background work becomes a task on this process's loop. A fresh context:
        a task created inside a request would inherit the request's asgiref executor, which shuts
        down with the request."""
        created = self.loop.create_task(_logged(coro), context=contextvars.Context())
        self.running.add(created)  # the loop keeps only weak references to tasks
        created.add_done_callback(self.running.discard)
        return created


_home = _Home()


def serve_here(loop: asyncio.AbstractEventLoop | None, run_sync: Callable[[Task, Job, dict], Any] | None = None
               ) -> None:
    """This process executes deferred work on `loop` from now on (the runtime calls it once),
    its sync tasks by `run_sync` (runtime/embedded.py)."""
    _home.loop, _home.run_sync = loop, run_sync


def spawn(coro) -> asyncio.Task:
    """Start background work on this process's loop (the runtime's sweeps and checks)."""
    return _home.spawn(coro)


def resume(name: str, kwargs: dict) -> None:
    """Hand pending work found by a sweep to this process (call it from a database lane: its
    `prepare` reads the database)."""
    _home.hand_off(TASKS[name], kwargs)


async def _logged(coro):
    try:
        return await coro
    except Exception:
        log.exception("background task failed")


def run_sync_task(func, job: Job, kwargs: dict) -> None:
    """A sync task, on a thread that keeps no database connection between tasks; its error is
    logged (a task records its own failures on its rows)."""
    try:
        func(job, **kwargs)
    except Exception:
        log.exception("background task failed")
    finally:
        connection.close()
