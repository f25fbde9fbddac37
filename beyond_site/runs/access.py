"""Run access: which runs a caller may read, built on the workspace's own access rules.

A run is read through its workspace: the caller's membership decides, and a run id from another
workspace is a 404 like a workspace the caller is not a member of.
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404

from beyond_site.runs.models import Run
from beyond_site.workspaces.access import READ, require_membership


def require_run(request, slug: str, run_id: int, need: str = READ) -> Run:
    """Run `run_id` of workspace `slug`, as `require_membership` allows: a run id from another
    workspace is a 404 like a workspace the caller is not a member of."""
    membership = require_membership(request, slug, need)
    return get_object_or_404(Run.objects.select_related("workspace"), pk=run_id, workspace=membership.workspace)


#: What a live page reads of its run at every doorbell (the whole row is read for the few events
#: that redraw the whole run).
LIVE_FIELDS = ("id", "status", "research", "halt_reason", "verifier_trust")


def readable_run(user, run_id: int) -> Run | None:
    """Run `run_id`'s live fields when `user` may read it, else None: the access check and the read
    in one query. Every role of a workspace may read its runs (one membership per user and
    workspace)."""
    if not getattr(user, "is_authenticated", False):
        return None
    found = list(Run.objects.filter(pk=run_id, workspace__memberships__user=user).order_by()
                 .only(*LIVE_FIELDS)[:1])  # sliced: `first()` would order the one row by its id
    return found[0] if found else None
