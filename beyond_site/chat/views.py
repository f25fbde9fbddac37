"""The chat pages: home, a workspace's conversations, sending a task and attaching files.

Every view starts from `require_membership` (404 for non-members, 403 for a role too weak), and
every object is looked up through the caller's workspace, so authorization has one place.
"""
from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http.multipartparser import MultiPartParserError
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from beyond_site.chat.attachments import uploads_context
from beyond_site.chat.conversations import first_page_change, page_number, search_query, sidebar_context
from beyond_site.chat.notices import calibration_required, notice_only
from beyond_site.chat.presenting import queued_view, run_views
from beyond_site.chat.saved_tasks import picker_tasks
from beyond_site.chat.run_actions import MAX_TASK_CHARS, SERVER_KEY_PREFIXES
from beyond_site.lib.inputs import NUL_REFUSED, BadInput, bad_request, has_nul, object_id
from beyond_site.lib.uploads import megabytes, read_files_capped, unreadable_upload
from beyond_site.runs.models import Run
from beyond_site.runs.budgets import BudgetRefused
from beyond_site.runs.trust import CalibrationRequired
from beyond_site.runs.queue import ConversationDeleted, start_run
from pipeline.research import search_setting
from beyond_site.workspaces import access
from beyond_site.workspaces.consent import offers_for
from beyond_site.workspaces.models import Conversation, Message
from beyond_site.workspaces.conversations import may_manage_conversation
from beyond_site.runs.uploads import take_files

EXCHANGES_PER_PAGE = 20  # the conversation page shows the latest exchanges; "Show earlier" pages back


def new_form_key() -> str:
    # One key per rendered form: a resubmitted or replayed form carries the same key, and
    # start_run returns the run that key already started instead of starting another.
    return secrets.token_urlsafe(24)


def _conversation_for(membership, conversation_id) -> Conversation | None:
    """The workspace's (visible) conversation `conversation_id` (a form's value); None for none, 404
    for another workspace's, a deleted one or none at all, BadInput for a value that is no id."""
    pk = object_id(conversation_id, "conversation")
    if pk is None:
        return None
    return get_object_or_404(Conversation.visible, pk=pk, workspace=membership.workspace)


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
    if before is None and items:
        items[-1]["last"] = True  # the conversation's last task: it may be edited and sent again
    return items, earlier


def _page_context(membership, conversation) -> dict:
    """What the chat's fragments draw besides the side list: the member's rights, the conversation's
    head and its research toggle."""
    workspace = membership.workspace
    return {
        "membership": membership,
        "workspace": workspace,
        "can_write": access.allows(membership, access.WRITE),
        "max_task_chars": MAX_TASK_CHARS,
        "conversation": conversation,
        "can_manage": conversation is not None and may_manage_conversation(conversation, membership),
        "research": research_state(conversation, workspace),
    }


def _side_context(membership, conversation, chats_page: int = 1, query: str = "") -> dict:
    workspace = membership.workspace
    return {
        **_page_context(membership, conversation),
        **sidebar_context(workspace, conversation, chats_page, query),
        "memories": workspace.memories.all(),
        "saved_tasks": picker_tasks(membership) if access.allows(membership, access.WRITE) else [],
        **(uploads_context(conversation) if conversation else {"uploads": []}),
    }


def research_state(conversation, workspace) -> dict:
    """Whether this server can do web research, and whether this conversation asks for it (a new
    one starts as the workspace's default says)."""
    setting = search_setting(settings.BEYOND_ENVIRONMENT)
    wanted = conversation.research if conversation is not None else workspace.research_default
    return {"available": setting.configured, "message": setting.message, "on": setting.configured and wanted}


def _chat_url(slug: str, conversation) -> str:
    """The page of `conversation`, or the workspace's chat when there is none yet."""
    if conversation is None:
        return reverse("chat:workspace", args=[slug])
    return reverse("chat:conversation", args=[slug, conversation.pk])


@login_required
@require_GET
def home(request):
    workspaces = access.workspaces_for(request.user)
    return render(request, "chat/home.html", {"workspaces": workspaces, "offers": offers_for(request.user)})


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
    ctx = _side_context(membership, conversation, page_number(request.GET.get("chats")),
                        search_query(request.GET.get("q")))
    ctx.update(exchanges=exchanges, earlier=earlier, paged_back=before is not None, form_key=new_form_key())
    return render(request, "chat/workspace.html", ctx)


#: A follow-up sent while an earlier run of the conversation is still going: it is started, but what
#: that run has not released yet is not in its context (runs/context.py reads released steps only).
UNFINISHED_NOTICE = ("Started. The run above is still going: this task may not see what it has not released yet. "
                     "To revise that document, send the task again once it has finished.")


def _unfinished_before(run: Run) -> bool:
    return Run.objects.filter(conversation_id=run.conversation_id, status__in=(Run.QUEUED, Run.RUNNING),
                              pk__lt=run.pk).exists()


