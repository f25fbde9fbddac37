"""Saved tasks: the workspace's library and members' own tasks, their placeholders, who may change
which, the change log, and the chat page's `/` list."""
from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from beyond_site.audit.changes import change_rows, filtered_changes
from beyond_site.workspaces.changelog import verify_changes
from beyond_site.workspaces.knowledge import add_memory
from beyond_site.workspaces.models import Membership, SavedTask, WorkspaceEvent
from beyond_site.workspaces import saved_tasks
from beyond_site.workspaces.saved_tasks import (MAX_TEXT_CHARS, OWN, WORKSPACE, TaskRefused, add_task, delete_task,
                                                edit_task, fill, placeholders, promote_task, task_parts,
                                                visible_tasks)

pytestmark = pytest.mark.django_db

SOA = "Draft our SoA for Annex A {theme}, as of {quarter}; keep {theme} controls first."


def _membership(user, workspace):
    return Membership.objects.select_related("workspace", "user").get(user=user, workspace=workspace)


def _url(name, *args):
    return reverse(f"chat:{name}", args=["acme", *args])


# ---- placeholders ---------------------------------------------------------------------------------

def test_it_parses_placeholders_in_order_each_name_once():
    parts = task_parts(SOA)
    assert parts[:2] == [("text", "Draft our SoA for Annex A "), ("placeholder", "theme")]
    assert placeholders(parts) == ["theme", "quarter"]
    assert fill(parts, {"theme": "8 (technological)", "quarter": "Q3"}) == (
        "Draft our SoA for Annex A 8 (technological), as of Q3; keep 8 (technological) controls first.")


def test_doubled_braces_are_braces_and_a_name_may_have_spaces():
    parts = task_parts("Use {{braces}} for {client name}.")
    assert parts == [("text", "Use {braces} for "), ("placeholder", "client name"), ("text", ".")]
    assert task_parts("No placeholder at all.") == [("text", "No placeholder at all.")]


@pytest.mark.parametrize("text,where", [
    ("SoA for {theme", "'{' at character 9 is not closed"),
    ("SoA for {theme {quarter}", "'{' at character 9 is not closed"),
    ("SoA for theme}", "'}' at character 14 closes no placeholder"),
    ("SoA for {}", "at character 9 has no name"),
    ("SoA for {   }", "at character 9 has no name"),
    ("SoA for {the<b>me}", "at character 9 is not a name"),
    ("SoA for {" + "x" * 41 + "}", "is not a name"),
])
def test_malformed_placeholders_are_refused_with_where_they_are(text, where):
    with pytest.raises(TaskRefused, match=where):
        task_parts(text)


def test_more_than_ten_different_placeholders_are_refused():
    with pytest.raises(TaskRefused, match="at most 10"):
        task_parts(" ".join(f"{{p{n}}}" for n in range(11)))
    assert len(placeholders(task_parts(" ".join("{p}" for _ in range(30))))) == 1  # the same one, many times


# ---- the services: checks, scopes, change log ------------------------------------------------------

def test_an_admin_adds_a_workspace_task_and_it_is_on_record(people, acme):
    alice = people["admin"]
    task = add_task(_membership(alice, acme), "  SoA by theme ", SOA, WORKSPACE)
    assert (task.name, task.owner, task.created_by) == ("SoA by theme", None, alice)
    event = WorkspaceEvent.objects.get(action="saved_task_added")
    assert event.user == alice and event.before is None
    assert event.after == {"name": "SoA by theme", "text": SOA, "for": "the workspace"}
    assert event.detail == {"task": task.pk, "scope": "workspace"}
    assert verify_changes(acme) == []


