"""Browser tests: a real daphne on a free port, a file SQLite database, Debian's Chromium.

Run on their own: `.venv/bin/python -m pytest -q tests/browser -p no:asyncio ...` (Playwright's
event loop and pytest-asyncio clash). Nothing here uses pytest-django's database fixtures: the
server's database is seeded through a subprocess, like an operator would.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.browser import scenarios
from tests.servers import PYTHON, ROOT, Daphne, migrated_env, run_script  # the browser tests import them from here

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the sync Playwright API leaves a loop running

PASSWORD = "correct horse battery staple"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="session")
def browser_type_launch_args():
    return {"executable_path": "/usr/bin/chromium", "args": CHROMIUM_ARGS, "headless": True}


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
