"""Input that cannot be used is refused with a 400 and a message, before it reaches the database.

- NUL characters: PostgreSQL cannot store them in text, and a query with one fails with a
  DataError (a 500) instead of finding nothing. `NulGuardMiddleware` refuses any query string or
  urlencoded form carrying one; the views that read a multipart form check their own fields
  (`has_nul`), and the model forms' CharFields refuse them already.
- Ids that are not ids (`conversation=abc`): `object_id` says so instead of letting a lookup fail.

And names shown in lists (conversation titles, file names) lose the Unicode bidirectional controls
(`without_bidi_controls`): a right-to-left override makes "report\u202etxt.exe" read as
"reportexe.txt", and nothing a title or a file name needs is lost without them.

For an htmx request the message is the chat's notice, swapped out of band; base.html lets htmx swap
a 400 for that reason.
"""
from __future__ import annotations

import re
from html import escape

from django.http import HttpResponse

from beyond_site.lib.ids import parse_id

NUL_REFUSED = "Text cannot contain NUL characters (\\x00): remove them and send it again."


class BadInput(ValueError):
    """A parameter that cannot be used; the message is safe to show."""


#: Embeddings, overrides and isolates (LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI).
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def without_bidi_controls(text: str) -> str:
    return _BIDI_CONTROLS.sub("", text)


def has_nul(*values) -> bool:
    return any(isinstance(v, str) and "\x00" in v for v in values)


def object_id(value, what: str) -> int | None:
    """`value` as an id (None when empty); BadInput when it is not one (lib/ids.py)."""
    if value is None or value == "":
        return None
    number = parse_id(str(value).strip())
    if number is None:
        raise BadInput(f"That is not a valid {what}.")
    return number


def notice_html(text: str) -> str:
    """The chat's notice slot with `text`, for an out-of-band swap."""
    return (f'<div id="notice" class="notice-slot" hx-swap-oob="true">'
            f'<p class="alert" role="alert">{escape(text)}</p></div>')


def refusal(text: str, *, htmx: bool) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """(headers, body) of a refusal: the notice for htmx (nothing else swapped), plain text otherwise."""
    if htmx:
        body, headers = notice_html(text), [(b"content-type", b"text/html; charset=utf-8"), (b"hx-reswap", b"none")]
    else:
        body, headers = text, [(b"content-type", b"text/plain; charset=utf-8")]
    data = body.encode("utf-8")
    return [*headers, (b"content-length", str(len(data)).encode())], data


def bad_request(request, text: str, status: int = 400) -> HttpResponse:
    headers, body = refusal(text, htmx=request.headers.get("HX-Request") == "true")
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name != b"content-length":
            response[name.decode()] = value.decode()
    return response


class NulGuardMiddleware:
    """400 for a query string or an urlencoded form with a NUL character in a name or a value.
    Multipart bodies are left to their views: reading them here would parse uploads before the
    upload view sets its size limits."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        params = [request.GET]
        if request.content_type == "application/x-www-form-urlencoded" and request.method == "POST":
            params.append(request.POST)
        for query in params:
            if any(has_nul(key, *query.getlist(key)) for key in query):
                return bad_request(request, NUL_REFUSED)
        return self.get_response(request)
