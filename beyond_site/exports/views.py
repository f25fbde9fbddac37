"""Download a finished run's deliverable as Markdown or DOCX (the chat's export links)."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from beyond_site.exports.formats import FORMATS
from beyond_site.exports.document import filename, nothing_to_export
from beyond_site.runs.access import require_run
from beyond_site.workspaces.access import READ


def _attachment(body: bytes, content_type: str, name: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
@require_GET
def export(request, slug, run_id, ext):
    run = require_run(request, slug, run_id, READ)
    if not run.is_finished:
        return HttpResponse("This run has not finished yet: export it when it has.", status=409,
                            content_type="text/plain; charset=utf-8")
    nothing = nothing_to_export(run)
    if nothing:
        return HttpResponse(nothing, status=409, content_type="text/plain; charset=utf-8")
    fmt = FORMATS[ext]
    return _attachment(fmt.render(run), fmt.content_type, filename(run, ext))
