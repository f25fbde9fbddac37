"""The conversation list (most recent first, paged, searchable by title and content) and the
rename and delete actions on a conversation."""
from __future__ import annotations

import re

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from beyond_site.chat.notices import notice_only
from beyond_site.lib.http import clean_text
from beyond_site.lib.ids import parse_id
from beyond_site.runs.models import Step
from beyond_site.workspaces import access
from beyond_site.workspaces.models import Conversation, Message
from beyond_site.workspaces.conversations import delete_conversation, may_manage_conversation, rename_conversation

PER_PAGE = 50
MAX_QUERY = 200
MAX_WORDS = 8  # each word is a search of its own; past a few, more narrow nothing


def page_number(value) -> int:
    try:
        return max(1, min(int(value), 10_000))
    except (TypeError, ValueError):
        return 1


def search_query(value) -> str:
    """A search as typed in the list's box: cleaned, and cut to what the box takes."""
    return clean_text(value or "")[:MAX_QUERY]


#: What separates words: white space and ASCII punctuation ("asset-register" is two words). Not
#: `\W`, which would also split the words of scripts written with combining marks (Devanagari, Thai).
_BETWEEN_WORDS = re.compile(r"[\s!-/:-@\[-`{-~]+")


def search_words(query: str) -> list[str]:
    """The words of a search, each once (as typed: the database compares cases itself). Lone
    letters are left out, since one matches nearly everything; a search with no longer word ("C++",
    "---", "x") is searched as it is."""
    words = [w for w in _BETWEEN_WORDS.split(query) if len(w) > 1] or ([query.strip()] if query.strip() else [])
    once: dict[str, str] = {}
    for word in words:
        once.setdefault(word.casefold(), word)
    return list(once.values())[:MAX_WORDS]


def matching(workspace, query: str):
    """The workspace's visible conversations that hold every word of `query`, each in the title, a
    message or a released step (not necessarily the same one)."""
    conversations = Conversation.visible.filter(workspace=workspace)
    for word in search_words(query):
        said = Message.objects.filter(conversation=OuterRef("pk"), text__icontains=word)
        released = Step.objects.filter(run__conversation=OuterRef("pk"), status=Step.RELEASED, content__icontains=word)
        conversations = conversations.filter(Q(title__icontains=word) | Exists(said) | Exists(released))
    return conversations


def sidebar_context(workspace, current, page: int = 1, query: str = "") -> dict:
    start = (page - 1) * PER_PAGE
    listed = list(matching(workspace, query).order_by("-updated_at", "-id")[start:start + PER_PAGE + 1])
    return {"conversations": listed[:PER_PAGE], **_paging(current, page, query, more=len(listed) > PER_PAGE)}


def first_page_change(workspace, current) -> dict:
    """What the conversation `current`, just started, changes on the first page of all conversations:
    the paging, whether it is the only one, and which one it pushed to the next page. Only ids are
    read: the new item is drawn from `current`, and reading the page's rows was most of the cost."""
    ids = list(Conversation.visible.filter(workspace=workspace).order_by("-updated_at", "-id")
               .values_list("pk", flat=True)[:PER_PAGE + 1])
    more = len(ids) > PER_PAGE
    return {"only_conversation": len(ids) == 1, **_paging(current, 1, "", more=more),
            # The conversation that just moved to the next page.
            "pushed_off_chat": ids[PER_PAGE] if more else None}


def _paging(current, page: int, query: str, *, more: bool) -> dict:
    return {"conversation": current, "chats_page": page, "chats_query": query,
            "older_chats": page + 1 if more else None, "newer_chats": page - 1 if page > 1 else None}


@login_required
@require_GET
def search(request, slug):
    """The conversation list for a search (htmx swaps it in as the member types)."""
    membership = access.require_membership(request, slug, access.READ)
    query = search_query(request.GET.get("q"))
    current, current_id = None, parse_id(request.GET.get("current"))
    if current_id is not None:
        current = Conversation.visible.filter(pk=current_id, workspace=membership.workspace).first()
    ctx = {"workspace": membership.workspace, "membership": membership,
           **sidebar_context(membership.workspace, current, page_number(request.GET.get("chats")), query)}
    return render(request, "chat/_conversations.html", ctx)


def _managed(request, slug, conversation_id):
    membership = access.require_membership(request, slug, access.WRITE)
    conversation = get_object_or_404(Conversation.visible, pk=conversation_id, workspace=membership.workspace)
    if not may_manage_conversation(conversation, membership):
        raise PermissionDenied("Only the member who started this conversation, or an admin, can change it")
    return membership, conversation


@login_required
@require_POST
def rename(request, slug, conversation_id):
    membership, conversation = _managed(request, slug, conversation_id)
    try:
        rename_conversation(conversation, clean_text(request.POST.get("title", "")), user=request.user)
    except ValueError as exc:
        if not request.htmx:
            return redirect("chat:conversation", slug, conversation.pk)
        return notice_only(request, str(exc))
    if not request.htmx:
        return redirect("chat:conversation", slug, conversation.pk)
    # The list is redrawn as the member sees it: the same search, the same page.
    listed = sidebar_context(membership.workspace, conversation, page_number(request.POST.get("chats")),
                             search_query(request.POST.get("q")))
    ctx = {"workspace": membership.workspace, "membership": membership, "conversation": conversation,
           "can_manage": True, **listed}
    return render(request, "chat/_renamed.html", ctx)


@login_required
@require_POST
def delete(request, slug, conversation_id):
    _, conversation = _managed(request, slug, conversation_id)
    delete_conversation(conversation, user=request.user)
    url = reverse("chat:workspace", args=[slug])
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)
