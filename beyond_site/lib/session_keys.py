"""Django's cached database sessions, where a session key outside the session alphabet is no session.

Cached (`cached_db`): every request and websocket reads its session, and the cache answers that
read where the database would run a query (bench/README.md, "Issue 30, 2026-12-04"); the database
still holds every session, written at login. The cache is the one every web process shares when
there are several (Redis: settings.py), so a logout is a logout in every process.

Django makes session keys of 32 lowercase ASCII letters and digits, but takes any cookie value of
eight characters or more as a key to look up. A cookie with an escaped NUL (`sessionid="\\000..."`,
which the cookie parser unescapes) then reached PostgreSQL, which cannot hold NUL in text: a
DataError, a 500 on every page for whoever sent it, before any login. Here a key that could not
have been made by Django (other characters, or longer than the column) is no key: the request is
anonymous, as with an unknown key. Every reader of sessions goes through SESSION_ENGINE: the
pages' middleware, the websockets' (Channels) and the body limit's check of a login
(lib/bodies.py).
"""
from __future__ import annotations

import re

from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDatabaseSessionStore

#: Django's own alphabet; at least its minimum length, at most the session table's column.
_KEY = re.compile(f"[{re.escape(VALID_KEY_CHARS)}]{{8,40}}")


def is_session_key(key) -> bool:
    return isinstance(key, str) and _KEY.fullmatch(key) is not None


class SessionStore(CachedDatabaseSessionStore):
    def _validate_session_key(self, key):
        return is_session_key(key)
