"""Who is on the other end of a websocket, looked up after the handshake, on the pages' lane.

Kept instead of Channels' own stack for a measured reason: under a burst of 100 pages on
PostgreSQL, the stock lookup before the handshake let daphne drop 27 of them (bench/load.py).

Channels' AuthMiddleware reads the session and the user before the handshake completes, on the
process's single shared "thread-sensitive" thread: a hundred pages opening at once queue there one
by one, each waiting for a database connection, and under a burst of submissions the last ones
wait past daphne's 5 s handshake limit and are dropped (bench/load.py found 27 of 100 on
PostgreSQL). Here the middleware only prepares the lazy user; the consumer accepts, then resolves
it on the pages' database lane (lib/db.py), several at a time, where a busy database is answered
like any other refusal: "try again" (close code 1013), and htmx reconnects. Nothing is sent
before the user is known and allowed.
"""
from __future__ import annotations

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.utils.functional import empty

from beyond_site.lib.db import db

_lookup_user = db(get_user.func, lane="pages")


class DeferredAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope):
        return  # resolved by the consumer, after the handshake: `resolve_user`


async def resolve_user(scope) -> None:
    if scope["user"]._wrapped is empty:
        scope["user"]._wrapped = await _lookup_user(scope)


def AuthMiddlewareStack(inner):  # noqa: N802  (named like the Channels stack it replaces)
    return CookieMiddleware(SessionMiddleware(DeferredAuthMiddleware(inner)))
