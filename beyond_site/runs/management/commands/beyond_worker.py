"""The scaled-mode runner: claim queued runs from the database and execute them.

Run several of these beside the web servers, with REDIS_URL set so their doorbells reach the
websockets, and BEYOND_RUN_IN_PROCESS=false on the web servers.
"""
from __future__ import annotations

import asyncio
import logging
import signal

from django.core.management.base import BaseCommand

from beyond_site.runs.services import runner_identity, work_once

log = logging.getLogger("beyond.worker")


class Command(BaseCommand):
    help = "Claim and execute queued runs until stopped."

    def add_arguments(self, parser):
        parser.add_argument("--concurrency", type=int, default=4, help="runs executed at once")
        parser.add_argument("--poll", type=float, default=1.0, help="seconds between polls when idle")
        parser.add_argument("--once", action="store_true", help="drain the queue, then exit")

    def handle(self, *args, **opts):
        asyncio.run(self._main(opts["concurrency"], opts["poll"], opts["once"]))

    async def _main(self, concurrency: int, poll: float, once: bool) -> None:
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopping.set)

        async def slot(n: int) -> None:
            owner = f"{runner_identity()}/{n}"
            while not stopping.is_set():
                try:
                    worked = await work_once(owner)
                except Exception:  # one bad run must not stop the worker or its other slots
                    log.exception("worker slot %s failed", n)
                    worked = None
                if worked is None:
                    if once:
                        return
                    try:
                        await asyncio.wait_for(stopping.wait(), poll)
                    except asyncio.TimeoutError:
                        pass

        # A stop lets runs in progress finish; a kill leaves them to the reaper, which fails
        # them without releasing anything.
        await asyncio.gather(*(slot(n) for n in range(concurrency)))
