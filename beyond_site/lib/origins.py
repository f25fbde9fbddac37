"""The websocket handshake's Origin check, the same as Django's CSRF check for HTTP POSTs.

Channels' AllowedHostsOriginValidator compares the Origin's host name with ALLOWED_HOSTS only, so
`http://127.0.0.1:9999` passed for a site served at `http://127.0.0.1:8000`, and a page on any
port or scheme of an allowed host could open a member's run stream with their cookies. Here the
Origin must be this site itself (scheme, host and port, with the scheme read as Django reads it,
SECURE_PROXY_SSL_HEADER included) or one of CSRF_TRUSTED_ORIGINS, as CsrfViewMiddleware requires
of a POST.
"""
from __future__ import annotations

import io
import logging
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.utils.http import is_same_domain

log = logging.getLogger("beyond.http")


def _trusted(origin: str) -> bool:
    """In CSRF_TRUSTED_ORIGINS, exactly or as a subdomain of a `scheme://*.domain` entry."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        if entry == origin:
            return True
        trusted = urlsplit(entry)
        if "*" in trusted.netloc and trusted.scheme == parts.scheme and is_same_domain(
                parts.netloc, trusted.netloc.replace("*", "", 1)):
            return True
    return False


def origin_allowed(scope) -> bool:
    origin = next((v.decode("latin-1") for k, v in scope.get("headers") or () if k.lower() == b"origin"), "")
    if not origin or origin == "null":
        return False
    # The handshake read as an HTTP request, so the host and the scheme are Django's own reading.
    request = ASGIRequest({**scope, "type": "http", "method": "GET",
                           "scheme": "https" if scope.get("scheme") == "wss" else "http"}, io.BytesIO())
    try:
        own = f"{'https' if request.is_secure() else 'http'}://{request.get_host()}"
    except DisallowedHost:
        own = None
    return origin == own or _trusted(origin)


class SameOriginWebsockets:
    """Refuse the handshake of a websocket whose Origin is not this site (nor a trusted origin)."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            log.warning("refused a websocket to %s from another origin", scope.get("path"))
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
