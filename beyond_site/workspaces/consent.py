"""Membership with consent: nobody is made an admin without accepting it, and anyone may leave.

- **The role of admin is offered, never given.** An admin who adds an existing account as admin,
  or makes a member an admin, makes an offer to that one account (an `Invitation` with an
  `invitee`): it is accepted or declined from the invitee's home page, and until then nothing
  changes. This holds for the site's staff and for superusers and other tenants' admins named by
  them: a workspace cannot make someone answerable for it unasked. Members and auditors are still
  added directly by admins who may see them (members.add_existing_member): they can leave.
- **Leaving.** A member, an auditor or an admin leaves a workspace from its leave page; the last
  admin cannot (another admin first). An admin who leaves takes their pending invitations along.

Every step is in the workspace's change log.
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from beyond_site.workspaces import members
from beyond_site.workspaces.admin_rights import maker_refusal, withdraw_invitations_of
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Invitation, Membership, Workspace

#: How long an offer stays open.
OFFER_DAYS = 14


class NoSuchOffer(LookupError):
    """No pending offer with that id for this account (whoever else it may be for)."""


def offer_role(workspace, username: str, role: str, *, user) -> Invitation:
    """Offer `role` in `workspace` to the account `username` (logged); the pending offer already made,
    if there is one. NotAddable for an account the admin `user` may not name (the same words as for
    a name nobody has), ValueError for someone who has the role already."""
    username = (username or "").strip()
    members.check_role(role)
    target = members.addable_user(user, username)
    with transaction.atomic():
        current = Membership.objects.filter(workspace=workspace, user=target).values_list("role", flat=True).first()
        if current == role:
            raise ValueError(f"{username} is already {'an' if role == Membership.ADMIN else 'a'} {role} here.")
        pending = Invitation.objects.filter(workspace=workspace, invitee=target, role=role, accepted_at=None,
                                            declined_at=None, revoked_at=None, expires_at__gt=timezone.now()).first()
        if pending is not None:
            return pending
        offer = Invitation.objects.create(
            workspace=workspace, role=role, invitee=target, created_by=user, note=username,
            token_sha256=hashlib.sha256(secrets.token_bytes(32)).hexdigest(),  # no link: nobody knows its token
            expires_at=timezone.now() + timedelta(days=OFFER_DAYS))
        record_change(workspace, user, "invitation_created", before=current, after=role, invitation=offer.pk,
                      invitee=username, note=offer.note, expires_at=offer.expires_at.isoformat())
    return offer


def offers_for(user) -> list[Invitation]:
    """The offers waiting for `user`'s answer, newest first (those whose maker may still make them)."""
    pending = (Invitation.objects.filter(invitee=user, accepted_at=None, declined_at=None, revoked_at=None,
                                         expires_at__gt=timezone.now())
               .select_related("workspace", "created_by").order_by("-created_at"))
    return [offer for offer in pending if maker_refusal(offer) is None]


def _locked_offer(offer_id: int, user) -> Invitation:
    offer = (Invitation.objects.select_for_update().select_related("workspace", "created_by")
             .filter(pk=offer_id, invitee=user).first())
    if offer is None:
        raise NoSuchOffer(offer_id)
    return offer


@transaction.atomic
def accept_offer(offer_id: int, user) -> Membership:
    """`user` takes the role offered (joining, or changing role); InvitationRefused when the offer is
    no longer open or its maker no longer an admin."""
    offer = members.check_invitation(_locked_offer(offer_id, user))
    membership = Membership.objects.filter(workspace=offer.workspace, user=user).first()
    before = membership.role if membership else None
    if membership is None:
        membership = Membership.objects.create(user=user, workspace=offer.workspace, role=offer.role)
    else:
        membership.role = offer.role
        membership.save(update_fields=["role"])
    offer.accepted_by, offer.accepted_at = user, timezone.now()
    offer.save(update_fields=["accepted_by", "accepted_at"])
    record_change(offer.workspace, user, "invitation_accepted", before=before, after=offer.role, invitation=offer.pk,
                  username=user.get_username(), note=offer.note, made_by=offer.created_by.get_username())
    return membership


@transaction.atomic
def decline_offer(offer_id: int, user) -> Invitation:
    offer = _locked_offer(offer_id, user)
    if offer.state(timezone.now()) == "pending":
        offer.declined_at = timezone.now()
        offer.save(update_fields=["declined_at"])
        record_change(offer.workspace, user, "invitation_declined", before="pending", after="declined",
                      invitation=offer.pk, role=offer.role, username=user.get_username())
    return offer


@transaction.atomic
def leave(membership: Membership) -> None:
    """`membership`'s user leaves its workspace (logged); LastAdminError for the last admin."""
    # The workspace row locked first, as for any change of role: two admins leaving at once cannot
    # both see the other as the one who stays.
    Workspace.objects.select_for_update().filter(pk=membership.workspace_id).first()
    membership = Membership.objects.select_related("user", "workspace").get(pk=membership.pk)
    others = Membership.objects.filter(workspace_id=membership.workspace_id, role=Membership.ADMIN).exclude(
        pk=membership.pk)
    if membership.role == Membership.ADMIN and not others.exists():
        raise members.LastAdminError(f"You are the only admin of {membership.workspace.name}: make another "
                                      "member an admin first, then leave.")
    record_change(membership.workspace, membership.user, "member_left", before=membership.role,
                  username=membership.user.get_username())
    if membership.role == Membership.ADMIN:
        withdraw_invitations_of(membership.workspace, membership.user, user=membership.user)
    membership.delete()
