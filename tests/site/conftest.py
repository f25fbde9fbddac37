"""Fixtures shared by the site tests: two tenants, and an auditor of the first."""
import asyncio
import threading

import pytest

from beyond_site.runs import jobs
from beyond_site.runtime import process
from beyond_site.runtime.embedded import QueueThreads
from beyond_site.workspaces.models import Membership, Workspace


@pytest.fixture(autouse=True)
def no_background_home_left_behind():
    """A test that started the runtime's background work on its own loop (a websocket through
    the ASGI application does) leaves no home for the next test: runs stay queued unless a test
    serves them."""
    yield
    jobs.serve_here(None)
    process._background.clear()


@pytest.fixture
def queued_runs_stay_queued(settings):
    """Runs submitted in the test are not executed: the views queue them and nothing claims them
    (a test that feeds a run's events by hand, or counts runs in flight, wants them left so)."""
    settings.BEYOND_RUN_IN_PROCESS = False


@pytest.fixture
def server_loop():
    """An event loop on a thread of its own that executes the work this process defers, as the
    embedded server's does (runs/jobs.py): for tests that drive views synchronously."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-server-loop", daemon=True)
    thread.start()
    jobs.serve_here(loop, QueueThreads().run_sync)
    yield loop
    jobs.serve_here(None)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)


@pytest.fixture
def acme():
    return Workspace.objects.create(slug="acme", name="Acme")


@pytest.fixture
def globex():
    return Workspace.objects.create(slug="globex", name="Globex")


@pytest.fixture
def workspace(acme):
    """The workspace a test works in (files needing memories or documents in it override this)."""
    return acme


@pytest.fixture
def auditor(alice, acme):
    """alice, auditor of acme (and of nothing else)."""
    Membership.objects.create(user=alice, workspace=acme, role=Membership.AUDITOR)
    return alice


@pytest.fixture
def auditor_client(client, auditor):
    client.force_login(auditor)
    return client


@pytest.fixture
def people(acme, alice, bob, carol, dave):
    """alice admin, bob member, carol auditor of acme; dave is no member."""
    for user, role in ((alice, Membership.ADMIN), (bob, Membership.MEMBER), (carol, Membership.AUDITOR)):
        Membership.objects.create(user=user, workspace=acme, role=role)
    return {"admin": alice, "member": bob, "auditor": carol, "stranger": dave}
