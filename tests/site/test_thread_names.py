"""The process's own threads carry their names into the operating system (runtime/threads.py), so
`top -H`, profilers and bench/load.py can tell the request slots and queues' threads apart."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from django.core.handlers.asgi import ASGIHandler

from beyond_site.runtime.admission import AdmittingASGIHandler
from beyond_site.runtime.threads import named, os_name


def os_name_of_this_thread() -> str:
    with open(f"/proc/self/task/{threading.get_native_id()}/comm") as comm:
        return comm.read().strip()


def test_a_pool_initialised_with_named_numbers_its_threads():
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="x", initializer=named("db-test")) as pool:
        barrier = threading.Barrier(2)

        def both():  # two calls at once: each pool thread answers once
            barrier.wait(5)
            return os_name_of_this_thread()

        names = sorted(f.result() for f in [pool.submit(both), pool.submit(both)])
    assert names == ["db-test-0", "db-test-1"]


def test_a_name_is_cut_to_the_kernels_limit_and_a_refusal_is_harmless(monkeypatch):
    def long_name():
        os_name("a-name-much-longer-than-fifteen")
        return os_name_of_this_thread()

    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(long_name).result() == "a-name-much-lon"

    def refused(*args, **kwargs):
        raise PermissionError("no /proc here")

    monkeypatch.setattr("builtins.open", refused)
    os_name("anything")  # nothing raised: the thread works unnamed


async def test_each_request_slot_thread_is_named_for_the_system(monkeypatch):
    from asgiref.sync import ThreadSensitiveContext, sync_to_async

    async def view(self, request):
        return await sync_to_async(os_name_of_this_thread)()

    monkeypatch.setattr(ASGIHandler, "get_response_async", view)
    handler = AdmittingASGIHandler(limit=2)
    async with ThreadSensitiveContext():
        assert await handler.get_response_async(None) in {"http-0", "http-1"}
