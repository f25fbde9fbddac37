"""Who belongs to a workspace: members and their roles, and the invitations that let people in.

Every change is logged in the workspace's change log (hash-chained, append-only: changelog.py).
Views and commands call these; `access.py` says who may call them.
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from beyond_site.lib.usernames import username_refusal
from beyond_site.workspaces.access import users_visible_to
from beyond_site.workspaces.admin_rights import maker_refusal, withdraw_invitations_of
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Invitation, Membership, Workspace


def _locked_membership(membership: Membership) -> Membership:
    """The membership re-read under a lock on its workspace row, so that two admins stepping down
    at once cannot both see the other one as the remaining admin (call inside a transaction)."""
    Workspace.objects.select_for_update().filter(pk=membership.workspace_id).first()
    return Membership.objects.select_related("user", "workspace").get(pk=membership.pk)


def _keep_an_admin(membership: Membership) -> None:
    """LastAdminError if `membership` is its workspace's only admin (it is about to stop being one)."""
    if membership.role == Membership.ADMIN and not (
            Membership.objects.filter(workspace_id=membership.workspace_id, role=Membership.ADMIN)
            .exclude(pk=membership.pk).exists()):
        raise LastAdminError(f"{membership.user.get_username()} is the workspace's only admin: "
                             "make another member an admin first")


def check_role(role: str) -> None:
    if role not in dict(Membership.ROLES):
        raise ValueError(f"unknown role {role!r}; expected admin, member or auditor")


def addable_user(user, username: str):
    """The account `username` if the admin `user` can see it (access.users_visible_to); otherwise
    NotAddable, with the same words whether or not the name exists elsewhere on the server."""
    target = users_visible_to(user).filter(username=username).first() if user is not None else None
    if target is None:
        raise NotAddable(f"You cannot add {username or 'this user'} directly: only people who share a "
                         "workspace with you can be. Send them an invitation link instead.")
    return target


class LastAdminError(ValueError):
    """Removing or demoting this member would leave the workspace without an admin."""


class NotAddable(ValueError):
    """No user the admin may add directly has this name (which says nothing of who exists)."""


@transaction.atomic
def add_member(workspace: Workspace, username: str, role: str, *, create_user: bool = False,
               user=None) -> Membership:
    """Make `username` a member with `role`, or give a member that role (the commands' way: no
    check of who may see whom; the last admin is still kept). Logged like the settings page's."""
    check_role(role)
    User = get_user_model()
    target = User.objects.filter(username=username).first()
    if target is None:
        if not create_user:
            raise ValueError(f"unknown user {username!r}")
        refused = username_refusal(username)  # the sign-up's rule (lib/usernames.py)
        if refused:
            raise ValueError(f"{username!r}: {refused}")
        target = User.objects.create_user(username=username)
    existing = Membership.objects.filter(user=target, workspace=workspace).first()
    if existing is not None:
        return change_role(existing, role, user)
    membership = Membership.objects.create(user=target, workspace=workspace, role=role)
    record_change(workspace, user, "member_added", after=role, username=target.get_username())
    return membership


def add_existing_member(workspace: Workspace, username: str, role: str, user=None) -> Membership:
    """Add a user the admin `user` can already see (access.users_visible_to) with `role` (logged).

    NotAddable for any other name, existing or not, with the same words: the form must not tell
    an admin which usernames exist elsewhere on the server (anyone else joins by invitation).
    ValueError for an unknown role or someone already a member (their role is changed with
    change_role, which guards the last admin)."""
    username = (username or "").strip()
    check_role(role)
    if role == Membership.ADMIN:  # nobody is made an admin without accepting it (consent.offer_role)
        raise ValueError("An admin is never added directly: offer them the role, which they accept or decline.")
    if Membership.objects.filter(workspace=workspace, user__username=username).exists():
        raise ValueError(f"{username} is already a member of this workspace; change their role instead")
    target = addable_user(user, username)
    with transaction.atomic():
        membership = Membership.objects.create(user=target, workspace=workspace, role=role)
        record_change(workspace, user, "member_added", after=role, username=username)
    return membership


