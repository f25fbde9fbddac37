"""Task fidelity: the requirement trace (docs/verifier-contract.md, "The requirement trace").

The blind verifier holds each draft to the brief; this layer holds the brief and the document to
the task, mechanically and for every engine. Plain Python, no Django. Entry points: `read_asks(task)`,
`check_brief(task, brief)` before any step, `trace(brief, check, released)` after release, and
`coverage_line(traced)` for what the card, the recap and the exports say.
"""
from __future__ import annotations

from pipeline import events as ev

from .asks import DELIVERABLE, DOCUMENT, LABELS, Ask, read_asks
from .trace import (DECLINED, DROPPED, MET, UNMET, BriefCheck, Traced, check_brief, coverage, coverage_line,
                    send_back_note, trace, unplanned)


def unplanned_trace(asks: list[Ask], status: str, why: str):
    """The requirements_traced event of a run that planned nothing: every ask `status`, for `why`."""
    traced = unplanned(asks, status, why)
    return ev.RequirementsTraced(requirements=[t.as_json() for t in traced], coverage=coverage(traced),
                                 gaps=coverage_line(traced))

__all__ = ["DOCUMENT", "DELIVERABLE", "Ask", "read_asks", "LABELS", "BriefCheck", "Traced", "check_brief", "trace", "coverage", "coverage_line",
           "send_back_note", "unplanned", "unplanned_trace", "MET", "UNMET", "DECLINED", "DROPPED"]
