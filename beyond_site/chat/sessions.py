"""A login's open run pages end with it: each run websocket joins its session's group, and a logout
tells that group to close (any process, through the channel layer). Until then a logged-out
browser kept receiving the document it had open."""
from __future__ import annotations

import hashlib
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver

log = logging.getLogger("beyond.pages")


def session_group(session_key: str) -> str:
    """The channel layer group of one session's sockets (the key itself never leaves the process)."""
    return "session-" + hashlib.sha256(session_key.encode()).hexdigest()[:40]


@receiver(user_logged_out, dispatch_uid="beyond-close-session-sockets")
def close_the_sessions_sockets(sender, request, user, **kwargs):
    key = getattr(getattr(request, "session", None), "session_key", None)
    layer = get_channel_layer()
    if not key or layer is None:
        return
    try:
        async_to_sync(layer.group_send)(session_group(key), {"type": "session.ended"})
    except Exception:  # a channel layer that is away: the sockets' next read refuses them anyway
        log.warning("a logout could not close its open run pages", exc_info=True)
