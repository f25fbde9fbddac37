"""Reading the context: document type, organisation name, scope, audience, relevant facts and quotes.

Every function is deterministic, and user-supplied text that could be read as a framework citation
is never returned for quoting (the engine may cite only the brief's approved set).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.context import Context

from .doctypes import DOC_TYPES, GENERIC, TBC
from .templates import DocType
from pipeline.words import overlap

from .text import clip, looks_like_citation, sentences

_NOT_A_NAME = {"We", "Our", "The", "This", "It", "They", "All", "Staff", "Customers", "Most", "Some", "There", "Its"}
_NAME = r"([A-Z][\w&'\-]*(?:\s+(?:[A-Z][\w&'\-]*|&|of|and))*)"
_NAMED = re.compile(r"^(?:our\s+)?(?:company|organi[sz]ation|business|employer)(?:'s)?\s+(?:name\s+)?(?:is|:)\s+"
                    r"(?:called\s+|named\s+)?" + _NAME, re.IGNORECASE)
_SUBJECT = re.compile(r"^" + _NAME + r"\s+(?:is|are|was|has|operates|employs|provides|sells|runs|builds|makes)\b")
_TASK_SCOPE = re.compile(r"\b(?:for|covering|across|within)\s+(our|the)\s+([^.,;:!?]{3,80})", re.IGNORECASE)
_AUDIENCES = (("board", "the board"), ("all staff", "all staff"), ("employees", "all staff"), ("staff", "all staff"),
              ("customers", "customers"), ("auditor", "the auditors"), ("management", "management"),
              ("suppliers", "suppliers"), ("vendors", "suppliers"), ("developers", "developers"),
              ("it team", "the IT team"), ("new joiners", "new joiners"))
_LEADING_VERBS = re.compile(r"^(?:please\s+)?(?:draft|write|prepare|create|produce|make|build|give me|we need)\s+"
                            r"(?:me\s+)?(?:an?\s+|the\s+|our\s+)?", re.IGNORECASE)


def _phrase(phrase: str) -> re.Pattern:
    """`phrase` as a whole word or words of a lower-cased text."""
    return re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])")


def _normal(text: str) -> str:
    return re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text.lower())


# The document types' keywords and the audience words, normalised and compiled once rather than
# on every classification (the executor classifies the task again for each step).
_KEYWORDS = {doc.key: tuple((_phrase(_normal(phrase)), weight) for phrase, weight in doc.keywords.items())
             for doc in DOC_TYPES}
_AUDIENCE_PATTERNS = tuple((_phrase(word), audience) for word, audience in _AUDIENCES)


def _score(doc: DocType, task: str) -> int:
    return sum(weight for pattern, weight in _KEYWORDS[doc.key] if pattern.search(task))


def classify(task: str) -> tuple[DocType, DocType | None]:
    """The document type a task asks for and, for emails, training and generic documents, its subject."""
    text = _normal(task)
    scored = [(_score(d, text), -i, d) for i, d in enumerate(DOC_TYPES)]
    best = max(scored, key=lambda s: (s[0], s[1]))
    doc = best[2] if best[0] > 0 else GENERIC
    if not doc.has_subject:
        return doc, None
    others = [s for s in scored if s[0] > 0 and not s[2].has_subject and s[2] is not doc]
    subject = max(others, key=lambda s: (s[0], s[1]))[2] if others else None
    return doc, subject


def org_name(ctx: Context) -> str:
    """The organisation's name from the memories, else the workspace name, else a neutral phrase."""
    for memory in ctx.memories:
        for pattern in (_NAMED, _SUBJECT):
            match = pattern.match(memory.strip())
            if match:
                name = match.group(1).strip().rstrip(".")
                if name.split()[0] not in _NOT_A_NAME and not looks_like_citation(name):
                    return name
    return ctx.workspace_name.strip() or "the organisation"


def scope_of(ctx: Context) -> tuple[str, str | None]:
    """(scope phrase for the document, where it came from) or a to-be-confirmed phrase and None."""
    match = _TASK_SCOPE.search(ctx.task)
    if match and not looks_like_citation(match.group(2)):
        return "the " + match.group(2).strip(), "the task"
    for memory in ctx.memories:
        if "scope" in memory.lower() and not looks_like_citation(memory):
            return f'the scope recorded in the workspace memory "{clip(memory, 160)}"', "a workspace memory"
    return f"all information, systems and locations of {org_name(ctx)} (exact boundaries {TBC})", None


def audience_of(task: str, doc: DocType) -> str:
    """Who the document is for: named in the task, else the document type's usual readers."""
    text = task.lower()
    for pattern, audience in _AUDIENCE_PATTERNS:
        if pattern.search(text):
            return audience
    return doc.audience


def subject_of(task: str, doc: DocType, subject: DocType | None) -> str:
    """What an email, training plan or generic document is about, in a few words."""
    if subject is not None:
        return subject.name
    topic = _LEADING_VERBS.sub("", task.strip()).rstrip(".!? ")
    if doc.key != "generic":
        return "information security"
    if not topic or looks_like_citation(topic):
        return "the requested topic"
    return clip(topic[0].upper() + topic[1:], 80)


@dataclass(frozen=True)
class Quote:
    source: str
    text: str


def relevant_quotes(ctx: Context, query: str, limit: int = 2) -> list[Quote]:
    """Short sentences from files and uploads that share at least two words with `query`."""
    found = []
    for d, doc in enumerate(ctx.uploads + ctx.files):
        source = doc.name if doc.name and not looks_like_citation(doc.name) else "a workspace document"
        for s, sentence in enumerate(sentences(doc.text)):
            if len(sentence) < 25 or looks_like_citation(sentence):
                continue
            score = overlap(sentence, query)
            if score >= 2:
                found.append((-score, d, s, Quote(source, clip(sentence, 240))))
    found.sort(key=lambda f: f[:3])
    quotes: list[Quote] = []
    for *_, quote in found:
        if quote not in quotes and sum(q.source == quote.source for q in quotes) < 1 + (limit > 2):
            quotes.append(quote)
    return quotes[:limit]


def context_text(ctx: Context) -> str:
    """Everything the context says, lower-cased, for checking whether a point is covered."""
    parts = [ctx.task, *ctx.memories, *(m.text for m in ctx.history), *(d.text for d in ctx.files + ctx.uploads)]
    return "\n".join(parts).lower()
