"""Group commit: the batches of events that runs of this process have waiting are written together.

Every run awaits the write of its batch before it produces the next, so under load many runs wait
at once for the runs' database lane (lib/db.py). Instead of one trip to the lane and one
transaction per batch, a writer takes every batch waiting when the lane is free and writes them
in one transaction (runs/recorder.py, `record_together`): one lease check for all, one insert per
table. Alone, a batch is written as before, as soon as it comes; the batches that arrive while a
group is being written form the next group. Each run still gets its own result, and still rings
its own doorbell once its batch is committed (docs/architecture.md, "Record, then ring").
"""
from __future__ import annotations

import asyncio
import contextvars
import weakref

from django.conf import settings

from pipeline.events import Event
from beyond_site.lib.db import db
from beyond_site.runs.recorder import EventRecorder, Recorded, record_together

#: The most batches written in one transaction: SQLite's writers wait for its end (a submission's
#: write among them), and its batches' doorbells wait for its commit.
GROUP_MAX = 50


class GroupWriter:
    """Writes the batches given to `record` in groups, at most `lanes` groups at a time (the runs'
    lane threads: one on SQLite, which takes one writer at a time)."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.waiting: list[tuple[object, list[Event], asyncio.Future]] = []
        self.writing = 0
        self.groups = 0  # groups written, and batches in them: what a benchmark reports
        self.batches = 0

    async def record(self, source, events: list[Event]) -> Recorded:
        """Write `events` for `source` (anything with a `recorder()` method that gives its run's
        EventRecorder, called on the lane's thread); the recorder's result or its exception."""
        future = asyncio.get_running_loop().create_future()
        self.waiting.append((source, events, future))
        if self.writing < self.lanes:
            self.writing += 1
            # A fresh context: the writer outlives the run that started it (see runs/services.py, `_spawn`).
            task = asyncio.get_running_loop().create_task(self._write_waiting(), context=contextvars.Context())
            _tasks.add(task)
            task.add_done_callback(_tasks.discard)
        return await future

    async def _write_waiting(self) -> None:
        try:
            while self.waiting:
                group, self.waiting = self.waiting[:GROUP_MAX], self.waiting[GROUP_MAX:]
                try:
                    results = await db(_write)([(source, events) for source, events, _ in group])
                except BaseException as exc:  # the lane itself failed: every batch of the group failed
                    results = [exc] * len(group)
                    if not isinstance(exc, Exception):
                        _settle(group, results)
                        raise
                self.groups += 1
                self.batches += len(group)
                _settle(group, results)
        finally:
            self.writing -= 1


def _settle(group, results) -> None:
    for (_, _, future), result in zip(group, results):
        if future.done():  # its run was cancelled meanwhile
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)


def _write(batches: list[tuple[object, list[Event]]]) -> list[Recorded | Exception]:
    """On the lane's thread: each source's recorder (a run's first batch makes it, reading the
    run: a failure there is that batch's alone), then the group."""
    results: list[Recorded | Exception | None] = [None] * len(batches)
    ready: list[tuple[int, EventRecorder, list[Event]]] = []
    for n, (source, events) in enumerate(batches):
        try:
            ready.append((n, source.recorder(), events))
        except Exception as exc:
            results[n] = exc
    written = record_together([(recorder, events) for _, recorder, events in ready])
    for (n, _, _), result in zip(ready, written):
        results[n] = result
    return results


_writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, GroupWriter] = weakref.WeakKeyDictionary()
_tasks: set[asyncio.Task] = set()  # the loop keeps only weak references to tasks


def writer() -> GroupWriter:
    """This event loop's writer (call from the loop)."""
    loop = asyncio.get_running_loop()
    if loop not in _writers:
        _writers[loop] = GroupWriter(settings.BEYOND_DB_THREADS)
    return _writers[loop]
