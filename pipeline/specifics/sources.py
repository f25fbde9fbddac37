"""What the executor was given, as sources a specific can come from, and their index.

The sources are the parts of the executor's request that carry facts: the run's context (the
workspace's memories, its files and this conversation's uploads, the evidence of web research,
the conversation, the framework reference) and the brief. Not the prompts' own wording, and not,
on a re-render, the executor's failed draft or the verifier's issues about it: those are the
executor's own words coming back, never a source.

Each source is indexed once per run: its specifics, read liberally, give keys; a key maps to the
places that state it. A specific of a draft is then a few dictionary look-ups, and an organisation
or an address a search of the folded text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.context import Context
from pipeline.schemas import Brief

from .extract import find_specifics
from .found import ORGANISATION, Specific, fold

MEMORY, FILE, EVIDENCE, CONVERSATION, FRAMEWORK, BRIEF = "memory", "file", "evidence", "conversation", "framework", "brief"
SOURCE_KINDS = (MEMORY, FILE, EVIDENCE, CONVERSATION, FRAMEWORK, BRIEF)
#: The passage quoted for a source: the line that states the specific, cut to about this length.
PASSAGE_CHARS = 320


@dataclass(frozen=True)
class Source:
    """One part of what the executor was given: `kind` (SOURCE_KINDS), `ref` (which memory, file,
    evidence item, turn of the conversation, framework entry or part of the brief) and its text."""

    kind: str
    ref: str
    text: str
    #: Keys this source does not state although its text does: an earlier answer's own unsourced
    #: specifics (model output is never its own source).
    excluded: frozenset = frozenset()


def _unsourced_keys(texts: tuple[str, ...]) -> frozenset:
    return frozenset(key for text in texts for s in find_specifics(text) for key in s.keys)


def context_sources(ctx: Context, brief: Brief | None) -> list[Source]:
    """The sources of an executor call, in the order a reader is best pointed to: where a fact was
    first given (memories, files, evidence, what members wrote) before where it was restated (the
    brief, the framework reference), and an earlier answer of Beyond's own last."""
    out = [Source(MEMORY, f"memory {n}", text) for n, text in enumerate(ctx.memories, 1)]
    out += [Source(FILE, doc.name, doc.text) for doc in ctx.files]
    out += [Source(FILE, f"{doc.name} (uploaded to this conversation)", doc.text) for doc in ctx.uploads]
    out += [Source(EVIDENCE, f"{item.id}: {item.title or item.url}", item.text) for item in ctx.evidence]
    out.append(Source(CONVERSATION, "the task", ctx.task))
    turns = [m for m in ctx.history if m.role == "user"]
    out += [Source(CONVERSATION, f"message {n} of the conversation", m.text) for n, m in enumerate(turns, 1)]
    if ctx.workspace_name:
        out.append(Source(MEMORY, "the workspace's name", ctx.workspace_name))
    if brief is not None:
        out.append(Source(BRIEF, "the brief's task", brief.task))
        out += [Source(BRIEF, f"judgment {n} of the brief", j) for n, j in enumerate(brief.judgments, 1)]
        out += [Source(BRIEF, f"citation {c.id} of the brief", " ".join(x for x in (c.framework, c.ref, c.title, c.text) if x))
                for c in brief.citations]
        out += [Source(BRIEF, f"step {s.index} of the brief", f"{s.title}: {s.content_spec}") for s in brief.steps]
        out += [Source(BRIEF, f"evidence {e.id} of the brief", e.title) for e in brief.evidence or [] if e.title]
    out += [Source(FRAMEWORK, f"{e.framework} {e.ref}", e.title) for e in ctx.frameworks]
    answers = [m for m in ctx.history if m.role == "assistant"]
    for n, answer in enumerate(answers, 1):
        for step in answer.document:
            out.append(Source(CONVERSATION, f"an earlier answer of this conversation ({n}), step {step.index}: "
                                            f"{step.title}", step.content, _unsourced_keys(step.unsourced)))
        if answer.recap:  # a recap repeats its steps: what they stated unsourced, it does not source
            flagged = frozenset(key for step in answer.document for key in _unsourced_keys(step.unsourced))
            out.append(Source(CONVERSATION, f"an earlier answer of this conversation ({n}), its recap", answer.recap,
                              flagged))
    return [s for s in out if s.text and s.text.strip()]


