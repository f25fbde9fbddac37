"""A workspace's deliverables settings (paper, classification, organisation): the Settings page and
`beyond_workspace set-export`, each change on the change log; and the chat's copy of a step."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.workspaces.export_settings import set_export_settings
from beyond_site.workspaces.models import Membership, Workspace, WorkspaceEvent
from tests import scripting
from tests.site.chat_support import client_for, new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)


def command(*args) -> str:
    out = io.StringIO()
    call_command("beyond_workspace", *args, stdout=out)
    return out.getvalue()


def test_a4_internal_and_the_workspace_name_by_default(acme):
    assert (acme.export_paper, acme.export_classification, acme.export_organisation) == ("a4", "Internal", "")


def test_the_command_sets_what_it_is_given_and_logs_it(acme):
    out = command("set-export", "acme", "--paper", "letter", "--classification", "Confidential")
    assert "paper Letter, classification Confidential, organisation Acme (the workspace name)" in out
    assert "Recorded in the change log of acme as change 1" in out
    acme.refresh_from_db()
    assert (acme.export_paper, acme.export_classification) == ("letter", "Confidential")
    row = WorkspaceEvent.objects.get(action="export_settings_changed")
    assert (row.via, row.before, row.after) == ("command", {"paper": "a4", "classification": "Internal"},
                                                {"paper": "letter", "classification": "Confidential"})
    command("set-export", "acme", "--paper", "letter")  # unchanged: nothing logged
    assert WorkspaceEvent.objects.filter(action="export_settings_changed").count() == 1
    with pytest.raises(CommandError):
        command("set-export", "acme", "--paper", "a3")
    with pytest.raises(CommandError, match="at most 60"):
        command("set-export", "acme", "--classification", "x" * 61)


def test_an_admin_saves_them_on_the_settings_page_and_a_member_cannot(acme, alice, bob):
    Membership.objects.create(user=alice, workspace=acme, role=Membership.ADMIN)
    Membership.objects.create(user=bob, workspace=acme, role=Membership.MEMBER)
    admin = client_for(alice)
    page = admin.get("/w/acme/settings/").content.decode()
    assert 'id="deliverables"' in page and 'value="Internal"' in page
    data = {"paper": "letter", "classification": "Restricted", "organisation": "Acme Health SAS"}
    assert client_for(bob).post("/w/acme/settings/deliverables/", data).status_code == 403
    response = admin.post("/w/acme/settings/deliverables/", data, follow=True)
    assert "Deliverables saved" in response.content.decode()
    acme.refresh_from_db()
    assert (acme.export_paper, acme.export_classification, acme.export_organisation) == (
        "letter", "Restricted", "Acme Health SAS")
    row = WorkspaceEvent.objects.get(action="export_settings_changed")
    assert row.actor_name == "alice"
    changes = admin.get("/w/acme/audit/changes/").content.decode()
    assert "Deliverables&#x27; settings changed" in changes or "Deliverables' settings changed" in changes


def test_control_characters_and_bidi_overrides_are_refused_or_dropped(acme):
    with pytest.raises(ValueError, match="paper"):
        set_export_settings(acme, paper="A3")
    assert set_export_settings(acme, classification="Inter\u202enal")["classification"] == "Internal"
    assert Workspace.objects.get(pk=acme.pk).export_classification == "Internal"


def test_a_released_step_copies_as_the_exports_markdown(alice, bob):
    run = new_run(workspace_with(member=alice), alice)
    record(run, Event(ev.BriefReady(brief=scripting.brief(2))),
           released(1, "## Access\n\nManagers **approve** <b>access</b>.\n\nThis section addresses GDPR Art. 30."))
    url = f"/w/{run.workspace.slug}/runs/{run.pk}/steps/1.md"
    response = client_for(alice).get(url)  # the run is still going: a released step copies already
    assert response.status_code == 200 and response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == "## Access\n\nManagers **approve** \\<b\\>access\\</b\\>.\n"
    assert client_for(alice).get(url.replace("/1.md", "/2.md")).status_code == 404  # not released
    assert client_for(bob).get(url).status_code == 404
