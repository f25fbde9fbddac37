"""The scaled mode's worker: executes the background work the web servers defer (runs/jobs.py):
runs, files to read and calibrations, each on its own queue, and the engine's periodic
housekeeping (failing the work of dead workers) and check of the record.

Run several of these beside web servers that have BEYOND_RUN_IN_PROCESS=false, every process on
the same PostgreSQL and Redis (docs/operations.md, "Scaled mode"). SIGTERM or SIGINT: no new run
is taken and the runs in progress finish, then the worker exits; a second signal ends it at once.
"""
from __future__ import annotations

import asyncio
import logging
import signal

from channels.db import database_sync_to_async
from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from procrastinate.contrib.django import app
from procrastinate.worker import Worker

from beyond_site.runs.jobs import (AUDIT_QUEUE, CALIBRATION_QUEUE, ENGINE_APP, EXPORTS_QUEUE, FILES_QUEUE,
                                   HOUSEKEEPING_QUEUE, RUNS_QUEUE)
from beyond_site.runs.reaping import fail_runs_of_gone_runners
from beyond_site.runs.runner import ring_reaped
from beyond_site.runtime.warmup import WORKER_PARTS, prepare_process

log = logging.getLogger("beyond.worker")


class Command(BaseCommand):
    help = "Execute queued runs (the scaled mode) until stopped."

    def add_arguments(self, parser):
        parser.add_argument("--concurrency", type=int, default=4, help="runs executed at once")
        parser.add_argument("--poll", type=float, default=5.0,
                            help="seconds between polls of the queue (new runs are announced at once anyway)")
        parser.add_argument("--once", action="store_true", help="execute what is queued, then exit")

    def handle(self, *args, **opts):
        if not apps.is_installed(ENGINE_APP):
            raise CommandError("beyond_worker is the scaled mode's runner: set DATABASE_URL to PostgreSQL")
        prepare_process(WORKER_PARTS)  # before the first job, not during it (runtime/warmup.py)
        # The web processes queue jobs through Django's connection; a worker needs the engine's
        # own (it listens for new jobs and keeps a pool).
        with app.replace_connector(app.connector.get_worker_connector()):
            asyncio.run(serve(opts["concurrency"], opts["poll"], opts["once"]))


async def serve(concurrency: int, poll: float, once: bool) -> None:
    async with app.open_async():
        app.perform_import_paths()
        # A worker that restarted knows at once that the runs it was executing were interrupted.
        await ring_reaped(await database_sync_to_async(fail_runs_of_gone_runners)())
        options = {**app.worker_defaults, "install_signal_handlers": False, "wait": not once,
                   "fetch_job_polling_interval": poll}
        workers = [Worker(app=app, **options, queues=[RUNS_QUEUE], name="runs", concurrency=concurrency),
                   # Its own worker, so reaping never waits for a run slot to free up.
                   Worker(app=app, **options, queues=[HOUSEKEEPING_QUEUE], name="housekeeping", concurrency=1),
                   # The periodic check of the record, apart so that it never delays reaping.
                   Worker(app=app, **options, queues=[AUDIT_QUEUE], name="audit", concurrency=1),
                   # Files are read in subprocesses with limits of their own; a calibration calls
                   # models for minutes: neither ever takes a run's slot.
                   Worker(app=app, **options, queues=[FILES_QUEUE], name="files",
                          concurrency=settings.BEYOND_FILE_READERS),
                   Worker(app=app, **options, queues=[CALIBRATION_QUEUE], name="calibration", concurrency=1),
                   # Word, PDF and Excel files, written off the requests (exports/jobs.py).
                   Worker(app=app, **options, queues=[EXPORTS_QUEUE], name="exports",
                          concurrency=settings.BEYOND_EXPORT_WRITERS)]
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stop() -> None:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)  # a second signal ends the process
            stopping.set()
            for worker in workers:
                worker.stop()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        beats = [asyncio.create_task(_beat_while_draining(worker, stopping)) for worker in workers]
        try:
            await asyncio.gather(*(worker.run() for worker in workers))
        finally:
            for beat in beats:
                beat.cancel()
            await asyncio.gather(*beats, return_exceptions=True)


async def _beat_while_draining(worker: Worker, stopping: asyncio.Event) -> None:
    """The engine stops a worker's heartbeat as soon as it starts draining, and a worker silent
    for BEYOND_WORKER_STALLED_S counts as dead: its runs, which may take minutes more to finish,
    would be failed. So the heartbeat goes on here until the worker has drained and unregistered."""
    await stopping.wait()
    while worker.worker_id is not None:
        try:
            await app.job_manager.update_heartbeat(worker.worker_id)
        except Exception:
            log.warning("could not record the heartbeat of draining worker %s", worker.worker_id, exc_info=True)
        await asyncio.sleep(settings.BEYOND_WORKER_HEARTBEAT_S)
