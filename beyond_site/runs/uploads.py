"""One way a file uploaded over HTTP enters a workspace (the file library, a chat's attachment, the
API): its original stored and checked before any transaction, recorded in the workspace or one of
its conversations, and read off the request once the record commits (workspaces/reading.py)."""
from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from beyond_site.runs import jobs
from beyond_site.workspaces.knowledge import accept_file, receive_file
from beyond_site.workspaces.models import Conversation, Document, Workspace
from beyond_site.workspaces.reading import READ_TASK


def upload(workspace: Workspace, file, *, user, conversation: Conversation | None = None,
           new_conversation: Callable[[], Conversation] | None = None) -> tuple[Document, bool, Conversation | None]:
    """(document, created, its conversation). `new_conversation` makes the conversation in the same
    transaction as the file, so that a refused file leaves none behind. DocumentRefused for a file
    Beyond will not take (nothing is kept of it)."""
    received = receive_file(file, file.name)  # stored and checked before any transaction
    with transaction.atomic():
        target = conversation or (new_conversation() if new_conversation else None)
        document, created = accept_file(workspace, received, user=user, conversation=target)
        if created and document.status == Document.READING:  # read off this request, at the commit
            jobs.defer(READ_TASK, document_id=document.pk, member=getattr(user, "pk", None))
    return document, created, target
