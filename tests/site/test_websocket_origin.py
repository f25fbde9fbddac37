"""A run's websocket opens only from this site itself: the Origin's scheme, host and port must be
the site's (or a CSRF-trusted origin), as Django requires of a POST."""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from beyond_site.asgi import application
from tests.site.chat_support import new_run, session_headers, workspace_with

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("queued_runs_stay_queued")]


async def opens(user, run, origin: str, host: str = "127.0.0.1:8000", scheme: str = "ws", extra=()) -> bool:
    cookie = (await database_sync_to_async(session_headers)(user))[1]
    headers = [(b"origin", origin.encode()), (b"host", host.encode()), cookie, *extra]
    comm = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    comm.scope["scheme"] = scheme
    connected, _ = await comm.connect()
    await comm.disconnect()
    return connected


@pytest.fixture
def run(alice):
    return new_run(workspace_with(member=alice), alice)


async def test_the_sites_own_origin_opens_the_stream(alice, run):
    assert await opens(alice, run, "http://127.0.0.1:8000")


@pytest.mark.parametrize("origin", ["http://127.0.0.1:9999", "https://127.0.0.1:8000", "http://127.0.0.1",
                                    "http://localhost:8000", "null", ""])
async def test_another_port_scheme_or_host_of_an_allowed_host_is_refused(alice, run, origin):
    assert not await opens(alice, run, origin)


async def test_behind_a_tls_proxy_the_origin_is_https(alice, run, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    proto = (b"x-forwarded-proto", b"https")
    assert await opens(alice, run, "https://localhost", host="localhost", extra=[proto])
    assert not await opens(alice, run, "http://localhost", host="localhost", extra=[proto])


async def test_a_csrf_trusted_origin_opens_the_stream(alice, run, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://*.example.com"]
    assert await opens(alice, run, "https://app.example.com")
    assert not await opens(alice, run, "http://app.example.com")


async def test_a_host_that_is_not_allowed_is_refused(alice, run):
    assert not await opens(alice, run, "http://evil.example:8000", host="evil.example:8000")
