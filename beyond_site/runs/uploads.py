"""One way a file uploaded over HTTP enters a workspace (the file library, a chat's attachment, the
API): its original stored and checked before any transaction, recorded in the workspace or one of
its conversations, and read off the request once the record commits (workspaces/reading.py)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from beyond_site.lib.uploads import SizeCapHandler, megabytes
from beyond_site.runs import jobs
from beyond_site.workspaces.knowledge import DocumentRefused, accept_file, receive_file
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


@dataclass
class Taken:
    """What became of an upload form's files: each one kept (its document, whether it is new, the
    name it was sent under), each one refused (in words, by name), and the conversation they went to."""

    kept: list[tuple[Document, bool, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    conversation: Conversation | None = None


def take_files(request, workspace: Workspace, cap: SizeCapHandler, *, conversation: Conversation | None = None,
               new_conversation: Callable[[], Conversation] | None = None) -> Taken:
    """Every file of a form parsed with `lib.uploads.read_files_capped`, each uploaded on its own: a
    refused file changes nothing and is reported by name, the others are kept. A new conversation
    is made with the first file kept, never for refused ones."""
    def too_large(name: str) -> str:
        return f"{name}: larger than the {megabytes(cap.limit)} limit"

    taken = Taken(refused=[too_large(name) for name in cap.refused], conversation=conversation)
    for f in request.FILES.getlist("files"):
        if f.size > cap.limit:  # the cap already dropped it; kept as a second line
            taken.refused.append(too_large(f.name))
            continue
        try:
            document, created, taken.conversation = upload(workspace, f, user=request.user, conversation=taken.conversation,
                                                           new_conversation=new_conversation)
        except DocumentRefused as exc:
            taken.refused.append(str(exc))
        else:
            taken.kept.append((document, created, f.name))
    return taken
