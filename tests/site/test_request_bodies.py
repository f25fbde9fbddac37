"""Request bodies cost bounded memory: too large is refused (413) before it is read, by the real
server while the body arrives and by the application's middleware before it reads anything;
bodies within the limits reach the application whole, read from disk as it goes."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from bench import request_memory as bench
from beyond_site.lib.bodies import BodyLimitMiddleware

ROOT = Path(__file__).resolve().parents[2]
KB, MB = 1024, 1024 * 1024
LIMITS = {"BEYOND_MAX_FILE_BYTES": str(1 * MB), "BEYOND_MAX_REQUEST_BYTES": str(3 * MB),
          "BEYOND_MAX_ANONYMOUS_REQUEST_BYTES": str(64 * KB)}


# ---------------------------------------------------------------------------- the middleware alone

class App:
    """An ASGI app that reads its whole body, then answers with how much it got."""

    def __init__(self):
        self.got = 0
        self.messages = []

    async def __call__(self, scope, receive, send):
        while True:
            message = await receive()
            self.messages.append(message["type"])
            if message["type"] == "http.disconnect":
                return
            self.got += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(self.got).encode()})


def call(headers: dict[str, str], pieces: list[bytes]):
    """(status, body, bytes the client was asked for) of a request through the middleware."""
    app = App()
    sent, asked = [], [0]
    queue = [{"type": "http.request", "body": p, "more_body": i < len(pieces) - 1} for i, p in enumerate(pieces)]

    async def receive():
        message = queue.pop(0)
        asked[0] += len(message["body"])
        return message

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/accounts/login/",
             "headers": [(k.lower().encode(), v if isinstance(v, bytes) else v.encode()) for k, v in headers.items()]}
    async_to_sync(BodyLimitMiddleware(app))(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body.decode(), asked[0], app


@pytest.fixture
def limits(settings):
    settings.BEYOND_MAX_REQUEST_BYTES = 3 * MB
    settings.BEYOND_MAX_ANONYMOUS_REQUEST_BYTES = 64 * KB


@pytest.mark.django_db
def test_a_declared_length_over_the_anonymous_limit_is_refused_before_anything_is_read(limits):
    status, headers, body, asked, app = call({"Content-Length": str(60 * MB)}, [b"x" * KB])
    assert status == 413 and asked == 0 and app.messages == []
    assert "without a login or a token a request may carry at most 64 KB" in body


@pytest.mark.django_db
def test_an_undeclared_body_is_counted_as_it_arrives_and_cut_at_the_limit(limits):
    status, _, _, asked, app = call({}, [b"x" * (16 * KB)] * 100)
    assert status == 413 and asked == 80 * KB  # five pieces: the fifth went over
    assert app.messages[-1] == "http.disconnect"  # the app stopped reading and answered nothing


@pytest.mark.django_db
def test_a_signed_in_user_gets_the_larger_limit_and_a_forged_session_does_not(limits, client, alice):
    client.force_login(alice)
    session = client.cookies["sessionid"].value
    status, _, body, _, _ = call({"Content-Length": str(MB), "Cookie": f"sessionid={session}"}, [b"x" * MB])
    assert (status, body) == (200, str(MB))
    status, _, body, asked, _ = call({"Content-Length": str(MB), "Cookie": "sessionid=forged"}, [b"x" * MB])
    assert status == 413 and asked == 0
    status, _, body, asked, _ = call({"Content-Length": str(4 * MB), "Cookie": f"sessionid={session}"}, [b"x"])
    assert status == 413 and asked == 0 and "at most 3 MB (each file at most" in body


@pytest.mark.django_db
def test_htmx_gets_the_refusal_as_the_chats_notice(limits):
    status, headers, body, _, _ = call({"Content-Length": str(MB), "HX-Request": "true"}, [b""])
    assert status == 413 and headers[b"hx-reswap"] == b"none"
    assert body.startswith('<div id="notice"') and 'hx-swap-oob="true"' in body


@pytest.mark.django_db
def test_uploads_go_to_temporary_files_never_to_memory(alice):
    from beyond_site.workspaces.models import Document
    from tests.site.chat_support import workspace_with
    workspace_with("acme", member=alice)
    client = Client()
    client.force_login(alice)
    from django.core.files.uploadedfile import SimpleUploadedFile
    response = client.post("/w/acme/upload/", {"files": [SimpleUploadedFile("a.txt", b"Small file.")]},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and Document.objects.get().name == "a.txt"
    from django.conf import settings
    assert settings.FILE_UPLOAD_HANDLERS == ["beyond_site.lib.uploads.TemporaryFileHandler"]


# ---------------------------------------------------------------------------- the real server

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bodies")
    port = bench._free_port()
    proc = bench.start_server(tmp, port, **LIMITS)
    member = bench.Session(port)
    try:
        member.wait_until_up()
        member.login("bench")
        yield port, member, proc, tmp
    finally:
        bench.stop_server(proc)


def post(port, path, size, headers, *, chunked=False, extra=None, filename="big.txt", content=None):
    head, tail, _ = bench.multipart(size, "bodyboundary", extra=extra, filename=filename)
    headers = {"Content-Type": "multipart/form-data; boundary=bodyboundary", **headers}
    if content is None:
        return bench.send(port, path, head, size, tail, headers, chunked=chunked)
    return bench.send_bytes(port, path, head + content + tail, headers)


@pytest.mark.parametrize("chunked", [False, True])
def test_the_server_refuses_a_large_anonymous_body_while_it_arrives(server, chunked):
    port, _, proc, _ = server
    bench.reset_peak(proc.pid)
    before = bench.rss_mb(proc.pid)
    status = post(port, "/accounts/login/", 20 * MB, {}, chunked=chunked)
    assert status == 413 or str(status).startswith("closed")  # answered, or cut off while sending
    assert bench.peak_mb(proc.pid) - before < 10


def test_a_members_upload_reaches_the_application_whole(server):
    port, member, _, tmp = server
    token = member.csrf_token("/w/bench/")
    digests = []
    for size in (700 * KB, 2 * 64 * KB, 1):  # odd, an exact number of the pieces read, tiny
        content = (b"A line of the scope note %d.\n" % size * (size // 20 + 1))[:size]
        status = post(port, "/w/bench/upload/", size, {
            "Cookie": member.cookie_header(), "X-CSRFToken": token, "HX-Request": "true",
            "Referer": f"http://127.0.0.1:{port}/w/bench/"}, extra={"csrfmiddlewaretoken": token},
            filename=f"note-{size}.txt", content=content)
        assert status == 200
        digests.append(hashlib.sha256(content).hexdigest())
    stored = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                             "from beyond_site.workspaces.models import Document;"
                             "print(sorted(Document.objects.values_list('sha256', flat=True)))"],
                            cwd=ROOT, capture_output=True, text=True, env=bench.server_env(tmp, **LIMITS))
    assert stored.stdout.strip().splitlines()[-1] == str(sorted(digests)), stored.stderr


def test_a_members_body_over_the_request_limit_is_refused_before_it_is_read(server):
    port, member, proc, _ = server
    bench.reset_peak(proc.pid)
    before = bench.rss_mb(proc.pid)
    status = post(port, "/w/bench/upload/", 30 * MB, {"Cookie": member.cookie_header()})
    assert status == 413 or str(status).startswith("closed")
    assert bench.peak_mb(proc.pid) - before < 10


def test_the_benchmark_meets_its_targets():
    done = subprocess.run([sys.executable, "bench/request_memory.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "targets: " in done.stdout and ": met" in done.stdout
