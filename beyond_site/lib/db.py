"""Database calls from async code, off the event loop and off one another's backs.

Channels' `database_sync_to_async` runs every call of a process on one shared thread by default:
under load, every run's event writes and every websocket's reads queue there. Here they run on a
pool of threads instead, each keeping its connection (or borrowing from the pool on PostgreSQL),
so a run's writes never wait behind another run's, nor a page's reads behind either. A run still
records its events in order: it awaits each batch's write before the next (runs/recorder.py).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from channels.db import database_sync_to_async
from django.conf import settings

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.BEYOND_DB_THREADS, thread_name_prefix="beyond-db")
    return _executor


def db(func):
    """`func` (sync, touching the database) as an awaitable run on the database thread pool."""
    return database_sync_to_async(func, thread_sensitive=False, executor=_pool())