@pytest.mark.parametrize("name,text,field,message", [
    ("", SOA, "name", "Give the task a name"),
    ("   ", SOA, "name", "Give the task a name"),
    ("x" * 121, SOA, "name", "at most 120 characters"),
    ("Two\nlines", SOA, "name", "one line"),
    ("SoA", "   ", "text", "Write the task's text"),
    ("SoA", "a\x00b", "text", "NUL"),
    ("SoA", "x" * (MAX_TEXT_CHARS + 1), "text", "at most 10,000 characters"),
    ("SoA", "SoA for {theme", "text", "not closed"),
])
def test_bad_input_is_refused_and_nothing_is_saved_or_logged(people, acme, name, text, field, message):
    with pytest.raises(TaskRefused, match=message) as refused:
        add_task(_membership(people["admin"], acme), name, text, WORKSPACE)
    assert refused.value.field == field
    assert not SavedTask.objects.exists() and not WorkspaceEvent.objects.exists()


def test_names_are_unique_per_library_and_per_member_whatever_the_case(people, acme):
    admin, member = _membership(people["admin"], acme), _membership(people["member"], acme)
    add_task(admin, "SoA", "Draft the SoA.", WORKSPACE)
    with pytest.raises(TaskRefused, match="The workspace's library has a task named “SoA” already"):
        add_task(admin, "soa", "Another.", WORKSPACE)
    with pytest.raises(TaskRefused, match="library has a task named"):  # side by side in the picker
        add_task(member, "SOA", "Mine.", OWN)
    add_task(member, "RoPA", "Draft the RoPA.", OWN)
    with pytest.raises(TaskRefused, match="You have a task named “RoPA” already"):
        add_task(member, "ropa", "Again.", OWN)
    # A workspace task may share a name with someone's own: the admin cannot see theirs.
    add_task(admin, "RoPA", "Draft the records of processing.", WORKSPACE)
    with pytest.raises(TaskRefused):
        edit_task(admin, SavedTask.objects.get(name="SoA"), "ROPA", "Draft the SoA.")


def test_members_keep_their_own_tasks_and_only_use_the_workspace_ones(people, acme):
    admin, member = _membership(people["admin"], acme), _membership(people["member"], acme)
    shared = add_task(admin, "SoA", SOA, WORKSPACE)
    mine = add_task(member, "My RoPA", "Draft the RoPA for {team}.", OWN)
    alices = add_task(admin, "Alice's note", "Private to alice.", OWN)
    assert mine.owner == people["member"]
    assert list(visible_tasks(member)) == [mine, shared]  # by name, case-insensitively
    assert list(visible_tasks(admin)) == [alices, shared]  # an admin does not see bob's own
    auditor = _membership(people["auditor"], acme)
    assert list(visible_tasks(auditor)) == [shared]
    with pytest.raises(PermissionError):
        add_task(member, "Shared", "x", WORKSPACE)
    with pytest.raises(PermissionError):
        add_task(auditor, "Mine", "x", OWN)
    with pytest.raises(PermissionError):
        edit_task(member, shared, "SoA", "Changed.")
    with pytest.raises(PermissionError):
        delete_task(member, shared)
    with pytest.raises(PermissionError):
        edit_task(admin, mine, "My RoPA", "An admin may not touch bob's.")
    edit_task(member, mine, "My RoPA", "Draft the RoPA for {team}, {year}.")
    delete_task(member, mine)
    assert list(WorkspaceEvent.objects.order_by("seq").values_list("action", "detail__scope")) == [
        ("saved_task_added", "workspace"), ("saved_task_added", "own"), ("saved_task_added", "own"),
        ("saved_task_edited", "own"), ("saved_task_deleted", "own")]


