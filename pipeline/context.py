"""The context the planner and executors see, as plain data.

The web app assembles it (within the model's budget); the core only renders it. The
rendering is deterministic and sorted, with no timestamps or database ids, so the long stable part
of every executor prompt is byte-identical across a run and providers' prompt caches hit.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.screening import speaks_to_a_model


@dataclass(frozen=True)
class ReleasedStep:
    """One step of a document an earlier run of the conversation released."""

    index: int
    title: str
    content: str
    badge: str = ""
    warnings: tuple[str, ...] = ()
    #: The specifics that run found in none of its executor's sources: model output is never its
    #: own source, so a later run does not count them as sourced by this step.
    unsourced: tuple[str, ...] = ()


@dataclass(frozen=True)
class HistoryMessage:
    """One earlier turn of the conversation: what a member asked ("user"), or what the run that
    answered released ("assistant": its document, step by step, and its recap)."""

    role: str  # "user" or "assistant"
    text: str
    document: tuple[ReleasedStep, ...] = ()
    recap: str = ""
    status: str = ""  # the earlier run's status, for an assistant turn

    @classmethod
    def answer(cls, document: tuple[ReleasedStep, ...], recap: str, status: str) -> HistoryMessage:
        """An earlier run's answer, its text rendered from the document it released."""
        return cls("assistant", released_document_text(document, recap, status), document, recap, status)


def released_document_text(document: tuple[ReleasedStep, ...], recap: str, status: str) -> str:
    """How an earlier run's answer reads in the conversation: every released step, its badge and
    warnings, then the recap, so a follow-up can revise the document itself."""
    if not document:
        return f"(This run ended {status} and released no step.)" + (f" {recap.strip()}" if recap else "")
    lines = [f"The document this run released ({status}):"]
    for step in document:
        badge = f" [badge: {step.badge}]" if step.badge else ""
        lines.append(f"\n## {step.index}. {step.title}{badge}\n{step.content.strip()}")
        lines += [f"(Warning: {w})" for w in step.warnings]
    if recap:
        lines.append(f"\nRecap: {recap.strip()}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Document:
    """A workspace file, a conversation upload or a chunk of one."""

    name: str
    text: str
    sha256: str = ""
    kind: str = "file"  # "file" or "upload"


@dataclass(frozen=True)
class FrameworkEntry:
    framework: str
    ref: str
    title: str
    kind: str = ""


@dataclass(frozen=True)
class Evidence:
    """A page found by web research, as the planner and executors read it. The verifier never
    sees it: only the brief's approved list of ids, URLs and titles reaches the verifier."""

    id: str       # "E1"
    url: str      # the address the page was read from, after redirects
    title: str
    text: str


@dataclass(frozen=True)
class Context:
    task: str
    history: tuple[HistoryMessage, ...] = ()
    memories: tuple[str, ...] = ()
    files: tuple[Document, ...] = ()
    uploads: tuple[Document, ...] = ()
    frameworks: tuple[FrameworkEntry, ...] = ()
    #: Frameworks the workspace has enabled (display names); the planner cites only from these.
    enabled_frameworks: tuple[str, ...] = ()
    workspace_name: str = ""
    #: Usable pages of this run's web research, in id order; empty when the run did none.
    evidence: tuple[Evidence, ...] = ()
    notes: tuple[str, ...] = field(default=())  # e.g. "3 documents left out to fit the budget"
    #: Files of the workspace or conversation still being read when the run started (not in it).
    unread_files: tuple[str, ...] = ()


def render_context(ctx: Context) -> str:
    """The stable context block shared by the planner and every executor call of a run."""
    parts: list[str] = []
    if ctx.workspace_name:
        parts.append(f"# Workspace\n{ctx.workspace_name}")
    if ctx.memories:
        parts.append("# Workspace memories\n" + "\n".join(f"- {m}" for m in ctx.memories))
    if ctx.history:
        lines = [f"[{m.role}] {m.text}" for m in ctx.history]
        parts.append("# Conversation so far\n" + "\n\n".join(lines))
    for title, docs in (("Workspace file", ctx.files), ("Uploaded document", ctx.uploads)):
        for doc in docs:
            parts.append(f"# {title}: {doc.name}\n{doc.text}")
    for item in ctx.evidence:
        title = "" if speaks_to_a_model(item.title or "") else item.title
        parts.append(f"# Evidence {item.id}: {title or 'untitled'} ({item.url})\n{item.text}")
    if ctx.frameworks:
        lines = [f"- {e.framework} {e.ref}: {e.title}" for e in ctx.frameworks]
        parts.append("# Framework reference (ids and short titles)\n" + "\n".join(lines))
    if ctx.enabled_frameworks:
        parts.append("# Enabled frameworks\n" + "\n".join(f"- {f}" for f in ctx.enabled_frameworks))
    if ctx.notes:
        parts.append("# Context notes\n" + "\n".join(f"- {n}" for n in ctx.notes))
    return "\n\n".join(parts)
