"""A real server for tests that drive Beyond over HTTP: daphne serving beyond_site.asgi on a free
port, on a database of its own (a file SQLite database, or PostgreSQL where a test gives its URL),
seeded through subprocesses as an operator would."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daphne:
    """A real daphne serving beyond_site.asgi on `port` (a free one by default) with `env`."""

    def __init__(self, env: dict, log_path: Path, port: int | None = None):
        self.env, self.log_path = env, log_path
        self.port = port or _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Daphne:
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "daphne"), "-b", "127.0.0.1", "-p", str(self.port),
                                      "beyond_site.asgi:application"], cwd=ROOT, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.base}/accounts/login/", timeout=2)
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"daphne did not start: {self.log_path.read_text()}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.proc = None
        self.log.close()
        if os.environ.get("BEYOND_SHOW_DAPHNE_LOG"):
            sys.stderr.write(self.log_path.read_text())


def server_env(db: Path) -> dict:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "DJANGO_SECRET_KEY": "browser-tests",
           "DJANGO_DEBUG": "false", "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "BEYOND_PROVIDER": "offline",
           "DJANGO_SETTINGS_MODULE": "beyond_site.settings", "BEYOND_FILES_DIR": str(db.parent / "originals")}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.pop("REDIS_URL", None)
    return env


def run_script(env: dict, *args: str) -> str:
    """Run a Python script of the project (or manage.py) against `env`'s database; its output."""
    return subprocess.run([PYTHON, *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout


def migrated_env(tmp: Path) -> dict:
    """The environment of a server on a new, migrated file database in `tmp`, static files collected."""
    env = server_env(tmp / "db.sqlite3")
    run_script(env, "manage.py", "migrate", "--noinput", "-v0")
    run_script(env, "manage.py", "collectstatic", "--noinput", "-v0")
    return env
