"""The one door for work off a request (runs/jobs.py): deferred by name, run where the deployment
says, after the caller's transaction commits, fairly shared between members."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import transaction

from beyond_site.lib.runners import runner_identity
from beyond_site.runs import jobs
from beyond_site.runs.jobs import Job
from beyond_site.runtime.embedded import FairThreads, QueueThreads

pytestmark = pytest.mark.django_db(transaction=True)

seen: list = []
left_behind: list = []  # what the task below reports as pending, for the sweeps (empty but in one test)


@jobs.task("tests.remember", queue=jobs.HOUSEKEEPING_QUEUE, pending=lambda: list(left_behind))
async def remember(job: Job, value: str) -> None:
    seen.append((value, job.owner, job.leased, threading.current_thread() is threading.main_thread()))


@jobs.task("tests.remember_in_a_thread", queue=jobs.FILES_QUEUE, share_key=lambda value, member: member)
def remember_in_a_thread(job: Job, value: str, member: int) -> None:
    seen.append((value, member, threading.current_thread().name))


@pytest.fixture(autouse=True)
def clean():
    seen.clear()
    yield
    jobs.serve_here(None)


async def _until(check, timeout: float = 5.0):
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


def test_a_deferred_task_runs_on_the_servers_loop_once_the_transaction_commits():
    async def scenario():
        jobs.serve_here(asyncio.get_running_loop())

        def defer_in_a_transaction():
            with transaction.atomic():
                jobs.defer("tests.remember", value="committed")
                time.sleep(0.1)
                assert seen == []  # not before the commit

        await sync_to_async(defer_in_a_transaction)()
        await _until(lambda: seen)

    asyncio.run(scenario())
    assert seen == [("committed", runner_identity(), True, True)]


def test_a_task_deferred_in_a_transaction_that_rolls_back_never_runs():
    async def scenario():
        jobs.serve_here(asyncio.get_running_loop())

        def rolled_back():
            with pytest.raises(RuntimeError), transaction.atomic():
                jobs.defer("tests.remember", value="rolled back")
                raise RuntimeError

        await sync_to_async(rolled_back)()
        await asyncio.sleep(0.2)

    asyncio.run(scenario())
    assert seen == []


def test_a_sync_task_runs_on_its_queues_threads_never_on_the_loop():
    async def scenario():
        jobs.serve_here(asyncio.get_running_loop(), QueueThreads().run_sync)
        await sync_to_async(jobs.defer)("tests.remember_in_a_thread", value="read", member=7)
        await _until(lambda: seen)

    asyncio.run(scenario())
    [(value, member, thread)] = seen
    assert (value, member) == ("read", 7) and thread.startswith("beyond-files")


def test_a_process_that_serves_no_loop_defers_nothing_and_the_sweeps_find_the_work_left():
    jobs.defer("tests.remember", value="now?")
    assert seen == [] and not jobs.executes_here()
    left_behind.append({"value": "left"})
    try:
        assert ("tests.remember", {"value": "left"}) in jobs.pending_work()
    finally:
        left_behind.clear()


def test_run_now_does_the_task_in_the_foreground():
    jobs.run_now("tests.remember", value="here")
    assert seen[0][:3] == ("here", runner_identity(), True)


def test_one_members_batch_never_holds_every_thread():
    pool = FairThreads("fair", threads=2, per_key=1)
    release = threading.Event()
    order, started = [], threading.Semaphore(0)

    def work(name):
        def run():
            order.append(name)
            started.release()
            if name.startswith("alice"):
                release.wait(5)
        return run

    for n in range(5):
        pool.submit("alice", work(f"alice-{n}"))
    pool.submit("bob", work("bob-0"))
    assert started.acquire(timeout=5) and started.acquire(timeout=5)
    # Alice's first file holds one thread; her others wait their turn; Bob's file takes the other.
    assert sorted(order) == ["alice-0", "bob-0"]
    release.set()
    for _ in range(4):
        assert started.acquire(timeout=5)
    assert order[2:] == ["alice-1", "alice-2", "alice-3", "alice-4"]


def test_an_unknown_queue_is_refused_when_the_task_is_registered():
    with pytest.raises(ValueError, match="unknown queue"):
        jobs.task("tests.nowhere", queue="elsewhere")(lambda job: None)
