"""How many HTTP requests Django works on at once in this process (bench/README.md, "Throughput").

Under ASGI every request's synchronous part (the middleware, the view) gets a thread of its own.
A burst of a hundred submissions makes a hundred threads that all want the one interpreter lock:
each of them, the event loop and the database lanes then wait behind all the others at every
switch, so a write transaction that should take milliseconds holds SQLite's lock for seconds and
the requests after it are refused as busy. Here requests past the limit wait their turn on the
event loop instead, where waiting costs nothing.

The slot is taken after the body has been read and given back before a streamed response is
sent, so a slow client (an upload trickling in, a large download) never holds one.

Each slot is also a thread that stays: Django would run every request on a thread of its own,
made for it, and each new thread opens its own database connection (on SQLite a new connection
and its set-up statements; on PostgreSQL a connection borrowed from the pool). A slot's thread
keeps its connection from one request to the next, checked at the end of each as Django's own
end-of-request handler does (`close_old_connections`). What a request does outside its slot
(Django's request-started and request-finished signals, closing the response) runs on one more
thread that stays, shared by all requests: Django would make a thread for it per request, and
another to join that one, both started from the event loop, which waits for each to start.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import django
from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.db import close_old_connections

from beyond_site.runtime.threads import os_name


class AdmittingASGIHandler(ASGIHandler):
    """Django's ASGI handler, working on at most `limit` requests at a time (first come, first served)."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("the request limit must be at least 1")
        super().__init__()
        self.limit = limit
        self._slots = asyncio.Semaphore(limit)
        # One thread per slot; a request holding a slot holds one of them (taken and given back
        # on the event loop, so no lock is needed).
        self._threads = [ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"beyond-http-{k}",
                                            initializer=os_name, initargs=(f"http-{k}",))
                         for k in range(limit)]
        self._edge = ThreadPoolExecutor(max_workers=1, thread_name_prefix="beyond-http-edge",
                                        initializer=os_name, initargs=("http-edge",))

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await super().__call__(scope, receive, send)  # refused, as Django does
        # The calls outside a slot are short (signals, closing a response held in memory: no view
        # streams), so one thread serves them all.
        async with ThreadSensitiveContext(executor=self._edge):
            await self.handle(scope, receive, send)

    async def get_response_async(self, request):
        async with self._slots:
            thread = self._threads.pop()
            try:
                # Every synchronous part of this request (middleware, view) runs on the slot's thread.
                async with ThreadSensitiveContext(executor=thread):
                    try:
                        return await super().get_response_async(request)
                    finally:
                        # On the slot's thread itself, not through sync_to_async: when the client
                        # leaves mid-request, the context asgiref restores after the cancelled call
                        # can name the executor of a sync middleware's frame that has just quit,
                        # and sync_to_async would refuse to run there.
                        await asyncio.get_running_loop().run_in_executor(thread, close_old_connections)
            finally:
                self._threads.append(thread)


def asgi_application() -> AdmittingASGIHandler:
    """What `django.core.asgi.get_asgi_application` does, with the bounded handler
    (settings.BEYOND_HTTP_CONCURRENCY requests at a time)."""
    django.setup(set_prefix=False)
    return AdmittingASGIHandler(settings.BEYOND_HTTP_CONCURRENCY)
