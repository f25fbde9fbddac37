"""Assemble the context the planner and executors see from the workspace's data.

Everything goes in when it fits the token budget. When it does not: memories and the
conversation first (always, the conversation trimmed from its oldest end only if it alone
overflows), then framework knowledge within its share, then document chunks, this
conversation's uploads before workspace files, each in order of relevance to the task as the
database's full-text search ranks them. `Context.notes` says what was left out.

The result is deterministic and sorted, with no timestamps or database ids, so the stable part of
every prompt is byte-identical across a run's calls and unchanged documents render the same bytes
run after run (their context blobs are then stored once).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db.models import Q

from pipeline.context import Context, Document as ContextDocument, HistoryMessage, ReleasedStep, render_context
from pipeline.frameworks import Pack
from pipeline.window import Fitted
from beyond_site.workspaces.chunking import estimate_tokens
from beyond_site.workspaces.frameworks import available_packs, imported_packs, select_entries
from beyond_site.runs.models import Run, Step
from beyond_site.workspaces.models import Document, DocumentChunk, Memory, Message
from beyond_site.workspaces.search import ranked_chunk_ids

#: Share of the budget that framework knowledge (ids and short titles) may take.
FRAMEWORK_SHARE = 0.10
#: Room kept for the notes that say what was left out.
NOTES_RESERVE = 120

@dataclass
class _Doc:
    id: int
    name: str
    sha256: str
    upload: bool
    chunks: list[tuple[int, int, int]] = field(default_factory=list)  # (ordinal, chunk id, tokens)

    def header_tokens(self) -> int:
        title = "Uploaded document" if self.upload else "Workspace file"
        return estimate_tokens(f"\n\n# {title}: {self.name} (part 999 of 999)\n")


def memories_query(workspace_id):
    """A workspace's memories (text,), oldest first."""
    return Memory.objects.filter(workspace_id=workspace_id).order_by("created_at", "id").values_list("text")


def messages_query(conversation_id, until):
    """A conversation's messages (id, text) sent until `until`, in order."""
    return (Message.objects.filter(conversation_id=conversation_id, created_at__lte=until)
            .order_by("created_at", "id").values_list("id", "text"))


def documents_query(workspace_id, conversation_id):
    """The workspace's read files and a conversation's read uploads (id, name, sha256, conversation id)."""
    return (Document.objects.filter(Q(conversation__isnull=True) | Q(conversation_id=conversation_id),
                                    workspace_id=workspace_id, status=Document.READY)
            .values_list("id", "name", "sha256", "conversation_id"))


def assemble_context(run, *, budget: int | Fitted | None = None, imported: dict[str, Pack] | None = None) -> Context:
    """Everything the run's workspace and conversation know, fitted to `budget` tokens (default
    settings.BEYOND_CONTEXT_BUDGET_TOKENS; a `Fitted` budget when a model's window decided it,
    pipeline/window.py), as plain data for the pipeline. `imported`: the imported packs, when the
    caller already read them (workspaces/frameworks.py)."""
    notes: list[str] = []
    if isinstance(budget, Fitted):
        if budget.window is not None:
            notes.append(f"context fitted to {budget.budget:,} tokens: the {budget.role}'s model takes "
                         f"{budget.window:,} tokens in all, with room for its instructions and its reply")
        budget = budget.budget
    budget = settings.BEYOND_CONTEXT_BUDGET_TOKENS if budget is None else budget
    workspace = run.workspace

    base = Context(task=run.task, memories=tuple(text for (text,) in memories_query(workspace.pk)),
                   history=_history(run), workspace_name=workspace.name)
    base, dropped = _fit_history(base, budget)
    if dropped:
        notes.append(f"{dropped} earlier turns of the conversation left out to fit the context budget "
                     "(the oldest first; the latest document is always kept)")
    used = _tokens(base)

    packs = available_packs(imported)
    keys = [key for key in (workspace.enabled_frameworks or []) if key in packs]
    framework_room = max(0, min(int(budget * FRAMEWORK_SHARE), budget - used))
    entries, entries_left_out = select_entries(run.task, keys, framework_room, packs)
    if entries_left_out:
        notes.append(f"{entries_left_out} entries of the frameworks the task names left out to fit the "
                     "context budget; the structure and the entries matching the task are listed")
    used += sum(estimate_tokens(f"- {e.framework} {e.ref}: {e.title}\n") for e in entries)
    used += estimate_tokens("# Enabled frameworks\n" + "".join(f"- {packs[k].name}\n" for k in keys))

    docs = _documents_in_scope(run)
    chosen, left_out = _choose_chunks(run, docs, budget - used)
    if left_out:
        chunk_count = sum(len(ids) for ids in left_out.values())
        notes.append(f"{chunk_count} chunks of {len(left_out)} documents left out to fit the context budget "
                     f"({budget} tokens); the parts kept were chosen by relevance to the task")
    files, uploads = _render_documents(docs, chosen)
    return Context(task=run.task, history=base.history, memories=base.memories, files=files, uploads=uploads,
                   frameworks=entries, enabled_frameworks=tuple(packs[k].name for k in keys),
                   workspace_name=workspace.name, notes=tuple(notes))


