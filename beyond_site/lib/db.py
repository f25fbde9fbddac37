"""Database calls from async code, off the event loop and off one another's backs.

Channels' `database_sync_to_async` runs every call of a process on one shared thread by default:
under load, every run's event writes and every websocket's reads queue there. Here they run on
pools of threads instead, each thread keeping its connection (or borrowing from the pool on
PostgreSQL), in separate lanes:

- "runs": what runs do (their events written, their context read); BEYOND_DB_THREADS threads;
- "pages": what live pages read (a websocket's access check, snapshot and tail), so a page's
  handshake never waits behind a hundred runs' writes; BEYOND_DB_PAGE_THREADS threads;
- "background": the periodic check of the record, which may take minutes, on a thread of its own.

A run still records its events in order: it awaits each batch's write before the next
(runs/recorder.py).

A call is handed to its lane directly (`run_in_executor`), with the database connection checks
Channels' `database_sync_to_async` makes around it (`close_old_connections` before and after).
asgiref's general machinery behind that one (choosing a thread, copying every context variable
there and back) cost the event loop more than a page's read itself; these functions need
neither: they take their arguments and touch only the database.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections

from beyond_site.lib.threads import named

_executors: dict[str, ThreadPoolExecutor] = {}
LANES = ("runs", "pages", "background")


def _threads(lane: str) -> int:
    return {"runs": settings.BEYOND_DB_THREADS, "pages": settings.BEYOND_DB_PAGE_THREADS, "background": 1}[lane]


def _pool(lane: str) -> ThreadPoolExecutor:
    if lane not in _executors:
        _executors[lane] = ThreadPoolExecutor(max_workers=_threads(lane), thread_name_prefix=f"beyond-db-{lane}",
                                              initializer=named(f"db-{lane}"))
    return _executors[lane]


def _with_connections(func, args, kwargs):
    close_old_connections()
    try:
        return func(*args, **kwargs)
    finally:
        close_old_connections()


def db(func, lane: str = "runs"):
    """`func` (sync, touching the database) as an awaitable run on the lane's threads. Cancelling
    the caller cannot stop a call already running: the cancellation is raised once it is over, so
    nothing it writes comes after the caller has stopped."""
    if lane not in LANES:
        raise ValueError(f"unknown database lane {lane!r}")

    @functools.wraps(func)
    async def on_lane(*args, **kwargs):
        running = asyncio.get_running_loop().run_in_executor(_pool(lane), _with_connections, func, args, kwargs)
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            while not running.done():  # cancelled again meanwhile: still wait for the call
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait([running])
            raise

    return on_lane
