"""What an export of a finished run contains, in reading order, and its Markdown form.

Both formats (Markdown here, DOCX in exports.docx) are written from `export_rows`.
"""
from __future__ import annotations

import re

from django.utils.text import slugify

from pipeline import badges
from beyond_site.runs.models import Run, Step
from beyond_site.runs.selectors import halt_reasons
from beyond_site.runs.wording import OFFLINE_TIP

NOT_RELEASED = "Not released: the run stopped at an earlier step."


def export_rows(run: Run) -> dict:
    """What an export contains, in reading order; both formats are written from this."""
    halts = halt_reasons([run.pk])[run.pk]
    steps = []
    for step in Step.objects.filter(run=run).order_by("index"):
        row = {"index": step.index, "title": step.title, "badge": None, "warnings": [], "content": None, "note": ""}
        if step.status == Step.RELEASED:
            row.update(badge=step.badge, warnings=list(step.warnings or []), content=step.content or "")
        elif step.status == Step.HALTED:
            row.update(badge=badges.HALTED, note=f"Halted, not released: {halts.get(step.index, '')}".rstrip(": "))
        else:
            row["note"] = NOT_RELEASED
        steps.append(row)
    citations = (run.brief or {}).get("citations") or []
    return {"run": run, "steps": steps, "citations": citations}


def badge_line(badge: str) -> str:
    return f"{badges.label(badge)}: {badges.tip(badge)}"


def to_markdown(rows: dict) -> str:
    run = rows["run"]
    out = [f"# {_one_line(run.task)}", "", f"Run {run.pk} · status: {run.status}"]
    if run.offline:
        out.append(f"Offline engine: {OFFLINE_TIP}")
    if run.halt_reason:
        out.append(f"Reason: {_one_line(run.halt_reason)}")
    for step in rows["steps"]:
        out += ["", f"## Step {step['index']}: {_one_line(step['title'])}", ""]
        if step["badge"]:
            out.append(f"**Badge:** {badge_line(step['badge'])}")
            out.append("")
        for warning in step["warnings"]:
            out += [f"> **Warning:** {_one_line(warning)}", ""]
        out.append(step["content"] if step["content"] is not None else f"_{step['note']}_")
    if run.summary:
        out += ["", "## Recap", "", run.summary]
    for warning in run.warnings or []:
        out += ["", f"> **Warning:** {_one_line(warning)}"]
    out += ["", "## Appendix: approved citations", ""]
    if rows["citations"]:
        out += ["| ID | Framework | Reference | Title |", "|---|---|---|---|"]
        out += [f"| {_cell(c.get('id'))} | {_cell(c.get('framework'))} | {_cell(c.get('ref'))} | {_cell(c.get('title'))} |"
                for c in rows["citations"]]
    else:
        out.append("The brief approved no citations.")
    return "\n".join(out) + "\n"


def _one_line(text) -> str:
    return " ".join(str(text or "").split())


def _cell(text) -> str:
    return _one_line(text).replace("|", "\\|")


def filename(run: Run, ext: str) -> str:
    # ASCII letters, digits and dashes only: safe in a header and on any file system.
    stem = slugify(run.task)[:50].strip("-") or "run"
    return re.sub(r"[^a-z0-9.-]", "", f"beyond-run-{run.pk}-{stem}.{ext}")
