"""Shared set-up for the chat tests: workspaces with members, runs fed recorded events."""
from __future__ import annotations

from django.test import Client

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.workspaces.models import Conversation
from beyond_site.runs.recorder import EventRecorder
from beyond_site.runs.queue import start_run
from beyond_site.workspaces.models import Membership, Workspace
from tests import scripting

ORIGIN = (b"origin", b"http://localhost")
HOST = (b"host", b"localhost")  # the handshake's own site: the Origin must be it (lib/origins.py)


def client_for(user=None) -> Client:
    """A test client logged in as `user` (anonymous without one)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def workspace_with(slug="acme", **members) -> Workspace:
    """members: username=user-object pairs are not needed; pass role=user e.g. member=alice."""
    workspace = Workspace.objects.create(slug=slug, name=slug.title(), topology=None)
    for role, user in members.items():
        Membership.objects.create(user=user, workspace=workspace, role=role)
    return workspace


def new_run(workspace, user, task="Draft an access-control note", key=None):
    conversation = Conversation.objects.create(workspace=workspace, title=task[:80], created_by=user)
    run, _ = start_run(workspace, task, user=user, conversation=conversation, idempotency_key=key)
    return run


def record(run, *events: Event):
    recorder = EventRecorder(run)
    return [recorder.record(e) for e in events]


def brief_ready(n=3) -> Event:
    return Event(ev.BriefReady(brief=scripting.brief(n)))


def released(k, content, badge="passed", warnings=None) -> Event:
    return Event(ev.StepReleased(step=k, title=f"Part {k}", badge=badge, content=content,
                                   warnings=warnings or []))


def session_headers(user) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    return [ORIGIN, (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()), HOST]