def _tokens(ctx: Context) -> int:
    return estimate_tokens(render_context(ctx)) + estimate_tokens(ctx.task)


def _history(run) -> tuple[HistoryMessage, ...]:
    """Every earlier turn of the run's conversation: each message a member sent and, after it, what
    the run it started released (its steps with their badges and warnings, and its recap)."""
    if not run.conversation_id:
        return ()
    earlier = [(pk, text) for pk, text in messages_query(run.conversation_id, run.created_at) if pk != run.message_id]
    if not earlier:  # a conversation's first task (most of them): nothing more to read
        return ()
    # A declined run's answer is its reason: a follow-up sees why nothing was written, and the
    # conversation's document stays the one an earlier run released.
    answers = {message_id: (pk, f"It declined the task: {declined}" if declined else summary, status)
               for pk, message_id, summary, status, declined in Run.objects.filter(
                   message__in=[pk for pk, _ in earlier]).order_by()
               .values_list("id", "message_id", "summary", "status", "decline_reason")
               if pk != run.pk}
    steps: dict[int, list[ReleasedStep]] = defaultdict(list)
    released = (Step.objects.filter(run__in=[pk for pk, _, _ in answers.values()], status=Step.RELEASED)
                .order_by("run_id", "index")
                .values_list("run_id", "index", "title", "content", "badge", "warnings", "unsourced")
                if answers else ())
    for run_id, index, title, content, badge, warnings, unsourced in released:
        flagged = tuple(u["text"] for u in unsourced or () if isinstance(u, dict) and u.get("text"))
        steps[run_id].append(ReleasedStep(index, title, content or "", badge or "", tuple(warnings or ()), flagged))
    history: list[HistoryMessage] = []
    for message_id, text in earlier:
        history.append(HistoryMessage("user", text))
        answer = answers.get(message_id)
        if answer is not None:
            pk, summary, status = answer
            history.append(HistoryMessage.answer(tuple(steps[pk]), summary or "", status))
    return tuple(history)


def _fit_history(base: Context, budget: int) -> tuple[Context, int]:
    """Memories always stay; the conversation loses its oldest turns only if it overflows alone, and
    never the latest document a run released (a follow-up revises it)."""
    room = budget - _tokens(replace(base, history=()))
    history = list(base.history)
    latest = max((n for n, m in enumerate(history) if m.role == "assistant" and m.document), default=None)
    kept = [True] * len(history)
    costs = [estimate_tokens(f"[{m.role}] {m.text}\n\n") for m in history]
    total, dropped = sum(costs), 0
    for n in range(len(history)):
        if total <= room:
            break
        if n == latest:
            continue
        kept[n] = False
        total -= costs[n]
        dropped += 1
    return replace(base, history=tuple(m for m, keep in zip(history, kept) if keep)), dropped


