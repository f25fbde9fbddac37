"""Database calls from async code (lib/db.py): on their lane's threads, a page's read never behind
a run's write, and a cancelled caller learns of its cancellation only once the call is over."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from beyond_site.lib.db import db

# The lanes' threads are the process's own, kept from test to test: each call checks their
# connections (close_old_connections), which the database guard of pytest-django must allow.
pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_call_runs_on_its_lane_and_a_blocked_lane_holds_up_no_other():
    release = threading.Event()
    names = {}

    def blocked():
        names["runs"] = threading.current_thread().name
        release.wait(5)
        return "written"

    def read(n):
        names["pages"] = threading.current_thread().name
        return n * 2

    writing = asyncio.create_task(db(blocked)())
    await asyncio.sleep(0.05)
    assert await asyncio.wait_for(db(read, lane="pages")(21), 2) == 42  # while the runs' lane is busy
    release.set()
    assert await writing == "written"
    assert names["runs"].startswith("beyond-db-runs") and names["pages"].startswith("beyond-db-pages")


async def test_a_cancelled_caller_hears_of_it_once_the_call_is_over():
    done = []

    def slow():
        time.sleep(0.3)
        done.append(True)

    task = asyncio.create_task(db(slow)())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert done  # the call was over before the cancellation reached the caller


def test_an_unknown_lane_is_refused():
    with pytest.raises(ValueError):
        db(print, lane="elsewhere")


async def test_a_caller_cancelled_twice_still_hears_of_it_only_once_the_call_is_over():
    done = []

    def slow():
        time.sleep(0.4)
        done.append(True)

    task = asyncio.create_task(db(slow)())
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()  # while it waits for the call
    with pytest.raises(asyncio.CancelledError):
        await task
    assert done
