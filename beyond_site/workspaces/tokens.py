"""Personal API tokens (docs/api.md, "Tokens"): made, listed, revoked, and checked at each request.

A token is shown once, when it is made; only its sha256 is kept, with its first characters to tell
tokens apart. It acts as its person, with their roles and never more: a token limited to some
workspaces reaches no other, and a read-only one writes nothing. Making and revoking one is on the
change log of every workspace it reaches.
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.workspaces.access import workspaces_for
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import ApiToken, Workspace

PREFIX = "byd_"
MIN_DAYS, MAX_DAYS = 1, 365
#: How often a token's last use is written: every request would be a write per request.
LAST_USED_EVERY = timedelta(minutes=1)


class TokenRefused(ValueError):
    """A token that cannot be made as asked; the message says why."""


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@transaction.atomic
def create_token(user, name: str, *, days: int = 90, read_only: bool = False,
                 workspaces: list[Workspace] | None = None) -> tuple[ApiToken, str]:
    """A new token for `user` and its secret (shown once): (row, token)."""
    name = " ".join(without_bidi_controls(name or "").split())[:100]
    if not name:
        raise TokenRefused("A token needs a name, to tell it apart from your others.")
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise TokenRefused(f"A token lasts {MIN_DAYS} to {MAX_DAYS} days.")
    mine = set(workspaces_for(user).values_list("pk", flat=True))
    chosen = list(workspaces or [])
    if any(w.pk not in mine for w in chosen):
        raise TokenRefused("A token can only be limited to workspaces you are a member of.")
    secret = PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(user=user, name=name, prefix=secret[:len(PREFIX) + 6], digest=digest_of(secret),
                                  read_only=read_only, expires_at=timezone.now() + timedelta(days=days))
    row.workspaces.set(chosen)
    for workspace in chosen or workspaces_for(user):
        record_change(workspace, user, "api_token_created", token=row.prefix, name=name, read_only=read_only,
                      expires=row.expires_at.date().isoformat())
    return row, secret


@transaction.atomic
def revoke_token(row: ApiToken, user) -> None:
    if row.revoked_at is not None:
        return
    row.revoked_at = timezone.now()
    row.save(update_fields=["revoked_at"])
    for workspace in reach(row):
        record_change(workspace, user, "api_token_revoked", token=row.prefix, name=row.name)


def reach(row: ApiToken):
    """The workspaces a token reaches: those it is limited to, else every one of its person's."""
    limited = row.workspaces.all()
    return limited if limited.exists() else workspaces_for(row.user)


def _live(token: str) -> ApiToken | None:
    if not token or not token.startswith(PREFIX) or len(token) > 200:
        return None
    row = ApiToken.objects.select_related("user").filter(digest=digest_of(token)).first()
    if row is None or row.revoked_at is not None or row.expires_at <= timezone.now() or not row.user.is_active:
        return None
    return row


def is_live(token: str) -> bool:
    """Whether `token` would authenticate (the request body limits ask before the API does)."""
    return _live(token) is not None


def authenticate(token: str) -> ApiToken | None:
    """The live token `token` is (its person active, not revoked, not expired), or None."""
    row = _live(token)
    if row is None:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row


def allows_workspace(row: ApiToken, slug: str) -> bool:
    limited = list(row.workspaces.values_list("slug", flat=True))
    return not limited or slug in limited
