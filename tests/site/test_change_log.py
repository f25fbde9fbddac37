"""The workspace change log: every kind of admin change, from the settings pages, the commands and
the Django admin, is one append-only row of a hash chain that verify_changes checks."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from beyond_site.lib.chaining import GENESIS, link_hash
from beyond_site.workspaces import configuration
from beyond_site.workspaces import members
from beyond_site.workspaces.changelog import record_change, verify_changes
from beyond_site.workspaces.models import AppendOnlyChangeError, Invitation, Membership, Workspace, WorkspaceEvent
from tests.site.chat_support import client_for, workspace_with

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("queued_runs_stay_queued")]


@pytest.fixture
def acme(alice, bob, carol):
    return workspace_with("acme", admin=alice, member=bob, auditor=carol)


def last(action: str) -> WorkspaceEvent:
    return WorkspaceEvent.objects.filter(action=action).order_by("-id").first()


def by(row: WorkspaceEvent, user) -> bool:
    """The row names `user` as who acted, through the app."""
    return (row.user == user and row.actor_id == user.pk and row.actor_name == user.username
            and row.via == WorkspaceEvent.APP)


def by_command(row: WorkspaceEvent) -> bool:
    return row.user is None and row.actor_id is None and row.actor_name == "" and row.via == WorkspaceEvent.COMMAND


def command(*args) -> str:
    out = io.StringIO()
    call_command("beyond_workspace", *args, stdout=out)
    return out.getvalue()


# --- From the settings pages -------------------------------------------------------------------

def test_frameworks_from_the_settings_page(acme, alice):
    before = list(acme.enabled_frameworks)
    client_for(alice).post("/w/acme/settings/frameworks/", {"frameworks": ["gdpr"]})
    row = last("frameworks_changed")
    assert by(row, alice) and (row.before, row.after) == (before, ["gdpr"])


def test_topology_from_the_settings_page(acme, alice):
    data = {"mode": "custom"}
    for role in ("planner", "executor", "verifier", "summarizer"):
        data.update({f"{role}_provider": "openrouter", f"{role}_model": "z-ai/glm-5.3", f"{role}_effort": "low",
                     f"{role}_base_url": "", f"{role}_max_tokens": ""})
    assert client_for(alice).post("/w/acme/settings/topology/", data).status_code == 302
    row = last("topology_changed")
    assert by(row, alice) and row.before is None
    assert row.after["executor"]["model"] == "z-ai/glm-5.3" and row.after == Workspace.objects.get(pk=acme.pk).topology


def test_research_default_from_the_settings_page(acme, alice):
    client_for(alice).post("/w/acme/settings/research/", {"research_default": "on"})
    row = last("research_default_changed")
    assert by(row, alice) and (row.before, row.after) == (False, True)


def test_budget_from_the_settings_page(acme, alice):
    client_for(alice).post("/w/acme/settings/budgets/", {"max_tokens_per_run": "40000", "max_cost_per_run": "0.5"})
    row = last("budget_changed")
    assert by(row, alice)
    assert row.before == {name: None for name in row.before}
    assert row.after["max_tokens_per_run"] == 40000 and row.after["max_cost_per_run"] == "0.5000"


def test_member_added_changed_and_removed_from_the_settings_page(acme, alice, bob, dave):
    workspace_with("globex", admin=alice, member=dave)
    client = client_for(alice)
    client.post("/w/acme/settings/members/", {"username": "dave", "role": "auditor"})
    added = last("member_added")
    assert by(added, alice) and (added.before, added.after, added.detail) == (None, "auditor", {"username": "dave"})
    bob_membership = Membership.objects.get(workspace=acme, user=bob)
    client.post(f"/w/acme/settings/members/{bob_membership.pk}/role/", {"role": "auditor"})
    changed = last("member_role_changed")
    assert by(changed, alice) and (changed.before, changed.after, changed.detail) == ("member", "auditor",
                                                                                       {"username": "bob"})
    client.post(f"/w/acme/settings/members/{bob_membership.pk}/remove/")
    removed = last("member_removed")
    assert by(removed, alice) and (removed.before, removed.after, removed.detail) == ("auditor", None,
                                                                                       {"username": "bob"})


def test_invitations_created_withdrawn_and_accepted(acme, alice, dave):
    client = client_for(alice)
    response = client.post("/w/acme/settings/invitations/", {"role": "auditor", "days": "7", "note": "Erin"})
    assert response.status_code == 200
    created = last("invitation_created")
    assert by(created, alice) and (created.before, created.after) == (None, "auditor")
    assert created.detail["note"] == "Erin"
    invitation = Invitation.objects.get(pk=created.detail["invitation"])
    client.post(f"/w/acme/settings/invitations/{invitation.pk}/withdraw/")
    revoked = last("invitation_revoked")
    assert by(revoked, alice) and (revoked.before, revoked.after) == ("pending", "revoked")

    _, token = members.create_invitation(acme, "member", user=alice)
    client_for(dave).post(f"/invitations/{token}/accept/")
    accepted = last("invitation_accepted")
    assert by(accepted, dave) and (accepted.before, accepted.after) == (None, "member")
    assert accepted.detail["username"] == "dave"


def test_a_workspace_made_in_the_app(alice):
    alice.is_staff = True
    alice.save()
    client_for(alice).post("/workspaces/new/", {"name": "Initech", "slug": ""})
    row = last("workspace_created")
    assert by(row, alice) and row.after == {"name": "Initech", "slug": "initech"} and row.seq == 1


def test_a_change_that_fails_writes_no_row(acme, alice):
    count = WorkspaceEvent.objects.count()
    membership = Membership.objects.get(workspace=acme, user=alice)
    with pytest.raises(members.LastAdminError):
        members.change_role(membership, "member", user=alice)
    assert WorkspaceEvent.objects.count() == count
    assert Membership.objects.get(pk=membership.pk).role == "admin"


def test_a_change_that_changes_nothing_writes_no_row(acme, alice):
    configuration.set_research_default(acme, False, user=alice)
    configuration.set_budget(acme, {"max_tokens_per_run": None}, user=alice)
    assert not WorkspaceEvent.objects.exists()


# --- From the commands ----------------------------------------------------------------------------

def test_create_and_rename_from_the_command(db):
    out = command("create", "initech", "--name", "Initech")
    assert "made by a command on the server" in out
    created = last("workspace_created")
    assert by_command(created) and created.after == {"name": "Initech", "slug": "initech"}
    command("rename", "initech", "Initech Ltd")
    renamed = last("workspace_renamed")
    assert by_command(renamed) and (renamed.before, renamed.after) == ("Initech", "Initech Ltd")
    assert Workspace.objects.get(slug="initech").name == "Initech Ltd"
    command("create", "initech")  # exists: nothing changes, nothing is logged
    assert WorkspaceEvent.objects.count() == 2


def test_members_from_the_command(acme, bob):
    out = command("add-member", "acme", "erin", "auditor")
    assert "Recorded in the change log of acme as change 1, made by a command on the server" in out
    added = last("member_added")
    assert by_command(added) and (added.before, added.after, added.detail) == (None, "auditor", {"username": "erin"})
    command("add-member", "acme", "bob", "admin")
    changed = last("member_role_changed")
    assert by_command(changed) and (changed.before, changed.after, changed.detail) == ("member", "admin",
                                                                                        {"username": "bob"})
    command("remove-member", "acme", "erin")
    removed = last("member_removed")
    assert by_command(removed) and (removed.before, removed.after) == ("auditor", None)
    assert list(WorkspaceEvent.objects.filter(workspace=acme).order_by("seq").values_list("seq", flat=True)) == [1, 2, 3]


def test_topology_frameworks_research_and_budget_from_the_command(acme):
    command("set-topology", "acme", "openrouter:z-ai/glm-5.3")
    topology = last("topology_changed")
    assert by_command(topology) and topology.before is None and topology.after["verifier"]["model"] == "z-ai/glm-5.3"
    command("set-topology", "acme", "default")
    assert last("topology_changed").after is None
    command("set-frameworks", "acme", "gdpr")
    frameworks = last("frameworks_changed")
    assert by_command(frameworks) and frameworks.after == ["gdpr"]
    command("set-research-default", "acme", "on")
    research = last("research_default_changed")
    assert by_command(research) and (research.before, research.after) == (False, True)
    out = command("set-budget", "acme", "--max-runs-per-user-per-day", "20")
    budget = last("budget_changed")
    assert by_command(budget) and budget.after["max_runs_per_user_per_day"] == 20
    assert budget.before["max_runs_per_user_per_day"] is None
    assert "as change 5, made by a command on the server" in out
    assert verify_changes(acme) == []


# --- From the Django admin ------------------------------------------------------------------------

def test_the_django_admin_records_its_changes(acme, alice, bob):
    alice.is_staff = alice.is_superuser = True
    alice.save()
    client = client_for(alice)
    membership = Membership.objects.get(workspace=acme, user=bob)
    response = client.post(f"/admin/workspaces/membership/{membership.pk}/change/",
                           {"user": bob.pk, "workspace": acme.pk, "role": "auditor"})
    assert response.status_code == 302
    row = last("member_role_changed")
    assert row.user == alice and row.via == WorkspaceEvent.ADMIN_SITE and (row.before, row.after) == ("member",
                                                                                                     "auditor")
    client.post(f"/admin/workspaces/membership/{membership.pk}/delete/", {"post": "yes"})
    removed = last("member_removed")
    assert removed.via == WorkspaceEvent.ADMIN_SITE and removed.before == "auditor"
    assert not Membership.objects.filter(pk=membership.pk).exists()


def test_the_django_admin_records_workspace_edits_and_inline_members(acme, alice, bob, carol):
    alice.is_staff = alice.is_superuser = True
    alice.save()
    memberships = list(Membership.objects.filter(workspace=acme).order_by("pk"))
    data = {"name": "Acme Ltd", "slug": "acme", "topology": "null", "enabled_frameworks": '["gdpr"]',
            "research_default": "on",
            "memberships-TOTAL_FORMS": str(len(memberships)), "memberships-INITIAL_FORMS": str(len(memberships)),
            "memberships-MIN_NUM_FORMS": "0", "memberships-MAX_NUM_FORMS": "1000"}
    for n, m in enumerate(memberships):
        data.update({f"memberships-{n}-id": m.pk, f"memberships-{n}-workspace": acme.pk,
                     f"memberships-{n}-user": m.user_id, f"memberships-{n}-role": m.role})
        if m.user == bob:
            data[f"memberships-{n}-role"] = "auditor"
        if m.user == carol:
            data[f"memberships-{n}-DELETE"] = "on"
    response = client_for(alice).post(f"/admin/workspaces/workspace/{acme.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    rows = {row.action: row for row in WorkspaceEvent.objects.filter(workspace=acme)}
    assert set(rows) == {"workspace_renamed", "frameworks_changed", "research_default_changed",
                         "member_role_changed", "member_removed"}
    assert all(row.via == WorkspaceEvent.ADMIN_SITE and row.user == alice for row in rows.values())
    assert (rows["workspace_renamed"].before, rows["workspace_renamed"].after) == ("Acme", "Acme Ltd")
    assert (rows["member_role_changed"].before, rows["member_role_changed"].after) == ("member", "auditor")
    assert rows["member_removed"].detail == {"username": "carol"}
    assert verify_changes(acme) == []


# --- Append-only and chained ----------------------------------------------------------------------

def some_changes(workspace, user, n=5):
    for i in range(n):
        record_change(workspace, user, "budget_changed", before={"max_tokens_per_run": i or None},
                      after={"max_tokens_per_run": i + 1}, note=f"change {i}")
    return list(WorkspaceEvent.objects.filter(workspace=workspace).order_by("seq"))


def test_numbers_are_hashed_as_the_database_gives_them_back(acme, alice):
    """jsonb returns an integral float such as 1e16 as an integer: the row must still verify."""
    row = record_change(acme, alice, "topology_changed", before=None,
                        after={"executor": {"model": "m", "timeout_s": 1e16, "temperature": 0.2, "top_p": 1.0}})
    stored = WorkspaceEvent.objects.get(pk=row.pk)
    assert stored.after["executor"] == {"model": "m", "timeout_s": 10_000_000_000_000_000, "temperature": 0.2,
                                        "top_p": 1}
    assert type(stored.after["executor"]["timeout_s"]) is int and type(stored.after["executor"]["top_p"]) is int
    assert verify_changes(acme) == []

def test_rows_are_numbered_and_chained_as_documented(acme, alice):
    rows = some_changes(acme, alice)
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
    prev = GENESIS
    for row in rows:  # recomputed here from the documented content, as an outside script would
        content = {"workspace": acme.pk, "seq": row.seq, "action": row.action, "user_id": alice.pk,
                   "username": "alice", "via": "app", "at": row.at, "before": row.before, "after": row.after,
                   "detail": row.detail}
        assert row.hash == link_hash(prev, content)
        prev = row.hash
    assert verify_changes(acme) == []


def test_each_workspace_has_its_own_chain(acme, alice, globex):
    some_changes(acme, alice, 2)
    record_change(globex, None, "workspace_renamed", before="Globex", after="Globex Inc")
    assert WorkspaceEvent.objects.get(workspace=globex).seq == 1
    assert verify_changes(acme) == [] and verify_changes(globex) == []


def test_rows_refuse_to_be_saved_again_or_deleted(acme, alice):
    row = some_changes(acme, alice, 1)[0]
    row.after = {"max_tokens_per_run": 10**9}
    with pytest.raises(AppendOnlyChangeError):
        row.save()
    with pytest.raises(AppendOnlyChangeError):
        row.delete()
    with pytest.raises(AppendOnlyChangeError):
        WorkspaceEvent.objects.filter(pk=row.pk).update(action="nothing")
    with pytest.raises(AppendOnlyChangeError):
        WorkspaceEvent.objects.filter(pk=row.pk).delete()
    assert verify_changes(acme) == []


def test_the_chain_outlives_a_deleted_user(acme, alice, dave):
    workspace_with("globex", admin=alice, member=dave)
    members.add_existing_member(acme, "dave", "member", user=alice)
    record_change(acme, dave, "memory_deleted", before="a fact")
    dave.delete()
    row = last("memory_deleted")
    assert row.user is None and row.actor_name == "dave"
    assert verify_changes(acme) == []


def raw(sql: str, *params) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


TABLE = WorkspaceEvent._meta.db_table


def test_verification_catches_a_row_changed_with_raw_sql(acme, alice):
    rows = some_changes(acme, alice)
    raw(f"UPDATE {TABLE} SET after = %s WHERE id = %s", '{"max_tokens_per_run": 999999}', rows[2].pk)
    problems = verify_changes(acme)
    assert len(problems) == 1 and problems[0].startswith("change 3 (budget_changed")


def test_verification_catches_a_changed_actor(acme, alice, bob):
    rows = some_changes(acme, alice)
    raw(f"UPDATE {TABLE} SET actor_name = %s, actor_id = %s, user_id = %s WHERE id = %s",
        "bob", bob.pk, bob.pk, rows[0].pk)
    assert [p.split(" (")[0] for p in verify_changes(acme)] == ["change 1"]


def test_verification_catches_a_deleted_row(acme, alice):
    rows = some_changes(acme, alice)
    raw(f"DELETE FROM {TABLE} WHERE id = %s", rows[1].pk)
    problems = verify_changes(acme)
    assert len(problems) == 1 and problems[0].startswith("change 2 missing")


def test_verification_catches_a_row_deleted_and_the_next_rewritten(acme, alice):
    rows = some_changes(acme, alice)
    raw(f"DELETE FROM {TABLE} WHERE id = %s", rows[1].pk)
    raw(f"UPDATE {TABLE} SET seq = 2 WHERE id = %s", rows[2].pk)  # closing the gap breaks the links
    raw(f"UPDATE {TABLE} SET seq = 3 WHERE id = %s", rows[3].pk)
    raw(f"UPDATE {TABLE} SET seq = 4 WHERE id = %s", rows[4].pk)
    assert [p.split(" (")[0] for p in verify_changes(acme)] == ["change 2", "change 3", "change 4"]


def test_verification_catches_two_swapped_rows(acme, alice):
    rows = some_changes(acme, alice)
    raw(f"UPDATE {TABLE} SET seq = 1000 WHERE id = %s", rows[1].pk)
    raw(f"UPDATE {TABLE} SET seq = 2 WHERE id = %s", rows[2].pk)
    raw(f"UPDATE {TABLE} SET seq = 3 WHERE id = %s", rows[1].pk)
    problems = verify_changes(acme)
    # Three links broke: 1 -> (was 3), (was 3) -> (was 2), (was 2) -> 4.
    assert [p.split(" (")[0] for p in problems] == ["change 2", "change 3", "change 4"]


def test_verification_catches_content_swapped_between_rows(acme, alice):
    rows = some_changes(acme, alice)
    raw(f"UPDATE {TABLE} SET after = %s WHERE id = %s", '{"max_tokens_per_run": 3}', rows[3].pk)
    raw(f"UPDATE {TABLE} SET after = %s WHERE id = %s", '{"max_tokens_per_run": 4}', rows[2].pk)
    assert [p.split(" (")[0] for p in verify_changes(acme)] == ["change 3", "change 4"]


def test_an_empty_log_verifies(acme):
    assert verify_changes(acme) == []
