"""The files attached to a conversation, in the composer's list: how their reading goes, and
removing one, before (or after) sending.

A removed file goes through workspaces.knowledge.delete_document like any other: the runs that
already read it keep, in their audit record, the bytes they were given.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from beyond_site.workspaces import access
from beyond_site.workspaces.models import Conversation, Document
from beyond_site.workspaces.knowledge import delete_document


@login_required
@require_POST
def remove(request, slug, document_id):
    membership = access.require_membership(request, slug, access.WRITE)
    document = get_object_or_404(Document.objects.select_related("conversation"), pk=document_id,
                                 workspace=membership.workspace, conversation__isnull=False)
    conversation = document.conversation
    delete_document(document, user=request.user)
    if not request.htmx:
        return redirect(reverse("chat:conversation", args=[slug, conversation.pk]))
    return render(request, "chat/_uploads.html", {
        "workspace": membership.workspace, "conversation": conversation, "removed": document.name,
        **uploads_context(conversation)})


@login_required
@require_GET
def uploads(request, slug, conversation_id):
    """The list again (asked every second while a file is being read)."""
    membership = access.require_membership(request, slug, access.READ)
    conversation = get_object_or_404(Conversation.visible, pk=conversation_id, workspace=membership.workspace)
    return render(request, "chat/_uploads.html", {"workspace": membership.workspace, "conversation": conversation,
                                                   **uploads_context(conversation)})


def uploads_context(conversation) -> dict:
    """The files attached to a conversation, and whether any is still being read (the list then
    asks for itself again every second until they are all read: workspaces/reading.py)."""
    listed = list(Document.objects.filter(conversation=conversation).defer("text"))
    return {"uploads": listed, "uploads_reading": any(d.status == Document.READING for d in listed)}
