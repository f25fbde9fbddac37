"""A small web on 127.0.0.1 for the network tests: routes, request counts, slow and big answers.

Each `LoopbackSite` is a threaded HTTP/1.0 server (one connection per request) on its own port.
Nothing here reaches beyond this machine, and every slow answer ends by itself.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.pipeline.loopback import InFlight


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    #: Send the headers, then the body in small pieces this many seconds apart (at most 10 s in all).
    trickle_s: float = 0.0
    #: Leave Content-Length out (the body then ends when the connection closes).
    no_length: bool = False
    delay_s: float = 0.0


Handler = Callable[[dict[str, list[str]]], Route]


class LoopbackSite:
    def __init__(self, routes: dict[str, Route | Handler] | None = None):
        self.routes: dict[str, Route | Handler] = dict(routes or {})
        self.requests: list[dict] = []
        self.in_flight = InFlight()
        self._lock = threading.Lock()
        site = self

        class _Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                return

            def do_GET(self) -> None:
                site._serve(self)

            def do_POST(self) -> None:  # the body is read and ignored: a route answers by its path
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                site._serve(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def max_in_flight(self) -> int:
        return self.in_flight.most

    def url(self, path: str) -> str:
        return self.origin + path

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def __enter__(self) -> LoopbackSite:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        with self._lock:
            self.requests.append({"path": parts.path, "host": handler.headers.get("Host"),
                                  "user_agent": handler.headers.get("User-Agent"),
                                  "accept_encoding": handler.headers.get("Accept-Encoding")})
        answering = self.in_flight.begin()
        try:
            route = self.routes.get(parts.path)
            if callable(route):
                route = route(parse_qs(parts.query))
            route = route or Route(b"not found", status=404, content_type="text/plain")
            time.sleep(route.delay_s)
            handler.send_response(route.status)
            handler.send_header("Content-Type", route.content_type)
            if not route.no_length and not route.trickle_s:
                handler.send_header("Content-Length", str(len(route.body)))
            for name, value in route.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            if route.trickle_s:
                deadline = time.monotonic() + 10
                for start in range(0, len(route.body), 16):
                    if time.monotonic() > deadline:
                        break
                    if start + 16 >= len(route.body):
                        answering()
                    handler.wfile.write(route.body[start:start + 16])
                    handler.wfile.flush()
                    time.sleep(route.trickle_s)
            else:
                answering()
                handler.wfile.write(route.body)
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client gave up on a slow or big answer, as it should
        finally:
            answering()


def html(title: str, body: str) -> bytes:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body><nav>Home | Pricing | Contact</nav><main><h1>{title}</h1>{body}</main>"
            f"<footer>Copyright 2025</footer></body></html>").encode("utf-8")
