"""Download a finished run as Markdown or DOCX (the chat's export links)."""
from __future__ import annotations

import io

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from beyond_site.exports import docx
from beyond_site.exports.document import export_rows, filename, to_markdown
from beyond_site.runs.access import require_run
from beyond_site.runs.models import Run
from beyond_site.workspaces.access import READ


def _finished_run(request, slug, run_id) -> Run | HttpResponse:
    run = require_run(request, slug, run_id, READ)
    if not run.is_finished:
        return HttpResponse("This run has not finished yet: export it when it has.", status=409,
                            content_type="text/plain; charset=utf-8")
    return run


def _attachment(body: bytes, content_type: str, name: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _docx_bytes(rows: dict) -> bytes:
    buffer = io.BytesIO()
    docx.write(rows, buffer)
    return buffer.getvalue()


FORMATS = {
    "md": ("text/markdown; charset=utf-8", lambda rows: to_markdown(rows).encode("utf-8")),
    "docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", _docx_bytes),
}


@login_required
@require_GET
def export(request, slug, run_id, ext):
    run = _finished_run(request, slug, run_id)
    if isinstance(run, HttpResponse):
        return run
    content_type, build = FORMATS[ext]
    return _attachment(build(export_rows(run)), content_type, filename(run, ext))
