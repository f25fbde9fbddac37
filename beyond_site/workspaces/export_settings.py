"""A workspace's settings for its deliverables (docs/deliverables.md, "Page furniture"): the paper
size, the classification printed in every footer, and the organisation named on the title page.

Changed from the Settings page or `beyond_workspace set-export`, and logged like every admin
change: one change-log row with what changed, before and after.
"""
from __future__ import annotations

from django.db import transaction

from beyond_site.lib.inputs import without_bidi_controls
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Workspace

PAPERS = {"a4": "A4", "letter": "Letter"}
CLASSIFICATION_CHARS = 60
ORGANISATION_CHARS = 200
FIELDS = {"paper": "export_paper", "classification": "export_classification", "organisation": "export_organisation"}


def _one_line(text: str, limit: int, what: str) -> str:
    line = " ".join(without_bidi_controls(str(text)).split())
    if any(ord(ch) < 32 for ch in line):
        raise ValueError(f"the {what} has control characters")
    if len(line) > limit:
        raise ValueError(f"the {what} is {len(line)} characters long; at most {limit}")
    return line


def cleaned(*, paper=None, classification=None, organisation=None) -> dict:
    """The values given, checked: {"paper": ..., ...} with only those that are not None;
    ValueError naming what is wrong."""
    values = {}
    if paper is not None:
        paper = str(paper).strip().lower()
        if paper not in PAPERS:
            raise ValueError(f"the paper size is {', '.join(PAPERS)}, not {paper!r}")
        values["paper"] = paper
    if classification is not None:
        values["classification"] = _one_line(classification, CLASSIFICATION_CHARS, "classification")
    if organisation is not None:
        values["organisation"] = _one_line(organisation, ORGANISATION_CHARS, "organisation")
    return values


def set_export_settings(workspace: Workspace, *, user=None, **given) -> dict:
    """Set the settings given (paper, classification, organisation; None leaves one as it is) and
    log what changed; returns all three as they now are."""
    values = cleaned(**given)
    with transaction.atomic():
        locked = Workspace.objects.select_for_update().get(pk=workspace.pk)
        before = {name: getattr(locked, FIELDS[name]) for name in values}
        changed = {name: value for name, value in values.items() if before[name] != value}
        if changed:
            for name, value in changed.items():
                setattr(locked, FIELDS[name], value)
            locked.save(update_fields=[FIELDS[name] for name in changed])
            record_change(locked, user, "export_settings_changed", before={n: before[n] for n in changed},
                          after=changed)
    for name, value in values.items():
        setattr(workspace, FIELDS[name], value)
    return current(workspace)


def current(workspace: Workspace) -> dict:
    return {name: getattr(workspace, field) for name, field in FIELDS.items()}
