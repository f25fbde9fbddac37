"""Context assembly within a token budget: what always goes in, what is ranked, what the notes say.

Runs on the default test database (SQLite, FTS5). test_context_postgres.py runs this module
again against PostgreSQL (full-text search with ts_rank over a GIN-indexed tsvector).
"""
from __future__ import annotations

import pytest

from beyond_site.workspaces import knowledge
from beyond_site.workspaces.chunking import estimate_tokens
from beyond_site.runs.context import assemble_context
from beyond_site.workspaces.models import Workspace
from tests.site.context_support import (
    ON_TOPIC, UNRELATED, conversation_with_history, paragraphs, queued_run, rendered,
)

pytestmark = pytest.mark.django_db

TASK = "Draft a backup and restore procedure with offsite retention"


@pytest.fixture
def workspace():
    workspace = Workspace.objects.create(slug="acme", name="Acme Clinics")
    knowledge.add_memory(workspace, "MEMORY-MARKER: Acme runs three clinics in Lyon.")
    for n in range(6):
        knowledge.add_document(workspace, f"garden-{n}.md", paragraphs(UNRELATED, 40, seed=n).encode())
    knowledge.add_document(workspace, "zz-backups.md", paragraphs(ON_TOPIC, 8).encode())
    return workspace


def test_it_puts_everything_in_when_it_fits(workspace):
    ctx = assemble_context(queued_run(workspace, TASK), budget=1_000_000)
    assert [d.name for d in ctx.files] == [f"garden-{n}.md" for n in range(6)] + ["zz-backups.md"]
    assert ctx.notes == ()
    assert all("(part " not in d.name for d in ctx.files)


def test_it_keeps_memories_and_the_conversation_and_ranks_chunks_by_relevance(workspace):
    conversation = conversation_with_history(workspace, "HISTORY-MARKER: we back up nightly.")
    budget = 4000
    ctx = assemble_context(queued_run(workspace, TASK, conversation), budget=budget)
    text = rendered(ctx)
    assert "MEMORY-MARKER" in text and "HISTORY-MARKER" in text
    names = [d.name for d in ctx.files]
    assert names[-1] == "zz-backups.md"  # the on-topic document, whole, despite sorting last by name
    assert all("(part " in n for n in names[:-1])  # the unrelated ones only fill what room is left
    assert len({n.split(" (part ")[0] for n in names}) <= 3
    assert estimate_tokens(text) <= budget
    [note] = [n for n in ctx.notes if "chunks" in n]
    assert "documents left out to fit the context budget" in note
    assert note.split(" chunks of ")[1].split(" ")[0] in {"5", "6"}


def test_a_tiny_budget_still_keeps_memories_and_the_conversation(workspace):
    conversation = conversation_with_history(workspace, "HISTORY-MARKER")
    ctx = assemble_context(queued_run(workspace, TASK, conversation), budget=50)
    assert ctx.memories and ctx.history
    assert ctx.files == ()
    assert any("7 documents left out" in n for n in ctx.notes)


def test_it_prefers_uploads_of_this_conversation_and_ignores_other_conversations(workspace):
    mine = conversation_with_history(workspace)
    other = conversation_with_history(workspace)
    knowledge.add_document(workspace, "mine.txt", b"UPLOAD-MARKER about gardens and soil", conversation=mine)
    knowledge.add_document(workspace, "theirs.txt", b"OTHER-CONVERSATION-MARKER backup", conversation=other)
    ctx = assemble_context(queued_run(workspace, TASK, mine), budget=3000)
    assert [d.name for d in ctx.uploads] == ["mine.txt"]
    assert "OTHER-CONVERSATION-MARKER" not in rendered(ctx)


def test_it_drops_the_oldest_messages_only_when_the_conversation_alone_overflows(workspace):
    lines = [f"MESSAGE-{n} " + "word " * 200 for n in range(20)]
    conversation = conversation_with_history(workspace, *lines)
    ctx = assemble_context(queued_run(workspace, TASK, conversation), budget=2000)
    kept = [m.text.split()[0] for m in ctx.history]
    assert kept and kept[-1] == "MESSAGE-19" and "MESSAGE-0" not in kept
    assert any("earlier turns of the conversation left out" in n for n in ctx.notes)
    assert ctx.memories


def test_the_assembly_is_deterministic(workspace):
    first = rendered(assemble_context(queued_run(workspace, TASK), budget=4000))
    second = rendered(assemble_context(queued_run(workspace, TASK), budget=4000))
    assert first == second


def test_a_models_window_fits_the_context_and_the_notes_say_so(workspace):
    """A topology whose planner and executor take 8,192 tokens (make model-server's model) gets a
    context fitted to them, with every framework enabled, and its notes say why."""
    from beyond_site.runs.runner import starting
    from beyond_site.workspaces.frameworks import available_packs
    from pipeline.topology import ROLES
    from pipeline.window import context_budget
    from pipeline.topology import parse_topology

    model = {"provider": "openai", "model": "gemma", "base_url": "http://127.0.0.1:8088/v1",
             "profile": "llama-cpp-python"}
    workspace.enabled_frameworks = list(available_packs())
    workspace.save(update_fields=["enabled_frameworks"])
    run = queued_run(workspace, TASK)
    run.topology = {role: model for role in ROLES}
    run.save(update_fields=["topology"])
    fitted = context_budget(parse_topology(run.topology), 100_000)
    ctx = starting(run.pk).context
    assert estimate_tokens(rendered(ctx)) <= fitted.budget < 8192
    assert any("the executor's model takes 8,192 tokens" in note for note in ctx.notes)
    assert "MEMORY-MARKER" in rendered(ctx) and ctx.frameworks  # what always goes in still does
