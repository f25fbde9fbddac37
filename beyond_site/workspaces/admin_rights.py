"""An invitation speaks for the admin who made it, and only while they are one; and when someone
becomes an admin by accepting an invitation, the workspace's other admins are told.

- When an admin loses the role (made a member or an auditor, removed, or leaving), the invitations
  they made that are still pending are withdrawn with them (`withdraw_invitations_of`, logged with
  the reason): a removed admin cannot come back through a link made earlier.
- Whatever path changed the role (the Django admin, raw SQL, an older version), an invitation is
  accepted only if its maker is still an active admin of its workspace (`maker_refusal`).
- Each admin sees, on the workspace page and the settings page, who became an admin by an
  invitation since they last noted it (`admin_news`), from the change log.
"""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Invitation, Membership, WorkspaceEvent

MAKER_GONE = "The admin who made this invitation is no longer an admin of the workspace"
#: The change log's word for an admin who joined by an invitation.
ADMIN_JOINED = ("invitation_accepted", Membership.ADMIN)
#: Admins shown in the news at once (the change log has them all).
NEWS_SHOWN = 10


def maker_refusal(invitation: Invitation) -> str | None:
    """Why `invitation` can no longer let anyone in on its maker's behalf, or None if it can."""
    maker = invitation.created_by
    if maker is None or not maker.is_active or not Membership.objects.filter(
            workspace_id=invitation.workspace_id, user_id=maker.pk, role=Membership.ADMIN).exists():
        return MAKER_GONE
    return None


def withdraw_invitations_of(workspace, maker, *, user=None) -> int:
    """Withdraw the pending invitations `maker` made in `workspace` (call when they stop being an
    admin there, inside the transaction that changes it); each is logged. Returns how many."""
    now = timezone.now()
    with transaction.atomic():
        pending = list(Invitation.objects.select_for_update().filter(
            workspace=workspace, created_by=maker, accepted_at=None, revoked_at=None, declined_at=None,
            expires_at__gt=now))
        for invitation in pending:
            invitation.revoked_at = now
            invitation.save(update_fields=["revoked_at"])
            record_change(workspace, user, "invitation_revoked", before="pending", after="revoked",
                          invitation=invitation.pk, role=invitation.role, note=invitation.note,
                          reason="its maker is no longer an admin")
    return len(pending)


def admin_news(membership: Membership) -> list[dict]:
    """For an admin: who became an admin by an invitation since they last noted it (or since they
    joined), newest first; nothing for the others, nor about themselves."""
    if membership is None or membership.role != Membership.ADMIN:
        return []
    since = membership.admin_news_seen_at or membership.created_at
    rows = (WorkspaceEvent.objects.filter(workspace_id=membership.workspace_id, action=ADMIN_JOINED[0],
                                          after=ADMIN_JOINED[1], at__gt=since)
            .exclude(actor_id=membership.user_id).order_by("-seq")[:NEWS_SHOWN])
    return [{"who": row.actor_name, "at": row.at, "maker": (row.detail or {}).get("made_by") or "an admin",
             "seq": row.seq} for row in rows]


def note_admin_news(membership: Membership) -> None:
    Membership.objects.filter(pk=membership.pk).update(admin_news_seen_at=timezone.now())
