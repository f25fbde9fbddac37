"""How many HTTP requests Django works on at once in this process (docs/operations.md, "Throughput").

Under ASGI every request's synchronous part (the middleware, the view) gets a thread of its own.
A burst of a hundred submissions makes a hundred threads that all want the one interpreter lock:
each of them, the event loop and the database lanes then wait behind all the others at every
switch, so a write transaction that should take milliseconds holds SQLite's lock for seconds and
the requests after it are refused as busy. Here requests past the limit wait their turn on the
event loop instead, where waiting costs nothing.

The slot is taken after the body has been read and given back before a streamed response is
sent, so a slow client (an upload trickling in, a large download) never holds one.
"""
from __future__ import annotations

import asyncio

import django
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler


class AdmittingASGIHandler(ASGIHandler):
    """Django's ASGI handler, working on at most `limit` requests at a time (first come, first served)."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("the request limit must be at least 1")
        super().__init__()
        self.limit = limit
        self._slots = asyncio.Semaphore(limit)

    async def get_response_async(self, request):
        async with self._slots:
            return await super().get_response_async(request)


def asgi_application() -> AdmittingASGIHandler:
    """What `django.core.asgi.get_asgi_application` does, with the bounded handler
    (settings.BEYOND_HTTP_CONCURRENCY requests at a time)."""
    django.setup(set_prefix=False)
    return AdmittingASGIHandler(settings.BEYOND_HTTP_CONCURRENCY)