def test_an_edit_records_before_and_after_and_the_page_shows_only_what_changed(people, acme):
    admin = _membership(people["admin"], acme)
    task = add_task(admin, "SoA", SOA, WORKSPACE)
    edit_task(admin, task, "SoA", SOA)  # nothing changed: nothing logged
    edit_task(admin, task, "SoA by theme", SOA)
    event = WorkspaceEvent.objects.get(action="saved_task_edited")
    assert event.before["name"] == "SoA" and event.after["name"] == "SoA by theme"
    [row] = change_rows([event])
    assert row["what"] == "Saved task edited" and row["lines"] == [("name", "SoA", "SoA by theme")]
    delete_task(admin, task)
    [row] = change_rows([WorkspaceEvent.objects.get(action="saved_task_deleted")])
    assert row["what"] == "Saved task deleted" and row["lines"][0] == ("", "saved", "none")
    assert not SavedTask.objects.exists() and verify_changes(acme) == []


def test_an_admin_moves_their_own_task_into_the_library(people, acme):
    admin = _membership(people["admin"], acme)
    task = add_task(admin, "Questionnaire", "Answer the {client} questionnaire.", OWN)
    promote_task(admin, task)
    task.refresh_from_db()
    assert task.owner is None
    assert task in visible_tasks(_membership(people["member"], acme))
    event = WorkspaceEvent.objects.get(action="saved_task_promoted")
    assert (event.before["for"], event.after["for"]) == ("alice only", "the workspace")
    member = _membership(people["member"], acme)
    bobs = add_task(member, "Bob's", "x", OWN)
    with pytest.raises(PermissionError):
        promote_task(member, bobs)  # a member asks an admin instead
    with pytest.raises(PermissionError):
        promote_task(admin, bobs)  # nobody promotes someone else's


def test_the_admin_changes_page_filters_saved_tasks_as_their_own_kind(people, acme, client):
    add_memory(acme, "A fact.", user=people["admin"])
    add_task(_membership(people["admin"], acme), "SoA", SOA, WORKSPACE)
    rows, form = filtered_changes(acme, {"kind": "tasks"})
    assert form.is_valid() and [r.action for r in rows] == ["saved_task_added"]
    client.force_login(people["auditor"])
    page = client.get(reverse("audit:changes", args=["acme"]), {"kind": "tasks"}).content.decode()
    assert "Saved task added" in page and "Memory added" not in page
    assert "Draft our SoA for Annex A {theme}" in page


def test_two_admins_saving_one_name_at_once_get_one_task_and_a_refusal(people, acme, monkeypatch):
    admin = _membership(people["admin"], acme)
    add_task(admin, "SoA", SOA, WORKSPACE)
    with pytest.raises(IntegrityError), transaction.atomic():  # the database holds the line too
        SavedTask.objects.create(workspace=acme, name="SOA", text="x")
    # The other admin's check ran before the first task was saved: the constraint refuses it.
    monkeypatch.setattr(saved_tasks, "_check_name_free", lambda *args, **kwargs: None)
    with pytest.raises(TaskRefused, match="was just saved"):
        add_task(admin, "soa", "Another.", WORKSPACE)
    assert SavedTask.objects.count() == 1
    assert list(WorkspaceEvent.objects.values_list("action", flat=True)) == ["saved_task_added"]


# ---- the pages -------------------------------------------------------------------------------------

def test_the_page_answers_members_and_auditors_and_hides_from_strangers(client, people):
    for role in ("admin", "member", "auditor"):
        client.force_login(people[role])
        assert client.get(_url("saved_tasks")).status_code == 200
    client.force_login(people["stranger"])
    assert client.get(_url("saved_tasks")).status_code == 404
    assert client.post(_url("saved_task_add"), {"name": "x", "text": "y", "scope": "own"}).status_code == 404
    assert not SavedTask.objects.exists()


def test_an_admin_adds_edits_and_deletes_through_the_page(client, people, acme):
    client.force_login(people["admin"])
    response = client.post(_url("saved_task_add"), {"name": "SoA", "text": SOA, "scope": "workspace"})
    assert response.status_code == 302 and response["Location"] == _url("saved_tasks")
    task = SavedTask.objects.get()
    assert task.owner is None
    page = client.get(_url("saved_tasks")).content.decode()
    assert "Draft our SoA for Annex A {theme}" in page and "Saved “SoA”" in page
    assert client.post(_url("saved_task_edit", task.pk), {"name": "SoA 2", "text": SOA}).status_code == 302
    assert client.post(_url("saved_task_delete", task.pk)).status_code == 302
    assert [e.action for e in WorkspaceEvent.objects.order_by("seq")] == [
        "saved_task_added", "saved_task_edited", "saved_task_deleted"]


