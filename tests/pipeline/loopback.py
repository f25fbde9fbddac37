"""A real HTTP server on 127.0.0.1 for provider tests: a free port, a thread, canned answers.

Each request is answered by `answer(body) -> Answer`. An answer may trickle its body in parts
with pauses, and may close the connection before its end, as a failing server does. The server
counts the requests in flight, so a test can check what overlapped.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Answer:
    status: int = 200
    parts: list[str | bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    pause_s: float = 0.0  # before each part


def sse_answer(*chunks: dict | str, pause_s: float = 0.0, headers: dict | None = None) -> Answer:
    parts = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return Answer(parts=parts, pause_s=pause_s, headers=headers or {})


def json_answer(status: int, payload: dict, headers: dict | None = None) -> Answer:
    return Answer(status=status, parts=[json.dumps(payload)], content_type="application/json", headers=headers or {})


class InFlight:
    """The requests a test server is answering, and the most it answered at once. A request counts
    as answered just before its last bytes go out: a client may send its next request as soon as it
    has read them, before the handler thread runs again."""

    def __init__(self):
        self.now = self.most = 0
        self._lock = threading.Lock()

    def begin(self) -> Callable[[], None]:
        """Count a request; returns what to call as its last bytes go out (again later: no effect)."""
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        done = False

        def answered() -> None:
            nonlocal done
            if not done:
                done = True
                with self._lock:
                    self.now -= 1

        return answered


class LoopbackServer:
    def __init__(self, answer: Callable[[dict, dict], Answer]):
        self.answer = answer
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.in_flight = InFlight()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def most_in_flight(self) -> int:
        return self.in_flight.most

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with server._lock:
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers))
                finished = server.in_flight.begin()
                try:
                    answer = server.answer(body, dict(self.headers))
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.content_type)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    for n, part in enumerate(answer.parts, 1):
                        time.sleep(answer.pause_s)
                        if n == len(answer.parts):
                            finished()
                        self.wfile.write(part if isinstance(part, bytes) else part.encode())
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    finished()

        return Handler