@dataclass(frozen=True)
class Place:
    source: int  # index into SourceIndex.sources
    start: int
    end: int


#: A source's specifics are remembered by its text, across runs, up to this many characters of
#: text: a workspace's memories, files and framework references, which every run of the workspace
#: is given again, are read once in a process rather than once a run.
REMEMBERED_CHARS = 4_000_000
_remembered: dict[str, tuple[Specific, ...]] = {}
_remembered_chars = 0


def source_specifics(text: str) -> tuple[Specific, ...]:
    """`find_specifics(text, source=True)`, remembered (a pure function of the text)."""
    global _remembered_chars
    found = _remembered.get(text)
    if found is None:
        found = tuple(find_specifics(text, source=True))
        if len(text) <= REMEMBERED_CHARS:
            if _remembered_chars + len(text) > REMEMBERED_CHARS:
                _remembered.clear()
                _remembered_chars = 0
            _remembered[text] = found
            _remembered_chars += len(text)
    return found


class SourceIndex:
    """The keys every source states, and where."""

    #: Places kept per key: the first is the one shown; a few more cost nothing and help a reader.
    PLACES_PER_KEY = 3

    def __init__(self, sources: list[Source]):
        self.sources = sources
        self.keys: dict[tuple, list[Place]] = {}
        self._folded: list[str] | None = None
        self._words: set[str] = set()
        for n, source in enumerate(sources):
            for specific in source_specifics(source.text):
                for key in specific.keys:
                    if key in source.excluded:
                        continue
                    places = self.keys.setdefault(key, [])
                    if len(places) < self.PLACES_PER_KEY:
                        places.append(Place(n, *specific.span))

    @classmethod
    def of(cls, ctx: Context, brief: Brief | None) -> SourceIndex:
        return cls(context_sources(ctx, brief))

    def folded(self) -> list[str]:
        """Each source's text folded (pipeline/specifics/found.py), made on the first search."""
        if self._folded is None:
            self._folded = [fold(s.text) for s in self.sources]
            self._words = {word for text in self._folded for word in text.split()}
        return self._folded

    def find(self, specific: Specific) -> Place | None:
        """The first place that states `specific`, or None: it is unsourced."""
        places = [p for key in specific.keys for p in self.keys.get(key, ())]
        if places:
            return min(places, key=lambda p: (p.source, p.start))
        if specific.kind == ORGANISATION:  # a source may name it without its legal form ("Acme")
            return self._search(specific.keys[0][1])
        return None

    def _search(self, words: str) -> Place | None:
        texts = self.folded()
        if not words or not self._words.issuperset(words.split(" ")):
            return None  # a word no source holds: no need to read them
        pattern = re.compile(r"(?<![a-z0-9])" + r"[^a-z0-9]+".join(map(re.escape, words.split(" "))) + r"(?![a-z0-9])")
        for n, text in enumerate(texts):
            m = pattern.search(text)
            if m:
                return Place(n, *m.span())
        return None

    def passage(self, place: Place) -> str:
        """The line of the source that states the specific, cut around it when it is long."""
        text = self.sources[place.source].text
        start = text.rfind("\n", 0, place.start) + 1
        end = text.find("\n", place.end)
        end = len(text) if end < 0 else end
        if end - start > PASSAGE_CHARS:
            half = (PASSAGE_CHARS - (place.end - place.start)) // 2
            cut_start, cut_end = max(start, place.start - half), min(end, place.end + half)
            return ("…" if cut_start > start else "") + text[cut_start:cut_end].strip() + ("…" if cut_end < end else "")
        return text[start:end].strip()


__all__ = ["Source", "SourceIndex", "Place", "context_sources", "SOURCE_KINDS"]
