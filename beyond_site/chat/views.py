"""The chat pages: home, a workspace's conversations, sending a task and attaching files.

Every view starts from `require_membership` (404 for non-members, 403 for a role too weak), and
every object is looked up through the caller's workspace, so authorization has one place.
"""
from __future__ import annotations

import secrets

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.db import transaction
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from beyond_site.chat.presenting import run_view, run_views
from beyond_site.chat.uploads import SizeCapHandler, body_too_large, megabytes, unreadable_upload
from beyond_site.lib.inputs import NUL_REFUSED, BadInput, bad_request, has_nul, object_id
from beyond_site.runs.models import Run
from beyond_site.runs.access import require_run
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.services import may_stop, request_stop, ring_doorbell, ring_stop_bell, schedule_run, start_run
from beyond_site.workspaces import access
from beyond_site.workspaces.models import Conversation, Document, Message
from beyond_site.workspaces.services import DocumentRefused, add_document

MAX_TASK_CHARS = 20_000
EXCHANGES_PER_PAGE = 20  # the conversation page shows the latest exchanges; "Show earlier" pages back
CONVERSATIONS_PER_PAGE = 100  # the sidebar; "Older conversations" pages back


def new_form_key() -> str:
    # One key per rendered form: a resubmitted or replayed form carries the same key, and
    # start_run returns the run that key already started instead of starting another.
    return secrets.token_urlsafe(24)


def _conversation_for(membership, conversation_id) -> Conversation | None:
    """The workspace's conversation `conversation_id` (a form's value); None for none, 404 for
    another workspace's or none at all, BadInput for a value that is no id."""
    pk = object_id(conversation_id, "conversation")
    if pk is None:
        return None
    return get_object_or_404(Conversation, pk=pk, workspace=membership.workspace)


def _exchanges(conversation: Conversation | None, before: Message | None = None) -> tuple[list[dict], int | None]:
    """The latest EXCHANGES_PER_PAGE (user text, run view) pairs, in order, optionally only those
    before the user message `before`; and the id to page further back from (None: nothing earlier)."""
    if conversation is None:
        return [], None
    asked = conversation.messages.all()
    if before is not None:
        asked = asked.filter(Q(created_at__lt=before.created_at) | Q(created_at=before.created_at, id__lt=before.pk))
    page = list(asked.order_by("-created_at", "-id")[:EXCHANGES_PER_PAGE + 1])
    earlier = page[EXCHANGES_PER_PAGE - 1].pk if len(page) > EXCHANGES_PER_PAGE else None
    page = page[:EXCHANGES_PER_PAGE][::-1]
    run_ids = dict(Run.objects.filter(message__in=page).values_list("message_id", "id"))
    views = run_views(run_ids.values())
    items = [{"text": m.text, "rv": views.get(run_ids.get(m.pk))} for m in page]
    return items, earlier


def _page_number(value) -> int:
    try:
        return max(1, min(int(value), 10_000))
    except (TypeError, ValueError):
        return 1


def _side_context(membership, conversation, chats_page: int = 1) -> dict:
    workspace = membership.workspace
    start = (chats_page - 1) * CONVERSATIONS_PER_PAGE
    conversations = list(workspace.conversations.all()[start:start + CONVERSATIONS_PER_PAGE + 1])
    return {
        "membership": membership,
        "workspace": workspace,
        "can_write": access.allows(membership, access.WRITE),
        "conversation": conversation,
        "conversations": conversations[:CONVERSATIONS_PER_PAGE],
        "chats_page": chats_page,
        "older_chats": chats_page + 1 if len(conversations) > CONVERSATIONS_PER_PAGE else None,
        "newer_chats": chats_page - 1 if chats_page > 1 else None,
        "memories": workspace.memories.all(),
        "uploads": Document.objects.filter(conversation=conversation) if conversation else [],
    }


def _chat_url(slug: str, conversation) -> str:
    """The page of `conversation`, or the workspace's chat when there is none yet."""
    if conversation is None:
        return reverse("chat:workspace", args=[slug])
    return reverse("chat:conversation", args=[slug, conversation.pk])


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
    before = None
    try:
        before_id = object_id(request.GET.get("before"), "message") if conversation is not None else None
    except BadInput as exc:
        return bad_request(request, str(exc))
    if before_id is not None:
        before = get_object_or_404(Message, pk=before_id, conversation=conversation)
    exchanges, earlier = _exchanges(conversation, before)
    ctx = _side_context(membership, conversation, _page_number(request.GET.get("chats")))
    ctx.update(exchanges=exchanges, earlier=earlier, paged_back=before is not None, form_key=new_form_key())
    return render(request, "chat/workspace.html", ctx)


