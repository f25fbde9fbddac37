"""Request bodies with bounded memory: too large is refused before it is read.

Two limits (docs/operations.md): BEYOND_MAX_REQUEST_BYTES for a signed-in user or a live API token
(room for the most files the upload view takes at once), BEYOND_MAX_ANONYMOUS_REQUEST_BYTES for
anyone else (a login form is a few hundred bytes). `BodyLimitMiddleware` wraps the site's ASGI application: it answers
413 on a declared Content-Length over the limit before reading anything, and counts the bytes of
the body as they arrive for a body sent without one. Under daphne the server itself also refuses
early, while the body is still arriving (runtime/daphne_bodies.py): the app only ever sees bodies
within the larger limit, and reads them from disk as it goes.
"""
from __future__ import annotations

import json
from importlib import import_module
from collections.abc import Callable
from types import SimpleNamespace

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user
from django.http.cookie import parse_cookie

from beyond_site.lib.inputs import refusal


def max_bytes(*, signed_in: bool) -> int:
    return settings.BEYOND_MAX_REQUEST_BYTES if signed_in else settings.BEYOND_MAX_ANONYMOUS_REQUEST_BYTES


def size(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n // 1024} KB" if n >= 1024 else f"{n} bytes"


#: Paths of the HTTP API, whose errors are application/problem+json (docs/api.md).
API_PATHS = "/api/"


def too_large(*, signed_in: bool, htmx: bool, api: bool = False) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """(headers, body) of the 413 answer; for htmx, the chat's notice (swapped out of band); for
    the API, a problem+json."""
    limit = max_bytes(signed_in=signed_in)
    if signed_in:
        text = (f"Too large: a request may carry at most {size(limit)} (each file at most "
                f"{size(settings.BEYOND_MAX_FILE_BYTES)}). Nothing was received.")
    else:
        text = f"Too large: without a login or a token a request may carry at most {size(limit)}."
    if api:
        data = json.dumps({"type": "about:blank", "title": "Too large", "status": 413, "detail": text}).encode()
        return [(b"content-type", b"application/problem+json"), (b"content-length", str(len(data)).encode())], data
    return refusal(text, htmx=htmx)


def bearer_of(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def session_key_of(cookie_header: str) -> str | None:
    return parse_cookie(cookie_header).get(settings.SESSION_COOKIE_NAME) or None


def signed_in(session_key: str | None) -> bool:
    """Whether the session is a live login (the same check as the authentication middleware's)."""
    if not session_key:
        return False
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return get_user(SimpleNamespace(session=session)).is_authenticated


def _header(scope, name: bytes) -> str:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


class BodyLimitMiddleware:
    """`token_is_live(token)`, where given, says whether an API token is a live one: its bearer gets
    the signed-in limit, as a live session does."""

    def __init__(self, app, *, token_is_live: Callable[[str], bool] | None = None):
        self.app, self.token_is_live = app, token_is_live

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        await _Guarded(self.app, scope, receive, send, self.token_is_live).run()


class _Guarded:
    """One request: the limit it gets, the bytes it sent, and the 413 once it went over."""

    def __init__(self, app, scope, receive, send, token_is_live=None):
        self.app, self.scope, self._receive, self._send = app, scope, receive, send
        self.token_is_live = token_is_live
        self.received = 0
        self.signed_in: bool | None = None  # asked of the session store only when it matters
        self.answered = False
        self.app_answering = False

    async def run(self) -> None:
        length = _header(self.scope, b"content-length")
        declared = int(length) if length.isascii() and length.isdigit() else None  # not "²"
        if declared is not None and await self._over(declared):
            return await self._refuse()
        await self.app(self.scope, self.receive, self.send)

    async def _over(self, n: int) -> bool:
        if n <= max_bytes(signed_in=False):
            return False
        if self.signed_in is None:
            key = session_key_of(_header(self.scope, b"cookie"))
            token = bearer_of(_header(self.scope, b"authorization"))
            if key:
                self.signed_in = await sync_to_async(signed_in)(key)
            elif token and self.token_is_live is not None:
                self.signed_in = await sync_to_async(self.token_is_live)(token)
            else:
                self.signed_in = False
        return n > max_bytes(signed_in=self.signed_in)

    async def receive(self):
        if self.answered:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body") or b"")
            if await self._over(self.received):
                await self._refuse()
                return {"type": "http.disconnect"}  # the app stops reading and answers nothing
        return message

    async def send(self, message):
        if not self.answered:
            self.app_answering = True
            await self._send(message)

    async def _refuse(self) -> None:
        if self.answered or self.app_answering:
            self.answered = True
            return
        self.answered = True
        htmx = _header(self.scope, b"hx-request") == "true"
        api = self.scope.get("path", "").startswith(API_PATHS)
        headers, body = too_large(signed_in=bool(self.signed_in), htmx=htmx, api=api)
        await self._send({"type": "http.response.start", "status": 413, "headers": headers})
        await self._send({"type": "http.response.body", "body": body})
