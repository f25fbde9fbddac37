"""Daphne with bounded request memory: refuse too large bodies while they arrive, never parse
them, and hand them to the application from disk as it reads.

Measured with bench/request_memory.py: daphne 4.2 (on Twisted 26) took 720 MB above idle for an
anonymous 60 MB POST and 1.9 GB for a 150 MB upload, for three reasons, all fixed here:

1. Twisted's `Request.requestReceived` parses every multipart or urlencoded POST body into
   `Request.args` with the email parser, whole and in memory, about twelve times its size. Daphne
   never reads `args`; the parsing is switched off (`_parsePOSTFormSubmission`).
2. Daphne then pushes the whole body onto the application's queue at once, in 8 KB messages,
   whatever the application does with them (a known upstream limitation). Here the application
   pulls the body instead: each `receive()` reads the next piece from the file Twisted wrote it
   to, so no more than one piece is in memory, and an application that answers 413 reads none.
3. Nothing refused a body before it was received in full. Here the request refuses one over its
   limit (lib/bodies.py) as soon as its Content-Length is known, or as soon as the bytes that
   arrived pass the limit, with a 413; the rest of the body is read and thrown away for a few
   seconds (so the client can read the answer) and the connection is then closed. Without a
   session cookie or API token the anonymous limit applies; with one, the larger limit, and the
   application's middleware checks the session or token itself before reading anything.

`install()` points daphne's HTTP factory at `BoundedRequest`; beyond_site/asgi.py calls it when
daphne is the server. It leans on daphne's internals (WebRequest, Server.create_application,
`connections`), pinned in requirements.txt; tests/site/test_request_bodies.py runs the real server.
"""
from __future__ import annotations

import asyncio
import logging
import sys
from functools import partial

from django.conf import settings

from beyond_site.lib.bodies import API_PATHS, bearer_of, max_bytes, too_large

log = logging.getLogger("beyond.http")

#: Bytes handed to the application per receive().
PIECE = 64 * 1024
#: How long a refused request's remaining body is read and dropped before the connection closes.
LINGER_S = 5.0


class BodyFeed:
    """The application's `receive` for one request: the body from the request's content file, a
    piece per call, then whatever daphne reports (a disconnect). Also stands in for daphne's input
    queue, whose `put_nowait` daphne calls with the body and the disconnect."""

    def __init__(self, request):
        self.request = request
        self.offset = 0
        self.body_sent = False
        self.body_ready = asyncio.Event()
        self.inbox: asyncio.Queue = asyncio.Queue()

    def put_nowait(self, message: dict) -> None:
        if message["type"] == "http.request":
            # Daphne's copy of the body is dropped piece by piece; the application reads the file.
            if not message.get("more_body"):
                self.body_ready.set()
            return
        self.inbox.put_nowait(message)

    async def receive(self) -> dict:
        if not self.body_sent:
            await self.body_ready.wait()
            try:
                content = self.request.content
                content.seek(self.offset)
                piece = content.read(PIECE)
            except (AttributeError, ValueError, OSError):  # the request is gone and its file closed
                self.body_sent = True
                return {"type": "http.disconnect"}
            self.offset += len(piece)
            self.body_sent = len(piece) < PIECE
            return {"type": "http.request", "body": piece, "more_body": not self.body_sent}
        return await self.inbox.get()


class _PullServer:
    """Daphne's server as one request sees it, except that the application it creates receives
    from a BodyFeed instead of an unbounded queue. Everything else is the server's own."""

    def __init__(self, server):
        self._server = server

    def __getattr__(self, name):
        return getattr(self._server, name)

    def create_application(self, protocol, scope):
        # As daphne.server.Server.create_application, with the BodyFeed as input.
        server = self._server
        assert "application_instance" not in server.connections[protocol]
        feed = BodyFeed(protocol)
        scope.setdefault("asgi", {"version": "3.0"})
        instance = server.application(scope=scope, receive=feed.receive, send=partial(server.handle_reply, protocol))
        if protocol not in server.connections:
            return None
        server.connections[protocol]["application_instance"] = asyncio.ensure_future(instance)
        return feed


def _request_class():
    from daphne.http_protocol import WebRequest  # daphne is the server here: it is loaded already

    class BoundedRequest(WebRequest):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._parsePOSTFormSubmission = False  # daphne never reads Twisted's parsed args
            self.server = _PullServer(self.server)
            # The limit (once the headers are in), a sign-in claimed, bytes received, refused yet.
            self._body_limit, self._signed_in, self._received, self._refused = None, False, 0, False

        def gotLength(self, length):
            super().gotLength(length)
            self._signed_in = _claims_a_sign_in(self)
            self._body_limit = max_bytes(signed_in=self._signed_in)
            if length is not None and length > self._body_limit:
                self._refuse()

        def handleContentChunk(self, data):
            if self._refused:
                return
            self._received += len(data)
            if self._body_limit is not None and self._received > self._body_limit:
                self._refuse()
                return
            super().handleContentChunk(data)

        def process(self):
            if self._refused:
                return None
            return super().process()

        def _refuse(self):
            self._refused = True
            self.requestHeaders.removeHeader(b"expect")  # no "100 Continue" after the refusal
            transport = self.channel.transport if self.channel else None
            if transport is None:
                return
            log.info("refused a request body over %s bytes from %s", self._body_limit, self.getClientAddress())
            transport.write(_answer_413(self))
            # Keep reading (and dropping) for a while, so the client is not cut off before it
            # reads the answer, then close.
            lose_write = getattr(transport, "loseWriteConnection", None)
            if lose_write is not None:
                lose_write()
                self.channel.callLater(LINGER_S, transport.abortConnection)
            else:
                transport.loseConnection()

    return BoundedRequest


def _claims_a_sign_in(request) -> bool:
    """A session cookie or a bearer token: only a claim here (the application checks it), which
    earns the signed-in body limit."""
    authorization = (request.requestHeaders.getRawHeaders(b"authorization") or [b""])[0]
    return (settings.SESSION_COOKIE_NAME.encode() in (request.received_cookies or {})
            or bearer_of(authorization.decode("latin-1")) is not None)


def _answer_413(request) -> bytes:
    """The whole 413 answer to a request whose body is refused, in the form its client reads."""
    htmx = (request.requestHeaders.getRawHeaders(b"hx-request") or [b""])[0] == b"true"
    # The request's own path is set only once its body is in; the channel has the request line's.
    target = getattr(request, "path", None) or getattr(request.channel, "_path", b"") or b""
    api = target.decode("latin-1").startswith(API_PATHS)
    headers, body = too_large(signed_in=request._signed_in, htmx=htmx, api=api)
    return b"HTTP/1.1 413 Content Too Large\r\n" + b"".join(
        name + b": " + value + b"\r\n" for name, value in headers) + b"connection: close\r\n\r\n" + body


def install() -> bool:
    """Make daphne's HTTP factory build BoundedRequests; False when daphne is not the server."""
    if "daphne.server" not in sys.modules:
        return False
    from daphne.http_protocol import HTTPFactory

    if getattr(HTTPFactory, "_beyond_bounded", False):
        return True
    request_class = _request_class()
    build = HTTPFactory.buildProtocol

    def build_protocol(self, addr):
        protocol = build(self, addr)
        protocol.requestFactory = request_class
        return protocol

    HTTPFactory.buildProtocol = build_protocol
    HTTPFactory._beyond_bounded = True
    return True
