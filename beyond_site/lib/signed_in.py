"""`login_required` for async views, with the user read once per request.

Django keeps two caches of the signed-in user: `request.auser()`, which `login_required` awaits in
front of an async view, and the lazy `request.user`, which the view's synchronous part (run in a
thread) reads. Each reads the user from the database on its own, so every submission read it twice.
"""
from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_required


def login_required_async(view):
    @login_required
    @functools.wraps(view)
    async def with_user(request, *args, **kwargs):
        request.user = await request.auser()  # already read by login_required: no query here
        return await view(request, *args, **kwargs)
    return with_user
