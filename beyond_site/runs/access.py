"""Run access: which runs a caller may read, built on the workspace's own access rules.

A run is read through its workspace: the caller's membership decides, and a run id from another
workspace is a 404 like a workspace the caller is not a member of.
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404

from beyond_site.lib.prepared import Param, Prepared
from beyond_site.runs.models import Run
from beyond_site.workspaces.access import READ, require_membership


def require_run(request, slug: str, run_id: int, need: str = READ) -> Run:
    """Run `run_id` of workspace `slug`, as `require_membership` allows: a run id from another
    workspace is a 404 like a workspace the caller is not a member of."""
    membership = require_membership(request, slug, need)
    return get_object_or_404(Run.objects.select_related("workspace"), pk=run_id, workspace=membership.workspace)


#: What a live page reads of its run at every doorbell (the whole row is read for the few events
#: that redraw the whole run).
LIVE_FIELDS = ("id", "status", "research", "halt_reason")
# One membership per user and workspace, and every role may read the workspace's runs.
_READABLE = Prepared(lambda: Run.objects.filter(pk=Param("run_id"), workspace__memberships__user_id=Param("user_id"))
                     .order_by().only(*LIVE_FIELDS)[:1])


def readable_run(user, run_id: int) -> Run | None:
    """Run `run_id`'s live fields when `user` may read it, else None: a websocket checks with it on
    every doorbell, the access check and the read in one prepared query (lib/prepared.py)."""
    if not getattr(user, "is_authenticated", False):
        return None
    found = _READABLE.instances(run_id=run_id, user_id=user.pk)
    return found[0] if found else None
