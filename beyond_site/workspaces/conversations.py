"""A workspace's conversations: who may manage one, renaming and deleting (runs stay on record)."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Conversation, Membership


def may_manage_conversation(conversation: Conversation, membership: Membership) -> bool:
    """The member who started a conversation may rename or delete it, and so may the workspace's admins."""
    return membership.role == Membership.ADMIN or (
        membership.role == Membership.MEMBER and conversation.created_by_id == membership.user_id)


TITLE_CHARS = 80


def conversation_title(task: str) -> str:
    """A conversation is named after its first task: whole if it is short, else cut at the last
    word that fits, with an ellipsis."""
    words = " ".join(without_bidi_controls(task).split())
    if len(words) <= TITLE_CHARS:
        return words or "New conversation"
    cut = words[:TITLE_CHARS - 1]
    at_word = cut.rsplit(" ", 1)[0]
    if words[TITLE_CHARS - 1] != " " and len(at_word) >= TITLE_CHARS // 2:  # not inside a word, unless it is long
        cut = at_word
    return cut.rstrip(" ,;:.-") + "…"


def clean_conversation_title(title: str) -> str:
    title = " ".join(without_bidi_controls(title or "").split())
    if not title:
        raise ValueError("A conversation needs a title.")
    if len(title) > 200:
        raise ValueError("A title is at most 200 characters.")
    return title


@transaction.atomic
def rename_conversation(conversation: Conversation, title: str, user=None) -> Conversation:
    title = clean_conversation_title(title)
    if title != conversation.title:
        record_change(conversation.workspace, user, "conversation_renamed", conversation=conversation.pk,
             before=conversation.title, after=title)
        conversation.title = title
        conversation.save(update_fields=["title"])  # a rename does not make it the most recent
    return conversation


@transaction.atomic
def rename_document(conversation: Conversation, title: str, user=None) -> Conversation:
    """Name the conversation's document (its exports' title page, headers and file names); an empty
    name gives it back its brief's title. On the change log, like a conversation's rename."""
    title = " ".join(without_bidi_controls(title or "").split())
    if len(title) > 120:
        raise ValueError("A document's title is at most 120 characters.")
    if title != conversation.document_title:
        record_change(conversation.workspace, user, "document_renamed", conversation=conversation.pk,
                      before=conversation.document_title, after=title)
        conversation.document_title = title
        conversation.save(update_fields=["document_title"])
    return conversation


@transaction.atomic
def delete_conversation(conversation: Conversation, user=None) -> None:
    """Hide a conversation from the chat. Its runs stay on the audit record (append-only), and so do
    its messages and uploads, which those runs' records point at."""
    record_change(conversation.workspace, user, "conversation_deleted", conversation=conversation.pk, title=conversation.title)
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=timezone.now(),
                                                           deleted_by=user if getattr(user, "pk", None) else None)
