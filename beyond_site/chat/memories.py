"""The workspace's memories panel: members add, edit and delete; auditors only read.

Each action answers with the whole panel (htmx swaps it in place) or, without htmx, redirects
back to the page it came from.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from beyond_site.workspaces import access
from beyond_site.workspaces.models import Memory
from beyond_site.workspaces.knowledge import add_memory, delete_memory, edit_memory


def _panel(request, membership, error: str = "", status: int = 200, error_for=None):
    """The panel; an error is shown by the form it concerns (`error_for`: "add" or the memory's id),
    with the text that was refused kept in that form."""
    if not request.htmx:
        back = request.POST.get("next", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            back = reverse("chat:workspace", args=[membership.workspace.slug])
        return redirect(back)
    ctx = {"workspace": membership.workspace, "memories": membership.workspace.memories.all(),
           "can_write": True, "memory_error": error, "error_for": error_for,
           "refused_text": request.POST.get("text", "") if error else ""}
    return render(request, "chat/_memories.html", ctx, status=status)


@login_required
@require_POST
def add(request, slug):
    membership = access.require_membership(request, slug, access.WRITE)
    try:
        add_memory(membership.workspace, request.POST.get("text", ""), user=request.user)
    except ValueError as exc:
        return _panel(request, membership, str(exc), error_for="add", status=400)
    return _panel(request, membership)


@login_required
@require_POST
def edit(request, slug, memory_id):
    membership = access.require_membership(request, slug, access.WRITE)
    memory = get_object_or_404(Memory, pk=memory_id, workspace=membership.workspace)
    try:
        edit_memory(memory, request.POST.get("text", ""), user=request.user)  # logged in the workspace's history
    except ValueError as exc:
        return _panel(request, membership, str(exc), error_for=memory.pk, status=400)
    return _panel(request, membership)


@login_required
@require_POST
def delete(request, slug, memory_id):
    membership = access.require_membership(request, slug, access.WRITE)
    delete_memory(get_object_or_404(Memory, pk=memory_id, workspace=membership.workspace), user=request.user)
    return _panel(request, membership)
