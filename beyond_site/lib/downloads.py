"""Every download the site answers with: the body as a named file.

The name goes through Django's own `content_disposition_header` (what `FileResponse` uses), which
quotes it and gives a name outside ASCII (a document's title) as RFC 6266's `filename*`. The body
is whole in memory already (a written export, a CSV), so a plain response carries it: a
`FileResponse` would stream it in chunks for nothing."""
from __future__ import annotations

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def attachment(body: bytes | str, content_type: str, filename: str, *, status: int = 200) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type, status=status)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
