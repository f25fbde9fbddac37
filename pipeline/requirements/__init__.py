"""Task fidelity: the requirement trace (docs/verifier-contract.md, "The requirement trace").

The blind verifier holds each draft to the brief; this layer holds the brief and the document to
the task, mechanically and for every engine. Plain Python, no Django. Entry points: `read_asks(task)`,
`check_brief(task, brief)` before any step, `trace(brief, check, released)` after release, and
`coverage_line(traced)` for what the card, the recap and the exports say.
"""
from __future__ import annotations

from pipeline import events as ev
from pipeline.schemas import Brief, Requirement

from .asks import DELIVERABLE, DOCUMENT, LABELS, Ask, read_asks
from .trace import (DECLINED, DROPPED, MET, UNMET, BriefCheck, Traced, check_brief, coverage, coverage_line,
                    send_back_note, trace, unplanned)


def unplanned_trace(asks: list[Ask], status: str, why: str):
    """The requirements_traced event of a run that planned nothing: every ask `status`, for `why`."""
    traced = unplanned(asks, status, why)
    return ev.RequirementsTraced(requirements=[t.as_json() for t in traced], coverage=coverage(traced),
                                 gaps=coverage_line(traced))

def instruction_requirement(brief: Brief, check: BriefCheck, instruction: str,
                            step: int) -> list[tuple[Requirement, list[Ask]]]:
    """A redo instruction's own asks, as one more requirement of the step it redoes (none when it
    asks for nothing the trace can hold a step to)."""
    asked = [a for a in read_asks(instruction) if a.kind not in (DOCUMENT, DELIVERABLE)]
    if not asked:
        return []
    number = max([int(r.id[1:]) for r in brief.requirements or [] if r.id[1:].isdigit()], default=0) + 1
    number += len(check.missing)
    return [(Requirement(id=f"R{number}", text=instruction[:500], steps=[step]), asked)]


__all__ = ["instruction_requirement", "DOCUMENT", "DELIVERABLE", "Ask", "read_asks", "LABELS", "BriefCheck", "Traced", "check_brief", "trace", "coverage", "coverage_line",
           "send_back_note", "unplanned", "unplanned_trace", "MET", "UNMET", "DECLINED", "DROPPED"]
