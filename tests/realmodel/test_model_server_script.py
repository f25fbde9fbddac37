"""`make model-server` leaves nothing behind: killing the first process of its tree, even with
SIGKILL (a check that timed out), stops the script and the server it started (scripts/model-server).
The real server is started from its cached environment, which `make test` builds first."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/realmodel: the project root two up


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def descendants(pid: int) -> set[int]:
    children = {int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()}
    return children.union(*(descendants(c) for c in children)) if children else set()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
    return state != "Z"


def test_killing_the_first_process_stops_the_whole_tree():
    # A shell stands for make: the first process, whose death must end everything under it.
    first = subprocess.Popen(["sh", "-c", f"{sys.executable} scripts/model-server --port {free_port()}; true"],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             start_new_session=True)
    try:
        assert first.stdout.readline().startswith("model-server ready: ")
        tree = descendants(first.pid)
        assert len(tree) >= 2  # the script and its server
        first.kill()  # SIGKILL: nothing can be forwarded by hand
        first.wait()
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(alive(pid) for pid in tree)
    finally:
        try:
            os.killpg(first.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
