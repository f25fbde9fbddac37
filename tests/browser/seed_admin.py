"""Seed for the browser tests of the file library and workspace administration (called by seed.py):
a workspace `team` with an admin (carol), an auditor (dave) and a file; a staff user; an invitation
that has expired. Returns ids and tokens for the tests."""
from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from beyond_site.workspaces import knowledge
from beyond_site.workspaces import members
from beyond_site.workspaces.models import Invitation, Membership, Workspace

PASSWORD = "correct horse battery staple"


def main() -> dict:
    User = get_user_model()
    carol = User.objects.create_user("carol", password=PASSWORD)
    dave = User.objects.create_user("dave", password=PASSWORD)
    User.objects.create_user("staff", password=PASSWORD, is_staff=True)
    User.objects.create_user("frank", password=PASSWORD)  # has a login, belongs to no workspace yet
    team = Workspace.objects.create(slug="team", name="Team Ltd")
    Membership.objects.create(user=carol, workspace=team, role=Membership.ADMIN)
    Membership.objects.create(user=dave, workspace=team, role=Membership.AUDITOR)
    alice = User.objects.get(username="alice")
    Membership.objects.create(user=alice, workspace=team, role=Membership.MEMBER)
    knowledge.add_document(team, "access-policy.md", b"# Access policy\n\nManagers approve every access request.",
                          user=carol)
    _, expired = members.create_invitation(team, Membership.MEMBER, user=carol, days=1, note="late")
    Invitation.objects.filter(note="late").update(expires_at=timezone.now() - timedelta(minutes=1))
    return {"expired_token": expired}
