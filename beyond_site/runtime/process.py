"""The one place a process of Beyond starts what it runs besides requests, once and in order.

A web process (beyond_site/asgi.py calls `start_web_process` as it loads the application):

1. the body limits and the access log's cleaning, when daphne serves (`daphne_bodies`: too large
   bodies refused as they arrive; `daphne_access`: no token in an access log line);
2. the warm-up, when daphne's command line serves, before it listens (`warmup`);
3. once its event loop runs (daphne's reactor says when; a server that speaks ASGI's lifespan
   protocol, such as uvicorn, says so with its startup message),
   the home of the background work deferred by this process's requests (runs/jobs.py), the
   sweeper that takes up what runners left behind (runs/runner.py) and the periodic check of the
   record (runs/chain.py). The last two only in the embedded mode: in the scaled mode the
   workers' housekeeping does both.

A worker process: `beyond_worker` (management/commands), which warms up with `WORKER_PARTS`.
"""
from __future__ import annotations

import asyncio
import logging
import sys


from beyond_site.runs import chain, jobs
from beyond_site.runs.runner import sweep_forever
from beyond_site.runtime import daphne_access, daphne_bodies, warmup
from beyond_site.runtime.embedded import QueueThreads

log = logging.getLogger("beyond.runtime")

_background: dict[asyncio.AbstractEventLoop, list[asyncio.Task]] = {}


def start_web_process() -> None:
    """Steps 1 and 2 now (the application is loading), step 3 when the event loop runs."""
    daphne_bodies.install()
    daphne_access.install()
    if warmup.daphne_serves():
        warmup.prepare_process()
    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is not None and hasattr(reactor, "callWhenRunning"):
        # The reactor calls its "when running" callbacks before its asyncio loop runs: the
        # background starts at the loop's first turn (before the first connection is served).
        reactor.callWhenRunning(reactor.callLater, 0, lambda: start_background(asyncio.get_running_loop()))


def start_background(loop: asyncio.AbstractEventLoop) -> None:
    """Step 3, on `loop`; nothing when it already ran there."""
    if loop in _background:
        return
    jobs.serve_here(loop, QueueThreads().run_sync)
    tasks = []
    if not jobs.engine_enabled():
        tasks = [jobs.spawn(sweep_forever()), jobs.spawn(chain.check_periodically())]
    _background[loop] = tasks
    log.info("background work on this process's loop (%s)", "embedded" if tasks else "scaled mode: queued for workers")


async def stop_background(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what `start_background` started on `loop` (a test's loop about to close)."""
    tasks = _background.pop(loop, [])
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class Lifespan:
    """ASGI's lifespan protocol, which Channels' router does not speak: step 3 at the server's
    startup message (uvicorn, hypercorn), its background work cancelled at shutdown."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "lifespan":
            return await self.app(scope, receive, send)
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                start_background(asyncio.get_running_loop())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await stop_background(asyncio.get_running_loop())
                await send({"type": "lifespan.shutdown.complete"})
                return
