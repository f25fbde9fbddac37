"""Errors as application/problem+json (RFC 9457): every error the API answers, one shape."""
from __future__ import annotations

import json

from django.http import HttpResponse

CONTENT_TYPE = "application/problem+json"
TITLES = {400: "Bad request", 401: "Not authenticated", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
          409: "Conflict", 413: "Too large", 422: "Unprocessable", 429: "Too many requests", 500: "Server error"}


def problem(status: int, detail: str, *, headers: dict | None = None, **extra) -> HttpResponse:
    """`status` with `detail` said in words; `extra` members (RFC 9457 allows them)."""
    body = {"type": "about:blank", "title": TITLES.get(status, "Error"), "status": status, "detail": detail, **extra}
    response = HttpResponse(json.dumps(body), status=status, content_type=CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response
