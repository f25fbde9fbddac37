"""A minimal server-sent events reader, enough for chat-completion streams."""
from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

DONE = "[DONE]"


async def iter_sse_data(lines: AsyncIterable[str]) -> AsyncIterator[str]:
    """Yield the `data` of each event in a stream of lines (line endings already stripped).

    Comment lines (`: OPENROUTER PROCESSING` keep-alives) and fields other than `data` are
    skipped; an event's several `data` lines are joined with newlines, as the SSE spec says.
    The `[DONE]` sentinel is yielded like any other data: ending the stream is the caller's call.
    """
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    # A server that closes without the final blank line still meant its last event.
    if data:
        yield "\n".join(data)
