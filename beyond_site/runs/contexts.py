"""What each model call was given, stored content-addressed and rebuilt on demand.

A call's messages are split into parts (each "# " section of the long stable context is its own
part) and each part is stored once as a Blob, whatever number of runs used it; a ContextRecord
lists the parts in order. Rebuilding joins the parts back into exactly the messages sent.
"""
from __future__ import annotations

import hashlib

from pipeline.providers.base import Message
from beyond_site.runs.models import ContextRecord
from beyond_site.workspaces.models import Blob


def _message_parts(message: Message) -> list[str]:
    # The stable context is one long message made of "# " sections (pipeline.context.render_context).
    # Storing each section apart means an unchanged document is stored once however many runs use
    # it, even when a memory or the task around it changed. Joining the parts gives the message back.
    first, *rest = message.content.split("\n\n# ")
    return [first, *("\n\n# " + piece for piece in rest)]


def record_sha256(parts: list[dict]) -> str:
    """A context record's address: over each part's message number, role and blob, in order (the
    size is not part of it). `beyond_audit verify` recomputes it from the stored parts."""
    return hashlib.sha256(repr([(p["message"], p["role"], p["blob"]) for p in parts]).encode()).hexdigest()


def store_context(messages: tuple[Message, ...]) -> ContextRecord:
    """Store a call's messages (each part once) and return their record."""
    parts, blobs = [], {}
    for number, message in enumerate(messages):
        for piece in _message_parts(message):
            data = piece.encode("utf-8")
            digest = hashlib.sha256(data).hexdigest()
            blobs[digest] = data
            parts.append({"message": number, "role": message.role, "blob": digest, "size": len(data)})
    record_hash = record_sha256(parts)
    existing = ContextRecord.objects.filter(sha256=record_hash).first()
    if existing is not None:
        return existing
    Blob.store_for_audit(blobs)
    record, _ = ContextRecord.objects.get_or_create(sha256=record_hash, defaults={"parts": parts})
    return record


def messages_of(parts: list[dict], texts: dict[str, str]) -> list[dict]:
    """The messages [{"role", "content"}] that `parts` describe, given each part's text by sha256."""
    messages: dict[int, dict] = {}
    for part in parts:
        message = messages.setdefault(part["message"], {"role": part["role"], "content": ""})
        message["content"] += texts.get(part["blob"], "")
    return [messages[n] for n in sorted(messages)]


def part_texts(records) -> dict[str, str]:
    """The text of every part of `records`, by sha256, in one query."""
    wanted = {part["blob"] for record in records for part in record.parts}
    return {sha: bytes(data).decode("utf-8")
            for sha, data in Blob.objects.filter(sha256__in=wanted).values_list("sha256", "data")}


def context_messages(record: ContextRecord) -> list[dict]:
    """Exactly the messages a call was given: [{"role", "content"}]."""
    return messages_of(record.parts, part_texts([record]))
