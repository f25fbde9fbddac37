"""What a workspace knows: its memories, its files (and conversations' uploads), and the framework
packs imported from OSCAL. Every change is logged in the change log (changelog.py).

A file comes in three steps, so that no request parses anything and no transaction waits on a
disk or a parser: `receive_file` stores the original and checks what it is, `accept_file` records
it (briefly, in a transaction), and the file is then read in the background (reading.py)."""
from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Sum

from pipeline.frameworks import ALL_FRAMEWORKS, pack_from_dict
from beyond_site.lib.chaining import canonical_json
from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.workspaces import originals, reading
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.extraction import MIME_TYPES, ExtractionError, Extracted, check, extract_file
from beyond_site.workspaces.models import Document, FrameworkPack, Memory, Workspace


def _clean_memory_text(text: str) -> str:
    text = without_bidi_controls(text or "").strip()  # they make a fact read otherwise than it is
    if not text:
        raise ValueError("a memory cannot be empty")
    if "\x00" in text:  # PostgreSQL cannot store it: said here rather than failing on save
        raise ValueError("a memory cannot contain NUL characters (\\x00)")
    if len(text) > 4000:
        raise ValueError("a memory is a short fact: 4,000 characters at most (add a file for longer text)")
    return text


@transaction.atomic
def add_memory(workspace: Workspace, text: str, user=None) -> Memory:
    """A memory with `text` (the one already there, if the workspace has it); a new one is logged."""
    text = _clean_memory_text(text)
    existing = Memory.objects.filter(workspace=workspace, text=text).first()
    if existing:
        return existing
    memory = Memory.objects.create(workspace=workspace, text=text, created_by=user, updated_by=user)
    record_change(workspace, user, "memory_added", after=text, memory=memory.pk)
    return memory


@transaction.atomic
def edit_memory(memory: Memory, text: str, user=None) -> Memory:
    """Change a memory's text; `updated_by`/`updated_at` and the workspace's event log say who and when."""
    text = _clean_memory_text(text)
    if text != memory.text:
        record_change(memory.workspace, user, "memory_edited", memory=memory.pk, before=memory.text, after=text)
        memory.text = text
        memory.updated_by = user if getattr(user, "pk", None) else None
        memory.save(update_fields=["text", "updated_by", "updated_at"])
    return memory


@transaction.atomic
def delete_memory(memory: Memory, user=None) -> None:
    """Delete a memory; the workspace's event log keeps who deleted what, and when."""
    record_change(memory.workspace, user, "memory_deleted", before=memory.text, memory=memory.pk)
    memory.delete()


