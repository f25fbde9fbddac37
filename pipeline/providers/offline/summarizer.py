"""The offline summarizer: a short, factual recap of a finished run, labelled as offline output."""
from __future__ import annotations

import re

from pipeline import badges as badge_words
from pipeline.citations import check_recap
from pipeline.schemas import Brief

from .templates import TBC
from .revision import is_revision

#: An open point is the marker standing where a value would, not the sentence that explains it
#: ("...are marked to be confirmed").
_OPEN_POINT = re.compile(rf"(?<!marked ){re.escape(TBC)}", re.IGNORECASE)


def open_points(content: str) -> int:
    return len(_OPEN_POINT.findall(content))


#: How a brief states what part of a requested set (controls, questions, rows) the document covers.
COVERAGE = "Coverage: "


def _responds_to(brief: Brief) -> str:
    """The recap's first line. The task is echoed only when every reference it writes is one the
    brief approves: a recap never cites what the brief did not (a task asking for "A.5.1-A.5.37"
    of which the brief approved part would otherwise cite the rest)."""
    if is_revision(brief):  # a follow-up: the document is the earlier one, changed as asked
        line = f"- This document revises the one released earlier in this conversation, as asked: {brief.task.strip()}"
        fallback = "- This document revises the one released earlier in this conversation, as asked."
    else:
        line = f"- This document responds to: {brief.task.strip()}"
        fallback = "- This document responds to the task above."
    return fallback if check_recap(brief, line) else line


def recap(brief: Brief, released: list[dict]) -> str:
    """3-7 bullet lines: coverage, steps and badges, frameworks cited, open points, provenance."""
    if brief.declined:
        return f"- Declined, nothing released: {brief.decline_reason}"
    lines = [_responds_to(brief)]
    lines += [f"- {j}" for j in brief.judgments if j.startswith(COVERAGE)]
    counts: dict[str, int] = {}
    for step in released:
        counts[step["badge"]] = counts.get(step["badge"], 0) + 1
    badges = ", ".join(f"{n} {badge_words.phrase(b)}" for b, n in counts.items())
    lines.append(f"- {len(released)} of {len(brief.steps)} steps released ({badges or 'none'}).")
    review = [f"step {s['index']} ({s['title']})" for s in released if s["badge"] == badge_words.WARNING]
    if review:
        lines.append("- Needs human review: " + "; ".join(review)
                     + " (released with a warning after two inspections).")
    content = "\n".join(s.get("content") or "" for s in released)
    used = [c for c in brief.citations if c.ref in content]
    frameworks = list(dict.fromkeys(c.framework for c in used))
    lines.append(f"- Frameworks cited: {', '.join(frameworks)} ({len(used)} references)." if frameworks
                 else "- No framework reference is cited in the released steps.")
    lines.append(_open_points_line(released))
    lines.append("- Produced by Beyond's offline engine (deterministic templates, no language model); "
                 "review it as a first draft.")
    return "\n".join(lines)


def _open_points_line(released: list[dict]) -> str:
    """How many open points the document has, and where: the open-points section lists what the
    brief left open, while a register's example rows or a section's unknowns are marked where they
    stand, so the count alone would not match that list."""
    where = [(s["title"], open_points(s.get("content") or "")) for s in released]
    where = [(title, n) for title, n in where if n]
    total = sum(n for _, n in where)
    if not total:
        return f'- Open points marked "{TBC}": none.'
    places = ", ".join(f"{n} in {title}" for title, n in where)
    return f'- Open points marked "{TBC}": {total} ({places}); settle them before approval.'
