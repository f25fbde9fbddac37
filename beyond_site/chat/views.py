"""The chat pages: home, a workspace's conversations, sending a task and attaching files.

Every view starts from `require_membership` (404 for non-members, 403 for a role too weak), and
every object is looked up through the caller's workspace, so authorization has one place.
"""
from __future__ import annotations

import secrets

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from beyond_site.chat.presenting import run_view
from beyond_site.runs.models import Conversation, Message
from beyond_site.runs.services import schedule_run, start_run
from beyond_site.workspaces import access
from beyond_site.workspaces.models import Document
from beyond_site.workspaces.services import DocumentRefused, add_document

MAX_TASK_CHARS = 20_000


def new_form_key() -> str:
    # One key per rendered form: a resubmitted or replayed form carries the same key, and
    # start_run returns the run that key already started instead of starting another.
    return secrets.token_urlsafe(24)


def _conversation_for(membership, conversation_id) -> Conversation | None:
    if not conversation_id:
        return None
    return get_object_or_404(Conversation, pk=conversation_id, workspace=membership.workspace)


def _exchanges(conversation: Conversation | None) -> list[dict]:
    """The conversation as (user text, run view) pairs, in order."""
    if conversation is None:
        return []
    items = []
    for message in conversation.messages.filter(role=Message.USER).select_related("run").order_by("created_at", "id"):
        items.append({"text": message.text, "rv": run_view(message.run_id) if message.run_id else None})
    return items


def _side_context(membership, conversation) -> dict:
    workspace = membership.workspace
    return {
        "membership": membership,
        "workspace": workspace,
        "can_write": access.allows(membership, access.WRITE),
        "conversation": conversation,
        "conversations": workspace.conversations.all()[:100],
        "memories": workspace.memories.all(),
        "uploads": Document.objects.filter(conversation=conversation) if conversation else [],
    }


@login_required
@require_GET
def home(request):
    workspaces = access.workspaces_for(request.user)
    return render(request, "chat/home.html", {"workspaces": workspaces})


@login_required
@require_GET
def workspace(request, slug, conversation_id=None):
    membership = access.require_membership(request, slug, access.READ)
    conversation = _conversation_for(membership, conversation_id)
    ctx = _side_context(membership, conversation)
    ctx.update(exchanges=_exchanges(conversation), form_key=new_form_key())
    return render(request, "chat/workspace.html", ctx)


def _start_from_form(request, slug):
    """The sync half of `send`: check, store, and queue. Returns (response, run_id to schedule)."""
    membership = access.require_membership(request, slug, access.WRITE)
    task = request.POST.get("message", "").strip()
    key = request.POST.get("idempotency_key", "").strip()[:80] or None
    if not task or len(task) > MAX_TASK_CHARS:
        message = "Write a task first." if not task else f"A task is at most {MAX_TASK_CHARS:,} characters."
        response = render(request, "chat/_notice.html", {"notice": message, "form_key": key})
        response["HX-Reswap"] = "none"  # keep the conversation as it is; the notice comes out of band
        return response, None
    conversation = _conversation_for(membership, request.POST.get("conversation"))
    created_conversation = conversation is None
    if created_conversation:
        conversation = Conversation.objects.create(workspace=membership.workspace, title=task[:80],
                                                   created_by=request.user)
    elif not conversation.messages.exists():  # a conversation started by an upload takes its first task's name
        Conversation.objects.filter(pk=conversation.pk).update(title=task[:80], updated_at=timezone.now())
    run, created = start_run(membership.workspace, task, user=request.user, conversation=conversation,
                             idempotency_key=key)
    url = reverse("chat:conversation", args=[slug, run.conversation_id or conversation.pk])
    if not request.htmx:
        return redirect(url), (run.pk if created else None)
    ctx = _side_context(membership, conversation)
    ctx.update(form_key=new_form_key(), new_conversation=created_conversation,
               exchange={"text": run.task, "rv": run_view(run.pk)} if created else None)
    response = render(request, "chat/_sent.html", ctx)
    response["HX-Push-Url"] = url
    return response, (run.pk if created else None)


@login_required
@require_POST
async def send(request, slug):
    """Start a run for the typed task and answer at once with its (live) fragment."""
    response, run_id = await sync_to_async(_start_from_form)(request, slug)
    if run_id is not None:
        schedule_run(run_id)
    return response


@login_required
@require_POST
def upload(request, slug):
    """Attach files to the conversation (creating it if needed). A refused file changes nothing
    and is reported by name; the others are kept."""
    membership = access.require_membership(request, slug, access.WRITE)
    conversation = _conversation_for(membership, request.POST.get("conversation"))
    files = request.FILES.getlist("files")
    created_conversation = False
    if conversation is None and files:
        conversation = Conversation.objects.create(workspace=membership.workspace, title="New conversation",
                                                   created_by=request.user)
        created_conversation = True
    added, refused = [], []
    for f in files:
        if f.size > settings.BEYOND_MAX_FILE_BYTES:
            refused.append(f"{f.name}: larger than the {settings.BEYOND_MAX_FILE_BYTES // (1024 * 1024)} MB limit")
            continue
        try:
            document, _ = add_document(membership.workspace, f.name, f.read(), user=request.user,
                                       conversation=conversation)
            added.append(document.name)
        except DocumentRefused as exc:
            refused.append(str(exc))
    if not files:
        refused.append("Choose a file to attach first.")
    if not request.htmx:
        url = (reverse("chat:conversation", args=[slug, conversation.pk]) if conversation
               else reverse("chat:workspace", args=[slug]))
        return redirect(url)
    ctx = _side_context(membership, conversation)
    ctx.update(added=added, refused=refused, new_conversation=created_conversation)
    response = render(request, "chat/_uploaded.html", ctx)
    if created_conversation:
        response["HX-Push-Url"] = reverse("chat:conversation", args=[slug, conversation.pk])
    return response

