"""The run websocket: subscribe, snapshot, tail; replay on reconnect; refusal with 4403."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import ApplicationCommunicator, WebsocketCommunicator

from pipeline import events as ev
from pipeline.events import Event
from django.utils import timezone

from beyond_site.asgi import application
from beyond_site.runs import jobs
from beyond_site.runs.models import Run
from beyond_site.runs.bells import ring_doorbell
from beyond_site.workspaces.models import Membership
from tests.site.chat_support import (HOST, ORIGIN, brief_ready, new_run, record, released, session_headers,
                                     workspace_with)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("queued_runs_stay_queued")]


def step_ids(html: str) -> list[str]:
    return re.findall(r'data-step="(\d+)"[^>]*data-step-status="released"', html)


async def connect(run, user):
    headers = await database_sync_to_async(session_headers)(user)
    comm = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    return comm


@pytest.fixture
def running(alice):
    workspace = workspace_with(member=alice)
    run = new_run(workspace, alice)
    record(run, Event(ev.RunStarted(topology={}, offline=False)), brief_ready(3), released(1, "First part."))
    return run


async def test_it_sends_a_snapshot_then_tails_new_events(running, alice):
    comm = await connect(running, alice)
    snapshot = await comm.receive_from()
    assert 'id="run-%d-steps"' % running.pk in snapshot and 'hx-swap-oob="true"' in snapshot
    assert step_ids(snapshot) == ["1"]
    assert "First part." in snapshot

    rows = await database_sync_to_async(record)(running, released(2, "Second part.", badge="passed_after_rerender"))
    await ring_doorbell(running.pk, rows[-1].seq)
    update = await comm.receive_from()
    assert f'id="run-{running.pk}-step-2"' in update and 'data-badge="passed_after_rerender"' in update
    assert "First part." not in update  # only what changed
    await comm.disconnect()


async def test_a_lost_doorbell_costs_nothing(running, alice):
    comm = await connect(running, alice)
    await comm.receive_from()
    await database_sync_to_async(record)(running, released(2, "Second."))  # no doorbell rung
    rows = await database_sync_to_async(record)(running, released(3, "Third."))
    await ring_doorbell(running.pk, rows[-1].seq)
    update = await comm.receive_from()
    assert 'data-step="2"' in update and 'data-step="3"' in update
    await comm.disconnect()


async def test_a_bell_for_an_event_already_sent_reads_nothing(running, alice):
    comm = await connect(running, alice)
    await comm.receive_from()
    sent = await database_sync_to_async(lambda: running.events.order_by("-seq").first().seq)()
    rows = await database_sync_to_async(record)(running, released(2, "Second."))  # its bell is late
    await ring_doorbell(running.pk, sent)  # a bell for what the snapshot already carried
    assert await comm.receive_nothing(timeout=0.3)  # not read again: the page has it
    await ring_doorbell(running.pk, rows[-1].seq)
    assert 'data-step="2"' in await comm.receive_from()
    await comm.disconnect()


async def test_the_finished_run_replaces_the_live_one_and_the_socket_closes(running, alice):
    comm = await connect(running, alice)
    await comm.receive_from()
    rows = await database_sync_to_async(record)(
        running, released(2, "Two."), released(3, "Three."), Event(ev.SummaryReady(summary="The recap.")),
        Event(ev.RunCompleted()))
    await ring_doorbell(running.pk, rows[-1].seq)
    final = await comm.receive_from()
    assert f'id="run-{running.pk}"' in final and 'data-run-status="completed"' in final
    assert "ws-connect" not in final and "The recap." in final
    assert (await comm.receive_output())["type"] == "websocket.close"


async def test_a_reconnect_replays_exactly_the_released_steps(running, alice):
    first = await connect(running, alice)
    before = await first.receive_from()
    await first.disconnect()
    await database_sync_to_async(record)(running, released(2, "Second part."))
    second = await connect(running, alice)
    again = await second.receive_from()
    assert step_ids(before) == ["1"]
    assert step_ids(again) == ["1", "2"]
    assert 'data-step="3"' in again and 'data-step-status="pending"' in again
    await second.disconnect()


async def test_a_non_member_is_refused_with_4403(running, bob):
    comm = await connect(running, bob)
    message = await comm.receive_output()
    assert message == {"type": "websocket.close", "code": 4403}


async def test_an_anonymous_socket_is_refused_with_4403(running):
    comm = WebsocketCommunicator(application, f"/ws/runs/{running.pk}/", headers=[ORIGIN, HOST])
    connected, _ = await comm.connect()
    assert connected
    assert await comm.receive_output() == {"type": "websocket.close", "code": 4403}


async def test_a_member_removed_mid_run_is_cut_off_at_the_next_doorbell(running, alice):
    comm = await connect(running, alice)
    await comm.receive_from()
    await database_sync_to_async(Membership.objects.filter(user=alice).delete)()
    rows = await database_sync_to_async(record)(running, released(2, "Secret second part."))
    await ring_doorbell(running.pk, rows[-1].seq)
    assert await comm.receive_output() == {"type": "websocket.close", "code": 4403}


async def test_a_socket_from_another_origin_is_rejected(running, alice):
    headers = await database_sync_to_async(session_headers)(alice)
    headers = [(b"origin", b"http://evil.example")] + headers[1:]
    comm = WebsocketCommunicator(application, f"/ws/runs/{running.pk}/", headers=headers)
    connected, _ = await comm.connect()
    assert not connected


async def test_inbound_frames_are_ignored_and_the_doorbell_still_works(running, alice):
    comm = await connect(running, alice)
    await comm.receive_from()  # the one snapshot
    for _ in range(200):
        await comm.send_to(text_data="{}")
    assert await comm.receive_nothing(timeout=0.5)  # no snapshot per frame
    rows = await database_sync_to_async(record)(running, released(2, "Second part."))
    await ring_doorbell(running.pk, rows[-1].seq)
    update = await comm.receive_from()
    assert f'id="run-{running.pk}-step-2"' in update and "First part." not in update
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()


async def test_inbound_frames_do_not_bypass_the_membership_check(running, alice):
    comm = await connect(running, alice)
    await comm.receive_from()
    await database_sync_to_async(Membership.objects.filter(user=alice).delete)()
    await comm.send_to(text_data="{}")
    assert await comm.receive_nothing(timeout=0.3)  # nothing more is sent to a removed member
    rows = await database_sync_to_async(record)(running, released(2, "Secret."))
    await ring_doorbell(running.pk, rows[-1].seq)
    assert await comm.receive_output() == {"type": "websocket.close", "code": 4403}


async def test_the_servers_start_runs_the_sweeper_that_fails_runs_a_restart_interrupted(alice, settings):
    # The runtime's background work starts with the server (daphne's reactor, or ASGI's lifespan
    # startup as here: runtime/process.py); its first sweep fails the runs a restart left, and
    # an open page says so.
    settings.BEYOND_RUN_IN_PROCESS = True
    workspace = await database_sync_to_async(workspace_with)("acme", member=alice)
    run = await database_sync_to_async(new_run)(workspace, alice)
    await database_sync_to_async(Run.objects.filter(pk=run.pk).update)(
        status=Run.RUNNING, lease_owner="a-dead-server", lease_expires_at=timezone.now() - timedelta(seconds=5))
    lifespan = ApplicationCommunicator(application, {"type": "lifespan"})
    await lifespan.send_input({"type": "lifespan.startup"})
    assert await lifespan.receive_output() == {"type": "lifespan.startup.complete"}
    communicator = await connect(run, alice)
    try:
        for _ in range(50):
            message = await communicator.receive_from(timeout=2)
            if 'data-run-status="failed"' in message:
                break
        assert 'data-run-status="failed"' in message
    finally:
        await communicator.disconnect()
        await lifespan.send_input({"type": "lifespan.shutdown"})
        assert await lifespan.receive_output() == {"type": "lifespan.shutdown.complete"}
        jobs.serve_here(None)


async def test_a_page_that_hears_nothing_reads_anyway_so_a_lost_last_bell_still_ends_it(running, alice, settings):
    settings.BEYOND_PAGE_RECHECK_S = 0.2
    comm = await connect(running, alice)
    await comm.receive_from()
    assert await comm.receive_nothing(timeout=0.5)  # nothing new: the checks send nothing
    await database_sync_to_async(record)(  # the run ends, and its bells are lost
        running, released(2, "Two."), released(3, "Three."), Event(ev.SummaryReady(summary="The recap.")),
        Event(ev.RunCompleted()))
    final = await comm.receive_from(timeout=3)
    assert 'data-run-status="completed"' in final and "The recap." in final
    assert (await comm.receive_output())["type"] == "websocket.close"



async def test_a_logout_ends_its_open_run_pages_and_only_its_own(running, alice, settings):
    """Nothing more reaches a page whose login has logged out: its next doorbell, or its next quiet
    check, closes it; another login's page of the same run goes on."""
    from django.test import AsyncClient, Client

    settings.BEYOND_PAGE_RECHECK_S = 0.3

    def logged_in():
        client = Client()
        client.force_login(alice)
        return client.cookies["sessionid"].value

    sessions = [await database_sync_to_async(logged_in)() for _ in range(3)]
    sockets = []
    for session in sessions:
        comm = WebsocketCommunicator(application, f"/ws/runs/{running.pk}/",
                                     headers=[ORIGIN, (b"cookie", f"sessionid={session}".encode()), HOST])
        assert (await comm.connect())[0]
        await comm.receive_from()  # the snapshot
        sockets.append(comm)
    for session in sessions[:1]:
        browser = AsyncClient(HTTP_ORIGIN=ORIGIN[1].decode())
        browser.cookies["sessionid"] = session
        await browser.post("/accounts/logout/")
    rows = await database_sync_to_async(record)(running, released(2, "Second part."))
    await ring_doorbell(running.pk, rows[-1].seq)
    assert await sockets[0].receive_output(timeout=2) == {"type": "websocket.close", "code": 4403}
    for other in sockets[1:]:  # the other logins' pages go on
        assert "Second part." in await other.receive_from()
    await sockets[1].disconnect()

    # A quiet page (no doorbell) closes at its next check.
    browser = AsyncClient(HTTP_ORIGIN=ORIGIN[1].decode())
    browser.cookies["sessionid"] = sessions[2]
    await browser.post("/accounts/logout/")
    assert await sockets[2].receive_output(timeout=2) == {"type": "websocket.close", "code": 4403}
