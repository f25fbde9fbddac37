"""A database that turns requests away (no free connection) gives "busy, try again", not a 500."""
from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.db import OperationalError
from django.test import Client
from psycopg_pool import PoolTimeout

from beyond_site.asgi import application
from beyond_site.chat import fragments
from beyond_site.workspaces.models import Membership
from tests.site.chat_support import ORIGIN, brief_ready, new_run, record, session_headers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def member(acme, alice):
    Membership.objects.create(user=alice, workspace=acme, role="member")
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    return client


@pytest.mark.parametrize("refusal", [PoolTimeout("couldn't get a connection after 10.00 sec"),
                                     OperationalError('FATAL: sorry, too many clients already')])
def test_a_submission_the_database_refuses_is_busy_not_an_error(member, monkeypatch, refusal):
    def refuse(*args, **kwargs):
        raise refusal

    monkeypatch.setattr("beyond_site.chat.views.start_run", refuse)
    response = member.post("/w/acme/send/", {"message": "Draft a note"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "busy" in response.content.decode()


def test_a_bug_is_still_a_500(member, monkeypatch):
    def broken(*args, **kwargs):
        raise OperationalError("no such column: runs_run.nonsense")

    monkeypatch.setattr("beyond_site.chat.views.start_run", broken)
    assert member.post("/w/acme/send/", {"message": "Draft a note"}).status_code == 500


async def test_a_run_page_the_database_cannot_serve_is_told_to_try_again(acme, alice, monkeypatch):
    from channels.db import database_sync_to_async

    await database_sync_to_async(Membership.objects.create)(user=alice, workspace=acme, role="member")
    run = await database_sync_to_async(new_run)(acme, alice)
    headers = await database_sync_to_async(session_headers)(alice)

    def refuse(user, run_id):
        raise PoolTimeout("couldn't get a connection after 10.00 sec")

    monkeypatch.setattr(fragments, "readable_run", refuse)  # a page's first read, whatever the run's state
    comm = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=[ORIGIN, *headers])
    connected, _ = await comm.connect()
    assert connected
    closed = await comm.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 1013}  # htmx reconnects on 1013
    await comm.disconnect()


async def test_a_member_s_socket_gets_the_snapshot(acme, alice):
    from channels.db import database_sync_to_async

    await database_sync_to_async(Membership.objects.create)(user=alice, workspace=acme, role="member")
    run = await database_sync_to_async(new_run)(acme, alice)
    headers = await database_sync_to_async(session_headers)(alice)
    await database_sync_to_async(record)(run, brief_ready())  # something to show
    comm = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=[ORIGIN, *headers])
    assert (await comm.connect())[0]
    assert "run-" in (await comm.receive_output(timeout=5))["text"]  # the snapshot, for alice
    await comm.disconnect()
