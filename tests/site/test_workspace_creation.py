"""Users with the site's staff flag create workspaces from the home page and become their admin."""
from __future__ import annotations

import pytest

from beyond_site.workspaces.models import Membership, Workspace, WorkspaceEvent
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(alice):
    alice.is_staff = True
    alice.save()
    return alice


def test_staff_see_the_form_on_the_home_page_and_others_do_not(staff, bob):
    assert 'action="/workspaces/new/"' in client_for(staff).get("/").content.decode()
    assert 'action="/workspaces/new/"' not in client_for(bob).get("/").content.decode()


def test_staff_create_a_workspace_and_become_its_admin(staff):
    response = client_for(staff).post("/workspaces/new/", {"name": "Acme Clinics", "slug": ""}, follow=True)
    workspace = Workspace.objects.get(slug="acme-clinics")
    assert response.redirect_chain[-1][0] == "/w/acme-clinics/settings/"  # its top, where the confirmation is
    assert "Workspace Acme Clinics created at the address acme-clinics: you are its admin." in response.content.decode()
    assert Membership.objects.get(workspace=workspace).user == staff
    assert Membership.objects.get(workspace=workspace).role == "admin"
    event = WorkspaceEvent.objects.get(action="workspace_created")
    assert event.user == staff and event.detail == {"admin": "alice"}
    assert event.before is None and event.after == {"name": "Acme Clinics", "slug": "acme-clinics"}


def test_a_taken_or_empty_address_is_refused_and_nothing_changes(staff):
    Workspace.objects.create(slug="acme", name="Acme")
    client = client_for(staff)
    response = client.post("/workspaces/new/", {"name": "Another Acme", "slug": "acme"})
    assert response.status_code == 400 and "The address acme is taken" in response.content.decode()
    response = client.post("/workspaces/new/", {"name": "   "})
    assert response.status_code == 400
    response = client.post("/workspaces/new/", {"name": "!!!"})
    assert response.status_code == 400 and "letters or digits" in response.content.decode()
    assert list(Workspace.objects.values_list("slug", flat=True)) == ["acme"] and not Membership.objects.exists()


def test_an_address_made_from_the_name_gets_a_number_when_taken(staff):
    Workspace.objects.create(slug="acme", name="Acme")
    Workspace.objects.create(slug="acme-2", name="Acme again")
    client = client_for(staff)
    response = client.post("/workspaces/new/", {"name": "Acme", "slug": ""}, follow=True)
    assert response.redirect_chain[-1][0] == "/w/acme-3/settings/"
    assert "created at the address acme-3" in response.content.decode()
    assert Membership.objects.get(workspace__slug="acme-3").user == staff
    long_name = "A" * 58 + " b"  # the number still fits in the 60 characters of an address
    Workspace.objects.create(slug=("a" * 58 + "-b"), name=long_name)
    client.post("/workspaces/new/", {"name": long_name, "slug": ""})
    assert Workspace.objects.filter(slug=("a" * 58)[:58] + "-2").exists()


def test_users_without_the_staff_flag_get_403(bob):
    client = client_for(bob)
    assert client.get("/workspaces/new/").status_code == 403
    assert client.post("/workspaces/new/", {"name": "Mine"}).status_code == 403
    assert not Workspace.objects.exists()


def test_anonymous_users_are_sent_to_log_in(client):
    response = client.post("/workspaces/new/", {"name": "Mine"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