@login_required
@require_POST
def send(request, slug):
    """Start a run for the typed task and answer at once with its (live) fragment."""
    membership = access.require_membership(request, slug, access.WRITE)
    task = request.POST.get("message", "").strip()
    key = request.POST.get("idempotency_key", "").strip()[:80] or None
    refused = _refused_task(request, task, key)
    if refused is not None:
        return refused
    try:
        posted = _conversation_for(membership, request.POST.get("conversation"))
    except BadInput as exc:
        return bad_request(request, str(exc))
    title_before = posted.title if posted else None
    research = research_state(posted, membership.workspace)["available"] and request.POST.get("research") == "on"
    try:
        run, created = start_run(membership.workspace, task, user=request.user, conversation=posted,
                                 idempotency_key=key, research=research)
    except ConversationDeleted as exc:
        return notice_only(request, str(exc), form_key=key)
    except BudgetRefused as exc:  # over one of the workspace's caps: nothing was created
        response = notice_only(request, f"Not started: {exc.message}", form_key=key)
        response.status_code = 429
        return response
    except CalibrationRequired as exc:  # the workspace requires a calibration its verifier lacks
        return calibration_required(request, membership, exc.message, form_key=key)
    conversation = run.conversation
    if created and conversation.research != research:
        Conversation.objects.filter(pk=conversation.pk).update(research=research)  # the toggle is remembered
        conversation.research = research
    url = _chat_url(slug, conversation)
    if not request.htmx:
        return redirect(url)
    response = _sent(request, membership, run, created, posted, renamed=posted is not None
                     and title_before != conversation.title)
    response["HX-Push-Url"] = url
    return response


def _refused_task(request, task: str, key: str | None):
    """The answer to a task that cannot be sent as typed, or None."""
    if has_nul(task, key, request.POST.get("conversation")):
        return bad_request(request, NUL_REFUSED)
    if key and key.startswith(SERVER_KEY_PREFIXES):  # the server's own keys: a form never makes one
        return bad_request(request, "This form's key is not one this page made: reload the page.")
    if not task:
        return notice_only(request, "Write a task first.", form_key=key)
    if len(task) > MAX_TASK_CHARS:
        return notice_only(request, f"This task is {len(task):,} characters long; a task is at most {MAX_TASK_CHARS:,}. "
                                "Nothing was sent: shorten it, or attach the long text as a file.", form_key=key)
    return None


def _sent(request, membership, run, created: bool, posted, *, renamed: bool):
    """The fragment that answers a sent task on the chat page: the run, and the side list's change."""
    conversation = run.conversation
    created_conversation = posted is None or posted.pk != conversation.pk
    ctx = _page_context(membership, conversation)
    # The side list changes only with a new conversation or a new name. Shown as the first page of
    # all conversations, it gets the new item alone ("item"); a search, a later page or a new name
    # is redrawn as that first page ("page").
    if created_conversation and request.POST.get("chats_shown", "first") == "first":
        ctx.update(first_page_change(membership.workspace, conversation), side_list="item")
    elif created_conversation or renamed:
        ctx.update(sidebar_context(membership.workspace, conversation), side_list="page")
    # The conversation's first task (it may have been started by an upload): the page's welcome and
    # the upload's report, above the box, would push the run off the screen. A conversation this
    # submission created holds its message alone: nothing to read.
    first_exchange = created and (created_conversation
                                  or not conversation.messages.exclude(pk=run.message_id).exists())
    ctx.update(form_key=new_form_key(), new_conversation=created_conversation, renamed=renamed,
               first_exchange=first_exchange,
               exchange={"text": run.task, "rv": queued_view(run), "last": True} if created else None,
               sent_notice=UNFINISHED_NOTICE if created and posted and _unfinished_before(run) else "")
    return render(request, "chat/_sent.html", ctx)



MAX_FILES_PER_UPLOAD = 10  # settings.DATA_UPLOAD_MAX_NUMBER_FILES refuses more


def _uploadnotice_only(request, slug, notice: str):
    """A refusal before any file was read: nothing changed, so nothing is swapped but the notice."""
    if not request.htmx:
        return redirect(reverse("chat:workspace", args=[slug]))
    return notice_only(request, notice)


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
    try:
        cap = read_files_capped(request, limit)  # before the CSRF check reads request.POST
    except (MultiPartParserError, RequestDataTooBig, TooManyFieldsSent) as exc:
        # Nothing was read into the workspace; the form itself cannot be used.
        return bad_request(request, unreadable_upload(exc))
    if cap is None:
        return _uploadnotice_only(request, slug, f"These files are too large together: each file may be at most "
                                             f"{megabytes(limit)}. Nothing was attached.")
    return _upload(request, slug, cap)


@csrf_protect
def _upload(request, slug, cap):
    membership = access.require_membership(request, slug, access.WRITE)
    if getattr(request, "too_many_files", False):
        return _uploadnotice_only(request, slug, f"Attach at most {MAX_FILES_PER_UPLOAD} files at a time. "
                                             "Nothing was attached.")
    try:
        conversation = _conversation_for(membership, request.POST.get("conversation"))
    except BadInput as exc:
        return bad_request(request, str(exc))
    taken = take_files(request, membership.workspace, cap, conversation=conversation,
                       new_conversation=lambda: Conversation.objects.create(
                           workspace=membership.workspace, title="New conversation", created_by=request.user))
    created_conversation = conversation is None and taken.conversation is not None
    conversation, added, refused = taken.conversation, [document.name for document, _, _ in taken.kept], taken.refused
    if not request.FILES.getlist("files") and not refused:
        refused.append("Choose a file to attach first.")
    if not request.htmx:
        return redirect(_chat_url(slug, conversation))
    ctx = _side_context(membership, conversation)
    ctx.update(added=added, refused=refused, new_conversation=created_conversation)
    response = render(request, "chat/_uploaded.html", ctx)
    if created_conversation:
        response["HX-Push-Url"] = _chat_url(slug, conversation)
    return response
