"""Small request helpers."""
from __future__ import annotations

from django.conf import settings


def client_ip(request) -> str | None:
    """The address the request came from, as the operator's proxies saw it.

    With no trusted proxy (BEYOND_TRUSTED_PROXY_COUNT=0, the default) it is the socket's peer:
    an X-Forwarded-For header is only the client's own claim. Behind N trusted proxies, each of
    which appends the address it saw, the client is the N-th address from the right; anything to
    its left was written by the client and is ignored.
    """
    trusted = settings.BEYOND_TRUSTED_PROXY_COUNT
    if trusted:
        hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        if len(hops) >= trusted:
            return hops[-trusted]
    return request.META.get("REMOTE_ADDR") or None


def clean_text(value: str) -> str:
    """Text from a form or a query string without the NUL characters no database column takes."""
    return (value or "").replace("\x00", "")
