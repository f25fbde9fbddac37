"""Assemble the context the planner and executors see (SPEC 2) from the workspace's data."""
from __future__ import annotations

from pipeline.context import Context, Document as ContextDocument, HistoryMessage


def assemble_context(run) -> Context:
    """Everything the run's workspace and conversation know, as plain data for the pipeline."""
    from beyond_site.runs.models import Message
    from beyond_site.workspaces.models import Document

    workspace = run.workspace
    history: tuple[HistoryMessage, ...] = ()
    uploads: tuple[ContextDocument, ...] = ()
    if run.conversation_id:
        earlier = (Message.objects.filter(conversation_id=run.conversation_id, created_at__lt=run.created_at)
                   .exclude(run=run).order_by("created_at", "id"))
        history = tuple(HistoryMessage(m.role, m.text) for m in earlier if m.text)
        uploads = tuple(ContextDocument(d.name, d.text, d.sha256, "upload")
                        for d in Document.objects.filter(conversation_id=run.conversation_id).order_by("name", "sha256"))
    files = tuple(ContextDocument(d.name, d.text, d.sha256, "file")
                  for d in Document.objects.filter(workspace=workspace, conversation__isnull=True).order_by("name", "sha256"))
    memories = tuple(m.text for m in workspace.memories.order_by("created_at", "id"))
    return Context(task=run.task, history=history, memories=memories, files=files, uploads=uploads,
                   workspace_name=workspace.name)
