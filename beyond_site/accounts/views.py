"""Login with a brake on password guessing: Django's LoginView, plus a failure count per username
and per client address that refuses further tries for a while once it is exceeded."""
from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpResponse

MAX_FAILURES = 10
WINDOW_S = 15 * 60


def _keys(request) -> list[str]:
    username = (request.POST.get("username") or "").strip().lower()[:150]
    address = request.META.get("REMOTE_ADDR", "")
    return [f"login-failures:user:{username}", f"login-failures:addr:{address}"]


def _blocked(request) -> bool:
    return any((cache.get(key) or 0) >= MAX_FAILURES for key in _keys(request))


def _count_failure(request) -> None:
    for key in _keys(request):
        cache.add(key, 0, WINDOW_S)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, WINDOW_S)


class LoginView(auth_views.LoginView):
    def post(self, request, *args, **kwargs):
        if _blocked(request):
            return HttpResponse("Too many failed logins: wait 15 minutes and try again.", status=429,
                                content_type="text/plain; charset=utf-8")
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        _count_failure(self.request)
        return super().form_invalid(form)
