"""Invitations: an admin makes a single-use, expiring link bound to the workspace and a role; the
invited person accepts it logged in, after logging in, or with a new account; every change is in
the workspace's change log; a used, expired or withdrawn link lets nobody in."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from beyond_site.workspaces import members
from beyond_site.workspaces.models import Invitation, Membership, WorkspaceEvent
from tests.site.chat_support import client_for, workspace_with

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough passphrase 42"


@pytest.fixture
def acme(alice, bob, carol):
    return workspace_with("acme", admin=alice, member=bob, auditor=carol)


def invite(admin, role="member", days="7", note="Erin from finance") -> str:
    """The link the settings page shows once, after creating an invitation."""
    response = client_for(admin).post("/w/acme/settings/invitations/", {"role": role, "days": days, "note": note})
    assert response.status_code == 200
    return re.search(r'id="invitation-link"[^>]*value="([^"]+)"', response.content.decode()).group(1)


def path_of(link: str) -> str:
    return "/" + link.split("/", 3)[3]


def test_an_admin_creates_a_link_that_is_shown_once_and_stored_as_a_hash(acme, alice):
    link = invite(alice, role="auditor")
    token = path_of(link).split("/")[2]
    invitation = Invitation.objects.get()
    assert link.startswith("http://testserver/invitations/") and invitation.role == "auditor"
    assert token not in invitation.token_sha256 and len(invitation.token_sha256) == 64
    assert invitation.expires_at - timezone.now() > timedelta(days=6, hours=23)
    event = WorkspaceEvent.objects.get(action="invitation_created")
    assert event.user == alice and event.after == "auditor" and event.detail["note"] == "Erin from finance"
    settings_page = client_for(alice).get("/w/acme/settings/").content.decode()
    assert "Erin from finance" in settings_page and token not in settings_page


def test_members_and_auditors_cannot_invite(acme, bob, carol):
    for user in (bob, carol):
        assert client_for(user).post("/w/acme/settings/invitations/", {"role": "admin", "days": "7"}).status_code == 403
    assert not Invitation.objects.exists()


def test_a_new_person_creates_an_account_and_joins_with_the_role(acme, alice):
    link = invite(alice, role="auditor")
    anonymous = client_for()
    page = anonymous.get(path_of(link)).content.decode()
    assert "Join Acme" in page and "auditor" in page and "Create my account and join" in page
    response = anonymous.post(path_of(link) + "signup/", {"username": "erin", "password1": PASSWORD,
                                                          "password2": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/w/acme/"
    erin = get_user_model().objects.get(username="erin")
    assert Membership.objects.get(user=erin, workspace=acme).role == "auditor"
    page = anonymous.get("/w/acme/").content.decode()  # logged in as erin, welcomed once
    assert "Welcome to Acme: you are an auditor here." in page
    invitation = Invitation.objects.get()
    assert invitation.accepted_by == erin and invitation.state(timezone.now()) == "accepted"
    assert WorkspaceEvent.objects.get(action="invitation_accepted").detail["username"] == "erin"


def test_an_existing_user_accepts_after_logging_in(acme, alice, dave):
    link = invite(alice, role="member")
    page = client_for().get(path_of(link)).content.decode()
    assert f"/accounts/login/?next={path_of(link)}" in page
    client = client_for(dave)
    assert "Join as dave" in client.get(path_of(link)).content.decode()
    response = client.post(path_of(link) + "accept/")
    assert response.status_code == 302 and response["Location"] == "/w/acme/"
    assert Membership.objects.get(user=dave, workspace=acme).role == "member"


def test_a_used_link_is_refused_and_lets_nobody_else_in(acme, alice, dave, django_user_model):
    link = invite(alice)
    client_for(dave).post(path_of(link) + "accept/")
    eve = django_user_model.objects.create_user("eve", password=PASSWORD)
    response = client_for(eve).post(path_of(link) + "accept/")
    assert response.status_code == 410 and "has been used already" in response.content.decode()
    assert not Membership.objects.filter(user=eve).exists()
    anonymous = client_for()
    assert anonymous.get(path_of(link)).status_code == 410
    response = anonymous.post(path_of(link) + "signup/", {"username": "mallory", "password1": PASSWORD,
                                                          "password2": PASSWORD})
    assert response.status_code == 410 and not django_user_model.objects.filter(username="mallory").exists()


def test_an_expired_link_is_refused(acme, alice, dave):
    link = invite(alice, days="1")
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client_for(dave).post(path_of(link) + "accept/")
    assert response.status_code == 410 and "has expired" in response.content.decode()
    assert not Membership.objects.filter(user=dave).exists()


def test_a_withdrawn_link_is_refused_and_the_withdrawal_logged(acme, alice, dave):
    link = invite(alice)
    invitation = Invitation.objects.get()
    response = client_for(alice).post(f"/w/acme/settings/invitations/{invitation.pk}/withdraw/", follow=True)
    assert "Invitation withdrawn" in response.content.decode()
    assert client_for(dave).post(path_of(link) + "accept/").status_code == 410
    assert WorkspaceEvent.objects.filter(action="invitation_revoked", user=alice).count() == 1


def test_a_made_up_or_truncated_link_is_refused(acme, alice, dave):
    link = invite(alice)
    for path in ("/invitations/not-a-real-token/", path_of(link)[:-5] + "/"):
        response = client_for(dave).get(path)
        assert response.status_code == 410 and "not valid" in response.content.decode()


def test_someone_already_a_member_leaves_the_link_unused(acme, alice, bob):
    link = invite(alice, role="admin")
    response = client_for(bob).post(path_of(link) + "accept/")
    assert response.status_code == 410 and "already a member" in response.content.decode()
    assert Membership.objects.get(user=bob, workspace=acme).role == "member"
    assert Invitation.objects.get().state(timezone.now()) == "pending"


def test_a_bad_new_account_keeps_the_link_unused(acme, alice):
    link = invite(alice)
    response = client_for().post(path_of(link) + "signup/", {"username": "erin", "password1": "short",
                                                             "password2": "short"})
    assert response.status_code == 400 and "This password is too short" in response.content.decode()
    assert not get_user_model().objects.filter(username="erin").exists()
    assert Invitation.objects.get().state(timezone.now()) == "pending"


def test_an_invitation_belongs_to_its_workspace(acme, alice, dave):
    workspace_with("globex", admin=dave)
    link = invite(alice)
    invitation = Invitation.objects.get()
    assert client_for(dave).post(f"/w/globex/settings/invitations/{invitation.pk}/withdraw/").status_code == 404
    members.accept_invitation(path_of(link).split("/")[2], dave)
    assert Membership.objects.get(user=dave, workspace=acme).role == "member"
    assert Membership.objects.get(user=dave, workspace__slug="globex").role == "admin"
