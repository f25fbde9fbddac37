"""A run's events as Server-Sent Events (docs/api.md, "Following a run").

One SSE event per run event: `id:` its sequence number, `event:` its type, `data:` its JSON (as in
the run trace). A client that reconnects with `Last-Event-ID` gets what came after it, nothing lost
or repeated; the stream ends after the run's final event. Like a live chat page, it reads the event
log (the truth) and waits on the run's doorbell between reads, with a read every few seconds
anyway (a doorbell may be lost) and a keep-alive comment when nothing happened for a while.
"""
from __future__ import annotations

import asyncio
import json

from channels.layers import get_channel_layer
from channels.db import database_sync_to_async
from django.http import StreamingHttpResponse
from ninja import Header

from beyond_site.api.base import api, run_for
from beyond_site.api.schemas import answers
from beyond_site.runs.bells import run_group
from beyond_site.runs.models import RunEvent
from beyond_site.runs.selectors import event_json
from pipeline.events import FINAL_TYPES

#: Seconds between reads of the event log when no doorbell rang.
READ_EVERY_S = 3.0
#: Seconds of silence after which a keep-alive comment is sent.
KEEP_ALIVE_S = 15.0
#: Events sent per read at most: a long run's backlog is sent in pieces, none held whole.
BATCH = 200


def _after(run_id: int, seq: int) -> tuple[list[dict], bool]:
    """The events after `seq` (a batch), and whether the run's final event came at or before it (a
    client resuming after the end gets an empty stream that ends, not one that waits forever)."""
    rows = [event_json(e) for e in RunEvent.objects.filter(run_id=run_id, seq__gt=seq).order_by("seq")[:BATCH]]
    ended = not rows and RunEvent.objects.filter(run_id=run_id, seq__lte=seq, type__in=FINAL_TYPES).exists()
    return rows, ended


#: Reads in flight, by (loop, run, after): streams following one run at the same point share a read.
_reads: dict[tuple[int, int, int], asyncio.Future] = {}


async def _read(run_id: int, seq: int) -> tuple[list[dict], bool]:
    """`_after(run_id, seq)`, read once for every stream waiting on it at the moment (ten dashboards
    following one run cost one query a doorbell, not ten)."""
    key = (id(asyncio.get_running_loop()), run_id, seq)
    pending = _reads.get(key)
    if pending is None:
        pending = _reads[key] = asyncio.ensure_future(database_sync_to_async(_after, thread_sensitive=False)(run_id, seq))
        pending.add_done_callback(lambda _: _reads.pop(key, None))
    return await asyncio.shield(pending)  # a stream that goes away does not cancel the others' read


def sse(event: dict) -> str:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n"


async def _wait(layer, channel: str | None, seconds: float) -> bool:
    """True when the doorbell rang within `seconds`."""
    if layer is None or channel is None:
        await asyncio.sleep(seconds)
        return False
    try:
        await asyncio.wait_for(layer.receive(channel), timeout=seconds)
        return True
    except asyncio.TimeoutError:
        return False


async def stream(run_id: int, after: int):
    layer = get_channel_layer()
    channel = await layer.new_channel() if layer is not None else None
    if channel is not None:
        await layer.group_add(run_group(run_id), channel)  # subscribe first, then read: nothing falls between
    try:
        last, quiet = after, 0.0
        yield ": stream of run %d\n\n" % run_id
        while True:
            events, ended = await _read(run_id, last)
            if ended:
                return
            for event in events:
                yield sse(event)
                last = event["seq"]
                if event["type"] in FINAL_TYPES:
                    return
            if len(events) == BATCH:
                continue
            rang = await _wait(layer, channel, READ_EVERY_S)
            quiet = 0.0 if rang or events else quiet + READ_EVERY_S
            if quiet >= KEEP_ALIVE_S:
                quiet = 0.0
                yield ": keep-alive\n\n"
    finally:
        if channel is not None:
            await layer.group_discard(run_group(run_id), channel)


#: One event of the stream, as the OpenAPI document describes a text/event-stream's items.
SSE_EVENT = {"type": "object", "required": ["id", "event", "data"],
             "properties": {"id": {"type": "string", "description": "The event's sequence number."},
                            "event": {"type": "string", "description": "The event's type."},
                            "data": {"type": "string", "description": "The event, as JSON."}}}


@api.get("/runs/{run_id}/events", response=answers({200: None}), tags=["runs"],
         openapi_extra={"responses": {200: {"description": "The run's events, as Server-Sent Events",
                                            "content": {"text/event-stream": {"schema": SSE_EVENT}}}}})
async def run_events(request, run_id: int,
                 last_event_id: str = Header("0", alias="Last-Event-ID", pattern=r"^[0-9]{1,18}$",
                                             description="Resume after this event (the last `id:` received).")):
    """The run's events as they happen (`text/event-stream`), from after `Last-Event-ID`; the stream
    ends after the run's final event."""
    await database_sync_to_async(run_for, thread_sensitive=False)(request, run_id)
    response = StreamingHttpResponse(stream(run_id, int(last_event_id)), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a reverse proxy passes each event on at once
    return response
