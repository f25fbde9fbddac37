"""Django works on at most BEYOND_HTTP_CONCURRENCY requests at once; the rest wait their turn."""
from __future__ import annotations

import asyncio

import pytest
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpResponse

from beyond_site.runtime.admission import AdmittingASGIHandler


async def test_requests_past_the_limit_wait_their_turn_and_are_all_answered(monkeypatch):
    working, most = 0, 0

    async def slow_view(self, request):
        nonlocal working, most
        working += 1
        most = max(most, working)
        await asyncio.sleep(0.02)
        working -= 1
        return HttpResponse(str(request))

    monkeypatch.setattr(ASGIHandler, "get_response_async", slow_view)
    handler = AdmittingASGIHandler(limit=2)
    answers = await asyncio.gather(*(handler.get_response_async(n) for n in range(7)))
    assert [a.content for a in answers] == [str(n).encode() for n in range(7)]
    assert most == 2


async def test_a_request_that_fails_gives_its_place_back(monkeypatch):
    async def broken(self, request):
        raise RuntimeError("the view broke")

    monkeypatch.setattr(ASGIHandler, "get_response_async", broken)
    handler = AdmittingASGIHandler(limit=1)
    for _ in range(3):  # a lost place would leave the next request waiting for ever
        with pytest.raises(RuntimeError):
            await asyncio.wait_for(handler.get_response_async(None), timeout=1)


def test_the_limit_must_let_a_request_in():
    with pytest.raises(ValueError):
        AdmittingASGIHandler(limit=0)


def test_the_site_is_served_by_the_admitting_handler():
    from beyond_site.asgi import django_asgi_app
    assert isinstance(django_asgi_app, AdmittingASGIHandler) and django_asgi_app.limit >= 1


@pytest.mark.django_db(transaction=True)
async def test_a_slot_keeps_its_thread_and_its_database_connection_from_one_request_to_the_next(monkeypatch):
    import threading

    from asgiref.sync import ThreadSensitiveContext, sync_to_async
    from django.db import connection

    def where():
        connection.ensure_connection()
        return threading.get_ident(), id(connection.connection)

    async def view(self, request):
        return await sync_to_async(where)()  # thread-sensitive, as Django runs middleware and views

    monkeypatch.setattr(ASGIHandler, "get_response_async", view)
    handler = AdmittingASGIHandler(limit=1)

    async def request():
        async with ThreadSensitiveContext():  # as Django's handler enters one per request
            return await handler.get_response_async(None)

    first, second = [await request() for _ in range(2)]
    assert first == second  # the same thread, still connected: no new connection per request
    assert first[0] != threading.get_ident()


@pytest.mark.django_db(transaction=True)
async def test_what_a_request_does_outside_its_slot_runs_on_one_thread_that_stays(monkeypatch):
    """Django's handler would make a thread per request for its signals and the response's close
    (and one more to join it), started from the event loop."""
    import threading

    from django.core.signals import request_finished, request_started

    seen = []

    def note(**kwargs):
        seen.append(threading.current_thread().name)

    async def view(self, request):
        return HttpResponse("ok")

    monkeypatch.setattr(ASGIHandler, "get_response_async", view)
    request_started.connect(note)
    request_finished.connect(note)
    try:
        handler = AdmittingASGIHandler(limit=2)
        for _ in range(3):
            sent, bodies = [], [{"type": "http.request", "body": b"", "more_body": False}]

            async def receive():
                if bodies:
                    return bodies.pop()
                await asyncio.Event().wait()  # the client stays: Django cancels this once answered

            async def send(message):
                sent.append(message)

            scope = {"type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": [],
                     "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
            await handler(scope, receive, send)
            assert sent[0]["status"] == 200 and sent[-1]["body"] == b"ok"
    finally:
        request_started.disconnect(note)
        request_finished.disconnect(note)
    assert len(seen) == 6 and len(set(seen)) == 1 and seen[0].startswith("beyond-http-edge")


@pytest.mark.django_db(transaction=True)
async def test_a_request_cancelled_inside_a_sync_middleware_still_checks_its_connection_on_its_slot(monkeypatch):
    """A client that leaves mid-request cancels it. If that lands while a synchronous middleware's
    frame is waiting on the async rest of the chain, the context asgiref restores can name that
    frame's executor, which quits a moment later: the end-of-request check must not go through it
    (it did, and the request ended with "CurrentThreadExecutor already quit or is broken")."""
    import threading

    from asgiref.current_thread_executor import CurrentThreadExecutor
    from asgiref.sync import AsyncToSync

    from beyond_site.runtime import admission

    checked = []
    monkeypatch.setattr(admission, "close_old_connections",
                        lambda: checked.append(threading.current_thread().name))

    async def cancelled_in_a_sync_frame(self, request):
        quit_executor = await asyncio.to_thread(CurrentThreadExecutor, None)  # a sync frame's thread
        quit_executor._broken = True
        AsyncToSync.executors.current = quit_executor
        raise asyncio.CancelledError

    monkeypatch.setattr(ASGIHandler, "get_response_async", cancelled_in_a_sync_frame)
    handler = AdmittingASGIHandler(limit=1)
    for _ in range(2):  # and the slot is given back
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(handler.get_response_async(None), timeout=1)
    assert len(checked) == 2 and all(name.startswith("beyond-http-0") for name in checked)