def _documents_in_scope(run) -> dict[int, _Doc]:
    """The workspace's files and this conversation's uploads that have been read, with their
    chunks' sizes (no text). A file still being read, or that could not be, is not in scope."""
    found = (documents_query(run.workspace_id, run.conversation_id) if run.conversation_id else
             Document.objects.filter(conversation__isnull=True, workspace_id=run.workspace_id, status=Document.READY)
             .values_list("id", "name", "sha256", "conversation_id"))
    docs = {pk: _Doc(pk, name, sha, conv is not None) for pk, name, sha, conv in found}
    if not docs:  # building the chunks' query costs more than the answer to an empty one
        return docs
    rows = (DocumentChunk.objects.filter(document__in=list(docs)).order_by()
            .values_list("id", "document_id", "ordinal", "tokens") if len(docs) < 5000 else
            DocumentChunk.objects.filter(document__workspace_id=run.workspace_id)
            .values_list("id", "document_id", "ordinal", "tokens"))
    for pk, doc_id, ordinal, tokens in rows:
        if doc_id in docs:
            docs[doc_id].chunks.append((ordinal, pk, tokens))
    for doc in docs.values():
        doc.chunks.sort()
    return docs


def _choose_chunks(run, docs: dict[int, _Doc], room: int) -> tuple[set[int], dict[int, list[int]]]:
    """Chunk ids to render, and per document the chunk ids left out."""
    cost = {pk: tokens + 1 for doc in docs.values() for _, pk, tokens in doc.chunks}
    everything = sum(cost.values()) + sum(doc.header_tokens() for doc in docs.values() if doc.chunks)
    if everything <= room:
        return set(cost), {}
    room -= NOTES_RESERVE
    owner = {pk: doc for doc in docs.values() for _, pk, _ in doc.chunks}
    ranked = [pk for pk in ranked_chunk_ids(run.task, run.workspace_id, run.conversation_id) if pk in owner]
    in_rank = set(ranked)
    in_order = [pk for doc in sorted(docs.values(), key=lambda d: (d.name, d.sha256))
                for _, pk, _ in doc.chunks if pk not in in_rank]
    # Uploads first: the user attached them to this very conversation.
    queue = ([pk for pk in ranked if owner[pk].upload] + [pk for pk in in_order if owner[pk].upload]
             + [pk for pk in ranked if not owner[pk].upload] + [pk for pk in in_order if not owner[pk].upload])
    chosen: set[int] = set()
    for pk in queue:
        price = cost[pk] + owner[pk].header_tokens()  # an excerpt is a section of its own
        if price <= room:
            chosen.add(pk)
            room -= price
    left_out: dict[int, list[int]] = defaultdict(list)
    for pk, doc in owner.items():
        if pk not in chosen:
            left_out[doc.id].append(pk)
    return chosen, dict(left_out)


def _render_documents(docs: dict[int, _Doc], chosen: set[int]):
    texts = dict(DocumentChunk.objects.filter(id__in=chosen).values_list("id", "text")) if chosen else {}
    files: list[ContextDocument] = []
    uploads: list[ContextDocument] = []
    for doc in sorted(docs.values(), key=lambda d: (d.name, d.sha256)):
        kept = [(ordinal, pk) for ordinal, pk, _ in doc.chunks if pk in chosen]
        if not kept:
            continue
        kind = "upload" if doc.upload else "file"
        if len(kept) == len(doc.chunks):
            items = [ContextDocument(doc.name, "\n\n".join(texts[pk] for _, pk in kept), doc.sha256, kind)]
        else:
            # Each excerpt is its own section, named by its place in the document: the same part
            # renders the same bytes whatever task chose it, so it is stored once across runs.
            items = [ContextDocument(f"{doc.name} (part {ordinal + 1} of {len(doc.chunks)})", texts[pk],
                                     doc.sha256, kind) for ordinal, pk in kept]
        (uploads if doc.upload else files).extend(items)
    return tuple(files), tuple(uploads)


def enabled_imported_packs(workspace, imported: dict[str, Pack] | None = None) -> list[Pack]:
    """The catalogues this workspace imported and enabled: its citations of them get the same
    mechanical checks as the shipped frameworks'. `imported`: as for `assemble_context`."""
    enabled = set(workspace.enabled_frameworks or [])
    imported = imported_packs() if imported is None else imported
    return [pack for key, pack in imported.items() if key in enabled]
