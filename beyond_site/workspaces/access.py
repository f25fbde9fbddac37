"""Workspace access: what each role may do (READ, WRITE, ADMIN, AUDIT), and a caller's membership.

Every view, download and websocket starts here. Non-members get a 404 (not a 403) so that
workspace slugs do not leak. Two rules also ask who made a thing, and sit beside what they guard:
`runs/queue.py` `may_stop` and `workspaces/conversations.py` `may_manage_conversation`.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404

from beyond_site.workspaces.models import Membership, Workspace

READ, WRITE, ADMIN = "read", "write", "admin"
#: Reading what admins changed (the change log): the workspace's auditors and admins.
AUDIT = "audit"


def membership_for(user, slug: str) -> Membership | None:
    if not getattr(user, "is_authenticated", False):
        return None
    try:  # one membership per user and workspace: no ordering to build, as `first()` would
        return Membership.objects.select_related("workspace").get(user=user, workspace__slug=slug)
    except Membership.DoesNotExist:
        return None


def allows(membership: Membership | None, need: str) -> bool:
    if membership is None:
        return False
    if need == READ:
        return True
    if need == WRITE:
        return membership.role in (Membership.ADMIN, Membership.MEMBER)
    if need == ADMIN:
        return membership.role == Membership.ADMIN
    if need == AUDIT:
        return membership.role in (Membership.ADMIN, Membership.AUDITOR)
    raise ValueError(need)


def require_membership(request, slug: str, need: str = READ) -> Membership:
    """The caller's membership of workspace `slug`, or 404 (not a member) / 403 (role too weak)."""
    membership = membership_for(request.user, slug)
    if membership is None:
        raise Http404("No such workspace")
    if not allows(membership, need):
        raise PermissionDenied(f"Your role ({membership.role}) cannot do this here")
    return membership


def workspaces_for(user):
    return Workspace.objects.filter(memberships__user=user).order_by("name")


def users_visible_to(user):
    """The users `user` can already see: everyone for the site's staff, else the members of the
    workspaces `user` belongs to. An admin may add these directly; anyone else joins by invitation,
    so the add form cannot be used to learn which usernames exist."""
    User = get_user_model()
    if getattr(user, "is_staff", False):
        return User.objects.filter(is_active=True)
    shared = Membership.objects.filter(workspace__memberships__user=user).values("user_id")
    return User.objects.filter(is_active=True, pk__in=shared)
