"""Removing a file attached to a conversation, from the composer's list, before (or after) sending.

The file goes through workspaces.services.delete_document like any other: the runs that already
read it keep, in their audit record, the bytes they were given.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from beyond_site.workspaces import access
from beyond_site.workspaces.models import Document
from beyond_site.workspaces.services import delete_document


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
        "workspace": membership.workspace, "removed": document.name,
        "uploads": Document.objects.filter(conversation=conversation).defer("text"),
    })
