"""When the database turns a request away (no free connection in the pool, the server's own
connection limit reached), the member gets "busy, try again" and nothing changed, not a 500."""
from __future__ import annotations

import logging

from django.db import OperationalError
from django.http import HttpResponse
from psycopg_pool import PoolTimeout

log = logging.getLogger("beyond.busy")

BUSY = "Beyond is busy right now: nothing was changed. Try again in a moment."
#: What a refused database connection looks like, whichever layer refused it.
REFUSALS = (PoolTimeout, OperationalError)


def is_refusal(exc: BaseException) -> bool:
    """A connection the database would not give (busy), as opposed to a bug in a query."""
    if isinstance(exc, PoolTimeout):
        return True
    text = str(exc).lower()
    return isinstance(exc, OperationalError) and any(
        sign in text for sign in ("too many clients", "connection refused", "couldn't get a connection",
                                  "remaining connection slots", "database is locked", "server closed the connection"))


class BusyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_refusal(exception):
            return None
        log.warning("database busy on %s %s: %s", request.method, request.path, exception)
        response = HttpResponse(BUSY, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "5"
        return response
