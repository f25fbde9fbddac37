"""One way to hold a piece of background work: a row claimed by one runner, with a lease it renews.

Runs, calibration reports and files being read each keep two columns, `lease_owner` (the runner's
identity, lib/runners.py) and `lease_expires_at`. A runner takes a row with a conditional UPDATE
and holds it only if exactly one row changed (healthchecks' `sendalerts` claims its work the same
way: portable across SQLite and PostgreSQL, and two claimers never both win). While it works it
renews the lease; every write it makes is conditional on still being the owner, so a runner that
lost its row (to a reaper) writes nothing more. A row whose lease ran out, or whose runner is
known dead, is abandoned: the kind of work decides what that means (a run fails as interrupted,
a file is marked failed, a report can be resumed).

A job-engine worker may claim without a lease (`leased=False`): the engine's own heartbeats say
whether it is alive (docs/operations.md, "Scaled mode").
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from beyond_site.lib.runners import HOST, runner_gone

log = logging.getLogger("beyond.leases")


def duration() -> timedelta:
    """How long a claim lasts unless renewed (BEYOND_RUN_LEASE_S; renewed every BEYOND_RUN_HEARTBEAT_S)."""
    return timedelta(seconds=settings.BEYOND_RUN_LEASE_S)


def lease_fields(owner: str, *, leased: bool = True) -> dict:
    """The columns of a row claimed by `owner` now."""
    return {"lease_owner": owner, "lease_expires_at": timezone.now() + duration() if leased else None}


def claim(claimable: QuerySet, owner: str, *, leased: bool = True, **fields) -> bool:
    """Take the one row `claimable` selects (filtered by the caller to what may be taken), setting
    `fields` with the lease; True only if exactly this one row changed."""
    return claimable.update(**lease_fields(owner, leased=leased), **fields) == 1


def held(rows: QuerySet, owner: str) -> QuerySet:
    """The rows of `rows` that `owner` still holds: every write of a lease holder goes through this."""
    return rows.filter(lease_owner=owner)


def renew(rows: QuerySet, owner: str) -> bool:
    """Extend `owner`'s lease on the row `rows` selects; False when it no longer holds it."""
    return held(rows, owner).update(lease_expires_at=timezone.now() + duration()) == 1


def abandoned(rows: QuerySet) -> list[tuple[int, str]]:
    """(pk, owner) of the rows of `rows` (filtered by the caller to work in progress) that nobody
    is working on any more: their lease ran out, or their runner was of this machine and is gone."""
    expired = Q(lease_expires_at__lt=timezone.now())
    ours = Q(lease_owner__startswith=f"{HOST}:")
    return [(pk, owner) for pk, owner, expires in rows.filter(expired | ours)
            .values_list("pk", "lease_owner", "lease_expires_at") if lapsed(owner, expires)]


def lapsed(owner: str | None, expires_at, *, without_lease: bool = False) -> bool:
    """Whether the work `owner` holds until `expires_at` is abandoned: its lease ran out, or its
    runner was of this machine and is gone. `without_lease`: what work with no lease at all is (a
    run a job-engine worker holds has none and is not abandoned for it)."""
    if expires_at is None:
        return without_lease or runner_gone(owner)
    return expires_at < timezone.now() or runner_gone(owner)


@contextlib.asynccontextmanager
async def holding(renew_now: Callable[[], Awaitable[bool]], *, name: str) -> AsyncIterator[asyncio.Event]:
    """Renew a lease every BEYOND_RUN_HEARTBEAT_S while the block runs; yields an event set once
    the lease is lost (`renew_now` answered False). A failed renewal (a busy database) is no
    reason to give the work up: it is tried again at the next beat."""
    lost = asyncio.Event()

    async def beat() -> None:
        while True:
            await asyncio.sleep(settings.BEYOND_RUN_HEARTBEAT_S)
            try:
                if not await renew_now():
                    lost.set()
                    return
            except Exception:
                log.warning("%s: could not renew its lease", name, exc_info=True)

    task = asyncio.create_task(beat())
    try:
        yield lost
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
