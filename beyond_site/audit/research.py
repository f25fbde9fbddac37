"""What a run's web research did, for auditors: every search, every page asked for (URL, status,
bytes, time, the reason of a failure or a refusal) and the exact text extracted from each page,
which is what the planner was given and what the integrity gate checked against (docs/research.md).
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from beyond_site.runs.access import require_run
from beyond_site.runs.models import RunEvent
from beyond_site.workspaces.access import READ
from beyond_site.workspaces.models import Blob
from pipeline import events as ev

PAGE_EVENTS = (ev.PAGE_FETCHED, ev.PAGE_REFUSED)


def research_summary(events: list[RunEvent]) -> dict | None:
    """The research of a run as the run detail shows it; None when the run did no research."""
    started = next((e.payload for e in events if e.type == ev.RESEARCH_STARTED), None)
    if started is None:
        return None
    return {
        "started": started,
        "searches": [e.payload for e in events if e.type == ev.SEARCH_DONE],
        "pages": [e.payload for e in events if e.type in PAGE_EVENTS],
        "done": next((e.payload for e in events if e.type == ev.RESEARCH_DONE), None),
    }


def _page(run, evidence_id: str):
    for event in RunEvent.objects.filter(run=run, type__in=PAGE_EVENTS).order_by("seq"):
        if event.payload.id == evidence_id:
            return event.payload
    raise Http404("No such page in this run's research")


@require_safe
@login_required
def evidence_text(request, slug: str, run_id: int, evidence_id: str):
    """The text extracted from one fetched page, exactly as the models were given it."""
    run = require_run(request, slug, run_id, READ)
    page = _page(run, evidence_id)
    data = Blob.objects.filter(sha256=page.sha256).values_list("data", flat=True).first() if page.sha256 else None
    return render(request, "audit/evidence_text.html", {
        "workspace": run.workspace, "run": run, "page": page,
        "text": bytes(data).decode("utf-8") if data is not None else None,
    })
