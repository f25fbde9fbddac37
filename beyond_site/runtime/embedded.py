"""The embedded mode's threads for sync background work (reading a file in a subprocess): a few
per queue, shared fairly between members, the memory a task freed given back to the system.

Async tasks run on the server's loop and need none of this (runs/jobs.py hands them over); the
runtime gives `run_sync` to runs/jobs.py as it starts the background (runtime/process.py).
"""
from __future__ import annotations

import collections
import ctypes
import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings

from beyond_site.runs.jobs import EXPORTS_QUEUE, FILES_QUEUE, Job, Task, run_sync_task
from beyond_site.runtime.threads import named

log = logging.getLogger("beyond.jobs")

#: Threads per queue for sync tasks, by the setting that says how many; one for any other queue.
THREADS = {FILES_QUEUE: "BEYOND_FILE_READERS", EXPORTS_QUEUE: "BEYOND_EXPORT_WRITERS"}


class FairThreads:
    """A queue's threads, shared fairly: at most `per_key` tasks of one key (one member's files)
    at once, the others of that key waiting their turn, so one member's ten workbooks never hold
    every thread while another member's one file waits."""

    def __init__(self, name: str, threads: int, per_key: int):
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"beyond-{name}",
                                        initializer=named(name))
        self._per_key, self._running = per_key, collections.Counter()
        self._waiting: collections.OrderedDict[Any, collections.deque] = collections.OrderedDict()
        self._lock = threading.Lock()

    def submit(self, key, func: Callable[[], Any]) -> None:
        with self._lock:
            if self._running[key] < self._per_key:
                self._start(key, func)
            else:
                self._waiting.setdefault(key, collections.deque()).append(func)

    def _start(self, key, func) -> None:
        self._running[key] += 1
        self._pool.submit(self._run, key, func)

    def _run(self, key, func) -> None:
        try:
            func()
        except Exception:
            log.exception("background task failed")
        finally:
            with self._lock:
                self._running[key] -= 1
                queue = self._waiting.get(key)
                if queue:
                    self._start(key, queue.popleft())
                    if not queue:
                        del self._waiting[key]


class QueueThreads:
    """Each queue's FairThreads, made on first use; `run_sync` for runs/jobs.py `serve_here`."""

    def __init__(self):
        self._threads: dict[str, FairThreads] = {}
        self._lock = threading.Lock()

    def run_sync(self, found: Task, job: Job, kwargs: dict) -> None:
        key = found.share_key(**kwargs) if found.share_key else None
        self._for(found.queue).submit(key, functools.partial(_in_thread, found.func, job, kwargs))

    def _for(self, queue: str) -> FairThreads:
        with self._lock:
            if queue not in self._threads:
                self._threads[queue] = FairThreads(queue, getattr(settings, THREADS.get(queue, ""), 1),
                                                   settings.BEYOND_FILE_READERS_PER_MEMBER)
            return self._threads[queue]


def _in_thread(func, job: Job, kwargs: dict) -> None:
    try:
        run_sync_task(func, job, kwargs)
    finally:
        _give_memory_back()


def _give_memory_back() -> None:
    """Return the heap a task freed to the system: a file's text read on a queue's thread left its
    peak resident in that thread's malloc arena (bench/request_memory.py: +22 MB after a 4.5 MB
    text file was read, and no later request reused it). glibc only; elsewhere nothing."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


try:
    _LIBC = ctypes.CDLL("libc.so.6")
    _LIBC.malloc_trim  # noqa: B018  (glibc has it; musl and macOS do not)
except (OSError, AttributeError):
    _LIBC = None
