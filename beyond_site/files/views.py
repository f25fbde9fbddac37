"""The file library of a workspace: every file its runs may read, workspace-wide or attached to one
conversation, with what Beyond extracted from it and the original to download.

Members add and remove files; auditors read only (require_membership: 404 for non-members, 403
for a role too weak). Removing a file goes through workspaces.knowledge.delete_document, which keeps
the bytes that past model calls were given, so the audit record stays whole.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from beyond_site.lib.ids import parse_id
from beyond_site.lib.uploads import megabytes, read_files_capped
from beyond_site.workspaces import access, originals
from beyond_site.runs.uploads import take_files
from beyond_site.workspaces.knowledge import clean_file_name, delete_document
from beyond_site.workspaces.models import Conversation, Document

#: Conversations offered as a target in the add form (the latest ones).
CONVERSATION_CHOICES = 50
#: The preview shows this much of the extracted text; the download has the whole original.
PREVIEW_CHARS = 100_000


def _document(membership, document_id) -> Document:
    return get_object_or_404(Document.objects.select_related("conversation", "uploaded_by"), pk=document_id,
                             workspace=membership.workspace)


def _library_url(slug: str, conversation_id=None) -> str:
    url = reverse("files:library", args=[slug])
    return f"{url}?conversation={conversation_id}" if conversation_id else url


def _target(membership, value) -> Conversation | None:
    """The conversation a file is added to, or None for the whole workspace."""
    if not value or value == "workspace":
        return None
    pk = parse_id(value)
    if pk is None:  # never widen a malformed choice to the whole workspace
        raise Http404("No such conversation")
    return get_object_or_404(Conversation.visible, pk=pk, workspace=membership.workspace)  # a deleted one: 404


def _page(request, membership, *, refused=(), added=(), already=(), status=200):
    workspace = membership.workspace
    documents = (Document.objects.filter(workspace=workspace).select_related("conversation", "uploaded_by")
                 .defer("text").order_by("conversation_id", "name", "id"))
    chosen = request.GET.get("conversation") or request.POST.get("target") or ""
    return render(request, "files/library.html", {
        "workspace": workspace, "membership": membership,
        "can_write": access.allows(membership, access.WRITE),
        "documents": documents,
        "conversations": Conversation.visible.filter(workspace=workspace)[:CONVERSATION_CHOICES],
        "chosen": chosen, "refused": refused, "added": added, "already": already,
        "max_file": megabytes(settings.BEYOND_MAX_FILE_BYTES),
    }, status=status)


@login_required
@require_GET
def library(request, slug):
    membership = access.require_membership(request, slug, access.READ)
    return _page(request, membership)


@csrf_exempt  # only so the size cap goes in before the body is read; CSRF is checked in _add
@login_required
@require_POST
def add(request, slug):
    membership = access.require_membership(request, slug, access.WRITE)
    limit = settings.BEYOND_MAX_FILE_BYTES
    cap = read_files_capped(request, limit)
    if cap is None:
        return _page(request, membership, status=413, refused=[
            f"These files are too large together: each file may be at most {megabytes(limit)}. Nothing was added."])
    return _add(request, membership, cap)


@csrf_protect
def _add(request, membership, cap):
    if getattr(request, "too_many_files", False):
        return _page(request, membership, status=400, refused=[
            f"Add at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files at a time. Nothing was added."])
    conversation = _target(membership, request.POST.get("target"))
    taken = take_files(request, membership.workspace, cap, conversation=conversation)
    refused, added = taken.refused, [document.name for document, created, _ in taken.kept if created]
    # The same bytes there already: one copy, under the name it was first added with.
    already = [_already_words(clean_file_name(name), document) for document, created, name in taken.kept if not created]
    if not added and not refused and not already:
        refused.append("Choose a file to add first.")
    if refused:  # the page again, with what was refused next to the form (the others are kept)
        return _page(request, membership, status=400, refused=refused, added=added, already=already)
    where = f"the conversation “{conversation.title}”" if conversation else "the whole workspace"
    if added:
        messages.success(request, f"Added to {where}: {', '.join(added)}. Each file is read in the background: its "
                                  "text is ready when its row no longer says “reading…”.")
    for words in already:
        messages.info(request, f"{words} (in {where}): nothing was added.")
    return redirect(_library_url(membership.workspace.slug))


def _already_words(name: str, document: Document) -> str:
    """What to say of an upload whose bytes the scope holds already (docs/files.md)."""
    if name == document.name:
        return f"{name} is already in the library"
    return f"{name} has the same content as {document.name}, already in the library"


@login_required
@require_GET
def row(request, slug, document_id):
    """One file's row again (asked every second while the file is being read)."""
    membership = access.require_membership(request, slug, access.READ)
    return render(request, "files/_row.html", {"workspace": membership.workspace, "d": _document(membership, document_id),
                                               "can_write": access.allows(membership, access.WRITE)})


@login_required
@require_GET
def preview(request, slug, document_id):
    membership = access.require_membership(request, slug, access.READ)
    document = _document(membership, document_id)
    return render(request, "files/preview.html", {
        "workspace": membership.workspace, "membership": membership, "document": document,
        "can_write": access.allows(membership, access.WRITE),
        "text": document.text[:PREVIEW_CHARS], "cut": len(document.text) > PREVIEW_CHARS,
        "chars": len(document.text),
    })


@login_required
@require_GET
def download(request, slug, document_id):
    """The original bytes, always as an attachment: an uploaded file is never rendered by the browser
    as a page of this site."""
    membership = access.require_membership(request, slug, access.READ)
    document = _document(membership, document_id)
    try:
        original = originals.open_original(document.sha256)
    except FileNotFoundError:
        raise Http404("The original of this file is missing from the server's store") from None
    return FileResponse(original, as_attachment=True, filename=document.name,
                        content_type=document.mime or "application/octet-stream")


@login_required
@require_POST
def remove(request, slug, document_id):
    membership = access.require_membership(request, slug, access.WRITE)
    document = _document(membership, document_id)
    delete_document(document, user=request.user)
    if request.htmx:
        return HttpResponse("")  # the row goes; the bytes past runs were given stay for the audit
    messages.success(request, f"{document.name} removed. What past runs were given stays in their audit record.")
    return redirect(_library_url(slug))
