"""Browser tests: a real daphne on a free port, a file SQLite database, Debian's Chromium.

Run on their own: `.venv/bin/python -m pytest -q tests/browser -p no:asyncio ...` (Playwright's
event loop and pytest-asyncio clash). Nothing here uses pytest-django's database fixtures: the
server's database is seeded through a subprocess, like an operator would.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser import scenarios

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the sync Playwright API leaves a loop running

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
PASSWORD = "correct horse battery staple"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser_type_launch_args():
    return {"executable_path": "/usr/bin/chromium", "args": CHROMIUM_ARGS, "headless": True}


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


def seeded_database(tmp: Path) -> tuple[dict, dict]:
    """A migrated file database with the scenarios' workspaces; (environment, seeded ids)."""
    scripts = {}
    for name, build in scenarios.ALL.items():
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(build()))
        scripts[name] = str(path)
    env = migrated_env(tmp)
    return env, json.loads(run_script(env, "tests/browser/seed.py", json.dumps(scripts)))


@contextlib.contextmanager
def own_server(tmp: Path, seed_script: str, *args: str):
    """A server of a test module's own, on a database seeded by `seed_script`: (base URL, what the
    seed printed)."""
    env = migrated_env(tmp)
    printed = run_script(env, seed_script, *args)
    daphne = Daphne(env, tmp / "daphne.log").start()
    try:
        yield daphne.base, printed
    finally:
        daphne.stop()


@contextlib.contextmanager
def seeded_server(tmp_path_factory, name: str):
    """`own_server` seeded by tests/browser/seed_<name>.py, which is given its folder and prints
    what it made as JSON: (base URL, what it made)."""
    tmp = tmp_path_factory.mktemp(name)
    with own_server(tmp, f"tests/browser/seed_{name}.py", str(tmp)) as (base, printed):
        yield base, json.loads(printed)


def add_scripted_workspace(env: dict, slug: str, script: dict, tmp: Path) -> None:
    path = tmp / f"{slug}.json"
    path.write_text(json.dumps(script))
    subprocess.run([PYTHON, "tests/browser/seed.py", "--workspace", slug, str(path)], cwd=ROOT, env=env, check=True,
                   capture_output=True, text=True)


def record_of(env: dict, run_id: int) -> dict:
    """What the database holds of a run (its status, steps and model calls), read by a subprocess."""
    done = subprocess.run([PYTHON, "tests/browser/inspect_run.py", str(run_id)], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def server_parts(tmp_path_factory):
    """(the running server, its environment, seeded ids). One server for the session; each scenario
    is its own workspace."""
    tmp = tmp_path_factory.mktemp("beyond")
    env, ids = seeded_database(tmp)
    daphne = Daphne(env, tmp / "daphne.log").start()
    try:
        yield daphne, env, ids
    finally:
        daphne.stop()


@pytest.fixture(scope="session")
def server(server_parts):
    """(base URL, seeded ids)."""
    daphne, _, ids = server_parts
    return daphne.base, ids


def no_sideways_scroll(page) -> None:
    """The page itself fits the window's width (a wide table may scroll inside its own box)."""
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths


def open_page(page, label: str) -> None:
    """Follow the top bar's link to a workspace page: in the bar on a wide screen, in its Menu on a
    narrow one (workspaces/_nav.html)."""
    menu = page.locator(".topbar-menu > summary")
    if menu.is_visible():
        menu.click()
    page.locator(".topbar-nav").get_by_role("link", name=label, exact=True).click()


def login(page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


@pytest.fixture
def alice_page(page, server):
    base, _ = server
    login(page, base, "alice")
    return page


@pytest.fixture
def csp_errors(page):
    """The Content Security Policy violations the page reports in its console."""
    errors = []
    page.on("console", lambda message: errors.append(message.text)
            if "Content Security Policy" in message.text else None)
    return errors


@pytest.fixture
def dialogs(page):
    seen = []
    page.on("dialog", lambda dialog: (seen.append(dialog.message), dialog.dismiss()))
    return seen
