"""What the task asks for that no template writes: each point it names (an item of a list, a name,
a value, a quoted phrase), set out in a section of its own with the task's words and what the
workspace's memories and documents say about it, or marked to be confirmed when they say nothing.

The planner finds these points (tracing.py) and names them in the step's content spec; the
executor writes the section from that spec, so the two never disagree on what it holds.
"""
from __future__ import annotations

import re

from pipeline.requirements.words import content_words
from pipeline.schemas import StepPlan
from pipeline.words import stem

from .templates import TBC
from .knowledge import memory_statements
from .reading import Reading, Statement

#: How an asks step's content spec opens: the executor tells the step by it.
MARK = "Set out what the task asks for on each of these points"
_POINT = re.compile(r"“([^”]{1,300})”")
#: Statements shown under one point at most.
_PER_POINT = 4
#: Words too common in a workspace's sentences to tie one of them to a point.
_COMMON = frozenset(stem(w) for w in "data information security staff use policy process system service "
                                     "company organisation business team our all new".split())


def asks_spec(points: list[str]) -> str:
    return f"{MARK}, with what the workspace says about each: " + "; ".join(f"“{p}”" for p in points) + "."


def is_asks_step(step: StepPlan) -> bool:
    return step.content_spec.startswith(MARK)


def asks_title(points: list[str]) -> str:
    """The section's title: the points themselves when they are short, as a reader would name it."""
    names = [_capitalised(p) if n == 0 else p for n, p in enumerate(points)]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return joined if len(joined) <= 80 else "Further points the task names"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def related(reading: Reading, point: str) -> list[Statement]:
    """The workspace's statements about `point`: those that name its last word (its head noun) and
    at least half of its other words, memories first."""
    words = [stem(w) for w in content_words(point)]
    distinctive = [w for w in words if w not in _COMMON] or words
    if not distinctive:
        return []
    head, need = distinctive[-1], (len(distinctive) + 1) // 2
    out: list[Statement] = []
    for statement in memory_statements(reading) + list(reading.statements):
        have = statement.words
        if head in have and sum(w in have for w in distinctive) >= need and \
                not any(statement.text == o.text for o in out):
            out.append(statement)
    return out[:_PER_POINT]


def asks_blocks(reading: Reading, spec: str) -> list[str]:
    """The section's Markdown: per point, its heading and what the workspace says about it."""
    blocks = ["The task names these points; each is set out below with what the workspace's memories and "
              "documents say about it."]
    for point in _POINT.findall(spec):
        found = related(reading, point)
        lines = [f"- {s.text.rstrip('.')}. ({s.source})" for s in found] or [
            f"- What {reading.org or 'the organisation'} does on this is {TBC}: the workspace's memories and "
            "files say nothing about it."]
        blocks.append(f"### {_capitalised(point)}\n\n" + "\n".join(lines))
    return blocks
