"""Django's database sessions, with the lookup every request makes prepared (lib/prepared.py).

The same table, rows and expiry as `django.contrib.sessions.backends.db`: only the read of a
session by its key is compiled once instead of at every request and every websocket.
"""
from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from beyond_site.lib.prepared import Param, Prepared

_LIVE_SESSION = Prepared(lambda: Session.objects.filter(
    session_key=Param("key"), expire_date__gt=Param("now", field=Session._meta.get_field("expire_date"))
).order_by()[:1])


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):
        found = _LIVE_SESSION.instances(key=self.session_key, now=timezone.now()) if self.session_key else []
        if not found:
            self._session_key = None
            return None
        return found[0]

    async def _aget_session_from_db(self):  # what `request.auser()` reads in an async view
        return await sync_to_async(self._get_session_from_db)()
