"""Follow-ups that change the document an earlier run of the conversation released.

"Add a section on remote work" to a released policy asks for the policy again, revised, not for a
new document about adding a section. The offline engine revises the way it can without a model:
every earlier step is carried over word for word (and inspected again like any other draft), a
section asked for is added and a section asked out is dropped. A change it cannot make (rewording,
shortening, translating existing text) is declined by the planner (declining.py): the document is
left as it was rather than carried over under a note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.citations import extract_citations
from pipeline.context import Context, ReleasedStep
from pipeline.frameworks import load_packs
from pipeline.schemas import Brief, Citation, StepPlan
from pipeline.words import topic_words

from .citing import as_citations, explicit_picks
from .templates import TBC
from .fields import Fill
from .reading import Reading
from .sections import practice_blocks

_EDIT = re.compile(r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:also\s+)?"
                   r"(?P<verb>add|include|insert|append|remove|delete|drop|cut|take out|change|replace|revise|update|"
                   r"rewrite|reword|rename|shorten|expand|extend|fix|correct|make)\b", re.I)
_ADDED = re.compile(r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:also\s+)?(?:add|include|insert|append)\s+"
                    r"(?:(?:a|an|one|another|the)\s+)?(?:new\s+|short\s+|separate\s+)*"
                    r"(?:section|part|paragraph|chapter|step|subsection)?\s*"
                    r"(?:on|about|covering|for|describing|that covers|explaining|dealing with)?\s*(?P<topic>.+)$",
                    re.I | re.S)
_REMOVED = re.compile(r"^\s*(?:please\s+)?(?:remove|delete|drop|cut|take out)\s+(?:the\s+)?"
                      r"(?:section|part|paragraph|chapter|step)?\s*(?:on|about|called|titled|named)?\s*(?P<topic>.+)$",
                      re.I | re.S)
_TAIL = re.compile(r"\s+(?:to|in|into|from)\s+(?:the|this|our|that)\s+(?:document|policy|procedure|register|"
                   r"plan|draft|text|email|letter|report|record)\b.*$|[.!?;:]+\s*$", re.I | re.S)
CARRIED = "Carry over, word for word, step {index} of the document released earlier in this conversation"
#: How a revision's brief opens (its first judgment): the executor and the recap tell a revision by it.
REVISES = "This run revises the document released earlier in this conversation"
#: Titles of the sections that close a document (open points, review, approval, sign-off, lessons
#: learned): a section a follow-up adds goes in before them, not after.
_CLOSING = re.compile(r"\b(?:open points|next steps|review|approval|sign-off|conclusion|lessons learned|maintenance|"
                      r"document control)\b", re.I)


@dataclass(frozen=True)
class Revision:
    previous: tuple[ReleasedStep, ...]
    verb: str
    added: str | None = None  # the topic of a section to add
    removed: tuple[int, ...] = ()  # earlier steps to leave out

    @property
    def applied(self) -> bool:
        """Whether the offline engine can make this change (add or remove a section)."""
        return self.added is not None or bool(self.removed)


def latest_document(ctx: Context) -> tuple[ReleasedStep, ...]:
    for message in reversed(ctx.history):
        if message.role == "assistant" and message.document:
            return message.document
    return ()


def _topic(match: re.Match | None) -> str | None:
    if match is None:
        return None
    topic = _TAIL.sub("", " ".join(match.group("topic").split())).strip(" .,;:'\"")
    return topic[:120] or None


def revision_of(ctx: Context) -> Revision | None:
    """The change `ctx.task` asks of the conversation's latest released document, if it asks one."""
    previous = latest_document(ctx)
    edit = _EDIT.match(ctx.task)
    if not previous or edit is None:
        return None
    verb = edit.group("verb").lower()
    added = _topic(_ADDED.match(ctx.task))
    removed: tuple[int, ...] = ()
    gone = _topic(_REMOVED.match(ctx.task))
    if gone:
        wanted = set(topic_words(gone))
        removed = tuple(s.index for s in previous if wanted and wanted <= set(topic_words(s.title)))
    return Revision(previous, verb, added, removed)


def carried_index(step: StepPlan) -> int | None:
    """The earlier step a revision step carries over, from its content spec."""
    found = re.match(CARRIED.replace("{index}", r"(\d+)"), step.content_spec)
    return int(found.group(1)) if found else None


def revise(ctx: Context, revision: Revision, org: str) -> Brief:
    """The brief of the revised document: the earlier steps carried over (citations approved as they
    are written there), the section asked for added, the sections asked out left out."""
    kept = [s for s in revision.previous if s.index not in revision.removed]
    plan = [(s.title, CARRIED.format(index=s.index) + f' ("{s.title}").') for s in kept]  # (title, content spec)
    if revision.added:
        at = len(plan)
        while at > 0 and _CLOSING.search(plan[at - 1][0]):
            at -= 1  # before the sections that end the document
        plan.insert(at, (revision.added[:1].upper() + revision.added[1:],
                         f"A new section on {revision.added} for {org}, written to fit the document it joins; "
                         "facts only from the workspace."))
    steps = [StepPlan(index=n, title=title, content_spec=spec) for n, (title, spec) in enumerate(plan, 1)]
    judgments = [f"{REVISES} ({len(revision.previous)} "
                 "steps): the steps kept are carried over word for word and inspected again."]
    if revision.added:
        judgments.append(f"One section is added, on {revision.added}.")
    if revision.removed:
        judgments.append("Left out as asked: " + ", ".join(
            f'step {s.index} ("{s.title}")' for s in revision.previous if s.index in revision.removed) + ".")
    return Brief(task=ctx.task.strip()[:2000], judgments=judgments,
                 citations=_carried_citations("\n\n".join(s.content for s in kept)), steps=steps)


def is_revision(brief: Brief) -> bool:
    return bool(brief.judgments) and brief.judgments[0].startswith(REVISES)


def _carried_citations(text: str) -> list[Citation]:
    """The citations the carried-over text makes, approved as the catalogues write them, so that
    what passed before passes again and nothing is approved that the text does not cite."""
    picks, _ = explicit_picks(tuple(extract_citations(text)), list(load_packs().values()))
    return as_citations(picks)


def compose_revision_step(ctx: Context, reading: Reading, brief: Brief, step: StepPlan, fields: Fill) -> str | None:
    """The Markdown of a revision step, or None when `step` is not one (the normal composer runs)."""
    previous = {s.index: s for s in latest_document(ctx)}
    index = carried_index(step)
    if index is not None and index in previous:
        return previous[index].content.strip() + "\n"
    if not previous or not is_revision(brief):
        return None
    topic = step.title[:1].lower() + step.title[1:]
    blocks = [f"## {step.title}",
              f"This section sets out how {fields['org']} handles {topic}, within the scope of this document: "
              f"{fields['scope']}.",
              *practice_blocks(reading, topic),
              f"What the workspace does not record about {topic} (who approves it, how it is checked, when it is "
              f"reviewed) is {TBC}."]
    return "\n\n".join(blocks) + "\n"
