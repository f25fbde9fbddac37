"""A minimal server-sent events reader, enough for chat-completion streams."""
from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from pipeline.net import BodyTooLarge

DONE = "[DONE]"


async def iter_sse_data(lines: AsyncIterable[str], *, max_event_chars: int) -> AsyncIterator[str]:
    """Yield the `data` of each event in a stream of lines (line endings already stripped).

    Comment lines (`: OPENROUTER PROCESSING` keep-alives) and fields other than `data` are
    skipped; an event's several `data` lines are joined with newlines, as the SSE spec says.
    The `[DONE]` sentinel is yielded like any other data: ending the stream is the caller's call.
    An event's data is counted as its lines arrive: past `max_event_chars`, BodyTooLarge (a
    server that never sends the blank line ending an event cannot make us hold its stream).
    """
    data: list[str] = []
    held = 0
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data, held = [], 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
            held += len(data[-1]) + 1
            if held > max_event_chars:
                raise BodyTooLarge(max_event_chars, "event", unit="characters")
    # A server that closes without the final blank line still meant its last event.
    if data:
        yield "\n".join(data)
