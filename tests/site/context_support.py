"""Helpers shared by the context and workspace tests (no tests here)."""
from __future__ import annotations

from beyond_site.runs.queue import start_run
from beyond_site.workspaces.models import Blob, Conversation, Document, DocumentChunk, Memory, Message, Workspace
from pipeline.context import render_context
from pipeline.topology import parse_shorthand


def paragraphs(topic_words: list[str], count: int, seed: int = 0) -> str:
    """Deterministic filler text about `topic_words`: `count` paragraphs of ~60 words."""
    out = []
    for n in range(count):
        words = [topic_words[(n * 7 + i * 3 + seed) % len(topic_words)] for i in range(60)]
        out.append(" ".join(words).capitalize() + ".")
    return "\n\n".join(out)


UNRELATED = ["tomato", "basil", "garden", "harvest", "soil", "compost", "seedling", "watering", "greenhouse",
             "pruning", "mulch", "orchard"]
ON_TOPIC = ["backup", "restore", "retention", "offsite", "snapshot", "recovery", "encrypted", "tested",
            "schedule", "copies"]


def workspace_state(workspace: Workspace) -> dict:
    """Everything a refused file must leave untouched."""
    return {
        "documents": sorted(Document.objects.filter(workspace=workspace).values_list("sha256", "name")),
        "chunks": DocumentChunk.objects.filter(document__workspace=workspace).count(),
        "blobs": sorted(Blob.objects.values_list("sha256", flat=True)),
        "memories": sorted(Memory.objects.filter(workspace=workspace).values_list("text", flat=True)),
    }


def conversation_with_history(workspace: Workspace, *texts: str) -> Conversation:
    """A conversation whose members already said `texts` (messages that started no run)."""
    conversation = Conversation.objects.create(workspace=workspace, title="Thread")
    for text in texts:
        Message.objects.create(conversation=conversation, text=text)
    return conversation


def queued_run(workspace: Workspace, task: str, conversation: Conversation | None = None):
    run, _ = start_run(workspace, task, conversation=conversation, topology=parse_shorthand("offline"))
    return run


def rendered(ctx) -> str:
    return render_context(ctx)
