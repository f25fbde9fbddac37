"""A real model server for these tests: `scripts/model-server` (what `make model-server` runs) on a
free loopback port, once per session. A server that does not start fails the tests, never skips
them: these tests are the only place Beyond meets a real model (`make test-realmodel`)."""
from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from beyond_site.workspaces.models import Workspace

ROOT = Path(__file__).resolve().parents[2]
#: Building the cached environment (`make model-server-env` does it before these tests) can take
#: a quarter of an hour on two cores; a server whose environment is there answers in seconds.
START_TIMEOUT_S = float(os.environ.get("BEYOND_MODEL_SERVER_START_TIMEOUT", 1800))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def model_server() -> str:
    """The server's base URL (`http://127.0.0.1:PORT/v1`), from the script's ready line."""
    process = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "model-server"), "--port", str(free_port())],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines: queue.Queue[str | None] = queue.Queue()
    log: list[str] = []

    def read(stream, sink):
        for line in stream:
            sink(line)
        if stream is process.stdout:
            lines.put(None)

    threading.Thread(target=read, args=(process.stdout, lines.put), daemon=True).start()
    threading.Thread(target=read, args=(process.stderr, lambda line: log.append(line)), daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT_S
    ready = None
    while ready is None:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
        except queue.Empty:
            line = None
        if line is None:
            process.kill()
            pytest.fail("the model server did not start:\n" + "".join(log[-40:]))
        if line.startswith("model-server ready: "):
            ready = line.removeprefix("model-server ready: ").strip()
    yield ready
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture
def workspace(db):
    return Workspace.objects.create(slug="acme", name="Acme")
