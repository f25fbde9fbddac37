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


def _split(messages: tuple[Message, ...]) -> tuple[str, list[dict], dict[str, bytes]]:
    """A call's record hash, its parts and the bytes of each part by sha256."""
    parts, blobs = [], {}
    for number, message in enumerate(messages):
        for piece in _message_parts(message):
            data = piece.encode("utf-8")
            digest = hashlib.sha256(data).hexdigest()
            blobs[digest] = data
            parts.append({"message": number, "role": message.role, "blob": digest, "size": len(data)})
    return record_sha256(parts), parts, blobs


def records_query(shas: list[str]):
    """[(sha256, pk)] of the context records among `shas`."""
    return ContextRecord.objects.filter(sha256__in=shas).values_list("sha256", "pk")


class ContextStore:
    """Stores the contexts of one writer's calls (a run's recorder), remembering what it already
    stored: a run's executor calls share their long stable context, so its bytes go to the database
    once per run, and a batch of calls costs a few queries whatever its size."""

    def __init__(self):
        self.records: dict[str, int] = {}  # record sha256 -> ContextRecord pk
        self.blobs: set[str] = set()  # blob sha256 known to be stored and kept for the audit

    def store_many(self, calls: list[tuple[Message, ...]]) -> list[str]:
        """Store each call's messages; return each call's record sha256, in order."""
        shas, pending = [], {}
        for messages in calls:
            record_hash, parts, blobs = _split(messages)
            shas.append(record_hash)
            if record_hash not in self.records:
                pending[record_hash] = (parts, blobs)
        if pending:
            self.records.update(records_query(list(pending)))
            missing = {sha: value for sha, value in pending.items() if sha not in self.records}
            if missing:
                self.store_texts({digest: data for _, blobs in missing.values() for digest, data in blobs.items()})
                # Another run may store the same record meanwhile: the conflict skips it, and the
                # read after finds whichever row won.
                ContextRecord.objects.bulk_create(
                    [ContextRecord(sha256=sha, parts=parts) for sha, (parts, _) in missing.items()],
                    ignore_conflicts=True)
                self.records.update(records_query(list(missing)))
        return shas

    def store_texts(self, items: dict[str, bytes]) -> None:
        """Store {sha256: bytes} for the audit, skipping what this store already stored."""
        new = {digest: data for digest, data in items.items() if digest not in self.blobs}
        if new:
            Blob.store_for_audit(new)
            self.blobs.update(new)


def store_context(messages: tuple[Message, ...]) -> ContextRecord:
    """Store one call's messages (each part once) and return their record."""
    [record_hash] = ContextStore().store_many([messages])
    return ContextRecord.objects.get(sha256=record_hash)


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
