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


def readable_runs(user):
    """The runs `user` may read (every role of a workspace's members may), as a queryset to narrow:
    a websocket checks with it on every doorbell, in the same query as its read of the run."""
    if not getattr(user, "is_authenticated", False):
        return Run.objects.none()
    return Run.objects.filter(workspace__memberships__user=user)  # one membership per user and workspace
