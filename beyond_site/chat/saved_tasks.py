"""The saved tasks page (docs/saved-tasks.md): the workspace's library and the member's own tasks,
with forms to add, edit, delete and (an admin's own) move into the library; and what the chat's
`/` picker is given.

Plain forms that post and redirect back, or answer the page again with the refused form kept and
its error beside it (a 400). Who may do what is `workspaces/saved_tasks.py`'s; a task someone may
not see is a 404, one they may see but not change a 403.
"""
from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from beyond_site.workspaces import access
from beyond_site.workspaces.saved_tasks import (MAX_NAME_CHARS, MAX_TEXT_CHARS, OWN, WORKSPACE, TaskRefused,
                                                add_task, delete_task, edit_task, may_change, may_create,
                                                placeholders, promote_task, task_parts, visible_tasks)


def picker_tasks(membership) -> list[dict]:
    """The chat composer's `/` list: each task the member may use, with its text already parsed
    (the page joins the parts with what is typed for the placeholders, and parses nothing)."""
    out = []
    for task in visible_tasks(membership):
        try:
            parts = task_parts(task.text)
        except TaskRefused:  # written around the checks (a shell, an old row): offered as plain text
            parts = [("text", task.text)]
        out.append({"task": task, "own": task.owner_id is not None, "parts": json.dumps(parts),
                    "placeholders": placeholders(parts)})
    return out


def _task_for(membership, task_id):
    """A task `membership` may see (404 for any other: another member's own task is not there)."""
    return get_object_or_404(visible_tasks(membership), pk=task_id)


def _page(request, membership, *, refused: TaskRefused | None = None, refused_for="", status: int = 200):
    tasks = list(visible_tasks(membership))
    for task in tasks:
        task.can_change = may_change(task, membership)
    ctx = {
        "workspace": membership.workspace, "membership": membership,
        "workspace_tasks": [t for t in tasks if t.owner_id is None],
        "own_tasks": [t for t in tasks if t.owner_id is not None],
        "can_add_workspace": may_create(membership, WORKSPACE), "can_add_own": may_create(membership, OWN),
        "is_admin": access.allows(membership, access.ADMIN),
        "max_name": MAX_NAME_CHARS, "max_text": MAX_TEXT_CHARS,
        "refused": str(refused) if refused else "", "refused_field": refused.field if refused else "",
        "refused_for": refused_for,
        "refused_name": request.POST.get("name", "") if refused else "",
        "refused_text": request.POST.get("text", "") if refused else "",
        "refused_scope": request.POST.get("scope", "") if refused else "",
    }
    return render(request, "chat/saved_tasks.html", ctx, status=status)


def _back(membership):
    return redirect(reverse("chat:saved_tasks", args=[membership.workspace.slug]))


@login_required
@require_GET
def library(request, slug):
    membership = access.require_membership(request, slug, access.READ)
    return _page(request, membership)


@login_required
@require_POST
def add(request, slug):
    membership = access.require_membership(request, slug, access.WRITE)
    scope = request.POST.get("scope", OWN)
    if scope not in (WORKSPACE, OWN):
        scope = OWN
    if not may_create(membership, scope):
        raise PermissionDenied("Only the workspace's admins add to its library.")
    try:
        task = add_task(membership, request.POST.get("name", ""), request.POST.get("text", ""), scope)
    except TaskRefused as exc:
        return _page(request, membership, refused=exc, refused_for="add", status=400)
    messages.success(request, f"Saved “{task.name}”. Type / in the chat's box to use it.")
    return _back(membership)


def _changeable(request, slug, task_id):
    membership = access.require_membership(request, slug, access.WRITE)
    task = _task_for(membership, task_id)
    if not may_change(task, membership):
        raise PermissionDenied("Only the workspace's admins change its library.")
    return membership, task


@login_required
@require_POST
def edit(request, slug, task_id):
    membership, task = _changeable(request, slug, task_id)
    try:
        edit_task(membership, task, request.POST.get("name", ""), request.POST.get("text", ""))
    except TaskRefused as exc:
        return _page(request, membership, refused=exc, refused_for=task.pk, status=400)
    messages.success(request, f"Saved the changes to “{task.name}”.")
    return _back(membership)


@login_required
@require_POST
def delete(request, slug, task_id):
    membership, task = _changeable(request, slug, task_id)
    name = task.name
    delete_task(membership, task)
    messages.success(request, f"Deleted “{name}”.")
    return _back(membership)


@login_required
@require_POST
def promote(request, slug, task_id):
    membership = access.require_membership(request, slug, access.ADMIN)
    task = _task_for(membership, task_id)
    if task.owner_id != request.user.pk:
        raise Http404("No such task of yours")
    try:
        promote_task(membership, task)
    except TaskRefused as exc:
        return _page(request, membership, refused=exc, refused_for=task.pk, status=400)
    messages.success(request, f"“{task.name}” is now in the workspace's library, for every member.")
    return _back(membership)
