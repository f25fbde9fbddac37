"""The viewer's time zone: times are shown in it, UTC stays the stored and exported truth.

The browser knows its zone (Intl.DateTimeFormat); static/chat.js writes it to a `tz` cookie, and
this middleware activates it for the request. The cookie is untrusted input: only a name from the
system's zone database is accepted (no paths, nothing long), anything else means UTC.
"""
from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache
from urllib.parse import unquote

from django.utils import timezone

COOKIE = "tz"
# IANA names: letters, digits, "_", "+", "-" and "/" ("America/Argentina/Buenos_Aires", "Etc/GMT+5").
ZONE_NAME = re.compile(r"[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+){0,2}")
MAX_NAME = 64


@lru_cache(maxsize=1)
def known_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def zone_from(value: str | None) -> zoneinfo.ZoneInfo | None:
    """The zone named by a cookie's value, or None when it names no known zone."""
    if not value:
        return None
    name = unquote(value)[:MAX_NAME + 1]
    if len(name) > MAX_NAME or not ZONE_NAME.fullmatch(name) or name not in known_zones():
        return None
    return zoneinfo.ZoneInfo(name)


class ViewerTimeZoneMiddleware:
    """Activates the `tz` cookie's zone for the request (UTC when absent or not a known zone)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        zone = zone_from(request.COOKIES.get(COOKIE))
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
