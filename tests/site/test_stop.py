"""Stop: what was released stays, nothing more is, in-flight calls are cancelled, the run ends cancelled."""
from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from beyond_site.runs.models import ModelCall, Run, Step
from beyond_site.runs.recorder import EventRecorder, StopRequested
from beyond_site.runs.bells import ring_stop_bell
from beyond_site.runs.queue import claim_run, request_stop, start_run
from beyond_site.runs.runner import execute_run
from beyond_site.workspaces.models import Membership, Workspace
from pipeline import events as ev
from pipeline.events import Event
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)

SLOW = 30  # seconds a scripted call takes: far longer than any test waits


@pytest.fixture
def workspace(alice, bob, carol, dave):
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    for user, role in ((alice, "member"), (bob, "member"), (carol, "admin"), (dave, "auditor")):
        Membership.objects.create(user=user, workspace=workspace, role=role)
    return workspace


def slow_after_step_one(tmp_path):
    return parse_shorthand("scripted:" + str(scripting.write(tmp_path, scripting.script({
        1: {"executor": ["Part one."], "verifier": [PASS]},
        2: {"executor": [{"content": "Part two.", "delay_s": SLOW}], "verifier": [PASS]},
        3: {"executor": [{"content": "Part three.", "delay_s": SLOW}], "verifier": [PASS]},
    }))))


async def wait_for(predicate, timeout=10.0):
    async with asyncio.timeout(timeout):
        while not await database_sync_to_async(predicate)():
            await asyncio.sleep(0.05)


async def test_a_stopped_run_keeps_what_it_released_and_releases_nothing_more(workspace, alice, tmp_path):
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft a note", user=alice,
                                                     topology=slow_after_step_one(tmp_path))
    assert await database_sync_to_async(claim_run)(run.pk, "runner")
    execution = asyncio.create_task(execute_run(run.pk, "runner"))
    await wait_for(lambda: Step.objects.filter(run=run, status=Step.RELEASED).exists())
    assert await database_sync_to_async(request_stop)(run.pk, alice)
    async with asyncio.timeout(10):  # the runner checks the database without the bell, too
        assert await execution == Run.CANCELLED

    def check():
        run.refresh_from_db()
        assert run.status == Run.CANCELLED and run.halt_reason == "stopped by alice"
        assert list(run.steps.order_by("index").values_list("status", flat=True)) == [
            Step.RELEASED, Step.NOT_RELEASED, Step.NOT_RELEASED]
        types = list(run.events.order_by("seq").values_list("type", flat=True))
        assert types[-1] == ev.RUN_CANCELLED and ev.SUMMARY_READY not in types
        cancelled = ModelCall.objects.filter(run=run, error__startswith="cancelled")
        assert sorted(cancelled.values_list("role", "step_index")) == [("executor", 2), ("executor", 3)]
        client = Client()
        client.force_login(alice)
        page = client.get(reverse("chat:conversation", args=["acme", run.conversation_id])).content.decode()
        assert page.count("Not released: the run was stopped before this step was released.") == 2
    await database_sync_to_async(check)()


async def test_the_stop_bell_reaches_the_runner_within_a_second(workspace, alice, tmp_path):
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft a note", user=alice,
                                                     topology=slow_after_step_one(tmp_path))
    assert await database_sync_to_async(claim_run)(run.pk, "runner")
    execution = asyncio.create_task(execute_run(run.pk, "runner"))
    await wait_for(lambda: Step.objects.filter(run=run, status=Step.RELEASED).exists())
    await asyncio.sleep(0.2)  # the runner is listening by now
    assert await database_sync_to_async(request_stop)(run.pk, alice)
    await ring_stop_bell(run.pk)
    async with asyncio.timeout(1.0):
        assert await execution == Run.CANCELLED


def test_a_queued_run_is_cancelled_at_once_and_no_runner_takes_it(workspace, alice):
    run, _ = start_run(workspace, "Draft a note", user=alice, topology=parse_shorthand("offline"))
    assert request_stop(run.pk, alice)
    run.refresh_from_db()
    assert run.status == Run.CANCELLED
    assert claim_run(run.pk, "late-runner") is False
    assert not request_stop(run.pk, alice)  # finished: nothing to stop


def test_after_the_click_a_release_is_not_recorded(workspace, alice):
    run, _ = start_run(workspace, "Draft a note", user=alice, topology=parse_shorthand("offline"))
    claim_run(run.pk, "runner")
    recorder = EventRecorder(run, owner="runner")
    recorder.record(Event(ev.BriefReady(brief=scripting.brief(2))))
    request_stop(run.pk, alice)
    with pytest.raises(StopRequested, match="stopped by alice"):
        recorder.record(Event(ev.StepReleased(step=1, title="Part 1", badge="passed", content="Late.")))
    assert not Step.objects.filter(run=run, status=Step.RELEASED).exists()
    recorder.record(Event(ev.RunCancelled(reason="stopped by alice")))  # the end itself is recorded
    assert Run.objects.get(pk=run.pk).status == Run.CANCELLED


@pytest.mark.parametrize("who, status", [("alice", 200), ("carol", 200), ("bob", 403), ("dave", 403)])
def test_the_starter_and_admins_may_stop_a_run_others_may_not(workspace, alice, bob, carol, dave, who, status):
    run, _ = start_run(workspace, "Draft a note", user=alice, topology=parse_shorthand("offline"))
    client = Client()
    client.force_login({"alice": alice, "bob": bob, "carol": carol, "dave": dave}[who])
    response = client.post(reverse("chat:stop", args=["acme", run.pk]))
    assert response.status_code == status
    run.refresh_from_db()
    assert (run.status == Run.CANCELLED) == (status == 200)
    if status == 200:
        assert b'data-action="stop" disabled' in response.content


def test_a_run_of_another_workspace_is_not_found(workspace, alice, bob):
    other = Workspace.objects.create(slug="globex", name="Globex")
    Membership.objects.create(user=bob, workspace=other, role="admin")
    run, _ = start_run(other, "Draft a note", user=bob, topology=parse_shorthand("offline"))
    client = Client()
    client.force_login(alice)
    assert client.post(reverse("chat:stop", args=["acme", run.pk])).status_code == 404
    assert Run.objects.get(pk=run.pk).status == Run.QUEUED


async def test_a_stop_asked_before_the_runner_starts_stops_it_at_its_first_event(workspace, alice, tmp_path):
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft a note", user=alice,
                                                     topology=slow_after_step_one(tmp_path))
    assert await database_sync_to_async(claim_run)(run.pk, "runner")
    assert await database_sync_to_async(request_stop)(run.pk, alice)  # no bell: nobody listens yet
    async with asyncio.timeout(2.0):  # well before the runner's periodic check of the database
        assert await execute_run(run.pk, "runner") == Run.CANCELLED
    statuses = await database_sync_to_async(lambda: set(run.steps.values_list("status", flat=True)))()
    assert Step.RELEASED not in statuses
