"""Migration 0007 puts the rows written before it into the chain: per workspace, in the order they
were written, with their before/after moved out of the detail."""
from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from beyond_site.workspaces.changelog import verify_changes
from beyond_site.workspaces.models import Workspace, WorkspaceEvent

pytestmark = [pytest.mark.django_db(transaction=True)]

BEFORE, AFTER = [("workspaces", "0006_workspace_budget")], [("workspaces", "0007_change_log")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture(autouse=True)
def latest_schema_after():
    """The tests after this one meet the schema the models describe (later migrations add columns)."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_existing_rows_are_chained_in_the_order_they_were_written():
    apps = migrate(BEFORE)
    try:
        User = apps.get_model("auth", "User")
        OldWorkspace, OldEvent = apps.get_model("workspaces", "Workspace"), apps.get_model("workspaces", "WorkspaceEvent")
        alice = User.objects.create(username="alice")
        acme, globex = (OldWorkspace.objects.create(slug=s, name=s.title()) for s in ("acme", "globex"))
        early = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        for n, (workspace, action, detail) in enumerate([
                (acme, "research_default_changed", {"before": False, "after": True}),
                (globex, "member_added", {"username": "bob", "role": "member"}),
                (acme, "memory_deleted", {"memory": 3, "text": "a fact"})]):
            row = OldEvent.objects.create(workspace=workspace, user=alice if workspace == acme else None,
                                          action=action, detail=detail)
            OldEvent.objects.filter(pk=row.pk).update(at=early + dt.timedelta(minutes=n))
    finally:
        migrate(AFTER)
    # Only the columns migration 0007 knows: later ones are not applied yet.
    acme, globex = (Workspace.objects.only("id", "slug").get(slug=slug) for slug in ("acme", "globex"))
    first, second = WorkspaceEvent.objects.filter(workspace=acme).order_by("seq")
    assert (first.seq, first.action, first.before, first.after, first.detail) == (
        1, "research_default_changed", False, True, {})
    assert (second.seq, second.action, second.detail) == (2, "memory_deleted", {"memory": 3, "text": "a fact"})
    assert (first.actor_name, first.via) == ("alice", "app")
    other = WorkspaceEvent.objects.get(workspace=globex)
    assert (other.seq, other.actor_name, other.via) == (1, "", "command")
    assert verify_changes(acme) == [] and verify_changes(globex) == []
