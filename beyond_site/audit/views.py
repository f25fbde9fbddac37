"""The auditors' pages: browse, read and export the run record. Read-only by construction.

Every view is GET/HEAD only and goes through `require_membership` / `require_run` with READ, so a
non-member, or a run id from another workspace, is a 404. Every role of the workspace may read:
members can see their own runs in the chat anyway, and the record is append-only.
"""
from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from beyond_site.lib.downloads import attachment
from beyond_site.audit import presenters
from beyond_site.audit.filters import filtered_runs
from beyond_site.audit.research import research_summary
from beyond_site.runs.access import require_run
from beyond_site.runs.context_audit import calls_that_saw
from beyond_site.runs.contexts import context_messages
from beyond_site.runs.models import ModelCall
from beyond_site.runs.selectors import run_events, run_trace
from beyond_site.runs.unsourced import specifics_view
from beyond_site.runs.versions import document_version
from beyond_site.lib.export_formats import DOCUMENT_FORMATS
from beyond_site.workspaces.access import READ, require_membership

PAGE_SIZE = 50
EXPORT_CAP = 500
SEEN_QUERY_MAX = 2000
#: The document's downloads on a run's page (exports/urls.py names them by their extension).
EXPORT_FORMATS = [(f"exports:{ext}", label) for ext, label in DOCUMENT_FORMATS.items()]


def _json_attachment(data, filename: str) -> HttpResponse:
    return attachment(json.dumps(data, indent=2, ensure_ascii=False), "application/json", filename)


@require_safe
@login_required
def run_list(request, slug: str):
    membership = require_membership(request, slug, READ)
    runs, form = filtered_runs(membership.workspace, request.GET)
    # The rows show who started each run: selected with the page, not one query a row.
    page = Paginator(runs.select_related("created_by"), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "audit/run_list.html", {
        "workspace": membership.workspace, "membership": membership, "form": form, "page": page,
        "rows": presenters.list_rows(list(page.object_list)), "export_cap": EXPORT_CAP,
    })


@require_safe
@login_required
def run_detail(request, slug: str, run_id: int):
    run = require_run(request, slug, run_id, READ)
    events = run_events(run)
    trace = presenters.redact_trace(run_trace(run, events))
    return render(request, "audit/run_detail.html", {
        "workspace": run.workspace, "run": run, "trace": trace,
        "topology": trace["run"]["topology"], "steps": presenters.detail_steps(trace, run, events),
        "calls": presenters.call_rows(run.model_calls.order_by("id")), "events": presenters.event_rows(events),
        "conversation": presenters.conversation_link(run),
        "research": research_summary(events), "facts": presenters.run_facts(run),
        "recap_specifics": specifics_view(run.summary_unsourced, run.summary_sources),
        "document": document_version(run) if run.is_finished else None,
        "later": presenters.later_runs(run),
        "export_formats": EXPORT_FORMATS,
        "editions": [("audit", "Audit edition"), ("client", "Client edition")],
    })


@require_safe
@login_required
def call_context(request, slug: str, run_id: int, call_id: int):
    run = require_run(request, slug, run_id, READ)
    call = get_object_or_404(ModelCall.objects.select_related("context"), pk=call_id, run=run)
    if call.context is None:
        raise Http404("This call has no recorded context")
    # Not "messages": base.html shows that name as the page's notices.
    call_messages = [{**m, "chars": len(m["content"]), "bytes": len(m["content"].encode("utf-8"))}
                     for m in context_messages(call.context)]
    return render(request, "audit/call_context.html", {
        "workspace": run.workspace, "run": run, "call": call, "call_messages": call_messages,
        "total_chars": sum(m["chars"] for m in call_messages),
    })


@require_safe
@login_required
def seen(request, slug: str, run_id: int):
    run = require_run(request, slug, run_id, READ)  # authorization first, whatever happens below
    query = request.GET.get("q", "")[:SEEN_QUERY_MAX]
    calls = calls_that_saw(run, query) if query.strip() else None
    return render(request, "audit/seen.html", {
        "workspace": run.workspace, "run": run, "query": query, "calls": calls,
    })


@require_safe
@login_required
def run_export(request, slug: str, run_id: int):
    run = require_run(request, slug, run_id, READ)
    return _json_attachment(presenters.redact_trace(run_trace(run)), f"beyond-run-{run.pk}.json")


@require_safe
@login_required
def list_export(request, slug: str):
    """The filtered runs' traces, newest first, at most EXPORT_CAP of them.

    Capped rather than streamed: under ASGI a synchronous streaming body is buffered whole anyway.
    The response headers say how many matched, and the list page says so before the click.
    """
    membership = require_membership(request, slug, READ)
    runs, _ = filtered_runs(membership.workspace, request.GET)
    matched = runs.count()
    traces = [presenters.redact_trace(run_trace(r)) for r in runs.select_related("workspace")[:EXPORT_CAP]]
    response = _json_attachment(traces, f"beyond-runs-{membership.workspace.slug}.json")
    response["X-Beyond-Runs-Matched"] = str(matched)
    response["X-Beyond-Runs-Exported"] = str(len(traces))
    return response