def _start_from_form(request, slug):
    """The sync half of `send`: check, store, and queue. Returns (response, run_id to schedule)."""
    membership = access.require_membership(request, slug, access.WRITE)
    task = request.POST.get("message", "").strip()
    key = request.POST.get("idempotency_key", "").strip()[:80] or None
    if has_nul(task, key, request.POST.get("conversation")):
        return bad_request(request, NUL_REFUSED), None
    if not task or len(task) > MAX_TASK_CHARS:
        message = "Write a task first." if not task else f"A task is at most {MAX_TASK_CHARS:,} characters."
        response = render(request, "chat/_notice.html", {"notice": message, "form_key": key})
        response["HX-Reswap"] = "none"  # keep the conversation as it is; the notice comes out of band
        return response, None
    try:
        posted = _conversation_for(membership, request.POST.get("conversation"))
    except BadInput as exc:
        return bad_request(request, str(exc)), None
    try:
        run, created = start_run(membership.workspace, task, user=request.user, conversation=posted,
                                 idempotency_key=key)
    except BudgetRefused as exc:  # over one of the workspace's caps: nothing was created
        response = render(request, "chat/_notice.html", {"notice": f"Not started: {exc.message}", "form_key": key},
                          status=429)
        response["HX-Reswap"] = "none"
        return response, None
    conversation = run.conversation
    created_conversation = posted is None or posted.pk != conversation.pk
    url = _chat_url(slug, conversation)
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


def _stop_from_form(request, slug, run_id):
    membership = access.require_membership(request, slug, access.WRITE)
    run = require_run(request, slug, run_id, access.WRITE)
    if not may_stop(run, request.user, membership):
        raise PermissionDenied("Only the member who started this run, or an admin, can stop it")
    stopped = request_stop(run.pk, request.user)
    return stopped, run.events.count()


@login_required
@require_POST
async def stop(request, slug, run_id):
    """Stop a running run (the Stop button): what is released stays, nothing more is."""
    stopped, last_seq = await sync_to_async(_stop_from_form)(request, slug, run_id)
    if stopped:
        await ring_stop_bell(run_id)
        await ring_doorbell(run_id, last_seq)  # a queued run is cancelled already: show it
    label = "Stopping…" if stopped else "Already finished"
    return HttpResponse(f'<button type="button" class="run-stop" data-action="stop" disabled>{label}</button>')


MAX_FILES_PER_UPLOAD = 10  # settings.DATA_UPLOAD_MAX_NUMBER_FILES refuses more


def _upload_notice(request, slug, notice: str):
    """A refusal before any file was read: nothing changed, so nothing is swapped but the notice."""
    if not request.htmx:
        return redirect(reverse("chat:workspace", args=[slug]))
    response = render(request, "chat/_notice.html", {"notice": notice})
    response["HX-Reswap"] = "none"
    return response


@csrf_exempt  # only so the upload handler goes in before the body is read; CSRF is checked just below
@login_required
@require_POST
def upload(request, slug):
    """Attach files to the conversation (creating it if needed). A refused file changes nothing
    and is reported by name; the others are kept. Files are refused while they arrive: one past
    BEYOND_MAX_FILE_BYTES is dropped by `SizeCapHandler` before it is spooled, a request far too
    large is refused before its body is parsed, and at most MAX_FILES_PER_UPLOAD files are taken."""
    access.require_membership(request, slug, access.WRITE)
    limit = settings.BEYOND_MAX_FILE_BYTES
    if body_too_large(request, limit):
        return _upload_notice(request, slug, f"These files are too large together: each file may be at most "
                                             f"{megabytes(limit)}. Nothing was attached.")
    cap = SizeCapHandler(request, limit)
    request.upload_handlers.insert(0, cap)
    try:
        request.FILES  # parse now, with the cap, before the CSRF check reads request.POST
    except TooManyFilesSent:
        request.too_many_files = True
    except (MultiPartParserError, RequestDataTooBig, TooManyFieldsSent) as exc:
        # Nothing was read into the workspace; the form itself cannot be used.
        return bad_request(request, unreadable_upload(exc))
    return _upload(request, slug, cap)


@csrf_protect
def _upload(request, slug, cap):
    membership = access.require_membership(request, slug, access.WRITE)
    if getattr(request, "too_many_files", False):
        return _upload_notice(request, slug, f"Attach at most {MAX_FILES_PER_UPLOAD} files at a time. "
                                             "Nothing was attached.")
    try:
        conversation = _conversation_for(membership, request.POST.get("conversation"))
    except BadInput as exc:
        return bad_request(request, str(exc))
    files = request.FILES.getlist("files")
    created_conversation = False
    added = []
    refused = [f"{name}: larger than the {megabytes(cap.limit)} limit" for name in cap.refused]
    for f in files:
        if f.size > cap.limit:  # the handler already dropped it; kept as a second line
            refused.append(f"{f.name}: larger than the {megabytes(cap.limit)} limit")
            continue
        try:
            with transaction.atomic():  # a conversation is created only with an accepted file
                target = conversation or Conversation.objects.create(
                    workspace=membership.workspace, title="New conversation", created_by=request.user)
                document, _ = add_document(membership.workspace, f.name, f.read(), user=request.user,
                                           conversation=target)
            if conversation is None:
                conversation, created_conversation = target, True
            added.append(document.name)
        except DocumentRefused as exc:
            refused.append(str(exc))
    if not files and not refused:
        refused.append("Choose a file to attach first.")
    if not request.htmx:
        return redirect(_chat_url(slug, conversation))
    ctx = _side_context(membership, conversation)
    ctx.update(added=added, refused=refused, new_conversation=created_conversation)
    response = render(request, "chat/_uploaded.html", ctx)
    if created_conversation:
        response["HX-Push-Url"] = _chat_url(slug, conversation)
    return response
