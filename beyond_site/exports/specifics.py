"""The audit edition's list of unsourced specifics, per section and for the recap
(docs/verifier-contract.md, "Unsourced specifics"): one small table, the same in Markdown and DOCX.

A client edition leaves it out: it is about how the document was made, not part of the document.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.specifics import KIND_LABELS
from beyond_site.exports.blocks import clean
from beyond_site.runs.models import Run, Step

HEADING = "Appendix: unsourced specifics"
NOTE = ("Numbers, dates, durations, amounts, names, organisations and contact details that Beyond found in none "
        "of the sources the drafting model was given (memories, files, evidence, the conversation, the brief). "
        "This is a reading aid, not a verdict: check each one before relying on it. A fact correctly worked "
        "out from two sources is listed too.")
HEADER = ["Section", "Specific", "Kind"]


@dataclass
class Unsourced:
    """Rows [section, specific, kind] and whether every released section and the recap were read."""

    rows: list[list[str]]
    unread: list[str]

    @property
    def shown(self) -> bool:
        return bool(self.rows or self.unread)


def unsourced_of(run: Run) -> Unsourced:
    rows, unread = [], []
    for step in Step.objects.filter(run=run, status=Step.RELEASED).order_by("index"):
        where = clean(f"{step.index}. {step.title}")
        if step.unsourced is None:
            unread.append(where)
        rows += [[where, clean(u.get("text", "")), KIND_LABELS.get(u.get("kind"), "specific")]
                 for u in step.unsourced or []]
    if run.summary:
        if run.summary_unsourced is None:
            unread.append("Recap")
        rows += [["Recap", clean(u.get("text", "")), KIND_LABELS.get(u.get("kind"), "specific")]
                 for u in run.summary_unsourced or []]
    return Unsourced(rows, unread)


def summary_line(unsourced: Unsourced) -> str:
    if not unsourced.rows:
        return "None found: every specific read was found in what the drafting model was given."
    n = len(unsourced.rows)
    return f"{n} specific{'s' if n != 1 else ''} found in no source."


def unread_line(unsourced: Unsourced) -> str:
    return "Not read for specifics: " + ", ".join(unsourced.unread) + "." if unsourced.unread else ""