def test_a_refused_task_is_shown_again_with_its_error_and_escaped(client, people):
    client.force_login(people["admin"])
    evil = "<script>alert(1)</script> {theme"
    response = client.post(_url("saved_task_add"), {"name": "<b>SoA</b>", "text": evil, "scope": "workspace"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "is not closed" in page and 'aria-invalid="true"' in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; {theme" in page
    assert "&lt;b&gt;SoA&lt;/b&gt;" in page
    assert not SavedTask.objects.exists()


def test_members_cannot_touch_workspace_tasks_and_auditors_cannot_save(client, people, acme):
    task = add_task(_membership(people["admin"], acme), "SoA", SOA, WORKSPACE)
    client.force_login(people["member"])
    assert client.post(_url("saved_task_add"), {"name": "x", "text": "y", "scope": "workspace"}).status_code == 403
    assert client.post(_url("saved_task_edit", task.pk), {"name": "x", "text": "y"}).status_code == 403
    assert client.post(_url("saved_task_delete", task.pk)).status_code == 403
    assert client.post(_url("saved_task_promote", task.pk)).status_code == 403
    assert client.post(_url("saved_task_add"), {"name": "Mine", "text": "y", "scope": "own"}).status_code == 302
    page = client.get(_url("saved_tasks")).content.decode()
    assert f'action="{_url("saved_task_edit", task.pk)}"' not in page  # no edit form for the library's
    client.force_login(people["auditor"])
    assert client.post(_url("saved_task_add"), {"name": "A", "text": "y", "scope": "own"}).status_code == 403
    assert client.post(_url("saved_task_delete", task.pk)).status_code == 403
    # Someone else's own task is not there at all.
    mine = SavedTask.objects.get(name="Mine")
    client.force_login(people["admin"])
    assert client.post(_url("saved_task_edit", mine.pk), {"name": "x", "text": "y"}).status_code == 404
    assert client.post(_url("saved_task_delete", mine.pk)).status_code == 404
    assert client.post(_url("saved_task_promote", mine.pk)).status_code == 404
    assert SavedTask.objects.filter(pk=mine.pk, name="Mine").exists()
    assert client.post(_url("saved_task_edit", 99999999), {"name": "x", "text": "y"}).status_code == 404


def test_the_chat_page_carries_the_picker_with_each_task_parsed(client, people, acme):
    add_task(_membership(people["admin"], acme), "SoA \"quoted\" <i>", SOA, WORKSPACE)
    add_task(_membership(people["member"], acme), "Mine", "Just mine.", OWN)
    client.force_login(people["member"])
    page = client.get(reverse("chat:workspace", args=["acme"])).content.decode()
    assert 'role="listbox"' in page and page.count('role="option"') == 2
    assert "SoA &quot;quoted&quot; &lt;i&gt;" in page
    parts = json.dumps(task_parts(SOA)).replace('"', "&quot;")
    assert f'data-parts="{parts}"' in page
    assert 'aria-controls="saved-task-list"' in page
    SavedTask.objects.create(workspace=acme, name="Written around the checks", text="Half {open")
    page = client.get(reverse("chat:workspace", args=["acme"])).content.decode()
    assert "[[&quot;text&quot;, &quot;Half {open&quot;]]" in page  # offered as it is, not a 500
    client.force_login(people["auditor"])  # no composer, no picker
    assert 'role="listbox"' not in client.get(reverse("chat:workspace", args=["acme"])).content.decode()
