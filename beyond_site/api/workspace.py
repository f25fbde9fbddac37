"""A workspace over the API (docs/api.md): the caller's workspaces, its conversations, files and
memories."""
from __future__ import annotations

from django.http import Http404
from ninja import File, Form, Query, Status, UploadedFile
from ninja.errors import HttpError

from beyond_site.api.base import api, membership
from beyond_site.api.schemas import (ConversationOut, FileOut, FileText, MemoryIn, MemoryOut, Problem, WorkspaceOut,
                                     answers)
from beyond_site.runs.uploads import upload
from beyond_site.workspaces import knowledge, tokens
from beyond_site.workspaces.access import READ, WRITE, workspaces_for
from beyond_site.workspaces.models import Conversation, Document, Membership, Memory

PAGE = 100


@api.get("/workspaces", response=answers({200: list[WorkspaceOut]}), tags=["workspaces"])
def list_workspaces(request):
    """The workspaces the caller (and the token) reaches, with the caller's role in each."""
    row = request.api_token
    rows = Membership.objects.filter(user=request.user, workspace__in=workspaces_for(request.user)).select_related(
        "workspace").order_by("workspace__name")
    return [{"slug": m.workspace.slug, "name": m.workspace.name, "role": m.role} for m in rows
            if tokens.allows_workspace(row, m.workspace.slug)]


@api.get("/workspaces/{slug}/conversations", response=answers({200: list[ConversationOut]}), tags=["workspaces"])
def list_conversations(request, slug: str, page: int = Query(1, ge=1, le=100_000)):
    found = membership(request, slug, READ)
    rows = Conversation.visible.filter(workspace=found.workspace)[(page - 1) * PAGE:page * PAGE]
    return [{"id": c.pk, "title": c.title, "updated_at": c.updated_at} for c in rows]


def _file(document: Document) -> dict:
    return {"id": document.pk, "name": document.name, "kind": document.kind, "size": document.size,
            "status": document.status, "conversation": document.conversation_id, "created_at": document.created_at,
            "failure": document.failure}


@api.get("/workspaces/{slug}/files", response=answers({200: list[FileOut]}), tags=["files"])
def list_files(request, slug: str):
    found = membership(request, slug, READ)
    return [_file(d) for d in Document.objects.filter(workspace=found.workspace).defer("text").order_by("id")]


def _links_to(kind: str, param: str, operations: list[str], statuses=(201,)) -> dict:
    """OpenAPI links from an answer that made a `kind` (its `id`) to the operations on it."""
    found = {"slug": "$request.path.slug", param: "$response.body#/id"}
    links = {f"{kind}{op.title().replace('_', '')}": {"operationId": op, "parameters": found} for op in operations}
    return {"responses": {status: {"links": links} for status in statuses}}


@api.post("/workspaces/{slug}/files", response=answers({201: FileOut, 200: FileOut, 413: Problem}), tags=["files"],
          openapi_extra=_links_to("File", "file_id", ["file_text", "remove_file"], statuses=(200, 201)))
def add_file(request, slug: str, file: UploadedFile = File(...), conversation: int | None = Form(None)):
    """Upload a file (multipart): read in the background; its status says when its text is ready."""
    found = membership(request, slug, WRITE)
    target = None
    if conversation is not None:
        target = Conversation.visible.filter(workspace=found.workspace, pk=conversation).first()
        if target is None:
            raise Http404("No such conversation")
    try:
        document, created, _ = upload(found.workspace, file, user=request.user, conversation=target)
    except knowledge.DocumentRefused as exc:
        raise HttpError(413 if exc.code in ("too_large", "workspace_full") else 400, str(exc)) from None
    return Status((201 if created else 200), _file(document))


def _document(request, slug: str, file_id: int, need: str) -> Document:
    found = membership(request, slug, need)
    document = Document.objects.filter(workspace=found.workspace, pk=file_id).first()
    if document is None:
        raise Http404("No such file")
    return document


@api.get("/workspaces/{slug}/files/{file_id}", response=answers({200: FileText}), tags=["files"])
def file_text(request, slug: str, file_id: int):
    """The text Beyond extracted from the file (what the models read)."""
    document = _document(request, slug, file_id, READ)
    return {"id": document.pk, "name": document.name, "status": document.status, "text": document.text}


@api.delete("/workspaces/{slug}/files/{file_id}", response=answers({204: None}), tags=["files"])
def remove_file(request, slug: str, file_id: int):
    knowledge.delete_document(_document(request, slug, file_id, WRITE), request.user)
    return Status(204, None)


@api.get("/workspaces/{slug}/memories", response=answers({200: list[MemoryOut]}), tags=["memories"])
def list_memories(request, slug: str):
    found = membership(request, slug, READ)
    return [{"id": m.pk, "text": m.text, "created_at": m.created_at}
            for m in Memory.objects.filter(workspace=found.workspace).order_by("id")]


@api.post("/workspaces/{slug}/memories", response=answers({201: MemoryOut}), tags=["memories"],
          openapi_extra=_links_to("Memory", "memory_id", ["remove_memory"]))
def add_memory(request, slug: str, body: MemoryIn):
    found = membership(request, slug, WRITE)
    try:
        memory = knowledge.add_memory(found.workspace, body.text, user=request.user)
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None
    return Status(201, {"id": memory.pk, "text": memory.text, "created_at": memory.created_at})


@api.delete("/workspaces/{slug}/memories/{memory_id}", response=answers({204: None}), tags=["memories"])
def remove_memory(request, slug: str, memory_id: int):
    found = membership(request, slug, WRITE)
    memory = Memory.objects.filter(workspace=found.workspace, pk=memory_id).first()
    if memory is None:
        raise Http404("No such memory")
    knowledge.delete_memory(memory, user=request.user)
    return Status(204, None)