@transaction.atomic
def change_role(membership: Membership, role: str, user=None) -> Membership:
    """Give a member another role (logged); LastAdminError rather than demote the last admin."""
    check_role(role)
    membership = _locked_membership(membership)
    if role == membership.role:
        return membership
    _keep_an_admin(membership)
    record_change(membership.workspace, user, "member_role_changed", username=membership.user.get_username(),
         before=membership.role, after=role)
    if membership.role == Membership.ADMIN:
        withdraw_invitations_of(membership.workspace, membership.user, user=user)
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_member(membership: Membership, user=None) -> None:
    """Remove a member (logged); LastAdminError rather than remove the last admin."""
    membership = _locked_membership(membership)
    _keep_an_admin(membership)
    record_change(membership.workspace, user, "member_removed", before=membership.role,
         username=membership.user.get_username())
    if membership.role == Membership.ADMIN:
        withdraw_invitations_of(membership.workspace, membership.user, user=user)
    membership.delete()


INVITATION_DAYS = (1, 3, 7, 14, 30)


class InvitationRefused(ValueError):
    """An invitation link that cannot be accepted; the message says why and is safe to show."""


def _token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_invitation(workspace: Workspace, role: str, *, user, days: int = 7, note: str = "") -> tuple[Invitation, str]:
    """A single-use invitation to `workspace` as `role`, valid for `days` (logged).

    Returns (invitation, token): the token goes in the link and is not stored, only its sha256."""
    check_role(role)
    if days not in INVITATION_DAYS:
        raise ValueError(f"an invitation lasts {', '.join(map(str, INVITATION_DAYS))} days")
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            workspace=workspace, role=role, token_sha256=_token_digest(token), note=" ".join(note.split())[:200],
            created_by=user, expires_at=timezone.now() + timedelta(days=days))
        record_change(workspace, user, "invitation_created", after=role, invitation=invitation.pk, note=invitation.note,
             expires_at=invitation.expires_at.isoformat())
    return invitation, token


def invitation_for(token: str) -> Invitation | None:
    """The invitation behind a link's token, whatever its state, or None."""
    if not token or len(token) > 100:
        return None
    return Invitation.objects.select_related("workspace").filter(token_sha256=_token_digest(token)).first()


REFUSALS = {
    "accepted": "This invitation link has been used already: each link lets one person in, once.",
    "revoked": "This invitation was withdrawn by an admin of the workspace.",
    "declined": "This invitation was declined.",
    "expired": "This invitation link has expired.",
}


def check_invitation(invitation: Invitation | None) -> Invitation:
    """The invitation if it can still be accepted, else InvitationRefused saying why."""
    if invitation is None:
        raise InvitationRefused("This invitation link is not valid: check that it was copied whole.")
    state = invitation.state(timezone.now())
    if state != "pending":
        raise InvitationRefused(f"{REFUSALS[state]} Ask an admin of the workspace for a new one.")
    refused = maker_refusal(invitation)
    if refused:
        raise InvitationRefused(f"{refused}: ask one of its admins for a new invitation.")
    return invitation


@transaction.atomic
def accept_invitation(token: str, user) -> Membership:
    """Make `user` a member with the invitation's role and use the invitation up (logged).

    The invitation row is locked first, so two people with the same link cannot both get in.
    InvitationRefused for a link that is unknown, used, withdrawn or expired, or whose workspace
    `user` belongs to already (the link then stays unused, for the person it was meant for)."""
    found = invitation_for(token)
    # Only the invitation's own row is locked: PostgreSQL locks no row of a nullable join's side.
    invitation = check_invitation(found and Invitation.objects.select_for_update(of=("self",))
                                  .select_related("workspace", "created_by").get(pk=found.pk))
    if invitation.invitee_id is not None and invitation.invitee_id != user.pk:
        raise InvitationRefused("This invitation is for someone else.")
    existing = Membership.objects.filter(user=user, workspace=invitation.workspace).first()
    if existing:
        raise InvitationRefused(f"You are already a member of {invitation.workspace.name} "
                                f"({existing.get_role_display().lower()}); the link was not used.")
    membership = Membership.objects.create(user=user, workspace=invitation.workspace, role=invitation.role)
    invitation.accepted_by, invitation.accepted_at = user, timezone.now()
    invitation.save(update_fields=["accepted_by", "accepted_at"])
    record_change(invitation.workspace, user, "invitation_accepted", after=invitation.role, invitation=invitation.pk,
         username=user.get_username(), note=invitation.note, made_by=invitation.created_by.get_username())
    return membership


@transaction.atomic
def revoke_invitation(invitation: Invitation, user=None) -> None:
    """Withdraw a pending invitation (logged); an accepted or expired one is left as it is."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.state(timezone.now()) != "pending":
        return
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    record_change(invitation.workspace, user, "invitation_revoked", before="pending", after="revoked",
         invitation=invitation.pk, role=invitation.role, note=invitation.note)
