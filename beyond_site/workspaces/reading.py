"""Reading an uploaded file, off the request that uploaded it: the file's text, or why there is none.

An upload is answered as soon as the original is stored and its quick checks passed
(knowledge.add_document); the file is `reading` until a background task (runs/tasks.py, through
the job interface) has extracted its text in a resource-limited subprocess (extraction.py) and
split it into searchable chunks. Never inside a transaction or a request: the one transaction,
at the end, writes the text and the chunks together, and only while the reader still holds the
file (lib/leases.py), so a file is never half-read. A reader that dies leaves the file to the
sweeps (`reap_abandoned`), which mark it failed with the reason.
"""
from __future__ import annotations

import logging
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from beyond_site.lib import leases
from beyond_site.workspaces import originals
from beyond_site.workspaces.chunking import estimate_tokens, split_into_chunks
from beyond_site.workspaces.extraction import Extracted, ExtractionError, Limits, extract_file
from beyond_site.workspaces.models import Document, DocumentChunk

log = logging.getLogger("beyond.files")

#: The task's name in the job interface (runs/jobs.py), which this app cannot import.
READ_TASK = "beyond.read_file"
INTERRUPTED = ("Reading this file was interrupted (the server or worker reading it stopped). "
               "Remove it and upload it again.")


def limits() -> Limits:
    return Limits(max_file_bytes=settings.BEYOND_MAX_FILE_BYTES)


class Outcome(NamedTuple):
    #: The file's status afterwards; "taken" when another reader had it, "lost" when it was reaped.
    status: str
    #: Why it failed, for programs (extraction.ExtractionError's codes, or "missing", "internal").
    code: str | None = None


def read_document(document_id: int, owner: str) -> Outcome:
    """Read the file `document_id` if it is still to be read."""
    if not leases.claim(Document.objects.filter(pk=document_id, status=Document.READING, lease_owner=None), owner):
        return Outcome("taken")
    document = Document.objects.get(pk=document_id)
    try:
        with open(originals.path(document.sha256), "rb") as original:
            extracted = extract_file(original, document.name, limits(), kind=document.kind or None)
    except ExtractionError as exc:
        return _finish(document, owner, code=exc.code, failure=str(exc))
    except FileNotFoundError:
        return _finish(document, owner, code="missing",
                       failure="The original of this file is missing from the server's store.")
    except Exception:
        log.exception("reading file %s failed", document_id)
        return _finish(document, owner, code="internal", failure="This file could not be read (an internal "
                       "error, logged on the server). Remove it and upload it again.")
    return _finish(document, owner, text=extracted.text, kind=extracted.kind, mime=extracted.mime,
                   pages=extracted.pages, sheets=extracted.sheets)


def _finish(document: Document, owner: str, *, code: str | None = None, text: str = "", **fields) -> Outcome:
    status = Document.FAILED if code else Document.READY
    try:
        with transaction.atomic():
            finished = leases.held(Document.objects.filter(pk=document.pk, status=Document.READING), owner).update(
                status=status, text=text, lease_owner=None, lease_expires_at=None, **fields)
            if not finished:
                return Outcome("lost")  # reaped meanwhile: the reaper marked the file failed, not this reader
            if status == Document.READY:
                _store_chunks(document.pk, text)
    except Exception:
        if code:
            raise
        log.exception("storing the text of file %s failed", document.pk)  # nothing of it was kept
        return _finish(document, owner, code="internal", failure="This file could not be stored after it was "
                       "read (an internal error, logged on the server). Remove it and upload it again.")
    return Outcome(status, code)


def store_text(document: Document, read: Extracted) -> None:
    """Give a file read in the foreground its text (inside the transaction that records it)."""
    Document.objects.filter(pk=document.pk).update(status=Document.READY, text=read.text, kind=read.kind,
                                                   mime=read.mime, pages=read.pages, sheets=read.sheets)
    document.status, document.text, document.pages, document.sheets = Document.READY, read.text, read.pages, read.sheets
    _store_chunks(document.pk, read.text)


def _store_chunks(document_id: int, text: str) -> None:
    """The text split into chunks; the database indexes them for full-text search (triggers or a
    generated column, migration 0003)."""
    DocumentChunk.objects.bulk_create(
        DocumentChunk(document_id=document_id, ordinal=n, text=chunk, tokens=estimate_tokens(chunk))
        for n, chunk in enumerate(split_into_chunks(text)))


def pending() -> list[dict]:
    """Files still to be read that no reader has taken (their upload's process stopped first)."""
    return [{"document_id": pk, "member": member} for pk, member in
            Document.objects.filter(status=Document.READING, lease_owner=None).order_by("id")
            .values_list("pk", "uploaded_by_id")[:200]]


def share_key(document_id: int, member: int | None = None):
    """Files are read fairly between members (runs/jobs.py, FairThreads)."""
    return member


def reap_abandoned() -> int:
    """Mark failed the files whose reader is gone (its lease ran out, or its process died)."""
    marked = 0
    for pk, owner in leases.abandoned(Document.objects.filter(status=Document.READING).exclude(lease_owner=None)):
        marked += leases.held(Document.objects.filter(pk=pk, status=Document.READING), owner).update(
            status=Document.FAILED, failure=INTERRUPTED, lease_owner=None, lease_expires_at=None)
    return marked


def still_reading(workspace_id: int, conversation_id: int | None) -> list[str]:
    """The names of the files a run of this conversation would read that are still being read."""
    return [name for (name,) in reading_query(workspace_id, conversation_id)]


def reading_query(workspace_id, conversation_id):
    """The names (name,) of the files in a conversation's scope still being read, by name."""
    scope = Q(conversation__isnull=True) | Q(conversation_id=conversation_id)
    return (Document.objects.filter(scope, workspace_id=workspace_id, status=Document.READING)
            .order_by("name").values_list("name"))
