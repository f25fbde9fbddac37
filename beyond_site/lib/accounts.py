"""The login pages Django provides, with password resets only where mail can be sent.

Without mail (DJANGO_EMAIL_HOST unset, the default) the reset pages answer 404: they would try
SMTP on localhost and fail, and a page that cannot work should not be there. An admin sets a
password with `manage.py changepassword`. With mail, a reset request (the POST that sends one) is
throttled per client address and per address asked for, so the page cannot be used to flood an
inbox or a mail server.
"""
from __future__ import annotations

import hashlib
from functools import wraps

from django.conf import settings
from django.contrib.auth import urls as auth_urls
from django.core.cache import cache
from django.http import Http404
from django.urls import path

from beyond_site.lib.http import client_ip
from beyond_site.lib.inputs import bad_request

RESET_NAMES = ("password_reset", "password_reset_done", "password_reset_confirm", "password_reset_complete")
HOUR = 3600


def mail_configured() -> bool:
    return bool(settings.EMAIL_HOST)


def _over(kind: str, who: str) -> bool:
    """Count one more reset request by `who` this hour; True past the limit."""
    key = "beyond:reset:%s:%s" % (kind, hashlib.sha256(who.encode("utf-8")).hexdigest()[:32])
    cache.add(key, 0, HOUR)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, HOUR)
        count = 1
    return count > settings.BEYOND_PASSWORD_RESETS_PER_HOUR


def reset_page(view):
    @wraps(view)
    def page(request, *args, **kwargs):
        if not mail_configured():
            raise Http404("Password resets need mail, which this server does not send")
        if request.method == "POST":
            email = request.POST.get("email", "").strip().lower()
            over_address = _over("ip", client_ip(request) or "unknown")
            if over_address or (email and _over("email", email)):
                return bad_request(request, "Too many password reset requests: try again in an hour.", status=429)
        return view(request, *args, **kwargs)
    return page


def account_urls() -> list:
    """Django's auth URLs, the reset pages wrapped by `reset_page`."""
    patterns = []
    for pattern in auth_urls.urlpatterns:
        if pattern.name in RESET_NAMES:
            pattern = path(str(pattern.pattern), reset_page(pattern.callback), name=pattern.name)
        patterns.append(pattern)
    return patterns
