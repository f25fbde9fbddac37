"""A finished run's deliverable: the downloads (either edition, every format), a step's Markdown for
the chat's copy button, and a member marking the document final or reopening it."""
from __future__ import annotations


from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from beyond_site.lib.downloads import attachment
from beyond_site.exports import jobs as export_jobs, md
from beyond_site.exports.document import CLIENT, EDITIONS, Options, filename
from beyond_site.workspaces.models import CLASSIFICATIONS
from beyond_site.exports.editions import AUDIT, build
from beyond_site.exports.formats import FORMATS
from beyond_site.exports.document import nothing_to_export
from beyond_site.lib.inputs import bad_request
from beyond_site.runs import versions
from beyond_site.runs.access import require_run
from beyond_site.workspaces.access import READ, WRITE
from beyond_site.workspaces.conversations import rename_document


def _text(body: str, status: int = 200) -> HttpResponse:
    return HttpResponse(body, status=status, content_type="text/plain; charset=utf-8")


@login_required
@require_GET
def export(request, slug, run_id, ext):
    run = require_run(request, slug, run_id, READ)
    edition = request.GET.get("edition", AUDIT)
    if edition not in EDITIONS:
        return bad_request(request, f"There is no {edition[:20]!r} edition: ask for client or audit.")
    if not run.is_finished:
        return _text("This run has not finished yet: export it when it has.", status=409)
    nothing = nothing_to_export(run)
    if nothing:
        return _text(nothing, status=409)
    fmt = FORMATS[ext]
    written = export_jobs.written_export(run, ext, edition, options_from(request.GET), request.user)
    if isinstance(written, bytes):
        return attachment(written, fmt.content_type, filename(run, ext, edition))
    if written == export_jobs.PREPARING:
        # Being written (a large document): this page asks again until the file comes.
        response = render(request, "exports/preparing.html", {"run": run, "workspace": run.workspace,
                                                              "label": fmt.label}, status=202)
        response["Retry-After"] = "1"
        return response
    return render(request, "exports/failed.html", {
        "run": run, "workspace": run.workspace, "label": fmt.label, "reason": written,
        "others": [(other, f.label) for other, f in FORMATS.items() if other not in (ext, "json")]}, status=422)


def options_from(params) -> Options:
    """The person exporting's choices: a classification (one of the offered ones, or the
    workspace's), and sources as endnotes in the client edition."""
    chosen = params.get("classification")
    return Options(classification=chosen if chosen in CLASSIFICATIONS else None,
                   endnotes=params.get("endnotes") in ("1", "on", "true"))


@login_required
@require_GET
def confirm_client(request, slug, run_id, ext):
    """What the chat's client-edition links open for a document that misses part of the task: the
    gaps, and the download once the person has read them (the export's own address downloads at
    once, for the person who asked for it by address)."""
    run = require_run(request, slug, run_id, READ)
    if not run.requirements_gaps:
        return redirect(f"{reverse('exports:' + ext, args=[slug, run.pk])}?edition=client")
    query = request.GET.copy()
    query["edition"] = CLIENT
    return render(request, "exports/confirm_gaps.html", {
        "run": run, "workspace": run.workspace, "gaps": run.requirements_gaps, "ext": ext,
        "confirmed_url": f"{reverse('exports:' + ext, args=[slug, run.pk])}?{query.urlencode()}"})


@login_required
@require_GET
def step_markdown(request, slug, run_id, index):
    """A released step as the client edition writes it (the chat's "Copy" on a step)."""
    run = require_run(request, slug, run_id, READ)
    section = next((s for s in build(run, CLIENT).sections if s.index == index and s.released), None)
    if section is None:
        raise Http404("This step has not been released.")
    return _text(md.section_text(section))


def _back(request, run) -> HttpResponse:
    """Back to the run in its conversation, where every version's status has changed: from the chat
    (htmx), the page the member is on is loaded again whole (HX-Refresh: a redirect to the same page
    with only an #anchor added would not reload it)."""
    if run.conversation_id is None:
        url = reverse("audit:run", args=[run.workspace.slug, run.pk])
    else:
        url = reverse("chat:conversation", args=[run.workspace.slug, run.conversation_id]) + f"#run-{run.pk}"
    if request.htmx:
        return HttpResponse(status=200, headers={"HX-Refresh": "true"})
    return redirect(url)


@login_required
@require_POST
def rename(request, slug, run_id):
    """Name the document (not only the conversation) before it is exported."""
    run = require_run(request, slug, run_id, WRITE)
    if run.conversation is None:
        return _text("This run belongs to no conversation: its document cannot be renamed.", status=409)
    try:
        rename_document(run.conversation, request.POST.get("title", ""), request.user)
    except ValueError as exc:
        return bad_request(request, str(exc))
    messages.success(request, "The document is renamed: its exports use the new title.")
    return _back(request, run)


@login_required
@require_POST
def mark(request, slug, run_id, final: bool):
    """Mark this run's version of the conversation's document final, or take the mark off: the
    document is a draft again (a member or an admin)."""
    run = require_run(request, slug, run_id, WRITE)
    try:
        version = (versions.mark_final if final else versions.reopen)(run, request.user)
    except versions.NotMarkable as exc:
        if request.htmx:  # said where the member is, not after a reload that changes nothing
            return _text(str(exc), status=409)
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Version {version.number} is marked final: its exports say Final from now on."
                         if final else f"Version {version.number} is a draft again.")
    return _back(request, run)
