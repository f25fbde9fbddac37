"""Files are read off the request, on the real server (daphne), on SQLite and on PostgreSQL: an
upload of a workbook that takes seconds to parse is answered at once, the file is ready on its own
a little later, and meanwhile another workspace's run completes and a login page answers quickly.

Before files were read in the background, the upload's transaction held SQLite's one write lock
while the parser worked, and the parse held one of the server's request slots: other members' runs
failed "database is locked" and logins waited for seconds.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import request_memory as bench
from tests.site.postgres_child import SERVER as POSTGRES, postgres_answers
from tests.site.workbooks import save

ROOT = Path(__file__).resolve().parents[2]
SECOND = """
from django.contrib.auth import get_user_model
from beyond_site.workspaces.models import Membership, Workspace
user = get_user_model().objects.create_user("other", password=%r)
Membership.objects.create(user=user, workspace=Workspace.objects.create(slug="other", name="Other"), role="member")
""" % bench.PASSWORD


def slow_workbook(rows: int = 15_000) -> bytes:
    """An ordinary-looking inventory that takes the parser seconds: many small cells."""
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("Inventory")
    sheet.append([f"Column {c}" for c in range(10)])
    for r in range(rows):
        sheet.append([f"A-{r}.{c}" for c in range(10)])
    return save(book)


@pytest.fixture(scope="module")
def workbook() -> bytes:
    return slow_workbook()


def _form(session, slug: str) -> dict:
    token = session.csrf_token(f"/w/{slug}/")
    return {"Cookie": session.cookie_header(), "X-CSRFToken": token, "HX-Request": "true",
            "Referer": f"http://127.0.0.1:{session.port}/w/{slug}/"}, token


def _upload(session, data: bytes, name: str) -> tuple[int, float, str]:
    headers, token = _form(session, "bench")
    boundary = "readingboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrfmiddlewaretoken\"\r\n\r\n{token}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    began = time.monotonic()
    status, page = session.request("POST", "/w/bench/upload/", body, {
        **headers, "Content-Type": f"multipart/form-data; boundary={boundary}"})
    return status, time.monotonic() - began, page


def _send(session, slug: str, task: str) -> str:
    headers, token = _form(session, slug)
    form = f"csrfmiddlewaretoken={token}&message={task.replace(' ', '+')}&idempotency_key=k-{time.time_ns()}"
    status, page = session.request("POST", f"/w/{slug}/send/", form.encode(), {
        **headers, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200, page[-2000:]
    return re.search(r'/w/other/c/(\d+)/', page).group(1)


def _until(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"not within {seconds} s: {what}")


def scenario(tmp: Path, workbook: bytes, **env: str) -> None:
    port = bench._free_port()
    proc = bench.start_server(tmp, port, BEYOND_FILE_READERS="1", **env)
    try:
        subprocess.run([sys.executable, "manage.py", "shell", "-c", SECOND], cwd=ROOT, check=True,
                       env=bench.server_env(tmp, **env), capture_output=True)
        member, other, anonymous = bench.Session(port), bench.Session(port), bench.Session(port)
        member.wait_until_up()
        member.login("bench")
        other.login("other")

        status, took, page = _upload(member, workbook, "inventory.xlsx")
        assert status == 200 and "Attached: inventory.xlsx" in page and "reading…" in page
        assert took < 1.0, f"the upload took {took:.2f} s"
        conversation = re.search(r'/w/bench/c/(\d+)/uploads/', page).group(1)

        def listed() -> str:
            return member.request("GET", f"/w/bench/c/{conversation}/uploads/", headers={"HX-Request": "true"})[1]

        # While the file is being read: a login page answers, and another workspace's run completes.
        assert "reading…" in listed()
        began = time.monotonic()
        assert anonymous.request("GET", "/accounts/login/")[0] == 200
        assert time.monotonic() - began < 1.0
        chat = _send(other, "other", "Draft our access control policy")
        _until(lambda: 'data-run-status="completed"' in other.request("GET", f"/w/other/c/{chat}/")[1], 60,
               "the other workspace's run completed")
        assert "reading…" in listed(), "the file was read before the run ended: make the workbook slower"

        _until(lambda: "reading…" not in listed(), 180, "the file was read")
        assert "could not be read" not in listed()
        document = re.search(r'/w/bench/files/(\d+)/', listed()).group(1)
        assert "| A-14999.0 |" in member.request("GET", f"/w/bench/files/{document}/")[1]
    finally:
        bench.stop_server(proc)


def test_on_sqlite(tmp_path, workbook):
    scenario(tmp_path, workbook)


def test_on_postgresql(tmp_path, workbook):
    if not postgres_answers():
        pytest.fail(f"no PostgreSQL at {POSTGRES}: every Beyond machine runs one (`make services` starts it)")
    import psycopg

    name = f"beyond_reading_{int(time.time() * 1000) % 10**9}"
    admin = POSTGRES.replace("postgres://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        scenario(tmp_path, workbook, DATABASE_URL=POSTGRES.rsplit("/", 1)[0] + f"/{name}")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