class DocumentRefused(ValueError):
    """A file Beyond will not take; `code` is stable and the message is safe to show."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Received:
    """An uploaded file stored and checked, not yet part of a workspace."""

    name: str
    sha256: str
    size: int
    kind: str


def receive_file(file, name: str) -> Received:
    """Store an upload's original (a piece at a time, workspaces/originals.py) after its quick
    checks: size, what it is, a ZIP's directory (extraction.check). Touches no database and
    holds no transaction: call it before the one that records the file. DocumentRefused for a
    file Beyond will not take (nothing is kept of it)."""
    name = clean_file_name(name)
    kind = _checked(file, name)
    stored = originals.store(file)
    return Received(name, stored.sha256, stored.size, kind)


def _checked(file, name: str) -> str:
    try:
        return check(file, name, reading.limits())
    except ExtractionError as exc:
        raise DocumentRefused(exc.code, f"{name}: {exc}") from None


def clean_file_name(name: str) -> str:
    name = without_bidi_controls((name or "document").replace("\\", "/").rsplit("/", 1)[-1])[:255] or "document"
    if "\x00" in name:  # PostgreSQL cannot store it
        raise DocumentRefused("bad_name", "A file name cannot contain NUL characters (\\x00).")
    return name


def accept_file(workspace: Workspace, received: Received, *, user=None, conversation=None,
                read: Extracted | None = None) -> tuple[Document, bool]:
    """Record a received file in the workspace (or one of its conversations), to be read off the
    request (workspaces/reading.py; the caller defers the reading: `reading.READ_TASK`), or with
    its text already `read`. Returns (document, created): created is False when the scope has these
    bytes already (the document there is returned), True for a new file, or for one whose earlier
    reading failed (it is `reading` again). DocumentRefused when the workspace has no room left;
    the stored original then goes too, unless a document has the same bytes."""
    try:
        return _accept(workspace, received, user=user, conversation=conversation, read=read)
    except DocumentRefused:
        _delete_original_unless_used(received.sha256)
        raise


def _accept(workspace: Workspace, received: Received, *, user, conversation, read) -> tuple[Document, bool]:
    with transaction.atomic():
        # Under a lock on the workspace row: two uploads at once must not both fit in the room
        # that only one of them has (PostgreSQL locks; SQLite writes one at a time anyway).
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        existing = Document.objects.filter(workspace=workspace, conversation=conversation,
                                           sha256=received.sha256).first()
        if existing is not None:
            if existing.status != Document.FAILED:
                return existing, False
            Document.objects.filter(pk=existing.pk, status=Document.FAILED).update(status=Document.READING, failure="")
            existing.status, existing.failure = Document.READING, ""
            return existing, True
        _check_room(workspace, received.name, received.size)
        document = Document.objects.create(
            workspace=workspace, conversation=conversation, name=received.name, kind=received.kind,
            mime=MIME_TYPES[received.kind], size=received.size, sha256=received.sha256, text="",
            status=Document.READING, uploaded_by=user if getattr(user, "pk", None) else None)
        if read is not None:
            reading.store_text(document, read)
        record_change(workspace, user, "document_added", name=received.name, sha256=received.sha256,
                      size=received.size, conversation=conversation.pk if conversation is not None else None,
                      document=document.pk)
    return document, True


def add_document(workspace: Workspace, name: str, data: bytes, *, user=None, conversation=None) -> tuple[Document, bool]:
    """Add a file from bytes, read in the foreground (the commands, the demo, tests); returns
    (document, created). A file that cannot be read raises DocumentRefused and changes nothing.
    Requests do not come here: they receive, accept and defer the reading."""
    name = clean_file_name(name)
    with tempfile.TemporaryFile() as spooled:
        spooled.write(data)
        kind = _checked(spooled, name)
        try:
            read = extract_file(spooled, name, reading.limits(), kind=kind)
        except ExtractionError as exc:
            raise DocumentRefused(exc.code, f"{name}: {exc}") from None
        stored = originals.store(spooled)
    return accept_file(workspace, Received(name, stored.sha256, stored.size, kind), user=user,
                       conversation=conversation, read=read)


def _check_room(workspace: Workspace, name: str, size: int) -> None:
    used = Document.objects.filter(workspace=workspace).aggregate(total=Sum("size"))["total"] or 0
    if used + size > settings.BEYOND_MAX_WORKSPACE_BYTES:
        raise DocumentRefused("workspace_full", f"{name}: the workspace's storage limit "
                              f"({settings.BEYOND_MAX_WORKSPACE_BYTES // (1024 * 1024)} MB) would be exceeded")


@transaction.atomic
def delete_document(document: Document, user=None) -> None:
    """Delete a file or upload with its chunks (and their index entries). The original goes too,
    once the deletion has committed, unless another document (in any workspace) has the same bytes."""
    record_change(document.workspace, user, "document_deleted", name=document.name, sha256=document.sha256,
                  size=document.size, conversation=document.conversation_id)
    digest = document.sha256
    document.delete()
    if not Document.objects.filter(sha256=digest).exists():
        transaction.on_commit(lambda: _delete_original_unless_used(digest))


def _delete_original_unless_used(digest: str) -> None:
    if not Document.objects.filter(sha256=digest).exists():  # not uploaded again meanwhile
        originals.delete(digest)


def save_framework_pack(data: dict) -> tuple[FrameworkPack, bool]:
    """Store an imported pack (pack JSON format); returns (row, created). A shipped pack's key is refused."""
    key, name = data.get("key"), data.get("name")
    if not key or not name:
        raise ValueError("a framework pack needs a key and a name")
    if key in ALL_FRAMEWORKS:
        raise ValueError(f"{key!r} is a shipped framework pack; import under another --key")
    if not data.get("entries"):
        raise ValueError("the catalogue has no controls or groups: nothing to import")
    pack_from_dict(data)  # refuse a malformed pack before storing it
    with transaction.atomic():
        stored = FrameworkPack.objects.select_for_update().filter(key=key).first()
        before = pack_summary(stored)
        row, created = FrameworkPack.objects.update_or_create(key=key, defaults={"name": name, "data": data})
        after = pack_summary(row)
        if after != before:  # the same catalogue imported again changes nothing
            _record_pack_change(key, "framework_pack_imported" if stored is None else "framework_pack_updated",
                                before, after, user=None)
    return row, created


def delete_framework_pack(row: FrameworkPack, user=None) -> None:
    """Remove an imported pack. The workspaces that enabled it keep its key, and draw on it again
    if it is imported anew; until then their runs do without it."""
    with transaction.atomic():
        # Locked and read again first (as an import locks it before the workspaces): what is logged
        # is what is removed, and two removals at once log one.
        stored = FrameworkPack.objects.select_for_update().filter(pk=row.pk).first()
        if stored is None:
            return
        _record_pack_change(stored.key, "framework_pack_removed", pack_summary(stored), None, user=user)
        stored.delete()


def pack_summary(row: FrameworkPack | None) -> dict | None:
    """What a change log says of an imported pack: its name, its size, and a digest of its content."""
    if row is None:
        return None
    return {"name": row.name, "entries": len(row.data.get("entries") or []),
            "sha256": hashlib.sha256(canonical_json(row.data)).hexdigest()}


def _record_pack_change(key: str, action: str, before, after, *, user) -> None:
    """Packs are site-wide: the change is logged in every workspace that has `key` enabled, since
    what its runs are told of that framework changes with it."""
    for workspace in Workspace.objects.only("pk", "enabled_frameworks").order_by("pk"):
        if key in (workspace.enabled_frameworks or []):
            record_change(workspace, user, action, before=before, after=after, pack=key)
