"""A run's websocket: subscribe, snapshot, then tail the event log (docs/architecture.md, "the doorbell").

The channel layer only says "event n exists"; what is sent comes from the database, so a lost
doorbell costs latency, never a step: the next bell brings what it missed, and a page that hears
nothing for BEYOND_PAGE_RECHECK_S reads anyway, so even a lost last bell (a run's end) arrives.
A refused socket is accepted and then closed with 4403: htmx retries a failed handshake (seen as
1006) forever, but not a 4403 close.
"""
from __future__ import annotations

import asyncio
import logging

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.db import database_sync_to_async
from django.conf import settings
from redis.exceptions import ConnectionError as RedisConnectionError

from beyond_site.lib.busy import REFUSALS, is_refusal
from beyond_site.chat import fragments
from beyond_site.runs.bells import run_group

REFUSED = 4403
TRY_AGAIN = 1013
log = logging.getLogger("beyond.pages")


def _signed_in(session) -> bool:
    """Whether the login this socket was opened with still exists: a logout deletes its session
    (in every process: sessions are kept in the database and the shared cache)."""
    key = getattr(session, "session_key", None)
    return bool(key) and session.exists(key)


def _snapshot_if_signed_in(session, user, run_id: int):
    return fragments.snapshot_for(user, run_id) if _signed_in(session) else None


def _since_if_signed_in(session, user, run_id: int, last_seq: int):
    return fragments.since_for(user, run_id, last_seq) if _signed_in(session) else None


snapshot_for = database_sync_to_async(_snapshot_if_signed_in, thread_sensitive=False)
since_for = database_sync_to_async(_since_if_signed_in, thread_sensitive=False)


class RunConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        self.group = run_group(self.run_id)
        self.last_seq = 0
        self.joined = False
        self.ended = False
        self.reading = asyncio.Lock()  # one read-and-push at a time: doorbells and the quiet check
        self.recheck: asyncio.Task | None = None
        self.heard = asyncio.get_running_loop().time()  # when the last doorbell (or check) came
        await self.accept()
        try:
            await self.subscribe()
            if not self.ended:
                self.recheck = asyncio.create_task(self._read_when_quiet())
        except RedisConnectionError:  # the channel layer is full or away: as busy as a database
            await self.close(code=TRY_AGAIN)
        except REFUSALS as exc:
            if not is_refusal(exc):
                raise
            # The database is too busy to answer now: 1013 ("try again later") makes htmx reconnect,
            # and the new socket's snapshot catches up.
            await self.close(code=TRY_AGAIN)

    async def subscribe(self):
        if not self.joined:
            # Join before the snapshot: an event persisted meanwhile rings a bell we will hear.
            # Nothing is sent before the access check, which comes with the snapshot's read.
            await self.channel_layer.group_add(self.group, self.channel_name)
            self.joined = True
        async with self.reading:
            await self._push(await snapshot_for(self.scope.get("session"), self.scope.get("user"), self.run_id))

    async def receive(self, text_data=None, bytes_data=None):
        # htmx never sends on these sockets, and a reconnect gets its snapshot from `connect`.
        # Inbound frames are ignored: answering each with a snapshot let a client multiply what
        # the server sends (and the database reads) at will.
        return

    async def run_event(self, message):
        """The doorbell: read and push whatever this socket has not sent yet (checking first, in
        the same read, that the user may still see the run: a member removed mid-run stops
        seeing it). A bell for an event this socket already sent (one read covers every event
        recorded before it) costs nothing."""
        self.heard = asyncio.get_running_loop().time()
        if message.get("seq", self.last_seq + 1) <= self.last_seq:
            return
        await self._tail()

    async def _tail(self):
        async with self.reading:
            if not self.ended:
                await self._push(await since_for(self.scope.get("session"), self.scope.get("user"), self.run_id,
                                                 self.last_seq))

    async def _read_when_quiet(self):
        """Bells are best effort (a full or restarted channel layer drops them): a page that has
        heard none for BEYOND_PAGE_RECHECK_S reads what it may have missed (usually nothing, and
        then nothing is sent)."""
        loop = asyncio.get_running_loop()
        while not self.ended:
            quiet_since = self.heard
            await asyncio.sleep(max(0.0, quiet_since + settings.BEYOND_PAGE_RECHECK_S - loop.time()))
            if self.heard != quiet_since:
                continue  # a bell came meanwhile: wait for a full quiet period after it
            self.heard = loop.time()
            try:
                await self._tail()
            except Exception:  # a busy database now: the next check or bell tries again
                log.warning("run %s: a page's check for missed events failed", self.run_id, exc_info=True)

    async def disconnect(self, code):
        self.ended = True
        if getattr(self, "recheck", None) is not None:
            self.recheck.cancel()
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def _push(self, pushed):
        if pushed is None:  # not (or no longer) allowed to read this run
            self.ended = True
            await self.close(code=REFUSED)
            return
        html, self.last_seq, finished = pushed
        if html:
            await self.send(text_data=html)
        if finished:
            self.ended = True
            await self.close(code=1000)  # nothing more will come; 1000 is not retried by htmx
